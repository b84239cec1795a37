"""Sigmoid (erf-type) codes of the two-layer network (seed 000, notes §4): the toy task at
P -> infinity (``_toy``) and finite P (``_finite_p``), populations of codes (``_populations``),
temperature and y_- sweeps (``_sweeps``), and general data (``_general``: the solver over the
single-neuron problem of ``_general_core`` and the bundle method of ``_bundle``).

The tower reads as the mathematics: general solver -> bundle -> general core -> toy solver ->
the single-neuron code core of the parent package."""

from ._general import (
    SigmoidGeneralSolution,
    solve_sigmoid_general,
)
from ._populations import (
    SigmoidPopulationSolution,
    solve_sigmoid_toy_populations,
)
from ._sweeps import (
    CodeTransition,
    CriticalTemperature,
    LocatedCodeTransition,
    SigmoidSweep,
    TemperatureSweep,
    code_transitions,
    locate_code_transition,
    locate_critical_temperature,
    sweep_temperature,
    sweep_y_minus,
)
from ._toy import (
    SigmoidToySolution,
    solve_sigmoid_toy,
    toy_class_targets,
)

__all__ = [
    "SigmoidToySolution",
    "solve_sigmoid_toy",
    "toy_class_targets",
    "SigmoidGeneralSolution",
    "solve_sigmoid_general",
    "SigmoidPopulationSolution",
    "solve_sigmoid_toy_populations",
    "SigmoidSweep",
    "TemperatureSweep",
    "CodeTransition",
    "LocatedCodeTransition",
    "CriticalTemperature",
    "code_transitions",
    "locate_code_transition",
    "locate_critical_temperature",
    "sweep_temperature",
    "sweep_y_minus",
]
