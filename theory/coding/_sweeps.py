"""Sweeps of the sigmoid toy solver over the off-target value y_- and the code transitions along
them (seed 000 main text: "increasing y_- from 0.1 to 0.5 ... successive transitions between four
different coding schemes", supplement E; notes §7.1 open point).

The toy task has k = m classes and m outputs with one-hot-like targets y_c^c = y_+, y_c^r = y_-
(:func:`toy_class_targets`); inputs are orthonormal, so no input kernel is passed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._results import SolverStatus, Status, grid_status
from ..checks import as_float_array, check_pos_float, check_real, renamed_option
from ._sigmoid_toy import SigmoidToySolution, solve_sigmoid_toy, toy_class_targets

__all__ = ["SigmoidSweep", "sweep_y_minus", "code_transitions", "locate_code_transition"]


@dataclass(frozen=True)
class SigmoidSweep(SolverStatus):
    """Sigmoid toy solutions over a grid of y_- values (a sequence of :class:`SigmoidToySolution`
    in grid order: ``len``, indexing and iteration work as on the list returned before).

    y_minus : (n,)        the grid.
    solutions : tuple     one SigmoidToySolution per grid point.
    statuses : (n,) int   :class:`~richlazy.theory._results.Status` code of each grid point.
    converged, status     summary by ``grid_status``: SUCCESS only if every point converged,
                          else the worst status; ``message`` lists the failed points, ``nit`` is
                          the total, ``residual`` the largest residual of the converged points.
    """

    y_minus: np.ndarray
    solutions: tuple
    statuses: np.ndarray

    def __len__(self) -> int:
        return len(self.solutions)

    def __iter__(self):
        return iter(self.solutions)

    def __getitem__(self, i) -> SigmoidToySolution:
        return self.solutions[i]


def _active_codes(sol, min_weight):
    return tuple(sorted(c for c, w in zip(sol.code_strings(), sol.P_gamma, strict=True) if w > min_weight))


def sweep_y_minus(y_minus_values, *, ratios, y_plus: float = 1.0, **solver_kw) -> SigmoidSweep:
    """Solve the sigmoid toy (:func:`solve_sigmoid_toy`, P = inf unless ``P`` is passed) for the
    targets (y_+, y_-) of :func:`toy_class_targets` at every y_- of the grid.

    ``ratios`` (m,) are the class fractions (m classes = m outputs). Keyword options are passed
    to the solver. Returns a :class:`SigmoidSweep` (a sequence of SigmoidToySolution in grid order,
    with one status per grid point)."""
    ys = as_float_array("y_minus_values", y_minus_values, ndim=1)
    if ys.size == 0:
        raise ValueError("y_minus_values must be non-empty")
    y_plus = check_real("y_plus", y_plus)
    if np.any(ys >= y_plus):
        raise ValueError(f"y_minus_values must be < y_plus = {y_plus}, got max {ys.max()}")
    rho = as_float_array("ratios", ratios, ndim=1)
    sols = tuple(solve_sigmoid_toy(rho, toy_class_targets(rho.size, y_plus=y_plus, y_minus=float(y)),
                                   **solver_kw) for y in ys)
    statuses = np.array([int(s.status) for s in sols], dtype=int)
    converged, worst = grid_status(statuses)
    failed = [float(y) for y, s in zip(ys, sols, strict=True) if not s.converged]
    ok_res = [s.residual for s in sols if s.converged]
    msg = (f"all {ys.size} grid points converged" if converged else
           f"{len(failed)} of {ys.size} grid points failed (y_minus = {failed}); see statuses and "
           f"each solution's message")
    return SigmoidSweep(converged=converged, status=worst, message=msg,
                        nit=int(sum(s.nit for s in sols)),
                        residual=float(max(ok_res)) if ok_res else float("inf"),
                        y_minus=ys, solutions=sols, statuses=statuses)


def code_transitions(y_minus_values, solutions, *, min_weight: float = 1e-6) -> list[dict]:
    """Where the active code set (codes with P_gamma > min_weight) changes along a sweep.

    ``solutions``: the :class:`SigmoidSweep` (or list of solutions) of :func:`sweep_y_minus`.
    Returns one dict per change between consecutive grid points: ``{"between": (y_a, y_b),
    "before": codes at y_a, "after": codes at y_b}``; codes are strings like '1-1-0'. Grid
    points whose solve did not converge are skipped (listed under "failed" of the first dict if
    any, with ``between = None``)."""
    ys = as_float_array("y_minus_values", y_minus_values, ndim=1)
    if len(solutions) != ys.size:
        raise ValueError(f"solutions must have one entry per y_minus value ({ys.size}), got "
                         f"{len(solutions)}")
    min_weight = check_pos_float("min_weight", min_weight)
    out = []
    failed = [float(y) for y, s in zip(ys, solutions, strict=True) if not s.converged]
    if failed:
        out.append({"between": None, "before": None, "after": None, "failed": failed})
    prev = None
    for y, s in zip(ys, solutions, strict=True):
        if not s.converged:
            continue
        codes = _active_codes(s, min_weight)
        if prev is not None and codes != prev[1]:
            out.append({"between": (prev[0], float(y)), "before": prev[1], "after": codes})
        prev = (float(y), codes)
    return out


def locate_code_transition(y_lo: float, y_hi: float, *, ratios, y_plus: float = 1.0,
                           min_weight: float = 1e-6, atol: float | None = None,
                           xtol: float | None = None, **solver_kw) -> dict:
    """Bisect a code-set change between y_lo and y_hi (different active code sets at the ends)
    down to an interval of width ``atol`` (default 1e-4; ``xtol=`` is its deprecated spelling).
    Returns ``{"y_minus": midpoint, "interval": (a, b), "before", "after"}``; a failed solve
    raises RuntimeError with the solver's message (status ``Status.NUMERICAL_FAILURE`` etc.)."""
    atol = renamed_option("atol", atol, "xtol", xtol, default=1e-4)
    rho = as_float_array("ratios", ratios, ndim=1)
    atol = check_pos_float("atol", atol)
    y_lo, y_hi = check_real("y_lo", y_lo), check_real("y_hi", y_hi)

    def codes(y):
        s = solve_sigmoid_toy(rho, toy_class_targets(rho.size, y_plus=y_plus, y_minus=y),
                              **solver_kw)
        if s.status is not Status.SUCCESS:
            raise RuntimeError(f"solve at y_minus={y} failed: {s.message}")
        return _active_codes(s, min_weight)

    a, b = float(y_lo), float(y_hi)
    ca, cb = codes(a), codes(b)
    if ca == cb:
        raise ValueError(f"the active code sets at y_lo={a} and y_hi={b} are equal ({ca}); "
                         f"nothing to locate")
    while b - a > atol:
        c = 0.5 * (a + b)
        cc = codes(c)
        if cc == ca:
            a = c
        else:
            b, cb = c, cc
    return {"y_minus": 0.5 * (a + b), "interval": (a, b), "before": ca, "after": cb}
