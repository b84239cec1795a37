"""Sweeps of the sigmoid toy solver over the off-target value y_- and over the temperature T, and
the code transitions along them (seed 000 main text: "increasing y_- from 0.1 to 0.5 ...
successive transitions between four different coding schemes" and "above T_c the network no
longer shows a redundant coding scheme", supplement E; notes §7, §7.1 open points).

The toy task has k = m classes and m outputs with one-hot-like targets y_c^c = y_+, y_c^r = y_-
(:func:`toy_class_targets`); inputs are orthonormal, so no input kernel is passed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._results import DeprecatedDictAccess, SolverStatus, Status, grid_status
from ...checks import as_float_array, check_pos_float, check_real, renamed_option
from .._problem import _check_ratios
from ._toy import SigmoidToySolution, solve_sigmoid_toy, toy_class_targets

__all__ = ["SigmoidSweep", "sweep_y_minus", "CodeTransition", "code_transitions",
           "locate_code_transition", "TemperatureSweep", "sweep_temperature", "CriticalTemperature",
           "locate_critical_temperature"]


class _SolutionSequence:
    """Sequence access to the ``solutions`` of a sweep: ``len``, indexing and iteration."""

    def __len__(self) -> int:
        return len(self.solutions)

    def __iter__(self):
        return iter(self.solutions)

    def __getitem__(self, i) -> SigmoidToySolution:
        return self.solutions[i]


@dataclass(frozen=True)
class SigmoidSweep(_SolutionSequence, SolverStatus):
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
    rho = _check_ratios(ratios)
    sols = tuple(solve_sigmoid_toy(rho, toy_class_targets(rho.size, y_plus=y_plus, y_minus=float(y)),
                                   **solver_kw) for y in ys)
    return SigmoidSweep(**_grid_summary("y_minus", ys, sols), y_minus=ys, solutions=sols)


def _grid_summary(name, grid, sols) -> dict:
    """Status fields of a sweep: SUCCESS only if every grid point converged (``grid_status``)."""
    statuses = np.array([int(s.status) for s in sols], dtype=int)
    converged, worst = grid_status(statuses)
    failed = [float(v) for v, s in zip(grid, sols, strict=True) if not s.converged]
    ok_res = [s.residual for s in sols if s.converged]
    msg = (f"all {grid.size} grid points converged" if converged else
           f"{len(failed)} of {grid.size} grid points failed ({name} = {failed}); see statuses and "
           f"each solution's message")
    return dict(converged=converged, status=worst, message=msg, nit=int(sum(s.nit for s in sols)),
                residual=float(max(ok_res)) if ok_res else float("inf"), statuses=statuses)


@dataclass(frozen=True)
class CodeTransition(DeprecatedDictAccess):
    """A change of the active code set between consecutive grid points of a y_- sweep (an entry
    of :func:`code_transitions`; ``entry["between"]`` etc. still work for one release, with a
    DeprecationWarning).

    between : (y_a, y_b) or None   consecutive converged grid values with different code sets;
                                   None on the entry that lists the failed grid points.
    before : tuple or None         active codes at y_a (strings like '1-1-0'); None on that entry.
    after : tuple or None          active codes at y_b; None on that entry.
    failed : tuple or None         y_- values whose solve did not converge (only on the first
                                   entry, when there are any); None on a code change.
    """

    between: tuple[float, float] | None
    before: tuple[str, ...] | None
    after: tuple[str, ...] | None
    failed: tuple[float, ...] | None = None

    def _old_keys(self) -> dict[str, str]:
        keys = {"between": "between", "before": "before", "after": "after"}
        return keys if self.failed is None else {**keys, "failed": "failed"}


def code_transitions(y_minus_values, solutions, *, min_weight: float = 1e-6) -> list[CodeTransition]:
    """Where the active code set (codes with P_gamma > min_weight) changes along a sweep.

    ``solutions``: the :class:`SigmoidSweep` (or list of solutions) of :func:`sweep_y_minus`.
    Returns one :class:`CodeTransition` per change between consecutive grid points (``between =
    (y_a, y_b)``, ``before`` = codes at y_a, ``after`` = codes at y_b); codes are strings like
    '1-1-0'. Grid points whose solve did not converge are skipped (listed in ``failed`` of a
    first entry if any, with ``between = None``)."""
    ys = as_float_array("y_minus_values", y_minus_values, ndim=1)
    if len(solutions) != ys.size:
        raise ValueError(f"solutions must have one entry per y_minus value ({ys.size}), got "
                         f"{len(solutions)}")
    min_weight = check_pos_float("min_weight", min_weight)
    out = []
    failed = [float(y) for y, s in zip(ys, solutions, strict=True) if not s.converged]
    if failed:
        out.append(CodeTransition(between=None, before=None, after=None, failed=tuple(failed)))
    prev = None
    for y, s in zip(ys, solutions, strict=True):
        if not s.converged:
            continue
        codes = _active_codes(s, min_weight)
        if prev is not None and codes != prev[1]:
            out.append(CodeTransition(between=(prev[0], float(y)), before=prev[1], after=codes))
        prev = (float(y), codes)
    return out


@dataclass(frozen=True)
class LocatedCodeTransition(DeprecatedDictAccess):
    """A code-set change located by bisection (:func:`locate_code_transition`; ``res["y_minus"]``
    etc. still work for one release, with a DeprecationWarning).

    y_minus : float              midpoint of the final interval (the located transition).
    interval : (a, b)            the final bracket, of width <= atol.
    before : tuple of str        active codes at a (strings like '1-1-0').
    after : tuple of str         active codes at b.
    """

    y_minus: float
    interval: tuple[float, float]
    before: tuple[str, ...]
    after: tuple[str, ...]


def locate_code_transition(y_lo: float, y_hi: float, *, ratios, y_plus: float = 1.0,
                           min_weight: float = 1e-6, atol: float | None = None,
                           xtol: float | None = None, **solver_kw) -> LocatedCodeTransition:
    """Bisect a code-set change between y_lo and y_hi (different active code sets at the ends)
    down to an interval of width ``atol`` (default 1e-4; ``xtol=`` is its deprecated spelling).
    Returns a :class:`LocatedCodeTransition` (``y_minus`` the midpoint, ``interval = (a, b)``,
    ``before``, ``after`` the code sets at a and b); a failed solve
    raises RuntimeError with the solver's message (status ``Status.NUMERICAL_FAILURE`` etc.)."""
    atol = renamed_option("atol", atol, "xtol", xtol, default=1e-4)
    rho = _check_ratios(ratios)
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
    (a, b), _, cb = _bisect(codes, lambda cc: cc != ca, a, b, ca, cb, atol)
    return LocatedCodeTransition(y_minus=0.5 * (a + b), interval=(a, b), before=ca, after=cb)


