"""Pentomino same-different images of seed 003 (§4.2, App. G.4).

Two of the 18 one-sided pentominoes (free pentominoes counted up to rotation only, reflections
distinct), each in a random rotation, in 7 × 7 patches; same iff same shape up to rotation.
Held-out shapes for test; mild random Gaussian blur on training images only. Pixels 1/√5
(unit-norm objects). Batched over an ensemble axis E with an explicit ``torch.Generator``;
batches are balanced as in :mod:`._same_different`.
"""

from __future__ import annotations

import functools

import torch

from ..checks import check_alloc, check_generator, check_int, check_nonneg_float
from ._pairs import member_counts, pair_indices, place_pair, place_pair_items

__all__ = [
    "PENTOMINO_PATCH",
    "one_sided_pentominoes",
    "pentomino_batch",
    "pentomino_canonical_id",
    "split_pentominoes",
]

#: Pentomino patch side in pixels (a 5 × 5 bounding box plus a one-pixel border), App. G.4.
PENTOMINO_PATCH = 7


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
    n_train = check_int("n_train", n_train, minimum=2)
    if n_train > 16:
        raise ValueError(f"n_train must be <= 16 so that >= 2 shapes are held out, got {n_train}")
    perm = torch.randperm(18, generator=check_generator(generator), device=generator.device)
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
    training images only (App. G.4). Returns ``(x, y)``. Sizes whose images exceed 16 GiB
    raise ValueError.
    """
    ids = torch.as_tensor(shape_ids)
    if ids.ndim != 2 or ids.dtype.is_floating_point or torch.any(ids < 0) or torch.any(ids > 17):
        raise ValueError("shape_ids must be an integer tensor (E, K) with entries in 0..17")
    E, K = ids.shape
    if E < 1 or K < 2:
        raise ValueError(f"shape_ids must hold >= 1 member with >= 2 shapes each, got shape "
                         f"{tuple(ids.shape)}")
    B = check_int("batch_size", batch_size, minimum=2)
    n_patches = check_int("n_patches", n_patches, minimum=2)
    check_alloc(f"batch_size={B} with E={E} and n_patches={n_patches}",
                E * B * (place_pair_items(n_patches, PENTOMINO_PATCH) + 2 * PENTOMINO_PATCH**2 + 4),
                what="the (E, batch_size, H, W) images and their objects")
    blur_sigma = check_nonneg_float("blur_sigma", blur_sigma)
    g = check_generator(generator)
    dev = g.device
    ids = ids.to(dev).long()
    n = member_counts("n_shapes", n_shapes, E, K, 2, dev)
    u, v, y = pair_indices(n, E, B, g, dev)
    e = torch.arange(E, device=dev)[:, None]
    bank = _pentomino_bank(dev, torch.float32)
    ra = torch.randint(0, 4, (E, B), generator=g, device=dev)
    rb = torch.randint(0, 4, (E, B), generator=g, device=dev)
    p = PENTOMINO_PATCH
    obj_a = torch.zeros(E, B, p, p, device=dev)
    obj_b = torch.zeros(E, B, p, p, device=dev)
    obj_a[..., 1:6, 1:6] = bank[ids[e, u], ra] / 5**0.5
    obj_b[..., 1:6, 1:6] = bank[ids[e, v], rb] / 5**0.5
    img = place_pair(obj_a, obj_b, n_patches, g)
    if blur_sigma > 0:
        sig = torch.rand(E * B, generator=g, device=dev) * blur_sigma
        img = _blur(img.reshape(E * B, *img.shape[-2:]), sig).reshape(img.shape)
    return (img.flatten(-2) if flatten else img), y
