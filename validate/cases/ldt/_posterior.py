"""Validation cases for seed 002 (Rubin, Davidovich, Ringel, *Mitigating the Curse of Detail*).

Batched Langevin ensembles of two-layer erf networks on Gaussian inputs with the target
He_3(w*.x)/sqrt(6) (App. B.3, App. F) are compared with the LDT
(:func:`richlazy.theory.ldt_two_layer_erf`) and the adaptive-kernel closure
(:func:`richlazy.theory.ak_two_layer_erf`).  The alignment of a sampled network is computed exactly on
the Gaussian test measure from its weights (closed-form erf-Hermite overlaps), so it carries no
test-set noise.  The Claim (ii) feature-propagation protocol (App. C.5) runs in NumPy.

Sizes: every hyper-parameter of the paper's experiments is unknown (spec 7); "quick" uses tiny
networks (d = N = 12) on the CPU, "full" larger ones meant for a GPU.

Randomness: a Langevin ensemble is shared by every case that needs its configuration (computed
once per run through ``ctx.cache``); its torch stream belongs to the pseudo-case
``ldt/ensemble`` and is numbered by the configuration
(:func:`richlazy.validate.recipes.erf_ensemble`), so its result does not depend on which case
asks first.  Everything else draws from the case's own streams.
"""

from __future__ import annotations

import math

import numpy as np
from richlazy.theory import (
    ak_two_layer_erf,
    feature_propagation_rkhs,
    k_factor_two_layer_erf,
    ldt_two_layer_erf,
    outlier_threshold,
    tilted_overlap_density,
)

from ...core._compare import compare
from ...core._registry import CaseContext, CaseOutcome, register_case
from ...recipes import erf_ensemble
from ...stats import chain_mean_se, mean_se

