"""Device and dtype resolution for the torch simulator."""

from __future__ import annotations

import torch

from .checks import as_generator, check_seed

__all__ = ["resolve_device", "resolve_dtype", "make_generator"]

_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def resolve_device(device="auto") -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU; ``"cpu"``/``"cuda"``/``"cuda:K"`` as given.

    Asking for CUDA on a machine without it raises ValueError (no silent fallback)."""
    if isinstance(device, torch.device):
        dev = device
    elif isinstance(device, str):
        if device == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        try:
            dev = torch.device(device)
        except RuntimeError:
            raise ValueError(f"device must be 'auto', 'cpu' or 'cuda[:K]', got {device!r}") from None
    else:
        raise TypeError(f"device must be a str or torch.device, got {type(device).__name__}")
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'auto', 'cpu' or 'cuda[:K]', got {device!r}")
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but CUDA is not available; use 'cpu' or 'auto'")
    return dev


def resolve_dtype(dtype) -> torch.dtype:
    if isinstance(dtype, torch.dtype) and dtype in _DTYPES.values():
        return dtype
    if isinstance(dtype, str) and dtype in _DTYPES:
        return _DTYPES[dtype]
    raise ValueError(f"dtype must be one of {tuple(_DTYPES)}, got {dtype!r}")


def make_generator(seed: int, device: torch.device) -> torch.Generator:
    """A fresh ``torch.Generator`` on ``device`` seeded with ``seed`` (never global RNG)."""
    return as_generator(check_seed(seed), device)
