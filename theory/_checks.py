"""Input validation helpers for richlazy.theory: messages name the argument, the value given and
what is required."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["as_float_matrix", "as_float_array", "check_int", "check_pos_float", "check_nonneg_float"]


def as_float_array(name: str, x, *, ndim: int | None = None, finite: bool = True) -> np.ndarray:
    if hasattr(x, "detach"):  # torch tensors from users, without importing torch
        x = x.detach().cpu().numpy()
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real numeric array, got {type(x).__name__}") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (found NaN or inf)")
    return arr


def as_float_matrix(name: str, x, *, allow_1d: bool = False) -> np.ndarray:
    arr = as_float_array(name, x)
    if allow_1d and arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
    return arr


def check_int(name: str, v, *, minimum: int | None = None) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {v!r} ({type(v).__name__})")
    v = int(v)
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    return v


def _check_real(name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {v!r} ({type(v).__name__})")
    v = float(v)
    if not np.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    return v


def check_pos_float(name: str, v) -> float:
    v = _check_real(name, v)
    if v <= 0:
        raise ValueError(f"{name} must be > 0, got {v}")
    return v


def check_nonneg_float(name: str, v) -> float:
    v = _check_real(name, v)
    if v < 0:
        raise ValueError(f"{name} must be >= 0, got {v}")
    return v
