"""Singular input kernels: the outlier-only ReLU theory solved on the range of K0, and the NNGP
posterior on a rank-deficient K0 (fewer independent input directions than training inputs,
K0 = X^T X / N0 with N0 < P)."""

import numpy as np
import pytest
from richlazy.theory import toy_class_targets
from richlazy.theory.coding import nngp_posterior, solve_nngp, solve_relu_outliers

P, N0 = 12, 6
LAB = np.arange(P) % 3
YC = toy_class_targets(3, y_minus=-0.5)


def _null_basis(K0):
    lam, V = np.linalg.eigh(K0)
    return V[:, lam <= 1e-10 * lam[-1]]


def _pinv(K0):
    """K0^+ from the eigendecomposition, eigenvalues <= 1e-10 x the largest dropped."""
    lam, V = np.linalg.eigh(K0)
    keep = lam > 1e-10 * lam[-1]
    return (V[:, keep] / lam[keep]) @ V[:, keep].T


def _repeated_prototypes(seed=4):
    """Three prototypes in N0 = 6 dimensions, each input repeated (4 copies per class): K0 has
    rank 3 < P = 12, and the problem is the 3-input problem on the prototypes (see below)."""
    Xp = np.random.default_rng(seed).standard_normal((N0, 3)) + 0.5
    return Xp, Xp[:, LAB]


def _generic_inputs(seed=2):
    """Class-correlated Gaussian inputs in N0 = 6 < P = 12 dimensions (rank 6, no two inputs
    parallel)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N0, P))
    return X + rng.standard_normal((N0, 3))[:, LAB]


def _check_solution(s, K0, Y, T):
    """Certified, KKT residual small, output constraint F = Y - T t, z in range(K0)."""
    assert s.converged, s.message
    assert s.dual_margin <= 1 + 1e-6
    assert s.residual <= 1e-8
    F = np.maximum(s.zbar, 0.0).T @ s.abar
    np.testing.assert_allclose(F, Y - T * s.t, rtol=0, atol=1e-8)
    assert np.max(np.abs(s.zbar @ _null_basis(K0))) <= 1e-10
    # the cost is the range norm: sum_i [P |a_i|^2 + z_i^T K0^+ z_i] / 2 (+ the T term)
    cost = 0.5 * (P * np.sum(s.abar**2) + np.sum(s.zbar * (s.zbar @ _pinv(K0))))
    cost += 0.5 * np.sum((F - Y) ** 2) / T if T > 0 else 0.0
    assert abs(cost - s.cost) <= 1e-9 * s.cost


@pytest.mark.slow
def test_repeated_inputs_interpolated_on_the_range_and_equal_to_the_reduced_problem():
    """T = 0 on K0 of rank 3: certified interpolation on the range. Independent check: the
    preactivations on the range are constant on the copies of a prototype, z = E zeta (E the
    class-indicator matrix), and z^T K0^+ z = zeta^T Kp^-1 zeta with Kp the 3 x 3 prototype
    kernel, so the optimum equals that of the positive-definite problem on the three
    prototypes with the same readout weight P (sigma_a2 = 1/12), solved by the Cholesky path."""
    Xp, X = _repeated_prototypes()
    K0 = X.T @ X / N0
    assert np.linalg.matrix_rank(K0) == 3
    Y = YC[LAB]
    s = solve_relu_outliers(K0, Y, n_restarts=1)
    _check_solution(s, K0, Y, 0.0)
    assert abs(s.cost - np.sum(s.t * Y)) <= 1e-8 * s.cost  # strong duality
    red = solve_relu_outliers(Xp.T @ Xp / N0, YC, sigma_a2=1.0 / P, n_restarts=2)
    assert red.converged, red.message
    assert abs(s.cost - red.cost) <= 1e-8 * red.cost
    # the training predictor interpolates: z_i^T K0^+ K0 = z_i on the range
    np.testing.assert_allclose(s.predict(K0), Y, rtol=0, atol=1e-8)


@pytest.mark.slow
def test_generic_rank_deficient_inputs_and_the_regularised_limit():
    """N0 = 6 < P = 12 generic inputs at T = 0.1: certified on the range. Independent check:
    K0 + eps I is positive definite (the Cholesky path); its cost lies below the range cost
    (K0_eps^-1 <= K0^+ on the range, out-of-range z cost |N^T z|^2 / eps) and tends to it
    linearly in eps."""
    X = _generic_inputs()
    K0 = X.T @ X / N0
    assert np.linalg.matrix_rank(K0) == N0
    Y, T = YC[LAB], 0.1
    s = solve_relu_outliers(K0, Y, T=T, n_restarts=1)
    _check_solution(s, K0, Y, T)
    gaps = []
    for eps in (1e-5, 1e-6):
        e = solve_relu_outliers(K0 + eps * np.eye(P), Y, T=T, n_restarts=1)
        assert e.converged, e.message
        gaps.append((s.cost - e.cost) / eps)
    assert min(gaps) > 0
    assert abs(gaps[0] - gaps[1]) <= 0.05 * gaps[1]  # slope d cost / d eps, O(1)
    assert 0.1 < gaps[1] < 100


@pytest.mark.parametrize("case", ["repeated", "generic"])
def test_rotated_and_zero_padded_inputs_give_the_same_cost(case):
    """Only K0 enters: inputs rotated and embedded in N0' = 20 dimensions (zero padding) give
    the same K0 (to round-off, so a different eigenbasis of the null space) and the same
    optimum."""
    X = _repeated_prototypes()[1] if case == "repeated" else _generic_inputs()
    T = 0.0 if case == "repeated" else 0.1
    Q, _ = np.linalg.qr(np.random.default_rng(7).standard_normal((20, 20)))
    X2 = Q @ np.vstack([X, np.zeros((14, P))])
    K0, K2 = X.T @ X / N0, X2.T @ X2 / N0  # same normalisation N0: the same kernel
    assert np.max(np.abs(K0 - K2)) < 1e-13
    Y = YC[LAB]
    a = solve_relu_outliers(K0, Y, T=T, n_restarts=1)
    b = solve_relu_outliers(K2, Y, T=T, n_restarts=1, seed=3)
    assert a.converged and b.converged, (a.message, b.message)
    assert abs(a.cost - b.cost) <= 1e-8 * a.cost
    np.testing.assert_allclose(a.mean_output(), b.mean_output(), atol=1e-7)


def test_positive_definite_k0_unchanged():
    """A positive-definite K0 (N0 = 20 > P) is solved by the Cholesky path as before singular
    kernels were accepted: the cost measured with the previous solver (HEAD ed256b4) is
    reproduced."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((20, P)) + rng.standard_normal((20, 3))[:, LAB]
    s = solve_relu_outliers(X.T @ X / 20, YC[LAB], T=0.1, n_restarts=2)
    assert s.converged, s.message
    assert abs(s.cost - 13.01653166362) <= 1e-8 * s.cost


