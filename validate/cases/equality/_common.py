"""Shared pieces of the equality (seed 003) cases (the ensembles they train come from
:func:`richlazy.validate.recipes.train_sd`): the NTK-machine reference accuracies, the Eq. (C.18)
accuracy band, the comparison rules of their declarations and the error-bar plot of seed-to-seed means.

Randomness comes from the case's streams only (``ctx.generator(k)``); a case that needs the same
data twice asks for the same ``k`` twice.
"""

from __future__ import annotations

import functools

import numpy as np
from richlazy.theory import (
    kernel_gradient_descent,
    kernel_regression_predict,
    rich_accuracy,
    sd_training_pairs,
)
from richlazy.validate import compare

from ...stats import mean_se

__all__ = ["Z", "accuracy_band", "compared", "errorbar", "ntk_accuracies", "rule"]

Z = 3.0  # number of standard errors for statistical comparisons


def ntk_accuracies(S, xt, yt, *, steps: int, every: int) -> tuple[np.ndarray, np.ndarray]:
    """Per member: the best test accuracy of the infinite-width NTK machine trained for ``steps``
    function-space steps on all L² distinct training pairs of its symbols S[e] (recorded every
    ``every`` steps), and the accuracy of NTK ridgeless regression (seed 003 App. D)."""
    n = S.shape[0]
    gd, kr = np.zeros(n), np.zeros(n)
    for s in range(n):
        x, y, p = sd_training_pairs(S[s].double().numpy())
        xs, ys = xt[s].double().numpy(), yt[s].numpy() > 0.5
        f, _ = kernel_gradient_descent(x, y, xs, p=p, lr=0.1, n_steps=steps, record_every=every)
        gd[s] = ((f > 0) == ys).mean(1).max()
        kr[s] = ((kernel_regression_predict(x, y, xs, kernel="ntk") > 0) == ys).mean()
    return gd, kr


def errorbar(ax, x, samples, fmt: str = "o-", *, label: str, **kw):
    """Mean ± seed-to-seed standard error of ``samples`` (last axis = seeds) against ``x``."""
    m, se = mean_se(samples)
    ax.errorbar(x, m, yerr=se, fmt=fmt, ms=kw.pop("ms", 3), capsize=kw.pop("capsize", 2),
                label=label, **kw)


def accuracy_band(L):
    """Half-width of the Eq. (C.18) accuracy band spanned by the seed's measured readout ratio:
    ρ = 1.56 ± 0.09 for L >= 3 and 0.99 ± 0.07 for L = 2 (two standard deviations, App. C.4.3)."""
    if L == 2:
        rhos, ref = (0.92, 1.06), 1.0
    else:
        rhos, ref = (1.47, 1.65), 1.5
    base = rich_accuracy(L, ref)
    return max(abs(rich_accuracy(L, r) - base) for r in rhos)


def compared(run, name, theory, estimate, *, kind: str, note: str, tol: float = Z,
             floor: float | None = None, band: float | None = None):
    """The rule of a compared row: ``compare(name, theory, mean, stderr=se, kind=kind, tol=tol,
    note=note)`` of an estimate ``(mean, se)`` (or a bare mean, without standard error), the
    standard error floored at ``floor`` when given; with ``band``, the tolerance is
    ``band + tol * se`` (an accuracy band plus ``tol`` standard errors)."""
    m, se = estimate if isinstance(estimate, tuple) else (estimate, None)
    if floor is not None:
        se = max(se, floor)
    if band is not None:
        tol = band + tol * se
    return compare(name, theory, m, stderr=se, kind=kind, tol=tol, note=note)


def rule(kind: str, note: str, *, tol: float = Z, floor: float | None = None):
    """:func:`compared` with fixed tolerance kind, size, note and standard-error floor."""
    return functools.partial(compared, kind=kind, note=note, tol=tol, floor=floor)
