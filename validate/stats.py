"""Standard errors for MCMC output that account for autocorrelation.

All functions take samples shaped ``(S, E, ...)``: S successive recorded samples of E independent
chains (any trailing shape). They are pure numpy and never print.

* :func:`batch_means` - pooled non-overlapping batch means: each chain is cut into ``n_batches``
  contiguous batches; the E * n_batches batch means are treated as (nearly) independent, so the
  standard error of the grand mean is ``std(batch means) / sqrt(E * n_batches)``. Valid when a
  batch is much longer than the autocorrelation time (check with :func:`effective_sample_size`).
* :func:`mean_se` - mean and standard error across independent replicas (seeds, ensemble members,
  independent chains): ``std(ddof=1) / sqrt(n)`` along one axis.
* :func:`effective_sample_size` - Geyer's initial-positive-sequence estimate from the
  chain-averaged autocorrelation function (Geyer 1992, Stat. Sci. 7, 473).
* :func:`chain_diagnostics` (:class:`Mixing`), :func:`split_rhat`, :func:`ess_bulk`,
  :func:`ess_tail`, :func:`worst_mixing` and :data:`RHAT_MAX` - multi-chain convergence
  diagnostics: rank-normalised split-R-hat and bulk/tail ESS (Vehtari et al. 2021, Bayesian
  Analysis 16, 667), defined in :mod:`richlazy.validate._diagnostics`.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ._diagnostics import (
    RHAT_MAX,
    Mixing,
    chain_diagnostics,
    ess_bulk,
    ess_tail,
    split_rhat,
    worst_mixing,
)

__all__ = ["Estimate", "batch_means", "effective_sample_size", "estimate", "mean_se",
           "RHAT_MAX", "Mixing", "chain_diagnostics", "ess_bulk", "ess_tail", "split_rhat",
           "worst_mixing"]


@dataclass(frozen=True)
class Estimate:
    """mean, stderr (batch means) and ess (effective sample size), each with the trailing shape."""

    mean: np.ndarray
    stderr: np.ndarray
    ess: np.ndarray


def _as_real(name, x):
    """``x`` as a float64 array; complex or non-numeric input raises TypeError naming ``name``."""
    if np.iscomplexobj(x):
        raise TypeError(f"{name} must be real, got a complex array")
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real numeric array, got {type(x).__name__}") from None


def _check(samples):
    x = _as_real("samples", samples)
    if x.ndim < 2:
        raise ValueError(f"samples must have shape (S, E, ...) with S samples of E chains, got {x.shape}")
    if x.shape[0] < 2:
        raise ValueError(f"need at least 2 samples per chain, got S = {x.shape[0]}")
    if not np.all(np.isfinite(x)):
        raise ValueError("samples contain NaN or inf")
    return x


def batch_means(samples, *, n_batches: int = 8):
    """Grand mean and its standard error from pooled batch means (see module doc)."""
    x = _check(samples)
    S = x.shape[0]
    if isinstance(n_batches, bool) or not isinstance(n_batches, numbers.Integral) or n_batches < 1:
        raise ValueError(f"n_batches must be an int >= 1, got {n_batches!r}")
    n_batches = min(n_batches, S)
    b = S // n_batches
    xb = x[: b * n_batches].reshape((n_batches, b) + x.shape[1:]).mean(axis=1)
    flat = xb.reshape((-1,) + x.shape[2:])
    k = flat.shape[0]
    if k < 2:
        raise ValueError("need at least 2 batch means (more samples, chains or batches)")
    se = flat.std(axis=0, ddof=1) / np.sqrt(k)
    return x.mean(axis=(0, 1)), se


def effective_sample_size(samples):
    """Total effective sample size over all chains (Geyer initial positive sequence)."""
    x = _check(samples)
    S, E = x.shape[:2]
    xc = x - x.mean(axis=0, keepdims=True)
    var = (xc**2).mean(axis=(0, 1))
    n = 1 << (2 * S - 1).bit_length()
    f = np.fft.rfft(xc, n=n, axis=0)
    acov = np.fft.irfft(f * np.conj(f), n=n, axis=0)[:S].mean(axis=1) / S  # (S, ...)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.where(var > 0, acov / var, 0.0)
    # initial positive sequence: sum pairs Gamma_k = rho_2k + rho_2k+1 while positive
    m = (S - 1) // 2
    pairs = rho[: 2 * m].reshape((m, 2) + rho.shape[1:]).sum(axis=1)
    pos = np.cumprod(pairs > 0, axis=0).astype(bool)
    tau = -1.0 + 2.0 * np.sum(np.where(pos, pairs, 0.0), axis=0)
    tau = np.maximum(tau, 1.0 / S)
    ess = E * S / tau
    return np.where(var > 0, np.minimum(ess, E * S), float(E * S))


def estimate(samples, *, n_batches: int = 8) -> Estimate:
    """Mean, batch-means standard error and effective sample size of ``samples`` (S, E, ...)."""
    mean, se = batch_means(samples, n_batches=n_batches)
    return Estimate(mean, se, effective_sample_size(samples))


def mean_se(x, axis: int = -1):
    """Mean and standard error of the mean across independent replicas along ``axis``.

    ``se = std(x, ddof=1) / sqrt(n)`` with ``n = x.shape[axis] >= 2``. For autocorrelated samples
    of a chain use :func:`batch_means` instead. Returns numpy arrays (0-d for 1-D input).
    ``axis`` must be an int in ``[-x.ndim, x.ndim)`` (ValueError otherwise).
    """
    x = _as_real("x", x)
    if x.ndim == 0:
        raise ValueError("x must have at least one axis of replicas, got a scalar")
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"axis must be an int, got {axis!r} ({type(axis).__name__})")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be in [{-x.ndim}, {x.ndim - 1}] for x of shape {x.shape}, "
                         f"got {axis}")
    axis = int(axis)
    if x.size == 0:
        raise ValueError(f"x must be non-empty, got shape {x.shape}")
    n = x.shape[axis]
    if n < 2:
        raise ValueError(f"need at least 2 replicas along axis {axis} for a standard error, got {n}")
    if not np.all(np.isfinite(x)):
        raise ValueError("x contains NaN or inf")
    return x.mean(axis), x.std(axis, ddof=1) / np.sqrt(n)
