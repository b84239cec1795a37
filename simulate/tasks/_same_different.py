"""Same-different task generators of seed 003 (Tong & Pehlevan): SD, PSVRT and Pentomino.

All generators are batched over an ensemble axis E (one task instance per ensemble member, e.g.
seeds × γ × L), take an explicit ``torch.Generator`` and are deterministic given it. Shapes:
inputs (E, B, D), labels (E, B) with 1 = "same", 0 = "different". Every batch is exactly
balanced: the first B//2 examples of each member are "same", the rest "different" (the order is
irrelevant for mean-loss SGD and accuracy).

* SD (§2, App. G.2): symbols s ~ N(0, I/d), z = s + η, η ~ N(0, σ²/d · I), x = (z1; z2).
  Training pairs are built from L fixed symbols per member, test pairs from fresh symbols.
* PSVRT (§4.1, App. G.3): two patch-aligned ±1 bit-patterns on a blank image of
  n_patches × n_patches patches of patch_size² pixels; same iff the patterns are identical.
  Training and test patterns are disjoint sets.
* Pentomino (§4.2, App. G.4): two of the 18 one-sided pentominoes (free pentominoes counted
  up to rotation only, reflections distinct), each in a random rotation, in 7 × 7 patches;
  same iff same shape up to rotation. Held-out shapes for test; mild random Gaussian blur on
  training images only.

Image scaling (our choice, documented in docs/equality.md): pixels are scaled so that each
object has unit norm (PSVRT ±1/patch_size, Pentomino 1/√5), hence ‖x‖ ≈ √2 as in the SD task.
CIFAR-100 + VGG-16 features (App. G.5) need a dataset and pretrained weights that are not
available offline; no generator is provided for them.
"""

from __future__ import annotations

import functools
import numbers

import torch

__all__ = [
    "PENTOMINO_PATCH",
    "one_sided_pentominoes",
    "pentomino_batch",
    "pentomino_canonical_id",
    "psvrt_batch",
    "psvrt_patterns",
    "psvrt_test_batch",
    "sd_symbols",
    "sd_test_batch",
    "sd_train_batch",
    "split_pentominoes",
]

#: Pentomino patch side in pixels (a 5 × 5 bounding box plus a one-pixel border), App. G.4.
PENTOMINO_PATCH = 7


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------


def _int(name, v, minimum):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {v!r} ({type(v).__name__})")
    v = int(v)
    if v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    return v


def _gen(generator):
    if not isinstance(generator, torch.Generator):
        raise TypeError(
            f"generator must be a torch.Generator (explicit randomness), got {type(generator).__name__}"
        )
    return generator


