"""Equality reasoning (seed 003): the same-different task's rich-accuracy formula, hand-crafted,
max-margin and Markov-walker solutions, lazy NTK bounds and kernel predictors, Bayes-optimal
classifiers.
"""

from . import _bayes, _max_margin_limit, _ntk, _solutions
from ._bayes import *  # noqa: F403  (the names of _bayes.__all__)
from ._max_margin_limit import *  # noqa: F403  (the names of _max_margin_limit.__all__)
from ._ntk import *  # noqa: F403  (the names of _ntk.__all__)
from ._solutions import *  # noqa: F403  (the names of _solutions.__all__)

__all__ = [
    *_bayes.__all__,
    *_max_margin_limit.__all__,
    *_ntk.__all__,
    *_solutions.__all__,
]
