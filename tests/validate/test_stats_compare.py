"""MCMC standard errors and comparison records."""

import math

import numpy as np
import pytest
from richlazy.validate import compare, sweep
from richlazy.validate.stats import batch_means, effective_sample_size, estimate, mean_se


def _ar1(phi, S, E, seed):
    rng = np.random.default_rng(seed)
    x = np.zeros((S, E))
    e = rng.standard_normal((S, E)) * np.sqrt(1 - phi**2)
    x[0] = rng.standard_normal(E)
    for t in range(1, S):
        x[t] = phi * x[t - 1] + e[t]
    return x


def test_batch_means_and_ess_on_ar1_process():
    """AR(1) with unit variance: integrated autocorrelation time (1 + phi) / (1 - phi)."""
    phi, S, E = 0.8, 40000, 4
    tau = (1 + phi) / (1 - phi)
    x = _ar1(phi, S, E, 0)
    mean, se = batch_means(x, n_batches=10)
    se_true = math.sqrt(tau / (S * E))
    assert abs(se / se_true - 1) < 0.3
    assert abs(mean) < 5 * se_true
    ess = effective_sample_size(x)
    assert abs(ess / (S * E / tau) - 1) < 0.15


def test_ess_of_independent_samples_is_sample_count():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4000, 3, 2))
    ess = effective_sample_size(x)
    assert ess.shape == (2,)
    assert np.all(np.abs(ess / 12000 - 1) < 0.15)


def test_estimate_shapes_and_validation():
    x = np.random.default_rng(2).standard_normal((100, 4, 3, 2))
    est = estimate(x)
    assert est.mean.shape == est.stderr.shape == est.ess.shape == (3, 2)
    with pytest.raises(ValueError, match=r"shape \(S, E, ...\)"):
        batch_means(np.ones(5))
    with pytest.raises(ValueError, match="at least 2 samples"):
        batch_means(np.ones((1, 3)))
    with pytest.raises(ValueError, match="NaN or inf"):
        batch_means(np.full((5, 2), np.nan))
    with pytest.raises(ValueError, match="n_batches must be an int >= 1"):
        batch_means(np.ones((5, 2)), n_batches=0)


def test_compare_kinds():
    q = compare("a", 1.0, 1.1, stderr=0.05, kind="z", tol=3)
    assert q.z == pytest.approx(-2.0) and q.rel_error == pytest.approx(0.1) and q.passed
    q = compare("a", 1.0, 1.2, stderr=0.05, kind="z", tol=3)
    assert not q.passed
    q = compare("b", 2.0, 2.1, kind="rel", tol=0.04)
    assert not q.passed and q.z is None
    assert compare("b", 2.0, 2.05, kind="rel", tol=0.04).passed
    q = compare("c", 0.0, 0.01, stderr=0.01, kind="abs", tol=0.02)
    assert q.passed and q.rel_error is None and q.z == pytest.approx(-1.0)
    assert not compare("d", 1.0, float("nan"), kind="rel", tol=1.0).passed
    d = compare("e", 1.0, 1.0, kind="rel", tol=0.1, note="why").to_dict()
    assert set(d) >= {"name", "theory", "simulation", "stderr", "z", "rel_error", "tolerance", "passed"}


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(kind="sigma"), ValueError, "kind must be one of"),
        (dict(kind="z"), ValueError, "kind=.z. needs a positive stderr"),
        (dict(kind="rel", tol=-1), ValueError, "tol must be a finite number > 0"),
        (dict(kind="rel", theory=0.0), ValueError, "non-zero theory value"),
        (dict(stderr=-1.0, kind="abs"), ValueError, "stderr must be >= 0"),
        (dict(name=""), TypeError, "name must be a non-empty str"),
    ],
)
def test_compare_validation(kwargs, exc, match):
    base = dict(name="q", theory=1.0, simulation=1.0, kind="abs", tol=0.1)
    base.update(kwargs)
    name, th, sim = base.pop("name"), base.pop("theory"), base.pop("simulation")
    with pytest.raises(exc, match=match):
        compare(name, th, sim, **base)


def test_compare_one_sided_trend():
    q = compare("trend", 0.0, 0.31, stderr=0.1, kind="gt", tol=3)
    assert q.passed and q.z == pytest.approx(-3.1)
    assert not compare("trend", 0.0, 0.29, stderr=0.1, kind="gt", tol=3).passed
    assert not compare("trend", 0.0, -1.0, stderr=0.1, kind="gt", tol=3).passed
    with pytest.raises(ValueError, match="kind='gt' needs a positive stderr"):
        compare("trend", 0.0, 1.0, kind="gt", tol=3)


# (call, message): arguments that used to end in IndexError or MemoryError (issue 53), refused
# up front naming the argument, the value and the limit
_SIZE_CASES = {
    "mean_se.axis": (lambda: mean_se(np.ones((3, 5)), axis=10**9),
                     r"axis must be in \[-2, 1\] for x of shape \(3, 5\), got 1000000000"),
    "mean_se.negative_axis": (lambda: mean_se(np.ones((3, 5)), axis=-3), r"axis must be in \[-2, 1\]"),
    "sweep.seeds": (lambda: sweep("selftest", {}, seeds=10**9),
                    r"seeds must be <= 1000000 replicates per grid point .*got 1000000000"),
}


@pytest.mark.parametrize("case", sorted(_SIZE_CASES))
def test_size_arguments_are_refused_before_allocating(case):
    call, message = _SIZE_CASES[case]
    with pytest.raises(ValueError, match=message):
        call()


# standard-error rules of the cases and sweeps (validate/stats.py)


def test_chain_se_is_the_larger_of_batch_means_and_the_chain_spread():
    from richlazy.validate.stats import chain_se

    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 4)) + np.array([0.0, 0.0, 1.0, -1.0])  # chains disagree
    se_b = float(batch_means(x, n_batches=4)[1])
    se_c = float(mean_se(x.mean(0))[1])
    assert chain_se(x) == max(se_b, se_c) == se_c
    assert chain_se(x[:, :1]) == float(batch_means(x[:, :1], n_batches=4)[1])  # one chain


def test_chain_mean_se_averages_samples_and_trailing_axes_per_chain():
    from richlazy.validate.stats import chain_mean_se

    x = np.arange(2 * 3 * 2, dtype=float).reshape(2, 3, 2)  # (S, E, 2)
    per_chain = x.mean(axis=(0, 2))
    m, se = chain_mean_se(x)
    assert m == pytest.approx(per_chain.mean()) and se == pytest.approx(per_chain.std(ddof=1) / np.sqrt(3))


def test_fraction_and_binomial_se_floors():
    from richlazy.validate.stats import binomial_se, fraction_se

    p, se = fraction_se(np.array([1.0, 1.0]), 50)
    assert p == 1.0 and se == pytest.approx(math.sqrt(1.0 / 50 / 50))  # floored at one unit
    p, se = fraction_se(np.array([0.2, 0.6]), 10_000)
    assert p == pytest.approx(0.4) and se == pytest.approx(0.2)  # chain spread dominates
    assert fraction_se(np.array([0.5]), 4) == (0.5, 0.25)  # one chain: binomial only
    assert binomial_se(0.0, 100) == pytest.approx(math.sqrt(0.25 / 100 / 100))
    assert binomial_se(0.5, 100) == pytest.approx(0.05)
