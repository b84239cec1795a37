"""Batched γ-MLP trainer of seed 003: parametrisation, centring, gradients, ensembles, lazy limit."""

import math

import pytest
import torch
from richlazy.simulate import sd_symbols, sd_test_batch, sd_train_batch
from richlazy.simulate.models._gamma_mlp import (
    _loss_and_grads,
    gamma_learning_rate,
    gamma_mlp_output,
    init_gamma_mlp,
    lazy_gamma,
    train_gamma_mlp,
)
from sim_helpers import seeded_generator as _g

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _naive_centred(x, W, a, W0, a0, gamma, d):
    s = 1.0 / (gamma * math.sqrt(d))
    f = s * (torch.relu(x @ W.T) @ a)
    f0 = s * (torch.relu(x @ W0.T) @ a0)
    return f - f0


def test_learning_rate_rule_and_lazy_gamma():
    lr = gamma_learning_rate(torch.tensor([1e-3, 0.5, 1.0, 4.0]), 64, 0.1)
    torch.testing.assert_close(lr, torch.tensor([1e-6 * 64 * 0.1, 0.25 * 64 * 0.1, 6.4, 4 * 8 * 0.1],
                                                dtype=torch.float64))
    assert lazy_gamma(100) == pytest.approx(1e-6)
    with pytest.raises(ValueError, match="gamma must be finite and > 0"):
        gamma_learning_rate([0.0], 4, 0.1)
    with pytest.raises(ValueError, match="alpha0 must be a finite real number > 0"):
        gamma_learning_rate([1.0], 4, -0.1)


def test_init_variances_are_one_over_width():
    W0, a0 = init_gamma_mlp(4, 50, 400, generator=_g(1), dtype=torch.float64)
    n_w, n_a = W0.numel(), a0.numel()
    assert abs(W0.var().item() * 400 - 1) < 5 * math.sqrt(2 / n_w)
    assert abs(a0.var().item() * 400 - 1) < 5 * math.sqrt(2 / n_a)


