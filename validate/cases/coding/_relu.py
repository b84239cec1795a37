"""Validation case for the sparse ReLU coding scheme of seed 000 (outliers plus a bulk).

Theory (notes §5.2 [RECON], :func:`richlazy.theory.solve_relu_toy`): on the orthogonal toy
task a one-hidden-layer ReLU network in the non-lazy regime (sigma_a^2 = 1/P) has one single-class
*outlier* neuron per class, with readout ``a = sqrt(N) abar_c`` and preactivation ``sqrt(N) zbar_c``
on the inputs of class c (zero on the others), and a *bulk* of neurons sharing the readout a_0
and the tilted preactivation law ``N(z|0,1) exp(h_c relu(z))`` with ``h_c = t_c . a_0``, whose
mean activation is ``M(h_c)``.

How the samples are read (:func:`outlier_summary`):

* a neuron is an **outlier** iff ``|a_i| > OUTLIER_THRESHOLD * sqrt(N)`` (the theory's smallest
  outlier has ``|abar| ~ 0.79``, the bulk readouts are O(1), i.e. O(1/sqrt(N)) on that scale);
  the gap between the smallest outlier and the largest bulk readout is reported;
* an outlier **codes** class c iff its class-c mean activation exceeds ``OUTLIER_THRESHOLD *
  sqrt(N)``; outliers coding exactly one class are the theory's single-class outliers;
* only the sum ``s_c = sum zbar_c^2`` over the outliers coding c is fixed by the theory
  (homogeneity), so per class the *aggregated* outlier is compared: ``zbar_c = sqrt(s_c)`` and
  ``abar_c = sum_i abar_i zbar_ic / sqrt(s_c)`` (for one outlier these are its own values; for
  outliers split along the same ray they are the values of the merged one);
* the bulk readout a_0 and the bulk mean activations are averages over the non-outlier neurons.

Sampling. ULA chains started from the prior do not reach the one-outlier-per-class state within
any affordable time (Gibbs-HMC chains do, in about 40 000 steps, and within about 5 000 with the
neuron rescaling moves of ``sample_neuron_scales``: docs/notes/validation_log.md): they first
grow many mid-sized single-class outliers (class 0, the large class,
lagging, partly carried by the bulk, as the notes §10.7 observed at N = 200), which then coarsen
slowly. The equilibrium comparison therefore uses chains started from a *seeded* state -- one
single-class neuron per class at generic amplitudes (readout ``amp sqrt(N) y_c / 2``, class-c
preactivation ``amp sqrt(N)``, two amplitudes, neither the theory's) on top of a prior draw -- which
must relax to the theory's magnitudes, directions and bulk values by themselves (quick size:
Gibbs-HMC, whose exact readout draw removes the stiff readout mode of ULA). A second small
ensemble from the prior documents the coarsening (figure and notes only: it is a statement about
the dynamics, not about the equilibrium the theory describes, so nothing of it is compared).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from richlazy.simulate import (
    NetworkPosterior,
    NetworkSpec,
    orthogonal_toy_task,
)
from richlazy.theory import solve_relu_toy, toy_class_targets

from ...codes import code_label, neuron_codes, top_k_active
from ...core._compare import compare
from ...core._registry import CaseContext, CaseOutcome, register_case
from ...core._sampling import sample_posterior
from ...observables import class_means
from ...stats import batch_means, mean_se

__all__ = ["OUTLIER_THRESHOLD", "chain_se", "outlier_summary", "relu_sampled_comparison",
           "seed_single_class_outliers", "seeded_relu_samples"]

#: outlier detection threshold in units of sqrt(N) (readout norm and coded-class activation)
OUTLIER_THRESHOLD = 0.25
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

RELU_TOY_SIZES = {
    # quick: Gibbs-HMC (exact readout draw + HMC of the hidden block, step size from T dt, adapted)
    # from the seeded state. Measured (seed 0, one thread): 8000 steps, 60 s, max split-R-hat
    # 1.036 (class-0 outlier readout, bulk activations); 16 000 steps, 120 s, still 1.032; ULA at
    # dt = 0.01 for 80 000 steps (59 s): 1.6.
    # full (ULA): the stiffest mode (an outlier's readout magnitude) has ULA eigenvalue
    # ~ dt rho_c P s_c (~0.8). Measured relaxation from the seeded state at T = 0.01: outliers within
    # ~100 paper-time units at N = 100 and ~300 at N = 200, the bulk readout a_0 within ~400 at
    # N = 100 and > 500 at N = 200; the full burn-in (1600 units) extrapolates that growth with N
    # (not measured at N = 500: ~40 ms per step on one CPU core, meant for a GPU).
    # the prior-initialised ensemble: Gibbs-HMC with the neuron rescaling moves reaches one
    # outlier per class in all of 4 test chains by step 5 250 (without them 2-3 per class remain at
    # 11 250 steps; ULA 60 000 steps: still coarsening)
    "quick": dict(N=100, P=100, N0=120, T=0.01, dt=0.01, n_chains=4, n_steps=8_000,
                  burn_in=4_000, thin=40, prior_chains=2, prior_steps=8_000, prior_thin=400,
                  prior_sampler="gibbs-hmc", amplitudes=(0.5, 2.0), sampler="gibbs-hmc"),
    "full": dict(N=500, P=500, N0=520, T=0.01, dt=0.002, n_chains=4, n_steps=1_200_000,
                 burn_in=800_000, thin=4_000, prior_chains=4, prior_steps=600_000,
                 prior_thin=20_000, amplitudes=(0.5, 2.0)),
}


# --------------------------------------------------------------------------------------------
# reading outliers and bulk off the samples
# --------------------------------------------------------------------------------------------


def outlier_summary(A, z_class_mean, act_class_mean, *, threshold: float = OUTLIER_THRESHOLD) -> dict:
    """Outliers and bulk of sampled ReLU networks (see the module doc for the rules).

    Parameters
    ----------
    A : (..., N, m)               readouts.
    z_class_mean : (..., N, k)    class means of the preactivations (k classes).
    act_class_mean : (..., N, k)  class means of the activations relu(z).
    threshold : float             outlier threshold in units of sqrt(N).

    Returns a dict of numpy arrays (leading shape ``...``):
    ``n_single`` (..., k) single-class outliers coding each class; ``n_other`` (...) outliers
    coding no class or several; ``s`` (..., k) sum of zbar_c^2 over the single-class outliers
    of c; ``zbar`` (..., k) = sqrt(s) (NaN where no outlier codes c); ``abar`` (..., k, m)
    aggregated sqrt(N)-scaled readout of the outliers coding c (NaN where none);
    ``a0`` (..., m) mean bulk readout; ``bulk_activation`` (..., k) mean bulk activation per
    class; ``gap`` (...) smallest outlier |a| over largest bulk |a| (NaN without outliers).
    """
    A = np.asarray(A, dtype=float)
    zm = np.asarray(z_class_mean, dtype=float)
    cm = np.asarray(act_class_mean, dtype=float)
    if A.ndim < 2 or zm.ndim != A.ndim or cm.shape != zm.shape or A.shape[:-1] != zm.shape[:-1]:
        raise ValueError(
            "A (..., N, m), z_class_mean and act_class_mean (..., N, k) must share the leading "
            f"shape, got {A.shape}, {zm.shape}, {cm.shape}"
        )
    if not (isinstance(threshold, (int, float)) and math.isfinite(threshold) and threshold > 0):
        raise ValueError(f"threshold must be a finite number > 0, got {threshold!r}")
    N = A.shape[-2]
    root = math.sqrt(N)
    norm = np.linalg.norm(A, axis=-1)  # (..., N)
    out = norm > threshold * root
    codes = neuron_codes(cm / root, threshold=threshold) & out[..., None]  # (..., N, k)
    single = out & (codes.sum(-1) == 1)
    onehot = codes & single[..., None]  # (..., N, k): single-class outlier coding c
    n_single = onehot.sum(-2)
    n_other = (out & ~single).sum(-1)
    zs = np.where(onehot, zm / root, 0.0)  # (..., N, k)
    s = (zs**2).sum(-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        zbar = np.where(n_single > 0, np.sqrt(s), np.nan)
        proj = np.einsum("...nk,...nm->...km", zs, A / root)
        abar = proj / zbar[..., None]
        bulk = ~out
        nb = bulk.sum(-1)
        a0 = np.where(bulk[..., None], A, 0.0).sum(-2) / nb[..., None]
        bulk_act = np.where(bulk[..., None], cm, 0.0).sum(-2) / nb[..., None]
        smallest = np.where(out, norm, np.inf).min(-1)
        largest = np.where(bulk, norm, 0.0).max(-1)
        gap = np.where(out.any(-1), smallest / largest, np.nan)
    return dict(n_single=n_single, n_other=n_other, s=s, zbar=zbar, abar=abar, a0=a0,
                bulk_activation=bulk_act, gap=gap)


# --------------------------------------------------------------------------------------------
# seeded initial state
# --------------------------------------------------------------------------------------------


def seed_single_class_outliers(post: NetworkPosterior, theta: torch.Tensor, labels, class_targets,
                               amplitudes) -> torch.Tensor:
    """Copy of ``theta`` (E, D) in which neuron c of chain e is a single-class neuron of class c:
    readout ``amp_e sqrt(N) y_c / 2`` and preactivation ``amp_e sqrt(N)`` on every input of class
    c, ``-|z|`` (its prior value made negative) on the other inputs. ``amplitudes`` are cycled
    over the chains. Needs a one-hidden-layer network whose first layer is sampled in the
    input-span coordinates (``project_inputs``), so that the preactivations on the training
    inputs can be set exactly.
    """
    if post.spec.L != 1 or not post.projected:
        raise ValueError("seed_single_class_outliers needs L = 1 and project_inputs=True "
                         f"(got L = {post.spec.L}, projected = {post.projected})")
    Yc = np.asarray(class_targets, dtype=float)
    lab = np.asarray(labels)
    k = Yc.shape[0]
    N, m = post.spec.N, post.spec.m
    if Yc.shape != (k, m) or lab.shape != (post.P,) or k > N:
        raise ValueError(f"class_targets must be (k, m = {m}) with k <= N and labels (P = "
                         f"{post.P},), got {Yc.shape} and {lab.shape}")
    amps = np.asarray(amplitudes, dtype=float).ravel()
    if amps.size == 0 or not np.all(np.isfinite(amps)) or np.any(amps <= 0):
        raise ValueError(f"amplitudes must be positive numbers, got {amplitudes!r}")
    theta = theta.clone()
    p = post.unflatten(theta)
    z = post.preactivations(theta)[0]  # (E, N, P)
    root = math.sqrt(N)
    for e in range(theta.shape[0]):
        amp = float(amps[e % amps.size])
        for c in range(k):
            target = -z[e, c].abs()
            target[torch.as_tensor(lab == c, device=z.device)] = amp * root
            # z = W1 R / sqrt(N0) on the training inputs (R: coordinates in span(X))
            w = torch.linalg.solve(post.input_coordinates.T, target * math.sqrt(post.spec.N0))
            p["W1"][e, c] = w
            p["A"][e, c] = torch.as_tensor(Yc[c] * 0.5 * amp * root, dtype=theta.dtype)
    return theta


def _run_seeded(spec, task, *, T, sigma_a2, dt, n_chains, n_steps, burn_in, thin, amplitudes,
                class_targets, observe, seed, device, checkpoint_path, progress, sampler="ula",
                name="coding/relu-toy", n_leapfrog=10):
    """Langevin ensemble from a prior draw with seeded single-class neurons (the same chain as
    :func:`sample_posterior`, different initial state)."""
    def init(post, theta):
        return seed_single_class_outliers(post, theta, task.labels, class_targets, amplitudes)

    return sample_posterior(
        spec, task.X, task.Y, T=T, sigma_a2=sigma_a2, dt=dt, n_chains=n_chains, n_steps=n_steps,
        burn_in=burn_in, thin=thin, observe=observe, seed=seed, device=device,
        checkpoint_path=checkpoint_path, progress=progress, desc=f"{name} seeded", init=init,
        init_label=f"seeded single-class outliers, amplitudes {list(amplitudes)}", sampler=sampler,
        n_leapfrog=n_leapfrog)


# --------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------


def _figures(ctx, sol, summ, A_all, acts, labels, prior_summ, prior_steps, dt):
    m = sol.a0.size
    k = sol.t.shape[0]
    N = A_all.shape[-2]
    root = math.sqrt(N)
    # 1. readouts: scatter (sqrt(N) scale) and bulk histograms
    a = A_all.reshape(-1, m)
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
    # 2. raster of the 9 most active neurons of one network, sorted by code
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
    # 3. per-class outlier readouts and preactivations, theory vs samples (a lost outlier
    # counts as 0, as in the compared quantities)
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
    # 4. coarsening of the prior-initialised chains (against paper time for ULA, steps otherwise)
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
    return ["readouts.png", "activation_raster.png", "outlier_readouts.png",
            "prior_init_coarsening.png"]


# --------------------------------------------------------------------------------------------
# the case
# --------------------------------------------------------------------------------------------


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


def chain_se(x):
    """Standard error of the grand mean of x (S, E): the larger of pooled batch means (4 per
    chain) and the chain-to-chain spread (the bulk readout drifts on ~100 paper-time units)."""
    x = np.asarray(x, dtype=float)
    _, se_b = batch_means(x, n_batches=4)
    per_chain = x.mean(0)
    se_c = float(mean_se(per_chain)[1]) if per_chain.size > 1 else 0.0
    return float(max(se_b, se_c))


@register_case(
    "coding/relu-toy",
    description=(
        "ReLU non-lazy network (L=1, sigma_a2=1/P) on the orthogonal toy task (classes "
        "[1/2,1/4,1/4], y+=1, y-=-1/2; Fig. 2 ReLU configuration of seed 000): sparse coding "
        "scheme. Outliers per class, sqrt(N)-scaled outlier readouts and preactivations, bulk "
        "readout a_0 and bulk mean activations M(t_c.a_0) from a Langevin ensemble (seeded with "
        "one generic single-class neuron per class) vs the reconstructed theory (notes §5.2); a "
        "prior-initialised ensemble documents the slow coarsening to that state."
    ),
    suites=("quick", "full"),
)
def relu_toy(ctx: CaseContext) -> CaseOutcome:
    cfg = RELU_TOY_SIZES[ctx.size]
    N, P, T = cfg["N"], cfg["P"], cfg["T"]
    m = 3
    ratios = (0.5, 0.25, 0.25)
    y_plus, y_minus = 1.0, -0.5
    Yc = toy_class_targets(m, y_plus=y_plus, y_minus=y_minus)
    task = orthogonal_toy_task(P, cfg["N0"], ratios=ratios, y_plus=y_plus, y_minus=y_minus,
                               seed=ctx.child_seed(0))
    sol = solve_relu_toy(np.array(ratios), Yc, P=P, throw=True)
    # a-priori systematic allowances (relative): finite width O(1/N) (3/N) plus the finite-T
    # shift of the output constraint (mean output Y - T t, notes S1), relative size
    # T max|t| / min|y|
    dT = T * float(np.max(np.abs(sol.t))) / min(abs(y_plus), abs(y_minus))
    note_rel = (f"rel tol = {3.0 / N + dT:.3f} + 4 SE/|theory|: systematic 3/N (N={N}, finite "
                f"width) + T max|t|/min|y| = {dT:.3f} (finite-T shift of the output constraint "
                "Y - T t); SE = max(batch means, chain-to-chain) over chains seeded at two generic "
                "amplitudes.")
    params = dict(cfg, m=m, ratios=list(ratios), y_plus=y_plus, y_minus=y_minus,
                  sigma_a2=1.0 / P, amplitudes=list(cfg["amplitudes"]),
                  outlier_threshold=OUTLIER_THRESHOLD)
    return relu_sampled_comparison(ctx, cfg, "coding/relu-toy", task, sol, Yc, dT=dT,
                                   note_rel=note_rel, params=params)


def _class_observer(labels, m):
    """The per-step record of the ReLU cases: readouts and the class means of every neuron's
    preactivations and activations."""
    def observe(post, theta, gen):
        z = post.preactivations(theta)[-1]  # (E, N, P)
        zm = class_means(z.transpose(1, 2), labels, m).transpose(1, 2)  # (E, N, k)
        cm = class_means(post.phi(z).transpose(1, 2), labels, m).transpose(1, 2)
        return {"A": post.unflatten(theta)["A"].clone(), "zm": zm, "cm": cm}

    return observe


def seeded_relu_samples(ctx, cfg, name, task, Yc, *, checkpoint="seeded.pt"):
    """The seeded ensemble of the L = 1 ReLU network of ``cfg`` (N, P, N0, T, dt, n_chains,
    n_steps, burn_in, thin, amplitudes, sampler) on ``task``, checkpointed in
    ``ctx.checkpoint_dir / checkpoint`` with seed stream 1. Returns ``(posterior, run, samples,
    summary)``: the recorded samples as float64 arrays and their :func:`outlier_summary`
    (leading shape (S, E))."""
    m = Yc.shape[1]
    spec = NetworkSpec(N0=cfg["N0"], N=cfg["N"], L=1, m=m, activation="relu", regime="nonlazy")
    post, run = _run_seeded(
        spec, task, T=cfg["T"], sigma_a2=1.0 / cfg["P"], dt=cfg["dt"], n_chains=cfg["n_chains"],
        n_steps=cfg["n_steps"], burn_in=cfg["burn_in"], thin=cfg["thin"],
        amplitudes=cfg["amplitudes"], class_targets=Yc,
        observe=_class_observer(task.labels, m), seed=ctx.child_seed(1), device=ctx.device,
        checkpoint_path=ctx.checkpoint_dir / checkpoint, progress=ctx.progress,
        sampler=cfg.get("sampler", "ula"), name=name, n_leapfrog=cfg.get("n_leapfrog", 10),
    )
    smp = {key: v.double().numpy() for key, v in run.samples.items()}
    return post, run, smp, outlier_summary(smp["A"], smp["zm"], smp["cm"])


def relu_sampled_comparison(ctx, cfg, name, task, sol, Yc, *, dT, note_rel, params):
    """Sample the L = 1 ReLU network of ``cfg`` on ``task`` from seeded single-class outliers
    (and from the prior, documented only) and compare outliers and bulk with the theory ``sol``
    (attributes of :class:`richlazy.theory.ReLUToySolution`: t, a0, outlier_classes,
    outlier_readouts, outlier_preactivations, outlier_strength, bulk_mean_activation,
    bulk_readout_density, message). ``dT``: relative finite-T allowance of the theory (0 when it
    contains T); ``note_rel``: the note on the relative tolerances."""
    N, P, T, dt = cfg["N"], cfg["P"], cfg["T"], cfg["dt"]
    m = Yc.shape[1]
    labels = task.labels
    post, run, smp, summ = seeded_relu_samples(ctx, cfg, name, task, Yc)
    _, prior_run = sample_posterior(
        post.spec, task.X, task.Y, T=T, sigma_a2=1.0 / P, dt=dt, n_chains=cfg["prior_chains"],
        n_steps=cfg["prior_steps"], burn_in=cfg["prior_thin"] // 2, thin=cfg["prior_thin"],
        observe=_class_observer(labels, m), seed=ctx.child_seed(2), device=ctx.device,
        checkpoint_path=ctx.checkpoint_dir / "prior.pt", progress=ctx.progress,
        desc=f"{name} prior", sampler=cfg.get("prior_sampler", "ula"),
    )
    psmp = {key: v.double().numpy() for key, v in prior_run.samples.items()}
    psumm = outlier_summary(psmp["A"], psmp["zm"], psmp["cm"])

    sys_rel = 3.0 / N + dT
    qs = []
    k = Yc.shape[0]
    # every compared value is the grand mean of a per-(sample, chain) series (S, E) of the seeded
    # ensemble; that series is passed as mixing= for its chain diagnostics (R-hat, ESS)
    # outlier counts
    for c in range(k):
        n_c = summ["n_single"][..., c].astype(float)
        qs.append(compare(
            f"single-class outliers coding class {c} per network", 1.0, float(n_c.mean()),
            stderr=chain_se(n_c), kind="abs", tol=0.1, mixing=n_c,
            note=("abs tol 0.1 per network: an extra outlier costs exp(-P (1-rho_c) log 2) in "
                  "equilibrium, so splits/losses may occur only as rare threshold crossings; "
                  f"outlier = |a_i| > {OUTLIER_THRESHOLD} sqrt(N), codes c iff class-c mean "
                  f"activation > {OUTLIER_THRESHOLD} sqrt(N)."), **_OUTLIER_STATE))
    n_o = summ["n_other"].astype(float)
    qs.append(compare("outliers coding no class or several classes per network", 0.0,
                      float(n_o.mean()), stderr=chain_se(n_o), kind="abs", tol=0.1, mixing=n_o,
                      note="theory: every outlier is single-class; abs tol 0.1 as for the counts.",
                      **_OUTLIER_STATE))
    # aggregated outliers per class
    th_abar = np.full((k, m), np.nan)
    th_z = np.full(k, np.nan)
    for i, c in enumerate(sol.outlier_classes):
        th_abar[c] = sol.outlier_readouts[i]
        th_z[c] = sol.outlier_preactivations[i]
    for c in range(k):
        zb = summ["zbar"][..., c]
        if not np.all(np.isfinite(zb)):
            zb = np.where(np.isfinite(zb), zb, 0.0)  # a lost outlier counts as zbar = 0
        se = chain_se(zb)
        qs.append(compare(f"outlier preactivation zbar_{c} (class {c}, /sqrt(N))", th_z[c],
                          float(zb.mean()), stderr=se, kind="rel",
                          tol=sys_rel + 4 * se / abs(th_z[c]), note=note_rel, mixing=zb,
                          **_OUTLIER_VALUES))
        for r in range(m):
            ab = summ["abar"][..., c, r]
            ab = np.where(np.isfinite(ab), ab, 0.0)
            se = chain_se(ab)
            qs.append(compare(f"outlier readout abar_{c}^{r} (class {c}, output {r}, /sqrt(N))",
                              th_abar[c, r], float(ab.mean()), stderr=se, kind="rel",
                              tol=sys_rel + 4 * se / abs(th_abar[c, r]), note=note_rel,
                              mixing=ab, **_OUTLIER_VALUES))
    # bulk
    sys_abs = 3.0 / P
    for r in range(m):
        a0 = summ["a0"][..., r]
        se = chain_se(a0)
        qs.append(compare(
            f"bulk readout a_0^{r}", sol.a0[r], float(a0.mean()), stderr=se, kind="abs",
            tol=4 * se + sys_abs + dT * abs(sol.a0[r]), mixing=a0,
            note=(f"abs tol = 4 SE + 3/P (P={P}: O(1/P) shift of the mean of the finite-P bulk "
                  "readout law exp(P g(a)) from its maximiser a_0) + finite-T allowance "
                  f"{dT:.3f} |a_0|; bulk = non-outlier neurons, readouts O(1), not sqrt(N)-scaled."),
            **_BULK))
    for c in range(k):
        ba = summ["bulk_activation"][..., c]
        se = chain_se(ba)
        th = sol.bulk_mean_activation[c]
        qs.append(compare(
            f"bulk mean activation <relu(z)> on class {c} = "
            f"{getattr(sol, 'activation_name', 'M(t_c.a_0)')}", th, float(ba.mean()),
            stderr=se, kind="rel", tol=sys_rel + 4 * se / abs(th), mixing=ba,
            note=note_rel + getattr(sol, "spread_note", " The O(1/P) spread of bulk readouts "
                                                         "(and so of h_c) is in 3/N."),
            **_BULK))
    z_last = post.preactivations(run.state.theta)[-1][0]
    acts = post.phi(z_last).double().cpu().numpy()  # (N, P) of chain 0
    prior_ula = cfg.get("prior_sampler", "ula") == "ula"
    figs = _figures(ctx, sol, summ, smp["A"], acts, labels, psumm,
                    prior_run.sample_steps.numpy(), dt if prior_ula else None)
    gap = np.nanmedian(summ["gap"])
    pn_last = psumm["n_single"][-1].mean(0)
    ps_last = psumm["s"][-1].mean(0)
    pa0_last = psumm["a0"][-1].mean(0)
    notes = (
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
    return CaseOutcome(quantities=qs, figures=figs, params=params, notes=notes)
