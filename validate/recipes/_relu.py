"""Seeded ensembles of one-hidden-layer ReLU networks and how their outliers and bulk are read.

The rules of :func:`outlier_summary` (seed 000's sparse ReLU code, notes §5.2):

* a neuron is an **outlier** iff ``|a_i| > OUTLIER_THRESHOLD * sqrt(N)``; the gap between the
  smallest outlier and the largest bulk readout is reported;
* an outlier **codes** class c iff its class-c mean activation exceeds ``OUTLIER_THRESHOLD *
  sqrt(N)``; outliers coding exactly one class are the theory's single-class outliers;
* per class the *aggregated* outlier is read: ``zbar_c = sqrt(s_c)`` with ``s_c = sum zbar_c^2``
  over the outliers coding c, and ``abar_c = sum_i abar_i zbar_ic / sqrt(s_c)``;
* the bulk readout a_0 and the bulk mean activations are averages over the non-outlier neurons.

:func:`seeded_relu_samples` samples the chains from a *seeded* state (one single-class neuron per
class at generic amplitudes on top of a prior draw, :func:`seed_single_class_outliers`), as the
cases ``coding/relu-toy``, ``coding/relu-correlated``, ``coding/relu-correlated-widths`` and
``coding/persistence`` do; :data:`RELU_TOY_SIZES` are the sizes of ``coding/relu-toy``, shared
with the correlated-class cases.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from richlazy.simulate import NetworkPosterior, NetworkSpec

from ..codes import neuron_codes
from ..core._sampling import sample_posterior
from ..observables import class_means

__all__ = ["OUTLIER_THRESHOLD", "RELU_TOY_SIZES", "outlier_summary", "relu_class_observer", "run_seeded",
           "seed_single_class_outliers", "seeded_relu_samples"]


#: outlier detection threshold in units of sqrt(N) (readout norm and coded-class activation)
OUTLIER_THRESHOLD = 0.25


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


def run_seeded(spec, task, *, T, sigma_a2, dt, n_chains, n_steps, burn_in, thin, amplitudes,
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


def relu_class_observer(labels, m):
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
    post, run = run_seeded(
        spec, task, T=cfg["T"], sigma_a2=1.0 / cfg["P"], dt=cfg["dt"], n_chains=cfg["n_chains"],
        n_steps=cfg["n_steps"], burn_in=cfg["burn_in"], thin=cfg["thin"],
        amplitudes=cfg["amplitudes"], class_targets=Yc,
        observe=relu_class_observer(task.labels, m), seed=ctx.child_seed(1), device=ctx.device,
        checkpoint_path=ctx.checkpoint_dir / checkpoint, progress=ctx.progress,
        sampler=cfg.get("sampler", "ula"), name=name, n_leapfrog=cfg.get("n_leapfrog", 10),
    )
    smp = {key: v.double().numpy() for key, v in run.samples.items()}
    return post, run, smp, outlier_summary(smp["A"], smp["zm"], smp["cm"])
