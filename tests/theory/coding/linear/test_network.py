"""Linear non-lazy network theory (seed 000 §Linear networks; notes §3): closed forms,
saddle-point residuals, identities, finite-T extension and input validation."""

import numpy as np
import pytest
from richlazy.theory import (
    SolverError,
    default_sigma_a2,
    input_kernel,
    linear_saddle_residuals,
    nngp_posterior,
    solve_linear_network,
    solve_U,
)
from scipy import optimize


def _problem(P=30, N0=40, m=3, seed=0, y_minus=0.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N0, P))
    labels = rng.integers(0, m, P)
    Y = np.where(np.eye(m, dtype=bool)[labels], 1.0, y_minus)
    return X, Y


@pytest.mark.parametrize("L", [1, 2, 3, 4])
@pytest.mark.parametrize("y_minus", [0.0, -0.5])
def test_exact_solution_satisfies_saddle_point_equations(L, y_minus):
    X, Y = _problem(y_minus=y_minus)
    sol = solve_linear_network(input_kernel(X), Y, L=L)
    assert sol.converged
    res = linear_saddle_residuals(sol.K0, Y, t=sol.t, U=sol.U, kernels=sol.kernels,
                                  sigma_a2=sol.sigma_a2)
    assert res.largest < 1e-10, res
    # the U equation itself: U^{L+1} - s U^L = s^L G on range(Y^T)
    G = Y.T @ np.linalg.solve(sol.K0, Y)
    s = sol.sigma_a2
    lhs = np.linalg.matrix_power(sol.U, L + 1) - s * np.linalg.matrix_power(sol.U, L)
    assert np.allclose(lhs, s**L * G, atol=1e-12 * np.abs(s**L * G).max())


def test_printed_exponent_violates_saddle_point_for_L2():
    """The main text prints U^{L+1} = sigma_a2 G; for L = 2 that U does not satisfy the saddle
    point, while sigma_a2^L G does (spec/PAPERS.md known defect)."""
    X, Y = _problem(P=40, N0=50)
    K0 = input_kernel(X)
    sol = solve_linear_network(K0, Y, L=2)
    s = sol.sigma_a2
    G = Y.T @ np.linalg.solve(K0, Y)
    # U from the printed form (leading order): U^3 = s G
    g, V = np.linalg.eigh(G)
    U_printed = (V * np.cbrt(s * g)) @ V.T
    U_ok = (V * np.cbrt(s**2 * g)) @ V.T
    assert np.allclose(U_ok, solve_U(G, sigma_a2=s, L=2, exact=False)[0])
    rel = np.abs(U_printed - sol.U).max() / np.abs(sol.U).max()
    assert rel > 0.5  # off by a factor ~ P^{1/6}
    assert np.abs(U_ok - sol.U).max() / np.abs(sol.U).max() < 0.1


def test_toy_closed_form_L1():
    """K0 = I, one-hot targets with y- = 0: G = diag(P rho_c), u_c solves u^2 - u/P = rho_c."""
    P, ratios = 64, np.array([0.5, 0.25, 0.25])
    counts = (ratios * P).astype(int)
    labels = np.repeat(np.arange(3), counts)
    Y = np.eye(3)[labels]
    sol = solve_linear_network(np.eye(P), Y, L=1)
    s = 1.0 / P
    u_exact = 0.5 * (s + np.sqrt(s * s + 4 * ratios))
    assert np.allclose(np.diag(sol.U), u_exact, rtol=1e-13)
    assert np.allclose(sol.U - np.diag(np.diag(sol.U)), 0.0, atol=1e-14)
    lead = solve_linear_network(np.eye(P), Y, L=1, exact=False)
    assert np.allclose(np.diag(lead.U), np.sqrt(ratios), rtol=1e-13)


