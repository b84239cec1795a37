"""Tests for the exact two-layer erf LDT (seed 002 App. B.3) and the adaptive-kernel closure
(App. G): closed forms vs quadrature, numba kernels vs mpmath, two independent root finders,
Legendre duality, GP limits and fitted scaling exponents."""

import math

import mpmath
import numpy as np
import pytest
from richlazy.theory.ldt import (
    ErfModel,
    ak_sample_complexity,
    ak_two_layer_erf,
    chernoff_energy,
    erf_derivative_gaussian_mean,
    erf_hermite_coefficient_sq,
    erf_hermite_overlap,
    ldt_log_mgf,
    ldt_two_layer_erf,
    log_z1_reference,
    outlier_threshold,
    overlap_potential,
    tilted_overlap_density,
)
from scipy import special
from scipy.special import erf


# ------------------------------------------------------------------ closed forms (eq. 35)
@pytest.mark.parametrize("n", range(0, 8))
@pytest.mark.parametrize("s2", [0.3, 1.7])
def test_erf_derivative_mean_vs_mpmath(n, s2):
    # Stein: E[erf^{(n)}(u)] = s^-n E[erf(u) He_n(u/s)], u ~ N(0, s^2) -- no derivatives taken
    s = mpmath.sqrt(s2)
    with mpmath.workdps(25):

        def f(z):
            return mpmath.erf(s * z) * mpmath.hermite(n, z / mpmath.sqrt(2)) * mpmath.npdf(z)

        # probabilists' He_n(z) = 2^{-n/2} H_n(z / sqrt 2)
        ref = mpmath.quad(f, [-mpmath.inf, 0, mpmath.inf]) * 2 ** (-mpmath.mpf(n) / 2) / s**n
    assert float(erf_derivative_gaussian_mean(n, s2)) == pytest.approx(float(ref), abs=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_erf_hermite_overlap_vs_2d_gauss_hermite(n):
    # u = w.x, v = w*.x jointly Gaussian with cov [[|w|^2, w_par], [w_par, 1]]
    w_par, w_norm2 = 0.6, 1.1
    z, wz = np.polynomial.hermite_e.hermegauss(120)
    wz = wz / math.sqrt(2 * math.pi)
    Z1, Z2 = np.meshgrid(z, z, indexing="ij")
    W = np.outer(wz, wz)
    v = Z1
    u = w_par * Z1 + math.sqrt(w_norm2 - w_par**2) * Z2
    he = np.polynomial.hermite_e.hermeval(v, [0] * n + [1])
    ref = np.sum(W * erf(u) * he)
    assert float(erf_hermite_overlap(n, w_par, w_norm2)) == pytest.approx(ref, abs=1e-10)


def test_overlap_potential_is_squared_normalised_overlap():
    d, sw2 = 50, 1.3
    wp = np.linspace(-2, 2, 9)
    wn2 = wp**2 + sw2 * (d - 1) / d
    G = erf_hermite_overlap(3, wp, wn2) / math.sqrt(6)
    np.testing.assert_allclose(overlap_potential(wp, d, sigma_w2=sw2), G**2, rtol=1e-13)
    assert erf_hermite_coefficient_sq(3) == pytest.approx(8 / (3 * math.pi))


# ------------------------------------------------------------------ kernels vs mpmath (eq. 39)
@pytest.mark.parametrize(
    ("d", "tau"), [(40, 0.0), (40, 300.0), (400, 50.0), (400, 18882.0), (400, 60000.0)]
)
def test_log_z1_kernel_vs_mpmath(d, tau):
    pr = ErfModel(d, 10)
    logz, mean_g, _ = pr.moments(tau)
    ref_logz, ref_g = log_z1_reference(tau, d)
    assert logz == pytest.approx(ref_logz, rel=1e-10, abs=1e-30)
    assert mean_g == pytest.approx(ref_g, rel=1e-10)


def test_tilted_density_normalised_and_consistent():
    d, N = 100, 100
    r = ldt_two_layer_erf(1.0, d, N)
    w = np.linspace(-3, 3, 200_001)
    p = tilted_overlap_density(w, float(r.t_star), d, N)
    assert np.trapezoid(p, w) == pytest.approx(1.0, rel=1e-8)
    g = overlap_potential(w, d)
    assert np.trapezoid(g * p, w) == pytest.approx(float(r.mean_g), rel=1e-7)
    thr = outlier_threshold(d)
    tail = np.trapezoid(np.where(np.abs(w) > thr, p, 0.0), w)
    assert tail == pytest.approx(float(r.outlier_fraction), rel=1e-3)
    # t = 0: the prior N(0, sigma_w^2/d)
    p0 = tilted_overlap_density(w[::1000], 0.0, d, N)
    np.testing.assert_allclose(
        p0, np.exp(-d * w[::1000] ** 2 / 2) * math.sqrt(d / (2 * math.pi)), rtol=1e-12
    )


# ------------------------------------------------------------------ saddle point and E(alpha)
def test_saddle_point_equals_generic_legendre_transform():
    d, N = 200, 300
    alpha = np.array([0.2, 0.8, 1.5])
    r = ldt_two_layer_erf(alpha, d, N, sigma_w2=1.3, sigma_a2=0.8)
    assert r.converged
    c = chernoff_energy(
        alpha,
        lambda t: ldt_log_mgf(t, d, N, sigma_w2=1.3, sigma_a2=0.8)[0],
        cgf_prime=lambda t: ldt_log_mgf(t, d, N, sigma_w2=1.3, sigma_a2=0.8)[1],
        t_scale=10.0,
    )
    np.testing.assert_allclose(r.energy, c.energy, rtol=1e-9)
    np.testing.assert_allclose(r.t_star, c.t_star, rtol=1e-6)


def test_energy_legendre_duality_dE_dalpha_equals_t_star():
    d, N, a, h = 300, 300, 0.7, 1e-4
    r = ldt_two_layer_erf(np.array([a - h, a, a + h]), d, N)
    dE = (r.energy[2] - r.energy[0]) / (2 * h)
    assert dE == pytest.approx(r.t_star[1], rel=1e-6)
    assert np.all(np.diff(r.energy) > 0)


def test_p_star_scales_with_kappa_over_k():
    r1 = ldt_two_layer_erf(1.0, 100, 100, kappa=1.0, k=2.0)
    r2 = ldt_two_layer_erf(1.0, 100, 100, kappa=0.5, k=1.0)
    assert float(r1.P_star) == pytest.approx(float(r1.energy), rel=1e-14)
    assert float(r2.P_star) == pytest.approx(float(r1.P_star), rel=1e-14)


def test_gp_limit_energy_is_gaussian_rate():
    # N >> d^5: no neuron deviates, A_f is Gaussian with variance V0 and E = alpha^2/(2 V0)
    d, N = 20, 10**13
    pr = ErfModel(d, N)
    V0 = pr.moments(0.0)[1]
    r = ldt_two_layer_erf(np.array([0.5, 1.0]), d, N)
    np.testing.assert_allclose(r.energy, np.array([0.25, 1.0]) / (2 * V0), rtol=2e-3)


def test_gp_limit_variance_scales_as_d_minus_3():
    # V0 = E_prior[g] ∝ E[w^6] ∝ d^-3 (lazy eigenvalue of He_3); a_y ∝ d^3 (spec 5.1 GP row)
    ds = np.array([1000, 2000, 4000])
    V0 = [ErfModel(int(d), 1).moments(0.0)[1] for d in ds]
    assert np.polyfit(np.log(ds), np.log(V0), 1)[0] == pytest.approx(-3.0, abs=0.01)
    # closed form: c^2 15 (sigma^2/d)^3 / (1 + 2 sigma^2 (d-1)/d)^3 to leading order in 1/d
    d = 4000
    lead = 8 / (3 * math.pi) * 15 / d**3 / (1 + 2 * (d - 1) / d) ** 3
    assert V0[-1] == pytest.approx(
        lead, rel=3e-3
    )  # next order: O(w^8) term, relative 2*21/(15*3 d)


# ------------------------------------------------------------------ adaptive kernel (App. G)
def test_ak_reduces_to_gp_learning_curve_without_tilt():
    d, N, kappa = 20, 10**14, 0.5
    pr = ErfModel(d, N)
    V0 = pr.moments(0.0)[1]
    P = np.array([1e3, 1e4, 1e5])
    r = ak_two_layer_erf(P, d, N, kappa=kappa)
    np.testing.assert_allclose(r.mean_alignment, V0 / (V0 + kappa / P), rtol=1e-4)


def test_ak_and_ldt_share_the_tilt():
    d, N, kappa = 60, 60, 0.7
    P = np.array([800.0, 3000.0, 20000.0])
    r = ak_two_layer_erf(P, d, N, kappa=kappa)
    assert r.converged
    assert np.all(np.diff(r.mean_alignment) > 0)
    # closure: t = (P/kappa)(1 - A)
    np.testing.assert_allclose(r.t, P / kappa * (1 - r.mean_alignment), rtol=1e-9)
    # LDT saddle point at alpha = A reproduces the same t, hence the same P
    np.testing.assert_allclose(
        ak_sample_complexity(r.mean_alignment, d, N, kappa=kappa), P, rtol=1e-7
    )


# ------------------------------------------------------------------ input validation
@pytest.mark.parametrize(
    ("call", "exc", "msg"),
    [
        (lambda: ldt_two_layer_erf(0.0, 10, 10), ValueError, "alpha must be > 0"),
        (lambda: ldt_two_layer_erf(1.0, 1, 10), ValueError, "d must be >= 2"),
        (lambda: ldt_two_layer_erf(1.0, 10, 0), ValueError, "N must be >= 1"),
        (lambda: ldt_two_layer_erf(1.0, 10.5, 10), TypeError, "d must be an integer"),
        (lambda: ldt_two_layer_erf(1.0, 10, 10, chi="huge"), ValueError, "chi must be a positive"),
        (lambda: ldt_two_layer_erf(1.0, 10, 10, degree=2), ValueError, "degree must be odd"),
        (lambda: ldt_two_layer_erf(1.0, 10, 10, sigma_a2=0.0), ValueError, "sigma_a2 must be > 0"),
        (
            lambda: ldt_two_layer_erf(1.0, 10, 10, points_per_width=1),
            ValueError,
            "points_per_width",
        ),
        (lambda: ldt_two_layer_erf(1.0, 10, 10, k=-1.0), ValueError, "k must be > 0"),
        (lambda: erf_hermite_overlap(3, 1.0, 0.5), ValueError, "w_norm2 must be >= w_par"),
        (lambda: erf_hermite_overlap(-1, 1.0, 1.0), ValueError, "n must be >= 0"),
        (lambda: erf_derivative_gaussian_mean(1, -1.0), ValueError, "s2 must be >= 0"),
        (lambda: tilted_overlap_density(0.0, -1.0, 10, 10), ValueError, "t must be >= 0"),
        (lambda: log_z1_reference(-1.0, 10), ValueError, "tau must be"),
        (lambda: ak_two_layer_erf(0.0, 10, 10), ValueError, "P must be > 0"),
        (lambda: ak_sample_complexity(1.0, 10, 10), ValueError, "alpha must lie in"),
        (lambda: outlier_threshold(10, n_sigma=0), ValueError, "n_sigma must be > 0"),
    ],
)
def test_input_validation(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()


# ------------------------------------------------------------------ exact |w_perp|^2 (perp="exact")
def _gl_reference(tau, d, *, sigma_w2=1.0, threshold=None, n_panel=80, q=20):
    """Independent reference for the exact per-neuron tilt: ``(log Z_1, E_t[g])`` and, with a
    threshold, ``(Pr_t(w_par > c), E_t[r | w_par > c])``.  Tensor Gauss-Legendre panels in the
    *linear* variables ``(w_par, v = sqrt(r))`` (the kernel under test uses log r and the
    trapezoid rule) on a box located by a brute-force scan; Gaussian and scaled-chi^2 densities
    from their textbook forms."""
    k = d - 1
    c2 = 8 / (3 * math.pi)

    def logp(W, V):
        x = d * V * V / sigma_w2
        lw = math.log(2) + 0.5 * math.log(d / (2 * math.pi * sigma_w2)) - 0.5 * d * W * W / sigma_w2
        lx = (k / 2 - 1) * np.log(x) - x / 2 - (k / 2) * math.log(2) - special.gammaln(k / 2)
        return lw + lx + math.log(d / sigma_w2) + np.log(2 * V)

    def g(W, V):
        return c2 * W**6 / (1 + 2 * W * W + 2 * V * V) ** 3

    ws = np.linspace(0, 4.0, 1601)
    vs = np.linspace(1e-6, math.sqrt(sigma_w2 * (k + 60 * math.sqrt(2 * k) + 200) / d), 1601)
    W, V = np.meshgrid(ws, vs, indexing="ij")
    E = logp(W, V) + tau * g(W, V)
    mx = E.max()
    keep = E > mx - 60
    whi = min(4.0, ws[keep.any(1)].max() + 0.05)
    vlo = max(0.0, vs[keep.any(0)].min() - 0.05)
    vhi = vs[keep.any(0)].max() + 0.05
    x, wx = np.polynomial.legendre.leggauss(q)

    def panels(lo, hi, n):
        e = np.linspace(lo, hi, n + 1)
        h = np.diff(e)
        return (e[:-1, None] + h[:, None] * (x + 1) / 2).ravel(), (h[:, None] * wx / 2).ravel()

    if threshold is None:
        wn, ww = panels(0.0, whi, n_panel)
        tail = np.zeros_like(wn)
    else:
        a, b = panels(0.0, threshold, n_panel // 2), panels(threshold, whi, n_panel // 2)
        wn, ww = np.concatenate([a[0], b[0]]), np.concatenate([a[1], b[1]])
        tail = np.concatenate([np.zeros_like(a[0]), b[1]])
    vn, vw = panels(vlo, vhi, n_panel)
    W, V = np.meshgrid(wn, vn, indexing="ij")
    f = np.exp(logp(W, V) + tau * g(W, V) - mx) * vw[None, :]
    z = ww @ f.sum(1)
    out = [mx + math.log(z), float(ww @ (f * g(W, V)).sum(1)) / z]
    if threshold is not None:
        tz = tail @ f.sum(1)
        out += [tz / z, float(tail @ (f * V * V).sum(1)) / tz]
    return out


@pytest.mark.parametrize(
    ("d", "sw2", "tau"),
    [(6, 1.0, 5.0), (12, 1.0, 443.0), (40, 1.0, 1500.0), (40, 1.7, 900.0), (100, 1.0, 3000.0),
     (400, 1.0, 12742.8)],
)
def test_exact_kernel_vs_independent_quadrature(d, sw2, tau):
    pr = ErfModel(d, d, sigma_w2=sw2, perp="exact")
    logz, mean_g, _ = pr.moments(tau)
    ref = _gl_reference(tau, d, sigma_w2=sw2)
    assert logz == pytest.approx(ref[0], rel=1e-10, abs=1e-12)
    assert mean_g == pytest.approx(ref[1], rel=1e-10)
    thr = outlier_threshold(d, sigma_w2=sw2)
    frac, r_out = pr.tail(tau, thr)
    ref = _gl_reference(tau, d, sigma_w2=sw2, threshold=thr)
    assert frac == pytest.approx(ref[2], rel=1e-10)
    assert r_out == pytest.approx(ref[3], rel=1e-10)


def test_exact_kernel_converged_and_mean_is_derivative():
    d, tau, h = 10, 120.0, 1e-3
    pr = ErfModel(d, d, perp="exact")
    logz, mean_g, var_g = pr.moments(tau)
    fd = (pr.moments(tau + h)[0] - pr.moments(tau - h)[0]) / (2 * h)
    assert mean_g == pytest.approx(fd, rel=1e-7)
    fd2 = (pr.moments(tau + h)[1] - pr.moments(tau - h)[1]) / (2 * h)
    assert var_g == pytest.approx(fd2, rel=1e-5)  # d E_t[g]/d tau = Var_t[g]
    fine = ErfModel(d, d, points_per_width=16.0, perp="exact")
    assert fine.moments(tau)[0] == pytest.approx(logz, rel=1e-12)
    assert fine.tail(tau, 0.9) == pytest.approx(pr.tail(tau, 0.9), rel=1e-12)


def test_exact_untilted_is_prior():
    # tau = 0: log Z_1 = 0; outliers follow the prior: erfc(3/sqrt 2), and since w_par and
    # |w_perp|^2 are independent, their mean |w_perp|^2 is sigma_w^2 (d-1)/d
    d, sw2 = 30, 1.3
    pr = ErfModel(d, d, sigma_w2=sw2, perp="exact")
    assert pr.moments(0.0)[0] == 0.0
    frac, r_out = pr.tail(0.0, outlier_threshold(d, sigma_w2=sw2))
    assert frac == pytest.approx(math.erfc(3 / math.sqrt(2)), rel=1e-12)
    assert r_out == pytest.approx(sw2 * (d - 1) / d, rel=1e-12)


def test_exact_weak_tilt_prior_mean_of_g_vs_monte_carlo():
    # log Z_1(tau) = tau E_prior[G^2] + O(tau^2); E_prior[G^2] by Monte Carlo of full vectors
    d, tau = 9, 1e-4
    rng = np.random.default_rng(3)
    w = rng.standard_normal((400_000, d)) / math.sqrt(d)
    g2 = (erf_hermite_overlap(3, w[:, 0], (w * w).sum(1)) / math.sqrt(6)) ** 2
    se = g2.std(ddof=1) / math.sqrt(g2.size)
    lam, _ = ldt_log_mgf(math.sqrt(2 * d * tau), d, d, perp="exact")
    assert abs(float(lam) / d / tau - g2.mean()) < 4 * se


def test_exact_log_z1_vs_monte_carlo_at_strong_tilt():
    # plain Monte Carlo of log E exp(tau G(w)^2) over full prior vectors w ~ N(0, I/d); the
    # frozen eq. (36) value is far off at these tilts
    d = 6
    rng = np.random.default_rng(1)
    w = rng.standard_normal((400_000, d)) / math.sqrt(d)
    g2 = (erf_hermite_overlap(3, w[:, 0], (w * w).sum(1)) / math.sqrt(6)) ** 2
    pr = ErfModel(d, d, perp="exact")
    fr = ErfModel(d, d)
    for tau in (20.0, 80.0):
        x = np.exp(tau * g2)
        mc, se = math.log(x.mean()), x.std(ddof=1) / math.sqrt(x.size) / x.mean()
        assert abs(pr.moments(tau)[0] - mc) < 4 * se
        if tau == 80.0:
            assert fr.moments(tau)[0] < mc - 10 * se


def test_exact_weak_fluctuation_correction_is_16_over_3d():
    # GP regime: E_prior[g] exact / frozen - 1 -> 24 Var(r)/(1 + 2 E r)^2 = 16/(3d) (delta
    # method on (1 + 2 w^2 + 2r)^{-3} with Var r = 2 (d-1)/d^2, w^2 = O(1/d)); next order O(1/d^2)
    for d in (1000, 4000):
        ex = ErfModel(d, 1, perp="exact").moments(0.0)[1]
        fr = ErfModel(d, 1).moments(0.0)[1]
        assert d * (ex / fr - 1) == pytest.approx(16 / 3, rel=60 / d)


def test_exact_saddle_point_equals_generic_legendre_transform():
    d, N = 30, 40
    kw = dict(sigma_w2=1.3, sigma_a2=0.8, chi="mean-field", perp="exact")
    alpha = np.array([0.2, 0.6])
    r = ldt_two_layer_erf(alpha, d, N, **kw)
    assert r.converged and r.perp == "exact"
    c = chernoff_energy(
        alpha,
        lambda t: ldt_log_mgf(t, d, N, **kw)[0],
        cgf_prime=lambda t: ldt_log_mgf(t, d, N, **kw)[1],
        t_scale=10.0,
    )
    np.testing.assert_allclose(r.energy, c.energy, rtol=1e-9)
    np.testing.assert_allclose(r.t_star, c.t_star, rtol=1e-6)
    # result fields: alpha = t sigma_a^2 E_t[g]/chi, P_* = (2 kappa/k) E, excess outliers
    np.testing.assert_allclose(r.t_star * 0.8 / N * r.mean_g, alpha, rtol=1e-9)
    np.testing.assert_allclose(r.P_star, 2 * r.kappa / r.k * r.energy, rtol=1e-14)
    np.testing.assert_allclose(
        r.n_specialists, N * (r.outlier_fraction - math.erfc(3 / math.sqrt(2))), rtol=1e-12
    )


def test_exact_energy_legendre_duality_and_frozen_fields():
    d, N, a, h = 48, 48, 0.3, 1e-4
    r = ldt_two_layer_erf(np.array([a - h, a, a + h]), d, N, perp="exact")
    assert (r.energy[2] - r.energy[0]) / (2 * h) == pytest.approx(r.t_star[1], rel=1e-6)
    fr = ldt_two_layer_erf(a, d, N)
    assert fr.perp == "frozen"
    assert float(fr.outlier_perp_norm2) == pytest.approx((d - 1) / d, rel=1e-14)
    # eq. (36) is not a bound on the exact rate: it is larger (r fluctuations lower the cost)
    assert float(fr.energy) > 1.1 * float(r.energy[1])


def test_exact_tilted_density_marginal_consistent():
    d, N = 40, 40
    r = ldt_two_layer_erf(0.3, d, N, perp="exact")
    t = float(r.t_star)
    thr = outlier_threshold(d)
    x, wx = np.polynomial.legendre.leggauss(20)

    def integrate(lo, hi, n=60):
        e = np.linspace(lo, hi, n + 1)
        nodes = (e[:-1, None] + np.diff(e)[:, None] * (x + 1) / 2).ravel()
        wts = (np.diff(e)[:, None] * wx / 2).ravel()
        return wts @ tilted_overlap_density(nodes, t, d, N, perp="exact")

    assert 2 * (integrate(0.0, thr) + integrate(thr, 4.0)) == pytest.approx(1.0, rel=1e-10)
    assert 2 * integrate(thr, 4.0) == pytest.approx(float(r.outlier_fraction), rel=1e-9)
    w = np.linspace(-1, 1, 41)
    np.testing.assert_allclose(
        tilted_overlap_density(w, 0.0, d, N, perp="exact"),
        np.exp(-d * w**2 / 2) * math.sqrt(d / (2 * math.pi)),
        rtol=1e-12,
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda: ldt_two_layer_erf(1.0, 10, 10, perp="fluct"),
        lambda: ldt_log_mgf(1.0, 10, 10, perp=None),
        lambda: tilted_overlap_density(0.0, 1.0, 10, 10, perp="Exact"),
    ],
)
def test_perp_validation(call):
    with pytest.raises(ValueError, match="perp must be 'frozen' .* or 'exact' .* got"):
        call()


@pytest.mark.parametrize("factor", [0.05, 0.7, 1.0, 1.6, 30.0])
def test_exact_newton_root_independent_of_starting_guess(factor):
    # the safeguarded Newton iteration of perp="exact" brackets from either side of the root
    from richlazy.theory.ldt._erf import _solve_t, _solve_t_newton

    pr = ErfModel(20, 20, perp="exact")
    t_brent, _, ok_b = _solve_t(pr, 0.4, 1e-13, 200)
    t_newton, _, ok_n = _solve_t_newton(pr, 0.4, 1e-13, 200, factor * t_brent)
    assert ok_b and ok_n
    assert t_newton == pytest.approx(t_brent, rel=1e-11)