def _bisect(evaluate, changed, a, b, value_a, value_b, atol):
    """Shrink [a, b] (``changed(value_a)`` false, ``changed(value_b)`` true; ``value_x =
    evaluate(x)``) to width atol; returns the final interval and the values at its ends."""
    while b - a > atol:
        c = 0.5 * (a + b)
        vc = evaluate(c)
        if changed(vc):
            b, value_b = c, vc
        else:
            a, value_a = c, vc
    return (a, b), value_a, value_b


# --------------------------------------------------------------------------------------------
# temperature (seed 000 supplement E: the critical temperature of the redundant code)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TemperatureSweep(_SolutionSequence, SolverStatus):
    """Sigmoid toy solutions over a grid of rescaled temperatures T (a sequence of
    :class:`SigmoidToySolution` in grid order).

    T : (n,)              the grid.
    solutions : tuple     one SigmoidToySolution per grid point.
    statuses : (n,) int   Status code of each grid point; converged/status/message/nit/residual
                          summarise them as in :class:`SigmoidSweep`.
    """

    T: np.ndarray
    solutions: tuple
    statuses: np.ndarray

    def populations(self, *, min_weight: float = 1e-6) -> dict:
        """Code populations vs T: ``{code: (n,) P_gamma}`` for every code active (weight >
        ``min_weight``) somewhere on the grid; 0 where the code is absent, NaN where the solve
        failed. Codes are strings like '1-1-0'."""
        return {c: v[0] for c, v in self._per_code(min_weight).items()}

    def readouts(self, *, min_weight: float = 1e-6) -> dict:
        """Code readouts vs T: ``{code: (n, m) a_gamma}``, NaN where the code is absent or the
        solve failed."""
        return {c: v[1] for c, v in self._per_code(min_weight).items()}

    def _per_code(self, min_weight):
        min_weight = check_pos_float("min_weight", min_weight)
        n, m = len(self.solutions), self.solutions[0].class_targets.shape[1]
        out: dict = {}
        for i, sol in enumerate(self.solutions):
            if not sol.converged:
                continue
            for code, w, a in zip(sol.code_strings(), sol.P_gamma, sol.a_gamma, strict=True):
                if w <= min_weight:
                    continue
                pop, ra = out.setdefault(code, (np.zeros(n), np.full((n, m), np.nan)))
                pop[i] += w
                ra[i] = a
        failed = np.array([not s.converged for s in self.solutions])
        for pop, _ in out.values():
            pop[failed] = np.nan
        return dict(sorted(out.items()))


