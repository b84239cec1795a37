"""Deep linear networks in the non-lazy regime (seed 000, notes §3): the saddle point of the
order parameter U, the kernels per layer and the predictor (``solve_linear_network``)."""

from ._network import (
    LinearNetworkSolution,
    LinearSaddleResiduals,
    default_sigma_a2,
    input_kernel,
    linear_saddle_residuals,
    solve_linear_network,
    solve_U,
)

__all__ = [
    "LinearNetworkSolution",
    "LinearSaddleResiduals",
    "default_sigma_a2",
    "input_kernel",
    "linear_saddle_residuals",
    "solve_linear_network",
    "solve_U",
]
