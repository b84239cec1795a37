"""ReLU feature layer on a class-block kernel (notes §5.2 [RECON], class-block reduction
[OURS]): the shifted tilted integral, the bulk integral against Monte Carlo, the exact stability
margin against a brute-force search, the toy limit, and the outlier-only limit against the
general-data solver."""

import numpy as np
import pytest
from richlazy.theory import (
    block_stability_margin,
    class_block_kernel,
    solve_relu_block,
    solve_relu_outliers,
    solve_relu_toy,
    toy_class_targets,
)
from richlazy.theory.coding.relu._block_bulk import _BlockBulk, _psi_shifted
from scipy import integrate


def _block_kernel(counts, s, q):
    lab = np.repeat(np.arange(len(counts)), counts)
    return np.diag(np.asarray(s)[lab]) + np.asarray(q)[np.ix_(lab, lab)], lab


Q = np.array([[0.3, 0.1, 0.05], [0.1, 0.3, 0.1], [0.05, 0.1, 0.3]])
S = np.array([0.7, 0.7, 0.7])


@pytest.mark.parametrize("h,g,s", [(0.8, 0.3, 0.7), (-1.2, 0.5, 0.2), (0.0, -0.4, 1.0),
                                   (2.5, -1.0, 0.5)])
def test_psi_shifted_against_quadrature(h, g, s):
    """psi_s = log E exp(h relu(g + sqrt(s) xi)) and M = E[relu e^{h relu}]/E[e^{h relu}] by
    direct quadrature over xi."""
    def dens(x):
        return np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)
    opts = dict(points=[-g / np.sqrt(s)], epsabs=1e-13, epsrel=1e-12, limit=200)
    z = integrate.quad(lambda x: dens(x) * np.exp(h * max(g + np.sqrt(s) * x, 0.0)),
                       -40.0, 40.0, **opts)[0]
    r = integrate.quad(lambda x: dens(x) * max(g + np.sqrt(s) * x, 0.0)
                       * np.exp(h * max(g + np.sqrt(s) * x, 0.0)), -40.0, 40.0, **opts)[0]
    r2 = integrate.quad(lambda x: dens(x) * max(g + np.sqrt(s) * x, 0.0) ** 2
                        * np.exp(h * max(g + np.sqrt(s) * x, 0.0)), -40.0, 40.0, **opts)[0]
    psi, M = _psi_shifted(np.array(h), np.array(g), np.array(s))
    assert psi == pytest.approx(np.log(z), abs=1e-10)
    assert M == pytest.approx(r / z, rel=1e-9)
    psi2, M2, V = _psi_shifted(np.array(h), np.array(g), np.array(s), order=2)
    assert (psi2, M2) == (psi, M)
    assert V == pytest.approx(r2 / z - (r / z) ** 2, rel=1e-8)


@pytest.mark.parametrize("shifts", [0, 2])
def test_bulk_exponent_hessian_against_finite_differences(shifts):
    """The analytic Hessian of g(a) = -P_s|a|^2/2 + log Z(t a) (the rule's weighted covariance
    of the tilted means plus their variances) equals central differences of the analytic
    gradient: to 1e-6 on the plain rule; with two shifts of the field rule (the Hessian is that
    of the rule at its last shift) to the rule's own accuracy, 2e-4 (6e-5 measured)."""
    counts = np.array([12, 6, 6])
    bb = _BlockBulk(counts, S, Q, 24.0, 8)
    bb.shifts = shifts
    t = np.array([[1.1, -0.3], [-0.2, 0.9], [0.4, 0.5]])
    a = np.array([0.35, -0.2])
    hess = bb.exponent(a, t, 2)[3][0]
    eps = 1e-5
    E = eps * np.eye(2)
    grads = bb.exponent(np.vstack([a + E, a - E]), t)[1]
    fd = (grads[:2] - grads[2:]).T / (2 * eps)
    np.testing.assert_allclose(hess, fd, atol=1e-6 if shifts == 0 else 2e-4)
    assert np.max(np.abs(hess - fd)) < 1e-3 * np.max(np.abs(hess))


