"""Tests of the exact prior sampler of two-layer erf networks and the rare-event importance
sampler (``richlazy.simulate``, seed 002): the Monte Carlo and importance-sampling estimators
against the exact per-neuron theory of ``richlazy.theory`` (``perp="exact"``; the theory itself
is tested in ``tests/theory/ldt/test_erf.py``)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from richlazy.simulate import tasks
from richlazy.theory import ldt_log_mgf, ldt_two_layer_erf, outlier_threshold
from scipy import integrate, special


def _exact_log_z1(tau, d):
    """Exact per-neuron CGF log Z_1(tau) (sigma_w^2 = 1) from the theory layer."""
    lam, _ = ldt_log_mgf(math.sqrt(2.0 * d * tau), d, d, perp="exact")
    return float(lam) / d


def test_neuron_g2_matches_gauss_hermite_overlap():
    # G = E_x[erf(w.x) He_3(x_1)/sqrt(6)] with w = w_par e_1 + sqrt(r) e_2: 2-D Gauss-Hermite
    z, wts = np.polynomial.hermite_e.hermegauss(80)
    wts = wts / wts.sum()
    Z1, Z2 = np.meshgrid(z, z, indexing="ij")
    W = wts[:, None] * wts[None, :]
    for w_par, r in ((0.3, 0.9), (1.4, 0.3), (-0.8, 2.0)):
        G = np.sum(W * special.erf(w_par * Z1 + math.sqrt(r) * Z2) * (Z1**3 - 3 * Z1)) / math.sqrt(6)
        assert tasks.neuron_g2(w_par, r) == pytest.approx(G * G, rel=1e-9)


def test_prior_log_density_is_normalised():
    d = 7
    val, _ = integrate.dblquad(lambda u, w: math.exp(tasks.prior_log_density(w, u, d)),
                               0.0, 4.0, -15.0, 5.0)
    assert val == pytest.approx(1.0, abs=1e-8)


def test_direct_mc_log_z1_against_exact():
    d = 6
    lz, se = tasks.direct_mc_log_z1([20.0, 80.0], d, n=400_000, seed=np.random.default_rng(1))
    for j, tau in enumerate((20.0, 80.0)):
        assert abs(lz[j] - _exact_log_z1(tau, d)) < 4 * se[j]


def test_proposal_weights_are_exact():
    d, tau = 8, 150.0
    prop = tasks.TiltedProposal(tau, d, eps=0.1)
    rng = np.random.default_rng(5)
    w, u = prop.sample(400_000, rng)
    lw = tasks.prior_log_density(w, u, d) - prop.log_density(w, u)
    x = np.exp(lw)
    # E_q[p0/q] = 1 and E_q[(p0/q) 1{|w| > c}] = prior tail erfc(c sqrt(d/2))
    assert abs(x.mean() - 1.0) < 4 * x.std(ddof=1) / math.sqrt(x.size)
    c = 0.9
    y = x * (w > c)
    tail = math.erfc(c * math.sqrt(d / 2))
    assert abs(y.mean() - tail) < 4 * y.std(ddof=1) / math.sqrt(y.size)
    assert np.all(np.isfinite(lw)) and np.max(lw) <= math.log(1 / 0.1) + 1e-12


def test_importance_sampling_matches_direct_mc():
    d, N, alpha = 5, 4, 0.08
    ce = ldt_two_layer_erf(alpha, d, N, perp="exact", throw=True)
    tau = float(ce.tau_star)
    rng = np.random.default_rng(11)
    res = tasks.prior_rare_event_is(alpha, d, N, chi=1.0, tau_prop=tau, n_net=40_000, seed=rng)
    p, se = tasks.direct_mc_probability(alpha, d, N, chi=1.0, n_net=300_000, seed=rng)
    z = (res.log_p - math.log(p)) / math.hypot(res.log_p_se, se / p)
    assert abs(z) < 4
    # the Chernoff bound with the exact CGF holds
    assert -res.log_p >= float(ce.energy) - 3 * res.log_p_se
    assert res.w_abs.shape == (40_000, N) and res.weight.sum() == pytest.approx(1.0)


def test_weighted_mean_se():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1000)
    wgt = np.full(1000, 1e-3)
    mu, se = tasks.weighted_mean_se(x, wgt)
    assert mu == pytest.approx(x.mean())
    assert se == pytest.approx(x.std() / math.sqrt(1000))


def test_weighted_ratio_se_equal_weights():
    # equal weights: the ratio of means and the textbook delta-method error of a ratio
    rng = np.random.default_rng(4)
    den = rng.integers(1, 5, 2000).astype(float)
    num = den * (0.4 + 0.1 * rng.standard_normal(2000))
    wgt = np.full(2000, 1 / 2000)
    R, se = tasks.weighted_ratio_se(num, den, wgt)
    assert R == pytest.approx(num.sum() / den.sum(), rel=1e-12)
    resid = num - R * den
    assert se == pytest.approx(math.sqrt(np.sum(resid**2)) / 2000 / den.mean(), rel=1e-12)
    with pytest.raises(ValueError, match="weight must be non-negative and sum to 1"):
        tasks.weighted_ratio_se(num, den, np.ones(2000))


def test_seed_int_or_generator_give_the_same_stream():
    a = tasks.direct_mc_probability(0.05, 5, 4, chi=1.0, n_net=5000, seed=7)
    b = tasks.direct_mc_probability(0.05, 5, 4, chi=1.0, n_net=5000, seed=np.random.default_rng(7))
    assert a == b
    with pytest.raises(TypeError, match="seed must be a non-negative int or a numpy"):
        tasks.direct_mc_probability(0.05, 5, 4, chi=1.0, n_net=10, seed=None)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: tasks.TiltedProposal(1.0, 1), "d must be an int >= 2, got 1"),
        (lambda: tasks.TiltedProposal(-1.0, 5), "tau must be a finite number >= 0, got -1.0"),
        (lambda: tasks.direct_mc_log_z1([1.0], 1.5, n=10, seed=np.random.default_rng(0)),
         "d must be an int >= 2, got 1.5"),
        (lambda: tasks.TiltedProposal(1.0, 5, eps=1.5), r"eps must be in \(0, 1\), got 1.5"),
        (lambda: tasks.neuron_g2(1.0, -2.0), "w_norm2 must be >= w_par"),
    ],
)
def test_input_validation(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_exact_tilted_law_against_importance_sampling():
    # the theory's exact tilted law p0 exp(tau G^2)/Z_1 (outlier fraction and their mean
    # |w_perp|^2 at the saddle point) sampled through the proposal with exact weights
    d, N, alpha = 8, 8, 0.3
    th = ldt_two_layer_erf(alpha, d, N, perp="exact", throw=True)
    tau = float(th.tau_star)
    thr = outlier_threshold(d)
    prop = tasks.TiltedProposal(tau, d, eps=0.05)
    w, u = prop.sample(400_000, np.random.default_rng(8))
    r = np.exp(u) / d
    lz = _exact_log_z1(tau, d)
    x = np.exp(tasks.prior_log_density(w, u, d) + tau * tasks.neuron_g2(w, r) - lz - prop.log_density(w, u))
    assert abs(x.mean() - 1.0) < 4 * x.std(ddof=1) / math.sqrt(x.size)  # Z_1 itself
    y = x * (w > thr)
    assert abs(y.mean() - float(th.outlier_fraction)) < 4 * y.std(ddof=1) / math.sqrt(y.size)
    yr = y * r
    target = float(th.outlier_fraction * th.outlier_perp_norm2)
    assert abs(yr.mean() - target) < 4 * yr.std(ddof=1) / math.sqrt(yr.size)


def test_prior_rare_event_is_result():
    """The result is a frozen PriorRareEventEstimate whose fields are the estimator recomputed by
    hand on the same stream; ``res["key"]`` (the old dict) still works with a DeprecationWarning."""
    alpha, d, N, tau, n_net = 0.1, 4, 2, 1.0, 50
    res = tasks.prior_rare_event_is(alpha, d, N, chi=1.0, tau_prop=tau, n_net=n_net, seed=5)
    assert isinstance(res, tasks.PriorRareEventEstimate)
    rng = np.random.default_rng(5)
    prop = tasks.TiltedProposal(tau, d, eps=0.05)
    w, u = prop.sample(n_net * N, rng)
    lw = (tasks.prior_log_density(w, u, d) - prop.log_density(w, u)).reshape(n_net, N).sum(1)
    r = np.exp(u) / d
    V = tasks.neuron_g2(w, r).reshape(n_net, N).sum(1) / N
    lw = lw + special.log_ndtr(-alpha / np.sqrt(V))
    x = np.exp(lw - lw.max())
    weight = x / x.sum()
    expected = {"log_p": float(lw.max() + math.log(x.mean())),
                "log_p_se": float(x.std(ddof=1) / math.sqrt(n_net) / x.mean()),
                "ess": float(1.0 / np.sum(weight**2)), "w_abs": w.reshape(n_net, N),
                "r": r.reshape(n_net, N), "weight": weight}
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.log_p = 0.0
    for key, value in expected.items():
        np.testing.assert_array_equal(getattr(res, key), value)
        with pytest.warns(DeprecationWarning, match=rf"result\['{key}'\] is deprecated; use result\.{key}$"):
            assert res[key] is getattr(res, key)
    with pytest.warns(DeprecationWarning, match="no longer a dict"):
        assert list(res.keys()) == list(expected)
    with pytest.raises(KeyError):
        res["no such key"]
