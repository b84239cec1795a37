"""PSVRT same-different images of seed 003 (§4.1, App. G.3).

Two patch-aligned ±1 bit-patterns on a blank image of n_patches × n_patches patches of
patch_size² pixels; same iff the patterns are identical. Training and test patterns are disjoint
sets. Pixels are the bits times 1/patch_size (unit-norm objects). Batched over an ensemble axis E
with an explicit ``torch.Generator``; batches are balanced as in :mod:`._same_different`.
"""

from __future__ import annotations

import torch

from ..checks import check_alloc, check_generator, check_generator_device, check_int
from ._pairs import member_counts, pair_indices, place_pair, place_pair_items

__all__ = ["psvrt_batch", "psvrt_patterns", "psvrt_test_batch"]


def _codes(patterns):
    """Integer code of each ±1 pattern (bit k = pixel k is +1); patch_size² <= 62."""
    bits = (patterns.flatten(-2) > 0).long()
    w = 2 ** torch.arange(bits.shape[-1], device=bits.device, dtype=torch.long)
    return (bits * w).sum(-1)


def psvrt_patterns(n: int, patch_size: int = 5, *, generator, exclude=None, device=None):
    """``n`` distinct random ±1 bit-patterns (n, patch_size, patch_size), none in ``exclude``.

    Each pixel is ±1 with probability 1/2 (App. G.3); duplicates and members of ``exclude``
    (a tensor (k, ps, ps) of patterns, e.g. the training set) are rejected and redrawn. An
    ``n`` whose candidate patterns exceed 16 GiB raises ValueError.
    """
    n = check_int("n", n, minimum=1)
    ps = check_int("patch_size", patch_size, minimum=1)
    if ps * ps > 62:
        raise ValueError(f"patch_size must be <= 7 (patterns are coded as 62-bit ints), got {ps}")
    if n > 2 ** (ps * ps) // 2:
        raise ValueError(f"n must be <= half of the 2^{ps * ps} possible patterns, got {n}")
    check_alloc(f"n={n} with patch_size={ps}", n * (4 * ps * ps + 10),
                what="the candidate patterns, their codes and the kept ones")
    g = generator
    device = check_generator_device(g, device)
    excl = torch.empty(0, dtype=torch.long, device=device) if exclude is None else _codes(
        torch.as_tensor(exclude, device=device).reshape(-1, ps, ps))
    out = torch.empty(0, ps, ps, device=device)
    while out.shape[0] < n:
        cand = torch.randint(0, 2, (2 * n, ps, ps), generator=g, device=device).float() * 2 - 1
        pool = torch.cat([out, cand])
        codes = _codes(pool)
        keep = ~torch.isin(codes, excl)
        # first occurrence of every code only
        _, inv = torch.unique(codes, return_inverse=True)
        first = torch.full((int(inv.max()) + 1,), pool.shape[0], device=device, dtype=torch.long)
        first.scatter_reduce_(0, inv, torch.arange(pool.shape[0], device=device), reduce="amin")
        is_first = torch.zeros(pool.shape[0], dtype=torch.bool, device=device)
        is_first[first] = True
        out = pool[keep & is_first][:n]
    return out