def test_hand_written_gradients_match_autograd_and_centring_is_exact():
    g = _g(2)
    E, B, D, m, d = 3, 16, 8, 12, 4
    x = torch.randn(E, B, D, generator=g, dtype=torch.float64)
    y = (torch.rand(E, B, generator=g) < 0.5).double()
    W0, a0 = init_gamma_mlp(E, D, m, generator=g, dtype=torch.float64)
    dW = 0.3 * torch.randn(E, m, D, generator=g, dtype=torch.float64)
    da = 0.3 * torch.randn(E, m, generator=g, dtype=torch.float64)
    gamma = torch.tensor([0.1, 1.0, 3.0], dtype=torch.float64)
    s = 1.0 / (gamma * math.sqrt(d))
    loss, f, ga, gW = _loss_and_grads(x, y, W0, a0, dW, da, s)
    # naive f(θ) − f(θ0) and autograd
    Wv = (W0 + dW).clone().requires_grad_(True)
    av = (a0 + da).clone().requires_grad_(True)
    f_ref = torch.stack([_naive_centred(x[e], Wv[e], av[e], W0[e], a0[e], gamma[e], d)
                         for e in range(E)])
    torch.testing.assert_close(f, f_ref.detach(), rtol=1e-12, atol=1e-12)
    l_ref = torch.nn.functional.binary_cross_entropy_with_logits(f_ref, y, reduction="none").mean(1)
    torch.testing.assert_close(loss, l_ref.detach())
    l_ref.sum().backward()
    torch.testing.assert_close(ga, av.grad, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(gW, Wv.grad, rtol=1e-10, atol=1e-12)
    # centred output vanishes at initialisation
    out0 = gamma_mlp_output(x, W0, a0, torch.zeros_like(dW), torch.zeros_like(da), gamma, d)
    assert torch.all(out0 == 0)


def _sd_setup(E, d, L, seed, dtype=torch.float64):
    g = _g(seed)
    S = sd_symbols(E, L, d, generator=g, dtype=dtype)
    xt, yt = sd_test_batch(E, 200, d, generator=g, dtype=dtype)
    return S, xt, yt


def test_batched_ensemble_equals_separately_trained_networks():
    E, d, L, m, steps = 3, 6, 4, 16, 30
    S, xt, yt = _sd_setup(E, d, L, 3)
    batches = [sd_train_batch(S, 32, generator=_g(100 + t)) for t in range(steps)]
    it = iter(batches)
    W0, a0 = init_gamma_mlp(E, 2 * d, m, generator=_g(4), dtype=torch.float64)
    gam = torch.tensor([0.05, 0.5, 2.0])
    res = train_gamma_mlp(lambda g: next(it), xt, yt, gam, d_eff=d, width=m, n_steps=steps,
                          eval_every=10, generator=_g(5), dtype=torch.float64, init=(W0, a0))
    for e in range(E):
        it_e = iter([(bx[e:e + 1], by[e:e + 1]) for bx, by in batches])
        r = train_gamma_mlp(lambda g, it_e=it_e: next(it_e), xt[e:e + 1], yt[e:e + 1], gam[e:e + 1],
                            d_eff=d, width=m, n_steps=steps, eval_every=10, generator=_g(5),
                            dtype=torch.float64, init=(W0[e:e + 1], a0[e:e + 1]))
        torch.testing.assert_close(r.dW[0], res.dW[e], rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(r.test_accuracy[:, 0], res.test_accuracy[:, e])


def test_lazy_limit_function_dynamics_independent_of_gamma_and_weights_move_prop_to_gamma():
    # For γ -> 0 the centred network is its linearisation: with identical data and
    # initialisation the outputs agree up to O(γ) and ‖ΔW‖ ∝ γ (App. F); float32 must cope
    # with the output scale 1/(γ√d) ~ 1e5 of the seed's lazy γ = 1e-5/√d.
    E, d, L, m, steps = 1, 8, 6, 64, 200
    S, xt, yt = _sd_setup(E, d, L, 6, dtype=torch.float32)
    batches = [sd_train_batch(S, 64, generator=_g(200 + t)) for t in range(steps)]
    W0, a0 = init_gamma_mlp(E, 2 * d, m, generator=_g(7))
    out = {}
    for gam in (lazy_gamma(d), 1e-4, 1e-3):
        it = iter(batches)
        r = train_gamma_mlp(lambda g, it=it: next(it), xt, yt, gam, d_eff=d, width=m, n_steps=steps,
                            eval_every=100, generator=_g(8), init=(W0, a0))
        f = gamma_mlp_output(xt, r.W0, r.a0, r.dW, r.da, torch.tensor([gam]), d)
        out[gam] = (f, (r.dW.norm() / r.W0.norm()).item())
    f_lazy, rel_lazy = out[lazy_gamma(d)]
    f3, rel3 = out[1e-3]
    assert f_lazy.abs().max() > 0.5  # the network has learned something
    torch.testing.assert_close(out[1e-4][0], f_lazy, rtol=0, atol=2e-3 * f_lazy.abs().max().item())
    assert rel3 / out[1e-4][1] == pytest.approx(10.0, rel=0.02)
    assert rel3 / rel_lazy == pytest.approx(1e-3 / lazy_gamma(d), rel=0.02)


def test_rich_network_learns_sd_task_and_reports_final_and_best():
    E, d, L, m = 4, 16, 8, 64
    S, xt, yt = _sd_setup(E, d, L, 9, dtype=torch.float32)
    xt, yt = xt.float(), yt.float()
    r = train_gamma_mlp(lambda g: sd_train_batch(S.float(), 64, generator=g), xt, yt, 1.0, d_eff=d,
                        width=m, n_steps=300, eval_every=50, generator=_g(10))
    assert r.test_accuracy.shape == (7, E) and r.eval_steps.tolist() == [0, 50, 100, 150, 200, 250,
                                                                          300]
    torch.testing.assert_close(r.best_accuracy, r.test_accuracy.max(0).values)
    torch.testing.assert_close(r.final_accuracy, r.test_accuracy[-1])
    assert torch.all(r.test_accuracy[0] == 0.5)  # centred: f̃ = 0 -> "different" for every pair
    assert r.final_accuracy.mean() > 0.85  # rich theory (Eq. 3) gives 0.998 at L = 8


def test_trainer_validation():
    S, xt, yt = _sd_setup(2, 3, 3, 11, dtype=torch.float32)

    def sampler(g):
        return sd_train_batch(S, 8, generator=g)

    with pytest.raises(ValueError, match="gamma must be a scalar or have one entry per member"):
        train_gamma_mlp(sampler, xt, yt, [1.0, 1.0, 1.0], d_eff=3, generator=_g())
    with pytest.raises(ValueError, match="y_test must be a tensor of shape"):
        train_gamma_mlp(sampler, xt, yt[:, :5], 1.0, d_eff=3, generator=_g())
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        train_gamma_mlp(sampler, xt, yt, 1.0, d_eff=3, generator=1)
    with pytest.raises(ValueError, match="init must be"):
        train_gamma_mlp(sampler, xt, yt, 1.0, d_eff=3, width=4, generator=_g(),
                        init=(torch.zeros(2, 5, 6), torch.zeros(2, 5)))
    with pytest.raises(ValueError, match="sample_batch must return"):
        train_gamma_mlp(lambda g: (torch.zeros(3, 8, 6), torch.zeros(3, 8)), xt, yt, 1.0,
                        d_eff=3, width=4, n_steps=1, generator=_g())
