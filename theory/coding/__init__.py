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

from ._gp import (
    GPPosterior,
    nngp_posterior,
    solve_nngp,
)
from ._protocol import CodingPredictor
from .deep import (
    SigmoidDeepSolution,
    SigmoidFirstLayerSolution,
    SigmoidMiddleLayerSolution,
    SigmoidTwoLayerSolution,
    conjugate_kernel,
    solve_sigmoid_deep,
    solve_sigmoid_first_layer,
    solve_sigmoid_middle_layer,
    solve_sigmoid_two_layer,
)
from .linear import (
    LinearNetworkSolution,
    LinearSaddleResiduals,
    default_sigma_a2,
    input_kernel,
    linear_saddle_residuals,
    solve_linear_network,
    solve_U,
)
from .relu import (
    ReLUBlockSolution,
    ReLUDualMargin,
    ReLUOutlierSolution,
    ReLUToySolution,
    block_stability_margin,
    class_block_kernel,
    relu_dual_margin,
    relu_stability_margin,
    solve_relu_block,
    solve_relu_outliers,
    solve_relu_toy,
)
from .sigmoid import (
    CodeTransition,
    CriticalTemperature,
    LocatedCodeTransition,
    SigmoidGeneralSolution,
    SigmoidPopulationSolution,
    SigmoidSweep,
    SigmoidToySolution,
    TemperatureSweep,
    code_transitions,
    locate_code_transition,
    locate_critical_temperature,
    solve_sigmoid_general,
    solve_sigmoid_toy,
    solve_sigmoid_toy_populations,
    sweep_temperature,
    sweep_y_minus,
    toy_class_targets,
)

__all__ = [
    "CodingPredictor",
    "SigmoidFirstLayerSolution",
    "conjugate_kernel",
    "solve_sigmoid_first_layer",
    "SigmoidMiddleLayerSolution",
    "solve_sigmoid_middle_layer",
    "SigmoidDeepSolution",
    "solve_sigmoid_deep",
    "SigmoidTwoLayerSolution",
    "solve_sigmoid_two_layer",
    "GPPosterior",
    "nngp_posterior",
    "solve_nngp",
    "LinearNetworkSolution",
    "LinearSaddleResiduals",
    "default_sigma_a2",
    "input_kernel",
    "linear_saddle_residuals",
    "solve_linear_network",
    "solve_U",
    "ReLUBlockSolution",
    "block_stability_margin",
    "class_block_kernel",
    "solve_relu_block",
    "ReLUDualMargin",
    "ReLUOutlierSolution",
    "ReLUToySolution",
    "relu_dual_margin",
    "relu_stability_margin",
    "solve_relu_outliers",
    "solve_relu_toy",
    "SigmoidGeneralSolution",
    "SigmoidSweep",
    "SigmoidToySolution",
    "CodeTransition",
    "code_transitions",
    "LocatedCodeTransition",
    "locate_code_transition",
    "solve_sigmoid_general",
    "solve_sigmoid_toy",
    "sweep_y_minus",
    "TemperatureSweep",
    "CriticalTemperature",
    "locate_critical_temperature",
    "sweep_temperature",
    "toy_class_targets",
    "SigmoidPopulationSolution",
    "solve_sigmoid_toy_populations",
]
