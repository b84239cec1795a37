"""Same-different (SD) task generators of seed 003 (Tong & Pehlevan, §2, App. G.2).

All generators are batched over an ensemble axis E (one task instance per ensemble member, e.g.
seeds × γ × L), take an explicit ``torch.Generator`` and are deterministic given it. Shapes:
inputs (E, B, D), labels (E, B) with 1 = "same", 0 = "different". By default every batch is
exactly balanced: the first B//2 examples of each member are "same", the rest "different" (the
order is irrelevant for mean-loss SGD and accuracy); ``labels="bernoulli"`` draws i.i.d.
Bernoulli(½) labels instead, as the published experiment code of seed 003 does (see
docs/equality.md, "Structured SD step and the two protocols"). The image variants live in
:mod:`._psvrt` and :mod:`._pentomino`.

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
    check_alloc,
    check_float_dtype,
    check_generator,
    check_generator_device,
    check_int,
    check_nonneg_float,
)
from ._pairs import check_labels, member_counts, pair_indices

__all__ = ["sd_symbols", "sd_test_batch", "sd_train_batch"]


def sd_symbols(n_tasks: int, L: int, d: int, *, generator, device=None, dtype=torch.float32):
    """L training symbols s ~ N(0, I/d) for each of ``n_tasks`` members: tensor (E, L, d).
    Sizes whose symbols exceed 16 GiB raise ValueError."""
    E = check_int("n_tasks", n_tasks, minimum=1)
    L = check_int("L", L, minimum=2)
    d = check_int("d", d, minimum=1)
    g = generator
    device = check_generator_device(g, device)
    dtype = check_float_dtype(dtype)
    check_alloc(f"n_tasks={E}, L={L}, d={d}", 2 * E * L * d, itemsize=dtype.itemsize,
                what="the (n_tasks, L, d) symbols and their draws")
    return torch.randn(E, L, d, generator=g, device=device, dtype=dtype) / d**0.5


def check_symbols(symbols) -> tuple[int, int, int]:
    """``symbols`` checked to be a finite floating tensor (E, L, d) with E >= 1, L >= 2, d >= 1;
    returns (E, L, d)."""
    if not isinstance(symbols, torch.Tensor) or symbols.ndim != 3:
        raise ValueError("symbols must be a tensor of shape (E, L, d)")
    E, Lmax, d = symbols.shape
    if E < 1 or Lmax < 2 or d < 1:
        raise ValueError(f"symbols must hold >= 1 member with >= 2 symbols of dimension >= 1, got shape "
                         f"{tuple(symbols.shape)}")
    if not symbols.dtype.is_floating_point or not bool(torch.isfinite(symbols).all()):
        raise ValueError("symbols must be a finite floating-point tensor")
    return E, Lmax, d


def sd_batch_from_indices(symbols, u, v, y, sigma2: float, generator):
    """x = (s_u + η1; s_v + η2) (E, B, 2d) and y in the dtype of ``symbols`` (no checks: the
    callers check once). Noise η ~ N(0, σ²/d) is drawn only when σ² > 0."""
    E, _, d = symbols.shape
    idx = torch.arange(E, device=symbols.device)[:, None]
    x = torch.cat([symbols[idx, u], symbols[idx, v]], dim=-1)
    if sigma2 > 0:
        noise = torch.randn(x.shape, generator=generator, device=x.device, dtype=x.dtype)
        x = x + noise * (sigma2 / d) ** 0.5
    return x, y.to(symbols.dtype)


def sd_train_batch(symbols, batch_size: int, *, n_symbols=None, sigma2: float = 0.0, generator,
                   labels: str = "balanced"):
    """SD training batch from each member's fixed symbols (seed 003 §2, App. G.2).

    ``symbols`` (E, L_max, d); ``n_symbols`` (E,) optional number L_e <= L_max of symbols member
    e uses (its first L_e rows), so a sweep over L runs in one ensemble. Same pairs (s_u; s_u),
    different pairs (s_u; s_v) with v uniform over the other L_e − 1 symbols; fresh noise
    η ~ N(0, σ²/d) on every component. ``labels="balanced"`` (default, richlazy's protocol):
    exactly B//2 same pairs; ``labels="bernoulli"``: each label Bernoulli(½) independently
    (the published code's batches). Returns ``(x, y)``: x (E, B, 2d), y (E, B). A
    ``batch_size`` whose batch exceeds 16 GiB raises ValueError.
    """
    E, Lmax, d = check_symbols(symbols)
    B = check_int("batch_size", batch_size, minimum=2)
    check_alloc(f"batch_size={B} with E={E}, d={d}", E * B * (4 * d + 6),
                what="the (E, batch_size, 2d) batch, its indices and labels")
    sigma2 = check_nonneg_float("sigma2", sigma2)
    g = check_generator(generator)
    labels = check_labels(labels)
    dev = symbols.device
    n = member_counts("n_symbols", n_symbols, E, Lmax, 2, dev)
    u, v, y = pair_indices(n, E, B, g, dev, labels)
    return sd_batch_from_indices(symbols, u, v, y, sigma2, g)


def sd_test_batch(n_tasks: int, n: int, d: int, *, sigma2: float = 0.0, generator, device=None,
                  dtype=torch.float32, labels: str = "balanced"):
    """SD test pairs with fresh symbols (never the training symbols): (x, y).

    x (E, n, 2d): with ``labels="balanced"`` the first n//2 pairs per member are same (z1, z2
    share s), the rest use two independent symbols; with ``labels="bernoulli"`` each pair is same
    with probability ½ independently (the published code's fresh test batches). Noise
    N(0, σ²/d) on every component. Sizes whose batch exceeds 16 GiB raise ValueError.
    """
    E = check_int("n_tasks", n_tasks, minimum=1)
    n = check_int("n", n, minimum=2)
    d = check_int("d", d, minimum=1)
    sigma2 = check_nonneg_float("sigma2", sigma2)
    g = generator
    device = check_generator_device(g, device)
    dtype = check_float_dtype(dtype)
    labels = check_labels(labels)
    check_alloc(f"n_tasks={E}, n={n}, d={d}", E * n * (8 * d + 3), itemsize=dtype.itemsize,
                what="the (n_tasks, n, 2d) test pairs and their draws")
    s1 = torch.randn(E, n, d, generator=g, device=device, dtype=dtype) / d**0.5
    s2 = torch.randn(E, n, d, generator=g, device=device, dtype=dtype) / d**0.5
    if labels == "bernoulli":
        same = torch.rand(E, n, generator=g, device=device, dtype=torch.float64) < 0.5
        s2 = torch.where(same[..., None], s1, s2)
        y = same.to(dtype)
    else:
        ns = n // 2
        s2[:, :ns] = s1[:, :ns]
        y = torch.zeros(E, n, device=device, dtype=dtype)
        y[:, :ns] = 1.0
    x = torch.cat([s1, s2], dim=-1)
    if sigma2 > 0:
        x = x + torch.randn(x.shape, generator=g, device=device, dtype=dtype) * (sigma2 / d) ** 0.5
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
