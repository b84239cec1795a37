"""Sigmoidal non-lazy network theory (seed 000 §Redundant coding; notes §4): the orthogonal toy
task (P = inf and finite P), the general fluctuation-free solver, the y_- sweep, validation."""

import itertools

import numpy as np
import pytest
from richlazy.theory import (
    code_transitions,
    locate_code_transition,
    solve_linear_network,
    solve_sigmoid_general,
    solve_sigmoid_toy,
    sweep_y_minus,
    toy_class_targets,
)
from richlazy.theory.kernels._tilted import tilted_moments
from theory_helpers import RHO, assert_sigmoid_toy_equations


@pytest.fixture(scope="module")
def fig2():
    """The Fig. 2 / 4 sigmoid configuration: ratios [1/2, 1/4, 1/4], y+ = 1, y- = 1/2."""
    return solve_sigmoid_toy(RHO, toy_class_targets(3, y_minus=0.5))


def _g(A, t, rho, activation="sigmoid_erf"):
    psi = tilted_moments(A @ t.T, activation=activation)[0]
    return -0.5 * np.sum(A * A, axis=-1) + psi @ rho


def test_fig2_codes_are_the_four_reported(fig2):
    """MT: exactly the codes 1-1-0, 0-1-1, 1-0-1 and a small 1-1-1 population; 1-1-0 neurons
    read out positively for classes 0 and 1 and negatively for class 2 (notes §0 check (ii))."""
    s = fig2
    assert s.converged, s.message
    assert sorted(s.code_strings()) == ["0-1-1", "1-0-1", "1-1-0", "1-1-1"]
    w = dict(zip(s.code_strings(), s.P_gamma, strict=True))
    assert w["1-1-1"] == min(w.values()) and 0 < w["1-1-1"] < 0.1
    a110 = s.a_gamma[s.code_strings().index("1-1-0")]
    assert a110[0] > 0 and a110[1] > 0 and a110[2] < 0
    # the 1-1-1 readout on class 0 lies between those of the other codes (the middle peak)
    a0 = s.a_gamma[:, 0]
    i111 = s.code_strings().index("1-1-1")
    others = np.delete(a0, i111)
    assert others.min() < a0[i111] < others.max()
    assert s.global_gap < 0
    assert np.all(s.P_gamma >= 0) and abs(s.P_gamma.sum() - 1) < 1e-14


def test_fig2_equations_hold_with_independent_quadrature(fig2):
    """Stationarity, degeneracy and the output constraint re-evaluated with the scipy-quad
    reference of psi (independent of the solver's Gauss-Hermite kernel)."""
    s = fig2
    assert max(s.residuals.values()) <= 1e-12
    assert_sigmoid_toy_equations(s, toy_class_targets(3, y_minus=0.5))
    lab = np.array([0, 0, 1, 2, 1, 0])
    np.testing.assert_allclose(s.mean_output(lab), toy_class_targets(3, y_minus=0.5)[lab],
                               atol=1e-12)


def test_fig2_codes_are_global_maxima_on_a_grid(fig2):
    """No point of a dense grid covering every stationary point has g above the tied value."""
    s = fig2
    R = float(np.sum(RHO * np.linalg.norm(s.t, axis=1)))
    x = np.linspace(-R, R, 41)
    A = np.array(list(itertools.product(x, x, x)))
    g = _g(A, s.t, RHO)
    assert g.max() <= s.g_value + 1e-12
    # ... and the grid does come close to the tied value (it sees the peaks)
    assert g.max() > s.g_value - 0.05


