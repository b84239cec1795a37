"""Sweep experiments for seed 000 (van Meegen & Sompolinsky, coding schemes).

``sigmoid-codes``: code populations of the sigmoid-erf toy network (L = 1, sigma_a2 = 1/P, classes
[1/2, 1/4, 1/4], y+ = 1) at one (y_-, T, N, P, sampler) point: the T = 0 reconstruction
(:func:`richlazy.theory.solve_sigmoid_toy`, P -> infinity or at the network's P) against the code
fractions of a Langevin ensemble sampled as in the case ``coding/sigmoid-toy``
(:func:`richlazy.validate.core._sampling.sample_posterior`, annealed inside the burn-in).

Codes are grouped by the symmetry of the task (classes 1 and 2 have equal size, so 1-1-0 and 1-0-1
are one group, as are 0-1-0 and 0-0-1); the six groups cover all 2^3 codes:

    011 | 110_101 | 111 | 100 | 010_001 | 000

Metrics per group g: ``theory_g`` (summed P_gamma), ``sampled_g`` (fraction of neurons, pooled over
recorded samples and chains), ``diff_g = sampled_g - theory_g`` and ``z_g = diff_g / se``. Standard
error of a sampled fraction, as in the case: the larger of the binomial error over the E*N neurons
(floored at one neuron) and the chain-to-chain spread / sqrt(E) (codes freeze, so recorded samples
of one chain are not independent). The theory is a T = 0 theory; at T > 0 the sampled populations
also carry the finite-temperature shift (docs/coding_sigmoid.md, "Temperature").
"""

from __future__ import annotations

import functools
import math

import numpy as np
from richlazy.simulate import NetworkSpec, orthogonal_toy_task
from richlazy.theory import solve_sigmoid_toy, toy_class_targets

from ...codes import code_key, neuron_codes
from ...core._sampling import sample_posterior
from ...observables import class_means
from ...stats import fraction_se, mean_se
from .._registry import Param, SweepContext, register_sweep

__all__ = ["CODE_GROUPS", "RATIOS", "sigmoid_codes", "sigmoid_toy_theory"]

RATIOS = (0.5, 0.25, 0.25)
M = 3
EXTRA_INPUT_DIMS = 20  # N0 = P + 20, as in coding/sigmoid-toy (orthogonal inputs need N0 >= P)
ACTIVE_WEIGHT = 1e-3  # a theory code "is active" (counted, predicted) above this weight

# metric suffix -> codes in the group (symmetry 1 <-> 2 of the classes [1/2, 1/4, 1/4])
CODE_GROUPS = {
    "011": ("0-1-1",),
    "110_101": ("1-1-0", "1-0-1"),
    "111": ("1-1-1",),
    "100": ("1-0-0",),
    "010_001": ("0-1-0", "0-0-1"),
    "000": ("0-0-0",),
}


@functools.lru_cache(maxsize=64)
def sigmoid_toy_theory(y_minus: float, P: int | None = None):
    """The toy solution of this experiment (deterministic: the solver's random starts are seeded
    with its default ``seed=0``); cached per (y_minus, P)."""
    return solve_sigmoid_toy(np.array(RATIOS), toy_class_targets(M, y_plus=1.0, y_minus=y_minus), P=P)


def _theory_group_weights(sol) -> dict[str, float]:
    labels = sol.code_strings()
    return {g: float(sum(w for lab, w in zip(labels, sol.P_gamma, strict=True) if lab in codes))
            for g, codes in CODE_GROUPS.items()}


def _finite_or_nan(x) -> float:
    x = float(x)
    return x if math.isfinite(x) else math.nan


_PARAMS = {
    "y_minus": Param(float, 0.5, "off-target value y_- of the class targets (y_+ = 1)",
                     minimum=-0.95, maximum=0.95),
    "T": Param(float, 0.002, "rescaled sampling temperature (the theory is the T = 0 one)",
               minimum=1e-6, maximum=0.1),
    "N": Param(int, 50, "hidden width", minimum=2),
    "P": Param(int, 50, "training inputs (classes 1/2, 1/4, 1/4; input dimension N0 = P + 20)",
               minimum=4),
    "n_chains": Param(int, 4, "independent Langevin chains (SE from their spread)", minimum=2),
    "n_steps": Param(int, 40_000, "Langevin steps per chain (burn-in included)", minimum=20),
    "burn_in_frac": Param(float, 0.5, "fraction of the steps discarded as burn-in",
                          minimum=0.0, maximum=0.95),
    "n_samples": Param(int, 40, "recorded samples per chain after the burn-in", minimum=1),
    "dt_P": Param(float, 2.0, "paper-time step dt times P (keep <~ 2: ULA bias of the collective "
                  "readout mode)", minimum=1e-3, maximum=10.0),
    "anneal_from": Param(float, 0.005, "start temperature of the geometric anneal inside the "
                         "burn-in; <= T switches annealing off", minimum=0.0),
    "anneal_frac": Param(float, 0.8, "fraction of the burn-in spent annealing (0: none)",
                         minimum=0.0, maximum=1.0),
    "finite_p_theory": Param(bool, False, "theory at the network's P (finite-P Laplace weights) "
                             "instead of P -> infinity"),
}

