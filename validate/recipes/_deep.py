"""The problem of the deep-network cases (seed 000, Figs. 3 and 5): the orthogonal toy task with
class ratios [1/2, 1/4, 1/4] and a non-lazy network of any depth. Used by ``coding/deep-sigmoid``,
``coding/deep-sigmoid-annealed`` and ``coding/deep-relu``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from richlazy.simulate import NetworkSpec, orthogonal_toy_task

from ._network_size import NetworkSize

__all__ = ["DEEP_TOY_RATIOS", "DeepToySize", "deep_toy_setup"]

#: class ratios of the deep cases' toy task
DEEP_TOY_RATIOS = (0.5, 0.25, 0.25)


@dataclass(frozen=True)
class DeepToySize(NetworkSize):
    """The sizes of a deep network sampled on the toy task (``coding/deep-sigmoid``,
    ``coding/deep-relu``): the chain budget, then the network and task."""

    L: int  # hidden layers (>= 2)
    y_minus: float  # target of the other classes (y+ = 1)


def deep_toy_setup(ctx, cfg, activation):
    """The orthogonal toy task of Figs. 3 and 5 (ratios [1/2, 1/4, 1/4], y+ = 1, y- from
    ``cfg``) and the non-lazy network of ``cfg`` (N0, N, L; three outputs) with ``activation``:
    (task, spec, labels)."""
    task = orthogonal_toy_task(cfg["P"], cfg["N0"], ratios=DEEP_TOY_RATIOS, y_plus=1.0,
                               y_minus=cfg["y_minus"], seed=ctx.child_seed(0))
    spec = NetworkSpec(N0=cfg["N0"], N=cfg["N"], L=cfg["L"], m=3, activation=activation,
                       regime="nonlazy")
    return task, spec, np.asarray(task.labels)
