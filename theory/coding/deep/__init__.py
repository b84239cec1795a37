"""Deep sigmoid networks (seed 000, notes §6): the conjugate kernel below the feature layer and
layer 1 on orthonormal inputs (``_first_layer``), the middle layers whose prior kernel is
class-block (``_middle``), and the self-consistent network of any depth (``_multi_layer``;
``_two_layer`` is its L = 2 form), over the Newton loop of ``_fixed_point``. The feature layer is
the general-data sigmoid solver of :mod:`..sigmoid`."""

from ._first_layer import (
    SigmoidFirstLayerSolution,
    conjugate_kernel,
    solve_sigmoid_first_layer,
)
from ._middle import (
    SigmoidMiddleLayerSolution,
    solve_sigmoid_middle_layer,
)
from ._multi_layer import (
    SigmoidDeepSolution,
    solve_sigmoid_deep,
)
from ._two_layer import (
    SigmoidTwoLayerSolution,
    solve_sigmoid_two_layer,
)

__all__ = [
    "SigmoidFirstLayerSolution",
    "conjugate_kernel",
    "solve_sigmoid_first_layer",
    "SigmoidMiddleLayerSolution",
    "solve_sigmoid_middle_layer",
    "SigmoidDeepSolution",
    "solve_sigmoid_deep",
    "SigmoidTwoLayerSolution",
    "solve_sigmoid_two_layer",
]
