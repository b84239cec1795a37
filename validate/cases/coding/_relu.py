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

from types import SimpleNamespace

import numpy as np
from richlazy.simulate import orthogonal_toy_task
from richlazy.theory import solve_relu_toy, toy_class_targets
from richlazy.validate import declare_case

from ...recipes import (
    OUTLIER_THRESHOLD,
    RELU_ROWS,
    RELU_SIZES,
    RELU_TOY_SIZES,
    relu_figures,
    relu_notes,
    relu_seeded_simulation,
)

__all__ = ["RELU_TOY_SIZES"]

M = 3
RATIOS = (0.5, 0.25, 0.25)
Y_PLUS, Y_MINUS = 1.0, -0.5

CASE = declare_case(
    "coding/relu-toy",
    description=(
        "ReLU non-lazy network (L=1, sigma_a2=1/P) on the orthogonal toy task (classes "
        "[1/2,1/4,1/4], y+=1, y-=-1/2; Fig. 2 ReLU configuration of seed 000): sparse coding "
        "scheme. Outliers per class, sqrt(N)-scaled outlier readouts and preactivations, bulk "
        "readout a_0 and bulk mean activations M(t_c.a_0) from a Langevin ensemble (seeded with "
        "one generic single-class neuron per class) vs the reconstructed theory (notes §5.2); a "
        "prior-initialised ensemble documents the slow coarsening to that state."
    ),
    sizes=RELU_SIZES,
    theory=lambda ctx, cfg: _theory(ctx, cfg),
    simulation=lambda ctx, cfg, th: relu_seeded_simulation(ctx, cfg, "coding/relu-toy", th.task, th.Yc),
    compared=RELU_ROWS,
    figures=relu_figures,
    notes=relu_notes,
    params=lambda run: dict(m=M, ratios=list(RATIOS), y_plus=Y_PLUS, y_minus=Y_MINUS,
                            sigma_a2=1.0 / run.cfg.P, amplitudes=list(run.cfg.amplitudes),
                            outlier_threshold=OUTLIER_THRESHOLD),
    suites=("quick", "full"),
)


def _theory(ctx, cfg):
    """The task, the reconstructed theory, and the relative finite-T allowance of its comparison."""
    Yc = toy_class_targets(M, y_plus=Y_PLUS, y_minus=Y_MINUS)
    task = orthogonal_toy_task(cfg.P, cfg.N0, ratios=RATIOS, y_plus=Y_PLUS, y_minus=Y_MINUS,
                               seed=ctx.child_seed(0))
    sol = solve_relu_toy(np.array(RATIOS), Yc, P=cfg.P, throw=True)
    # a-priori systematic allowances (relative): finite width O(1/N) (3/N) plus the finite-T
    # shift of the output constraint (mean output Y - T t, notes S1), relative size
    # T max|t| / min|y|
    dT = cfg.T * float(np.max(np.abs(sol.t))) / min(abs(Y_PLUS), abs(Y_MINUS))
    note_rel = (f"rel tol = {3.0 / cfg.N + dT:.3f} + 4 SE/|theory|: systematic 3/N (N={cfg.N}, finite "
                f"width) + T max|t|/min|y| = {dT:.3f} (finite-T shift of the output constraint "
                "Y - T t); SE = max(batch means, chain-to-chain) over chains seeded at two generic "
                "amplitudes.")
    return SimpleNamespace(task=task, sol=sol, Yc=Yc, dT=dT, note_rel=note_rel)