def test_block_bulk_log_z_against_monte_carlo():
    """log Z(h) = log E_{z~N(0,K)} exp(sum_mu h_mu relu(z_mu)) and the tilted class means of
    relu(z) for a class-block K (P = 7) by Gauss-Hermite over the class fields vs plain Monte
    Carlo in P dimensions (4e6 draws; agreement within 4 SE)."""
    counts = np.array([3, 2, 2])
    K, lab = _block_kernel(counts, S, Q)
    h = np.array([0.6, -0.4, 0.3])
    bulk = _BlockBulk(counts, S, Q, 1.0, 20)
    lz, M = bulk.log_z(h[None, :])
    rng = np.random.default_rng(11)
    Lk = np.linalg.cholesky(K)
    w_sum, wr_sum, w2_sum, n = 0.0, np.zeros(3), 0.0, 0
    for _ in range(8):
        z = rng.standard_normal((500_000, K.shape[0])) @ Lk.T
        r = np.maximum(z, 0.0)
        w = np.exp(r @ h[lab])
        w_sum += w.sum()
        w2_sum += (w * w).sum()
        wr_sum += np.array([(w[:, None] * r[:, lab == c]).mean(1).sum() for c in range(3)])
        n += z.shape[0]
    mean_w = w_sum / n
    se_w = np.sqrt(w2_sum / n - mean_w**2) / np.sqrt(n)
    assert abs(lz[0] - np.log(mean_w)) < 4 * se_w / mean_w
    np.testing.assert_allclose(M[0], wr_sum / w_sum, rtol=5e-3)


def test_stability_margin_is_the_maximum_over_class_constant_directions():
    """Exact face enumeration vs 200 000 random directions w in R^3 (any signs; each coordinate
    set to 0 with probability 1/3, so that the lower-dimensional faces, where a maximum with a
    silent class lies, are sampled too): no random w exceeds lambda*, and the best comes within
    1e-4 of it; for K = I it is the toy's margin."""
    counts = np.array([10, 6, 6])
    rng = np.random.default_rng(3)
    for _ in range(3):
        t = rng.standard_normal((3, 3)) * 0.2
        lam, w_star = block_stability_margin(t, counts, S, Q, sigma_a2=1 / 22)
        G = np.linalg.inv(np.diag(S / counts) + Q)
        W = rng.standard_normal((200_000, 3)) * (rng.random((200_000, 3)) > 1 / 3)
        W = W[np.any(W != 0, axis=1)]
        num = (counts * np.maximum(W, 0.0)) @ t
        ratio = np.sum(num * num, axis=1) / (22 * np.einsum("ni,ij,nj->n", W, G, W))
        assert ratio.max() <= lam * (1 + 1e-12)
        assert ratio.max() >= lam * (1 - 1e-4)
    from richlazy.theory import relu_stability_margin
    rho = counts / counts.sum()
    lam_b, _ = block_stability_margin(t, counts, np.ones(3), np.zeros((3, 3)),
                                      sigma_a2=1 / counts.sum())
    assert lam_b == pytest.approx(relu_stability_margin(t, rho)[0], rel=1e-12)


@pytest.mark.slow
def test_laplace_bulk_on_orthonormal_inputs_is_the_toy_theory():
    """K = I, sigma_a2 = 1/P: the class-block theory with the bulk at its maximum is exactly
    solve_relu_toy (t, a_0, M, outlier readouts and preactivations)."""
    P = 40
    rho = np.array([0.5, 0.25, 0.25])
    Yc = toy_class_targets(3, y_minus=-0.5)
    lab = np.repeat(np.arange(3), (rho * P).astype(int))
    sol = solve_relu_block(np.eye(P), Yc[lab], bulk="laplace")
    toy = solve_relu_toy(rho, Yc, P=P)
    assert sol.converged, sol.message
    np.testing.assert_allclose(sol.t, toy.t, atol=1e-8)
    np.testing.assert_allclose(sol.a0, toy.a0, atol=1e-8)
    np.testing.assert_allclose(sol.bulk_mean_activation, toy.bulk_mean_activation, atol=1e-8)
    cls = np.argmax(sol.outlier_class_preactivations, axis=1)
    assert sorted(cls.tolist()) == [0, 1, 2]
    for i, c in enumerate(cls):
        j = int(np.flatnonzero(toy.outlier_classes == c)[0])
        assert sol.outlier_class_preactivations[i, c] == pytest.approx(
            toy.outlier_preactivations[j], abs=1e-8)
        np.testing.assert_allclose(sol.outlier_readouts[i], toy.outlier_readouts[j], atol=1e-8)
    np.testing.assert_allclose(sol.bulk_readout_covariance, toy.bulk_readout_covariance,
                               rtol=1e-5)
    grid = np.linspace(-0.3, 0.5, 9)
    np.testing.assert_allclose(sol.bulk_readout_density(grid, 0), toy.bulk_readout_density(grid, 0),
                               rtol=1e-5)