def psvrt_batch(patterns, batch_size: int, *, n_patches: int = 5, n_patterns=None, generator,
                flatten: bool = True):
    """Balanced PSVRT batch from each member's pattern set (seed 003 §4.1, App. G.3).

    ``patterns`` (E, N_max, ps, ps) ±1; ``n_patterns`` (E,) optional number of patterns member
    e uses (its first rows, >= 2). Same images carry one pattern twice, different images two
    distinct patterns of the set, at two distinct patch-aligned locations. Pixels are the bits
    times 1/ps (unit-norm objects). Returns ``(x, y)`` with x (E, B, (n_p·ps)²) when
    ``flatten`` else (E, B, H, W). Sizes whose images exceed 16 GiB raise ValueError.
    """
    if not isinstance(patterns, torch.Tensor) or patterns.ndim != 4:
        raise ValueError("patterns must be a tensor of shape (E, N, ps, ps)")
    E, N, ps, _ = patterns.shape
    if E < 1 or N < 2 or ps < 1 or patterns.shape[3] != ps:
        raise ValueError(f"patterns must hold >= 1 member with >= 2 square patterns, got shape "
                         f"{tuple(patterns.shape)}")
    B = check_int("batch_size", batch_size, minimum=2)
    n_patches = check_int("n_patches", n_patches, minimum=2)
    check_alloc(f"batch_size={B} with E={E} and n_patches={n_patches}",
                E * B * place_pair_items(n_patches, ps), what="the (E, batch_size, H, W) images")
    g = check_generator(generator)
    n = member_counts("n_patterns", n_patterns, E, N, 2, patterns.device)
    u, v, y = pair_indices(n, E, B, g, patterns.device)
    e = torch.arange(E, device=patterns.device)[:, None]
    img = place_pair(patterns[e, u] / ps, patterns[e, v] / ps, n_patches, g)
    return (img.flatten(-2) if flatten else img), y


def _random_patterns(n, ps, excl_codes, generator, device, avoid=None, max_rounds=1000):
    """n random ±1 patterns (n, ps, ps) whose codes are not in ``excl_codes`` and, where
    ``avoid`` (n, ps, ps) is given, differ from ``avoid`` row by row (rejection sampling)."""
    out = torch.randint(0, 2, (n, ps, ps), generator=generator, device=device).float() * 2 - 1
    for _ in range(max_rounds):
        bad = torch.isin(_codes(out), excl_codes)
        if avoid is not None:
            bad |= torch.all((out == avoid).flatten(1), dim=1)
        k = int(bad.sum())
        if k == 0:
            return out
        out[bad] = torch.randint(0, 2, (k, ps, ps), generator=generator, device=device).float() * 2 - 1
    raise RuntimeError("could not draw admissible test patterns; the excluded set is too large")


def psvrt_test_batch(n_tasks: int, n: int, *, patch_size: int = 5, n_patches: int = 5,
                     exclude=None, generator, flatten: bool = True, device=None):
    """Balanced PSVRT test batch with fresh random patterns, none of them in ``exclude`` (the
    training patterns: (k, ps, ps), or per member (E, k, ps, ps) — the union is excluded).
    Different images carry two distinct patterns. Returns ``(x, y)`` as :func:`psvrt_batch`
    (sizes whose images exceed 16 GiB raise ValueError)."""
    E = check_int("n_tasks", n_tasks, minimum=1)
    n = check_int("n", n, minimum=2)
    ps = check_int("patch_size", patch_size, minimum=1)
    if ps * ps > 62:
        raise ValueError(f"patch_size must be <= 7 (patterns are coded as 62-bit ints), got {ps}")
    n_patches = check_int("n_patches", n_patches, minimum=2)
    check_alloc(f"n_tasks={E}, n={n}, n_patches={n_patches}",
                E * n * (place_pair_items(n_patches, ps) + 4 * ps * ps),
                what="the (n_tasks, n, H, W) images and their patterns")
    g = generator
    device = check_generator_device(g, device)
    excl = torch.empty(0, dtype=torch.long, device=device) if exclude is None else torch.unique(
        _codes(torch.as_tensor(exclude, device=device).reshape(-1, ps, ps)))
    if excl.numel() >= 2 ** (ps * ps) - 1:
        raise ValueError("exclude leaves fewer than 2 admissible patterns")
    a = _random_patterns(E * n, ps, excl, g, device)
    b = _random_patterns(E * n, ps, excl, g, device, avoid=a)
    a, b = a.reshape(E, n, ps, ps), b.reshape(E, n, ps, ps)
    ns = n // 2
    b[:, :ns] = a[:, :ns]
    img = place_pair(a / ps, b / ps, n_patches, g)
    y = torch.zeros(E, n, device=device)
    y[:, :ns] = 1.0
    return (img.flatten(-2) if flatten else img), y
