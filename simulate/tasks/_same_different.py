"""Same-different (SD) task generators of seed 003 (Tong & Pehlevan, §2, App. G.2).

All generators are batched over an ensemble axis E (one task instance per ensemble member, e.g.
seeds × γ × L), take an explicit ``torch.Generator`` and are deterministic given it. Shapes:
inputs (E, B, D), labels (E, B) with 1 = "same", 0 = "different". Every batch is exactly
balanced: the first B//2 examples of each member are "same", the rest "different" (the order is
irrelevant for mean-loss SGD and accuracy). The image variants live in :mod:`._psvrt` and
:mod:`._pentomino`.

SD: symbols s ~ N(0, I/d), z = s + η, η ~ N(0, σ²/d · I), x = (z1; z2). Training pairs are built
from L fixed symbols per member, test pairs from fresh symbols.

Image scaling of PSVRT and Pentomino (our choice, documented in docs/equality.md): pixels are
scaled so that each object has unit norm, hence ‖x‖ ≈ √2 as in the SD task. CIFAR-100 + VGG-16
features (App. G.5) need a dataset and pretrained weights that are not available offline; no
generator is provided for them.
"""

from __future__ import annotations

import torch

from ..checks import (
    check_float_dtype,
    check_generator,
    check_generator_device,
    check_int,
    check_nonneg_float,
)
from ._pairs import member_counts, pair_indices

__all__ = ["sd_symbols", "sd_test_batch", "sd_train_batch"]


def sd_symbols(n_tasks: int, L: int, d: int, *, generator, device=None, dtype=torch.float32):
    """L training symbols s ~ N(0, I/d) for each of ``n_tasks`` members: tensor (E, L, d)."""
    E = check_int("n_tasks", n_tasks, minimum=1)
    L = check_int("L", L, minimum=2)
    d = check_int("d", d, minimum=1)
    g = generator
    device = check_generator_device(g, device)
    dtype = check_float_dtype(dtype)
    return torch.randn(E, L, d, generator=g, device=device, dtype=dtype) / d**0.5


def sd_train_batch(symbols, batch_size: int, *, n_symbols=None, sigma2: float = 0.0, generator):
    """Balanced SD training batch from each member's fixed symbols (seed 003 §2).

    ``symbols`` (E, L_max, d); ``n_symbols`` (E,) optional number L_e <= L_max of symbols member
    e uses (its first L_e rows), so a sweep over L runs in one ensemble. Same pairs (s_u; s_u),
    different pairs (s_u; s_v) with v uniform over the other L_e − 1 symbols; fresh noise
    η ~ N(0, σ²/d) on every component. Returns ``(x, y)``: x (E, B, 2d), y (E, B).
    """
    if not isinstance(symbols, torch.Tensor) or symbols.ndim != 3:
        raise ValueError("symbols must be a tensor of shape (E, L, d)")
    E, Lmax, d = symbols.shape
    if E < 1 or Lmax < 2 or d < 1:
        raise ValueError(f"symbols must hold >= 1 member with >= 2 symbols of dimension >= 1, got shape "
                         f"{tuple(symbols.shape)}")
    if not symbols.dtype.is_floating_point or not bool(torch.isfinite(symbols).all()):
        raise ValueError("symbols must be a finite floating-point tensor")
    B = check_int("batch_size", batch_size, minimum=2)
    sigma2 = check_nonneg_float("sigma2", sigma2)
    g = check_generator(generator)
    dev = symbols.device
    n = member_counts("n_symbols", n_symbols, E, Lmax, 2, dev)
    u, v, y = pair_indices(n, E, B, g, dev)
    idx = torch.arange(E, device=dev)[:, None]
    x = torch.cat([symbols[idx, u], symbols[idx, v]], dim=-1)
    if sigma2 > 0:
        x = x + torch.randn(x.shape, generator=g, device=dev, dtype=x.dtype) * (sigma2 / d) ** 0.5
    return x, y.to(symbols.dtype)


def sd_test_batch(n_tasks: int, n: int, d: int, *, sigma2: float = 0.0, generator, device=None,
                  dtype=torch.float32):
    """Balanced SD test pairs with fresh symbols (never the training symbols): (x, y).

    x (E, n, 2d): the first n//2 pairs per member are same (z1, z2 share s), the rest use two
    independent symbols; noise N(0, σ²/d) on every component.
    """
    E = check_int("n_tasks", n_tasks, minimum=1)
    n = check_int("n", n, minimum=2)
    d = check_int("d", d, minimum=1)
    sigma2 = check_nonneg_float("sigma2", sigma2)
    g = generator
    device = check_generator_device(g, device)
    dtype = check_float_dtype(dtype)
    s1 = torch.randn(E, n, d, generator=g, device=device, dtype=dtype) / d**0.5
    s2 = torch.randn(E, n, d, generator=g, device=device, dtype=dtype) / d**0.5
    ns = n // 2
    s2[:, :ns] = s1[:, :ns]
    x = torch.cat([s1, s2], dim=-1)
    if sigma2 > 0:
        x = x + torch.randn(x.shape, generator=g, device=device, dtype=dtype) * (sigma2 / d) ** 0.5
    y = torch.zeros(E, n, device=device, dtype=dtype)
    y[:, :ns] = 1.0
    return x, y


# The PSVRT and Pentomino generators lived in this module before the split; the names stay
# importable from here for old imports (the public path is ``richlazy.simulate``).
from ._pentomino import (  # noqa: E402, F401
    PENTOMINO_PATCH,
    one_sided_pentominoes,
    pentomino_batch,
    pentomino_canonical_id,
    split_pentominoes,
)
from ._psvrt import psvrt_batch, psvrt_patterns, psvrt_test_batch  # noqa: E402, F401
