"""richlazy.validate — the comparison layer: observables, statistics, validation cases, reports
and the ``richlazy`` command line. Imports both richlazy.theory and richlazy.simulate.
"""

from . import stats
from ._compare import Quantity, compare
from ._registry import (
    PAPERS,
    SUITES,
    CaseContext,
    CaseOutcome,
    CaseSpec,
    all_cases,
    get_cases,
    register_case,
)
from ._report import CaseResult, Report, render_markdown, write_report
from ._runner import run_suite

__all__ = [
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
