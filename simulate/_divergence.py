"""One divergence policy for every result of :mod:`richlazy.simulate`.

Ensembles run E independent members in one tensor program, so divergence is a property of a
member, not of a run: every result carries ``diverged``, a bool tensor of shape (E,) that is True
for the members in which a non-finite parameter or loss was seen. Nothing raises unless the
caller asks for it with ``throw=True`` (the sampling driver :func:`run_chain` defaults to
``throw=True``, because a sampling run with a diverged chain is rarely worth finishing).
"""

from __future__ import annotations

import torch

__all__ = ["DivergedError", "SamplerDivergedError", "member_list", "nonfinite_members"]


class DivergedError(FloatingPointError):
    """A member of an ensemble produced NaN/inf (raised only on ``throw=True`` or by the
    sampling driver); the message says which members, when, and what to change."""


class SamplerDivergedError(DivergedError):
    """The chain produced NaN/inf; the message says when and what to change."""


def nonfinite_members(n_members: int, *tensors) -> torch.Tensor:
    """(E,) bool: member e has a non-finite entry in any of ``tensors`` (each with a leading
    ensemble axis of length E; ``None`` entries are skipped). A tensor whose leading axis is not
    E (e.g. a scalar loss) flags every member when it has a non-finite entry."""
    bad = None
    for t in tensors:
        if t is None:
            continue
        if t.ndim >= 1 and t.shape[0] == n_members:
            b = ~torch.isfinite(t.reshape(n_members, -1)).all(dim=1)
        else:
            b = (~torch.isfinite(t).all()).expand(n_members)
        bad = b if bad is None else (bad | b.to(bad.device))
    if bad is None:
        return torch.zeros(n_members, dtype=torch.bool)
    return bad


def member_list(diverged: torch.Tensor, noun: str = "member", limit: int = 8) -> str:
    """Short text naming the diverged members, e.g. ``"members [0, 3]"``."""
    idx = torch.nonzero(diverged.cpu()).flatten().tolist()
    more = f" and {len(idx) - limit} more" if len(idx) > limit else ""
    return f"{noun}{'s' if len(idx) != 1 else ''} {idx[:limit]}{more}"
