"""richlazy.theory — solvers for rich vs lazy learning (numpy / scipy / sympy / numba / mpmath).

Never imports torch. Every function's docstring states its formula, the paper (seed) and the
equation or section it implements.
"""

from ._gp import GPPosterior, nngp_posterior
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
