"""Architecture checks (issue: one restructuring step).

* validate - and the tests of validate - use only the public names of theory and simulate: no
  import path component and no imported name starting with ``_``, every imported name listed in
  the ``__all__`` of the public module it comes from, and no reach-through to private attributes
  that theory/simulate objects set on themselves;
* conformance: the activation names known to simulate and to theory's kernels agree, and so do
  the functions behind them; every public theory solver result exposes the common status fields;
* no import-time side effects on matplotlib (the layering of theory/coding: test_layering.py).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest
from import_helpers import import_targets

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHECKED = sorted((ROOT / "validate").rglob("*.py")) + sorted((ROOT / "tests" / "validate").rglob("*.py"))
_PRIVATE_PATH = re.compile(r"richlazy\.(theory|simulate)(\.\w+)*\._\w")


def _rel(p: pathlib.Path) -> str:
    return str(p.relative_to(ROOT))


def _imports(path: pathlib.Path):
    """(module, name or None, lineno) for every absolute import of richlazy.theory/simulate."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[:2] in (["richlazy", "theory"], ["richlazy", "simulate"]):
                for a in node.names:
                    yield node.module, a.name, node.lineno
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[:2] in (["richlazy", "theory"], ["richlazy", "simulate"]):
                    yield a.name, None, node.lineno


def test_the_scan_sees_validate():
    assert len(CHECKED) > 30
    found = [m for p in CHECKED for m, _, _ in _imports(p)]
    assert "richlazy.theory" in found and "richlazy.simulate" in found


@pytest.mark.parametrize("path", CHECKED, ids=_rel)
def test_validate_uses_only_public_names(path):
    bad = []
    for module, name, line in _imports(path):
        parts = module.split(".")
        if any(p.startswith("_") for p in parts):
            bad.append(f"{_rel(path)}:{line}: private module {module}")
            continue
        if name is None or name == "*":
            continue
        if name.startswith("_"):
            bad.append(f"{_rel(path)}:{line}: private name {module}.{name}")
            continue
        mod = importlib.import_module(module)
        public = getattr(mod, "__all__", None)
        sub = f"{module}.{name}"
        if public is not None and name not in public and not inspect.ismodule(getattr(mod, name, None)):
            bad.append(f"{_rel(path)}:{line}: {name} is not in {module}.__all__")
        elif inspect.ismodule(getattr(mod, name, None)) and name.startswith("_"):
            bad.append(f"{_rel(path)}:{line}: private module {sub}")
    # dynamic imports and monkeypatch targets spelled as strings
    for i, text in enumerate(path.read_text().splitlines(), 1):
        if _PRIVATE_PATH.search(text):
            bad.append(f"{_rel(path)}:{i}: names a private module: {text.strip()}")
    assert not bad, "\n".join(bad)


def _private_attrs(folder: str) -> set[str]:
    pat = re.compile(r"self\.(_[A-Za-z]\w*)\s*(?::[^=]*)?=")
    out = set()
    for p in (ROOT / folder).rglob("*.py"):
        out |= set(pat.findall(p.read_text()))
    return {a for a in out if not a.startswith("__")}


