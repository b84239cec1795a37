"""Structured SD step and the published protocol of seed 003 (train_gamma_mlp_sd).

* the structured steps ("gram", "slots"; per-example gather and the grid of all L² pairs) follow
  the trajectory of train_gamma_mlp with an sd_train_batch closure to rounding;
* the published protocol: truncated-normal init moments, Bernoulli(½) labels, fresh test batches.
"""

import math

import numpy as np
import pytest
import torch
from richlazy.simulate import (
    DivergedError,
    init_gamma_mlp_published,
    lazy_gamma,
    sd_symbols,
    sd_test_batch,
    sd_train_batch,
    train_gamma_mlp,
    train_gamma_mlp_sd,
    truncated_normal,
    truncated_normal_std,
)
from richlazy.simulate.models import _sd_structured
from scipy import stats
from sim_helpers import seeded_generator as _g

pytestmark = pytest.mark.usefixtures("one_torch_thread")


D_SYM = 12
LS = [2, 3, 8, 5]  # per-member number of symbols (L_max = 8)
GAMMAS = [1.0, 0.3, lazy_gamma(D_SYM), 3.0]


def _setup(dtype=torch.float64):
    g = _g(0)
    S = sd_symbols(len(LS), max(LS), D_SYM, generator=g, dtype=torch.float64)
    xt, yt = sd_test_batch(len(LS), 200, D_SYM, generator=g, dtype=torch.float64)
    return S, torch.tensor(LS), xt, yt, torch.tensor(GAMMAS, dtype=torch.float64)


def _reference(S, n, xt, yt, gam, B, dtype, steps=200, sigma2=0.0):
    return train_gamma_mlp(lambda g: sd_train_batch(S, B, n_symbols=n, sigma2=sigma2, generator=g),
                           xt, yt, gam, d_eff=D_SYM, width=48, n_steps=steps, eval_every=50,
                           generator=_g(1), dtype=dtype)


def _rel(a, b):
    """Max |a − b| per member relative to the member's max |b|."""
    return ((a - b).abs().flatten(1).amax(1) / b.abs().flatten(1).amax(1)).max().item()


# B = 32 < L_max² = 64: per-example gather/scatter; B = 64: the grid of all L² pairs
@pytest.mark.parametrize("B", [32, 64])
@pytest.mark.parametrize("method", ["gram", "slots", "dense"])
def test_structured_step_follows_the_dense_trajectory_float64(method, B):
    S, n, xt, yt, gam = _setup()
    ref = _reference(S, n, xt, yt, gam, B, torch.float64)
    r = train_gamma_mlp_sd(S, xt, yt, gam, n_symbols=n, batch_size=B, width=48, n_steps=200,
                           eval_every=50, generator=_g(1), dtype=torch.float64, method=method)
    assert r.method == method and r.protocol == "richlazy"
    assert _rel(r.dW, ref.dW) < 1e-10 and _rel(r.da, ref.da) < 1e-10
    torch.testing.assert_close(r.W0, ref.W0, rtol=0, atol=0)
    torch.testing.assert_close(r.train_loss, ref.train_loss, rtol=1e-10, atol=1e-14)
    assert torch.equal(r.test_accuracy, ref.test_accuracy)
    assert torch.equal(r.eval_steps, ref.eval_steps) and torch.equal(r.best_step, ref.best_step)
    assert torch.equal(r.final_accuracy_same, ref.final_accuracy_same)
    # every member learns (the comparison is not between untrained nets): the training loss falls
    assert bool((ref.train_loss[-1] < ref.train_loss[0] - 0.01).all()) and ref.train_loss[-1, 0] < 0.1


def test_structured_paths_are_the_ones_tested():
    S, n, xt, yt, gam = _setup()
    W0, a0 = torch.zeros(4, 3, 2 * D_SYM), torch.zeros(4, 3)
    s = lr = torch.ones(4)
    args = (W0, a0, s, lr, S.float(), n)
    assert not _sd_structured._StructuredSD(*args, 32, "balanced", _g(), "gram").grid
    assert _sd_structured._StructuredSD(*args, 64, "balanced", _g(), "slots").grid


@pytest.mark.parametrize("method", ["gram", "slots"])
def test_structured_step_float32_including_the_lazy_member(method):
    S, n, xt, yt, gam = _setup()
    gam = gam[:3]  # γ = 3 (α = γ√d α₀) amplifies float32 rounding over 200 steps; see the float64 test
    S, n, xt, yt = S[:3], n[:3], xt[:3], yt[:3]
    ref = _reference(S, n, xt, yt, gam, 32, torch.float32)
    r = train_gamma_mlp_sd(S, xt, yt, gam, n_symbols=n, batch_size=32, width=48, n_steps=200,
                           eval_every=50, generator=_g(1), method=method)
    assert r.dW.dtype == torch.float32
    assert _rel(r.dW, ref.dW) < 1e-4 and _rel(r.da, ref.da) < 1e-4
    # lazy member (output scale 1/(γ√d) = 1e5): outputs agree although ΔW ~ 1e-6
    assert _rel(r.dW[2:], ref.dW[2:]) < 1e-4
    assert (r.test_accuracy - ref.test_accuracy).abs().max() <= 2 / 200


