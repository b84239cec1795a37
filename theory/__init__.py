"""richlazy.theory — solvers for rich vs lazy learning (numpy / scipy / sympy / numba / mpmath).

Never imports torch. Every function's docstring states its formula, the paper (seed) and the
equation or section it implements.
"""


from . import coding, equality, kernels, ldt
from ._results import SolverError, SolverStatus, Status
from .coding import *  # noqa: F403  (names listed in coding.__all__)
from .equality import *  # noqa: F403
from .kernels import *  # noqa: F403
from .ldt import *  # noqa: F403

# The public surface is the union of the subpackages' explicit lists plus the result vocabulary.
__all__ = [
    "SolverError",
    "SolverStatus",
    "Status",
    *kernels.__all__,
    *coding.__all__,
    *ldt.__all__,
    *equality.__all__,
]
