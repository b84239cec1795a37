"""Richness observables of seed 003 and the lazy-network ↔ NTK correspondence."""

import numpy as np
import pytest
import torch
from richlazy.simulate import (
    gamma_mlp_output,
    lazy_gamma,
    sd_symbols,
    sd_test_batch,
    sd_train_batch,
    train_gamma_mlp,
)
from richlazy.theory import handcrafted_solution, kernel_gradient_descent, sd_training_pairs
from richlazy.validate import richness

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _g(seed):
    return torch.Generator().manual_seed(seed)


def test_observables_on_the_handcrafted_solution():
    W, a = handcrafted_solution(5, 2.5)
    W, a = W[None], a[None]
    np.testing.assert_allclose(richness.weight_alignment(W), [[1, 1, -1, -1]])
    mp, mn = richness.alignment_by_readout_sign(W, a)
    np.testing.assert_allclose([mp[0], mn[0]], [1.0, -1.0])
    np.testing.assert_allclose(richness.readout_ratio(a), [2.5])
    # mixing in a perpendicular component lowers the alignment to the known cosine
    v = np.r_[np.ones(5), np.zeros(5)] + np.r_[np.zeros(5), np.r_[1.0, -1.0, 1.0, -1.0, 0.0]]
    assert richness.weight_alignment(v[None, None])[0, 0] == pytest.approx(0.0, abs=1e-15)


def test_alignment_of_top_units_selects_the_largest_readouts():
    # 10 positive units: the two largest |a| are parallel, the rest orthogonal halves
    d = 2
    par = np.r_[1.0, 0.0, 1.0, 0.0]
    orth = np.r_[1.0, 0.0, 0.0, 1.0]
    anti = np.r_[0.0, 1.0, 0.0, -1.0]
    W = np.stack([par, par] + [orth] * 8 + [anti] * 5)[None]
    a = np.r_[5.0, 4.0, np.ones(8), -np.r_[3.0, 1, 1, 1, 1]][None]
    tp, tn = richness.alignment_of_top_units(W, a, fraction=0.2)
    assert tp[0] == pytest.approx(1.0) and tn[0] == pytest.approx(-1.0)
    tp, _ = richness.alignment_of_top_units(W, a, fraction=1.0)
    assert tp[0] == pytest.approx(0.2)
    assert W.shape[-1] == 2 * d
    with pytest.raises(ValueError, match="fraction must be a number in"):
        richness.alignment_of_top_units(W, a, fraction=0.0)


def test_relative_changes_exact_values():
    W0 = torch.ones(2, 3, 4)
    dW = torch.stack([0.1 * torch.ones(3, 4), -0.5 * torch.ones(3, 4)])
    x = torch.ones(2, 5, 4)
    np.testing.assert_allclose(richness.relative_activation_change(W0, dW, x), [0.1, 0.5])
    np.testing.assert_allclose(richness.relative_weight_change(W0, dW), [0.1, 0.5])


def test_observable_validation():
    with pytest.raises(ValueError, match="W must have 3 dimensions"):
        richness.weight_alignment(np.ones((3, 4)))
    with pytest.raises(ValueError, match="even input dimension"):
        richness.weight_alignment(np.ones((1, 3, 5)))
    with pytest.raises(ValueError, match="positive and negative readouts"):
        richness.readout_ratio(np.ones((1, 4)))
    with pytest.raises(ValueError, match="a must have shape"):
        richness.alignment_by_readout_sign(np.ones((1, 3, 4)), np.ones((1, 2)))
    with pytest.raises(TypeError, match="W0 must be a torch tensor or numpy array"):
        richness.relative_weight_change([1.0], np.ones((1, 2, 2)))


def _lazy_runs(d, gammas, d_eff, steps=60, m=64, L=8, seed=0):
    S = sd_symbols(1, L, d, generator=_g(seed))
    xt, yt = sd_test_batch(1, 128, d, generator=_g(seed + 1))
    batches = [sd_train_batch(S, 64, generator=_g(1000 + t)) for t in range(steps)]
    out = []
    for gam in gammas:
        it = iter(batches)
        r = train_gamma_mlp(lambda g, it=it: next(it), xt, yt, gam, d_eff=d_eff, width=m,
                            n_steps=steps, eval_every=steps, generator=_g(seed + 2))
        out.append(richness.relative_activation_change(r.W0, r.dW, xt)[0])
    return np.array(out)


def test_activation_change_scales_with_gamma_and_not_with_d():
    # App. F / Fig. F1: relative activation change ∝ γ; with the 1/√d output factor it does not
    # depend on d, without it (d_eff = 1, α = γ²) it falls like 1/√d.
    gam = [1e-4, 1e-3]
    ch = _lazy_runs(16, gam, d_eff=16)
    assert ch[1] / ch[0] == pytest.approx(10.0, rel=0.02)
    ds = np.array([8, 32, 128])
    with_fac = np.array([_lazy_runs(int(d), [1e-3], d_eff=float(d))[0] for d in ds])
    without = np.array([_lazy_runs(int(d), [1e-3], d_eff=1.0)[0] for d in ds])
    slope_with = np.polyfit(np.log(ds), np.log(with_fac), 1)[0]
    slope_without = np.polyfit(np.log(ds), np.log(without), 1)[0]
    assert abs(slope_with) < 0.2
    assert slope_without == pytest.approx(-0.5, abs=0.2)


def test_lazy_network_converges_to_ntk_gradient_descent_with_width():
    # Full-batch training on the balanced population of distinct pairs: the lazy (γ = 1e-5/√d)
    # network is, up to O(1/√m) finite-width fluctuations of its tangent kernel, the kernel
    # machine of theory._equality_kernels.kernel_gradient_descent with lr = α₀.
    d, L, steps, alpha0 = 6, 4, 20, 0.1
    S = sd_symbols(1, L, d, generator=_g(3), dtype=torch.float64)
    x, y, _p = sd_training_pairs(S[0].numpy())
    reps = np.r_[np.full(L, L - 1), np.ones(L * (L - 1), dtype=int)]  # balanced population
    xb = torch.from_numpy(np.repeat(x, reps, axis=0))[None]
    yb = torch.from_numpy(np.repeat(y, reps))[None]
    xt, yt = sd_test_batch(1, 64, d, generator=_g(4), dtype=torch.float64)
    f_ker, _ = kernel_gradient_descent(np.repeat(x, reps, axis=0), np.repeat(y, reps),
                                       xt[0].numpy(), lr=alpha0, n_steps=steps)
    widths = np.array([256, 2048, 16384])
    errs = np.zeros((2, 3))
    for k, seed in enumerate((5, 6)):
        for j, m in enumerate(widths):
            gam = lazy_gamma(d)
            r = train_gamma_mlp(lambda g: (xb, yb), xt, yt, gam, d_eff=d, width=int(m),
                                alpha0=alpha0, n_steps=steps, eval_every=steps,
                                generator=_g(seed), dtype=torch.float64)
            f = gamma_mlp_output(xt, r.W0, r.a0, r.dW, r.da, torch.tensor([gam]), d)[0].numpy()
            errs[k, j] = np.sqrt(np.mean((f - f_ker[-1]) ** 2) / np.mean(f_ker[-1] ** 2))
    slope = np.polyfit(np.log(widths), np.log(errs.mean(0)), 1)[0]
    assert slope == pytest.approx(-0.5, abs=0.15)
    assert errs[:, -1].max() < 0.1
