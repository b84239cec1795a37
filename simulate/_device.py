"""Device and dtype resolution for the torch simulator."""

from __future__ import annotations

import torch

from .checks import as_generator, check_device, check_float_dtype, check_seed

__all__ = ["resolve_device", "resolve_dtype", "make_generator"]


def resolve_device(device="auto") -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU; ``"cpu"``/``"cuda"``/``"cuda:K"`` as given.

    Asking for CUDA on a machine without it raises ValueError naming ``device`` (no silent
    fallback)."""
    return check_device(device)


def resolve_dtype(dtype) -> torch.dtype:
    """``torch.float32``/``torch.float64`` or ``"float32"``/``"float64"`` as a torch dtype;
    anything else raises ValueError naming ``dtype``."""
    return check_float_dtype(dtype)


def make_generator(seed: int, device="cpu") -> torch.Generator:
    """A fresh ``torch.Generator`` on ``device`` (resolved as :func:`resolve_device`) seeded with
    ``seed`` (never global RNG)."""
    return as_generator(check_seed(seed), check_device(device))
