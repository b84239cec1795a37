"""Tests for the exact two-layer erf LDT (seed 002 App. B.3) and the adaptive-kernel closure
(App. G): closed forms vs quadrature, numba kernels vs mpmath, two independent root finders,
Legendre duality, GP limits and fitted scaling exponents."""

import math

import mpmath
import numpy as np
import pytest
from richlazy.theory._adaptive_kernel import ak_sample_complexity, ak_two_layer_erf
from richlazy.theory._ldt_bounds import chernoff_energy
from richlazy.theory._ldt_erf import (
    _make_problem,
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
    pr = _make_problem(d, 10, 1.0, 1.0, 1.0, 3, 8.0)
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
    pr = _make_problem(d, N, 1.0, 1.0, 1.0, 3, 8.0)
    V0 = pr.moments(0.0)[1]
    r = ldt_two_layer_erf(np.array([0.5, 1.0]), d, N)
    np.testing.assert_allclose(r.energy, np.array([0.25, 1.0]) / (2 * V0), rtol=2e-3)


def test_gp_limit_variance_scales_as_d_minus_3():
    # V0 = E_prior[g] ∝ E[w^6] ∝ d^-3 (lazy eigenvalue of He_3); a_y ∝ d^3 (spec 5.1 GP row)
    ds = np.array([1000, 2000, 4000])
    V0 = [_make_problem(int(d), 1, 1.0, 1.0, 1.0, 3, 8.0).moments(0.0)[1] for d in ds]
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
    pr = _make_problem(d, N, 1.0, 1.0, 1.0, 3, 8.0)
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
