"""Dependency direction (DESIGN.md): theory never imports torch; theory and simulate never import
each other. Checked in fresh interpreters so earlier imports in the test session don't mask it.

Inside theory/coding, the objects (linear, sigmoid, relu, deep) stand on a shared ground and on
each other only as the mathematics does (deep -> sigmoid), through public packages; these rules
replace the old line cap on module size."""

import pathlib
import subprocess
import sys

import pytest
from import_helpers import import_targets


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


# ---------------------------------------------------------------------------------------------
# inside theory/coding: one folder per mathematical object over a shared ground (issue 54)
# ---------------------------------------------------------------------------------------------

_ROOT = pathlib.Path(__file__).resolve().parents[1]
_CODING = _ROOT / "theory" / "coding"
_OBJECTS = ("linear", "sigmoid", "relu", "deep")
# which objects an object may build on (through their public package only): the tower of the
# mathematics -- the deep network's feature layer is the general-data sigmoid solver
_MAY_USE = {"linear": set(), "sigmoid": set(), "relu": set(), "deep": {"sigmoid"}}


def _object_of(dotted: str):
    parts = dotted.split(".")
    if parts[:3] == ["richlazy", "theory", "coding"] and len(parts) > 3 and parts[3] in _OBJECTS:
        return parts[3], parts[4:]
    return None, None


def _coding_violations(path: pathlib.Path, own):
    """Imports of ``path`` (in object ``own``, None for the ground) that break the object rules."""
    bad = []
    for mod, full, line in import_targets(path):
        obj, rest = _object_of(mod)
        if obj is None:  # ``from richlazy.theory.coding import sigmoid``
            obj, rest = _object_of(full)
            target = full
        else:  # ``from ..sigmoid import name`` or ``from ..sigmoid._toy import name``
            target = mod if rest else full
            rest = rest or [full.rsplit(".", 1)[1]]
            rest = rest if (rest[0].startswith("_") or target == mod) else []
        if obj is None or obj == own:
            continue
        if own is None or obj not in _MAY_USE[own] or (rest and rest[0].startswith("_")):
            bad.append(f"{path.relative_to(_ROOT)}:{line}: imports {target}")
    return bad


def test_coding_objects_import_only_the_ground_and_public_objects_below_them():
    """relu imports nothing of sigmoid or deep; sigmoid and linear nothing of another object;
    deep only sigmoid's public package; no object reaches another object's private modules."""
    bad = []
    for obj in _OBJECTS:
        for p in sorted((_CODING / obj).rglob("*.py")):
            bad += _coding_violations(p, obj)
    assert not bad, "\n".join(bad)


def test_the_coding_ground_imports_no_object():
    """_problem, _protocol, _code_core and _gp sit below every object."""
    bad = []
    for p in sorted(q for q in _CODING.glob("_*.py") if q.name != "__init__.py"):
        bad += _coding_violations(p, None)
    assert not bad, "\n".join(bad)


def test_the_coding_package_re_exports_objects_through_their_public_packages():
    bad = [f"{t}" for mod, t, _ in import_targets(_CODING / "__init__.py")
           if (o := _object_of(mod))[0] is not None and o[1]]
    assert not bad, bad


def test_generic_numerics_know_no_physics():
    """theory/_numerics.py (Newton, ascent to maxima) imports nothing of richlazy."""
    mods = [m for m, _, _ in import_targets(_ROOT / "theory" / "_numerics.py")]
    assert not [m for m in mods if m.startswith("richlazy")], mods


def test_the_layering_check_sees_a_planted_violation(tmp_path, monkeypatch):
    """The rule above fails on relu importing a private sigmoid module and deep importing a
    private sigmoid module, and passes deep importing sigmoid's public package."""
    relu = _CODING / "relu" / "_planted.py"
    fake = {relu: "from ..sigmoid._toy import _x\n",
            _CODING / "deep" / "_planted.py": "from ..sigmoid._general import y\nfrom ..sigmoid import z\n"}
    orig = pathlib.Path.read_text
    monkeypatch.setattr(pathlib.Path, "read_text",
                        lambda self, *a, **k: fake.get(self) or orig(self, *a, **k))
    assert _coding_violations(relu, "relu") == ["theory/coding/relu/_planted.py:1: imports "
                                                "richlazy.theory.coding.sigmoid._toy"]
    deep_bad = _coding_violations(_CODING / "deep" / "_planted.py", "deep")
    assert deep_bad == ["theory/coding/deep/_planted.py:1: imports richlazy.theory.coding.sigmoid._general"]


# ---------------------------------------------------------------------------------------------
# validate: the command line is the top floor, core the ground floor
# ---------------------------------------------------------------------------------------------

_VALIDATE = _ROOT / "validate"
_CLI = "richlazy.validate.cli"
#: the modules outside validate/cli that may import the command line: ``python -m richlazy``
_CLI_CALLERS = {"__main__.py"}


def _names_cli(dotted: str) -> bool:
    return dotted == _CLI or dotted.startswith(_CLI + ".")


def _cli_imports(path: pathlib.Path, source: str | None = None) -> list:
    """The imports of ``path`` that reach ``richlazy.validate.cli`` (at any depth of the file)."""
    seen = []
    for mod, full, line in import_targets(path, source):
        if _names_cli(mod) or _names_cli(full):
            entry = f"{path.relative_to(_ROOT)}:{line}: imports {full if _names_cli(full) else mod}"
            if entry not in seen:
                seen.append(entry)
    return seen


def _package_files() -> list:
    files = sorted(_ROOT.glob("*.py"))
    for top in ("theory", "simulate", "validate"):
        files += sorted((_ROOT / top).rglob("*.py"))
    return files


def test_validate_core_imports_nothing_of_the_command_line():
    """validate/core is the ground floor (registry, runner, compare, sampling, lock, report
    diff): the command line stands on it, never the other way round."""
    files = sorted((_VALIDATE / "core").rglob("*.py"))
    assert len(files) > 5
    bad = [v for p in files for v in _cli_imports(p)]
    assert not bad, "\n".join(bad)


def test_only_the_command_line_and_main_import_the_command_line():
    """Nothing of theory, simulate or validate outside validate/cli imports it; the package's
    ``__main__`` (``python -m richlazy``) is the one caller, besides the console script."""
    files = [p for p in _package_files()
             if (_VALIDATE / "cli") not in p.parents
             and str(p.relative_to(_ROOT)) not in _CLI_CALLERS]
    assert len(files) > 100
    bad = [v for p in files for v in _cli_imports(p)]
    assert not bad, "\n".join(bad)
    for name in _CLI_CALLERS:  # a caller that no longer calls it leaves the list
        assert _cli_imports(_ROOT / name), f"{name} no longer imports {_CLI}: drop it"


def test_the_command_line_checks_see_planted_violations():
    core = _VALIDATE / "core" / "_planted.py"
    planted = ("from ..cli._common import usable_cores\nfrom .. import cli\n"
               "def f():\n    from richlazy.validate.cli import main\n"
               "from ..sweeps import sweep\nfrom .._cli_free import x\n")
    assert _cli_imports(core, planted) == [
        "validate/core/_planted.py:1: imports richlazy.validate.cli._common.usable_cores",
        "validate/core/_planted.py:2: imports richlazy.validate.cli",
        "validate/core/_planted.py:4: imports richlazy.validate.cli.main",
    ]
