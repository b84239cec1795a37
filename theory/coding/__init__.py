"""Coding schemes of non-lazy Bayesian networks (seed 000): the linear network (U, kernels per
layer, predictor), the GP/lazy baseline, sigmoid and ReLU codes on the toy task and on general data,
and deep sigmoid networks.

Layout, one folder per mathematical object over a small shared ground:

* ground: ``_problem`` (input checks shared by all solvers), ``_protocol`` (the common
  ``predict`` / ``test_kernel`` / ``generalization_error`` signatures of the predicting
  solutions), ``_code_core`` (the single-neuron code problem of the orthogonal toy task and the
  annealed search shared by the sigmoid and ReLU solvers), ``_gp`` (the GP/lazy baseline);
* :mod:`.linear` -- the deep linear network;
* :mod:`.sigmoid` -- sigmoid codes: toy task, populations, sweeps, general data;
* :mod:`.relu` -- ReLU codes: toy task, class-block kernels, outliers on general data;
* :mod:`.deep` -- deep sigmoid networks (their feature layer is :mod:`.sigmoid`'s general solver).

Objects import the ground and the public names of the objects below them (deep -> sigmoid), never
another object's private modules (tests/test_layering.py). Generic numerics (Newton, ascent to
local maxima) are in ``richlazy.theory._numerics``; activation calculus in ``richlazy.theory.kernels``.

Conventions: inputs are columns of X (N0 x P) and enter through input kernels (``input_kernel``);
targets Y are (P, m), one row per training input, m = number of outputs.
"""

from . import deep, linear, relu, sigmoid
from ._gp import (
    GPPosterior,
    nngp_posterior,
    solve_nngp,
)
from ._protocol import CodingPredictor
from ._task import ToyTask
from .deep import *  # noqa: F403  (the names of deep.__all__)
from .linear import *  # noqa: F403  (the names of linear.__all__)
from .relu import *  # noqa: F403  (the names of relu.__all__)
from .sigmoid import *  # noqa: F403  (the names of sigmoid.__all__)

__all__ = [
    "CodingPredictor",
    "ToyTask",
    "GPPosterior",
    "nngp_posterior",
    "solve_nngp",
    *deep.__all__,
    *linear.__all__,
    *relu.__all__,
    *sigmoid.__all__,
]