SIZES = {
    "quick": dict(d=12, N=12, kappa=1.0, n_chains=32, n_steps=12_000, P_grid=(30, 60, 120, 240),
                  P_hist=(240, 480), dtype="float32"),
    "full": dict(d=48, N=48, kappa=1.0, n_chains=300, n_steps=60_000,
                 P_grid=(120, 240, 480, 960, 1920), P_hist=(960, 1920), dtype="float64"),
}
# --------------------------------------------------------------------------------------------
@register_case(
    "ldt/posterior-bound",
    description=(
        "Two-layer erf network, He_3 target: the posterior probability of alignment >= alpha "
        "from a Langevin ensemble never exceeds the LDT bound exp(P k/(2 kappa) - E(alpha)) "
        "(seed 002 eqs. 20, 25-26), in standard and mean-field scaling; alignment vs P with the "
        "AK curve and P_* as figure. E(alpha) is the Chernoff energy of the exact per-neuron "
        "CGF (ldt_two_layer_erf with perp='exact': |w_perp|^2 fluctuations integrated), which "
        "is a rigorous bound; the paper's eq. (36) energy is not (it exceeds -log Pr_prior by "
        "~17 % at d = N = 48, see ldt/prior-rate-eq36)."
    ),
)
def posterior_bound(ctx: CaseContext) -> CaseOutcome:
    cfg = SIZES[ctx.size]
    d, N, kappa = cfg["d"], cfg["N"], cfg["kappa"]
    alphas = (0.25, 0.5)
    quantities, curves = [], {}
    for chi, label in ((1.0, "standard"), (float(N), "mean-field")):
        k = k_factor_two_layer_erf(1.0, 1.0, chi=chi)
        # exact |w_perp|^2 fluctuations: E(alpha) is then a true Chernoff bound (eq. 36 is not)
        ldt = ldt_two_layer_erf(np.array(alphas), d, N, chi=chi, kappa=kappa, k=k, perp="exact",
                                throw=True)
        Ps = cfg["P_grid"] if chi == 1.0 else tuple(p // 2 for p in cfg["P_grid"][:3])
        rows = []
        for P in Ps:
            run = erf_ensemble(ctx, d=d, N=N, P=P, kappa=kappa, chi=chi, n_chains=cfg["n_chains"],
                            n_steps=cfg["n_steps"], dtype=cfg["dtype"], tag=label)
            A = run["A"]
            rows.append((P, *chain_mean_se(A)))
            for a_thr, E in zip(alphas, ldt.energy, strict=True):
                # per chain (= per training set) bound, averaged like the fraction itself
                log_bound = P * run["k"] / (2 * kappa) - E
                if np.all(log_bound >= 0):
                    continue  # vacuous
                hit = (A >= a_thr).astype(float)
                q, se = chain_mean_se(hit)
                bound = float(np.mean(np.exp(np.minimum(log_bound, 0.0))))
                excess = max(0.0, q - bound)
                res = 1.0 / (A.shape[0] * A.shape[1])
                quantities.append(compare(
                    f"{label} P={P}: excess of Pr_post[A>={a_thr}] over the LDT bound",
                    0.0, excess, stderr=se if se > 0 else None, kind="abs",
                    tol=3.0 * se + res,
                    note=f"LDT bound {bound:.2e} (its value depends on the sampled training "
                         "sets, so it is not part of the name); rigorous bound (Jensen + "
                         f"Chernoff, exact-CGF energy E = {E:.2f}): excess must be 0 up to 3 standard "
                         "errors across chains plus the resolution 1/(samples x chains)",
                ))
        curves[label] = (np.array(rows), ldt)
    with ctx.figure("ldt_posterior_bound.png", 1, 2, figsize=(10, 4)) as (_fig, axes):
        for ax, (label, (rows, ldt)) in zip(axes, curves.items(), strict=True):
            chi = 1.0 if label == "standard" else float(N)
            ax.errorbar(rows[:, 0], rows[:, 1], yerr=rows[:, 2], fmt="o",
                        label="Langevin ensemble")
            Pg = np.geomspace(rows[0, 0] / 2, rows[-1, 0] * 4, 60)
            ak = ak_two_layer_erf(Pg, d, N, kappa=kappa, chi=chi)
            ax.plot(Pg, ak.mean_alignment, "-", label="adaptive-kernel closure (App. G)")
            for a_thr, ps in zip(alphas, ldt.P_star, strict=True):
                ax.axvline(ps, ls=":", color="k")
                ax.text(ps, 0.95, f"P*({a_thr})", rotation=90, va="top", fontsize=8,
                        transform=ax.get_xaxis_transform())
            ax.set_xscale("log")
            ax.set_xlabel("P")
            ax.set_ylabel("alignment A_f")
            ax.set_title(f"d=N={d}, {label}")
            ax.legend(fontsize=8)
    return CaseOutcome(quantities, [],
                       params=dict(d=d, N=N, kappa=kappa, alphas=alphas, **{
                           k: v for k, v in cfg.items() if k in ("n_chains", "n_steps")}),
                       notes="E(alpha) and P_* = (2 kappa/k) E from the exact per-neuron CGF "
                             "(perp='exact'; the eq. (36) energy overestimates the prior rate and "
                             "would not give a rigorous bound). P_* is a lower bound on the "
                             "sample complexity; the AK curve is shown for reference (compared in "
                             "ldt/alignment-ak).")


# --------------------------------------------------------------------------------------------
@register_case(
    "ldt/alignment-ak",
    description=(
        "Mean alignment vs P of the Langevin ensemble against the adaptive-kernel closure "
        "A = <V>_t/(<V>_t + kappa/P) with the LDT tilt (App. G, eqs. 101-103), two-layer erf "
        "network with He_3 target, standard scaling."
        " Full suite only: the adaptive-kernel closure overestimates the sampled alignment "
        "(open disagreement, see docs/ldt.md)."
    ),
    suites=("full",),
)
def alignment_ak(ctx: CaseContext) -> CaseOutcome:
    cfg = SIZES[ctx.size]
    d, N, kappa = cfg["d"], cfg["N"], cfg["kappa"]
    quantities = []
    for P in cfg["P_hist"]:
        run = erf_ensemble(ctx, d=d, N=N, P=P, kappa=kappa, chi=1.0, n_chains=cfg["n_chains"],
                        n_steps=cfg["n_steps"], dtype=cfg["dtype"], tag="standard")
        m, se = chain_mean_se(run["A"])
        ak = ak_two_layer_erf(float(P), d, N, kappa=kappa)
        quantities.append(compare(
            f"mean alignment at P={P}", float(ak.mean_alignment), m, stderr=se, kind="rel",
            tol=0.3,
            note="population limit + weakly fluctuating |w|^2 + mean-field closure: relative "
                 "corrections of order 1/sqrt(d) ~ 0.3 at d = 12 expected a priori",
        ))
    return CaseOutcome(quantities, [], params=dict(d=d, N=N, kappa=kappa, P=cfg["P_hist"]))


# --------------------------------------------------------------------------------------------
@register_case(
    "ldt/tilted-histogram",
    description=(
        "Posterior histogram of the first-layer overlap w.w* of a Langevin ensemble against the "
        "LDT tilted density at alpha = the ensemble's mean alignment (seed 002 Fig. 2a, App. "
        "B.3); compared: outliers beyond 3 GP standard deviations per network (App. F rule)."
        " Full suite only: at the larger P the outlier count disagrees with the LDT prediction "
        "(open disagreement, see docs/ldt.md)."
    ),
    suites=("full",),
)
def tilted_histogram(ctx: CaseContext) -> CaseOutcome:
    cfg = SIZES[ctx.size]
    d, N, kappa = cfg["d"], cfg["N"], cfg["kappa"]
    thr = outlier_threshold(d)
    quantities = []
    with ctx.figure("ldt_tilted_histogram.png", 1, len(cfg["P_hist"]),
                    figsize=(5 * len(cfg["P_hist"]), 4), squeeze=False) as (_fig, axes):
        _tilted_histogram_panels(ctx, cfg, axes[0], thr, quantities)
    return CaseOutcome(quantities, [], params=dict(d=d, N=N, kappa=kappa, P=cfg["P_hist"]))


def _tilted_histogram_panels(ctx, cfg, axes, thr, quantities):
    d, N, kappa = cfg["d"], cfg["N"], cfg["kappa"]
    for ax, P in zip(axes, cfg["P_hist"], strict=True):
        run = erf_ensemble(ctx, d=d, N=N, P=P, kappa=kappa, chi=1.0, n_chains=cfg["n_chains"],
                        n_steps=cfg["n_steps"], dtype=cfg["dtype"], tag="standard")
        A_mean, _ = chain_mean_se(run["A"])
        ldt = ldt_two_layer_erf(max(A_mean, 1e-6), d, N, kappa=kappa)
        nout = (np.abs(run["wp"]) > thr).sum(-1).astype(float)  # (S, E)
        m, se = chain_mean_se(nout)
        quantities.append(compare(
            f"outliers per network at P={P}", float(ldt.n_outliers), m, stderr=se, kind="rel",
            tol=0.3,
            note="weakly fluctuating orthogonal part and finite-P effects: relative corrections "
                 "of order 1/sqrt(d) ~ 0.3 at d = 12 expected a priori",
        ))
        w = np.linspace(-2.5, 2.5, 801)
        ax.hist(run["wp"].ravel(), bins=120, range=(-2.5, 2.5), density=True, alpha=0.5,
                label="posterior (Langevin)")
        ax.plot(w, tilted_overlap_density(w, float(ldt.t_star), d, N), "r-",
                label=f"LDT tilt at alpha={A_mean:.2f}")
        akr = ak_two_layer_erf(float(P), d, N, kappa=kappa)
        ax.plot(w, tilted_overlap_density(w, float(akr.t), d, N), "g--", label="AK tilt t(P)")
        ax.set_yscale("log")
        ax.set_ylim(1e-4, None)
        ax.set_xlabel("w . w*")
        ax.set_title(f"d=N={d}, P={P}")
        ax.legend(fontsize=8)


# --------------------------------------------------------------------------------------------
FP_SIZES = {"quick": dict(d=20, N=1000, n=300, seeds=(0, 1, 2)),
            "full": dict(d=50, N=4000, n=1000, seeds=tuple(range(8)))}


@register_case(
    "ldt/feature-propagation",
    description=(
        "Claim (ii) protocol of App. C.5 (Fig. 5): GFL with amplification D in the second ReLU "
        "layer; RKHS norm of phi*^2 (mean removed) under the next kernel, predicted ∝ D^-2 for "
        "large D. Compared: fitted log-log slope over the largest D values."
        " Full suite only: the fitted slope disagrees with the reconstructed Claim (ii) D^-2 "
        "law (open disagreement, see docs/ldt.md)."
    ),
    suites=("full",),
)
def feature_propagation(ctx: CaseContext) -> CaseOutcome:
    cfg = FP_SIZES[ctx.size]
    D = np.array([0.0, 1, 3, 10, 30, 100, 300, 1000])
    # one independent replica per entry of cfg["seeds"], each on its own stream of this case
    norms = np.array([feature_propagation_rkhs(D, d=cfg["d"], N=cfg["N"], n=cfg["n"],
                                               seed=ctx.rng(s), rcond=1e-6).rkhs_norm
                      for s in cfg["seeds"]])
    big = D >= 100
    slopes = [np.polyfit(np.log(D[big]), np.log(r[big]), 1)[0] for r in norms]
    s_mean, s_se = (float(v) for v in mean_se(slopes))
    q = compare("slope of log RKHS norm of phi*^2 vs log D (D >= 100)", -2.0, s_mean,
                stderr=s_se, kind="abs", tol=0.3 + 3 * s_se,
                note="Claim (ii) predicts -n = -2; the base-kernel part of the norm bends the "
                     "slope at finite D (tolerance 0.3 fixed in advance) plus 3 standard errors "
                     "over seeds")
    with ctx.figure("ldt_feature_propagation.png", figsize=(5, 4)) as (_fig, ax):
        for r in norms:
            ax.loglog(D[1:], r[1:], "o-", alpha=0.6)
        ax.loglog(D[big], norms[:, big].mean(0)[0] * (D[big] / D[big][0]) ** -2.0, "k--",
                  label="D^-2")
        ax.set_xlabel("GFL amplification D")
        ax.set_ylabel("<phi*^2, K^-1, phi*^2>")
        ax.legend()
    return CaseOutcome([q], [], params=dict(D=D.tolist(), **{
        k: (list(v) if isinstance(v, tuple) else v) for k, v in cfg.items()}))


# --------------------------------------------------------------------------------------------
EXP_SIZES = {
    "quick": dict(ds=(6, 8, 12), P_factors=(4, 8, 16, 32, 64), n_chains=16, n_steps=6_000,
                  alpha=0.1, kappa=1.0, n_boot=200, dtype="float32"),
    "full": dict(ds=(16, 24, 32, 48), P_factors=(4, 8, 16, 32, 64, 128), n_chains=300,
                 n_steps=60_000, alpha=0.3, kappa=1.0, n_boot=1000, dtype="float64"),
}


def _crossing(Ps, A, alpha):
    """P at which the mean alignment first reaches alpha (log-linear interpolation); nan if
    never."""
    idx = np.flatnonzero(A >= alpha)
    if idx.size == 0 or idx[0] == 0:
        return math.nan
    i = idx[0]
    x0, x1 = math.log(Ps[i - 1]), math.log(Ps[i])
    f = (alpha - A[i - 1]) / (A[i] - A[i - 1])
    return math.exp(x0 + f * (x1 - x0))


@register_case(
    "ldt/pstar-exponent",
    description=(
        "Sample complexity vs d at N = d (seed 002 Fig. 2b): the P at which the ensemble's mean "
        "alignment reaches alpha, fitted as P ∝ d^s (bootstrap CI over chains), against the "
        "exponent of the exact LDT P_*(alpha) over the same d (asymptotically 1)."
    ),
    suites=("quick", "full"),
)
def pstar_exponent(ctx: CaseContext) -> CaseOutcome:
    cfg = EXP_SIZES[ctx.size]
    ds = np.array(cfg["ds"], dtype=float)
    alpha, kappa = cfg["alpha"], cfg["kappa"]
    rng = ctx.rng(0)  # bootstrap resampling
    per_d = []
    for d in cfg["ds"]:
        Ps = np.array([f * d for f in cfg["P_factors"]])
        chains = []
        for P in Ps:
            run = erf_ensemble(ctx, d=d, N=d, P=int(P), kappa=kappa, chi=1.0,
                            n_chains=cfg["n_chains"], n_steps=cfg["n_steps"], dtype=cfg["dtype"],
                            tag="dscan")
            chains.append(run["A"].mean(axis=0))  # (E,) per-chain means
        per_d.append((Ps, np.array(chains)))  # (n_P, E)

    def fit(samples):
        cross = [_crossing(Ps, c, alpha) for (Ps, _), c in zip(per_d, samples, strict=True)]
        cross = np.array(cross)
        ok = np.isfinite(cross)
        if ok.sum() < 2:
            return math.nan, cross
        return float(np.polyfit(np.log(ds[ok]), np.log(cross[ok]), 1)[0]), cross

    s_hat, cross = fit([c.mean(axis=1) for _, c in per_d])
    boots = []
    for _ in range(cfg["n_boot"]):
        res = []
        for _, c in per_d:
            idx = rng.integers(0, c.shape[1], c.shape[1])
            res.append(c[:, idx].mean(axis=1))
        s, _ = fit(res)
        if math.isfinite(s):
            boots.append(s)
    se = float(np.std(boots, ddof=1)) if len(boots) > 1 else math.nan
    ldt = [float(ldt_two_layer_erf(alpha, int(d), int(d), kappa=kappa, perp="exact").P_star) for d in ds]
    s_ldt = float(np.polyfit(np.log(ds), np.log(ldt), 1)[0])
    q = compare(f"exponent s of P(alpha={alpha}) ∝ d^s at N = d", s_ldt, s_hat,
                stderr=se if math.isfinite(se) and se > 0 else None,
                kind="z" if math.isfinite(se) and se > 0 else "abs", tol=3.0 if se > 0 else 0.3,
                note="3 bootstrap standard errors (chains resampled); the LDT exponent is taken "
                     "over the same d values, so finite-d drift is shared")
    with ctx.figure("ldt_pstar_exponent.png", figsize=(5, 4)) as (_fig, ax):
        _draw_pstar_exponent(ax, ds, cross, ldt, alpha, s_hat, se, s_ldt)
    return CaseOutcome([q], [],
                       params=dict(ds=list(cfg["ds"]), alpha=alpha, crossings=cross.tolist(),
                                   ldt_P_star=ldt))


def _draw_pstar_exponent(ax, ds, cross, ldt, alpha, s_hat, se, s_ldt):
    """Fig. 2b's axes: the ensembles' crossings and the exact LDT P_* against d (log-log), each
    with its fitted power law and exponent in the legend."""
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    grid = np.geomspace(ds[0], ds[-1], 50)
    ok = np.isfinite(cross)
    ax.loglog(ds, cross, "o", color="C0", label=f"simulation: P at A = {alpha}")
    if ok.sum() >= 2:
        c = np.polyfit(np.log(ds[ok]), np.log(cross[ok]), 1)
        ax.loglog(grid, np.exp(np.polyval(c, np.log(grid))), "-", color="C0", lw=1,
                  label=f"fit: P ∝ d^{s_hat:.2f} ± {se:.2f}")
    c = np.polyfit(np.log(ds), np.log(ldt), 1)
    ax.loglog(ds, ldt, "s", color="C1", label=f"exact LDT P_*(A = {alpha})")
    ax.loglog(grid, np.exp(np.polyval(c, np.log(grid))), "--", color="C1", lw=1,
              label=f"fit: P_* ∝ d^{s_ldt:.2f}")
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(ds)
    ax.set_xlabel("input dimension d (width N = d)")
    ax.set_ylabel("sample size P")
    ax.set_title("sample complexity vs d (seed 002, Fig. 2b)", fontsize=9)
    ax.legend(fontsize=7, frameon=False)


# --------------------------------------------------------------------------------------------
WIDTH_SIZES = {
    "quick": dict(d=8, P=160, widths=(8, 32), n_chains=8, n_steps=4_000, kappa=1.0,
                  dtype="float32"),
    "full": dict(d=32, P=1280, widths=(32, 128, 512, 2048), n_chains=300, n_steps=60_000,
                 kappa=1.0, dtype="float64"),
}


@register_case(
    "ldt/specialists-width",
    description=(
        "Number of specialists (outliers beyond 3 GP standard deviations, minus the GP "
        "expectation) vs width at fixed d and P (seed 002 Fig. 2c): fitted exponent of the count "
        "in N against the pattern prediction M ∝ sqrt(N/d) (exponent 1/2)."
    ),
    suites=("full",),
)
def specialists_width(ctx: CaseContext) -> CaseOutcome:
    cfg = WIDTH_SIZES[ctx.size]
    d, P, kappa = cfg["d"], cfg["P"], cfg["kappa"]
    thr = outlier_threshold(d)
    prior_tail = math.erfc(3.0 / math.sqrt(2.0))
    Ns = np.array(cfg["widths"], dtype=float)
    counts, ses, ldt_counts = [], [], []
    for N in cfg["widths"]:
        run = erf_ensemble(ctx, d=d, N=N, P=P, kappa=kappa, chi=1.0, n_chains=cfg["n_chains"],
                        n_steps=cfg["n_steps"], dtype=cfg["dtype"], tag="width")
        spec = (np.abs(run["wp"]) > thr).sum(-1) - N * prior_tail
        m, se = chain_mean_se(spec.astype(float))
        counts.append(m)
        ses.append(se)
        A_mean, _ = chain_mean_se(run["A"])
        ldt_counts.append(float(ldt_two_layer_erf(max(A_mean, 1e-6), d, N,
                                                  kappa=kappa).n_specialists))
    counts = np.array(counts)
    ok = counts > 0
    quantities = []
    if ok.sum() >= 2:
        X = np.log(Ns[ok])
        w = (counts[ok] / np.array(ses)[ok]) ** 2
        slope, cov = np.polyfit(X, np.log(counts[ok]), 1, w=np.sqrt(w), cov="unscaled") \
            if ok.sum() > 2 else (np.polyfit(X, np.log(counts[ok]), 1), None)
        s = float(slope[0])
        s_se = float(math.sqrt(cov[0, 0])) if cov is not None else None
        quantities.append(compare(
            "exponent of the specialist count in N", 0.5, s, stderr=s_se,
            kind="z" if s_se else "abs", tol=3.0 if s_se else 0.15,
            note="pattern heuristic M ∝ sqrt(N/d); 3 standard errors of the weighted fit"))
    with ctx.figure("ldt_specialists_width.png", figsize=(5, 4)) as (_fig, ax):
        ax.errorbar(np.sqrt(Ns / d), counts, yerr=ses, fmt="o", label="Langevin ensemble")
        ax.plot(np.sqrt(Ns / d), ldt_counts, "s--", label="LDT at the simulated alignment")
        ax.set_xlabel("sqrt(N/d)")
        ax.set_ylabel("specialists per network")
        ax.legend(fontsize=8)
    return CaseOutcome(quantities, [],
                       params=dict(d=d, P=P, widths=list(cfg["widths"]), counts=counts.tolist(),
                                   ldt_counts=ldt_counts))
