"""Tests for the two-layer erf posterior potential and the Hermite-target data (richlazy.simulate,
seed 002)."""

import math

import pytest
import torch
from richlazy.simulate import TwoLayerErfPosterior, hermite_target_data


def _setup(chi=1.0):
    g = torch.Generator().manual_seed(0)
    X, y = hermite_target_data(30, 5, generator=g)
    return g, TwoLayerErfPosterior(X, y, N=4, kappa=0.7, sigma_w2=1.3, sigma_a2=0.8, chi=chi)


@pytest.mark.parametrize("chi", [1.0, "mean-field"])
def test_gradient_matches_autograd(chi):
    g, post = _setup(chi)
    th = post.sample_prior(3, generator=g).requires_grad_(True)
    W, a = post.unpack(th)
    f = post.outputs(th)
    phi = (
        ((f - post.y) ** 2).sum(1) / (2 * post.kappa)
        + 0.5 * post.d / post.sigma_w2 * (W**2).sum((1, 2))
        + 0.5 * post.chi * post.N / post.sigma_a2 * (a**2).sum(1)
    )
    (ga,) = torch.autograd.grad(phi.sum(), th)
    gm, info = post.grad(th.detach())
    torch.testing.assert_close(gm, ga, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(info["loss"], 0.5 * ((f - post.y) ** 2).mean(1).detach())


def test_per_chain_training_sets_match_separate_runs():
    g = torch.Generator().manual_seed(3)
    X, y = hermite_target_data(20, 4, generator=g, n_sets=3)
    post = TwoLayerErfPosterior(X, y, N=5, kappa=0.5)
    th = post.sample_prior(3, generator=g)
    gm, _ = post.grad(th)
    for e in range(3):
        single = TwoLayerErfPosterior(X[e], y[e], N=5, kappa=0.5)
        ge, _ = single.grad(th[e : e + 1])
        torch.testing.assert_close(gm[e : e + 1], ge, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="n_chains must equal"):
        post.sample_prior(2, generator=g)


def test_prior_variances():
    g, post = _setup("mean-field")
    th = post.sample_prior(20000, generator=g)
    W, a = post.unpack(th)
    assert float(W.var()) == pytest.approx(1.3 / 5, rel=0.03)
    assert float(a.var()) == pytest.approx(0.8 / (4 * 4), rel=0.03)


def test_hermite_targets_have_unit_norm():
    g = torch.Generator().manual_seed(1)
    for deg in (1, 3, 5):
        _, y = hermite_target_data(100_000, 3, generator=g, degree=deg)
        assert float((y * y).mean()) == pytest.approx(1.0, abs=5 * math.sqrt(20 / 100_000) * 3)


@pytest.mark.parametrize(
    ("call", "msg"),
    [
        (lambda: hermite_target_data(10, 3, generator=torch.Generator(), degree=2), "degree"),
        (lambda: hermite_target_data(0, 3, generator=torch.Generator()), "P must be"),
        (lambda: TwoLayerErfPosterior(torch.zeros(3), torch.zeros(3), N=2, kappa=1.0), "X must"),
        (lambda: TwoLayerErfPosterior(torch.zeros(3, 2), torch.zeros(3), N=2, kappa=0.0), "kappa"),
    ],
)
def test_input_validation(call, msg):
    with pytest.raises(ValueError, match=msg):
        call()
