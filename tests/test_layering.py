"""Dependency direction (DESIGN.md): theory never imports torch; theory and simulate never import
each other. Checked in fresh interpreters so earlier imports in the test session don't mask it."""

import subprocess
import sys

import pytest


def _modules_after(import_stmt: str) -> set:
    code = f"import sys; {import_stmt}; print('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return set(out.stdout.split())


def test_theory_never_imports_torch_or_simulate():
    mods = _modules_after("import richlazy.theory")
    assert "torch" not in mods
    assert not any(m.startswith("richlazy.simulate") for m in mods)


def test_simulate_never_imports_theory():
    mods = _modules_after("import richlazy.simulate")
    assert not any(m.startswith("richlazy.theory") for m in mods)


@pytest.mark.parametrize("pkg", ["theory", "simulate", "validate"])
def test_public_names_exist(pkg):
    mod = __import__(f"richlazy.{pkg}", fromlist=["__all__"])
    missing = [n for n in mod.__all__ if not hasattr(mod, n)]
    assert not missing and len(set(mod.__all__)) == len(mod.__all__)
