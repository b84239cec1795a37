"""How long neurons keep their codes: lagged persistences of integer codes and top-k sets over
sampling time, the series whose chain diagnostics go with them, and the mixing value of codes
that have decorrelated. Used by ``coding/persistence`` and ``coding/deep-sigmoid``.

Persistence at lag l is the fraction of (time origin, neuron) pairs whose code at the two times is
equal, averaged over all origins in the recorded window.
"""

from __future__ import annotations

import numpy as np

from ..core._compare import compare

__all__ = ["PERSISTENCE_TOL_NOTE", "lagged_persistence", "lagged_set_persistence", "mixing_value",
           "origin_series", "persistence_curve", "persistence_rule"]

#: the tolerance rule of :func:`persistence_rule`, for the compared quantity's note
PERSISTENCE_TOL_NOTE = ("abs tolerance 3/N + 4 SE (finite-N corrections O(1/N)); SE = max(binomial "
                        "over the E*N neurons, chain-to-chain spread / sqrt(E))")


def persistence_rule(run, name, theory, est, *, note, erg):
    """A persistence (a fraction of neurons, or its excess over the mixing value) as the rule of a
    declared case's compared row: ``est`` = (value, SE, mixing), absolute tolerance 4 SE + 3/N
    with N = ``run.cfg.N``; ``erg`` the ergodicity class (keywords of :func:`compare`)."""
    value, se, mixing = est
    return compare(name, theory, value, stderr=se, kind="abs", tol=4 * se + 3.0 / run.cfg.N,
                   mixing=mixing, note=note, **erg)


def lagged_persistence(keys, lag: int) -> np.ndarray:
    """Per-chain fraction of (origin, neuron) pairs with equal code at lag ``lag``:
    keys (S, E, N) integer codes -> (E,)."""
    keys = np.asarray(keys)
    if keys.ndim != 3:
        raise ValueError(f"keys must have shape (S, E, N), got {keys.shape}")
    if isinstance(lag, bool) or not isinstance(lag, int) or not 0 <= lag < keys.shape[0]:
        raise ValueError(f"lag must be an int in [0, S = {keys.shape[0]}), got {lag!r}")
    if lag == 0:
        return np.ones(keys.shape[1])
    return (keys[lag:] == keys[:-lag]).mean(axis=(0, 2))


def lagged_set_persistence(top, lag: int) -> np.ndarray:
    """Per-chain fraction of the top-k neurons at time s that are again top-k at s + lag:
    top (S, E, k) neuron indices -> (E,)."""
    top = np.asarray(top)
    if top.ndim != 3:
        raise ValueError(f"top must have shape (S, E, k), got {top.shape}")
    S, E, k = top.shape
    if isinstance(lag, bool) or not isinstance(lag, int) or not 0 <= lag < S:
        raise ValueError(f"lag must be an int in [0, S = {S}), got {lag!r}")
    if lag == 0:
        return np.ones(E)
    hits = (top[lag:, :, :, None] == top[:-lag, :, None, :]).any(-1)  # (S-lag, E, k)
    return hits.mean(axis=(0, 2))


def origin_series(same):
    """Per-origin series of a lagged persistence: ``same`` (S - lag, E, units) booleans (unit
    equal at origin s and s + lag) -> (S - lag, E), the fraction of units per origin and chain;
    its mean is the compared persistence and it is the series whose chain diagnostics are
    reported (consecutive origins overlap, which the ESS accounts for)."""
    return np.asarray(same, dtype=float).mean(axis=2)


def persistence_curve(keys, n_lags=12):
    S = keys.shape[0]
    lags = np.unique(np.linspace(0, S // 2, n_lags).astype(int))
    return lags, np.array([lagged_persistence(keys, int(l)).mean() for l in lags])


def mixing_value(keys) -> float:
    """Persistence of codes that have fully decorrelated: ``sum_gamma p_gamma^2`` with p the
    pooled fractions of the integer codes ``keys`` (any shape); the probability that two
    independent draws from p agree."""
    keys = np.asarray(keys)
    if keys.size == 0:
        raise ValueError("keys must hold at least one code, got an empty array")
    _, counts = np.unique(keys, return_counts=True)
    p = counts / keys.size
    return float(np.sum(p * p))
