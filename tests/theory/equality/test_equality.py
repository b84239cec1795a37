"""Tests of the same-different theory of seed 003 (rich regime, max margin, Markov walkers,
lazy kernels and the Theorem 2 bound)."""

import numpy as np
import pytest
from richlazy.theory import equality
from scipy import special

# ------------------------------------------------------------------ rich accuracy, Eq. 3 / C.18


def _c18_argument(L, rho):
    L = np.asarray(L, dtype=float)
    return np.sqrt((2 * L**2 - 2 * L) * (rho - 1) ** 2 / ((np.pi - 2) * (rho**2 + 1)))


def _c18_as_printed(L, rho):
    return special.ndtr(_c18_argument(L, rho))


def test_eq3_equals_c18_at_rho_1p5():
    L = np.arange(3, 30)
    assert equality.EQ3_READOUT_RATIO == 1.5
    np.testing.assert_allclose(equality.eq3_accuracy(L), 0.5 + 0.5 * _c18_as_printed(L, 1.5), rtol=1e-14)
    np.testing.assert_allclose(equality.rich_accuracy(L), equality.eq3_accuracy(L), rtol=1e-14)
    np.testing.assert_allclose(equality.rich_accuracy(L, 1.5), equality.eq3_accuracy(L), rtol=1e-14)


def test_rich_different_accuracy_matches_printed_c18_for_rho_ge_1_and_is_signed_below():
    L = np.array([2, 3, 5, 10, 40])
    for rho in (1.0, 1.2, 1.5, 3.0, 10.0):
        np.testing.assert_allclose(equality.rich_different_accuracy(L, rho), _c18_as_printed(L, rho),
                                   rtol=1e-14)
    # rho < 1: the negative readouts are the weaker ones, so "different" is mostly missed
    p = equality.rich_different_accuracy(L, 0.7)
    np.testing.assert_allclose(p, special.ndtr(-_c18_argument(L, 0.7)), rtol=1e-13)
    assert np.all(p < 0.5)


def test_L2_special_case_and_known_values():
    assert equality.rich_accuracy(2) == 0.75
    # L = 2 with the default rho = 1 is exactly 3/4 (Eq. 3 text); rho = 1.5 would not be
    assert equality.rich_accuracy(2, 1.5) > 0.75
    # "over 95 percent test accuracy with as few as L = 5" (§3.2), and < 95 % at L = 4
    assert equality.rich_accuracy(5) > 0.95 > equality.rich_accuracy(4)
    # L = 3 above 90 % (App. C.5)
    assert equality.rich_accuracy(3) > 0.90