def test_noisy_inputs_use_the_dense_step_and_structured_methods_refuse_them():
    S, n, xt, yt, gam = _setup()
    ref = _reference(S, n, xt, yt, gam, 32, torch.float64, steps=20, sigma2=0.3)
    r = train_gamma_mlp_sd(S, xt, yt, gam, n_symbols=n, batch_size=32, width=48, n_steps=20,
                           eval_every=50, sigma2=0.3, generator=_g(1), dtype=torch.float64)
    assert r.method == "dense"
    assert torch.equal(r.dW, ref.dW) and torch.equal(r.test_accuracy, ref.test_accuracy)
    with pytest.raises(ValueError, match="sigma2 = 0.3 > 0.*method='gram'"):
        train_gamma_mlp_sd(S, xt, yt, gam, sigma2=0.3, method="gram", generator=_g(1))


def test_auto_picks_the_cheapest_step():
    pick = _sd_structured._pick_method
    assert pick("auto", 0.0, 32, 256, 128) == "gram"  # Fig. 1c: 2L² < 4Ld < 6Bd
    assert pick("auto", 0.0, 128, 16, 128) == "slots"  # L > 2d
    assert pick("auto", 0.0, 1024, 64, 128) == "dense"  # L ≫ B
    assert pick("auto", 0.5, 2, 256, 128) == "dense"  # noisy inputs
    assert pick("slots", 0.0, 1024, 64, 128) == "slots"  # an explicit choice is kept


# ------------------------------------------------------------------ published protocol


def test_truncated_normal_std_is_the_exact_factor():
    c = truncated_normal_std(2.0)
    assert c == pytest.approx(stats.truncnorm(-2, 2).std(), rel=1e-13)
    assert c == pytest.approx(0.8796256610342398, rel=1e-14)
    assert truncated_normal_std(40.0) == pytest.approx(1.0, rel=1e-15)


def test_truncated_normal_draws_the_truncated_distribution():
    z = truncated_normal(200_000, generator=_g(3), dtype=torch.float64).numpy()
    assert np.abs(z).max() <= 2.0 and np.abs(z).max() > 1.99
    assert stats.kstest(z, stats.truncnorm(-2, 2).cdf).pvalue > 1e-3
    a = truncated_normal((3, 4), generator=_g(5), bound=1.0)
    assert a.shape == (3, 4) and a.dtype == torch.float32 and bool((a.abs() <= 1).all())
    assert torch.equal(a, truncated_normal((3, 4), generator=_g(5), bound=1.0))  # deterministic


def test_published_init_moments_and_support():
    E, D, m = 4, 64, 512
    W0, a0 = init_gamma_mlp_published(E, D, m, generator=_g(4), dtype=torch.float64)
    c = truncated_normal_std(2.0)
    # first layer: nominal std 1/√m truncated at ±2 std, no variance correction: var = c²/m
    n_w = W0.numel()
    assert abs(W0.var().item() * m / c**2 - 1) < 5 * math.sqrt(2 / n_w)
    assert W0.std().item() * math.sqrt(m) == pytest.approx(0.8796, abs=0.01)
    assert W0.abs().max().item() * math.sqrt(m) <= 2.0 + 1e-12
    assert W0.abs().max().item() * math.sqrt(m) > 1.99
    # readout: variance-corrected, var = 1/m exactly in distribution, support ±2/(c√m)
    n_a = a0.numel()
    assert abs(a0.var().item() * m - 1) < 5 * math.sqrt(2 / n_a)
    assert a0.abs().max().item() * math.sqrt(m) * c <= 2.0 + 1e-12
    big = init_gamma_mlp_published(64, 1, 512, generator=_g(6), dtype=torch.float64)[1]
    assert abs(big.var().item() * 512 - 1) < 5 * math.sqrt(2 / big.numel())
    # what the published protocol of train_gamma_mlp_sd starts from
    S = sd_symbols(2, 4, 8, generator=_g(0))
    r = train_gamma_mlp_sd(S, None, None, 1.0, width=16, n_steps=1, protocol="published", n_test=8,
                           generator=_g(7))
    W0p, a0p = init_gamma_mlp_published(2, 16, 16, generator=_g(7))
    assert torch.equal(r.W0, W0p) and torch.equal(r.a0, a0p)


