"""Coding schemes of non-lazy Bayesian networks (seed 000): the linear network (U, kernels per
layer, predictor), the GP/lazy baseline, sigmoid and ReLU codes on the toy task and on general data.

Layout: ``_problem`` (shared input checks), ``_toy_core`` (the single-neuron core shared by all
code solvers), ``_linear``, ``_gp``, ``_sigmoid_toy`` (+ ``_sigmoid_finite_p``),
``_sigmoid_general`` (+ ``_general_core``), ``_deep`` (lower layers of deep sigmoid networks: the
conjugate kernel below the feature layer, layer 1 on orthonormal inputs; ``_deep_middle``: the
layers between, whose prior kernel is class-block; ``_deep_two_layer``: the self-consistent
L = 2 network; ``_deep_multi_layer``: any L; ``_deep_fixed_point``: their shared Newton loop), ``_sweeps``,
``_populations``, ``_relu_toy`` (+ ``_relu_multiclass``), ``_relu_block`` (+ ``_relu_block_bulk``:
the toy theory on class-block kernels), ``_relu_outliers`` (+ ``_relu_factor``, the factor
K0 = B B^T it is posed on; ``_relu_certificate``, its dual certificate; ``_relu_search``, the
compiled search for the dual margin, public as ``relu_dual_margin`` in ``_relu_margin``), and
``_protocol`` (the common ``predict`` / ``test_kernel`` / ``generalization_error`` signatures of
the predicting solutions).

Conventions: inputs are columns of X (N0 x P) and enter through input kernels (``input_kernel``);
targets Y are (P, m), one row per training input, m = number of outputs.
"""

from ._deep import (
    SigmoidFirstLayerSolution,
    conjugate_kernel,
    solve_sigmoid_first_layer,
)
from ._deep_middle import (
    SigmoidMiddleLayerSolution,
    solve_sigmoid_middle_layer,
)
from ._deep_multi_layer import (
    SigmoidDeepSolution,
    solve_sigmoid_deep,
)
from ._deep_two_layer import (
    SigmoidTwoLayerSolution,
    solve_sigmoid_two_layer,
)
from ._gp import (
    GPPosterior,
    nngp_posterior,
    solve_nngp,
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
from ._protocol import CodingPredictor
from ._relu_block import (
    ReLUBlockSolution,
    block_stability_margin,
    class_block_kernel,
    solve_relu_block,
)
from ._relu_margin import (
    ReLUDualMargin,
    relu_dual_margin,
)
from ._relu_outliers import (
    ReLUOutlierSolution,
    solve_relu_outliers,
)
from ._relu_toy import (
    ReLUToySolution,
    relu_stability_margin,
    solve_relu_toy,
)
from ._sigmoid_general import (
    SigmoidGeneralSolution,
    solve_sigmoid_general,
)
from ._sigmoid_toy import (
    SigmoidToySolution,
    solve_sigmoid_toy,
    toy_class_targets,
)
from ._sweeps import (
    SigmoidSweep,
    TemperatureSweep,
    code_transitions,
    locate_code_transition,
    locate_critical_temperature,
    sweep_temperature,
    sweep_y_minus,
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
    "code_transitions",
    "locate_code_transition",
    "solve_sigmoid_general",
    "solve_sigmoid_toy",
    "sweep_y_minus",
    "TemperatureSweep",
    "locate_critical_temperature",
    "sweep_temperature",
    "toy_class_targets",
    "SigmoidPopulationSolution",
    "solve_sigmoid_toy_populations",
]
