"""richlazy.validate — the comparison layer: observables, statistics, validation cases, reports
and the ``richlazy`` command line. Imports both richlazy.theory and richlazy.simulate.
"""

import importlib

# Public name -> module defining it (relative to this package). Imported on first access (PEP 562),
# so that ``import richlazy.validate`` - and the command line, which lives in a subpackage - costs
# no torch or matplotlib import until a name that needs them is used (``richlazy tables`` is
# theory only).
_LAZY = {
    "stats": None,
    **dict.fromkeys(("Quantity", "Equilibration", "compare", "case_verdict", "VERDICTS", "ERGODICITY"),
                    ".core._compare"),
    **dict.fromkeys(("Mixing", "RHAT_MAX", "chain_diagnostics", "ess_bulk", "ess_tail",
                     "split_rhat", "worst_mixing"), ".stats"),
    **dict.fromkeys(("PAPERS", "SUITES", "CaseContext", "CaseOutcome", "CaseSpec", "all_cases",
                     "get_cases", "register_case"), ".core._registry"),
    **dict.fromkeys(("Sizes", "ChainBudget", "Compared", "CaseRun", "CaseDeclaration", "declare_case"),
                    ".core._declaration"),
    "run_suite": ".core._runner",
    **dict.fromkeys(("diff_reports", "load_report_cases"), ".core._report_diff"),
    "sweeps": None,
    **dict.fromkeys(("Param", "SweepContext", "SweepResult", "register_sweep", "sweep"), ".sweeps"),
    **dict.fromkeys(("CaseResult", "Report", "render_markdown", "write_report"), ".rendering._report"),
    **dict.fromkeys(("plot_dlr_vs_knob", "plot_eigen_curves"), ".rendering._richness_plots"),
    **dict.fromkeys((
        "ClassStatistics", "EigenCurves", "NC2Result", "NystromEigen", "RichnessSweep",
        "alignment_by_readout_sign", "alignment_of_top_units", "cka", "class_statistics", "dlr",
        "effective_dimension", "eigen_curves", "linear_cka", "nc1", "nc2_etf", "nystrom_eigen",
        "parameter_norm_sq", "readout_ratio", "relative_activation_change", "relative_weight_change",
        "s_init", "weight_alignment"), ".richness"),
}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    mod = _LAZY[name]
    value = (importlib.import_module(f".{name}", __name__) if mod is None
             else getattr(importlib.import_module(mod, __name__), name))
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


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
    "Equilibration",
    "ERGODICITY",
    "Report",
    "Mixing",
    "RHAT_MAX",
    "VERDICTS",
    "case_verdict",
    "chain_diagnostics",
    "ess_bulk",
    "ess_tail",
    "split_rhat",
    "worst_mixing",
    "all_cases",
    "compare",
    "get_cases",
    "register_case",
    "Sizes",
    "ChainBudget",
    "Compared",
    "CaseRun",
    "CaseDeclaration",
    "declare_case",
    "render_markdown",
    "run_suite",
    "diff_reports",
    "load_report_cases",
    "stats",
    "write_report",
    "Param",
    "SweepContext",
    "SweepResult",
    "register_sweep",
    "sweep",
    "sweeps",
]
