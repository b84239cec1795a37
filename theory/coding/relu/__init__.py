"""ReLU codes (seed 000, notes §5): the toy task (``_toy``, multi-class faces in
``_multiclass``), class-block kernels (``_block``, with its bulk and stages), and general data,
where the code is a few outlier neurons over a bulk (``_outliers``: the sliding / KKT / dual
ascent pipeline over the factor K0 = B B^T of ``_factor``; ``_certificate`` and ``_dual``: its
certificate; ``_search`` and ``_margin``: the compiled search for the dual margin)."""

from ._block import (
    ReLUBlockSolution,
    block_stability_margin,
    class_block_kernel,
    solve_relu_block,
)
from ._margin import (
    ReLUDualMargin,
    relu_dual_margin,
)
from ._outliers import (
    ReLUOutlierSolution,
    solve_relu_outliers,
)
from ._toy import (
    ReLUToySolution,
    relu_stability_margin,
    solve_relu_toy,
)

__all__ = [
    "ReLUToySolution",
    "relu_stability_margin",
    "solve_relu_toy",
    "ReLUBlockSolution",
    "block_stability_margin",
    "class_block_kernel",
    "solve_relu_block",
    "ReLUDualMargin",
    "relu_dual_margin",
    "ReLUOutlierSolution",
    "solve_relu_outliers",
]
