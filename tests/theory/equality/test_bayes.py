"""Bayes-optimal same-different classifiers (seed 003 App. E) vs direct density evaluation."""

import mpmath
import numpy as np
import pytest
from richlazy.theory import (
    bayes_accuracy,
    bayes_generalising_accuracy,
    llr_generalising,
    llr_memorising,
    sd_test_pairs,
)
from scipy import stats


def _direct_llr_generalising(z1, z2, s):
    """log N((z1, z2); 0, Σ_same) − log N((z1, z2); 0, Σ_diff) with the joint 2d-covariances
    of the data model s ~ N(0, I/d), η ~ N(0, s I/d)."""
    d = z1.size
    I = np.eye(d)
    cov_same = np.block([[(1 + s) * I, I], [I, (1 + s) * I]]) / d
    cov_diff = (1 + s) * np.eye(2 * d) / d
    x = np.r_[z1, z2]
    return (stats.multivariate_normal(np.zeros(2 * d), cov_same).logpdf(x)
            - stats.multivariate_normal(np.zeros(2 * d), cov_diff).logpdf(x))


def test_generalising_llr_vs_joint_gaussian_density():
    rng = np.random.default_rng(0)
    d = 3
    for s in (0.1, 1.0, 4.0):
        z1 = rng.standard_normal((5, d))
        z2 = z1 + 0.3 * rng.standard_normal((5, d))
        llr = llr_generalising(z1, z2, s)
        ref = [_direct_llr_generalising(a, b, s) for a, b in zip(z1, z2, strict=True)]
        np.testing.assert_allclose(llr, ref, rtol=1e-11, atol=1e-11)


def _direct_llr_memorising(z1, z2, S, s, dps=None):
    d = z1.size
    L = S.shape[0]
    sd = np.sqrt(s / d)
    if dps is None:
        p1 = [stats.norm(S[i], sd).pdf(z1).prod() for i in range(L)]
        p2 = [stats.norm(S[i], sd).pdf(z2).prod() for i in range(L)]
        same = sum(p1[i] * p2[i] for i in range(L)) / L
        diff = sum(p1[i] * p2[j] for i in range(L) for j in range(L) if i != j) / (L * (L - 1))
        return np.log(same) - np.log(diff)
    with mpmath.workdps(dps):
        def logpdf(z, mu):
            return sum(-(mpmath.mpf(float(a)) - mpmath.mpf(float(b))) ** 2 / (2 * s / d)
                       for a, b in zip(z, mu, strict=True))

        p1 = [mpmath.exp(logpdf(z1, S[i])) for i in range(L)]
        p2 = [mpmath.exp(logpdf(z2, S[i])) for i in range(L)]
        same = sum(p1[i] * p2[i] for i in range(L)) / L
        diff = sum(p1[i] * p2[j] for i in range(L) for j in range(L) if i != j) / (L * (L - 1))
        return float(mpmath.log(same) - mpmath.log(diff))


def test_memorising_llr_vs_direct_mixture_sums():
    rng = np.random.default_rng(1)
    d, L, s = 3, 5, 0.7
    S = rng.standard_normal((L, d)) / np.sqrt(d)
    z1 = S[[0, 1, 2, 3]] + 0.2 * rng.standard_normal((4, d))
    z2 = S[[0, 2, 2, 4]] + 0.2 * rng.standard_normal((4, d))
    llr = llr_memorising(z1, z2, S, s)
    ref = [_direct_llr_memorising(a, b, S, s) for a, b in zip(z1, z2, strict=True)]
    np.testing.assert_allclose(llr, ref, rtol=1e-10, atol=1e-10)


