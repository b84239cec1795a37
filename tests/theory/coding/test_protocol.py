"""The common protocol of the predicting coding-scheme solutions (seed 000): the same ``predict``,
``test_kernel`` and ``generalization_error`` calls work on the linear, GP, sigmoid and ReLU
solutions of one problem; old call forms and option spellings still work with a warning."""

import inspect

import numpy as np
import pytest
from richlazy.theory import (
    CodingPredictor,
    GPPosterior,
    LinearNetworkSolution,
    ReLUOutlierSolution,
    SigmoidGeneralSolution,
    SigmoidSweep,
    Status,
    input_kernel,
    locate_code_transition,
    nngp_posterior,
    solve_linear_network,
    solve_nngp,
    solve_relu_outliers,
    solve_relu_toy,
    solve_sigmoid_general,
    solve_sigmoid_toy,
    solve_sigmoid_toy_populations,
    sweep_y_minus,
    toy_class_targets,
)
from theory_helpers import RHO, class_correlated_inputs


@pytest.fixture(scope="module")
def problem():
    """Class-correlated inputs (columns of X), one-hot targets y+ = 1, y- = -1/2, test inputs."""
    N0 = 40
    X, lab, Xs, labs = class_correlated_inputs(12, N0, Q=5)
    Yc = toy_class_targets(3, y_minus=-0.5)
    return dict(K0=input_kernel(X), k0=input_kernel(X, Xs), kd=np.sum(Xs * Xs, axis=0) / N0,
                Kss=input_kernel(Xs), Y=Yc[lab], Ys=Yc[labs])


@pytest.fixture(scope="module")
def solutions(problem):
    K0, Y = problem["K0"], problem["Y"]
    return {
        "linear": solve_linear_network(K0, Y),
        "gp": solve_nngp(K0, Y, activation="relu"),
        "sigmoid": solve_sigmoid_general(K0, Y),
        "relu": solve_relu_outliers(K0, Y, n_restarts=1, maxiter=9),
    }


@pytest.mark.slow
@pytest.mark.parametrize("name", ["linear", "gp", "sigmoid", "relu"])
def test_same_calls_on_every_solution(problem, solutions, name):
    sol = solutions[name]
    assert isinstance(sol, CodingPredictor)
    k0, kd, Kss, Ys = problem["k0"], problem["kd"], problem["Kss"], problem["Ys"]
    Q, m = Ys.shape
    f = sol.predict(k0, kd)
    assert f.shape == (Q, m) and np.all(np.isfinite(f))
    K = sol.test_kernel(k0, k0, Kss, kd, kd)
    assert K.shape == (Q, Q)
    np.testing.assert_allclose(K, K.T, atol=1e-10)
    eps = sol.generalization_error(k0, kd, Ys)
    bias = np.mean((Ys - f) ** 2, axis=0)
    if name == "gp":  # the GP error adds its predictive variance
        np.testing.assert_allclose(eps, bias + np.mean(sol.predictive_variance(k0, kd)))
    else:
        np.testing.assert_allclose(eps, bias)
    # keywords work the same way everywhere
    np.testing.assert_allclose(sol.generalization_error(k0=k0, k_test_diag=kd, Y_test=Ys), eps)


def test_signatures_agree():
    """The positional parameters of the three methods are the same on every solution class."""
    classes = (LinearNetworkSolution, GPPosterior, SigmoidGeneralSolution, ReLUOutlierSolution)
    for meth in ("predict", "test_kernel", "generalization_error"):
        ref = None
        for cls in classes:
            params = [p.name for p in inspect.signature(getattr(cls, meth)).parameters.values()
                      if p.kind is p.POSITIONAL_OR_KEYWORD]
            ref = params if ref is None else ref
            assert params == ref, (meth, cls.__name__, params, ref)


