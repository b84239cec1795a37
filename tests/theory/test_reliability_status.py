"""Status codes match their documentation and their diagnosis (issue 12): a spent iteration
budget is Status.MAX_ITERATIONS, a breakdown NUMERICAL_FAILURE, and maxiter bounds the work."""

import numpy as np
import pytest
from richlazy.theory import (
    SolverError,
    Status,
    chernoff_energy,
    solve_relu_outliers,
    solve_sigmoid_toy,
    solve_sigmoid_toy_populations,
    toy_class_targets,
)
from theory_helpers import RHO, class_correlated_problem


@pytest.mark.parametrize("maxiter", [1, 2, 5, 10])
def test_chernoff_budget_is_max_iterations_not_bad_problem(maxiter):
    # the issue's call: a Gaussian CGF, alpha = 2 well inside the range of Lambda'
    r = chernoff_energy(2.0, lambda t: 0.5 * t**2, maxiter=maxiter)
    assert r.status is Status.MAX_ITERATIONS and not r.converged
    assert "maxiter" in r.message and "beyond the range" not in r.message
    ok = chernoff_energy(2.0, lambda t: 0.5 * t**2)
    assert ok.converged and float(ok.energy) == pytest.approx(2.0, rel=1e-10)


def test_sigmoid_toy_finite_P_budget_is_max_iterations():
    Yc = toy_class_targets(3, y_minus=0.5)
    cut = solve_sigmoid_toy(RHO, Yc, P=60, activation="linear", maxiter=1, quad_nodes=16)
    assert cut.status is Status.MAX_ITERATIONS and "ran out of maxiter=1" in cut.message
    with pytest.raises(SolverError, match="maxiter=1"):
        solve_sigmoid_toy(RHO, Yc, P=60, activation="linear", maxiter=1, quad_nodes=16, throw=True)
    with pytest.raises(ValueError, match="maxiter must be >= 1"):
        solve_sigmoid_toy(RHO, Yc, P=60, activation="linear", maxiter=0)


def _relu_outliers_counting_stages(K0, Y, **kw):
    """solve_relu_outliers(K0, Y, **kw) and the penalty of every penalised stage it ran."""
    from richlazy.theory.coding.relu import _outliers as _relu_outliers

    penalties = []
    orig = _relu_outliers._penalised_stage

    def counting(*args):
        penalties.append(args[-1])
        return orig(*args)

    mp = pytest.MonkeyPatch()
    mp.setattr(_relu_outliers, "_penalised_stage", counting)
    try:
        return solve_relu_outliers(K0, Y, **kw), penalties
    finally:
        mp.undo()


@pytest.mark.slow
def test_relu_outliers_maxiter_bounds_the_stages():
    K0, Y = class_correlated_problem()
    cut, calls = _relu_outliers_counting_stages(K0, Y, n_restarts=2, maxiter=1)
    # one stage per restart, at the final penalty (the schedule's last entry)
    assert len(calls) == 2 and all(lam == pytest.approx(1e-4) for lam in calls)
    assert cut.nit == 2 and "2 stages" in cut.message
    # one stage at the final penalty may already reach a certified minimum (it does with some
    # BLAS kernels: the rounding decides the path); otherwise the budget is what stopped it
    if not cut.converged:
        assert cut.status is Status.MAX_ITERATIONS and "maxiter=1" in cut.message
    else:
        assert cut.status is Status.SUCCESS and cut.dual_margin <= 1 + 1e-6
    with pytest.raises(ValueError, match="maxiter must be >= 1, got 0"):
        solve_relu_outliers(K0, Y, maxiter=0)


def test_relu_outliers_insertions_fit_in_the_budget():
    """maxiter = 5 schedule stages + k insertions at T = 0: never more stages than maxiter."""
    r, stages = _relu_outliers_counting_stages(*class_correlated_problem(), n_restarts=1, maxiter=7)
    assert len(stages) == r.nit <= 7
    # a certified minimum within the budget (measured: 3 outliers, 7 stages, dual margin
    # 1 + 5e-8) or, where the rounding takes a longer path, the budget is what stopped it
    if r.converged:
        assert r.status is Status.SUCCESS and r.dual_margin <= 1 + 1e-6
    else:
        assert r.status is Status.MAX_ITERATIONS and "maxiter=7" in r.message


def test_populations_hybr_budget_is_max_iterations(monkeypatch):
    from richlazy.theory.coding.sigmoid import _populations

    s = solve_sigmoid_toy(RHO, toy_class_targets(3, y_minus=-0.5))
    real_root = _populations.root

    def capped(fun, x0, **kw):
        kw["options"] = dict(kw["options"], maxfev=2)
        return real_root(fun, x0, **kw)

    monkeypatch.setattr(_populations, "root", capped)
    r = solve_sigmoid_toy_populations(RHO, toy_class_targets(3, y_minus=-0.5), s.P_gamma,
                                      s.a_gamma + 0.05, t0=s.t + 0.05)
    assert r.status is Status.MAX_ITERATIONS and not r.converged


def test_the_kkt_newton_stops_where_lapack_cannot_factorise_the_jacobian():
    """The exact-KKT polish of the ReLU and toy solvers (``_newton_lstsq``): a Jacobian whose SVD
    does not converge (here non-finite; measured on a sampled L = 3 kernel, where scipy raised
    "SVD did not converge in Linear Least Squares" out of solve_relu_outliers) ends the
    iteration at the current point instead of raising, so the solver reports its residual as
    a status."""
    from richlazy.theory._numerics import _newton_lstsq

    def bad_jacobian(x):
        return np.array([x[0] - 1.0, x[1]]), np.array([[np.nan, 0.0], [0.0, 1.0]])

    x, res, nfev = _newton_lstsq(bad_jacobian, np.zeros(2), 1e-12)
    assert np.array_equal(x, np.zeros(2)) and res == 1.0 and nfev == 1

    calls = []

    def later_bad(x):  # a good first Jacobian, a non-finite one at the trial point
        calls.append(x.copy())
        J = np.eye(2) if len(calls) == 1 else np.full((2, 2), np.inf)
        return np.array([x[0] - 1.0, 2.0 * (x[1] - 3.0)]), J

    x, res, _ = _newton_lstsq(later_bad, np.zeros(2), 1e-12)
    assert np.all(np.isfinite(x)) and res < 6.0  # one accepted step, then a clean stop