def test_memorising_llr_is_stable_where_densities_underflow():
    # tiny noise and d = 40: the densities underflow float64, the log-space result must not
    rng = np.random.default_rng(2)
    d, L, s = 40, 4, 1e-3
    S = rng.standard_normal((L, d)) / np.sqrt(d)
    z1 = S[[0, 1, 3]] + 0.05 * rng.standard_normal((3, d)) / np.sqrt(d)
    z2 = S[[0, 2, 3]] + 0.05 * rng.standard_normal((3, d)) / np.sqrt(d)
    llr = llr_memorising(z1, z2, S, s)
    assert np.all(np.isfinite(llr))
    ref = [_direct_llr_memorising(a, b, S, s, dps=60) for a, b in zip(z1, z2, strict=True)]
    np.testing.assert_allclose(llr, ref, rtol=1e-9)
    assert llr[0] > 0 > llr[1] and llr[2] > 0


def test_vectorised_equals_looped_and_shapes():
    rng = np.random.default_rng(3)
    d, L, s = 6, 7, 0.5
    S = rng.standard_normal((L, d)) / np.sqrt(d)
    z1 = rng.standard_normal((2, 5, d)) / np.sqrt(d)
    z2 = rng.standard_normal((2, 5, d)) / np.sqrt(d)
    v = llr_memorising(z1, z2, S, s)
    assert v.shape == (2, 5)
    loop = np.array([[llr_memorising(z1[i, j][None], z2[i, j][None], S, s)[0] for j in range(5)]
                     for i in range(2)])
    np.testing.assert_allclose(v, loop, rtol=1e-12)
    assert llr_generalising(z1, z2, s).shape == (2, 5)


def test_generalising_accuracy_quadrature_vs_monte_carlo():
    rng = np.random.default_rng(4)
    n = 100_000
    for d, s in ((4, 0.5), (32, 2.0)):
        exact = bayes_generalising_accuracy(d, s)
        x, y = sd_test_pairs(n, d, sigma2=s, seed=rng)
        mc = bayes_accuracy(x[:, :d], x[:, d:], y, prior="generalising", sigma2=s)
        for key, m in (("accuracy", n), ("accuracy_same", n // 2), ("accuracy_different", n // 2)):
            p = getattr(exact, key)
            assert abs(getattr(mc, key) - p) < 4 * np.sqrt(p * (1 - p) / m)


def test_generalising_is_optimal_and_memorising_approaches_it():
    # The generalising classifier is Bayes-optimal for fresh symbols, so the memorising one
    # (same test pairs) cannot beat it; with many training symbols it gets close to it.
    rng = np.random.default_rng(5)
    d, s, n = 8, 1.0, 20_000
    x, y = sd_test_pairs(n, d, sigma2=s, seed=rng)
    gen = bayes_accuracy(x[:, :d], x[:, d:], y, prior="generalising", sigma2=s).accuracy
    se = np.sqrt(gen * (1 - gen) / n)
    accs = []
    for L in (3, 300):
        S = rng.standard_normal((L, d)) / np.sqrt(d)
        accs.append(bayes_accuracy(x[:, :d], x[:, d:], y, prior="memorising", sigma2=s,
                                   symbols=S).accuracy)
    assert accs[0] < gen - 10 * se
    assert accs[1] <= gen + 3 * se
    assert accs[1] > accs[0]


def test_bayes_validation():
    z = np.zeros((3, 2))
    with pytest.raises(ValueError, match="sigma2 must be a finite real number > 0"):
        llr_generalising(z, z, 0.0)
    with pytest.raises(ValueError, match="same shape"):
        llr_generalising(z, np.zeros((3, 3)), 1.0)
    with pytest.raises(ValueError, match="symbols must have shape"):
        llr_memorising(z, z, np.zeros((1, 2)), 1.0)
    with pytest.raises(ValueError, match="prior must be one of"):
        bayes_accuracy(z, z, [0, 1, 1], prior="flat", sigma2=1.0)
    with pytest.raises(ValueError, match="symbols .* are required"):
        bayes_accuracy(z, z, [0, 1, 1], prior="memorising", sigma2=1.0)
    with pytest.raises(ValueError, match="y must be labels"):
        bayes_accuracy(z, z, [0, 1], prior="generalising", sigma2=1.0)
    with pytest.raises(ValueError, match="d must be an integer >= 1"):
        bayes_generalising_accuracy(0, 1.0)