def test_feature_kernel_and_density(fig2):
    s = fig2
    lab = np.array([0, 1, 2, 2])
    K = s.feature_kernel(lab)
    _, d1, d2 = tilted_moments(s.h)
    # off-diagonal: sum_gamma P psi'_c psi'_c'; diagonal adds the variance psi''
    assert abs(K[0, 1] - np.sum(s.P_gamma * d1[:, 0] * d1[:, 1])) < 1e-14
    assert abs(K[2, 3] - np.sum(s.P_gamma * d1[:, 2] ** 2)) < 1e-14
    assert abs(K[3, 3] - np.sum(s.P_gamma * (d2[:, 2] + d1[:, 2] ** 2))) < 1e-14
    z = np.linspace(-12, 12, 4001)
    dens = s.preactivation_density(z, 0, 1)
    phi = 0.5 * (1 + np.vectorize(__import__("math").erf)(np.sqrt(np.pi) * z / 2))
    dz = z[1] - z[0]
    assert abs(np.sum(dens) * dz - 1) < 1e-9
    assert abs(np.sum(phi * dens) * dz - s.mean_activations[0, 1]) < 1e-9


def test_y_minus_half_six_codes_and_weight_selection():
    """y- = -1/2 (rows of Y sum to 0): six tied codes (notes §0 check (ii)) whose weights form a
    one-parameter family; the reported member must equal the P -> inf limit of the independent
    finite-P solution (readout integral by quadrature), which is P-independent to O(1/P)."""
    Yc = toy_class_targets(3, y_minus=-0.5)
    s = solve_sigmoid_toy(RHO, Yc)
    assert s.converged, s.message
    assert sorted(s.code_strings()) == ["0-0-1", "0-1-0", "0-1-1", "1-0-0", "1-0-1", "1-1-0"]
    assert s.weight_null_space.shape[1] == 1
    assert max(s.residuals.values()) < 1e-12
    fin = solve_sigmoid_toy(RHO, Yc, P=5000)
    assert fin.converged, fin.message
    w_inf = dict(zip(s.code_strings(), s.P_gamma, strict=True))
    w_fin = dict(zip(fin.code_strings(), fin.P_gamma, strict=True))
    for c in w_inf:
        assert abs(w_inf[c] - w_fin[c]) < 1e-3


def test_finite_P_weights_converge_like_one_over_P(fig2):
    """The finite-P weights tend to the P = inf weights with an O(1/P) correction."""
    Yc = toy_class_targets(3, y_minus=0.5)
    Ps = [1000, 4000, 16000]
    errs = []
    for P in Ps:
        fin = solve_sigmoid_toy(RHO, Yc, P=P)
        assert fin.converged and fin.residuals["output"] < 1e-9
        w = dict(zip(fin.code_strings(), fin.P_gamma, strict=True))
        errs.append(max(abs(w[c] - p) for c, p in zip(fig2.code_strings(), fig2.P_gamma,
                                                      strict=True)))
    slope = np.polyfit(np.log(Ps), np.log(errs), 1)[0]
    assert -1.25 < slope < -0.75


def test_finite_P_quadrature_against_brute_force_one_output():
    """Fig. 1 sigmoid (k = 2 classes, m = 1 output, y = +-1) at P = 60: the exact
    <a psi'(t_c a)> under P(a) ∝ exp(P g(a)) from a fine 1-D grid equals the targets."""
    rho = np.array([0.5, 0.5])
    Yc = np.array([[1.0], [-1.0]])
    s = solve_sigmoid_toy(rho, Yc, P=60, quad_nodes=16)
    assert s.converged, s.message
    a = np.linspace(-6, 6, 24001)[:, None]
    psi, d1, _ = tilted_moments(a @ s.t.T)
    logw = 60 * (-0.5 * a[:, 0] ** 2 + psi @ rho)
    w = np.exp(logw - logw.max())
    w /= w.sum()
    out = np.einsum("k,kc,k->c", w, d1, a[:, 0])
    np.testing.assert_allclose(out, Yc[:, 0], atol=1e-8)


