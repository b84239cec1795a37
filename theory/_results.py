"""Result vocabulary shared by every iterative solver of :mod:`richlazy.theory`.

Every solver result embeds :class:`SolverStatus` (by inheritance): ``converged``, ``status`` (a
:class:`Status`), ``message`` (what happened and, on failure, what to change), ``nit`` and
``residual``. Non-convergence is a status; it is raised as :class:`SolverError` only when the
caller passes ``throw=True``. Results over a grid also carry one status per grid element
(``statuses``, an integer array of :class:`Status` codes) so one failed point does not hide behind
a scalar.

Results that used to be plain dicts mix in :class:`DeprecatedDictAccess`: for one release
``result["key"]`` still returns the field, with a ``DeprecationWarning`` naming it.
"""

from __future__ import annotations

import dataclasses
import enum
import warnings
from dataclasses import dataclass

import numpy as np

__all__ = ["DeprecatedDictAccess", "SolverError", "SolverStatus", "Status", "grid_status",
           "raise_if_failed"]


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


class DeprecatedDictAccess:
    """Mixin for a frozen dataclass result that used to be a plain dict (kept for one release).

    ``result["key"]`` returns the field the old key maps to and emits ``DeprecationWarning
    ("result['key'] is deprecated; use result.field")``; ``keys()``, ``items()``, ``in`` and
    iteration see the old keys (``keys()``/``items()``/iteration warn too). The old keys are the
    field names unless the class overrides :meth:`_old_keys` (``{old key: field name}``).
    """

    def _old_keys(self) -> dict[str, str]:
        return {f.name: f.name for f in dataclasses.fields(self)}

    def __getitem__(self, key):
        field = self._old_keys().get(key) if isinstance(key, str) else None
        if field is None:
            raise KeyError(key)
        warnings.warn(f"result[{key!r}] is deprecated; use result.{field}", DeprecationWarning,
                      stacklevel=2)
        return getattr(self, field)

    def __contains__(self, key) -> bool:
        return key in self._old_keys()

    def _warn_mapping(self, what: str) -> None:
        warnings.warn(f"result.{what} is deprecated (the result is no longer a dict); use its "
                      f"fields {tuple(self._old_keys().values())}", DeprecationWarning, stacklevel=3)

    def keys(self):
        """The old dict keys (deprecated)."""
        self._warn_mapping("keys()")
        return self._old_keys().keys()

    def items(self):
        """``(old key, value)`` pairs as the dict had them (deprecated)."""
        self._warn_mapping("items()")
        return [(k, getattr(self, f)) for k, f in self._old_keys().items()]

    def __iter__(self):
        self._warn_mapping("__iter__()")
        return iter(self._old_keys())
