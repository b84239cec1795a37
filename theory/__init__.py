"""richlazy.theory — solvers for rich vs lazy learning (numpy / scipy / sympy / numba / mpmath).

Never imports torch. Every function's docstring states its formula, the paper (seed) and the
equation or section it implements.
"""

from ._gauss import (
    ACTIVATIONS,
    gauss_hermite_nodes,
    gaussian_expectation,
    gaussian_pair_expectation,
    phi,
    phi_prime,
)
from ._gp import GPPosterior, nngp_posterior
from ._kernels import (
    deep_nngp_cross_kernel,
    deep_nngp_kernel,
    derivative_expectation,
    mean_activation,
    nngp_cross_kernel,
    nngp_expectation,
    nngp_kernel,
    relu_ntk,
    relu_ntk_unit_sphere,
    two_layer_ntk,
)
from ._linear import (
    LinearNetworkSolution,
    default_sigma_a2,
    input_kernel,
    linear_saddle_residuals,
    solve_linear_network,
    solve_U,
)
from ._results import SolverError, SolverStatus

__all__ = [
    "ACTIVATIONS",
    "deep_nngp_cross_kernel",
    "deep_nngp_kernel",
    "derivative_expectation",
    "gauss_hermite_nodes",
    "gaussian_expectation",
    "gaussian_pair_expectation",
    "mean_activation",
    "nngp_cross_kernel",
    "nngp_expectation",
    "nngp_kernel",
    "phi",
    "phi_prime",
    "relu_ntk",
    "relu_ntk_unit_sphere",
    "two_layer_ntk",
    "GPPosterior",
    "LinearNetworkSolution",
    "SolverError",
    "SolverStatus",
    "default_sigma_a2",
    "input_kernel",
    "linear_saddle_residuals",
    "nngp_posterior",
    "solve_U",
    "solve_linear_network",
]
