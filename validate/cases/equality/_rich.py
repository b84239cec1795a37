"""Rich-regime cases of seed 003 (Tong & Pehlevan): accuracy vs the number of training symbols
against Eq. (3)/(C.18) and the symmetric max-margin limit, and the parallel / antiparallel weight
structure with the readout ratio and the Markov walkers of App. C.4.

* ``equality/rich-accuracy-vs-L``  (Fig. 1c, Fig. C3; full suite)
* ``equality/weight-alignment``    (Fig. 1a/d, Theorem 1, App. C.4; full suite)
"""

from __future__ import annotations

import math

import numpy as np
from richlazy.simulate import lazy_gamma
from richlazy.theory import rich_accuracy, sd_max_margin_accuracy, simulate_markov_walkers

from ...core._compare import compare
from ...core._registry import CaseContext, CaseOutcome, case_threads, register_case
from ...richness import (
    alignment_by_readout_sign,
    alignment_of_top_units,
    readout_ratio,
    weight_alignment,
)
from ...stats import mean_se
from ._common import Z, errorbar, train_sd


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
    with case_threads(ctx):
        res, _S, _x, _y = train_sd(ctx, 1, d, [m[0] for m in members], [m[1] for m in members],
                                   width=cfg["width"], steps=cfg["steps"], n_test=cfg["n_test"],
                                   eval_every=max(cfg["steps"] // 30, 1))
    shape = (len(gams), len(Ls), seeds)
    best = res.best_accuracy.numpy().reshape(shape)
    final = res.final_accuracy.numpy().reshape(shape)
    ratio = readout_ratio(res.a).reshape(shape)
    i1 = gams.index(1.0)
    q = []
    for j, L in enumerate(Ls):
        m, se = mean_se(best[i1, j])
        band = _band(L)
        q.append(compare(
            f"best accuracy, gamma=1, L={L}", float(rich_accuracy(L)), m, stderr=se, kind="abs",
            tol=band + Z * se,
            note=(f"Eq. (3) (rho=1.5; L=2: 3/4). Tolerance = the C.18 band spanned by the seed's "
                  f"measured readout ratio (+-{band:.3f}) plus {Z:g} seed-to-seed SE; the "
                  f"derivation is a heuristic with no other quantified error"),
        ))
    # second rich-limit prediction (derived here): the symmetric max-margin network, which
    # gradient descent on the logistic loss approaches at infinite width and time. One Monte
    # Carlo stream for every L (common random numbers across L).
    i_rich = int(np.argmax(gams))
    Lfine = np.arange(2, max(Ls) + 1)
    mm = {int(L): sd_max_margin_accuracy(int(L), n_test=20000, seed=ctx.child_seed(2))
          for L in Lfine}
    for j, L in enumerate(Ls):
        m, se = mean_se(best[i_rich, j])
        q.append(compare(
            f"best accuracy, gamma={gams[i_rich]:.3g}, L={L} vs symmetric max-margin",
            mm[L].accuracy, m, stderr=math.hypot(se, mm[L].stderr), kind="z", tol=Z,
            note=("theory = test accuracy of the variation-norm max-margin ReLU network, the "
                  "infinite-width, long-time limit of the richest networks here (derived in "
                  "richlazy, theory/equality/_max_margin_limit.py; Monte Carlo SE included)"),
        ))
    with ctx.figure("rich_accuracy_vs_L.png", figsize=(5, 3.6)) as (_fig, ax):
        ax.plot(Lfine, rich_accuracy(Lfine), "r--", label="Eq. (3) (theory)")
        ax.plot(Lfine, [mm[int(L)].accuracy for L in Lfine], "m-.", lw=1,
                label="symmetric max-margin (derived here)")
        for i, gm in enumerate(gams):
            lab = "lazy" if gm < 1e-4 else f"γ = {gm:.3g}"
            errorbar(ax, Ls, best[i], "o-", label=lab + " (best)")
        ax.plot(Ls, final[i1].mean(-1), "k:", marker="x", ms=4, label="γ = 1 (final)")
        ax.axhline(0.5, color="gray", lw=0.6)
        ax.set_xlabel("# training symbols L")
        ax.set_ylabel("test accuracy")
        ax.set_title(f"rich SD accuracy (d={d}, m={cfg['width']})", fontsize=9)
        ax.legend(fontsize=7)
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
    return CaseOutcome(q, [], params, notes)


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
    with case_threads(ctx):
        res, _, _, _ = train_sd(ctx, 400, d, gams, Ls, width=cfg["width"], steps=cfg["steps"],
                                n_test=500, eval_every=cfg["steps"])
    # Theorem 1 / App. C.4 speak about the learned part of the weights (the Markov walkers start
    # from ω = 0, App. C.3 step 1): use the displacement ΔW = W − W0 for the rich networks; the
    # lazy check uses the full weights W (as in Fig. 1d).
    d_pos, d_neg = alignment_by_readout_sign(res.dW, res.a)
    a_pos, a_neg = alignment_by_readout_sign(res.W, res.a)
    ratio = readout_ratio(res.a)
    rich, rich2, lazy = slice(0, seeds), slice(seeds, 2 * seeds), slice(2 * seeds, 3 * seeds)
    q = []
    m, se = mean_se(d_pos[rich])
    q.append(compare(f"rich L={Lb}: |a|-weighted alignment of ΔW halves, a>0 units", 1.0, m,
                     stderr=se, kind="abs", tol=0.05,
                     note="Theorem 1 / App. C.4: parallel halves (+1); tolerance 0.05 for the "
                          "sign-gradient and mean-field approximations of App. C.2-C.4"))
    m, se = mean_se(d_neg[rich])
    q.append(compare(f"rich L={Lb}: |a|-weighted alignment of ΔW halves, a<0 units", -1.0, m,
                     stderr=se, kind="abs", tol=0.05,
                     note="Theorem 1 / App. C.4: antiparallel halves (-1); same tolerance"))
    t_pos, t_neg = alignment_of_top_units(res.dW, res.a, fraction=0.1)
    for vals, th, lab in ((t_pos, 1.0, "a>0"), (t_neg, -1.0, "a<0")):
        m, se = mean_se(vals[rich])
        q.append(compare(f"rich L={Lb}: alignment of ΔW halves, top 10% |a| units, {lab}", th, m,
                         stderr=se, kind="abs", tol=0.05,
                         note="the dominant (longest-trained) units, where the long-time limit "
                              "of App. C.4 shows first; same tolerance as above"))
    m, se = mean_se(np.r_[a_pos[lazy], a_neg[lazy]])
    q.append(compare("lazy: |a|-weighted alignment (both signs)", 0.0, m, stderr=se, kind="z",
                     tol=Z, note="lazy weights stay at their random initialisation: no "
                                 "parallel/antiparallel structure (Fig. 1d)"))
    m, se = mean_se(ratio[rich2])
    q.append(compare("rich L=2: readout ratio |a-|/|a+|", 1.0, m, stderr=se, kind="z", tol=Z,
                     note="App. C.4.3: ratio 1 at L=2 (seed: 0.99 +- 0.07); z-test with the "
                          "seed-to-seed SE"))
    m, se = mean_se(ratio[rich])
    q.append(compare(f"rich L={Lb}: readout ratio |a-|/|a+|", 1.5, m, stderr=se, kind="z",
                     tol=Z,
                     note="the rho = 1.5 of Eq. (3) (seed: 1.56 +- 0.09 measured at L=32; the "
                          "heuristic of App. C.4.3 says ~2); z-test with the seed-to-seed SE"))
    walkers = dict(n_units=cfg["walker_units"], batch_size=512, n_steps=cfg["walker_steps"])
    w_same = simulate_markov_walkers(16, readout_sign=1, seed=ctx.rng(401), **walkers)
    w_diff = simulate_markov_walkers(16, readout_sign=-1, seed=ctx.rng(402), **walkers)
    q.append(compare("Markov walkers (a>0, L=16): mu", 0.5, w_same.mu, kind="abs", tol=0.056,
                     note="self-consistent mu = 1/2 (C.9 = -C.10); seed's simulation 0.508 +- 0.056"))
    q.append(compare("Markov walkers (a<0, L=16): mu", 0.5, w_diff.mu, kind="abs", tol=0.009,
                     note="self-consistent mu = n+/n -> 1/2 (C.16 = -C.17); seed: 0.499 +- 0.009"))
    # figure: alignment vs readout, rich and lazy
    cos = weight_alignment(res.W)
    a = res.a.numpy()
    with ctx.figure("weight_alignment.png", 1, 2, figsize=(7, 3)) as (_fig, axes):
        axes[0].scatter(a[0], cos[0], s=4)
        axes[0].set_title(f"rich γ=1, L={Lb}", fontsize=9)
        axes[1].scatter(a[2 * seeds], cos[2 * seeds], s=4, color="C1")
        axes[1].set_title("lazy", fontsize=9)
        for ax in axes:
            ax.set_xlabel("readout a_i")
            ax.set_ylim(-1.05, 1.05)
        axes[0].set_ylabel("v¹·v²/(‖v¹‖‖v²‖)")
    params = dict(cfg, readout_ratio_rich=ratio[rich].tolist(),
                  full_w_alignment_rich=[float(a_pos[rich].mean()), float(a_neg[rich].mean())],
                  dw_alignment_rich=[float(d_pos[rich].mean()), float(d_neg[rich].mean())],
                  readout_ratio_L2=ratio[rich2].tolist(),
                  walker_alignment_same=float(np.nanmean(w_same.alignment)),
                  walker_alignment_diff=float(np.nanmean(w_diff.alignment)))
    return CaseOutcome(q, [], params, "")
