"""Tests for richlazy.theory.ldt._bounds (seed 002, eqs. 3-6, 18-29, App. A.2)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from richlazy.theory._results import SolverError
from richlazy.theory.ldt import _bounds as bounds
from scipy import stats


# ------------------------------------------------------------------ alignment and MSE bound
def test_alignment_recovers_projection_coefficient():
    rng = np.random.default_rng(0)
    y = rng.standard_normal(500)
    z = rng.standard_normal((3, 500))
    z -= np.outer(z @ y / (y @ y), y)  # orthogonal to y on the uniform measure
    coef = np.array([0.2, 1.0, -1.5])
    f = coef[:, None] * y + z
    np.testing.assert_allclose(bounds.alignment(f, y), coef, rtol=1e-12)


def test_alignment_weights_match_repeated_points():
    rng = np.random.default_rng(1)
    y = rng.standard_normal(6)
    f = rng.standard_normal(6)
    w = np.array([1, 2, 3, 1, 1, 2])
    rep = np.repeat(np.arange(6), w)
    expanded = float(bounds.alignment(f[rep], y[rep]))
    assert bounds.alignment(f, y, weights=w) == pytest.approx(expanded, rel=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000))
def test_mse_lower_bound_holds(seed):
    rng = np.random.default_rng(seed)
    y = rng.standard_normal(40)
    f = rng.standard_normal() * y + rng.standard_normal(40) * rng.uniform(0, 2)
    A = bounds.alignment(f, y)
    mse = np.mean((f - y) ** 2)
    assert bounds.mse_lower_bound(A, y_norm2=np.mean(y * y)) <= mse * (1 + 1e-12)


def test_mse_lower_bound_tight_for_proportional_function():
    y = np.linspace(-1, 2, 30)
    f = 0.3 * y
    assert bounds.mse_lower_bound(bounds.alignment(f, y), y_norm2=np.mean(y * y)) == pytest.approx(
        np.mean((f - y) ** 2), rel=1e-12
    )


# ------------------------------------------------------------------ k factor and P_*
def test_k_factor_two_layer_erf_matches_quadrature():
    # K(x,x) = sigma_a^2/chi E_{u ~ N(0, sigma_w^2)} erf(u)^2 at |x|^2 = d
    from scipy.special import erf

    z, w = np.polynomial.hermite_e.hermegauss(200)
    w = w / math.sqrt(2 * math.pi)
    for sw2, sa2, chi in [(1.0, 1.0, 1.0), (0.3, 2.0, 1.0), (2.5, 0.7, 5.0)]:
        Kxx = sa2 / chi * np.sum(w * erf(math.sqrt(sw2) * z) ** 2)
        assert bounds.k_factor_two_layer_erf(sw2, sa2, chi=chi) == pytest.approx(1.0 + Kxx, rel=1e-10)


def test_k_factor_is_mean_of_prior_squared_error():
    rng = np.random.default_rng(2)
    K = rng.uniform(0.1, 2.0, 5)
    y = rng.standard_normal(5)
    # Monte Carlo of E_prior sum (f - y)^2 / P with f ~ N(0, diag K)
    f = rng.standard_normal((400_000, 5)) * np.sqrt(K)
    mc = np.mean(np.sum((f - y) ** 2, axis=1)) / 5
    assert bounds.k_factor(K, y) == pytest.approx(mc, rel=5e-3)


def test_posterior_bound_vanishes_at_P_star():
    lp = np.array([-10.0, -250.0])
    Ps = bounds.sample_complexity(lp, kappa=0.7, k=1.3)
    np.testing.assert_allclose(bounds.log_posterior_bound(Ps, lp, kappa=0.7, k=1.3), 0.0, atol=1e-10)
    np.testing.assert_allclose(bounds.sample_complexity_from_energy(-lp, kappa=0.7, k=1.3), Ps)


# ------------------------------------------------------------------ Chernoff energy
def test_chernoff_gaussian_rate():
    m, s2 = 0.5, 2.0
    a = np.linspace(-1, 4, 11)
    r = bounds.chernoff_energy(a, lambda t: m * t + s2 * t * t / 2, cgf_prime=lambda t: m + s2 * t)
    expect = np.where(a > m, (a - m) ** 2 / (2 * s2), 0.0)
    assert r.converged
    np.testing.assert_allclose(r.energy, expect, atol=1e-12)
    np.testing.assert_allclose(r.t_star, np.maximum(a - m, 0) / s2, atol=1e-10)


def test_chernoff_bernoulli_rate_with_numeric_derivative():
    p = 0.3
    a = np.array([0.35, 0.5, 0.75, 0.9, 0.99])
    r = bounds.chernoff_energy(a, lambda t: np.log1p(p * np.expm1(t)))
    kl = a * np.log(a / p) + (1 - a) * np.log((1 - a) / (1 - p))
    assert r.converged
    np.testing.assert_allclose(r.energy, kl, rtol=1e-9)


def test_chernoff_bounds_binomial_tail_with_bahadur_rao_prefactor():
    p, n = 0.2, 400
    a = np.array([0.3, 0.4])
    r = bounds.chernoff_energy(a, lambda t: n * np.log1p(p * np.expm1(t / n)))
    tail = stats.binom.sf(np.round(a * n) - 1, n, p)  # Pr[mean >= a], a*n integer
    assert np.all(np.log(tail) <= -r.energy)  # the Chernoff bound itself
    theta = np.log(a * (1 - p) / (p * (1 - a)))  # exact tilt of the Bernoulli
    np.testing.assert_allclose(r.t_star / n, theta, rtol=1e-9)
    # Bahadur-Rao (lattice): -log P - E -> log[(1 - e^-theta) sigma sqrt(2 pi n)], error O(1/n)
    pref = np.log((1 - np.exp(-theta)) * np.sqrt(a * (1 - a) * 2 * np.pi * n))
    np.testing.assert_allclose(-np.log(tail) - r.energy, pref, atol=0.1)


def test_chernoff_exponential_domain_edge():
    lam = 2.0
    a = np.array([0.2, 1.0, 3.0, 10.0])

    def cgf(t):
        return np.where(t < lam, -np.log(np.clip(1 - t / lam, 1e-300, None)), np.inf)

    r = bounds.chernoff_energy(a, cgf)
    expect = np.where(a > 1 / lam, lam * a - 1 - np.log(lam * a), 0.0)
    np.testing.assert_allclose(r.energy, expect, rtol=1e-8, atol=1e-12)


def test_chernoff_vectorised_equals_looped():
    cgf = lambda t: np.log(np.cosh(t)) + 0.1 * t  # noqa: E731
    a = np.array([[0.2, 0.5], [0.7, 0.95]])
    r = bounds.chernoff_energy(a, cgf)
    loop = np.array([[float(bounds.chernoff_energy(x, cgf).energy) for x in row] for row in a])
    np.testing.assert_allclose(r.energy, loop, rtol=1e-10)
    assert r.energy.shape == a.shape


def test_chernoff_beyond_support_reports_and_throws():
    p = 0.3
    cgf = lambda t: np.log1p(p * np.expm1(t))  # noqa: E731
    r = bounds.chernoff_energy(np.array([0.5, 1.2]), cgf)
    assert not r.converged and r.status != 0
    assert r.point_converged.tolist() == [True, False]
    with pytest.raises(SolverError, match="alpha"):
        bounds.chernoff_energy(np.array([1.2]), cgf, throw=True)


# ------------------------------------------------------------------ classification
def test_log_partition_exact_matches_monte_carlo():
    rng = np.random.default_rng(3)
    K, C = 0.8, 7
    z = rng.standard_normal((400_000, C)) * math.sqrt(K)
    v = np.log(np.exp(z).sum(axis=1))
    mc, se = v.mean(), v.std() / math.sqrt(v.size)
    assert abs(float(bounds.log_partition_classes_exact(K, C)) - mc) < 4 * se


def test_log_partition_asymptotic_error_is_order_inverse_C_squared():
    K = 1.0
    Cs = np.array([256, 512, 1024])
    err = np.array(
        [
            float(bounds.log_partition_classes_exact(K, c) - bounds.log_partition_classes_asymptotic(K, c))
            for c in Cs
        ]
    )
    slope = np.polyfit(np.log(Cs), np.log(np.abs(err)), 1)[0]
    assert slope == pytest.approx(-2.0, abs=0.1)  # next order C^-3 shifts the slope by ~0.05
    # the C^-2 coefficient from the 3rd/4th cumulants of the lognormal mean (delta method):
    # (e^K - 1)^2 [(e^K + 2)/3 - 3/4]
    q = math.expm1(K)
    assert err[-1] * Cs[-1] ** 2 == pytest.approx(q * q * ((math.e + 2) / 3 - 0.75), rel=0.05)


def test_classification_sample_complexity():
    K = np.array([0.5, 1.5])
    rate = bounds.classification_rate(K, 10)
    expect = np.mean(math.log(10) + K / 2 - np.expm1(K) / 20)
    assert rate == pytest.approx(expect, rel=1e-14)
    assert bounds.sample_complexity_classification(3.0, kappa=2.0, K_diag=K, C=10) == pytest.approx(
        2.0 * 3.0 / expect
    )


def test_binary_kl_values():
    assert bounds.binary_kl(0.3, 0.3) == pytest.approx(0.0, abs=1e-15)
    assert bounds.binary_kl(1.0, 0.25) == pytest.approx(math.log(4))
    assert bounds.binary_kl(0.5, 0.1) == pytest.approx(0.5 * math.log(5) + 0.5 * math.log(0.5 / 0.9))


# ------------------------------------------------------------------ input validation
@pytest.mark.parametrize(
    ("call", "exc", "msg"),
    [
        (lambda: bounds.alignment(np.ones(3), np.ones(4)), ValueError, "y_values must broadcast"),
        (lambda: bounds.alignment(np.ones(3), np.zeros(3)), ValueError, "zero norm"),
        (
            lambda: bounds.alignment(np.ones(3), np.ones(3), weights=[1, 1]),
            ValueError,
            "weights must have length 3",
        ),
        (lambda: bounds.alignment(np.ones(3), np.ones(3), weights=[1, -1, 1]), ValueError, "non-negative"),
        (lambda: bounds.alignment(np.array(1.0), 1.0), ValueError, "non-empty last axis"),
        (lambda: bounds.alignment([np.nan, 1], [1, 1]), ValueError, "f_values must contain only finite"),
        (lambda: bounds.mse_lower_bound(0.5, y_norm2=0.0), ValueError, "y_norm2 must be > 0"),
        (lambda: bounds.k_factor([1, 2], [1]), ValueError, "equal lengths"),
        (lambda: bounds.k_factor([-1.0], [1.0]), ValueError, "K_diag must be >= 0"),
        (lambda: bounds.k_factor_two_layer_erf(-1.0), ValueError, "sigma_w2 must be > 0"),
        (lambda: bounds.k_factor_two_layer_erf(1.0, chi="x"), TypeError, "chi must be a real number"),
        (lambda: bounds.log_posterior_bound(-1, -1.0, kappa=1, k=1), ValueError, "P must be >= 0"),
        (
            lambda: bounds.log_posterior_bound(1, 0.5, kappa=1, k=1),
            ValueError,
            "log_prior_prob must be <= 0",
        ),
        (lambda: bounds.sample_complexity(-1.0, kappa=0, k=1), ValueError, "kappa must be > 0"),
        (
            lambda: bounds.sample_complexity_from_energy(-1.0, kappa=1, k=1),
            ValueError,
            "energy must be >= 0",
        ),
        (lambda: bounds.chernoff_energy(1.0, 3.0), TypeError, "cgf must be callable"),
        (lambda: bounds.chernoff_energy(1.0, np.exp), ValueError, "Lambda\\(0\\) = 0"),
        (
            lambda: bounds.chernoff_energy(1.0, np.sin, cgf_prime=2),
            TypeError,
            "cgf_prime must be callable",
        ),
        (lambda: bounds.chernoff_energy(1.0, np.sin, maxiter=0), ValueError, "maxiter must be >= 1"),
        (lambda: bounds.chernoff_energy(1.0, np.sin, t_max=-1.0), ValueError, "t_max must be > 0"),
        (lambda: bounds.binary_kl(1.5, 0.5), ValueError, "q must lie in"),
        (lambda: bounds.binary_kl(0.5, 1.0), ValueError, "p must lie in the open interval"),
        (lambda: bounds.log_partition_classes_asymptotic(1.0, 1), ValueError, "C must be >= 2"),
        (lambda: bounds.log_partition_classes_exact(-1.0, 3), ValueError, "K must be >= 0"),
        (lambda: bounds.classification_rate([], 3), ValueError, "K_diag must be non-empty"),
    ],
)
def test_input_validation(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()