@pytest.mark.parametrize("case", ["repeated", "generic"])
def test_predictor_uses_the_pseudo_inverse(case):
    """f(x) = sum_i a_i relu(z_i^T K0^+ k0(x)) with the pseudo-inverse (explicit formula), and
    a test input that differs from a training input by a direction orthogonal to all training
    inputs has that training input's prediction."""
    X = _repeated_prototypes()[1] if case == "repeated" else _generic_inputs()
    T = 0.0 if case == "repeated" else 0.1
    K0 = X.T @ X / N0
    s = solve_relu_outliers(K0, YC[LAB], T=T, n_restarts=1)
    rng = np.random.default_rng(11)
    Xt = np.hstack([rng.standard_normal((N0, 4)), X[:, [0, 5]]])
    k0 = X.T @ Xt / N0
    Zt = np.maximum(s.zbar @ _pinv(K0) @ k0, 0.0)
    np.testing.assert_allclose(s.predict(k0), Zt.T @ s.abar, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(s.test_kernel(k0, k0), Zt.T @ Zt, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(s.predict(k0)[4:], s.mean_output()[[0, 5]], atol=1e-9)
    Yt = rng.standard_normal((6, 3))
    np.testing.assert_allclose(s.generalization_error(k0, None, Yt),
                               np.mean((Yt - Zt.T @ s.abar) ** 2, axis=0), rtol=1e-9)
    # an orthogonal extra dimension: the same k0, so the same prediction
    Xe = np.vstack([X, np.zeros((1, P))])
    xt = np.vstack([Xt, 3.0 * np.ones((1, Xt.shape[1]))])
    np.testing.assert_allclose(s.predict(Xe.T @ xt / N0), s.predict(k0), rtol=0, atol=1e-12)


def test_invalid_kernels_and_infeasible_targets():
    with pytest.raises(ValueError, match="K0 must be positive semi-definite"):
        solve_relu_outliers([[1.0, 2.0], [2.0, 1.0]], np.ones((2, 1)))
    with pytest.raises(ValueError, match="K0 must be symmetric positive semi-definite"):
        solve_relu_outliers([[1.0, 0.5], [0.0, 1.0]], np.ones((2, 1)))
    with pytest.raises(ValueError, match="K0 must be positive semi-definite and nonzero"):
        solve_relu_outliers(np.zeros((2, 2)), np.ones((2, 1)))
    # a duplicated input with a different target: relu(z) is the same on both, so no network
    # interpolates; T > 0 (regression) is still solved
    X = _generic_inputs()
    X = np.hstack([X, X[:, :1]])
    K0 = X.T @ X / N0
    Y = np.vstack([YC[LAB], -YC[LAB[0]]])
    with pytest.raises(ValueError, match=r"inputs 0 and 12 are positively parallel \(duplicates"):
        solve_relu_outliers(K0, Y)
    # positively parallel (x_12 = 2 x_0) with targets that scale along: feasible, certified
    X[:, 12] = 2.0 * X[:, 0]
    Y[12] = 2.0 * Y[0]
    s = solve_relu_outliers(X.T @ X / N0, Y, T=0.1, n_restarts=1)
    assert np.all(np.isfinite(s.zbar)) and np.isfinite(s.cost)
    Y[12] = -Y[0]
    with pytest.raises(ValueError, match=r"x_12 = 2 x_0"):
        solve_relu_outliers(X.T @ X / N0, Y)
    X[:, 3] = 0.0  # a zero input must have a zero target
    with pytest.raises(ValueError, match="training input 3 is zero"):
        solve_relu_outliers(X.T @ X / N0, Y)


# ---------------------------------------------------------------------------------------------
# NNGP posterior on a rank-deficient K0


def _relu_gp_kernel(Ka, Kab, Kb):
    """Arc-cosine (ReLU NNGP) kernel E[relu(u) relu(v)], written out independently."""
    n = np.sqrt(np.outer(Ka, Kb))
    c = np.clip(Kab / n, -1.0, 1.0)
    th = np.arccos(c)
    return n * (np.sin(th) + (np.pi - th) * c) / (2 * np.pi)


@pytest.mark.parametrize("activation", ["relu", "erf"])
def test_nngp_on_rank_deficient_k0(activation):
    """K0 of rank 6 (N0 = 6 < P = 12) has a nonsingular NNGP kernel for these activations: the
    posterior interpolates on the training inputs, is the same for rotated zero-padded inputs,
    and (ReLU) equals the explicit formula k^T K^-1 Y with the arc-cosine kernel."""
    rng = np.random.default_rng(0)
    X, Xt, Y = rng.standard_normal((N0, P)), rng.standard_normal((N0, 5)), rng.standard_normal((P, 2))
    K0 = X.T @ X / N0
    assert np.linalg.matrix_rank(K0) == N0
    s = solve_nngp(K0, Y, activation=activation)
    np.testing.assert_allclose(s.mean, Y, rtol=0, atol=1e-8)
    assert np.max(np.abs(s.variance)) <= 1e-8
    g = nngp_posterior(K0, X.T @ Xt / N0, np.sum(Xt**2, axis=0) / N0, Y, activation=activation)
    assert np.all(np.isfinite(g.mean)) and np.all(np.isfinite(g.variance))
    Q, _ = np.linalg.qr(rng.standard_normal((20, 20)))
    X2, Xt2 = Q @ np.vstack([X, np.zeros((14, P))]), Q @ np.vstack([Xt, np.zeros((14, 5))])
    g2 = nngp_posterior(X2.T @ X2 / N0, X2.T @ Xt2 / N0, np.sum(Xt2**2, axis=0) / N0, Y,
                        activation=activation)
    np.testing.assert_allclose(g2.mean, g.mean, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(g2.variance, g.variance, rtol=1e-7, atol=1e-10)
    if activation == "relu":
        d, dt = np.diag(K0), np.sum(Xt**2, axis=0) / N0
        K = _relu_gp_kernel(d, K0, d)
        k = _relu_gp_kernel(d, X.T @ Xt / N0, dt)
        np.testing.assert_allclose(g.mean, k.T @ np.linalg.solve(K, Y), rtol=1e-8, atol=1e-10)
        var = dt / 2 - np.sum(k * np.linalg.solve(K, k), axis=0)  # E relu(u)^2 = K0(x,x)/2
        np.testing.assert_allclose(g.variance, np.maximum(var, 0), rtol=1e-6, atol=1e-10)


def test_nngp_singular_kernel_solved_on_its_range():
    """A linear NNGP kernel on a rank-deficient K0, and any activation with a duplicated input, is
    singular at noise = 0: the posterior is solved on the kernel's range (K^+) when Y lies in it,
    and refused with a ValueError asking for noise > 0 when it does not."""
    rng = np.random.default_rng(0)
    X, Xt = rng.standard_normal((N0, P)), rng.standard_normal((N0, 5))
    K0 = X.T @ X / N0
    with pytest.raises(ValueError, match="not in its range.*pass noise > 0"):
        solve_nngp(K0, rng.standard_normal((P, 2)), activation="linear")
    Y = K0 @ rng.standard_normal((P, 2))  # in the range of the linear kernel
    k0, kd = X.T @ Xt / N0, np.sum(Xt**2, axis=0) / N0
    lin = nngp_posterior(K0, k0, kd, Y, activation="linear")
    Kp = np.linalg.pinv(K0, rcond=1e-10)
    np.testing.assert_allclose(lin.mean, k0.T @ Kp @ Y, atol=1e-9)
    np.testing.assert_allclose(lin.variance, kd - np.einsum("pq,pr,rq->q", k0, Kp, k0), atol=1e-9)
    np.testing.assert_allclose(solve_nngp(K0, Y, activation="linear").mean, Y, atol=1e-9)
    assert np.all(np.isfinite(solve_nngp(K0, rng.standard_normal((P, 2)), activation="linear",
                                         noise=1e-2).mean))
    Yr = rng.standard_normal((P, 2))
    Xd, Yd = np.hstack([X, X[:, :1]]), np.vstack([Yr, Yr[:1]])
    for act in ("relu", "erf"):
        ref = nngp_posterior(K0, k0, kd, Yr, activation=act)
        dup = nngp_posterior(Xd.T @ Xd / N0, Xd.T @ Xt / N0, kd, Yd, activation=act)
        np.testing.assert_allclose(dup.mean, ref.mean, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(dup.variance, ref.variance, rtol=1e-6, atol=1e-8)
    Yd[-1] += 1.0  # the duplicate with another target: no noise-free interpolant
    with pytest.raises(ValueError, match="not in its range"):
        nngp_posterior(Xd.T @ Xd / N0, Xd.T @ Xt / N0, kd, Yd, activation="relu")


def test_infeasible_interpolation_is_reported():
    """Antiparallel pairs: relu(w.x) - relu(-w.x) = w.x, so with x5 = x1 + x3 the features obey
    sum_mu c_mu relu(z_mu) = 0 for every z in the range (c = (1, -1, 1, -1, -1, 1)); targets
    with c^T Y != 0 cannot be interpolated. Not caught by the parallel-input check; the solver
    reports an uncertified result that says so (and the feasible targets c^T Y = 0 are
    solved)."""
    x1, x3 = np.array([1.0, 0.2]), np.array([0.3, 1.0])
    X = np.stack([x1, -x1, x3, -x3, x1 + x3, -(x1 + x3)], axis=1)
    K0 = X.T @ X / 2
    ok = solve_relu_outliers(K0, np.ones((6, 1)), n_restarts=1)
    _check_solution_rank(ok, K0)
    bad = solve_relu_outliers(K0, np.eye(6)[:, :1], n_restarts=1, maxiter=6)
    assert not bad.converged
    assert "interpolation problem is probably infeasible" in bad.message
    assert bad.residuals["output"] > 1e-2


def _check_solution_rank(s, K0):
    assert s.converged, s.message
    np.testing.assert_allclose(s.mean_output(), s.Y, rtol=0, atol=1e-8)
    assert np.max(np.abs(s.zbar @ _null_basis(K0))) <= 1e-10
