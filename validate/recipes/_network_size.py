"""The size of a sampled network on a toy task, the base of the size dataclasses of the sampling
cases (:class:`richlazy.validate.Sizes`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..core._declaration import ChainBudget

__all__ = ["NetworkSize"]


@dataclass(frozen=True)
class NetworkSize(ChainBudget):
    """A network of width ``N`` trained on ``P`` inputs of dimension ``N0`` and sampled with the
    chain budget of :class:`~richlazy.validate.ChainBudget` (its fields come first)."""

    N: int  # width
    P: int  # training inputs
    N0: int  # input dimension