def test_validate_does_not_reach_into_private_attributes():
    theirs = _private_attrs("theory") | _private_attrs("simulate")
    ours = _private_attrs("validate")
    watched = theirs - ours
    assert "_phi" in watched or "_phi" in ours  # the scan sees NetworkPosterior's attributes
    bad = []
    for path in sorted((ROOT / "validate").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and node.attr in watched
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
                bad.append(f"{_rel(path)}:{node.lineno}: .{node.attr}")
    assert not bad, "\n".join(bad)


def test_the_private_import_check_fails_on_a_private_import(tmp_path):
    p = tmp_path / "mod.py"
    p.write_text("from richlazy.theory.coding.linear._network import solve_U\n"
                 "from richlazy.theory import _x\n")
    found = [(m, n) for m, n, _ in _imports(p)]
    assert ("richlazy.theory.coding.linear._network", "solve_U") in found
    assert ("richlazy.theory", "_x") in found


# ---------------------------------------------------------------------------------------------
# conformance
# ---------------------------------------------------------------------------------------------


def test_activation_names_agree():
    import richlazy.simulate as sim
    import richlazy.theory as th

    assert set(sim.ACTIVATIONS) == set(th.ACTIVATIONS)
    assert set(th.TILTED_ACTIVATIONS) <= set(th.ACTIVATIONS)


@pytest.mark.parametrize("name", ["linear", "sigmoid_erf", "erf", "relu"])
def test_activation_functions_agree(name):
    """The same name means the same function phi and derivative on both sides."""
    import richlazy.simulate as sim
    import richlazy.theory as th
    import torch

    z = np.linspace(-4.0, 4.0, 81) + 0.013  # avoid the ReLU kink at 0
    f, df = sim.activation_pair(name)
    zt = torch.as_tensor(z, dtype=torch.float64)
    np.testing.assert_allclose(f(zt).numpy(), th.phi(z, name), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(df(zt).numpy(), th.phi_prime(z, name), rtol=1e-13, atol=1e-15)


STATUS_FIELDS = ("converged", "status", "message", "nit", "residual")
_SOLVER_RESULT = re.compile(r"(Result|Solution)$")


def _theory_result_classes():
    import richlazy.theory as th

    out = []
    for n in th.__all__:
        o = getattr(th, n)
        if inspect.isclass(o) and dataclasses.is_dataclass(o) and _SOLVER_RESULT.search(n):
            out.append((n, o))
    return out


def test_result_scan_finds_results():
    names = [n for n, _ in _theory_result_classes()]
    assert "LinearNetworkSolution" in names and "LDTResult" in names


@pytest.mark.parametrize("name,cls", _theory_result_classes(), ids=lambda v: v if isinstance(v, str) else "")
def test_solver_results_expose_status_fields(name, cls):
    from richlazy.theory import SolverStatus

    fields = {f.name: f for f in dataclasses.fields(cls)}
    missing = [f for f in STATUS_FIELDS if f not in fields]
    assert not missing, f"{name} lacks {missing}"
    assert issubclass(cls, SolverStatus)
    assert cls.__dataclass_params__.frozen


def test_status_codes_and_fix_messages():
    from richlazy.theory import SolverStatus, Status
    from richlazy.theory._results import grid_status

    r = SolverStatus(converged=False, status=1, message="ran out", nit=5, residual=1.0)
    assert r.status is Status.MAX_ITERATIONS and "maxiter" in r.message
    with pytest.raises(ValueError, match="contradicts"):
        SolverStatus(converged=True, status=2, message="", nit=1, residual=0.0)
    with pytest.raises(ValueError, match="status must be one of"):
        SolverStatus(converged=False, status=7, message="", nit=1, residual=0.0)
    assert grid_status([0, 0, 0]) == (True, Status.SUCCESS)
    assert grid_status(np.array([[0, 2], [1, 0]])) == (False, Status.NUMERICAL_FAILURE)


# ---------------------------------------------------------------------------------------------
# import-time behaviour and module size
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_importing_validate_and_all_cases_leaves_matplotlib_alone():
    # the raw rcParams entry: matplotlib.get_backend() would itself import pyplot to resolve it
    code = ("import sys, matplotlib; raw = lambda: dict.__getitem__(matplotlib.rcParams, 'backend'); "
            "before = raw(); "
            "import richlazy.validate as v; v.all_cases(); "
            "from richlazy.validate.benchmarks._registry import benchmarks; benchmarks(); "
            "assert 'matplotlib.pyplot' not in sys.modules, 'pyplot imported'; "
            "assert raw() == before, 'backend changed'")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)


def test_no_matplotlib_use_or_pyplot_in_the_package():
    bad = []
    pat = re.compile(r"matplotlib\.use\(|import matplotlib\.pyplot|from matplotlib import pyplot")
    for top in ("theory", "simulate", "validate"):
        for p in (ROOT / top).rglob("*.py"):
            for i, line in enumerate(p.read_text().splitlines(), 1):
                if pat.search(line):
                    bad.append(f"{_rel(p)}:{i}: {line.strip()}")
    assert not bad, "\n".join(bad)


def test_docs_name_only_modules_that_exist():
    """Module paths written in README/docs (``richlazy.<pkg>....``) must import."""
    pat = re.compile(r"\brichlazy\.(?:theory|simulate|validate)(?:\.[A-Za-z_]\w*)*")
    bad = []
    for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for i, line in enumerate(p.read_text().splitlines(), 1):
            for name in pat.findall(line):
                parts = name.split(".")
                # the longest importable prefix must be followed only by attribute names
                for k in range(len(parts), 1, -1):
                    try:
                        obj = importlib.import_module(".".join(parts[:k]))
                    except ModuleNotFoundError:
                        continue
                    for attr in parts[k:]:
                        if not hasattr(obj, attr):
                            bad.append(f"{_rel(p)}:{i}: {name}")
                            break
                        obj = getattr(obj, attr)
                    break
                else:
                    bad.append(f"{_rel(p)}:{i}: {name}")
    assert not bad, "\n".join(bad)


def test_figures_are_written_only_by_the_atomic_helper():
    """Every figure goes through ``validate.rendering._figures.save_figure`` (atomic write): no
    other module of the package calls ``savefig`` or pyplot's writers."""
    helper = ROOT / "validate" / "rendering" / "_figures.py"
    pattern = re.compile(r"\.savefig\(|\bprint_figure\(|\bprint_png\(|\bimsave\(")
    bad = [f"{_rel(p)}:{i}: {line.strip()}"
           for pkg in ("theory", "simulate", "validate")
           for p in sorted((ROOT / pkg).rglob("*.py")) if p != helper
           for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert not bad, "\n".join(bad)
    assert "atomic_write" in helper.read_text()


# ---------------------------------------------------------------------------------------------
# validate/recipes: reusable science is imported from recipes, never from a case module
# ---------------------------------------------------------------------------------------------

_CASES = ("richlazy", "validate", "cases")
#: the one module outside validate/cases that may name case modules: the registry, which imports
#: them by their dotted names (``_CASE_MODULES``, importlib) to register their cases
_CASE_LOADERS = {"validate/core/_registry.py"}
#: the module of an area that its case modules may share (today: validate/cases/equality/_common.py)
_AREA_COMMON = "_common"
#: known cross-case imports left in place, with why (empty this list as they move to recipes)
_CROSS_CASE_EXCEPTIONS: dict = {}


def _package_source() -> list[pathlib.Path]:
    files = sorted(ROOT.glob("*.py"))
    for top in ("theory", "simulate", "validate"):
        files += sorted((ROOT / top).rglob("*.py"))
    return files


def _case_module_of(dotted: str | None):
    """``richlazy.validate.cases.<area>.<module>`` named by ``dotted`` as (area, module); (area,
    None) for the area package itself; None when it names nothing inside validate/cases."""
    if dotted is None:
        return None
    p = dotted.split(".")
    if tuple(p[:3]) != _CASES:
        return None
    return (p[3] if len(p) > 3 else None, p[4] if len(p) > 4 else None)


def _outside_violations(path: pathlib.Path, source: str | None = None) -> list[str]:
    bad = []
    for mod, full, line in import_targets(path, source):
        if _case_module_of(mod) is not None or _case_module_of(full) is not None:
            bad.append(f"{_rel(path)}:{line}: imports {full or mod}")
    return bad


def _cross_case_violations(path: pathlib.Path, source: str | None = None) -> list[str]:
    rel = path.relative_to(ROOT).with_suffix("").parts  # validate, cases, area, module
    own_area, own_mod = rel[2], rel[3]
    bad = []
    for mod, full, line in import_targets(path, source):
        target = _case_module_of(mod)
        if target is None:
            continue
        area, module = target
        if module is None:  # ``from . import _x``: the name is the module
            area, module = _case_module_of(full)
        if (area, module) == (own_area, own_mod) or (area == own_area and module == _AREA_COMMON):
            continue
        if (_rel(path), f"richlazy.validate.cases.{area}.{module}") in _CROSS_CASE_EXCEPTIONS:
            continue
        bad.append(f"{_rel(path)}:{line}: imports {full} (a case module's name: move it to "
                   "validate/recipes)")
    return bad


def test_nothing_outside_the_cases_imports_from_a_case_module():
    """theory, simulate and validate outside validate/cases (sweeps, benchmarks, core, rendering,
    recipes) import nothing from validate/cases; only the registry names the case modules, as
    strings it imports to register their cases. Reusable science lives in validate/recipes."""
    files = [p for p in _package_source()
             if not _rel(p).startswith("validate/cases/") and _rel(p) not in _CASE_LOADERS]
    assert len(files) > 50
    bad = [v for p in files for v in _outside_violations(p)]
    assert not bad, "\n".join(bad)


def test_case_modules_import_no_other_case_module():
    """A case module imports names only from recipes and the rest of validate, never from another
    case module; the one shared module of an area (``_common``) is allowed, and so are the
    listed exceptions."""
    files = sorted(p for p in (ROOT / "validate" / "cases").rglob("_*.py") if p.name != "__init__.py")
    assert len(files) > 15
    bad = [v for p in files for v in _cross_case_violations(p)]
    assert not bad, "\n".join(bad)
    for (file, target), why in _CROSS_CASE_EXCEPTIONS.items():  # an exception that is gone goes
        found = [m for m, _, _ in import_targets(ROOT / file)]
        assert target in found, f"{file} no longer imports {target}: drop the exception ({why})"


def test_the_case_import_checks_see_planted_violations():
    case = ROOT / "validate" / "cases" / "coding" / "_planted.py"
    planted = ("from ._relu import RELU_TOY_SIZES\nfrom . import _sigmoid\n"
               "from ..equality._common import Z\nfrom ...recipes import outlier_summary\n"
               "from ._planted import x\n")
    assert _cross_case_violations(case, planted) == [
        "validate/cases/coding/_planted.py:1: imports richlazy.validate.cases.coding._relu.RELU_TOY_SIZES "
        "(a case module's name: move it to validate/recipes)",
        "validate/cases/coding/_planted.py:2: imports richlazy.validate.cases.coding._sigmoid "
        "(a case module's name: move it to validate/recipes)",
        "validate/cases/coding/_planted.py:3: imports richlazy.validate.cases.equality._common.Z "
        "(a case module's name: move it to validate/recipes)",
    ]
    assert _cross_case_violations(ROOT / "validate" / "cases" / "equality" / "_planted.py",
                                  "from ._common import Z\n") == []
    sweep = ROOT / "validate" / "sweeps" / "experiments" / "_planted.py"
    assert _outside_violations(sweep, "from ...cases.ldt._posterior import SIZES\n"
                                      "import richlazy.validate.cases.coding._relu\n"
                                      "from ...recipes import erf_ensemble\n") == [
        "validate/sweeps/experiments/_planted.py:1: imports richlazy.validate.cases.ldt._posterior.SIZES",
        "validate/sweeps/experiments/_planted.py:2: imports richlazy.validate.cases.coding._relu",
    ]


def _private_validate_imports(path: pathlib.Path, source: str | None = None) -> list[str]:
    """Imports of ``path`` (a case module) from a private module of validate outside
    validate/cases (``richlazy.validate.<pkg>._<module>``, e.g. ``core._sampling``)."""
    bad = []
    for mod, full, line in import_targets(path, source):
        p = mod.split(".")
        if p[:2] != ["richlazy", "validate"] or p[2:3] == ["cases"]:
            continue
        if any(part.startswith("_") for part in p[2:]):
            bad.append(f"{_rel(path)}:{line}: imports {full} (a private module: use richlazy.validate, "
                       "its public modules or validate/recipes)")
    return bad


def test_case_modules_use_public_names_of_validate():
    """Cases import richlazy.validate's public names, its public modules (stats, observables,
    codes, richness) and validate/recipes, never a private module of the floors below."""
    files = sorted(p for p in (ROOT / "validate" / "cases").rglob("_*.py") if p.name != "__init__.py")
    bad = [v for p in files for v in _private_validate_imports(p)]
    assert not bad, "\n".join(bad)
    planted = ("from ...core._sampling import sample_posterior\nfrom ...recipes import sample_posterior\n"
               "from richlazy.validate.rendering._plots import kernel_heatmaps\n"
               "from richlazy.validate import compare\nfrom ._common import Z\n")
    assert _private_validate_imports(ROOT / "validate" / "cases" / "coding" / "_planted.py", planted) == [
        "validate/cases/coding/_planted.py:1: imports richlazy.validate.core._sampling.sample_posterior "
        "(a private module: use richlazy.validate, its public modules or validate/recipes)",
        "validate/cases/coding/_planted.py:3: imports richlazy.validate.rendering._plots.kernel_heatmaps "
        "(a private module: use richlazy.validate, its public modules or validate/recipes)",
    ]
