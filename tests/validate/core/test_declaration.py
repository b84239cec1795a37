"""Cases as declarations (validate/core/_declaration.py): typed sizes, compared rows, and a
declared case run by the suite runner like a registered function."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from richlazy.validate import CaseContext, Compared, Sizes, compare, declare_case, run_suite
from richlazy.validate.core._runner import checkpoint_key


@dataclass(frozen=True)
class _Size:
    n: int
    scale: float
    method: str
    grid: tuple[int, ...]
    cap: float | None = None


QUICK = _Size(n=3, scale=2.0, method="a", grid=(1, 2))
FULL = _Size(n=5, scale=1, method="b", grid=(1, 2, 3), cap=0.5)


def test_sizes_are_typed_and_give_their_parameters():
    sizes = Sizes(quick=QUICK, full=FULL)
    assert sizes["quick"] is QUICK and sizes["full"] is FULL
    assert sizes.params("full") == dict(n=5, scale=1, method="b", grid=(1, 2, 3), cap=0.5)
    assert list(sizes.params("quick")) == ["n", "scale", "method", "grid", "cap"]
    with pytest.raises(ValueError, match="size must be one of"):
        sizes["medium"]


@pytest.mark.parametrize("bad, field", [
    (dict(n=2.5), "n"), (dict(n=True), "n"), (dict(scale="1"), "scale"), (dict(method=1), "method"),
    (dict(grid=[1, 2]), "grid"), (dict(grid=(1, 2.0)), "grid"), (dict(cap="x"), "cap"),
])
def test_sizes_reject_a_value_of_the_wrong_type_naming_the_field(bad, field):
    import dataclasses

    with pytest.raises(TypeError, match=rf"Sizes\.full\.{field} must be"):
        Sizes(quick=QUICK, full=dataclasses.replace(FULL, **bad))


def test_sizes_need_two_instances_of_one_dataclass():
    @dataclass(frozen=True)
    class Other:
        n: int

    with pytest.raises(TypeError, match="one class"):
        Sizes(quick=QUICK, full=Other(1))
    with pytest.raises(TypeError, match="dataclass instance"):
        Sizes(quick={"n": 1}, full=FULL)
    with pytest.raises(TypeError, match="dataclass instance"):
        Sizes(quick=_Size, full=FULL)


def _rule(run, name, theory, est, *, tol=3.0):
    return compare(name, theory, est[0], stderr=est[1], kind="z", tol=tol)


def test_compared_rows_expand_over_their_indices_in_order():
    run = type("Run", (), {"cfg": QUICK})()
    row = Compared("x[{0},{1}]", theory=lambda run, i, j: 10 * i + j,
                   estimate=lambda run, i, j: (10 * i + j + 0.005, 0.01), rule=_rule,
                   over=lambda run: [(i, j) for i in range(2) for j in range(i, 2)],
                   options=lambda run, i, j: dict(tol=0.1) if i == j else {})
    qs = row.quantities(run)
    assert [q.name for q in qs] == ["x[0,0]", "x[0,1]", "x[1,1]"]
    assert [q.theory for q in qs] == [0.0, 1.0, 11.0]
    assert [q.passed for q in qs] == [False, True, False]  # 0.5 SE fails only the 0.1 SE rule
    single = Compared(lambda run: f"n = {run.cfg.n}", theory=lambda run: 1.0,
                      estimate=lambda run: (1.0, 0.1), rule=_rule)
    assert [q.name for q in single.quantities(run)] == ["n = 3"]
    scalar_index = Compared("y_{0}", theory=lambda run, k: k, estimate=lambda run, k: (k, 1.0),
                            rule=_rule, over=lambda run: range(3))
    assert [q.name for q in scalar_index.quantities(run)] == ["y_0", "y_1", "y_2"]


@pytest.mark.parametrize("kw, match", [
    (dict(theory=1.0), "Compared.theory must be callable"),
    (dict(rule=None), "Compared.rule must be callable"),
    (dict(name=3), "Compared.name must be"),
    (dict(over=[1, 2]), "Compared.over must be callable or None"),
    (dict(options={"tol": 1}), "Compared.options must be callable or None"),
])
def test_compared_rejects_what_it_cannot_call(kw, match):
    args = dict(name="q", theory=lambda run: 0.0, estimate=lambda run: (0.0, 1.0), rule=_rule)
    with pytest.raises(TypeError, match=match):
        Compared(**{**args, **kw})


def _declare(name, **kw):
    args = dict(
        description="a declared test case",
        sizes=Sizes(quick=QUICK, full=FULL),
        theory=lambda ctx, cfg: [float(k) for k in cfg.grid],
        simulation=lambda ctx, cfg, th: [(t + ctx.rng(0).normal() * 1e-3, 1e-3) for t in th],
        compared=(Compared("grid point {0}", theory=lambda run, k: run.theory[k],
                           estimate=lambda run, k: run.simulation[k], rule=_rule,
                           over=lambda run: range(len(run.cfg.grid))),),
        notes=lambda run: f"{len(run.theory)} points",
        params=lambda run: dict(extra=1),
    )
    return declare_case(name, **{**args, **kw})


def test_a_declared_case_runs_through_the_suite_runner(scratch_registry, tmp_path):
    decl = _declare("coding/declared-test", suites=("quick",))
    spec = scratch_registry["coding/declared-test"]
    assert spec.suites == ("quick",) and spec.fn.declaration is decl
    assert spec.fn.__module__ == __name__  # checkpoints keyed by the declaring module's source
    assert checkpoint_key(spec, suite="quick", seed=0, device="cpu")["case_source_sha256"]
    rep = run_suite("quick", only="coding/declared-test", device="cpu", out_dir=tmp_path, progress=False)
    (res,) = rep.cases
    assert res.verdict == "agrees"
    assert [q.name for q in res.quantities] == ["grid point 0", "grid point 1"]
    assert res.params == dict(n=3, scale=2.0, method="a", grid=(1, 2), cap=None, extra=1)
    assert res.notes == "2 points"
    # the same stages by hand: the declaration is the case function
    ctx = CaseContext(size="full", device="cpu", seed=0, out_dir=tmp_path, checkpoint_dir=tmp_path,
                      name="coding/declared-test")
    out = decl(ctx)
    assert [q.theory for q in out.quantities] == [1.0, 2.0, 3.0]
    assert all(math.isfinite(q.simulation) for q in out.quantities)


def test_a_case_without_a_theory_stage_sees_none(scratch_registry, tmp_path):
    """theory left out: the simulation and the rows get run.theory = None."""
    seen = []
    decl = declare_case(
        "coding/declared-no-theory", description="no theory stage", sizes=Sizes(quick=QUICK, full=FULL),
        simulation=lambda ctx, cfg, th: seen.append(th) or (0.001, 0.01),
        compared=(Compared("slope", theory=lambda run: 0.0 if run.theory is None else 1.0,
                           estimate=lambda run: run.simulation, rule=_rule),))
    ctx = CaseContext(size="quick", device="cpu", seed=0, out_dir=tmp_path, checkpoint_dir=tmp_path,
                      name="coding/declared-no-theory")
    (q,) = decl(ctx).quantities
    assert seen == [None] and q.theory == 0.0 and q.passed


def test_a_declaration_is_checked_when_declared(scratch_registry):
    with pytest.raises(TypeError, match="non-empty tuple of Compared"):
        _declare("coding/declared-bad", compared=())
    with pytest.raises(TypeError, match="must be a Sizes"):
        _declare("coding/declared-bad", sizes={"quick": QUICK})
    with pytest.raises(TypeError, match="theory of case 'coding/declared-bad' must be callable"):
        _declare("coding/declared-bad", theory=None)
    with pytest.raises(ValueError, match="case name must be"):
        _declare("nopaper")
    assert "coding/declared-bad" not in scratch_registry