def _nonneg(name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not v >= 0 or v == float("inf"):
        raise ValueError(f"{name} must be a finite real number >= 0, got {v!r}")
    return float(v)


def _counts(name, counts, E, maximum, minimum, device):
    if counts is None:
        return torch.full((E,), maximum, dtype=torch.long, device=device)
    c = torch.as_tensor(counts, device=device)
    if c.dtype.is_floating_point or c.dtype == torch.bool or c.shape != (E,):
        raise ValueError(f"{name} must be {E} integers (one per ensemble member), got {counts!r}")
    c = c.long()
    if torch.any(c < minimum) or torch.any(c > maximum):
        raise ValueError(f"{name} must lie in [{minimum}, {maximum}], got {c.tolist()}")
    return c


def _pair_indices(n_avail, E, B, generator, device):
    """Balanced index pairs (u, v): first B//2 same (v = u), the rest u ≠ v, per member."""
    n = n_avail.to(torch.float64)[:, None]
    u = (torch.rand(E, B, generator=generator, device=device, dtype=torch.float64) * n).long()
    r = (torch.rand(E, B, generator=generator, device=device, dtype=torch.float64) * (n - 1)).long()
    v = (u + 1 + r) % n_avail[:, None]
    ns = B // 2
    v[:, :ns] = u[:, :ns]
    y = torch.zeros(E, B, device=device)
    y[:, :ns] = 1.0
    return u, v, y


# --------------------------------------------------------------------------------------------
# SD task
# --------------------------------------------------------------------------------------------


def sd_symbols(n_tasks: int, L: int, d: int, *, generator, device=None, dtype=torch.float32):
    """L training symbols s ~ N(0, I/d) for each of ``n_tasks`` members: tensor (E, L, d)."""
    E = _int("n_tasks", n_tasks, 1)
    L = _int("L", L, 2)
    d = _int("d", d, 1)
    g = _gen(generator)
    device = g.device if device is None else torch.device(device)
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
    B = _int("batch_size", batch_size, 2)
    sigma2 = _nonneg("sigma2", sigma2)
    g = _gen(generator)
    dev = symbols.device
    n = _counts("n_symbols", n_symbols, E, Lmax, 2, dev)
    u, v, y = _pair_indices(n, E, B, g, dev)
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
    E = _int("n_tasks", n_tasks, 1)
    n = _int("n", n, 2)
    d = _int("d", d, 1)
    sigma2 = _nonneg("sigma2", sigma2)
    g = _gen(generator)
    device = g.device if device is None else torch.device(device)
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


# --------------------------------------------------------------------------------------------
# PSVRT
# --------------------------------------------------------------------------------------------


def _codes(patterns):
    """Integer code of each ±1 pattern (bit k = pixel k is +1); patch_size² <= 62."""
    bits = (patterns.flatten(-2) > 0).long()
    w = 2 ** torch.arange(bits.shape[-1], device=bits.device, dtype=torch.long)
    return (bits * w).sum(-1)


def psvrt_patterns(n: int, patch_size: int = 5, *, generator, exclude=None, device=None):
    """``n`` distinct random ±1 bit-patterns (n, patch_size, patch_size), none in ``exclude``.

    Each pixel is ±1 with probability 1/2 (App. G.3); duplicates and members of ``exclude``
    (a tensor (k, ps, ps) of patterns, e.g. the training set) are rejected and redrawn.
    """
    n = _int("n", n, 1)
    ps = _int("patch_size", patch_size, 1)
    if ps * ps > 62:
        raise ValueError(f"patch_size must be <= 7 (patterns are coded as 62-bit ints), got {ps}")
    if n > 2 ** (ps * ps) // 2:
        raise ValueError(f"n must be <= half of the 2^{ps * ps} possible patterns, got {n}")
    g = _gen(generator)
    device = g.device if device is None else torch.device(device)
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


def _place(objects_a, objects_b, n_patches, generator):
    """Images (E, B, n_p·p, n_p·p) with objects a, b (E, B, p, p) in two distinct patches."""
    E, B, p, _ = objects_a.shape
    dev = objects_a.device
    P = n_patches * n_patches
    if P < 2:
        raise ValueError(f"n_patches must be >= 2 (two objects need two patches), got {n_patches}")
    la = torch.randint(0, P, (E, B), generator=generator, device=dev)
    lb = (la + 1 + torch.randint(0, P - 1, (E, B), generator=generator, device=dev)) % P
    img = torch.zeros(E, B, P, p, p, device=dev, dtype=objects_a.dtype)
    e = torch.arange(E, device=dev)[:, None]
    b = torch.arange(B, device=dev)[None, :]
    img[e, b, la] = objects_a
    img[e, b, lb] = objects_b
    img = img.reshape(E, B, n_patches, n_patches, p, p).permute(0, 1, 2, 4, 3, 5)
    return img.reshape(E, B, n_patches * p, n_patches * p)


def psvrt_batch(patterns, batch_size: int, *, n_patches: int = 5, n_patterns=None, generator,
                flatten: bool = True):
    """Balanced PSVRT batch from each member's pattern set (seed 003 §4.1, App. G.3).

    ``patterns`` (E, N_max, ps, ps) ±1; ``n_patterns`` (E,) optional number of patterns member
    e uses (its first rows, >= 2). Same images carry one pattern twice, different images two
    distinct patterns of the set, at two distinct patch-aligned locations. Pixels are the bits
    times 1/ps (unit-norm objects). Returns ``(x, y)`` with x (E, B, (n_p·ps)²) when
    ``flatten`` else (E, B, H, W).
    """
    if not isinstance(patterns, torch.Tensor) or patterns.ndim != 4:
        raise ValueError("patterns must be a tensor of shape (E, N, ps, ps)")
    E, N, ps, _ = patterns.shape
    B = _int("batch_size", batch_size, 2)
    n_patches = _int("n_patches", n_patches, 2)
    g = _gen(generator)
    n = _counts("n_patterns", n_patterns, E, N, 2, patterns.device)
    u, v, y = _pair_indices(n, E, B, g, patterns.device)
    e = torch.arange(E, device=patterns.device)[:, None]
    img = _place(patterns[e, u] / ps, patterns[e, v] / ps, n_patches, g)
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
    Different images carry two distinct patterns. Returns ``(x, y)`` as :func:`psvrt_batch`."""
    E = _int("n_tasks", n_tasks, 1)
    n = _int("n", n, 2)
    ps = _int("patch_size", patch_size, 1)
    if ps * ps > 62:
        raise ValueError(f"patch_size must be <= 7 (patterns are coded as 62-bit ints), got {ps}")
    n_patches = _int("n_patches", n_patches, 2)
    g = _gen(generator)
    device = g.device if device is None else torch.device(device)
    excl = torch.empty(0, dtype=torch.long, device=device) if exclude is None else torch.unique(
        _codes(torch.as_tensor(exclude, device=device).reshape(-1, ps, ps)))
    if excl.numel() >= 2 ** (ps * ps) - 1:
        raise ValueError("exclude leaves fewer than 2 admissible patterns")
    a = _random_patterns(E * n, ps, excl, g, device)
    b = _random_patterns(E * n, ps, excl, g, device, avoid=a)
    a, b = a.reshape(E, n, ps, ps), b.reshape(E, n, ps, ps)
    ns = n // 2
    b[:, :ns] = a[:, :ns]
    img = _place(a / ps, b / ps, n_patches, g)
    y = torch.zeros(E, n, device=device)
    y[:, :ns] = 1.0
    return (img.flatten(-2) if flatten else img), y


# --------------------------------------------------------------------------------------------
# Pentomino
# --------------------------------------------------------------------------------------------


def _normalise(cells):
    r0 = min(r for r, _ in cells)
    c0 = min(c for _, c in cells)
    return tuple(sorted((r - r0, c - c0) for r, c in cells))


def _rotate(cells):
    return _normalise([(c, -r) for r, c in cells])


def _fixed_pentominoes():
    shapes = {((0, 0),)}
    for _ in range(4):
        grown = set()
        for s in shapes:
            occ = set(s)
            for r, c in s:
                for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                    cell = (r + dr, c + dc)
                    if cell not in occ:
                        grown.add(_normalise(list(occ | {cell})))
        shapes = grown
    return shapes


def _rotations(cells):
    out = [cells]
    for _ in range(3):
        out.append(_rotate(out[-1]))
    return out


def one_sided_pentominoes() -> list[list[tuple]]:
    """The 18 one-sided pentominoes (pentominoes up to rotation; mirror images distinct).

    Generated, not tabulated: grow all 63 fixed pentominoes cell by cell and group them into
    rotation classes. Returns 18 lists, each with the distinct rotations (1, 2 or 4) of one
    shape as sorted tuples of (row, col) cells normalised to the top-left corner; the classes
    are sorted by their canonical (smallest) rotation so the numbering is reproducible.
    """
    return [list(rots) for rots in _one_sided()]


@functools.lru_cache(maxsize=1)
def _one_sided():
    classes = {}
    for s in _fixed_pentominoes():
        rots = _rotations(s)
        key = min(rots)
        classes.setdefault(key, tuple(sorted(set(rots))))
    return tuple(classes[k] for k in sorted(classes))


def pentomino_canonical_id(cells) -> int:
    """Index (0..17) in :func:`one_sided_pentominoes` of the shape formed by ``cells``
    (any rotation and translation); raises ValueError if the cells are no pentomino."""
    key = min(_rotations(_normalise(list(cells))))
    for i, rots in enumerate(_one_sided()):
        if rots[0] == key:
            return i
    raise ValueError(f"cells {cells!r} do not form a pentomino")


@functools.lru_cache(maxsize=1)
def _pentomino_bank_cpu():
    bank = torch.zeros(18, 4, 5, 5)
    for i, rots in enumerate(_one_sided()):
        for k, cells in enumerate(_rotations(rots[0])):
            for r, c in cells:
                bank[i, k, r, c] = 1.0
    return bank


def _pentomino_bank(device, dtype):
    """(18, 4, 5, 5) masks: each shape in its 4 rotations (repeating symmetric ones)."""
    return _pentomino_bank_cpu().to(device=device, dtype=dtype)


def split_pentominoes(n_train: int, *, generator):
    """Random split of the 18 shapes: (train_ids, test_ids) with ``n_train`` training shapes."""
    n_train = _int("n_train", n_train, 2)
    if n_train > 16:
        raise ValueError(f"n_train must be <= 16 so that >= 2 shapes are held out, got {n_train}")
    perm = torch.randperm(18, generator=_gen(generator), device=generator.device)
    return perm[:n_train], perm[n_train:]


def _blur(img, sigma):
    """Gaussian blur of images (N, H, W) with per-image widths sigma (N,) (zero padding)."""
    N, H, W = img.shape
    dev = img.device

    def mat(n):
        i = torch.arange(n, device=dev, dtype=img.dtype)
        diff2 = (i[:, None] - i[None, :]) ** 2
        s2 = sigma.to(img.dtype).clamp_min(1e-6)[:, None, None] ** 2
        G = torch.exp(-diff2[None] / (2 * s2))
        k = torch.arange(-n, n + 1, device=dev, dtype=img.dtype)
        norm = torch.exp(-(k[None] ** 2) / (2 * s2[:, 0])).sum(-1)  # full-line normalisation
        G = G / norm[:, None, None]
        eye = torch.eye(n, device=dev, dtype=img.dtype)
        return torch.where((sigma > 0)[:, None, None], G, eye)

    GH = mat(H)
    GW = GH if W == H else mat(W)
    return GH @ img @ GW.transpose(1, 2)


def pentomino_batch(shape_ids, batch_size: int, *, n_patches: int = 2, n_shapes=None,
                    blur_sigma: float = 0.0, generator, flatten: bool = True):
    """Balanced Pentomino batch (seed 003 §4.2, App. G.4).

    ``shape_ids`` (E, K) long: the shapes (indices into :func:`one_sided_pentominoes`) member e
    may use (its first ``n_shapes[e]`` entries, >= 2). Same images show one shape twice, each
    copy in an independent random rotation; different images two distinct shapes. Each
    pentomino's 5 × 5 box sits one pixel inside its 7 × 7 patch; pixels 1/√5 (unit norm).
    ``blur_sigma > 0`` applies a Gaussian blur of width U(0, blur_sigma) (per image) — for
    training images only (App. G.4). Returns ``(x, y)``.
    """
    ids = torch.as_tensor(shape_ids)
    if ids.ndim != 2 or ids.dtype.is_floating_point or torch.any(ids < 0) or torch.any(ids > 17):
        raise ValueError("shape_ids must be an integer tensor (E, K) with entries in 0..17")
    E, K = ids.shape
    B = _int("batch_size", batch_size, 2)
    n_patches = _int("n_patches", n_patches, 2)
    blur_sigma = _nonneg("blur_sigma", blur_sigma)
    g = _gen(generator)
    dev = g.device
    ids = ids.to(dev).long()
    n = _counts("n_shapes", n_shapes, E, K, 2, dev)
    u, v, y = _pair_indices(n, E, B, g, dev)
    e = torch.arange(E, device=dev)[:, None]
    bank = _pentomino_bank(dev, torch.float32)
    ra = torch.randint(0, 4, (E, B), generator=g, device=dev)
    rb = torch.randint(0, 4, (E, B), generator=g, device=dev)
    p = PENTOMINO_PATCH
    obj_a = torch.zeros(E, B, p, p, device=dev)
    obj_b = torch.zeros(E, B, p, p, device=dev)
    obj_a[..., 1:6, 1:6] = bank[ids[e, u], ra] / 5**0.5
    obj_b[..., 1:6, 1:6] = bank[ids[e, v], rb] / 5**0.5
    img = _place(obj_a, obj_b, n_patches, g)
    if blur_sigma > 0:
        sig = torch.rand(E * B, generator=g, device=dev) * blur_sigma
        img = _blur(img.reshape(E * B, *img.shape[-2:]), sig).reshape(img.shape)
    return (img.flatten(-2) if flatten else img), y