@pytest.mark.slow
def test_outlier_only_limit_matches_the_general_data_solver():
    """bulk="none" on an exact class-block K (P = 24, T = 0.05, where t is unique) against
    solve_relu_outliers on the full P x P problem: the same t per class, outlier output and
    outliers; so the optimal outliers are class-constant there."""
    counts = np.array([12, 6, 6])
    K, lab = _block_kernel(counts, S, Q)
    Yc = toy_class_targets(3, y_minus=-0.5)
    Y = Yc[lab]
    blk = solve_relu_block(K, Y, bulk="none", T=0.05)
    gen = solve_relu_outliers(K, Y, T=0.05, seed=0)
    assert blk.converged, blk.message
    assert gen.converged, gen.message
    t_gen = np.stack([gen.t[lab == c].mean(axis=0) for c in range(3)])
    np.testing.assert_allclose(blk.t, t_gen, atol=2e-6)
    out_gen = np.stack([gen.mean_output()[lab == c].mean(axis=0) for c in range(3)])
    np.testing.assert_allclose(blk.outlier_output(), out_gen, atol=2e-6)
    # the same outliers: per outlier the class values of zbar and P |abar|^2 (= zbar K^-1 zbar)
    key = np.argmax(blk.outlier_class_preactivations, axis=1)
    gen_cls = [np.stack([z[lab == c].mean() for c in range(3)]) for z in gen.zbar]
    assert gen.n_outliers == blk.n_outliers == 3
    for zc, a in zip(gen_cls, gen.abar, strict=True):
        i = int(np.flatnonzero(key == np.argmax(zc))[0])
        np.testing.assert_allclose(blk.outlier_class_preactivations[i], zc, atol=2e-6)
        assert 24 * blk.outlier_readouts[i] @ blk.outlier_readouts[i] == pytest.approx(
            24 * a @ a, rel=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("bulk", ["laplace", "readout_law"])
def test_bulk_on_correlated_classes_solves_its_kkt_system(bulk):
    """Correlated classes (q above), P = 24, T = 0.01: converged, the bulk at the global
    maximum, lambda* = 1 with one single-class outlier per class, and the mean output equals
    Y - T t. With the whole readout law (wide at P = 24: sd ~0.35) the bulk is more active than
    at its maximum, E[M_c(t a)] > M_c(t a_0), and carries part of the targets; but 7 nodes per
    readout do not resolve so wide a law (1.5x the nodes change the bulk output by ~0.03), and
    the result says so instead of claiming convergence."""
    counts = np.array([12, 6, 6])
    K, lab = _block_kernel(counts, S, Q)
    Yc = toy_class_targets(3, y_minus=-0.5)
    sol = solve_relu_block(K, Yc[lab], bulk=bulk, T=0.01, quad_nodes=8)
    if bulk == "laplace":
        assert sol.converged, sol.message
    else:
        assert not sol.converged
        assert "quadrature error" in sol.message and "readout_nodes" in sol.message
        assert sol.quadrature_error > 1e-2
        assert sol.residual < 1e-9
    assert sol.stability_margin == pytest.approx(1.0, abs=1e-8)
    assert sol.bulk_gap < 0
    codes = sol.outlier_class_preactivations > 0
    assert sorted(np.argmax(codes, axis=1).tolist()) == [0, 1, 2]
    assert np.all(codes.sum(axis=1) == 1)
    np.testing.assert_allclose(sol.mean_output(), Yc - 0.01 * sol.t, atol=1e-8)
    if bulk == "readout_law":
        bb = _BlockBulk(sol.counts, sol.s, sol.q, 1 / sol.sigma_a2, 8)
        a_max = bb.maxima(sol.t)[0][0]
        M_at_max = bb.exponent(a_max, sol.t)[2][0]
        assert np.all(sol.bulk_mean_activation > M_at_max + 0.05)
        assert np.all(np.diag(sol.bulk_output) > 0.02)


@pytest.mark.parametrize("shifts", [0, 2])
def test_readout_law_output_jacobian_against_finite_differences(shifts):
    """dB/dt of the readout law on a fixed rule (the KKT Newton's bulk block) equals central
    differences of B: to 1e-6 relative on the plain rule (measured 1e-9), and with two field
    shifts, which the analytic form holds fixed, to 1e-4 relative (measured 9e-9)."""
    bb = _BlockBulk(np.array([12, 6, 6]), S, Q, 24.0, 8)
    bb.shifts = shifts
    t = np.array([[1.1, -0.3], [-0.2, 0.9], [0.4, 0.5]])
    a0 = bb.maxima(t)[0][0]
    chol = np.linalg.cholesky(np.linalg.inv(-bb.hessian(a0, t)))
    dB = bb.readout_law(t, a0, chol, 8, jac=True)["dB"]
    eps, fd = 1e-6, np.empty((3, 2, 3, 2))
    for c in range(3):
        for j in range(2):
            e = np.zeros((3, 2))
            e[c, j] = eps
            fd[:, :, c, j] = (bb.readout_law(t + e, a0, chol, 8)["B"]
                              - bb.readout_law(t - e, a0, chol, 8)["B"]) / (2 * eps)
    rel = np.max(np.abs(dB - fd)) / np.max(np.abs(fd))
    assert rel < (1e-6 if shifts == 0 else 1e-4)


def test_bulk_ascent_reaches_the_maximum_and_rejects_non_finite_starts():
    """The batched Newton ascent of the bulk exponent: from 0 it stops at a maximum (gradient
    below 1e-10, negative-definite Hessian, g lower at the four neighbours 1e-4 away);
    rows whose exponent is not finite (an overflowing start, a NaN) are reported as no maximum
    instead of stopping the batch."""
    bb = _BlockBulk(np.array([12, 6, 6]), S, Q, 24.0, 8)
    t = np.array([[1.1, -0.3], [-0.2, 0.9], [0.4, 0.5]])
    with np.errstate(all="ignore"):
        A, ok, _val, _M = bb._ascend(np.array([[0.0, 0.0], [1e200, 1e200], [np.nan, 0.0]]), t)
    assert ok.tolist() == [True, False, False]
    val, grad, _M, hess = bb.exponent(A[0], t, 2)
    assert np.max(np.abs(grad)) < 1e-10 and np.linalg.eigvalsh(hess[0]).max() < 0
    e = 1e-4
    around = [bb.exponent(A[0] + d, t)[0][0] for d in (e * np.eye(2)).tolist() + (-e * np.eye(2)).tolist()]
    assert max(around) < val[0]


def test_shifted_field_rule_resolves_large_tilts():
    """At a large tilt the class-field integrand sits many prior widths out (about q n h): an
    8-node rule on the prior is off, the same rule shifted twice onto the tilted mean (as the
    readout-law stage uses it) agrees with a 40-node rule on the prior to 1e-7."""
    counts = np.array([12, 6, 6])
    H = np.array([[1.2, -0.4, 0.8], [0.3, 0.2, -0.1]])
    ref = _BlockBulk(counts, S, Q, 1.0, 40).log_z(H)
    plain = _BlockBulk(counts, S, Q, 1.0, 8)
    shifted = _BlockBulk(counts, S, Q, 1.0, 8)
    shifted.shifts = 2
    lz, M = shifted.log_z(H)
    np.testing.assert_allclose(lz, ref[0], atol=1e-7)
    np.testing.assert_allclose(M, ref[1], atol=1e-7)
    assert np.max(np.abs(plain.log_z(H)[1][0] - ref[1][0])) > 1e-3


def _law_problem(scale, correlated=True):
    """k = m = 2 class-block bulk with counts and P_s multiplied by ``scale`` and a fixed t
    (for q = 0, ``correlated=False``, the exponent is then scale g_1: the law narrows as
    1/sqrt(scale) and the stability margin stays)."""
    counts = np.array([6, 4]) * scale
    q = np.array([[0.25, 0.05], [0.05, 0.2]]) if correlated else np.zeros((2, 2))
    t = np.array([[0.35, -0.2], [-0.15, 0.45]])
    return _BlockBulk(counts, np.array([0.8, 0.7]), q, 5.0 * scale, 10), t


def _laplace_rule(bb, t):
    a0 = bb.maxima(t)[0][0]
    return a0, np.linalg.cholesky(np.linalg.inv(-bb.hessian(a0, t)))


def test_readout_law_against_a_brute_force_grid():
    """The law's Gauss-Hermite moments (W, E[a], Cov a, E[M_c], E[M_c a]) on a wide law
    (P_s = 5, sd ~0.3) against a 241 x 241 trapezoid grid over +-9 Laplace widths."""
    bb, t = _law_problem(1)
    a0, L = _laplace_rule(bb, t)
    law = bb.readout_law(t, a0, L, 16)
    sd = np.sqrt(np.diag(L @ L.T))
    axes = [np.linspace(a0[r] - 9 * sd[r], a0[r] + 9 * sd[r], 241) for r in range(2)]
    A = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 2)
    val, _, M = bb.exponent(A, t)
    w = np.exp(val - val.max())
    cell = (axes[0][1] - axes[0][0]) * (axes[1][1] - axes[1][0])
    W = np.log(w.sum() * cell) + val.max()
    w = w / w.sum()
    mean = w @ A
    assert law["W"] == pytest.approx(W, abs=1e-6)
    np.testing.assert_allclose(law["mean"], mean, atol=1e-6)
    np.testing.assert_allclose(law["cov"], ((A - mean) * w[:, None]).T @ (A - mean), atol=1e-6)
    np.testing.assert_allclose(law["M"], w @ M, atol=1e-6)
    np.testing.assert_allclose(law["B"], np.einsum("n,nk,nm->km", w, M, A), atol=1e-6)