def test_linear_and_gp_means_agree_through_the_protocol(problem, solutions):
    """Swapping the linear theory for the linear NNGP changes one line; the mean predictors
    coincide (supp. D.3 [MT])."""
    k0, kd = problem["k0"], problem["kd"]
    gp_lin = solve_nngp(problem["K0"], problem["Y"], activation="linear")
    np.testing.assert_allclose(gp_lin.predict(k0, kd), solutions["linear"].predict(k0, kd),
                               rtol=1e-9, atol=1e-11)
    # solve_nngp then predict == nngp_posterior on the test inputs
    gp = nngp_posterior(problem["K0"], k0, kd, problem["Y"], activation="relu")
    np.testing.assert_allclose(solutions["gp"].predict(k0, kd), gp.mean, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(solutions["gp"].predictive_variance(k0, kd), gp.variance,
                               rtol=1e-12, atol=1e-14)


def test_old_call_forms_warn_and_agree(problem, solutions):
    k0, kd, Kss, Ys = problem["k0"], problem["kd"], problem["Kss"], problem["Ys"]
    for name in ("linear", "relu"):
        sol = solutions[name]
        with pytest.warns(DeprecationWarning, match=r"generalization_error\(k0, Y_test\)"):
            old = sol.generalization_error(k0, Ys)
        np.testing.assert_allclose(old, sol.generalization_error(k0, None, Ys))
    gp = nngp_posterior(problem["K0"], k0, kd, problem["Y"], activation="relu")
    with pytest.warns(DeprecationWarning, match=r"generalization_error\(Y_test\)"):
        old = gp.generalization_error(Ys)
    np.testing.assert_allclose(old, gp.generalization_error(k0, kd, Ys))
    with pytest.warns(DeprecationWarning, match=r"bias_error\(Y_test\)"):
        old = gp.bias_error(Ys)
    np.testing.assert_allclose(old, gp.bias_error(k0, kd, Ys))
    sig = solutions["sigmoid"]
    with pytest.warns(DeprecationWarning, match="k_diag_a= is deprecated"):
        old = sig.test_kernel(k0, k0, Kss, k_diag_a=kd, k_diag_b=kd)
    np.testing.assert_allclose(old, sig.test_kernel(k0, k0, Kss, kd, kd))
    # the old positional forms that did not change keep working silently
    np.testing.assert_allclose(solutions["relu"].test_kernel(k0, k0),
                               solutions["relu"].test_kernel(k0, k0, Kss, kd, kd))
    np.testing.assert_allclose(solutions["linear"].predict(k0), solutions["linear"].predict(k0, kd))


def test_missing_diagonal_is_named(problem, solutions):
    with pytest.raises(ValueError, match="k_test_diag .* is required by the NNGP"):
        solutions["gp"].predict(problem["k0"])
    with pytest.raises(ValueError, match="k_test_diag .* is required by the sigmoid predictor"):
        solutions["sigmoid"].predict(problem["k0"])
    with pytest.raises(ValueError, match="k_test_diag must have length Q = 5"):
        solutions["linear"].predict(problem["k0"], np.ones(4))


@pytest.mark.slow
def test_relu_outliers_sigma_a2_and_deprecated_P(problem):
    # the options are checked on the sliding-neuron point (dual_ascent=False: the ascent after
    # it is the same computation for every spelling, and takes most of the time)
    K0, Y = problem["K0"], problem["Y"]
    P = K0.shape[0]
    new = solve_relu_outliers(K0, Y, sigma_a2=1.0 / P, n_restarts=1, maxiter=9, dual_ascent=False)
    with pytest.warns(DeprecationWarning, match="P= is deprecated"):
        old = solve_relu_outliers(K0, Y, P=float(P), n_restarts=1, maxiter=9, dual_ascent=False)
    default = solve_relu_outliers(K0, Y, n_restarts=1, maxiter=9, dual_ascent=False)
    for s in (old, default):
        np.testing.assert_allclose(s.abar, new.abar, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(s.zbar, new.zbar, rtol=1e-12, atol=1e-14)
    assert new.sigma_a2 == pytest.approx(1.0 / P) and new.P_scale == pytest.approx(P)
    with pytest.raises(TypeError, match="pass sigma_a2= only"):
        solve_relu_outliers(K0, Y, P=2.0, sigma_a2=0.5)
    with pytest.raises(ValueError, match="sigma_a2 must be > 0"):
        solve_relu_outliers(K0, Y, sigma_a2=0.0)
    # seed as int or Generator; tol as the deprecated spelling of atol
    g = solve_relu_outliers(K0, Y, n_restarts=1, maxiter=9, seed=np.random.default_rng(0),
                            dual_ascent=False)
    np.testing.assert_allclose(g.abar, new.abar, rtol=1e-12, atol=1e-14)
    with pytest.warns(DeprecationWarning, match="tol= is deprecated"):
        t = solve_relu_outliers(K0, Y, n_restarts=1, maxiter=9, tol=1e-10,
                                dual_ascent=False)
    np.testing.assert_allclose(t.abar, new.abar, rtol=1e-12, atol=1e-14)


def test_toy_solvers_atol_seed_and_status():
    Yc = toy_class_targets(3, y_minus=0.5)
    new = solve_sigmoid_toy(RHO, Yc, atol=1e-10, seed=np.random.default_rng(0))
    with pytest.warns(DeprecationWarning, match="tol= is deprecated"):
        old = solve_sigmoid_toy(RHO, Yc, tol=1e-10, seed=0)
    np.testing.assert_array_equal(new.P_gamma, old.P_gamma)
    np.testing.assert_array_equal(new.a_gamma, old.a_gamma)
    assert new.status is Status.SUCCESS
    with pytest.warns(DeprecationWarning, match="tol= is deprecated"):
        pop = solve_sigmoid_toy_populations(RHO, Yc, new.P_gamma, new.a_gamma, t0=new.t, tol=1e-10)
    assert pop.status is Status.SUCCESS
    Yr = toy_class_targets(3, y_minus=-0.5)
    with pytest.warns(DeprecationWarning, match="tol= is deprecated"):
        r_old = solve_relu_toy(RHO, Yr, tol=1e-10)
    r_new = solve_relu_toy(RHO, Yr, atol=1e-10)
    np.testing.assert_array_equal(r_old.t, r_new.t)
    assert r_new.status is Status.SUCCESS
    with pytest.raises(ValueError, match="seed must be >= 0"):
        solve_sigmoid_toy(RHO, Yc, seed=-1)
    with pytest.raises(TypeError, match="seed must be a non-negative int or a numpy.random.Generator"):
        solve_sigmoid_toy(RHO, Yc, seed=None)


def test_sweep_carries_one_status_per_grid_point():
    sw = sweep_y_minus([0.1, 0.3], ratios=RHO)
    assert isinstance(sw, SigmoidSweep) and len(sw) == 2
    assert sw.statuses.shape == (2,) and np.all(sw.statuses == Status.SUCCESS)
    assert sw.converged and sw.status is Status.SUCCESS
    assert [s.converged for s in sw] == [True, True] and sw[1] is sw.solutions[1]
    np.testing.assert_array_equal(sw.y_minus, [0.1, 0.3])
    # a failing grid point shows in its own status and in the summary
    bad = sweep_y_minus([0.1, 0.3], ratios=RHO, anneal=(1e-3,), n_random=0)
    assert bad.statuses.shape == (2,)
    if not bad.converged:
        assert bad.status == Status(int(bad.statuses.max())) and "failed" in bad.message


@pytest.mark.slow
def test_locate_transition_xtol_is_deprecated():
    with pytest.warns(DeprecationWarning, match="xtol= is deprecated"):
        old = locate_code_transition(0.45, 0.5, ratios=RHO, xtol=1e-2)
    new = locate_code_transition(0.45, 0.5, ratios=RHO, atol=1e-2)
    assert old == new
