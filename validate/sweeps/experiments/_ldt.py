"""Sweep experiments for seed 002 (Rubin, Davidovich & Ringel, *Mitigating the Curse of Detail*).

``ldt-alignment``: the mean alignment of a two-layer erf network with the He_3 target at one
(P, d, N, kappa, scaling) point: the adaptive-kernel closure (:func:`richlazy.theory.ak_two_layer_erf`,
App. G eqs. 101-103) against a Langevin ensemble sampled exactly as in the case
``ldt/alignment-ak`` (:func:`richlazy.validate.recipes.erf_ensemble`: one training set per chain, step size
0.2 / stiffest curvature, burn-in n_steps/2, 200 recorded samples; the alignment of each sample
computed exactly on the Gaussian test measure). Also compared: the number of first-layer outliers
per network (App. F 3-sigma rule), AK prediction vs ensemble.

Standard errors are across chains (each chain has its own training set, so the spread includes
the data-set variability the data-averaged theory does not resolve).
"""

from __future__ import annotations

import math
import pathlib
import tempfile

import numpy as np
from richlazy.theory import ak_two_layer_erf, outlier_threshold

from ...core._registry import CaseContext
from ...recipes import erf_ensemble
from ...stats import chain_mean_se
from .._registry import Param, SweepContext, register_sweep

__all__ = ["ldt_alignment", "ak_theory"]


def ak_theory(P: int, d: int, N: int, *, kappa: float, scaling: str):
    """The adaptive-kernel solution of this experiment (chi = 1 standard, chi = N mean-field)."""
    return ak_two_layer_erf(float(P), d, N, kappa=kappa, chi=_chi(scaling, N))


def _chi(scaling: str, N: int) -> float:
    return 1.0 if scaling == "standard" else float(N)


_PARAMS = {
    "P": Param(int, 120, "training set size", minimum=1),
    "d": Param(int, 12, "input dimension", minimum=2),
    "N": Param(int, 12, "hidden width", minimum=1),
    "kappa": Param(float, 1.0, "noise variance of the Gaussian likelihood", minimum=1e-6),
    "scaling": Param(str, "standard", "readout scaling: chi = 1 (standard) or chi = N (mean-field)",
                     choices=("standard", "mean-field")),
    "n_chains": Param(int, 32, "chains, one training set each (SE from their spread)", minimum=2),
    "n_steps": Param(int, 12_000, "Langevin steps per chain (half of them burn-in)", minimum=400),
    "dtype": Param(str, "float32", "torch dtype of the ensemble", choices=("float32", "float64")),
}

_METRICS = ("theory_alignment", "sampled_alignment", "diff_alignment", "rel_diff_alignment",
            "z_alignment", "theory_n_outliers", "sampled_n_outliers", "diff_n_outliers",
            "theory_t", "theory_converged")


@register_sweep(
    "ldt-alignment",
    description=(
        "Seed 002 two-layer erf network, He_3 target: mean alignment (and outliers per network) "
        "of a Langevin ensemble vs the adaptive-kernel closure A = <V>_t/(<V>_t + kappa/P); "
        "sweep P, d, N, kappa or the scaling."
    ),
    params=_PARAMS,
    uses_gpu=True,
    metrics=_METRICS,
    figures=(
        ("curves", "sampled_alignment", "P", "d"),
        ("curves", "theory_alignment", "P", "d"),
        ("curves", "rel_diff_alignment", "P", "N"),
        ("heatmap", "z_alignment", "P", "d"),
    ),
)
def ldt_alignment(ctx: SweepContext, *, P, d, N, kappa, scaling, n_chains, n_steps,
                  dtype) -> dict[str, float]:
    ak = ak_theory(P, d, N, kappa=kappa, scaling=scaling)
    with tempfile.TemporaryDirectory(prefix="ldt-alignment-") as tmp:
        folder = pathlib.Path(tmp) if ctx.checkpoint_dir is None else ctx.checkpoint_dir
        # the case helper wants a CaseContext: its streams then derive from this task's stream 0
        case_ctx = CaseContext(size="quick", device=ctx.device, seed=ctx.child_seed(0),
                               out_dir=folder, checkpoint_dir=folder, progress=ctx.progress,
                               name=ctx.experiment)
        run = erf_ensemble(case_ctx, d=d, N=N, P=P, kappa=kappa, chi=_chi(scaling, N),
                        n_chains=n_chains, n_steps=n_steps, dtype=dtype, tag=scaling)
    A, A_se = chain_mean_se(run["A"])
    nout = (np.abs(run["wp"]) > outlier_threshold(d)).sum(-1).astype(float)  # (S, E)
    n_out, n_out_se = chain_mean_se(nout)
    A_th, n_th = float(ak.mean_alignment), float(ak.n_outliers)
    diff = A - A_th
    return {
        "theory_alignment": A_th,
        "sampled_alignment": A, "sampled_alignment_se": A_se,
        "diff_alignment": diff, "diff_alignment_se": A_se,
        "rel_diff_alignment": diff / A_th, "rel_diff_alignment_se": A_se / A_th,
        "z_alignment": diff / A_se if A_se > 0 else math.nan,
        "theory_n_outliers": n_th,
        "sampled_n_outliers": n_out, "sampled_n_outliers_se": n_out_se,
        "diff_n_outliers": n_out - n_th, "diff_n_outliers_se": n_out_se,
        "theory_t": float(ak.t),
        "theory_converged": float(bool(ak.converged)),
    }