def test_readout_law_value_has_the_bulk_output_as_gradient():
    """dW/dt_c = n_c E[M_c(t a) a] on a fixed rule (the KKT output constraint uses it as the
    gradient of the convex bulk value): central differences agree to 1e-7."""
    bb, t = _law_problem(1)
    a0, L = _laplace_rule(bb, t)
    law = bb.readout_law(t, a0, L, 8)
    eps = 1e-5
    for c in range(2):
        for r in range(2):
            e = np.zeros_like(t)
            e[c, r] = eps
            dW = (bb.readout_law(t + e, a0, L, 8)["W"] - bb.readout_law(t - e, a0, L, 8)["W"])
            assert dW / (2 * eps) == pytest.approx(bb.counts[c] * law["B"][c, r], abs=1e-7)


def test_readout_law_tends_to_the_laplace_bulk_as_P_s_grows():
    """With counts and P_s scaled by lambda (q = 0) the exponent is lambda g_1, so the law's
    mean and mean activation approach the maximiser a_0 and M_c(t a_0) as 1/lambda: the
    deviations shrink by 4 +- 1 per factor 4."""
    dev = []
    for scale in (1, 4, 16):
        bb, t = _law_problem(scale, correlated=False)
        assert len(bb.maxima(t)) == 1
        a0, L = _laplace_rule(bb, t)
        law = bb.readout_law(t, a0, L, 10)
        M0 = bb.exponent(a0, t)[2][0]
        dev.append([np.max(np.abs(law["mean"] - a0)), np.max(np.abs(law["M"] - M0))])
    dev = np.array(dev)
    ratios = dev[:-1] / dev[1:]
    assert np.all((ratios > 3.0) & (ratios < 5.0)), ratios


