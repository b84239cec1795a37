"""richlazy.validate — the comparison layer: observables, statistics, validation cases, reports
and the ``richlazy`` command line. Imports both richlazy.theory and richlazy.simulate.
"""

from . import stats
from .core._compare import Quantity, compare
from .core._registry import (
    PAPERS,
    SUITES,
    CaseContext,
    CaseOutcome,
    CaseSpec,
    all_cases,
    get_cases,
    register_case,
)
from .core._runner import run_suite
from .rendering._report import CaseResult, Report, render_markdown, write_report
from .rendering._richness_plots import plot_dlr_vs_knob, plot_eigen_curves
from .richness._measures import (
    ClassStatistics,
    EigenCurves,
    NC2Result,
    NystromEigen,
    RichnessSweep,
    cka,
    class_statistics,
    dlr,
    effective_dimension,
    eigen_curves,
    linear_cka,
    nc1,
    nc2_etf,
    nystrom_eigen,
    parameter_norm_sq,
    s_init,
)
from .richness._weights import (
    alignment_by_readout_sign,
    alignment_of_top_units,
    readout_ratio,
    relative_activation_change,
    relative_weight_change,
    weight_alignment,
)

__all__ = [
    "alignment_by_readout_sign",
    "alignment_of_top_units",
    "readout_ratio",
    "relative_activation_change",
    "relative_weight_change",
    "weight_alignment",
    "ClassStatistics",
    "EigenCurves",
    "NC2Result",
    "NystromEigen",
    "RichnessSweep",
    "cka",
    "class_statistics",
    "dlr",
    "effective_dimension",
    "eigen_curves",
    "linear_cka",
    "nc1",
    "nc2_etf",
    "nystrom_eigen",
    "parameter_norm_sq",
    "plot_dlr_vs_knob",
    "plot_eigen_curves",
    "s_init",
    "PAPERS",
    "SUITES",
    "CaseContext",
    "CaseOutcome",
    "CaseResult",
    "CaseSpec",
    "Quantity",
    "Report",
    "all_cases",
    "compare",
    "get_cases",
    "register_case",
    "render_markdown",
    "run_suite",
    "stats",
    "write_report",
]
