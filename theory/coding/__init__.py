"""Coding schemes of non-lazy Bayesian networks (seed 000): the linear network (U, kernels per
layer, predictor), the GP/lazy baseline, sigmoid and ReLU codes on the toy task and on general data.
"""

from ._gp import (
    GPPosterior,
    nngp_posterior,
)
from ._linear import (
    LinearNetworkSolution,
    default_sigma_a2,
    input_kernel,
    linear_saddle_residuals,
    solve_linear_network,
    solve_U,
)
from ._populations import (
    SigmoidPopulationSolution,
    solve_sigmoid_toy_populations,
)
from ._relu import (
    ReLUOutlierSolution,
    ReLUToySolution,
    relu_stability_margin,
    solve_relu_outliers,
    solve_relu_toy,
)
from ._sigmoid import (
    SigmoidGeneralSolution,
    SigmoidToySolution,
    code_transitions,
    locate_code_transition,
    solve_sigmoid_general,
    solve_sigmoid_toy,
    sweep_y_minus,
    toy_class_targets,
)

__all__ = [
    "GPPosterior",
    "nngp_posterior",
    "LinearNetworkSolution",
    "default_sigma_a2",
    "input_kernel",
    "linear_saddle_residuals",
    "solve_linear_network",
    "solve_U",
    "ReLUOutlierSolution",
    "ReLUToySolution",
    "relu_stability_margin",
    "solve_relu_outliers",
    "solve_relu_toy",
    "SigmoidGeneralSolution",
    "SigmoidToySolution",
    "code_transitions",
    "locate_code_transition",
    "solve_sigmoid_general",
    "solve_sigmoid_toy",
    "sweep_y_minus",
    "toy_class_targets",
    "SigmoidPopulationSolution",
    "solve_sigmoid_toy_populations",
]
