"""Input checks for :mod:`richlazy.simulate` (torch): run before any tensor is touched.

The torch twin of :mod:`richlazy.theory.checks` (the two packages never import each other).
Messages name the public argument, the value given and what is required; numpy scalars are
accepted wherever a Python number is.
"""

from __future__ import annotations

import math
import numbers

import torch

__all__ = [
    "as_generator",
    "check_count",
    "check_generator",
    "check_int",
    "check_nonneg_float",
    "check_pos_float",
    "check_real",
    "check_seed",
]


def check_int(name: str, v, *, minimum: int | None = None) -> int:
    """``v`` as an int (numpy integers accepted, bools rejected), optionally ``>= minimum``."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {v!r} ({type(v).__name__})")
    v = int(v)
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    return v


def check_count(name: str, v, *, minimum: int = 0) -> int:
    """``v`` as an int ``>= minimum`` for counts (steps, sizes, intervals): a value of the wrong
    type or below ``minimum`` raises ValueError "``name`` must be an int >= ``minimum``"."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or int(v) < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {v!r}")
    return int(v)


def check_real(name: str, v) -> float:
    """``v`` as a finite float (numpy scalars and 0-d tensors accepted, bools rejected)."""
    if isinstance(v, torch.Tensor) and v.ndim == 0 and not v.is_complex():
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {v!r} ({type(v).__name__})")
    v = float(v)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    return v


def check_pos_float(name: str, v) -> float:
    """``v`` as a finite float ``> 0``."""
    v = check_real(name, v)
    if v <= 0:
        raise ValueError(f"{name} must be a finite real number > 0, got {v}")
    return v


def check_nonneg_float(name: str, v) -> float:
    """``v`` as a finite float ``>= 0``."""
    v = check_real(name, v)
    if v < 0:
        raise ValueError(f"{name} must be a finite real number >= 0, got {v}")
    return v


def check_seed(seed, *, name: str = "seed") -> int:
    """``seed`` as a non-negative int (numpy integers accepted)."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"{name} must be a non-negative int, got {seed!r} ({type(seed).__name__})")
    if int(seed) < 0:
        raise ValueError(f"{name} must be a non-negative int, got {int(seed)}")
    return int(seed)


def check_generator(generator, *, name: str = "generator") -> torch.Generator:
    """``generator`` checked to be a ``torch.Generator`` (``None`` rejected: richlazy never draws
    from torch's global stream)."""
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"{name} must be a torch.Generator (explicit randomness), "
                        f"got {type(generator).__name__}")
    return generator


def as_generator(seed, device, *, name: str = "seed") -> torch.Generator:
    """``seed`` (non-negative int or ``torch.Generator``) as a generator on ``device``.

    A Generator is returned as given after checking it lives on ``device``'s type; an int seeds a
    fresh one. ``None`` is rejected: richlazy never draws from torch's global stream.
    """
    device = torch.device(device)
    if isinstance(seed, torch.Generator):
        if seed.device.type != device.type:
            raise ValueError(f"{name} is a generator on {seed.device.type!r} but the tensors live on "
                             f"{device.type!r}; create it with torch.Generator(device={device.type!r})")
        return seed
    s = check_seed(seed, name=name)
    g = torch.Generator(device=device)
    g.manual_seed(s)
    return g
