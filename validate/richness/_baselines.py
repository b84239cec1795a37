"""Baselines and sweeps of seed 004 (Sec. 4.1): the squared parameter norm, and a richness measure
recorded against a knob over seeds (:class:`RichnessSweep`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..stats import mean_se
from ._arrays import _to_numpy

__all__ = ["RichnessSweep", "parameter_norm_sq"]


def parameter_norm_sq(params, *, batched: bool = False):
    """Squared parameter norm ||θ||_F^2 = Σ over all parameter arrays of Σ θ^2 (Sec. 4.1). [MT]

    params : one array/tensor, an iterable of them, or an object with a ``parameters()`` method
        (e.g. a torch module). batched=True: every array has a leading ensemble axis E and the
        result is an ndarray (E,).
    """
    if hasattr(params, "parameters") and callable(params.parameters):
        params = list(params.parameters())
    elif hasattr(params, "detach") or isinstance(params, np.ndarray):
        params = [params]
    elif isinstance(params, Iterable):
        params = list(params)
    else:
        raise TypeError(f"params must be an array, an iterable of arrays or a module, got {type(params)}")
    if not params:
        raise ValueError("params is empty")
    total = None
    for i, p in enumerate(params):
        a = np.asarray(_to_numpy(p, f"params[{i}]"), dtype=np.float64)
        if not np.isfinite(a).all():
            raise ValueError(f"params[{i}] contains NaN or infinite values")
        if batched:
            if a.ndim < 1:
                raise ValueError(f"params[{i}] needs a leading ensemble axis when batched=True")
            v = (a.reshape(a.shape[0], -1) ** 2).sum(axis=1)
        else:
            v = float(np.sum(a**2))
        if total is not None and batched and np.shape(v) != np.shape(total):
            raise ValueError(f"params[{i}] has ensemble size {a.shape[0]}, expected {len(total)}")
        total = v if total is None else total + v
    return total


@dataclass(frozen=True)
class RichnessSweep:
    """D_LR (or any richness measure) against a knob, with seeds: values (K,), measure (K, S).

    knob : name of the knob (e.g. "alpha (target downscale)", "gamma").
    values : (K,) knob values.  measure : (K, S) one entry per knob value and seed.
    measure_name : label, default "D_LR".
    """

    knob: str
    values: np.ndarray
    measure: np.ndarray
    measure_name: str = "D_LR"

    @property
    def mean(self) -> np.ndarray:
        return self.measure.mean(axis=1)

    @property
    def stderr(self) -> np.ndarray:
        """Seed-to-seed standard error per knob value (NaN with one seed or a non-finite entry)."""
        M = np.asarray(self.measure, dtype=float)
        se = np.full(M.shape[0], np.nan)
        ok = np.isfinite(M).all(axis=1)
        if M.shape[1] >= 2 and ok.any():
            se[ok] = mean_se(M[ok], axis=1)[1]
        return se
