"""The pieces of the comparison of a seeded ReLU ensemble with an outlier-plus-bulk theory that
:mod:`._relu_rows` states as the rows of ``coding/relu-toy`` and ``coding/relu-correlated``: the
prior-initialised ensemble (which documents the coarsening), the figures, the notes and the rows'
tolerance notes.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..codes import code_label, neuron_codes, top_k_active
from ..core._sampling import sample_posterior
from ..observables import class_means
from ..stats import mean_se
from ._relu import OUTLIER_THRESHOLD, outlier_summary, relu_class_observer

__all__: list[str] = []  # private pieces of _relu_rows


#: ergodicity classes (compare(..., ergodicity=, reason=)). Outlier identities freeze (notes §5.1),
#: but no compared quantity depends on which neuron is an outlier: the chains start in the
#: theory's one-outlier-per-class state and sample it.
_OUTLIER_STATE = dict(ergodicity="mixing", reason=(
    "a split or lost outlier has equilibrium weight exp(-P (1 - rho_c) log 2) (notes §5.2), so the "
    "seeded chains stay in the one-outlier-per-class state, whose outlier count they sample"))


_OUTLIER_VALUES = dict(ergodicity="mixing", reason=(
    "outlier identities freeze, but the aggregated outlier (zbar_c, abar_c) is the same for every "
    "choice of them and relaxes within the state"))


_BULK = dict(ergodicity="mixing", reason="the bulk neurons are exchangeable with one readout law and "
             "no barrier between them (notes §5.2)")


def _figures(ctx, sol, summ, A_all, acts, labels, prior_summ, prior_steps, dt):
    """Draw the comparison's four figures; returns their file names."""
    root = math.sqrt(A_all.shape[-2])
    _readouts_figure(ctx, sol, A_all.reshape(-1, sol.a0.size), root)
    _raster_figure(ctx, acts, labels, sol.t.shape[0], root)
    _outlier_figure(ctx, sol, summ)
    _coarsening_figure(ctx, sol, prior_summ, prior_steps, dt)
    return ["readouts.png", "activation_raster.png", "outlier_readouts.png",
            "prior_init_coarsening.png"]


def _readouts_figure(ctx, sol, a, root):
    """Readouts ``a`` (samples x neurons, m): scatter on the sqrt(N) scale and bulk histograms."""
    m = sol.a0.size
    out = np.linalg.norm(a, axis=1) > OUTLIER_THRESHOLD * root
    with ctx.figure("readouts.png", 1, 1 + m, figsize=(3.6 * (1 + m), 3.2)) as (fig, axes):
        ax = axes[0]
        ax.scatter(a[~out, 0] / root, a[~out, 1] / root, s=2, c="0.6", label="bulk neurons")
        ax.scatter(a[out, 0] / root, a[out, 1] / root, s=6, c="C3", label="outliers (samples)")
        for i, c in enumerate(sol.outlier_classes):
            ax.plot(*sol.outlier_readouts[i, :2], "kx", ms=10, mew=2)
            ax.annotate(f"class {c}", sol.outlier_readouts[i, :2], xytext=(4, 4),
                        textcoords="offset points", fontsize=7)
        ax.plot(sol.a0[0] / root, sol.a0[1] / root, "k+", ms=10, mew=2,
                label="theory (x: outliers, +: a_0)")
        ax.set_xlabel("a^0 / sqrt(N)")
        ax.set_ylabel("a^1 / sqrt(N)")
        ax.legend(frameon=False, fontsize=7)
        for r in range(m):
            ax = axes[1 + r]
            ax.hist(a[~out, r], bins=60, density=True, color="0.7", label="bulk readouts")
            grid = np.linspace(a[~out, r].min(), a[~out, r].max(), 200)
            ax.plot(grid, sol.bulk_readout_density(grid, r), "C0", lw=1,
                    label=getattr(sol, "density_label", "theory (Laplace)"))
            ax.axvline(sol.a0[r], color="C0", ls="--", lw=1.5, label="theory a_0")
            ax.set_xlabel(f"bulk readout a^{r}")
        axes[1].legend(frameon=False, fontsize=7)