def test_class_block_kernel_recovers_the_blocks_and_rejects_bad_input():
    counts = np.array([4, 3, 3])
    K, lab = _block_kernel(counts, S, Q)
    n, s, q = class_block_kernel(K, lab)
    assert n.tolist() == [4, 3, 3]
    np.testing.assert_allclose(s, S, atol=1e-14)
    np.testing.assert_allclose(q, Q, atol=1e-14)
    with pytest.raises(ValueError, match="at least 2 inputs"):
        class_block_kernel(K[:9, :9], np.array([0, 0, 0, 0, 1, 1, 1, 2, 3]))
    with pytest.raises(ValueError, match="labels"):
        class_block_kernel(K, lab[:-1])
    Y = toy_class_targets(3)[lab]
    with pytest.raises(ValueError, match="bulk must be one of"):
        solve_relu_block(K, Y, bulk="exact")
    Y2 = Y.copy()
    Y2[0, 1] = 0.3
    with pytest.raises(ValueError, match="same for every input of a class"):
        solve_relu_block(K, Y2)
    with pytest.raises(ValueError, match="sigma_a2"):
        solve_relu_block(K, Y, sigma_a2=-1.0)


def test_K_is_a_deprecated_keyword_alias_of_K0():
    """The input kernel is ``K0`` as in every other solver; ``K=`` warns naming ``K0`` and gives
    the same solution; passing both raises TypeError."""
    counts = np.array([4, 3, 3])
    K, lab = _block_kernel(counts, S, Q)
    Y = toy_class_targets(3, y_minus=-0.5)[lab]
    new = solve_relu_block(K0=K, Y=Y, bulk="none", T=0.05)
    positional = solve_relu_block(K, Y, bulk="none", T=0.05)
    with pytest.warns(DeprecationWarning, match=r"K= is deprecated.*use K0=") as rec:
        old = solve_relu_block(K=K, Y=Y, bulk="none", T=0.05)
    assert rec[0].filename == __file__  # the warning points at the caller
    for s in (old, positional):
        np.testing.assert_array_equal(s.t, new.t)
        np.testing.assert_array_equal(s.outlier_readouts, new.outlier_readouts)
        assert s.status == new.status
    with pytest.raises(TypeError, match="pass K0= only"):
        solve_relu_block(K, Y, K=K)
    with pytest.raises(ValueError, match="K0 must be"):
        solve_relu_block(-np.eye(10), Y)