@pytest.mark.parametrize("y_minus", [0.0, -0.5])
def test_linear_activation_reproduces_linear_theory(y_minus):
    """activation='linear' at finite P: the readout integral is Gaussian and the machinery must
    give the linear network's U = <a a^T> and t (solve_linear_network, K0 = I, sigma_a2 = 1/P)."""
    P = 40
    lab = np.array([0] * 20 + [1] * 10 + [2] * 10)
    Yc = toy_class_targets(3, y_minus=y_minus)
    s = solve_sigmoid_toy(RHO, Yc, P=P, activation="linear")
    assert s.converged, s.message
    lin = solve_linear_network(np.eye(P), Yc[lab], sigma_a2=1.0 / P)
    np.testing.assert_allclose(s.readout_covariances[0], lin.U, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(s.t, lin.t[[0, 20, 30]], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(s.a_gamma, 0.0, atol=1e-12)


def test_general_solver_reduces_to_toy_without_fluctuations():
    """solve_sigmoid_general on orthonormal toy inputs (P = 16) equals the class-reduced toy
    solver with fluctuations=False: t_mu = t_c, same readouts, weights and modes."""
    P = 16
    lab = np.array([0] * 8 + [1] * 4 + [2] * 4)
    Yc = toy_class_targets(3, y_minus=0.5)
    toy = solve_sigmoid_toy(RHO, Yc, fluctuations=False)
    gen = solve_sigmoid_general(np.eye(P), Yc[lab], strategy="anneal")
    assert toy.converged and gen.converged, (toy.message, gen.message)
    assert max(gen.residuals.values()) < 1e-10
    np.testing.assert_allclose(gen.t, toy.t[lab], atol=1e-8)
    order_t = np.lexsort(toy.a_gamma.T)
    order_g = np.lexsort(gen.a_gamma.T)
    np.testing.assert_allclose(gen.a_gamma[order_g], toy.a_gamma[order_t], atol=1e-8)
    np.testing.assert_allclose(gen.P_gamma[order_g], toy.P_gamma[order_t], atol=1e-8)
    np.testing.assert_allclose(gen.z_gamma[order_g], toy.preactivation_modes[order_t][:, lab],
                               atol=1e-8)
    # the continuation strategy (from the same toy) lands on the same solution
    cont = solve_sigmoid_general(np.eye(P), Yc[lab], strategy="continuation")
    np.testing.assert_allclose(cont.t, gen.t, atol=1e-8)


@pytest.fixture(scope="module")
def general_random():
    rng = np.random.default_rng(4)
    P, N0 = 15, 40
    X = rng.standard_normal((N0, P))
    lab = np.arange(P) % 3
    Y = toy_class_targets(3, y_minus=0.5)[lab]
    sol = solve_sigmoid_general(X.T @ X / N0, Y)
    return X, lab, Y, sol


def test_general_solver_on_correlated_inputs(general_random):
    X, lab, Y, s = general_random
    assert s.converged, s.message
    assert max(s.residuals.values()) < 1e-9
    assert np.all(s.P_gamma >= 0) and abs(s.P_gamma.sum() - 1) < 1e-12
    np.testing.assert_allclose(s.mean_output(), Y, atol=1e-10)
    # a_gamma = t^T phi(z_gamma) / P and z_gamma = K0 [(t a_gamma) o phi'(z_gamma)]
    P = Y.shape[0]
    ph = s.mean_activations
    np.testing.assert_allclose(s.a_gamma, ph @ s.t / P, atol=1e-10)
    dphi = 0.5 * np.exp(-np.pi * s.z_gamma**2 / 4)
    np.testing.assert_allclose(s.z_gamma, ((s.a_gamma @ s.t.T) * dphi) @ s.K0, atol=1e-9)
    # training inputs as test inputs: s^2 = 0, predictor = mean output, kernel = feature kernel
    K0 = s.K0
    np.testing.assert_allclose(s.predict(K0, np.diag(K0)), Y, atol=1e-9)
    np.testing.assert_allclose(s.test_kernel(K0[:, :4], K0[:, :4], K0[:4, :4], np.diag(K0)[:4],
                                             np.diag(K0)[:4]), s.feature_kernel()[:4, :4],
                               atol=1e-9)


def test_general_test_predictor_matches_quadrature(general_random):
    """f(x) with s^2(x) kept: the erf closed form vs Gauss-Hermite over z* ~ N(m, s^2)."""
    X, lab, Y, s = general_random
    rng = np.random.default_rng(5)
    N0 = X.shape[0]
    Xs = rng.standard_normal((N0, 3))
    k0 = X.T @ Xs / N0
    kd = np.sum(Xs * Xs, axis=0) / N0
    f = s.predict(k0, kd)
    R = np.linalg.solve(s.K0, k0)
    m = s.z_gamma @ R
    s2 = kd - np.sum(k0 * R, axis=0)
    x, w = np.polynomial.hermite_e.hermegauss(80)
    w = w / w.sum()
    zz = m[..., None] + np.sqrt(s2)[None, :, None] * x
    phi = 0.5 * (1 + np.vectorize(__import__("math").erf)(np.sqrt(np.pi) * zz / 2))
    act = phi @ w
    np.testing.assert_allclose(f, np.einsum("g,gq,gr->qr", s.P_gamma, act, s.a_gamma),
                               atol=1e-12)
    f0 = s.predict(k0, kd, keep_variance=False)
    phi0 = 0.5 * (1 + np.vectorize(__import__("math").erf)(np.sqrt(np.pi) * m / 2))
    np.testing.assert_allclose(f0, np.einsum("g,gq,gr->qr", s.P_gamma, phi0, s.a_gamma),
                               atol=1e-12)
    err = s.generalization_error(k0, kd, Y[:3])
    np.testing.assert_allclose(err, np.mean((Y[:3] - f) ** 2, axis=0))


@pytest.mark.slow
def test_sweep_transition_is_where_the_111_maximum_ties():
    """Along y-, the 1-1-1 code enters where its (metastable) local maximum of g reaches the
    tied value: extrapolating the gap linearly from below gives the located transition."""
    ys = np.array([0.45, 0.5])
    sols = sweep_y_minus(ys, ratios=RHO)
    tr = code_transitions(ys, sols)
    assert len(tr) == 1 and tr[0].between == (0.45, 0.5)
    assert "1-1-1" in tr[0].after and "1-1-1" not in tr[0].before
    loc = locate_code_transition(0.45, 0.5, ratios=RHO, atol=1e-3)
    y_star = loc.y_minus
    gaps = []
    for dy in (0.01, 0.02):
        s = solve_sigmoid_toy(RHO, toy_class_targets(3, y_minus=y_star - dy))
        assert s.other_g.size == 1
        gaps.append(float(s.other_g[0] - s.g_value))
    y0 = y_star - 0.01 + gaps[0] * 0.01 / (gaps[1] - gaps[0])  # linear extrapolation to 0
    assert abs(y0 - y_star) < 3e-3


def test_validation_messages():
    Yc = toy_class_targets(3, y_minus=0.5)
    with pytest.raises(ValueError, match="ratios must sum to 1"):
        solve_sigmoid_toy([0.5, 0.25, 0.3], Yc)
    with pytest.raises(ValueError, match=r"ratios must be > 0"):
        solve_sigmoid_toy([1.5, -0.25, -0.25], Yc)
    with pytest.raises(ValueError, match="ratios must be 1-dimensional"):
        solve_sigmoid_toy([[1.0]], Yc)
    with pytest.raises(ValueError, match=r"class_targets must have one row per class"):
        solve_sigmoid_toy(RHO, Yc[:2])
    with pytest.raises(ValueError, match="use solve_relu_toy"):
        solve_sigmoid_toy(RHO, Yc, activation="relu")
    with pytest.raises(ValueError, match="activation must be one of"):
        solve_sigmoid_toy(RHO, Yc, activation="tanh")
    with pytest.raises(ValueError, match="pass P"):
        solve_sigmoid_toy(RHO, Yc, activation="linear")
    with pytest.raises(TypeError, match="P must be an integer"):
        solve_sigmoid_toy(RHO, Yc, P=10.5)
    with pytest.raises(ValueError, match="P must be >= 1"):
        solve_sigmoid_toy(RHO, Yc, P=0)
    with pytest.raises(TypeError, match="fluctuations must be a bool"):
        solve_sigmoid_toy(RHO, Yc, fluctuations=1)
    with pytest.raises(ValueError, match=r"t0 must have shape \(3, 3\)"):
        solve_sigmoid_toy(RHO, Yc, t0=np.zeros((2, 3)))
    with pytest.raises(ValueError, match="anneal must contain at least one"):
        solve_sigmoid_toy(RHO, Yc, anneal=())
    with pytest.raises(ValueError, match="anneal must be > 0"):
        solve_sigmoid_toy(RHO, Yc, anneal=(-1.0,))
    with pytest.raises(ValueError, match="n_nodes must be >= 5"):
        solve_sigmoid_toy(RHO, Yc, n_nodes=2)
    with pytest.raises(ValueError, match="tol must be > 0"):
        solve_sigmoid_toy(RHO, Yc, tol=0.0)
    with pytest.raises(ValueError, match="K0 must be square"):
        solve_sigmoid_general(np.zeros((3, 4)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="K0 must be symmetric"):
        solve_sigmoid_general(np.array([[1.0, 0.2], [0.0, 1.0]]), np.eye(2))
    with pytest.raises(ValueError, match="K0 must be positive semi-definite"):
        solve_sigmoid_general(-np.eye(3), np.eye(3))
    with pytest.raises(ValueError, match="Y must have P = 3 rows"):
        solve_sigmoid_general(np.eye(3), np.eye(4))
    with pytest.raises(ValueError, match="activation must be 'sigmoid_erf' or 'erf'"):
        solve_sigmoid_general(np.eye(3), np.eye(3), activation="relu")
    with pytest.raises(ValueError, match="strategy must be"):
        solve_sigmoid_general(np.eye(3), np.eye(3), strategy="magic")
    with pytest.raises(ValueError, match="strategy='continuation' needs class-structured"):
        solve_sigmoid_general(np.eye(4), np.array([[1.0, 0, 0], [0.9, 0, 0], [0, 1, 0],
                                                   [0, 0, 1]]), strategy="continuation")
    with pytest.raises(ValueError, match="y_minus_values must be < y_plus"):
        sweep_y_minus([0.2, 1.2], ratios=RHO)
    with pytest.raises(ValueError, match="solutions must have one entry per y_minus"):
        code_transitions([0.1, 0.2], [])
    with pytest.raises(ValueError, match="nothing to locate"):
        locate_code_transition(0.2, 0.3, ratios=RHO)


def test_result_method_validation(fig2):
    with pytest.raises(ValueError, match="labels must lie in 0..2"):
        fig2.mean_output([0, 3])
    with pytest.raises(TypeError, match="labels must be integers"):
        fig2.feature_kernel([0.0, 1.0])
    with pytest.raises(ValueError, match="labels must be a non-empty 1-D array"):
        fig2.mean_output([])
    with pytest.raises(ValueError, match="gamma must be in 0..3"):
        fig2.preactivation_density(0.0, 7, 0)
    with pytest.raises(ValueError, match="c must be in 0..2"):
        fig2.preactivation_density(0.0, 0, 5)
    with pytest.raises(ValueError, match="needs a finite P"):
        fig2.readout_marginal_density(0.0, 0)
    nofl = solve_sigmoid_toy(RHO, toy_class_targets(3, y_minus=0.5), fluctuations=False)
    with pytest.raises(ValueError, match="needs fluctuations=True"):
        nofl.preactivation_density(0.0, 0, 0)