def _raster_figure(ctx, acts, labels, k, root):
    """Raster of the 9 most active neurons of one network (``acts`` (N, P)), sorted by code."""
    top = top_k_active(acts, 9)
    cmean = class_means(torch.as_tensor(acts[top].T), labels, k).numpy().T  # (9, k)
    codes = neuron_codes(cmean / root, threshold=OUTLIER_THRESHOLD)
    key = (codes * (1 << np.arange(k))).sum(-1)
    order = top[np.argsort(key, kind="stable")]
    with ctx.figure("activation_raster.png", figsize=(6.5, 3.2)) as (fig, ax):
        im = ax.imshow(acts[order], aspect="auto", cmap="viridis", interpolation="nearest")
        ax.set_yticks(range(9), [code_label(c) for c in codes[np.argsort(key, kind="stable")]],
                      fontsize=7)
        ax.set_xlabel("training input μ (sorted by class)")
        ax.set_ylabel("top-9 neurons (code)")
        fig.colorbar(im, ax=ax, label="relu(z)")


def _outlier_figure(ctx, sol, summ):
    """Per-class outlier readouts and preactivations, theory vs samples (a lost outlier: 0)."""
    m = sol.a0.size
    k = sol.t.shape[0]
    th = np.full((k, m), np.nan)
    zt = np.zeros(k)
    for i, c in enumerate(sol.outlier_classes):
        th[c] = sol.outlier_readouts[i]
        zt[c] = sol.outlier_preactivations[i]
    abar = np.where(np.isfinite(summ["abar"]), summ["abar"], 0.0)
    sm, se = mean_se(abar.mean(axis=0), axis=0)  # over chains
    zs = np.where(np.isfinite(summ["zbar"]), summ["zbar"], 0.0).mean(axis=(0, 1))
    x = np.arange(k * m)
    with ctx.figure("outlier_readouts.png", 1, 2, figsize=(9.5, 3.2),
                    gridspec_kw=dict(width_ratios=[3, 1])) as (fig, axes):
        axes[0].bar(x - 0.2, th.ravel(), 0.4, label="theory abar")
        axes[0].bar(x + 0.2, sm.ravel(), 0.4, yerr=2 * se.ravel(), capsize=2, label="samples (2 SE)")
        axes[0].set_xticks(x, [f"c{c},r{r}" for c in range(k) for r in range(m)], fontsize=7)
        axes[0].set_ylabel("outlier readout / sqrt(N)")
        axes[0].axhline(0, color="k", lw=0.5)
        axes[0].legend(frameon=False, fontsize=7)
        axes[1].bar(np.arange(k) - 0.2, zt, 0.4, label="theory")
        axes[1].bar(np.arange(k) + 0.2, zs, 0.4, label="samples")
        axes[1].set_xticks(range(k), [f"class {c}" for c in range(k)], fontsize=7)
        axes[1].set_ylabel("outlier preactivation / sqrt(N)")


def _coarsening_figure(ctx, sol, prior_summ, prior_steps, dt):
    """Coarsening of the prior-initialised chains, against paper time (``dt`` given) or steps."""
    k = sol.t.shape[0]
    tt = np.asarray(prior_steps) * (1 if dt is None else dt)
    xlabel = "sampler step" if dt is None else "paper time"
    with ctx.figure("prior_init_coarsening.png", 1, 2, figsize=(9, 3.2)) as (fig, axes):
        for c in range(k):
            axes[0].plot(tt, prior_summ["n_single"][..., c].mean(1), f"C{c}", label=f"class {c}")
            axes[1].plot(tt, prior_summ["s"][..., c].mean(1), f"C{c}")
            axes[1].axhline(sol.outlier_strength[c], color=f"C{c}", ls="--", lw=1)
        axes[0].axhline(1, color="k", ls="--", lw=1, label="theory (equilibrium)")
        axes[0].set_xlabel(xlabel)
        axes[0].set_ylabel("single-class outliers per network")
        axes[0].legend(frameon=False, fontsize=7)
        axes[1].set_xlabel(xlabel)
        axes[1].set_ylabel("s_c = sum zbar_c^2 (dashed: theory)")
        fig.suptitle("chains started from the prior (documented, not compared)", fontsize=9)


