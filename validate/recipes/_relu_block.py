"""The ReLU toy problem with correlated classes (class-block input kernel) and the extrapolation
of sampled values to infinite width.

:func:`correlated_problem` draws the task of ``coding/relu-correlated`` (and of
``coding/relu-correlated-widths`` and the benchmark ``relu-block``: :data:`CLASS_COVARIANCE`)
and solves its readout-law theory (:func:`richlazy.theory.solve_relu_block`); :class:`BlockView`
presents a block solution with the attributes the ReLU rows (:mod:`._relu_rows`) read;
:func:`fit_inverse_width` fits ``x(N) = x_inf + b / N``.
"""

from __future__ import annotations

import numpy as np
from richlazy.simulate import class_correlated_toy_task
from richlazy.theory import input_kernel, solve_relu_block, toy_class_targets

from ..core._registry import CaseContext
from ._relu import RELU_TOY_SIZES

__all__ = ["CLASS_COVARIANCE", "Y_MINUS", "Y_PLUS", "BlockView", "correlated_problem", "fit_inverse_width"]

#: class covariance q of the inputs (within class 0.3, between classes 0.1)
CLASS_COVARIANCE = ((0.3, 0.1, 0.1), (0.1, 0.3, 0.1), (0.1, 0.1, 0.3))
Y_PLUS, Y_MINUS = 1.0, -0.5


class BlockView:
    """The attributes of a toy solution that the shared comparison reads, from a
    :class:`richlazy.theory.ReLUBlockSolution` with single-class outliers."""

    def __init__(self, sol):
        z = sol.outlier_class_preactivations
        self.message = sol.message
        self.t, self.a0 = sol.t, sol.a0
        self.bulk_mean_activation = sol.bulk_mean_activation
        self.outlier_readouts = sol.outlier_readouts
        self.outlier_classes = np.argmax(z, axis=1)
        self.outlier_preactivations = z.max(axis=1)
        self.outlier_strength = np.zeros(z.shape[1])
        self.outlier_strength[self.outlier_classes] = self.outlier_preactivations**2
        self.bulk_readout_density = sol.bulk_readout_density
        self.density_label = "theory (readout law: its mean and sd)"
        self.activation_name = "E[M(t_c.a)] over the bulk readout law"
        self.spread_note = " The spread of the bulk readouts is in the theory (its readout law)."


def correlated_problem(ctx: CaseContext, name: str):
    """The correlated-class toy problem of this case (seed stream 0 of ``ctx``) and its
    readout-law theory. Returns ``(cfg, task, sol, Yc)``; RuntimeError naming ``name`` when the
    theory has not converged to single-class outliers."""
    cfg = RELU_TOY_SIZES["quick"]
    task = class_correlated_toy_task(cfg["P"], cfg["N0"], np.array(CLASS_COVARIANCE),
                                     y_plus=Y_PLUS, y_minus=Y_MINUS, seed=ctx.child_seed(0))
    sol = solve_relu_block(input_kernel(task.X), task.Y, T=cfg["T"], bulk="readout_law")
    if not sol.converged or np.any((sol.outlier_class_preactivations > 0).sum(axis=1) != 1):
        raise RuntimeError(f"{name} needs a converged theory with single-class "
                           f"outliers; solve_relu_block: {sol.message}")
    return cfg, task, sol, toy_class_targets(3, y_plus=Y_PLUS, y_minus=Y_MINUS)


def fit_inverse_width(x, se, N):
    """Weighted least-squares fit ``x(N) = x_inf + b / N`` (weights ``1/se^2``).

    x, se, N : 1-D arrays of the same length n >= 2 (se > 0, N > 0).
    Returns ``(x_inf, se_inf, b, chi2)``: the extrapolation, its standard error from ``se``
    (the inverse normal matrix, not rescaled), the slope and the fit's chi^2 (n - 2 degrees of
    freedom; 0 for n = 2). ValueError naming the argument otherwise."""
    x, se, N = (np.asarray(v, dtype=float) for v in (x, se, N))
    if x.ndim != 1 or x.size < 2 or se.shape != x.shape or N.shape != x.shape:
        raise ValueError(f"x, se and N must be 1-D of one length >= 2, got shapes {x.shape}, "
                         f"{se.shape}, {N.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(se)) and np.all(se > 0)):
        raise ValueError(f"x must be finite and se finite and > 0, got x={x}, se={se}")
    if not (np.all(np.isfinite(N)) and np.all(N > 0) and np.unique(N).size == N.size):
        raise ValueError(f"N must be distinct finite widths > 0, got {N}")
    A = np.stack([np.ones_like(N), 1.0 / N], axis=1)
    w = 1.0 / se**2
    cov = np.linalg.inv(A.T @ (w[:, None] * A))
    beta = cov @ (A.T @ (w * x))
    chi2 = float(np.sum(w * (x - A @ beta) ** 2))
    return float(beta[0]), float(np.sqrt(cov[0, 0])), float(beta[1]), chi2