@pytest.mark.parametrize("L", [1, 2, 3])
def test_feature_kernel_identity(L):
    """K_L = K_{L-1} + Y U^{-1} Y^T (feature layer) at T = 0 for every depth."""
    X, Y = _problem(P=25, N0=30, seed=3)
    sol = solve_linear_network(input_kernel(X), Y, L=L)
    below = sol.K0 if L == 1 else sol.kernels[L - 2]
    assert np.allclose(sol.kernels[-1], below + Y @ np.linalg.inv(sol.U) @ Y.T, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("L", [1, 2, 3])
def test_leading_order_kernels_match_printed_formula(L):
    """exact=False: K_l = K0 + sigma_a2^{L-l} Y U^{-(L-l+1)} Y^T exactly as printed [MT]."""
    X, Y = _problem(P=25, N0=30, seed=4)
    sol = solve_linear_network(input_kernel(X), Y, L=L, exact=False)
    s = sol.sigma_a2
    Uinv = np.linalg.inv(sol.U)
    for ell in range(1, L + 1):
        expect = sol.K0 + s ** (L - ell) * Y @ np.linalg.matrix_power(Uinv, L - ell + 1) @ Y.T
        assert np.allclose(sol.kernels[ell - 1], expect, rtol=1e-12, atol=1e-12)


def test_rank_deficient_targets_use_range_of_Y():
    """y+ = 1, y- = -1/2, m = 3: rows of Y sum to zero, G is singular; U = sigma_a2 in the null
    direction and the kernels only involve range(Y^T)."""
    X, Y = _problem(y_minus=-0.5)
    K0 = input_kernel(X)
    sol = solve_linear_network(K0, Y, L=2)
    null = np.ones(3) / np.sqrt(3)
    assert np.allclose(Y @ null, 0.0)
    assert np.isclose(null @ sol.U @ null, sol.sigma_a2, rtol=1e-10)
    assert sol.range_mask.sum() == 2
    # conditional mean Y U^+ a ignores the null direction
    assert np.allclose(sol.conditional_mean(null), 0.0, atol=1e-12)
    # a perturbation of the pseudo-inverse in the null direction changes nothing physical
    assert np.all(np.isfinite(sol.kernels[-1]))


@pytest.mark.parametrize("activation_sigma", [0.1, 1.0, 7.0])
def test_mean_predictor_equals_gp_mean_predictor(activation_sigma):
    """Non-lazy linear mean predictor = GP mean predictor = Y^T K0^-1 k0 (supp. D.3 [MT])."""
    rng = np.random.default_rng(5)
    X, Y = _problem(P=20, N0=35, seed=5)
    Xs = rng.standard_normal((35, 7))
    K0 = input_kernel(X)
    k0 = input_kernel(X, Xs)
    kss = np.einsum("ij,ij->j", Xs, Xs) / 35
    for L in (1, 2):
        sol = solve_linear_network(K0, Y, L=L)
        gp = nngp_posterior(K0, k0, kss, Y, activation="linear", depth=L, sigma_a2=activation_sigma)
        assert np.allclose(sol.predict(k0), gp.mean, rtol=1e-9, atol=1e-11)
        assert np.allclose(sol.predict(k0), (np.linalg.solve(K0, k0)).T @ Y, rtol=1e-10)


def test_test_kernel_on_training_inputs_reproduces_K_l():
    X, Y = _problem(P=20, N0=30, seed=6)
    K0 = input_kernel(X)
    sol = solve_linear_network(K0, Y, L=3)
    for ell in (1, 2, 3):
        assert np.allclose(sol.test_kernel(K0, K0, K0, layer=ell), sol.kernels[ell - 1], atol=1e-9)


def test_generalisation_error_has_no_variance_term():
    X, Y = _problem(P=20, N0=30, seed=7)
    rng = np.random.default_rng(8)
    Xs = rng.standard_normal((30, 9))
    Ys = rng.standard_normal((9, 3))
    sol = solve_linear_network(input_kernel(X), Y)
    f = sol.predict(input_kernel(X, Xs))
    assert np.allclose(sol.generalization_error(input_kernel(X, Xs), Ys), ((Ys - f) ** 2).mean(0))


def test_finite_T_toy_against_scalar_equation():
    """K0 = I, one-hot y- = 0, L = 1, T > 0: t = Y (U + T)^-1 and, per class,
    1/u = 1/sigma_a2 - g/(u + T)^2 with g = P rho_c (our finite-T saddle point)."""
    P, T = 64, 0.02
    labels = np.repeat(np.arange(3), [32, 16, 16])
    Y = np.eye(3)[labels]
    sol = solve_linear_network(np.eye(P), Y, T=T)
    assert sol.converged, sol.message
    s = 1.0 / P
    for c, rho in enumerate([0.5, 0.25, 0.25]):
        g = P * rho
        u = optimize.brentq(lambda u, g=g: 1 / u - 1 / s + g / (u + T) ** 2, s * 1.0001, 10.0)
        assert np.isclose(sol.U[c, c], u, rtol=1e-9)
    assert np.allclose(sol.mean_output, Y - T * sol.t)
    assert np.allclose(sol.t, Y @ np.linalg.inv(sol.U + T * np.eye(3)), atol=1e-10)


@pytest.mark.parametrize("seed", range(6))
def test_finite_T_converges_for_round_off_variants(seed):
    """Regression: K0 = I up to round-off (orthogonal inputs drawn with different seeds) must not
    flip the convergence flag; convergence is judged by the saddle-point residual."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((84, 64)))
    X = np.sqrt(84) * Q
    Y = np.eye(3)[np.repeat(np.arange(3), [32, 16, 16])]
    sol = solve_linear_network(input_kernel(X), Y, sigma_a2=1 / 64, T=0.02, throw=True)
    assert sol.converged and sol.residual < 1e-10
    assert np.allclose(np.diag(sol.U), [0.69519, 0.488199, 0.488199], atol=1e-5)


def test_finite_T_tends_to_T0():
    X, Y = _problem(P=20, N0=30, seed=9)
    K0 = input_kernel(X)
    s0 = solve_linear_network(K0, Y)
    s1 = solve_linear_network(K0, Y, T=1e-9)
    assert np.allclose(s1.U, s0.U, rtol=1e-5)
    assert np.allclose(s1.kernels[0], s0.kernels[0], rtol=1e-5)


def test_default_sigma_a2():
    assert default_sigma_a2(100, 2) == pytest.approx(0.1)
    assert default_sigma_a2(100, 3, "sigmoid_erf") == pytest.approx(0.01)
    X, Y = _problem(P=16, N0=20)
    assert solve_linear_network(input_kernel(X), Y, L=2).sigma_a2 == pytest.approx(0.25)


def test_finite_T_failure_is_a_status_and_throws_on_request(monkeypatch):
    from richlazy.theory.coding.linear import _network as _linear

    X, Y = _problem(P=10, N0=12)

    class Fake:
        success = False
        message = "forced failure"
        nfev = 3

        def __init__(self, x):
            self.x = x

    # a root finder that returns a point far from the solution: the residual check must catch it
    monkeypatch.setattr(_linear.optimize, "root", lambda f, x0, **k: Fake(3.0 * x0))
    sol = solve_linear_network(input_kernel(X), Y, T=0.5)
    assert not sol.converged and sol.status == 2 and "smaller T" in sol.message
    with pytest.raises(SolverError, match="did not converge"):
        solve_linear_network(input_kernel(X), Y, T=0.5, throw=True)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(K0=np.ones((3, 4))), ValueError, "K0 must be square"),
        (dict(K0=np.array([[1.0, 2.0], [0.0, 1.0]]), Y=np.ones((2, 1))), ValueError, "K0 must be symmetric"),
        (dict(K0=np.array([[1.0, 2.0], [2.0, 1.0]]), Y=np.ones((2, 1))), ValueError, "positive definite"),
        (dict(Y=np.ones((5, 2))), ValueError, "Y must have P = 4 rows"),
        (dict(L=0), ValueError, "L must be >= 1"),
        (dict(L=1.5), TypeError, "L must be an integer"),
        (dict(sigma_a2=-1.0), ValueError, "sigma_a2 must be > 0"),
        (dict(T=-0.1), ValueError, "T must be >= 0"),
        (dict(T=0.1, L=2), ValueError, "T > 0 is implemented for L = 1 only"),
        (dict(T=0.1, exact=False), ValueError, "leading order"),
        (dict(K0=np.array([[np.nan]]), Y=np.ones((1, 1))), ValueError, "K0 must contain only finite"),
        (dict(Y="abc"), TypeError, "Y must be a real numeric array"),
    ],
)
def test_input_validation(kwargs, exc, match):
    base = dict(K0=np.eye(4), Y=np.ones((4, 2)))
    base.update(kwargs)
    K0 = base.pop("K0")
    Y = base.pop("Y")
    with pytest.raises(exc, match=match):
        solve_linear_network(K0, Y, **base)


def test_solution_method_validation():
    X, Y = _problem(P=10, N0=12)
    sol = solve_linear_network(input_kernel(X), Y, L=2)
    with pytest.raises(ValueError, match="a must have last dimension m = 3"):
        sol.conditional_mean(np.ones(2))
    with pytest.raises(ValueError, match="k0 must have P = 10 rows"):
        sol.predict(np.ones((9, 2)))
    with pytest.raises(ValueError, match="layer must be in 1..L = 2"):
        sol.test_kernel(np.ones((10, 1)), np.ones((10, 1)), np.ones((1, 1)), layer=3)
    with pytest.raises(ValueError, match="K0_ab must have shape"):
        sol.test_kernel(np.ones((10, 1)), np.ones((10, 2)), np.ones((1, 1)))
    with pytest.raises(ValueError, match="Y_test must have shape"):
        sol.generalization_error(np.ones((10, 2)), np.ones((3, 3)))
    with pytest.raises(ValueError, match="X2 must have the same input dimension"):
        input_kernel(np.ones((3, 2)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="G must be positive semi-definite"):
        solve_U(-np.eye(2), sigma_a2=0.1)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(P=st.integers(3, 25), extra=st.integers(0, 10), m=st.integers(1, 4), L=st.integers(1, 4),
       seed=st.integers(0, 2**31 - 1), y_minus=st.sampled_from([0.0, -0.5, 0.3]))
def test_random_problems_satisfy_saddle_point(P, extra, m, L, seed, y_minus):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((P + extra + 1, P))
    Y = np.where(np.eye(m, dtype=bool)[rng.integers(0, m, P)], 1.0, y_minus)
    sol = solve_linear_network(input_kernel(X), Y, L=L)
    assert sol.converged
    assert np.allclose(sol.U, sol.U.T) and np.linalg.eigvalsh(sol.U).min() > 0
    for K in sol.kernels:
        assert np.allclose(K, K.T, atol=1e-9 * np.abs(K).max())
    res = linear_saddle_residuals(sol.K0, Y, t=sol.t, U=sol.U, kernels=sol.kernels,
                                  sigma_a2=sol.sigma_a2)
    assert res.largest < 1e-7, res