def test_bernoulli_labels():
    S = sd_symbols(3, 6, 5, generator=_g(1), dtype=torch.float64)
    x, y = sd_train_batch(S, 4000, n_symbols=[2, 4, 6], generator=_g(2), labels="bernoulli")
    assert abs(y.mean().item() - 0.5) < 5 * math.sqrt(0.25 / y.numel())
    assert not torch.all(y.sum(1) == 2000)  # not exactly balanced
    same = torch.all(x[..., :5] == x[..., 5:], dim=-1)
    assert torch.equal(same, y == 1)  # different pairs use two distinct symbols
    assert torch.equal(sd_train_batch(S, 16, generator=_g(3))[0],
                       sd_train_batch(S, 16, generator=_g(3), labels="balanced")[0])
    xt, yt = sd_test_batch(2, 4000, 5, generator=_g(4), labels="bernoulli")
    assert abs(yt.mean().item() - 0.5) < 5 * math.sqrt(0.25 / yt.numel())
    assert torch.equal(torch.all(xt[..., :5] == xt[..., 5:], dim=-1), yt == 1)
    with pytest.raises(ValueError, match="labels must be one of"):
        sd_train_batch(S, 16, generator=_g(), labels="exact")
    with pytest.raises(ValueError, match="labels must be one of"):
        sd_test_batch(2, 4, 5, generator=_g(), labels=1)


def test_published_training_is_the_dense_trajectory_with_bernoulli_batches():
    S, n, _, _, gam = _setup()
    r = train_gamma_mlp_sd(S, None, None, gam, n_symbols=n, batch_size=32, width=48, n_steps=100,
                           eval_every=25, n_test=128, protocol="published", generator=_g(1),
                           dtype=torch.float64)
    g = _g(1)
    W0, a0 = init_gamma_mlp_published(4, 2 * D_SYM, 48, generator=g, dtype=torch.float64)
    torch.randint(0, 2**62, (1,), generator=g)  # the draw that seeds the evaluation stream
    xt, yt = sd_test_batch(4, 8, D_SYM, generator=_g(9), dtype=torch.float64)
    ref = train_gamma_mlp(lambda gg: sd_train_batch(S, 32, n_symbols=n, generator=gg, labels="bernoulli"),
                          xt, yt, gam, d_eff=D_SYM, width=48, n_steps=100, eval_every=100, generator=g,
                          dtype=torch.float64, init=(W0, a0))
    assert r.method == "gram" and r.protocol == "published"
    assert _rel(r.dW, ref.dW) < 1e-10 and _rel(r.da, ref.da) < 1e-10
    assert r.eval_steps.tolist() == [25, 50, 75, 100]  # no step-0 evaluation


def test_published_evaluation_draws_fresh_pairs_each_time(monkeypatch):
    batches = []

    def recording(*args, **kw):
        out = sd_test_batch(*args, **kw)
        batches.append((out, kw["labels"]))
        return out

    monkeypatch.setattr(_sd_structured, "sd_test_batch", recording)
    S = sd_symbols(2, 4, 8, generator=_g(0))

    def run(eval_every=2, seed=1):
        return train_gamma_mlp_sd(S, None, None, 1.0, width=16, n_steps=6, eval_every=eval_every,
                                  n_test=64, protocol="published", generator=_g(seed))

    r = run()
    assert len(batches) == 3 and r.test_accuracy.shape == (3, 2)
    (x1, y1), (x2, y2) = batches[0][0], batches[1][0]
    assert all(lab == "bernoulli" for _, lab in batches)
    assert x1.shape == (2, 64, 16) and not torch.equal(x1, x2) and not torch.equal(y1, y2)
    train_syms = S.reshape(-1, 8)
    assert torch.cdist(x1[..., :8].reshape(-1, 8), train_syms).min() > 1e-3  # fresh symbols
    # deterministic given the generator; the training does not depend on eval_every
    batches.clear()
    r2 = run()
    assert torch.equal(r2.test_accuracy, r.test_accuracy) and torch.equal(r2.dW, r.dW)
    assert torch.equal(batches[0][0][0], x1)
    r3 = run(eval_every=3)
    assert torch.equal(r3.dW, r.dW) and r3.eval_steps.tolist() == [3, 6]
    assert not torch.equal(run(seed=2).dW, r.dW)


