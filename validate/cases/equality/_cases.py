"""Validation cases for equality reasoning (seed 003, Tong & Pehlevan).

* ``equality/rich-accuracy-vs-L``   rich (γ = 1) SD accuracy vs the number of training symbols
  against Eq. (3) / (C.18) (Fig. 1c, Fig. C3); the richest γ against the symmetric max-margin
  network (theory/_sd_max_margin.py, derived here).
* ``equality/dimension-dependence`` rich vs lazy accuracy vs input dimension d at fixed L
  (Fig. 1f): rich flat (Eq. 3 has no d), lazy falling.
* ``equality/ntk-vs-lazy``         lazy networks of growing width vs the NTK machine (App. D).
* ``equality/noisy-bayes``          noisy SD: rich networks vs the Bayes-optimal accuracy under
  the generalising prior, with the memorising prior for contrast (Fig. 2, App. E).
* ``equality/weight-alignment``     parallel / antiparallel hidden weights and the readout ratio
  (Fig. 1a/d, Theorem 1, App. C.4.3), plus the Markov-walker μ of App. C.4.
* ``equality/activation-change``    relative activation change ∝ γ and independent of d with
  the 1/√d output factor, ∝ 1/√d without it (App. F, Fig. F1).
* ``equality/vision``               PSVRT and Pentomino accuracy vs the number of training
  patterns / shapes, rich vs lazy (Fig. 3b, 3e).

Accuracies are "best over training" (the seed's measure, App. G.1: the maximum of the test
accuracy over the evaluations, selected on the test set itself) unless a quantity says "final".
Standard errors are seed-to-seed (one ensemble member per seed). On a CPU the cases run with one
torch thread: the tensors are small and intra-op threads mostly add contention on a 2-core box.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from richlazy.simulate.models._gamma_mlp import lazy_gamma, train_gamma_mlp
from richlazy.simulate.tasks._same_different import (
    pentomino_batch,
    psvrt_batch,
    psvrt_patterns,
    psvrt_test_batch,
    sd_symbols,
    sd_test_batch,
    sd_train_batch,
    split_pentominoes,
)
from richlazy.theory.equality._bayes import bayes_accuracy, bayes_generalising_accuracy
from richlazy.theory.equality._max_margin_limit import sd_max_margin_accuracy
from richlazy.theory.equality._ntk import (
    kernel_gradient_descent,
    kernel_regression_predict,
    sd_training_pairs,
)
from richlazy.theory.equality._solutions import (
    rich_accuracy,
    simulate_markov_walkers,
)

from ...core._compare import compare
from ...core._registry import CaseContext, CaseOutcome, case_threads, register_case
from ...richness._weights import (
    alignment_by_readout_sign,
    alignment_of_top_units,
    readout_ratio,
    relative_activation_change,
    weight_alignment,
)

Z = 3.0  # number of standard errors for statistical comparisons


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


_threads = case_threads  # shared helper: one torch thread on the CPU


def _gen(ctx: CaseContext, k: int) -> torch.Generator:
    return torch.Generator(device=ctx.device).manual_seed(1_000_003 * ctx.seed + k)


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _mean_se(x, axis=-1):
    x = np.asarray(x, dtype=float)
    n = x.shape[axis]
    return x.mean(axis), x.std(axis, ddof=1) / math.sqrt(n)


def _train_sd(ctx, k, d, gammas, Ls, *, width, steps, alpha0=0.1, sigma2=0.0, n_test=1000,
              batch=128, eval_every=100):
    """One ensemble: member e has richness gammas[e] and its own L = Ls[e] symbols."""
    g = _gen(ctx, k)
    E = len(gammas)
    S = sd_symbols(E, max(Ls), d, generator=g)
    n_sym = torch.tensor(Ls, device=ctx.device)
    xt, yt = sd_test_batch(E, n_test, d, sigma2=sigma2, generator=g)
    res = train_gamma_mlp(
        lambda gg: sd_train_batch(S, batch, n_symbols=n_sym, sigma2=sigma2, generator=gg),
        xt, yt, torch.tensor(gammas, dtype=torch.float64), d_eff=d, width=width, alpha0=alpha0,
        steps=steps, eval_every=eval_every, generator=g)
    return res, S.cpu(), xt.cpu(), yt.cpu()


def _band(L):
    """Half-width of the Eq. (C.18) accuracy band spanned by the seed's measured readout ratio:
    ρ = 1.56 ± 0.09 for L >= 3 and 0.99 ± 0.07 for L = 2 (two standard deviations, App. C.4.3)."""
    if L == 2:
        rhos, ref = (0.92, 1.06), 1.0
    else:
        rhos, ref = (1.47, 1.65), 1.5
    base = rich_accuracy(L, ref)
    return max(abs(rich_accuracy(L, r) - base) for r in rhos)


# --------------------------------------------------------------------------------------------
# rich accuracy vs L (Fig. 1c, C3)
# --------------------------------------------------------------------------------------------

_RICH_CFG = {
    "quick": dict(d=64, width=128, Ls=[2, 3, 4, 6], seeds=4, steps=1500, n_test=1000,
                  gammas=[1.0, 0.1]),
    "full": dict(d=256, width=1024, Ls=[2, 3, 4, 5, 6, 7, 8, 10, 12], seeds=6, steps=25000,
                 n_test=2048, gammas=[10**0.8, 10**0.4, 1.0, 0.5, 0.25, 0.1, 0.05, None]),
}


@register_case("equality/rich-accuracy-vs-L",
               description="rich (γ=1) SD test accuracy vs number of training symbols L "
                           "against Eq. (3)/(C.18) of seed 003 (Fig. 1c, C3), and the richest "
                           "γ against the symmetric max-margin limit (derived here). Full suite "
                           "only: the trained networks stay 1.5-7 points below Eq. (3) for "
                           "L >= 3 and do not show the max-margin parity zig-zag (open "
                           "disagreements, see docs/equality.md).",
               suites=("full",))
def case_rich_accuracy(ctx: CaseContext) -> CaseOutcome:
    cfg = _RICH_CFG[ctx.size]
    d, Ls, seeds = cfg["d"], cfg["Ls"], cfg["seeds"]
    gams = [lazy_gamma(d) if gm is None else gm for gm in cfg["gammas"]]
    members = [(gm, L) for gm in gams for L in Ls for _ in range(seeds)]
    with _threads(ctx):
        res, _S, _x, _y = _train_sd(ctx, 1, d, [m[0] for m in members], [m[1] for m in members],
                                    width=cfg["width"], steps=cfg["steps"],
                                    n_test=cfg["n_test"],
                                    eval_every=max(cfg["steps"] // 30, 1))
    shape = (len(gams), len(Ls), seeds)
    best = res.best_accuracy.numpy().reshape(shape)
    final = res.final_accuracy.numpy().reshape(shape)
    ratio = readout_ratio(res.a).reshape(shape)
    i1 = gams.index(1.0)
    q = []
    for j, L in enumerate(Ls):
        m, se = _mean_se(best[i1, j])
        band = _band(L)
        q.append(compare(
            f"best accuracy, gamma=1, L={L}", float(rich_accuracy(L)), m, stderr=se, kind="abs",
            tol=band + Z * se,
            note=(f"Eq. (3) (rho=1.5; L=2: 3/4). Tolerance = the C.18 band spanned by the seed's "
                  f"measured readout ratio (+-{band:.3f}) plus {Z:g} seed-to-seed SE; the "
                  f"derivation is a heuristic with no other quantified error"),
        ))
    # second rich-limit prediction (derived here): the symmetric max-margin network, which
    # gradient descent on the logistic loss approaches at infinite width and time
    i_rich = int(np.argmax(gams))
    Lfine = np.arange(2, max(Ls) + 1)
    mm = {int(L): sd_max_margin_accuracy(int(L), n_test=20000, seed=ctx.seed) for L in Lfine}
    for j, L in enumerate(Ls):
        m, se = _mean_se(best[i_rich, j])
        q.append(compare(
            f"best accuracy, gamma={gams[i_rich]:.3g}, L={L} vs symmetric max-margin",
            mm[L].accuracy, m, stderr=math.hypot(se, mm[L].stderr), kind="z", tol=Z,
            note=("theory = test accuracy of the variation-norm max-margin ReLU network, the "
                  "infinite-width, long-time limit of the richest networks here (derived in "
                  "richlazy, theory/_sd_max_margin.py; Monte Carlo SE included)"),
        ))
    # figure
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5, 3.6))
    ax.plot(Lfine, rich_accuracy(Lfine), "r--", label="Eq. (3) (theory)")
    ax.plot(Lfine, [mm[int(L)].accuracy for L in Lfine], "m-.", lw=1,
            label="symmetric max-margin (derived here)")
    for i, gm in enumerate(gams):
        m, se = _mean_se(best[i], axis=-1)
        lab = "lazy" if gm < 1e-4 else f"γ = {gm:.3g}"
        ax.errorbar(Ls, m, yerr=se, marker="o", ms=3, capsize=2, label=lab + " (best)")
    m_f, _ = _mean_se(final[i1], axis=-1)
    ax.plot(Ls, m_f, "k:", marker="x", ms=4, label="γ = 1 (final)")
    ax.axhline(0.5, color="gray", lw=0.6)
    ax.set_xlabel("# training symbols L")
    ax.set_ylabel("test accuracy")
    ax.set_title(f"rich SD accuracy (d={d}, m={cfg['width']})", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(ctx.out_dir / "rich_accuracy_vs_L.png", dpi=120)
    plt.close(fig)
    params = dict(cfg, gammas=gams,
                  best_mean=best.mean(-1).tolist(), final_mean=final.mean(-1).tolist(),
                  final_same_mean=res.final_accuracy_same.numpy().reshape(shape).mean(-1).tolist(),
                  final_different_mean=(res.final_accuracy_different.numpy().reshape(shape)
                                        .mean(-1).tolist()),
                  readout_ratio_mean=ratio.mean(-1).tolist(), theory=rich_accuracy(Ls).tolist(),
                  max_margin_accuracy=[mm[int(L)].accuracy for L in Ls])
    notes = ("Best-over-training accuracy (selected on the test set) is compared; final accuracies "
             "and the measured readout ratios |a-|/|a+| are in params. The seed's Eq. (3) uses "
             "rho = 1.5 and assumes same pairs are always classified correctly.")
    return CaseOutcome(q, ["rich_accuracy_vs_L.png"], params, notes)


# --------------------------------------------------------------------------------------------
# dimension dependence, rich vs lazy (Fig. 1f) with the NTK machine
# --------------------------------------------------------------------------------------------

_DIM_CFG = {
    "quick": dict(ds=[8, 16, 32, 64], L=16, seeds=3, width_rich=128, width_lazy=512, steps=800,
                  n_test=1000),
    "full": dict(ds=[16, 32, 64, 128, 256, 512], L=16, seeds=6, width_rich=1024,
                 width_lazy=1024, steps=25000, n_test=2048),
}


def _slopes(acc, logd):
    """Per-seed least-squares slopes of accuracy vs log2 d; acc (n_d, seeds)."""
    X = logd - logd.mean()
    return (X[:, None] * (acc - acc.mean(0))).sum(0) / (X**2).sum()


@register_case("equality/dimension-dependence",
               description="rich vs lazy SD accuracy vs input dimension at fixed L (Fig. 1f); "
                           "lazy network vs the infinite-width NTK machine (App. D)")
def case_dimension(ctx: CaseContext) -> CaseOutcome:
    cfg = _DIM_CFG[ctx.size]
    ds, L, seeds, steps = cfg["ds"], cfg["L"], cfg["seeds"], cfg["steps"]
    every = max(steps // 20, 1)
    rich = np.zeros((len(ds), seeds))
    lazy = np.zeros((len(ds), seeds))
    ntk_gd = np.zeros((len(ds), seeds))
    ntk_kr = np.zeros((len(ds), seeds))
    with _threads(ctx):
        for i, d in enumerate(ds):
            r, _, _, _ = _train_sd(ctx, 100 + i, d, [1.0] * seeds, [L] * seeds,
                                   width=cfg["width_rich"], steps=steps, n_test=cfg["n_test"],
                                   eval_every=every)
            rich[i] = r.best_accuracy.numpy()
            lz, S, xt, yt = _train_sd(ctx, 200 + i, d, [lazy_gamma(d)] * seeds, [L] * seeds,
                                      width=cfg["width_lazy"], steps=steps,
                                      n_test=cfg["n_test"], eval_every=every)
            lazy[i] = lz.best_accuracy.numpy()
            for s in range(seeds):
                x, y, p = sd_training_pairs(S[s].double().numpy())
                xs, ys = xt[s].double().numpy(), yt[s].numpy() > 0.5
                f, _ = kernel_gradient_descent(x, y, xs, p=p, lr=0.1, steps=steps,
                                               record_every=every)
                ntk_gd[i, s] = ((f > 0) == ys).mean(1).max()
                fk = kernel_regression_predict(x, y, xs, kernel="ntk")
                ntk_kr[i, s] = ((fk > 0) == ys).mean()
    logd = np.log2(ds)
    s_rich = _slopes(rich, logd)
    q = []
    m, se = _mean_se(s_rich)
    q.append(compare("rich: slope of best accuracy per doubling of d", 0.0, m, stderr=max(se, 1e-4),
                     kind="z", tol=Z,
                     note="Eq. (3)/(C.18) has no d: slope 0; z-test with seed-to-seed SE "
                          "(floored at 1e-4 when all seeds are at 100%)"))
    drop = lazy[0] - lazy[-1]
    m, se = _mean_se(drop)
    q.append(compare(f"lazy: accuracy drop from d={ds[0]} to d={ds[-1]} (> 0)", 0.0, m,
                     stderr=se, kind="gt", tol=Z,
                     note="Theorem 2 / Fig. 1f: lazy accuracy decays with d at fixed L; "
                          "one-sided 3-SE test"))
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5, 3.6))
    for arr, lab, st in ((rich, "rich γ=1 (net)", "o-"), (lazy, "lazy (net)", "s-"),
                         (ntk_gd, "NTK machine, same steps", "k--"),
                         (ntk_kr, "NTK ridgeless regression", "k:")):
        mm, ss = _mean_se(arr)
        ax.errorbar(ds, mm, yerr=ss, fmt=st, ms=3, capsize=2, label=lab)
    ax.axhline(float(rich_accuracy(L)), color="r", lw=0.8, ls="--", label="Eq. (3)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("input dimension d")
    ax.set_ylabel("test accuracy (best over training)")
    ax.set_title(f"L = {L}", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(ctx.out_dir / "dimension_dependence.png", dpi=120)
    plt.close(fig)
    params = dict(cfg, rich=rich.mean(1).tolist(), lazy=lazy.mean(1).tolist(),
                  ntk_gd=ntk_gd.mean(1).tolist(), ntk_ridgeless=ntk_kr.mean(1).tolist())
    notes = ("The infinite-width NTK machine trained for the same steps and the ridgeless NTK "
             "regression (all L^2 distinct pairs, +-1 targets) are shown for reference; the "
             "lazy network vs NTK comparison is the case equality/ntk-vs-lazy.")
    return CaseOutcome(q, ["dimension_dependence.png"], params, notes)


# --------------------------------------------------------------------------------------------
# lazy network vs the NTK machine (App. D), as a function of width
# --------------------------------------------------------------------------------------------

_NTK_CFG = {
    "quick": dict(d=32, L=16, widths=[128, 512, 2048], seeds=3, steps=800, n_test=1000),
    "full": dict(d=128, L=32, widths=[256, 1024, 4096, 16384], seeds=6, steps=25000,
                 n_test=2048),
}


@register_case("equality/ntk-vs-lazy",
               description="lazy (γ=1e-5/√d) networks of growing width vs the infinite-width NTK "
                           "machine and NTK ridgeless regression on the SD task (App. D)")
def case_ntk_vs_lazy(ctx: CaseContext) -> CaseOutcome:
    cfg = _NTK_CFG[ctx.size]
    d, L, seeds, steps, widths = cfg["d"], cfg["L"], cfg["seeds"], cfg["steps"], cfg["widths"]
    every = max(steps // 20, 1)
    lazy = np.zeros((len(widths), seeds))
    ntk_gd = np.zeros(seeds)
    ntk_kr = np.zeros(seeds)
    with _threads(ctx):
        for i, m in enumerate(widths):
            # the same symbols and test pairs for every width (generator re-seeded identically
            # for the data; the weights differ because the width differs)
            g = _gen(ctx, 800)
            S = sd_symbols(seeds, L, d, generator=g)
            xt, yt = sd_test_batch(seeds, cfg["n_test"], d, generator=g)
            r = train_gamma_mlp(lambda gg, S=S: sd_train_batch(S, 128, generator=gg), xt, yt,
                                lazy_gamma(d), d_eff=d, width=m, steps=steps, eval_every=every,
                                generator=_gen(ctx, 810 + i))
            lazy[i] = r.best_accuracy.numpy()
        S, xt, yt = S.cpu(), xt.cpu(), yt.cpu()
        for s in range(seeds):
            x, y, p = sd_training_pairs(S[s].double().numpy())
            xs, ys = xt[s].double().numpy(), yt[s].numpy() > 0.5
            f, _ = kernel_gradient_descent(x, y, xs, p=p, lr=0.1, steps=steps, record_every=every)
            ntk_gd[s] = ((f > 0) == ys).mean(1).max()
            ntk_kr[s] = ((kernel_regression_predict(x, y, xs, kernel="ntk") > 0) == ys).mean()
    gap = ntk_gd[None, :] - lazy  # (widths, seeds)
    q = []
    m_, se = _mean_se(gap[0] - gap[-1])
    q.append(compare(f"NTK-machine minus lazy-network accuracy gap shrinks from m={widths[0]} "
                     f"to m={widths[-1]} (> 0)", 0.0, m_, stderr=max(se, 1e-3), kind="gt", tol=Z,
                     note="App. D: the lazy network tends to the NTK machine as m -> infinity "
                          "(same symbols, test pairs and number of steps); one-sided 3-SE test"))
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5, 3.4))
    mm, ss = _mean_se(lazy)
    ax.errorbar(widths, mm, yerr=ss, fmt="s-", ms=3, capsize=2, label="lazy network (best)")
    ax.axhline(ntk_gd.mean(), color="k", ls="--", label="NTK machine, same steps (best)")
    ax.axhline(ntk_kr.mean(), color="k", ls=":", label="NTK ridgeless regression")
    ax.axhline(float(rich_accuracy(L)), color="r", ls="--", lw=0.8, label="rich, Eq. (3)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("width m")
    ax.set_ylabel("test accuracy")
    ax.set_title(f"lazy SD, d = {d}, L = {L}", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(ctx.out_dir / "ntk_vs_lazy.png", dpi=120)
    plt.close(fig)
    params = dict(cfg, lazy=lazy.mean(1).tolist(), ntk_machine=float(ntk_gd.mean()),
                  ntk_ridgeless=float(ntk_kr.mean()),
                  gap_at_largest_width=float(gap[-1].mean()))
    notes = ("Residual gap at the largest width is in params: the informative part of the NTK "
             "between fresh and training pairs is O(1/sqrt(d)) while the finite-width kernel "
             "fluctuates by O(1/sqrt(m)), so m >> d is needed for the lazy network to reach "
             "the NTK limit.")
    return CaseOutcome(q, ["ntk_vs_lazy.png"], params, notes)


# --------------------------------------------------------------------------------------------
# noisy SD vs Bayes (Fig. 2)
# --------------------------------------------------------------------------------------------

_BAYES_CFG = {
    "quick": dict(d=16, sigma2s=[1.0, 4.0], Ls=[4, 64, 1024], seeds=3, width=128, steps=4000,
                  n_test=1000),
    "full": dict(d=64, sigma2s=[0.5, 1.0, 2.0, 4.0], Ls=[2, 4, 16, 64, 256, 1024, 4096],
                 seeds=6, width=1024, steps=25000, n_test=2048),
}


@register_case("equality/noisy-bayes",
               description="noisy SD: rich networks vs the Bayes-optimal accuracy under the "
                           "generalising and memorising priors (Fig. 2, App. E)")
def case_noisy_bayes(ctx: CaseContext) -> CaseOutcome:
    cfg = _BAYES_CFG[ctx.size]
    d, Ls, seeds = cfg["d"], cfg["Ls"], cfg["seeds"]
    net = np.zeros((len(cfg["sigma2s"]), len(Ls), seeds))
    mem = np.zeros_like(net)
    gen = []
    with _threads(ctx):
        for i, s2 in enumerate(cfg["sigma2s"]):
            members = [L for L in Ls for _ in range(seeds)]
            res, S, xt, yt = _train_sd(ctx, 300 + i, d, [1.0] * len(members), members,
                                       width=cfg["width"], steps=cfg["steps"], sigma2=s2,
                                       n_test=cfg["n_test"], eval_every=max(cfg["steps"] // 20, 1))
            net[i] = res.best_accuracy.numpy().reshape(len(Ls), seeds)
            gen.append(bayes_generalising_accuracy(d, s2)["accuracy"])
            for e, L in enumerate(members):
                x = xt[e].double().numpy()
                r = bayes_accuracy(x[:, :d], x[:, d:], yt[e].numpy(), prior="memorising",
                                   sigma2=s2, symbols=S[e, :L].double().numpy())
                mem.flat[i * len(Ls) * seeds + e] = r["accuracy"]
    q = []
    for i, s2 in enumerate(cfg["sigma2s"]):
        m, se = _mean_se(net[i, -1])
        se_tot = math.sqrt(se**2 + gen[i] * (1 - gen[i]) / cfg["n_test"])
        q.append(compare(f"rich best accuracy vs Bayes (generalising), sigma2={s2:g}, "
                         f"L={Ls[-1]}", gen[i], m, stderr=se_tot, kind="z", tol=Z,
                         note="Fig. 2: rich networks reach the generalising-prior Bayes accuracy "
                              "at large L; SE = seed-to-seed plus the binomial test-set error "
                              "(best-over-training is selected on the same test set)"))
        mm, sm = _mean_se(net[i, 0] - mem[i, 0])
        q.append(compare(f"rich minus memorising-Bayes accuracy, sigma2={s2:g}, L={Ls[0]} (> 0)",
                         0.0, mm, stderr=sm, kind="gt", tol=Z,
                         note="Fig. 2: rich networks generalise beyond the memorising prior "
                              "(paired per seed on the same test pairs); one-sided 3-SE test"))
    plt = _plt()
    fig, axes = plt.subplots(1, len(cfg["sigma2s"]), figsize=(3.2 * len(cfg["sigma2s"]), 3.2),
                             sharey=True)
    for i, s2 in enumerate(cfg["sigma2s"]):
        ax = np.atleast_1d(axes)[i]
        m, se = _mean_se(net[i])
        ax.errorbar(Ls, m, yerr=se, fmt="o-", ms=3, label="rich γ=1 (best)")
        ax.axhline(gen[i], color="r", ls="--", label="Bayes gen")
        ax.plot(Ls, mem[i].mean(-1), "b--", label="Bayes mem")
        ax.set_xscale("log", base=2)
        ax.set_title(f"σ² = {s2:g}, d = {d}", fontsize=9)
        ax.set_xlabel("# symbols L")
    np.atleast_1d(axes)[0].set_ylabel("test accuracy")
    np.atleast_1d(axes)[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(ctx.out_dir / "noisy_bayes.png", dpi=120)
    plt.close(fig)
    params = dict(cfg, net=net.mean(-1).tolist(), bayes_mem=mem.mean(-1).tolist(),
                  bayes_gen=gen)
    return CaseOutcome(q, ["noisy_bayes.png"], params,
                       "Bayes-generalising accuracy is exact (1-D quadrature); Bayes-memorising "
                       "is evaluated on the networks' own test pairs and training symbols.")


# --------------------------------------------------------------------------------------------
# weight alignment, readout ratio, Markov walkers (Fig. 1a/d, Theorem 1, App. C.4)
# --------------------------------------------------------------------------------------------

_ALIGN_CFG = {
    "quick": dict(d=64, width=128, L_big=32, seeds=5, steps=1200, walker_units=100,
                  walker_steps=120),
    "full": dict(d=512, width=1024, L_big=32, seeds=10, steps=25000, walker_units=100,
                 walker_steps=400),
}


@register_case("equality/weight-alignment",
               description="parallel/antiparallel hidden weights, readout ratio |a-|/|a+| and the "
                           "Markov-walker mu of seed 003 (Fig. 1a/d, Theorem 1, App. C.4). Full "
                           "suite only: the readout-weighted alignment of all units stays at "
                           "+-0.92 vs the max-margin +-1 (open disagreement, see docs/equality.md).",
               suites=("full",))
def case_alignment(ctx: CaseContext) -> CaseOutcome:
    cfg = _ALIGN_CFG[ctx.size]
    d, Lb, seeds = cfg["d"], cfg["L_big"], cfg["seeds"]
    gams = [1.0] * (2 * seeds) + [lazy_gamma(d)] * seeds
    Ls = [Lb] * seeds + [2] * seeds + [Lb] * seeds
    with _threads(ctx):
        res, _, _, _ = _train_sd(ctx, 400, d, gams, Ls, width=cfg["width"], steps=cfg["steps"],
                                 n_test=500, eval_every=cfg["steps"])
    # Theorem 1 / App. C.4 speak about the learned part of the weights (the Markov walkers start
    # from ω = 0, App. C.3 step 1): use the displacement ΔW = W − W0 for the rich networks; the
    # lazy check uses the full weights W (as in Fig. 1d).
    d_pos, d_neg = alignment_by_readout_sign(res.dW, res.a)
    a_pos, a_neg = alignment_by_readout_sign(res.W, res.a)
    ratio = readout_ratio(res.a)
    rich, rich2, lazy = slice(0, seeds), slice(seeds, 2 * seeds), slice(2 * seeds, 3 * seeds)
    q = []
    m, se = _mean_se(d_pos[rich])
    q.append(compare(f"rich L={Lb}: |a|-weighted alignment of ΔW halves, a>0 units", 1.0, m,
                     stderr=se, kind="abs", tol=0.05,
                     note="Theorem 1 / App. C.4: parallel halves (+1); tolerance 0.05 for the "
                          "sign-gradient and mean-field approximations of App. C.2-C.4"))
    m, se = _mean_se(d_neg[rich])
    q.append(compare(f"rich L={Lb}: |a|-weighted alignment of ΔW halves, a<0 units", -1.0, m,
                     stderr=se, kind="abs", tol=0.05,
                     note="Theorem 1 / App. C.4: antiparallel halves (-1); same tolerance"))
    t_pos, t_neg = alignment_of_top_units(res.dW, res.a, fraction=0.1)
    for vals, th, lab in ((t_pos, 1.0, "a>0"), (t_neg, -1.0, "a<0")):
        m, se = _mean_se(vals[rich])
        q.append(compare(f"rich L={Lb}: alignment of ΔW halves, top 10% |a| units, {lab}", th, m,
                         stderr=se, kind="abs", tol=0.05,
                         note="the dominant (longest-trained) units, where the long-time limit "
                              "of App. C.4 shows first; same tolerance as above"))
    lz = np.r_[a_pos[lazy], a_neg[lazy]]
    m, se = _mean_se(lz)
    q.append(compare("lazy: |a|-weighted alignment (both signs)", 0.0, m, stderr=se, kind="z",
                     tol=Z, note="lazy weights stay at their random initialisation: no "
                                 "parallel/antiparallel structure (Fig. 1d)"))
    m, se = _mean_se(ratio[rich2])
    q.append(compare("rich L=2: readout ratio |a-|/|a+|", 1.0, m, stderr=se, kind="z", tol=Z,
                     note="App. C.4.3: ratio 1 at L=2 (seed: 0.99 +- 0.07); z-test with the "
                          "seed-to-seed SE"))
    m, se = _mean_se(ratio[rich])
    q.append(compare(f"rich L={Lb}: readout ratio |a-|/|a+|", 1.5, m, stderr=se, kind="z",
                     tol=Z,
                     note="the rho = 1.5 of Eq. (3) (seed: 1.56 +- 0.09 measured at L=32; the "
                          "heuristic of App. C.4.3 says ~2); z-test with the seed-to-seed SE"))
    w_same = simulate_markov_walkers(16, readout_sign=1, n_units=cfg["walker_units"],
                                     batch_size=512, steps=cfg["walker_steps"], seed=ctx.seed)
    w_diff = simulate_markov_walkers(16, readout_sign=-1, n_units=cfg["walker_units"],
                                     batch_size=512, steps=cfg["walker_steps"], seed=ctx.seed + 1)
    q.append(compare("Markov walkers (a>0, L=16): mu", 0.5, w_same.mu, kind="abs", tol=0.056,
                     note="self-consistent mu = 1/2 (C.9 = -C.10); seed's simulation 0.508 +- 0.056"))
    q.append(compare("Markov walkers (a<0, L=16): mu", 0.5, w_diff.mu, kind="abs", tol=0.009,
                     note="self-consistent mu = n+/n -> 1/2 (C.16 = -C.17); seed: 0.499 +- 0.009"))
    # figure: alignment vs readout, rich and lazy
    cos = weight_alignment(res.W)
    a = res.a.numpy()
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(7, 3))
    axes[0].scatter(a[0], cos[0], s=4)
    axes[0].set_title(f"rich γ=1, L={Lb}", fontsize=9)
    axes[1].scatter(a[2 * seeds], cos[2 * seeds], s=4, color="C1")
    axes[1].set_title("lazy", fontsize=9)
    for ax in axes:
        ax.set_xlabel("readout a_i")
        ax.set_ylim(-1.05, 1.05)
    axes[0].set_ylabel("v¹·v²/(‖v¹‖‖v²‖)")
    fig.tight_layout()
    fig.savefig(ctx.out_dir / "weight_alignment.png", dpi=120)
    plt.close(fig)
    params = dict(cfg, readout_ratio_rich=ratio[rich].tolist(),
                  full_w_alignment_rich=[float(a_pos[rich].mean()), float(a_neg[rich].mean())],
                  dw_alignment_rich=[float(d_pos[rich].mean()), float(d_neg[rich].mean())],
                  readout_ratio_L2=ratio[rich2].tolist(),
                  walker_alignment_same=float(np.nanmean(w_same.alignment)),
                  walker_alignment_diff=float(np.nanmean(w_diff.alignment)))
    return CaseOutcome(q, ["weight_alignment.png"], params, "")


# --------------------------------------------------------------------------------------------
# activation change vs γ and d (App. F, Fig. F1)
# --------------------------------------------------------------------------------------------

_ACT_CFG = {
    "quick": dict(gammas=[1e-3, 1e-2, 1e-1], ds=[16, 64, 256], L=16, width=128, steps=100,
                  seeds=2),
    "full": dict(gammas=[1e-4, 1e-3, 1e-2, 1e-1, 1.0], ds=[128, 256, 512, 1024], L=16,
                 width=1024, steps=1000, seeds=4),
}


@register_case("equality/activation-change",
               description="relative activation change ∝ γ, independent of d with the 1/√d "
                           "output factor and ∝ 1/√d without it (App. F, Fig. F1)")
def case_activation_change(ctx: CaseContext) -> CaseOutcome:
    cfg = _ACT_CFG[ctx.size]
    gams, ds, seeds = cfg["gammas"], cfg["ds"], cfg["seeds"]
    ch = np.zeros((2, len(ds), len(gams), seeds))  # [with 1/√d, without]
    with _threads(ctx):
        for i, d in enumerate(ds):
            for w, d_eff in enumerate((float(d), 1.0)):
                g = _gen(ctx, 500 + 10 * i + w)
                E = len(gams) * seeds
                S = sd_symbols(1, cfg["L"], d, generator=g).expand(E, -1, -1).contiguous()
                xt, yt = sd_test_batch(E, 256, d, generator=g)
                gam = torch.tensor([gm for gm in gams for _ in range(seeds)], dtype=torch.float64)
                r = train_gamma_mlp(lambda gg, S=S: sd_train_batch(S, 128, generator=gg), xt, yt,
                                    gam, d_eff=d_eff, width=cfg["width"], steps=cfg["steps"],
                                    eval_every=cfg["steps"], generator=g)
                ch[w, i] = relative_activation_change(r.W0, r.dW, xt.cpu()).reshape(len(gams),
                                                                                   seeds)
    lg, ld = np.log(gams), np.log(ds)
    q = []
    # slope vs γ at the smallest d, per seed
    sl = [np.polyfit(lg, np.log(ch[0, 0, :, s]), 1)[0] for s in range(seeds)]
    q.append(compare(f"slope of log activation change vs log gamma (d={ds[0]})", 1.0,
                     float(np.mean(sl)), kind="abs", tol=0.1,
                     note="App. F: change = O(gamma); exact proportionality in the lazy "
                          "(linearised) limit, O(gamma) corrections at gamma = 0.1"))
    for w, lab, th in ((0, "with 1/sqrt(d)", 0.0), (1, "without 1/sqrt(d)", -0.5)):
        sl = [np.polyfit(ld, np.log(ch[w, :, 0, s]), 1)[0] for s in range(seeds)]
        q.append(compare(f"exponent of d in activation change, {lab} (gamma={gams[0]:g})", th,
                         float(np.mean(sl)), kind="abs", tol=0.15,
                         note="App. F (F.3) and Fig. F1: d-independent with the prefactor, "
                              "~d^-1/2 without; tolerance for the O(1) kernel structure that "
                              "still depends weakly on d"))
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(7, 3), sharey=True)
    for w, title in ((0, "with 1/√d"), (1, "without 1/√d")):
        for i, d in enumerate(ds):
            axes[w].loglog(gams, ch[w, i].mean(-1), "o-", ms=3, label=f"d = {d}")
        axes[w].set_title(title, fontsize=9)
        axes[w].set_xlabel("γ")
    axes[0].set_ylabel("⟨|Δw·x|⟩ / ⟨|w₀·x|⟩")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(ctx.out_dir / "activation_change.png", dpi=120)
    plt.close(fig)
    return CaseOutcome(q, ["activation_change.png"], dict(cfg, change=ch.mean(-1).tolist()), "")


# --------------------------------------------------------------------------------------------
# PSVRT and Pentomino (Fig. 3b, 3e)
# --------------------------------------------------------------------------------------------

_VIS_CFG = {
    "quick": dict(psvrt_patch=4, psvrt_patches=3, psvrt_ns=[8, 32, 128], pento_patches=2,
                  pento_ns=[4, 10], seeds=3, pento_seeds=5, width=128, steps=1500, n_test=500),
    "full": dict(psvrt_patch=5, psvrt_patches=5, psvrt_ns=[16, 32, 64, 128, 256, 512, 1024],
                 pento_patches=2, pento_ns=[2, 4, 8, 10, 12, 14, 16], seeds=6, pento_seeds=6,
                 width=512, steps=100000, n_test=1024),
}


def _vision_run(ctx, k, gammas, sample, xt, yt, cfg):
    return train_gamma_mlp(sample, xt, yt, torch.tensor(gammas, dtype=torch.float64), d_eff=1.0,
                           width=cfg["width"], alpha0=0.5, steps=cfg["steps"],
                           eval_every=max(cfg["steps"] // 20, 1), generator=_gen(ctx, k))


@register_case("equality/vision",
               description="PSVRT and Pentomino same-different: rich vs lazy accuracy vs the "
                           "number of training patterns / shapes (Fig. 3b, 3e)")
def case_vision(ctx: CaseContext) -> CaseOutcome:
    cfg = _VIS_CFG[ctx.size]
    seeds = cfg["seeds"]
    gams = [1.0, 1e-5]
    q, out = [], {}
    with _threads(ctx):
        # PSVRT: every member its own training pattern set; test patterns exclude all of them
        ps, npch, ns = cfg["psvrt_patch"], cfg["psvrt_patches"], cfg["psvrt_ns"]
        members = [(gm, n) for gm in gams for n in ns for _ in range(seeds)]
        E = len(members)
        g = _gen(ctx, 600)
        pats = psvrt_patterns(E * max(ns), ps, generator=g).reshape(E, max(ns), ps, ps)
        n_pat = torch.tensor([n for _, n in members], device=ctx.device)
        used = torch.cat([pats[e, :n] for e, (_, n) in enumerate(members)])
        xt, yt = psvrt_test_batch(E, cfg["n_test"], patch_size=ps, n_patches=npch, exclude=used,
                                  generator=g)
        r = _vision_run(ctx, 601, [m[0] for m in members],
                        lambda gg: psvrt_batch(pats, 128, n_patches=npch, n_patterns=n_pat,
                                               generator=gg), xt, yt, cfg)
        out["psvrt"] = (ns, r.best_accuracy.numpy().reshape(len(gams), len(ns), seeds))
        # Pentomino: held-out shapes, blur on training images only
        ns, npch, seeds = cfg["pento_ns"], cfg["pento_patches"], cfg["pento_seeds"]
        members = [(gm, n) for gm in gams for n in ns for _ in range(seeds)]
        E = len(members)
        g = _gen(ctx, 700)
        train_ids, test_ids = [], []
        for _ in range(len(ns) * seeds):
            tr, te = split_pentominoes(max(ns), generator=g)
            train_ids.append(tr)
            test_ids.append(te)
        train_ids = torch.stack(train_ids * len(gams))
        test_ids = torch.stack(test_ids * len(gams))
        n_sh = torch.tensor([n for _, n in members], device=ctx.device)
        # test shapes: the ones never trained on (18 - max(ns) held out per member)
        xt, yt = pentomino_batch(test_ids, cfg["n_test"], n_patches=npch, generator=g)
        r = _vision_run(ctx, 701, [m[0] for m in members],
                        lambda gg: pentomino_batch(train_ids, 128, n_patches=npch, n_shapes=n_sh,
                                                   blur_sigma=0.5, generator=gg), xt, yt, cfg)
        out["pentomino"] = (ns, r.best_accuracy.numpy().reshape(len(gams), len(ns), seeds))
    for task, (ns, acc) in out.items():
        # the claim holds at every n: average the paired rich-lazy gap over the n grid per seed
        m, se = _mean_se((acc[0] - acc[1]).mean(0))
        q.append(compare(f"{task}: rich minus lazy best accuracy, mean over n = {ns} (> 0)",
                         0.0, m, stderr=max(se, 1e-3), kind="gt", tol=Z,
                         note="Fig. 3b/3e: richer models learn with fewer training patterns / "
                              "shapes; per-seed gap averaged over the n grid, one-sided 3-SE test"))
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(7, 3), sharey=True)
    for ax, (task, (ns, acc)) in zip(axes, out.items(), strict=True):
        for i, lab in enumerate(("rich γ=1", "lazy γ=1e-5")):
            m, se = _mean_se(acc[i])
            ax.errorbar(ns, m, yerr=se, fmt="o-", ms=3, capsize=2, label=lab)
        ax.set_xscale("log", base=2)
        ax.set_title(task, fontsize=9)
        ax.set_xlabel("# training patterns" if task == "psvrt" else "# training shapes")
        ax.axhline(0.5, color="gray", lw=0.6)
    axes[0].set_ylabel("test accuracy (best)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(ctx.out_dir / "vision.png", dpi=120)
    plt.close(fig)
    params = dict(cfg, **{f"{t}_best": a.mean(-1).tolist() for t, (_, a) in out.items()})
    return CaseOutcome(q, ["vision.png"], params,
                       "Image tasks drop the 1/sqrt(d) factor (d_eff = 1, alpha = gamma^2 alpha0, "
                       "alpha0 = 0.5). Pentomino members use the first n of their training shapes; "
                       "test images use the 18 - max(n) shapes never trained on.")