def _check_temperatures(name, values):
    T = as_float_array(name, values, ndim=1)
    if T.size == 0 or np.any(T < 0):
        raise ValueError(f"{name} must be a non-empty sequence of temperatures >= 0, got {values!r}")
    return T


def sweep_temperature(T_values, *, ratios, class_targets, **solver_kw) -> TemperatureSweep:
    """Solve the sigmoid toy (:func:`solve_sigmoid_toy`, P = inf unless ``P`` is passed) at every
    rescaled temperature of the grid ``T_values`` (>= 0): the finite-T equations of its module
    docstring (outer objective ``+ (T/2) sum_c rho_c |t_c|^2``, output ``y_c - T t_c``; notes
    §2.3 (S1) [RECON]). Keyword options go to the solver. The curves of code populations and
    readouts vs T are :meth:`TemperatureSweep.populations` / :meth:`TemperatureSweep.readouts`."""
    Ts = _check_temperatures("T_values", T_values)
    if "T" in solver_kw:
        raise TypeError("sweep_temperature takes the temperatures as T_values, not T=")
    rho = as_float_array("ratios", ratios, ndim=1)
    sols = tuple(solve_sigmoid_toy(rho, class_targets, T=float(T), **solver_kw) for T in Ts)
    return TemperatureSweep(**_grid_summary("T", Ts, sols), T=Ts, solutions=sols)


@dataclass(frozen=True)
class CriticalTemperature(DeprecatedDictAccess):
    """The critical temperature of the redundant code located by bisection
    (:func:`locate_critical_temperature`; ``res["T_c"]`` etc. still work for one release, with a
    DeprecationWarning).

    T_c : float                  midpoint of the final interval.
    interval : (a, b)            the final bracket, of width <= atol.
    codes_below : dict           ``{code: P_gamma}`` of the active codes (weight > min_weight) at a.
    code_above : str             the single code left at b (a string like '1-1-1').
    """

    T_c: float
    interval: tuple[float, float]
    codes_below: dict
    code_above: str


def locate_critical_temperature(T_lo: float, T_hi: float, *, ratios, class_targets,
                                min_weight: float = 1e-6, atol: float = 1e-4,
                                **solver_kw) -> CriticalTemperature:
    """Critical temperature T_c of the redundant code of the sigmoid toy (seed 000 supplement E
    [MT]: "above T_c the network no longer shows a redundant coding scheme"): the lowest T above
    which a single code is left (every neuron has the same readout), located by bisection to an
    interval of width ``atol`` between ``T_lo`` (several codes with weight > ``min_weight``) and
    ``T_hi`` (one code). Equations: :func:`solve_sigmoid_toy` at T (module docstring; notes §2.3
    (S1) [RECON]); P = inf unless ``P`` is passed. Assumes one such crossing in [T_lo, T_hi]
    (bisection finds a crossing, not necessarily the only one).

    Returns a :class:`CriticalTemperature` (``T_c`` the midpoint, ``interval = (a, b)``,
    ``codes_below`` the active codes at a with their weights, ``code_above`` the single code at
    b). A failed solve raises RuntimeError with the
    solver's message; wrong brackets raise ValueError naming T_lo / T_hi."""
    T_lo, T_hi = check_real("T_lo", T_lo), check_real("T_hi", T_hi)
    if not 0 <= T_lo < T_hi:
        raise ValueError(f"need 0 <= T_lo < T_hi, got T_lo={T_lo}, T_hi={T_hi}")
    atol = check_pos_float("atol", atol)
    min_weight = check_pos_float("min_weight", min_weight)
    rho = as_float_array("ratios", ratios, ndim=1)

    def active(T):
        s = solve_sigmoid_toy(rho, class_targets, T=T, **solver_kw)
        if s.status is not Status.SUCCESS:
            raise RuntimeError(f"solve at T={T} failed: {s.message}")
        return {c: float(w) for c, w in zip(s.code_strings(), s.P_gamma, strict=True)
                if w > min_weight}

    lo, hi = active(T_lo), active(T_hi)
    if len(lo) < 2:
        raise ValueError(f"T_lo={T_lo} must have several active codes, got {lo}; lower T_lo")
    if len(hi) != 1:
        raise ValueError(f"T_hi={T_hi} must have a single active code, got {hi}; raise T_hi")
    (a, b), lo, hi = _bisect(active, lambda c: len(c) == 1, T_lo, T_hi, lo, hi, atol)
    return CriticalTemperature(T_c=0.5 * (a + b), interval=(a, b), codes_below=lo,
                               code_above=next(iter(hi)))
