"""Deep sigmoid networks: which layers keep their codes (seed 000, Figs. 3 and 5).

The main text states for deeper sigmoidal networks (notes §4.5, MT on Fig. 5): every layer codes
the classes (a neuron's class-mean activations, thresholded at 1/2, form a binary code), but only
the **feature layer** (the last hidden layer, read out by a) has frozen codes; **lower-layer
neurons switch codes** during sampling. The mechanism [RECON]: a feature-layer neuron's readout
sits at one of the code readouts a_gamma, separated by barriers O(P) as for L = 1 (notes §4.3),
while a lower-layer neuron has no readout of its own; its single-neuron posterior
``∝ N(z|0, K_{l-1}) exp(½ φ(z)ᵀ K̃_l φ(z))`` is multimodal but the neuron can cross between
modes at finite P.

Two statements of the paper need no solver:

* feature layer: the fraction of neurons with the same code at two times a long lag apart is 1
  (frozen codes);
* layer 1: that fraction falls to the **mixing value** ``sum_gamma p_gamma^2``, the value for
  two independent draws from the sampled stationary code distribution p of layer 1 (codes
  switch and decorrelate). Each chain keeps its own frozen feature-layer codes, and with them
  its own layer-1 code distribution, so the comparison is per chain: persistence minus that
  chain's mixing value, theory 0.

The mean-field theory (notes §2.3, §4.5 [RECON]) is compared in :mod:`._deep_theory`: for L = 2
the self-consistent two-layer solution (class blocks of K_1, layer-1 and feature-layer codes,
readouts); otherwise the feature layer given the sampled kernel of the layer below.

Persistence at lag l is the fraction of (time origin, neuron) pairs with equal code, as in
``coding/persistence``; the code of a neuron is that of
:func:`richlazy.validate.codes.neuron_codes`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
from richlazy.validate import Compared, Sizes, declare_case

from ...codes import code_fractions, code_label, neuron_codes
from ...observables import class_means
from ...recipes import (
    DEEP_TOY_RATIOS,
    FEATURE_FROZEN,
    LOWER_MIXING,
    NOT_ANNEALED,
    PERSISTENCE_TOL_NOTE,
    DeepToySize,
    deep_theory_pieces,
    deep_theory_rows,
    deep_toy_setup,
    lagged_persistence,
    layer_code_keys,
    mixing_value,
    origin_series,
    persistence_curve,
    persistence_rule,
    sample_posterior,
)
from ...stats import chain_diagnostics, fraction_se, mean_se

__all__ = ["SIZES", "SIZES_3", "SIZE_PATH_3"]


@dataclass(frozen=True)
class DeepSigmoid3Size(DeepToySize):
    quad_nodes: int  # field nodes per dimension of the middle layers' theory


# quick: Fig. 5's configuration (L = 2, y- = 1/2) at N = P = 50 with Gibbs-HMC (exact readout
# draw, HMC of both weight layers). Measured (seed 0, one thread): 10 000 steps x 4 chains in
# 80 s; layer-1 persistence at a lag of 4000 steps 0.181 (mixing value 0.178; split-R-hat 1.06,
# bulk ESS 64-79), feature layer 1.000. 8 chains (133 s) or a burn-in of 4000 did not bring the
# layer-1 R-hat below 1.036, and then 0.2-1 % of the feature-layer neurons switched code.
# full: Fig. 3's sigmoid configuration (L = 3, N = P = 200, y- = -1/2), meant for a GPU (not run:
# 4 steps/s on one CPU core, 2.7 h).
# quick: Fig. 3's configuration (L = 3, y- = -1/2) at N = 50, P = 20 (class sizes 10 / 5 / 5).
# Measured (seed 0, one thread): 12 000 steps x 4 chains in 52 s; the L = 3 theory from the
# sampled kernels in 12 Newton steps (114 evaluations, 153 s with the other core busy) at 5 field
# nodes per dimension (6 nodes: the same numbers to 1e-4, 366 s).
# full: the same at N = P = 50 (class sizes 25 / 13 / 12), the largest size the L = 3 theory
# reaches on one core: Newton from the sampled kernels finds no fixed point there (the map is too
# stiff), so the theory continues in the class sizes (size_path 20, 30; 6 field nodes). Measured
# (seed 0, one thread, 2026-11-28): 1 060 s (sampling 133 s), 60/60 within tolerance, not mixed
# (frozen feature-layer codes). A first run with the path 20, 30, 40 took 2 563 s: its P = 40
# step ran out of iterations, and P = 50 converged from the P = 30 fixed point to the same numbers.
# With each feature-layer solve started from the previous one (solve_sigmoid_general start=), the
# same run took 735 s (sampling 112 s; another one-thread job on the second core), with the same
# theory to the 4 digits in docs/coding_sigmoid.md.
SIZES = Sizes(
    quick=DeepToySize(L=2, N=50, P=50, N0=70, y_minus=0.5, T=0.002, dt=0.02, n_chains=4, n_steps=10_000,
                      burn_in=2_000, thin=40),
    full=DeepToySize(L=3, N=200, P=200, N0=220, y_minus=-0.5, T=0.002, dt=0.01, n_chains=4,
                     n_steps=40_000, burn_in=10_000, thin=200),
)
SIZES_3 = Sizes(
    quick=DeepSigmoid3Size(L=3, N=50, P=20, N0=40, y_minus=-0.5, T=0.002, dt=0.02, n_chains=4, n_steps=12_000,
                           burn_in=4_000, thin=40, quad_nodes=5),
    full=DeepSigmoid3Size(L=3, N=50, P=50, N0=70, y_minus=-0.5, T=0.002, dt=0.02, n_chains=4, n_steps=12_000,
                          burn_in=4_000, thin=40, quad_nodes=6),
)
#: coding/deep-sigmoid-3's continuation of the theory in the class sizes, where a size has one
#: (a report parameter after the configuration's)
SIZE_PATH_3 = {"full": (20, 30)}
#: codes held by fewer than this fraction of a layer's neurons are not counted as codes
_MIN_CODE_FRACTION = 0.02
#: the most lower layers the theory side compares (L - 1 at the deepest size)
_MAX_LOWER = max(s.L for s in (SIZES.quick, SIZES.full, SIZES_3.quick, SIZES_3.full)) - 1


_ROWS = (
    Compared(lambda run: f"feature layer {run.cfg.L}: code persistence at lag {run.simulation.lag_steps} "
                         "steps",
             theory=lambda run: 1.0, estimate=lambda run: run.simulation.top, rule=persistence_rule,
             options=lambda run: dict(
                 erg=dict(ergodicity="frozen", reason=FEATURE_FROZEN, equilibration=NOT_ANNEALED),
                 note=(f"theory: frozen feature-layer codes (MT, Fig. 5; barriers O(P), notes §4.3); mixing "
                       f"value would be {run.simulation.top_mix:.3f}; " + PERSISTENCE_TOL_NOTE))),
    Compared(lambda run: (f"layer 1: code persistence at lag {run.simulation.lag_steps} steps minus the "
                          "chain's mixing value"),
             theory=lambda run: 0.0, estimate=lambda run: run.simulation.low, rule=persistence_rule,
             options=lambda run: dict(
                 erg=dict(ergodicity="mixing", reason=LOWER_MIXING),
                 note=("theory: lower-layer neurons switch codes (MT, Fig. 5), so a chain's persistence "
                       "falls to its mixing value sum_gamma p_gamma^2, p = that chain's layer-1 code "
                       "distribution over the second half of the run (per chain, because each chain "
                       "keeps its own frozen feature-layer codes); " + PERSISTENCE_TOL_NOTE))),
    # the theory (notes §2.3, §4.5): self-consistent, or the feature layer given the kernel below
    *deep_theory_rows(_MAX_LOWER),
)


def _declare(name, description, sizes, suites, size_path):
    return declare_case(
        name, description=description, sizes=sizes, suites=suites,
        theory=lambda ctx, cfg: _problem(ctx, cfg, name),
        simulation=lambda ctx, cfg, th: _simulation(ctx, cfg, th, size_path.get(ctx.size)),
        compared=_ROWS,
        figures=lambda run: _figures(run.ctx, run.simulation.curves, run.simulation.rasters, run.cfg.thin),
        notes=lambda run: " ".join(run.simulation.notes),
        params=lambda run: dict(({"size_path": size_path[run.ctx.size]} if run.ctx.size in size_path else {}),
                                ratios=list(DEEP_TOY_RATIOS)),
    )


CASE = _declare(
    "coding/deep-sigmoid",
    "Deep sigmoid-erf non-lazy networks on the orthogonal toy task (seed 000, Figs. 3 and 5; "
    "notes §4.5): every hidden layer codes the classes, feature-layer codes are frozen "
    "(persistence 1) while lower-layer neurons switch codes (persistence falls to the mixing "
    "value sum p^2 of the layer's sampled code distribution); for L = 2 the self-consistent "
    "two-layer theory (K_1 class blocks, layer-1 and feature-layer code fractions, readouts), "
    "otherwise the feature layer given the sampled kernel of the layer below.",
    SIZES, ("quick", "full"), {})
CASE_3 = _declare(
    "coding/deep-sigmoid-3",
    "Fig. 3's three-hidden-layer sigmoid-erf network (seed 000, L = 3, y- = -1/2; notes §4.5) at "
    "small size (quick: N = 50, P = 20): the self-consistent L = 3 theory (solve_sigmoid_deep: feature "
    "layer fluctuation-free, layer 2 by the mode-wise field integral over class shifts and fields, "
    "layer 1 by the exact field integral; Newton from the sampled kernels, in the full suite (N = P = "
    "50) continued in the class sizes) vs the class blocks of "
    "K_1 and K_2, the code fractions of layers 1 and 2, the feature layer's codes and readouts, "
    "and the persistences of coding/deep-sigmoid.",
    SIZES_3, ("quick", "full"), SIZE_PATH_3)


# ---- the stages ------------------------------------------------------------------------------


def _problem(ctx, cfg, name):
    """The toy task (stream 0) and the deep sigmoid-erf network (its theory is solved from the
    sampled kernels, in the simulation stage)."""
    if cfg.L < 2:
        sizes = "SIZES" if name == "coding/deep-sigmoid" else "SIZES_3"
        raise ValueError(f"{sizes}.{ctx.size}.L must be an int >= 2 (a deep network: layer 1 below the "
                         f"feature layer), got {cfg.L!r}")
    task, spec, labels = deep_toy_setup(ctx, dataclasses.asdict(cfg), "sigmoid_erf")
    return SimpleNamespace(task=task, spec=spec, labels=labels)


def _run(ctx, cfg, th):
    labels, L = th.labels, cfg.L

    def observe(post, theta, gen):
        out = {"A": post.unflatten(theta)["A"].float()}
        for l, z in enumerate(post.preactivations(theta), start=1):  # (E, N, P) each
            phi = post.phi(z)
            out[f"layer{l}"] = class_means(phi.transpose(1, 2), labels, 3).transpose(1, 2).float()
            if l == L - 1:  # kernel of the layer below the feature layer, (E, P, P)
                out["K_below"] = (phi.transpose(1, 2) @ phi / phi.shape[1]).float()
            elif l < L - 1:  # kernels of the layers further down (L > 2)
                out[f"K{l}"] = (phi.transpose(1, 2) @ phi / phi.shape[1]).float()
            if l == 2 and L > 2:  # <z^2 z^2T>: the sampled conjugate kernel of layer 1
                out["C2"] = (z.transpose(1, 2) @ z / z.shape[1]).float()
        return out

    _, run = sample_posterior(
        th.spec, th.task.X, th.task.Y, sigma_a2=1.0 / cfg.P, **cfg.chain_options(), observe=observe,
        seed=ctx.child_seed(1), device=ctx.device,
        checkpoint_path=ctx.checkpoint_dir / "deep.pt", progress=ctx.progress,
        desc=f"coding/deep-sigmoid (L = {L})", sampler="gibbs-hmc")
    return run


def _simulation(ctx, cfg, th, size_path):
    """The Gibbs-HMC ensemble; per layer its code persistence at the longest lag, the mixing
    values and the codes held; the theory pieces from the sampled kernels."""
    L, N = cfg.L, cfg.N
    run = _run(ctx, cfg, th)
    notes, curves, rasters, per_layer = [], {}, {}, {}
    for l in range(1, L + 1):
        keys = layer_code_keys(run.samples[f"layer{l}"].double().numpy())  # (S, E, N)
        lag = keys.shape[0] // 2
        per_chain = lagged_persistence(keys, lag)
        p, se = fraction_se(per_chain, keys.shape[1] * N)
        mix = mixing_value(keys[lag:])
        # each chain's own mixing value: its feature-layer codes are frozen, so every chain
        # samples its own metastable state and its lower layers their own code distribution
        mix_e = np.array([mixing_value(keys[lag:, e]) for e in range(keys.shape[1])])
        same = keys[lag:] == keys[:-lag]
        per_layer[l] = dict(p=p, se=se, mix=mix, excess=per_chain - mix_e,
                            mx=chain_diagnostics(origin_series(same), layout="draw_chain"),
                            mx_excess=chain_diagnostics(origin_series(same) - mix_e, layout="draw_chain"))
        curves[l] = (persistence_curve(keys), mix)
        rasters[l] = keys[:, 0, :20]
        frac = code_fractions(neuron_codes(run.samples[f"layer{l}"][-1].double().numpy()))
        held = [f"{lab} {f:.2f}" for lab, f in zip(frac.labels, frac.fraction, strict=True)
                if f >= _MIN_CODE_FRACTION]
        switch = float((keys[1:] != keys[:-1]).mean())
        notes.append(f"layer {l}: {len(held)} codes held by >= {_MIN_CODE_FRACTION:.0%} of the neurons "
                     f"at the last sample ({', '.join(held)}); fraction of neurons changing code between "
                     f"consecutive samples ({cfg.thin} steps) {switch:.3f}; persistence at lag "
                     f"{lag * cfg.thin} steps {p:.3f} (mixing value of the pooled chains {mix:.3f}).")
    top, low = per_layer[L], per_layer[1]
    se_x = max(low["se"], float(mean_se(low["excess"])[1]))
    pieces = deep_theory_pieces(ctx, th.task, run, L, quad_nodes=getattr(cfg, "quad_nodes", 6),
                                size_path=size_path)
    if len(pieces.lower) > _MAX_LOWER:
        raise ValueError(f"L = {L} compares {len(pieces.lower)} lower layers, the rows at most {_MAX_LOWER} "
                         "(the deepest size's L - 1)")
    notes += pieces.notes
    notes.append(f"Gibbs-HMC (exact readout draw, HMC of the weights), {run.n_steps} steps x "
                 f"{cfg.n_chains} chains, {run.seconds:.1f} s; mean acceptance "
                 f"{float(run.acceptance.mean()):.2f}.")
    return SimpleNamespace(
        lag_steps=(run.samples["layer1"].shape[0] // 2) * cfg.thin, top=(top["p"], top["se"], top["mx"]),
        top_mix=top["mix"], low=(float(low["excess"].mean()), se_x, low["mx_excess"]), pieces=pieces,
        curves=curves, rasters=rasters, notes=notes)


def _figures(ctx, curves, rasters, thin):
    with ctx.figure("persistence_by_layer.png", figsize=(5.6, 3.6)) as (fig, ax):
        for i, (l, ((lags, pers), mix)) in enumerate(curves.items()):
            ax.plot(lags * thin, pers, "o-", color=f"C{i}", ms=3, label=f"layer {l}")
            ax.axhline(mix, color=f"C{i}", ls=":", lw=1, label=f"layer {l}: mixing value")
        ax.set_xlabel("lag (sampler steps)")
        ax.set_ylabel("fraction of neurons keeping their code")
        ax.set_ylim(0, 1.05)
        ax.legend(frameon=False, fontsize=7)
    from matplotlib import colormaps
    from matplotlib.colors import ListedColormap

    L, m = len(rasters), 3
    cmap = ListedColormap(colormaps["tab10"].colors[: 1 << m])
    with ctx.figure("codes_over_time.png", nrows=1, ncols=L, figsize=(3.2 * L, 3.4)) as (fig, axes):
        axes = np.atleast_1d(axes)
        for ax, (l, keys) in zip(axes, rasters.items(), strict=True):
            im = ax.imshow(keys.T, aspect="auto", interpolation="nearest", cmap=cmap, vmin=-0.5,
                           vmax=(1 << m) - 0.5, extent=(0, keys.shape[0] * thin, keys.shape[1] - 0.5, -0.5))
            ax.set_title(f"layer {l}: codes of 20 neurons (chain 0)", fontsize=8)
            ax.set_xlabel("sampler step after burn-in")
        axes[0].set_ylabel("neuron")
        cb = fig.colorbar(im, ax=list(axes), ticks=range(1 << m))
        cb.ax.set_yticklabels([code_label([(k >> j) & 1 for j in range(m)]) for k in range(1 << m)],
                              fontsize=7)
    return ["persistence_by_layer.png", "codes_over_time.png"]

