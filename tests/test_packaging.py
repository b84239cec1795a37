"""Packaging conventions: one version, ``python -m richlazy`` is the ``richlazy`` script, and the
files that describe the package (LICENSE, CITATION.cff, py.typed) are where tools look for them."""

import importlib.metadata
import pathlib
import shutil
import subprocess
import sys
import tomllib

import pytest
import richlazy

ROOT = pathlib.Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _script() -> str:
    """The installed ``richlazy`` console script (next to this interpreter in a venv)."""
    here = pathlib.Path(sys.executable).parent / "richlazy"
    found = str(here) if here.is_file() else shutil.which("richlazy")
    if found is None:  # a source-tree run without `pip install -e .`: no script to compare
        pytest.skip("the richlazy console script is not installed")
    return found


def _both(*args: str, timeout: float = 60):
    """(script, python -m) completed processes for the same arguments, run side by side."""
    cmds = [[_script(), *args], [sys.executable, "-m", "richlazy", *args]]
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for c in cmds]
    out = []
    for cmd, p in zip(cmds, procs, strict=True):
        stdout, stderr = p.communicate(timeout=timeout)
        out.append(subprocess.CompletedProcess(cmd, p.returncode, stdout, stderr))
    return out


def test_version_has_one_source():
    installed = importlib.metadata.version("richlazy")
    assert richlazy.__version__ == installed
    assert PYPROJECT["project"]["version"] == installed, (
        "the installed metadata is stale: rerun `pip install -e .` after changing the version")
    assert "version" not in PYPROJECT["project"].get("dynamic", [])


def test_version_flag_and_python_m_agree():
    script, module = _both("--version")
    assert script.returncode == 0 and module.returncode == 0, (script.stderr, module.stderr)
    assert script.stdout == module.stdout == f"richlazy {richlazy.__version__}\n"


def test_help_of_python_m_is_the_scripts():
    script, module = _both("--help")
    assert script.returncode == 0 and module.returncode == 0, (script.stderr, module.stderr)
    assert script.stdout == module.stdout
    assert script.stdout.startswith("usage: richlazy ") and "--version" in script.stdout


@pytest.mark.slow  # each process imports every case (torch): a few seconds
def test_list_of_python_m_is_the_scripts():
    script, module = _both("list", timeout=300)
    assert script.returncode == 0 and module.returncode == 0, (script.stderr, module.stderr)
    assert script.stdout == module.stdout
    assert "coding/linear-toy\t" in script.stdout


def test_citation_cff_names_the_package_and_four_papers():
    yaml = pytest.importorskip("yaml")  # PyYAML is not a dependency; most environments have it
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    for key in ("cff-version", "message", "title", "authors"):  # required by CFF 1.2.0
        assert cff.get(key), key
    assert cff["cff-version"] == "1.2.0" and cff["title"] == "richlazy"
    assert cff["type"] == "software" and cff["license"] == "MIT"
    assert str(cff["version"]) == richlazy.__version__  # kept in step with pyproject's version
    refs = cff["references"]
    assert len(refs) == 4
    for ref in refs:
        assert ref["type"] and ref["title"] and ref["authors"], ref


def test_license_file_is_mit_and_declared():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 the richlazy developers" in text
    assert PYPROJECT["project"]["license"] == {"file": "LICENSE"}


def test_py_typed_and_main_are_in_the_package():
    pkg = pathlib.Path(richlazy.__file__).parent
    assert (pkg / "py.typed").is_file()
    assert (pkg / "__main__.py").is_file()
    setuptools = PYPROJECT["tool"]["setuptools"]
    assert "py.typed" in setuptools["package-data"]["richlazy"]  # shipped in wheels too
    assert "richlazy" in setuptools["packages"]


def test_every_package_folder_is_declared_for_the_wheel():
    """pyproject lists packages explicitly (the repository root is the package root), so a new
    subpackage left out of the list would import in an editable install and be missing from a
    built wheel."""
    declared = set(PYPROJECT["tool"]["setuptools"]["packages"])
    found = {"richlazy"} | {
        "richlazy." + ".".join(p.parent.relative_to(ROOT).parts)
        for top in ("theory", "simulate", "validate") for p in (ROOT / top).rglob("__init__.py")}
    assert found == declared, (sorted(found - declared), sorted(declared - found))
