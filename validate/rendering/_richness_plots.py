"""Figures for the richness measures of seed 004 (matplotlib's object API through
:func:`new_figure` / :func:`save_figure`; no pyplot state).

* :func:`plot_eigen_curves` -- the paper's three-panel visualisation (Sec. 5, eq. 5; Figs. 3, 11):
  (i) cumulative target power Π*(k), (ii) cumulative learned-function power Π̂(k),
  (iii) ρ_k/ρ_1, for one or several networks (ensembles are drawn as mean with a min-max band).
* :func:`plot_dlr_vs_knob` -- D_LR (mean ± standard error over seeds) against a richness knob.

Both take result objects from :mod:`richlazy.validate.richness` and a path, write a PNG and return
the path.
"""

from __future__ import annotations

import numbers
import pathlib
import warnings
from collections.abc import Sequence

import numpy as np
from matplotlib.ticker import NullLocator

from ..richness import EigenCurves, RichnessSweep
from ._figures import new_figure, save_figure

__all__ = ["plot_eigen_curves", "plot_dlr_vs_knob"]


def _band(ax, k, Y, color, label, *, log=False):
    with warnings.catch_warnings():  # all-NaN columns (zero eigenvalues) are simply not drawn
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(Y, axis=0)
        lo, hi = np.nanmin(Y, axis=0), np.nanmax(Y, axis=0)
    ax.plot(k, mean, color=color, label=label, lw=1.6)
    if Y.shape[0] > 1:
        ax.fill_between(k, lo, hi, color=color, alpha=0.2, lw=0)
    if log:
        ax.set_yscale("log")


def plot_eigen_curves(
    curves: EigenCurves | Sequence[EigenCurves],
    path,
    *,
    labels: Sequence[str] | None = None,
    drop_first: bool = True,
    max_k: int | None = None,
    title: str | None = None,
    d_lr: Sequence[float] | None = None,
) -> pathlib.Path:
    """Three-panel eigen-visualisation of seed 004 (eq. 5) for one or several networks.

    curves : one :class:`EigenCurves` or a list (one per network / condition); an object with an
        ensemble axis E > 1 is drawn as its mean with a min-max band over members.
    labels : legend entries (default "net 0", ...). d_lr : optional D_LR values appended to the
        labels in square brackets, as in the paper's figures.
    drop_first : start the k axis at 2 -- the first eigenfunction is the constant mode, which
        CKA ignores (App. D.2); the cumulative sums still include it.
    max_k : last k shown (default: all p).
    """
    items = [curves] if isinstance(curves, EigenCurves) else list(curves)
    if not items or not all(isinstance(c, EigenCurves) for c in items):
        raise TypeError("curves must be an EigenCurves or a non-empty sequence of them")
    if labels is not None and len(labels) != len(items):
        raise ValueError(f"labels has {len(labels)} entries for {len(items)} curve sets")
    if d_lr is not None and len(d_lr) != len(items):
        raise ValueError(f"d_lr has {len(d_lr)} entries for {len(items)} curve sets")
    k_min = 2 if drop_first else 1
    if max_k is not None and (isinstance(max_k, bool) or not isinstance(max_k, numbers.Integral)
                              or max_k < k_min):
        raise ValueError(f"max_k must be None or an int >= {k_min} (drop_first={drop_first}), got {max_k!r}")
    labels = list(labels) if labels is not None else [f"net {i}" for i in range(len(items))]
    if d_lr is not None:
        labels = [f"{lab} [{v:.3g}]" for lab, v in zip(labels, d_lr, strict=True)]
    fig, axes = new_figure(1, 3, figsize=(12.0, 3.6), layout="tight")
    colors = [f"C{i % 10}" for i in range(len(items))]
    start = 1 if drop_first else 0
    for c, lab, col in zip(items, labels, colors, strict=True):
        stop = c.k.size if max_k is None else min(max_k, c.k.size)
        sl = slice(start, stop)
        k = c.k[sl]
        _band(axes[0], k, c.target_power[:, sl], col, lab)
        _band(axes[1], k, c.learned_power[:, sl], col, lab)
        beyond = c.k[None, sl] > c.rank[:, None]  # round-off eigenvalues are not drawn
        rel = np.where(beyond, np.nan, c.relative_eigenvalues[:, sl])
        _band(axes[2], k, rel, col, lab, log=True)
    axes[0].set_title(r"(i) $\Pi^*(k)$ target power")
    axes[1].set_title(r"(ii) $\hat\Pi(k)$ learned-function power")
    axes[2].set_title(r"(iii) $\rho_k/\rho_1$")
    for ax in axes:
        ax.set_xlabel("k (eigenfunction index)")
        ax.set_xscale("log")
        ax.grid(alpha=0.3, which="both")
    for ax in axes[:2]:
        ax.set_ylim(-0.02, 1.02)
    axes[1].legend(fontsize=8, loc="lower right")
    if title:
        fig.suptitle(title)
    return save_figure(fig, path)


def plot_dlr_vs_knob(
    sweep: RichnessSweep,
    path,
    *,
    log_x: bool = True,
    title: str | None = None,
) -> pathlib.Path:
    """D_LR (or ``sweep.measure_name``) against a knob: mean ± standard error over seeds, with
    the individual seeds as faint points."""
    if not isinstance(sweep, RichnessSweep):
        raise TypeError(f"sweep must be a RichnessSweep, got {type(sweep).__name__}")
    fig, ax = new_figure(figsize=(4.8, 3.6), layout="tight")
    x = np.asarray(sweep.values, dtype=float)
    M = np.asarray(sweep.measure, dtype=float)
    for j in range(M.shape[1]):
        ax.plot(x, M[:, j], "o", color="0.6", ms=3, alpha=0.6)
    se = sweep.stderr
    ax.errorbar(
        x,
        sweep.mean,
        yerr=np.nan_to_num(se),
        fmt="-o",
        color="C0",
        capsize=3,
        label=f"mean ± s.e. ({M.shape[1]} seeds)",
    )
    if log_x:
        ax.set_xscale("log")
        ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticks(x)
    ax.set_xticklabels([f"{v:g}" for v in x])
    ax.set_xlabel(sweep.knob)
    ax.set_ylabel(sweep.measure_name)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return save_figure(fig, path)