def _prior_verdict(n_last, s_ratio):
    """One sentence on the prior-initialised ensemble from its last record."""
    if np.all(np.abs(n_last - 1.0) < 0.01):
        txt = "they reached one outlier per class."
    else:
        txt = "not yet at one outlier per class (many smaller single-class outliers, coarsening)."
    lag = int(np.argmin(s_ratio))
    if s_ratio[lag] < 0.9:
        txt += (f" The condensate of class {lag} lags most (s_c / theory = {s_ratio[lag]:.2f}); the "
                "bulk then carries part of that class (cf. notes §10.7).")
    return txt


def _prior_samples(ctx, cfg, name, task, spec, m):
    """The prior-initialised ensemble (documented, not compared): its run and outlier summary."""
    P, T, dt = cfg["P"], cfg["T"], cfg["dt"]
    _, prior_run = sample_posterior(
        spec, task.X, task.Y, T=T, sigma_a2=1.0 / P, dt=dt, n_chains=cfg["prior_chains"],
        n_steps=cfg["prior_steps"], burn_in=cfg["prior_thin"] // 2, thin=cfg["prior_thin"],
        observe=relu_class_observer(task.labels, m), seed=ctx.child_seed(2), device=ctx.device,
        checkpoint_path=ctx.checkpoint_dir / "prior.pt", progress=ctx.progress,
        desc=f"{name} prior", sampler=cfg.get("prior_sampler", "ula"),
    )
    psmp = {key: v.double().numpy() for key, v in prior_run.samples.items()}
    return prior_run, outlier_summary(psmp["A"], psmp["zm"], psmp["cm"])


def _notes(cfg, sol, summ, psumm, run, prior_run):
    """The case's notes: theory values, outlier rule, both ensembles, verdict on the prior one."""
    T, dt = cfg["T"], cfg["dt"]
    prior_ula = cfg.get("prior_sampler", "ula") == "ula"
    gap = np.nanmedian(summ["gap"])
    pn_last = psumm["n_single"][-1].mean(0)
    ps_last = psumm["s"][-1].mean(0)
    pa0_last = psumm["a0"][-1].mean(0)
    return (
        f"Theory: {sol.message}; abar = {np.round(sol.outlier_readouts, 4).tolist()}, zbar = "
        f"{np.round(sol.outlier_preactivations, 4).tolist()}, a_0 = {np.round(sol.a0, 4).tolist()}, "
        f"M(t_c.a_0) = {np.round(sol.bulk_mean_activation, 4).tolist()}. Outlier detection: "
        f"|a_i| > {OUTLIER_THRESHOLD} sqrt(N); median gap (smallest outlier |a| / largest bulk |a|) "
        f"in the seeded ensemble {gap:.1f}. Seeded ensemble: {run.n_steps} steps x "
        f"{cfg['n_chains']} chains (amplitudes {list(cfg['amplitudes'])}), T={T}, dt={dt}, burn-in "
        f"{cfg['burn_in']}, {run.seconds:.1f} s. Prior-initialised ensemble "
        f"({cfg.get('prior_sampler', 'ula')}"
        f"{'' if prior_ula else ' with neuron rescaling moves'}, {prior_run.n_steps} steps x "
        f"{cfg['prior_chains']} chains, {prior_run.seconds:.1f} s): "
        f"single-class outliers per class (outlier rule above) first "
        f"{np.round(psumm['n_single'][0].mean(0), 1).tolist()}, max "
        f"{np.round(psumm['n_single'].mean(1).max(0), 1).tolist()}, last "
        f"{np.round(pn_last, 1).tolist()}; s_c last {np.round(ps_last, 3).tolist()} (theory "
        f"{np.round(sol.outlier_strength, 3).tolist()}); bulk a_0 last "
        f"{np.round(pa0_last, 3).tolist()}: " + _prior_verdict(pn_last, ps_last / sol.outlier_strength)
    )