def test_c18_against_monte_carlo_of_its_half_normal_model():
    # f = c+ - rho c-, c± sums of n = L² - L i.i.d. half-normals (App. C.5); the CLT limit is
    # C.18. n = 380 and 40000 draws: MC standard error 0.002, CLT error well below that.
    rng = np.random.default_rng(3)
    L, rho, n_mc = 20, 1.05, 40000
    n = L * L - L
    cp = np.zeros(n_mc)
    cm = np.zeros(n_mc)
    for _ in range(n // 20):
        cp += np.abs(rng.standard_normal((n_mc, 20))).sum(1)
        cm += np.abs(rng.standard_normal((n_mc, 20))).sum(1)
    p_mc = np.mean(cp - rho * cm < 0)
    se = np.sqrt(p_mc * (1 - p_mc) / n_mc)
    assert abs(p_mc - equality.rich_different_accuracy(L, rho)) < 4 * se + 2e-3


def test_rich_accuracy_validation():
    with pytest.raises(ValueError, match="n_symbols must be >= 2"):
        equality.rich_accuracy(1)
    with pytest.raises(TypeError, match="n_symbols must be an integer"):
        equality.rich_accuracy(2.5)
    with pytest.raises(ValueError, match="rho must be finite and > 0"):
        equality.rich_accuracy(3, -1.0)
    with pytest.raises(ValueError, match="n_symbols must be >= 3"):
        equality.eq3_accuracy(2)
    with pytest.raises(ValueError, match="n_symbols must be >= 2"):
        equality.readout_ratio_heuristic([1, 3])
    np.testing.assert_array_equal(equality.readout_ratio_heuristic([2, 3, 30]), [1.0, 2.0, 2.0])


# ------------------------------------------------------------------ hand-crafted solution


def test_handcrafted_accuracy_vs_monte_carlo():
    rng = np.random.default_rng(0)
    d, n = 16, 40000
    for rho in (0.5, 1.0, 2.0, 5.0):
        W, a = equality.handcrafted_solution(d, rho)
        z1 = rng.standard_normal((n, d)) / np.sqrt(d)
        z2 = rng.standard_normal((n, d)) / np.sqrt(d)
        f_diff = np.maximum(np.c_[z1, z2] @ W.T, 0) @ a
        f_same = np.maximum(np.c_[z1, z1] @ W.T, 0) @ a
        assert np.all(f_same > 0)  # same pairs always correct (App. B)
        p = np.mean(f_diff < 0)
        se = np.sqrt(p * (1 - p) / n)
        assert abs(p - equality.handcrafted_different_accuracy(rho)) < 4 * se
        assert equality.handcrafted_accuracy(rho) == pytest.approx(0.5 + 0.5 * (2 / np.pi) * np.arctan(rho))


def test_handcrafted_structure_and_validation():
    W, a = equality.handcrafted_solution(3, 2.0)
    v1, v2 = W[:, :3], W[:, 3:]
    cos = np.sum(v1 * v2, 1) / (np.linalg.norm(v1, axis=1) * np.linalg.norm(v2, axis=1))
    np.testing.assert_allclose(cos, [1, 1, -1, -1])
    np.testing.assert_allclose(a, [1, 1, -2, -2])
    with pytest.raises(ValueError, match="d must be >= 1"):
        equality.handcrafted_solution(0)
    with pytest.raises(ValueError, match="rho must be finite and > 0"):
        equality.handcrafted_different_accuracy(0.0)


# ------------------------------------------------------------------ Theorem 1


def test_ideal_matrix_is_circulant_with_eigenvalues_pm1():
    d = 6
    M = equality.ideal_max_margin_matrix(d)
    for k in range(1, 2 * d):  # every row is the cyclic shift of the previous one
        np.testing.assert_array_equal(M[k], np.roll(M[k - 1], 1))
    lam = np.linalg.eigvalsh(M)
    np.testing.assert_allclose(lam, np.r_[-np.ones(d), np.ones(d)], atol=1e-12)
    np.testing.assert_allclose(equality.ideal_max_margin_matrix(d, normalise=False), M / (2 * d))
    lam_f, U = equality.circulant_eigenpairs(d)
    np.testing.assert_allclose(M @ U, U * lam_f, atol=1e-12)  # u_ℓ eigenvectors, λ = (−1)^ℓ
    np.testing.assert_array_equal(lam_f, (-1.0) ** np.arange(2 * d))
    # halves of even-ℓ (odd-ℓ) eigenvectors are parallel (antiparallel), App. C.1
    rng = np.random.default_rng(1)
    for parity, sign in ((0, 1.0), (1, -1.0)):
        c = rng.standard_normal(d)
        w = np.real(U[:, parity::2] @ c) + np.imag(U[:, parity::2] @ c)
        v1, v2 = w[:d], w[d:]
        assert v1 @ v2 / (np.linalg.norm(v1) * np.linalg.norm(v2)) == pytest.approx(sign)
        assert np.linalg.norm(v1) == pytest.approx(np.linalg.norm(v2))


def test_max_margin_population_is_exactly_parallel_antiparallel():
    # Balanced population over all pairs of L symbols: X = d(L/(L-1)) [[0, Cov],[Cov, 0]] with
    # Cov the (biased) empirical symbol covariance -> exact ±1 alignment for any L.
    rng = np.random.default_rng(2)
    L, d = 7, 5
    S = rng.standard_normal((L, d)) / np.sqrt(d)
    x, y, _ = equality.sd_training_pairs(S)
    reps = np.r_[np.full(L, L - 1), np.ones(L * (L - 1), dtype=int)]  # balance the classes
    xb, yb = np.repeat(x, reps, axis=0), np.repeat(y, reps)
    sol = equality.max_margin_solution(xb, yb)
    m = S.mean(0)
    cov = (S - m).T @ (S - m) / L
    np.testing.assert_allclose(sol.matrix[:d, :d], 0, atol=1e-13)
    np.testing.assert_allclose(sol.matrix[d:, d:], 0, atol=1e-13)
    np.testing.assert_allclose(sol.matrix[:d, d:], d * L / (L - 1) * cov, rtol=1e-12, atol=1e-14)
    assert sol.alignment_plus == pytest.approx(1.0, abs=1e-10)
    assert sol.alignment_minus == pytest.approx(-1.0, abs=1e-10)
    assert sol.norm_ratio_plus == pytest.approx(1.0, abs=1e-10)
    np.testing.assert_allclose(equality.max_margin_matrix(xb, yb, normalise=False) * 2 * d, sol.matrix)


def test_max_margin_matrix_tends_to_the_circulant():
    # sampled pairs of many symbols: entries fluctuate like 2d/sqrt(P) around the ideal
    rng = np.random.default_rng(4)
    d = 4
    devs = []
    for L, P in ((50, 2000), (5000, 200000)):
        S = rng.standard_normal((L, d)) / np.sqrt(d)
        u = rng.integers(0, L, P)
        v = (u + 1 + rng.integers(0, L - 1, P)) % L
        y = (np.arange(P) < P // 2).astype(float)
        v = np.where(y == 1, u, v)
        sol = equality.max_margin_solution(np.c_[S[u], S[v]], y)
        devs.append(sol.circulant_deviation)
        assert sol.alignment_plus > 0.97 and sol.alignment_minus < -0.97
    assert devs[1] < 0.1 < devs[0]
    assert devs[1] < devs[0] / 3


def test_max_margin_validation():
    x = np.zeros((4, 6))
    with pytest.raises(ValueError, match="x must have shape"):
        equality.max_margin_matrix(np.zeros((4, 5)), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="y must have shape"):
        equality.max_margin_matrix(x, [0, 1])
    with pytest.raises(ValueError, match="both classes"):
        equality.max_margin_matrix(x, [1, 1, 1, 1])
    with pytest.raises(ValueError, match="labels 0"):
        equality.max_margin_matrix(x, [0, 1, 2, 1])


# ------------------------------------------------------------------ Markov walkers (App. C.3/C.4)


def test_walker_drifts_balance_at_self_consistent_mu():
    n = np.array([16, 16, 16, 33])
    n_plus = np.array([3, 8, 13, 20])
    for sign in (1, -1):
        mu = equality.self_consistent_mu(n_plus, n, readout_sign=sign)
        dp, dm = equality.walker_drifts(n_plus, n, mu, readout_sign=sign)
        np.testing.assert_allclose(np.abs(dp), np.abs(dm), rtol=1e-14)
    np.testing.assert_allclose(equality.self_consistent_mu(n_plus, n, readout_sign=1), 0.5)
    np.testing.assert_allclose(equality.self_consistent_mu(n_plus, n, readout_sign=-1), n_plus / n)
    # C.9 at mu = 1/2: n+ n- / (3 n (n-1)) (the rate quoted after the self-consistency)
    dp, _ = equality.walker_drifts(6, 16, 0.5, readout_sign=1)
    assert dp == pytest.approx(6 * 10 / (3 * 16 * 15))


def test_markov_process_mu_and_alignment_as_in_app_c4():
    # Seed: 100 runs, L = 16, batch 512 -> mu = 0.508 ± 0.056 (same units) and 0.499 ± 0.009
    # (different units), quoted as two standard deviations; we use those as the tolerances.
    same = equality.simulate_markov_walkers(16, readout_sign=1, n_units=100, batch_size=512, n_steps=120,
                                   seed=11)
    diff = equality.simulate_markov_walkers(16, readout_sign=-1, n_units=100, batch_size=512, n_steps=120,
                                   seed=12)
    assert abs(same.mu - 0.5) < 0.056
    assert abs(diff.mu - 0.5) < 0.009
    # parallel (antiparallel) halves with equal norms for positive (negative) readouts
    assert np.nanmean(same.alignment) > 0.99
    assert np.nanmean(diff.alignment) < -0.99
    assert np.nanmean(np.abs(np.log(diff.norm_ratio))) < 0.05
    # different units: n+ ≈ n- (mu = n+/n self-consistently)
    assert abs(diff.n_plus_fraction - 0.5) < 0.1
    r = equality.readout_drift_ratio(same.omega1, same.omega2, diff.omega1, diff.omega2)
    assert 1.0 < r < 2.0  # between the L = 2 value 1 and the heuristic 2 of App. C.4.3


def test_markov_validation():
    with pytest.raises(ValueError, match="readout_sign must be"):
        equality.simulate_markov_walkers(4, readout_sign=0)
    with pytest.raises(ValueError, match="n_symbols must be >= 2"):
        equality.simulate_markov_walkers(1, readout_sign=1)
    with pytest.raises(ValueError, match="mu is a probability"):
        equality.walker_drifts(3, 8, 1.5, readout_sign=1)
    with pytest.raises(ValueError, match="n_plus must satisfy"):
        equality.self_consistent_mu(0, 8, readout_sign=-1)
    with pytest.raises(ValueError, match="coordinates must be"):
        equality.readout_drift_ratio(np.zeros((3, 4)), np.zeros((3, 5)), np.zeros((3, 4)),
                            np.zeros((3, 4)))


# ------------------------------------------------------------------ lazy kernels (App. D)


def _mc_kernels(X, n_units, rng):
    """Finite-width kernels of the seed's initialisation and their Monte-Carlo standard errors."""
    D = X.shape[1]
    W = rng.standard_normal((n_units, D)) / np.sqrt(n_units)
    a = rng.standard_normal(n_units) / np.sqrt(n_units)
    H = X @ W.T
    phi = np.maximum(H, 0)
    dphi = (H > 0).astype(float)
    # per-unit terms (times m so that the kernel is their mean)
    t_nngp = n_units * phi[:, None, :] * phi[None, :, :]
    t_ntk = t_nngp + n_units * (a**2 * dphi[:, None, :] * dphi[None, :, :]) * (X @ X.T)[..., None]
    out = []
    for t in (t_nngp, t_ntk):
        out += [t.mean(-1), t.std(-1) / np.sqrt(n_units)]
    return out


def test_ntk_and_nngp_closed_forms_vs_monte_carlo_network():
    # the seed's initialisation w ~ N(0, I/m), a ~ N(0, 1/m); sums over m units -> kernels
    rng = np.random.default_rng(5)
    X = rng.standard_normal((5, 10)) / np.sqrt(5)
    nngp_mc, nngp_se, ntk_mc, ntk_se = _mc_kernels(X, 200_000, rng)
    assert np.all(np.abs(equality.relu_nngp_gram(X) - nngp_mc) < 5 * nngp_se)
    assert np.all(np.abs(equality.relu_ntk_gram(X) - ntk_mc) < 5 * ntk_se)


def test_ntk_matches_app_d_kernel_and_shared_kernels_module():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((5, 8))
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    u = np.clip(Xn @ Xn.T, -1, 1)
    K_app_d = u * (1 - np.arccos(u) / np.pi) + np.sqrt(1 - u**2) / (2 * np.pi)
    # √(1 − u²) turns a rounding error ε of u ≈ 1 (diagonal) into √(2ε) ≈ 2e-8
    np.testing.assert_allclose(equality.relu_ntk_gram(Xn), K_app_d, rtol=1e-12, atol=1e-7)
    kernels = pytest.importorskip("richlazy.theory.kernels._nngp")
    nrm = np.linalg.norm(X, axis=1)
    c = X @ X.T
    ref = kernels.relu_ntk(nrm[:, None] ** 2, c, nrm[None, :] ** 2)
    # √(1 − u²) turns a rounding error ε of u ≈ 1 (diagonal) into √(2ε) ≈ 2e-8
    np.testing.assert_allclose(equality.relu_ntk_gram(X), ref, rtol=1e-10, atol=1e-7)


def test_kernel_regression_interpolates_and_accuracy_in_range():
    rng = np.random.default_rng(7)
    S = rng.standard_normal((5, 6)) / np.sqrt(6)
    x, y, p = equality.sd_training_pairs(S)
    np.testing.assert_allclose(p.sum(), 1.0)
    assert x.shape == (25, 12) and y.sum() == 5
    for kernel in ("ntk", "nngp"):
        f = equality.kernel_regression_predict(x, y, x, kernel=kernel)
        np.testing.assert_allclose(f, 2 * y - 1, atol=1e-8)  # ridgeless interpolant
    # small d, many symbols: the lazy predictor is clearly above chance; large d: near chance
    lo_d = equality.sd_kernel_accuracy(12, 4, n_test=1000, n_seeds=3, seed=1)
    hi_d = equality.sd_kernel_accuracy(12, 64, n_test=1000, n_seeds=3, seed=1)
    assert lo_d.accuracy > 0.65 and hi_d.accuracy < 0.56


def test_kernel_gradient_descent_converges_to_regression_for_squared_loss():
    rng = np.random.default_rng(8)
    S = rng.standard_normal((4, 3)) / np.sqrt(3)
    x, y, _ = equality.sd_training_pairs(S)
    xt, _ = equality.sd_test_pairs(50, 3, seed=rng)
    f_gd, steps = equality.kernel_gradient_descent(x, y, xt, kernel="ntk", lr=1.0, n_steps=20000,
                                          loss="mse")
    f_kr = equality.kernel_regression_predict(x, y, xt, kernel="ntk")
    np.testing.assert_allclose(f_gd[-1], f_kr, atol=1e-4)
    assert steps[-1] == 20000


def test_kernel_validation():
    with pytest.raises(ValueError, match="kernel must be one of"):
        equality.sd_kernel_accuracy(4, 4, kernel="rbf")
    with pytest.raises(ValueError, match="X2 must have 3 columns"):
        equality.relu_ntk_gram(np.ones((2, 3)), np.ones((2, 4)))
    with pytest.raises(ValueError, match="non-zero vectors"):
        equality.relu_nngp_gram(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="train_y must be"):
        equality.kernel_regression_predict(np.ones((2, 3)), [0, 2], np.ones((1, 3)))
    with pytest.raises(ValueError, match="seed must be given"):
        equality.sd_training_pairs(np.ones((3, 2)), sigma2=0.1)
    with pytest.raises(ValueError, match="loss must be"):
        equality.kernel_gradient_descent(np.eye(2), [0, 1], np.eye(2), loss="hinge")


# ------------------------------------------------------------------ Theorem 2


def test_sphere_cosine_moments():
    for n in (2, 3, 10, 200):
        assert equality.sphere_cosine_mean(lambda u: u, n) == pytest.approx(0.0, abs=1e-12)
        assert equality.sphere_cosine_mean(lambda u: u**2, n) == pytest.approx(1 / n, rel=1e-10)
        assert equality.sphere_cosine_mean(lambda u: u**4, n) == pytest.approx(3 / (n * (n + 2)), rel=1e-9)


def test_theorem2_bound_scales_as_exp_minus_L_over_d2():
    ds = np.array([64, 128, 256, 512])
    rates = np.array([equality.theorem2_bound(30, int(d)).rate for d in ds])
    slope = np.polyfit(np.log(ds), np.log(rates), 1)[0]
    assert slope == pytest.approx(-2.0, abs=0.02)
    # large-d constant from the Taylor expansion: rate d² -> 3/(256 π²)
    assert equality.theorem2_bound(30, 2048).rate * 2048**2 == pytest.approx(3 / (256 * np.pi**2), rel=0.01)
    b = equality.theorem2_bound(30, 100)
    assert b.margin_per_term == pytest.approx(3 / (16 * np.pi * 100), rel=0.02)
    # exponential in L at fixed d
    b1, b2 = equality.theorem2_bound(300, 10), equality.theorem2_bound(600, 10)
    assert np.log(b2.error_bound) == pytest.approx(2 * np.log(b1.error_bound), rel=1e-12)
    with pytest.raises(ValueError, match="n_symbols must be >= 3"):
        equality.theorem2_bound(2, 10)