_METRICS = tuple(
    [f"{kind}_{g}" for g in CODE_GROUPS for kind in ("theory", "sampled", "diff", "z")]
    + ["sampled_unpredicted", "max_abs_z", "persistence", "theory_n_codes", "theory_global_gap",
       "theory_converged"]
)


@register_sweep(
    "sigmoid-codes",
    description=(
        "Seed 000 sigmoid-erf toy network (classes [1/2,1/4,1/4], y+=1, sigma_a2=1/P): code "
        "populations of the T=0 reconstruction (P -> inf, or finite P) vs the code fractions of an "
        "annealed Langevin ensemble, per symmetry group of codes; sweep y_minus (code transitions "
        "at ~0.032 and ~0.477 in the theory), T, N, P or the sampler settings."
    ),
    params=_PARAMS,
    uses_gpu=True,
    metrics=_METRICS,
    figures=(
        ("curves", "sampled_111", "y_minus", "T"),
        ("curves", "theory_111", "y_minus", None),
        ("curves", "sampled_100", "y_minus", "T"),
        ("curves", "sampled_unpredicted", "y_minus", "T"),
        ("heatmap", "z_111", "y_minus", "T"),
    ),
)
def sigmoid_codes(ctx: SweepContext, *, y_minus, T, N, P, n_chains, n_steps, burn_in_frac, n_samples,
                  dt_P, anneal_from, anneal_frac, finite_p_theory) -> dict[str, float]:
    sol = sigmoid_toy_theory(float(y_minus), int(P) if finite_p_theory else None)
    theory = _theory_group_weights(sol)

    burn_in = min(int(burn_in_frac * n_steps), n_steps - 1)
    thin = max(1, (n_steps - burn_in) // n_samples)
    anneal_steps = int(anneal_frac * burn_in)
    annealed = anneal_from > T and anneal_steps >= 1
    task = orthogonal_toy_task(P, P + EXTRA_INPUT_DIMS, ratios=RATIOS, y_plus=1.0, y_minus=y_minus,
                               seed=ctx.child_seed(0))
    labels = task.labels

    def observe(post, theta, gen):
        h = post.phi(post.preactivations(theta)[-1])  # (E, N, P)
        return {"cm": class_means(h.transpose(1, 2), labels, M).transpose(1, 2).float()}  # (E, N, m)

    spec = NetworkSpec(N0=P + EXTRA_INPUT_DIMS, N=N, L=1, m=M, activation="sigmoid_erf",
                       regime="nonlazy")
    _, run = sample_posterior(
        spec, task.X, task.Y, T=T, sigma_a2=1.0 / P, dt=dt_P / P, n_chains=n_chains,
        n_steps=n_steps, burn_in=burn_in, thin=thin, observe=observe, seed=ctx.child_seed(1),
        device=ctx.device,
        checkpoint_path=None if ctx.checkpoint_dir is None else ctx.checkpoint_dir / "chain.pt",
        progress=ctx.progress, desc=f"sigmoid-codes y-={y_minus:g} T={T:g}",
        anneal_from=anneal_from if annealed else None, anneal_steps=anneal_steps if annealed else 0,
    )
    codes = neuron_codes(run.samples["cm"].double().numpy())  # (S, E, N, m)
    keys = (codes * (1 << np.arange(M))).sum(-1)  # (S, E, N)
    n = n_chains * N

    out: dict[str, float] = {}
    zs = []
    for g, group in CODE_GROUPS.items():
        per_chain = np.isin(keys, [code_key(c) for c in group]).mean(axis=(0, 2))  # (E,)
        f, se = fraction_se(per_chain, n)
        diff = f - theory[g]
        z = diff / se
        zs.append(abs(z))
        out.update({f"theory_{g}": theory[g], f"sampled_{g}": f, f"sampled_{g}_se": se,
                    f"diff_{g}": diff, f"diff_{g}_se": se, f"z_{g}": z})
    predicted = [code_key(lab) for lab, w in zip(sol.code_strings(), sol.P_gamma, strict=True)
                 if w > ACTIVE_WEIGHT]
    f_un, se_un = fraction_se((~np.isin(keys, predicted)).mean(axis=(0, 2)), n)
    same = np.all(codes[-1] == codes[0], axis=-1).mean(axis=-1)  # (E,) kept their code
    pers, pers_se = (float(v) for v in mean_se(same))
    out.update({
        "sampled_unpredicted": f_un, "sampled_unpredicted_se": se_un,
        "max_abs_z": float(max(zs)),
        "persistence": pers, "persistence_se": pers_se,
        "theory_n_codes": float(np.sum(sol.P_gamma > ACTIVE_WEIGHT)),
        "theory_global_gap": _finite_or_nan(sol.global_gap),
        "theory_converged": float(bool(sol.converged)),
    })
    return out