def test_published_defaults(monkeypatch):
    calls = []
    S = sd_symbols(1, 3, 4, generator=_g(0))

    def recording(*args, **kw):
        calls.append(args)
        return sd_test_batch(*args, **kw)

    monkeypatch.setattr(_sd_structured, "sd_test_batch", recording)
    r = train_gamma_mlp_sd(S, None, None, 1.0, width=8, n_steps=2001, batch_size=4,
                           protocol="published", generator=_g(1))
    assert r.eval_steps.tolist() == [1000, 2000, 2001]  # every 1000 steps and after the last
    assert all(c[1] == 1024 for c in calls) and len(calls) == 3


def test_validation():
    S, n, xt, yt, gam = _setup()
    kw = dict(generator=_g(), width=4, n_steps=1)
    with pytest.raises(ValueError, match="protocol must be one of"):
        train_gamma_mlp_sd(S, xt, yt, 1.0, protocol="paper", **kw)
    with pytest.raises(ValueError, match="method must be one of"):
        train_gamma_mlp_sd(S, xt, yt, 1.0, method="fast", **kw)
    with pytest.raises(ValueError, match="n_test=64 applies to protocol='published'"):
        train_gamma_mlp_sd(S, xt, yt, 1.0, n_test=64, **kw)
    with pytest.raises(ValueError, match="x_test and y_test must be None with protocol='published'"):
        train_gamma_mlp_sd(S, xt, yt, 1.0, protocol="published", **kw)
    with pytest.raises(ValueError, match="x_test must be a tensor of shape"):
        train_gamma_mlp_sd(S, None, None, 1.0, **kw)
    with pytest.raises(ValueError, match=r"x_test must have shape \(E, n, 2d\) = \(4, n, 24\)"):
        train_gamma_mlp_sd(S, xt[..., :10], yt, 1.0, **kw)
    with pytest.raises(ValueError, match="n_symbols must lie in"):
        train_gamma_mlp_sd(S, xt, yt, 1.0, n_symbols=[2, 3, 9, 2], **kw)
    with pytest.raises(ValueError, match="gamma must be a scalar or have one entry per member"):
        train_gamma_mlp_sd(S, xt, yt, [1.0, 2.0], **kw)
    with pytest.raises(ValueError, match="symbols must be a tensor of shape"):
        train_gamma_mlp_sd(S[0], xt, yt, 1.0, **kw)
    with pytest.raises(ValueError, match="n_test must be >= 2"):
        train_gamma_mlp_sd(S, None, None, 1.0, protocol="published", n_test=1, **kw)
    with pytest.raises(TypeError, match="throw must be a bool"):
        train_gamma_mlp_sd(S, xt, yt, 1.0, throw=1, **kw)
    with pytest.raises(TypeError, match="size must be an integer"):
        truncated_normal((2, 1.5), generator=_g())
    with pytest.raises(ValueError, match="bound must be a finite real number > 0"):
        truncated_normal_std(-1.0)


def test_divergence_is_flagged_per_member():
    S, n, xt, yt, _ = _setup()
    gam = torch.tensor([1.0, 1.0, 1.0, 1.0])
    r = train_gamma_mlp_sd(S * torch.tensor([1.0, 1.0, 1e30, 1.0])[:, None, None], xt, yt, gam,
                           width=8, n_steps=3, eval_every=1, generator=_g(), dtype=torch.float32)
    assert r.diverged.tolist() == [False, False, True, False]
    with pytest.raises(DivergedError, match="train_gamma_mlp_sd: non-finite loss or parameters at step 1"):
        train_gamma_mlp_sd(S * 1e30, xt, yt, gam, width=8, n_steps=3, eval_every=1, generator=_g(),
                           throw=True)


def test_steps_is_a_deprecated_alias_of_n_steps():
    """train_gamma_mlp and train_gamma_mlp_sd: ``steps=`` warns naming ``n_steps=`` and trains the
    same networks; passing both raises TypeError."""
    S, n, xt, yt, gam = _setup()
    kw = dict(d_eff=D_SYM, width=8, eval_every=2, generator=None)

    def dense(**k):
        return train_gamma_mlp(lambda g: sd_train_batch(S, 8, n_symbols=n, generator=g), xt, yt, gam,
                               **{**kw, "generator": _g(1)}, **k)

    def structured(**k):
        return train_gamma_mlp_sd(S, xt, yt, gam, n_symbols=n, batch_size=8, width=8, eval_every=2,
                                  generator=_g(1), **k)

    for fn in (dense, structured):
        new = fn(n_steps=3)
        with pytest.warns(DeprecationWarning, match="steps= is deprecated.*use n_steps="):
            old = fn(steps=3)
        assert old.steps == new.steps == 3
        torch.testing.assert_close(old.dW, new.dW, rtol=0, atol=0)
        torch.testing.assert_close(old.test_accuracy, new.test_accuracy, rtol=0, atol=0)
        with pytest.raises(TypeError, match="pass n_steps= only"):
            fn(steps=3, n_steps=3)
