"""Result vocabulary shared by every iterative solver of :mod:`richlazy.theory`.

Every solver result embeds :class:`SolverStatus` (by inheritance): ``converged``, ``status`` (a
:class:`Status`), ``message`` (what happened and, on failure, what to change), ``nit`` and
``residual``. Non-convergence is a status; it is raised as :class:`SolverError` only when the
caller passes ``throw=True``. Results over a grid also carry one status per grid element
(``statuses``, an integer array of :class:`Status` codes) so one failed point does not hide behind
a scalar.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

__all__ = ["SolverError", "SolverStatus", "Status", "grid_status", "raise_if_failed"]


class SolverError(RuntimeError):
    """Raised by a solver called with ``throw=True`` when it did not converge."""


class Status(enum.IntEnum):
    """Why a solver stopped. The integer values are stable (they appear in saved results).

    SUCCESS (0)           the stopping criterion was met.
    MAX_ITERATIONS (1)    the iteration budget ran out before the criterion was met.
    NUMERICAL_FAILURE (2) the iteration broke down or stalled (singular system, no progress,
                          non-finite values) before the budget ran out.
    BAD_PROBLEM (3)       the problem has no solution of the kind sought for these inputs
                          (e.g. a target outside the range of the map being inverted).
    """

    SUCCESS = 0
    MAX_ITERATIONS = 1
    NUMERICAL_FAILURE = 2
    BAD_PROBLEM = 3

    @property
    def fix(self) -> str:
        """A generic hint on what to change; solvers add specific advice to their message."""
        return _FIX[self]


_FIX = {
    Status.SUCCESS: "",
    Status.MAX_ITERATIONS: "raise maxiter, loosen rtol/atol, or start from a better initial guess",
    Status.NUMERICAL_FAILURE: "check the inputs' conditioning (near-singular kernels, extreme "
    "temperatures or variances) and try another initial guess or a smaller step",
    Status.BAD_PROBLEM: "the inputs admit no solution of this kind; check their ranges against the "
    "solver's docstring",
}


@dataclass(frozen=True)
class SolverStatus:
    """Fields every iterative solver result carries (results embed these by inheritance).

    converged : bool   whether the stopping criterion was met.
    status : Status    why the solver stopped (0 success; 1 max iterations reached; 2 numerical
                       failure; 3 bad problem). Plain integers are converted on construction.
    message : str      what happened and, on failure, what to change.
    nit : int          iterations used.
    residual : float   final residual of the equations solved (max-abs unless stated).
    """

    converged: bool
    status: Status
    message: str
    nit: int
    residual: float

    def __post_init__(self):
        try:
            st = Status(int(self.status))
        except (TypeError, ValueError):
            raise ValueError(f"status must be one of {[int(s) for s in Status]}, "
                             f"got {self.status!r}") from None
        object.__setattr__(self, "status", st)
        if bool(self.converged) != (st is Status.SUCCESS):
            raise ValueError(f"converged={self.converged} contradicts status={st.name}")
        object.__setattr__(self, "converged", bool(self.converged))
        if st is not Status.SUCCESS and st.fix and st.fix not in self.message:
            object.__setattr__(self, "message", f"{self.message} [{st.name}: {st.fix}]")


def grid_status(statuses) -> tuple[bool, Status]:
    """Summary (converged, worst status) of an array of per-element :class:`Status` codes.

    The summary is SUCCESS only when every element succeeded; otherwise the most severe code
    present (largest value) is returned.
    """
    arr = np.asarray(statuses, dtype=int)
    if arr.size == 0:
        return True, Status.SUCCESS
    worst = Status(int(arr.max()))
    return worst is Status.SUCCESS, worst


def raise_if_failed(result: SolverStatus, throw: bool) -> None:
    """Raise :class:`SolverError` with the result's message when ``throw`` and not converged."""
    if throw and not result.converged:
        raise SolverError(result.message)
