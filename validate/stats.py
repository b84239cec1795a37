"""Standard errors for MCMC output that account for autocorrelation.

All functions take samples shaped ``(S, E, ...)``: S successive recorded samples of E independent
chains (any trailing shape), except that the multi-chain diagnostics below take a keyword
``layout``: ``"draw_chain"`` for (S, E, ...) or ``"chain_draw"`` for (E, S, ...), the (chain, draw)
order of NumPyro and ArviZ (without it, deprecated: (S, E, ...) with a DeprecationWarning;
``"chain_draw"`` becomes their default in the next release). The other rules keep (S, E, ...).
They are pure numpy and never print.

* :func:`batch_means` - pooled non-overlapping batch means: each chain is cut into ``n_batches``
  contiguous batches; the E * n_batches batch means are treated as (nearly) independent, so the
  standard error of the grand mean is ``std(batch means) / sqrt(E * n_batches)``. Valid when a
  batch is much longer than the autocorrelation time (check with :func:`effective_sample_size`).
* :func:`mean_se` - mean and standard error across independent replicas (seeds, ensemble members,
  independent chains): ``std(ddof=1) / sqrt(n)`` along one axis.
* :func:`chain_se`, :func:`chain_mean_se`, :func:`fraction_se`, :func:`binomial_se` - the
  standard-error rules of the validation cases and sweeps: the larger of batch means and the
  chain-to-chain spread; the spread of per-chain means across independent chains; a fraction of
  units (binomial, floored at one unit, or the chain spread); a binomial proportion floored at
  p(1-p) = 1/4 n.
* :func:`effective_sample_size` - Geyer's initial-positive-sequence estimate from the
  chain-averaged autocorrelation function (Geyer 1992, Stat. Sci. 7, 473).
* :func:`chain_diagnostics` (:class:`Mixing`), :func:`split_rhat`, :func:`ess_bulk`,
  :func:`ess_tail`, :func:`worst_mixing` and :data:`RHAT_MAX` - multi-chain convergence
  diagnostics: rank-normalised split-R-hat and bulk/tail ESS (Vehtari et al. 2021, Bayesian
  Analysis 16, 667), defined in :mod:`richlazy.validate._diagnostics`.
"""

from __future__ import annotations

import math
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
           "binomial_se", "chain_mean_se", "chain_se", "fraction_se",
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


def _numeric_array(name, x, *, min_ndim: int, what: str):
    """``x`` as an array of its own real dtype (not converted, so sums keep the caller's
    precision); non-numeric or complex input raises TypeError, fewer than ``min_ndim`` axes or
    non-finite values ValueError, each naming ``name``."""
    a = np.asarray(x)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be a real numeric array, got dtype {a.dtype}")
    if a.ndim < min_ndim:
        raise ValueError(f"{name} must have shape {what}, got shape {a.shape}")
    if a.size == 0 or not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be non-empty and finite, got shape {a.shape}")
    return a


def _positive_int(name, n):
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {n!r} ({type(n).__name__})")
    if n < 1:
        raise ValueError(f"{name} must be >= 1, got {n}")
    return int(n)


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


# ---------------------------------------------------------------------------------------------
# standard-error rules of the validation cases and sweeps (moved here from the case modules and
# experiments that defined them; arithmetic unchanged)
# ---------------------------------------------------------------------------------------------


def chain_se(x):
    """Standard error of the grand mean of x (S, E): the larger of pooled batch means (4 per
    chain) and the chain-to-chain spread (the bulk readout drifts on ~100 paper-time units)."""
    x = _numeric_array("x", x, min_ndim=2, what="(S, E) with S samples of E chains").astype(float)
    _, se_b = batch_means(x, n_batches=4)
    per_chain = x.mean(0)
    se_c = float(mean_se(per_chain)[1]) if per_chain.size > 1 else 0.0
    return float(max(se_b, se_c))


def chain_mean_se(x):
    """Mean over samples per chain, then mean and standard error across independent chains.

    ``x`` (S, E, ...): the trailing axes are averaged with the samples. No chain diagnostics
    (R-hat, ESS) belong to it when every chain samples the posterior of its own training set (the
    ldt ensembles, :func:`richlazy.validate.recipes.erf_ensemble`): the chains have different
    targets and a between-chain R-hat would measure the data-set spread, not mixing; the value
    is an average over these independent chains."""
    x = _numeric_array("x", x, min_ndim=2, what="(S, E, ...) with S samples of E >= 2 chains")
    m, se = mean_se(x.reshape(x.shape[0], x.shape[1], -1).mean(axis=(0, 2)))
    return float(m), float(se)


def fraction_se(per_chain, n_units):
    """Mean ``p`` of per-chain fractions (E,) of ``n_units`` units and its standard error:
    ``max(sqrt(max(p (1 - p), 1/n_units) / n_units), chain-to-chain SE)`` (binomial over the
    units floored at one unit; no chain term for E = 1). Returns ``(p, se)``."""
    per_chain = _numeric_array("per_chain", per_chain, min_ndim=1, what="(E,)")
    if per_chain.ndim != 1:
        raise ValueError(f"per_chain must have shape (E,), got shape {per_chain.shape}")
    n_units = _positive_int("n_units", n_units)
    p = float(per_chain.mean())
    binom = math.sqrt(max(p * (1 - p), 1.0 / n_units) / n_units)
    spread = float(mean_se(per_chain)[1]) if len(per_chain) > 1 else 0.0
    return p, max(binom, spread)


def binomial_se(p: float, n: int) -> float:
    """Standard error ``sqrt(max(p (1 - p), 1/(4 n)) / n)`` of a proportion ``p`` of ``n``
    independent trials (floored so that p = 0 or 1 still gets an error)."""
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"p must be a real number, got {p!r} ({type(p).__name__})")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be a proportion in [0, 1], got {p}")
    n = _positive_int("n", n)
    return math.sqrt(max(p * (1 - p), 0.25 / n) / n)
