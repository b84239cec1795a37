"""Shared plumbing of the same/different generators (SD, PSVRT, Pentomino): per-member counts,
index pairs (exactly balanced or with Bernoulli(½) labels) and the placement of two objects in a
patch grid."""

from __future__ import annotations

import torch

__all__ = ["LABEL_RULES", "check_labels", "member_counts", "pair_indices", "place_pair",
           "place_pair_items"]

LABEL_RULES = ("balanced", "bernoulli")


def check_labels(labels) -> str:
    """``labels`` checked to be one of :data:`LABEL_RULES` (ValueError naming it otherwise)."""
    if not (isinstance(labels, str) and labels in LABEL_RULES):
        raise ValueError(f"labels must be one of {LABEL_RULES} ('balanced': exactly half same "
                         f"pairs; 'bernoulli': i.i.d. Bernoulli(1/2) labels), got {labels!r}")
    return labels


def place_pair_items(n_patches, p):
    """8-byte items per example of :func:`place_pair` and its callers (for the callers' size
    checks): the objects, the (n_patches·p)² image three times (patch grid, permuted copy,
    flattened or blurred copy) and the indices and labels."""
    return 2 * p * p + 3 * (n_patches * p) ** 2 + 8


def member_counts(name, counts, E, maximum, minimum, device):
    """(E,) long: how many objects (symbols, patterns, shapes) each member uses; ``None`` -> all
    ``maximum``, otherwise E integers in [minimum, maximum]."""
    if counts is None:
        return torch.full((E,), maximum, dtype=torch.long, device=device)
    c = torch.as_tensor(counts, device=device)
    if c.dtype.is_floating_point or c.dtype == torch.bool or c.shape != (E,):
        raise ValueError(f"{name} must be {E} integers (one per ensemble member), got {counts!r}")
    c = c.long()
    if torch.any(c < minimum) or torch.any(c > maximum):
        raise ValueError(f"{name} must lie in [{minimum}, {maximum}], got {c.tolist()}")
    return c


def pair_indices(n_avail, E, B, generator, device, labels: str = "balanced"):
    """Index pairs (u, v) and labels y (E, B) per member: u uniform over the member's n_avail
    objects, v = u for "same" pairs and uniform over the other n_avail − 1 objects otherwise.

    ``labels="balanced"``: the first B//2 pairs are same, the rest different (exactly balanced).
    ``labels="bernoulli"``: y_b ~ Bernoulli(½) i.i.d. (the published experiment code of seed 003),
    drawn after u and the offsets, so both rules consume the same first two draws.
    """
    n = n_avail.to(torch.float64)[:, None]
    u = (torch.rand(E, B, generator=generator, device=device, dtype=torch.float64) * n).long()
    r = (torch.rand(E, B, generator=generator, device=device, dtype=torch.float64) * (n - 1)).long()
    v = (u + 1 + r) % n_avail[:, None]
    if labels == "bernoulli":
        same = torch.rand(E, B, generator=generator, device=device, dtype=torch.float64) < 0.5
        v = torch.where(same, u, v)
        return u, v, same.to(torch.get_default_dtype())
    ns = B // 2
    v[:, :ns] = u[:, :ns]
    y = torch.zeros(E, B, device=device)
    y[:, :ns] = 1.0
    return u, v, y


def place_pair(objects_a, objects_b, n_patches, generator):
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
