"""Result vocabulary shared by the iterative solvers of :mod:`richlazy.theory`."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SolverError", "SolverStatus", "raise_if_failed"]


class SolverError(RuntimeError):
    """Raised by a solver called with ``throw=True`` when it did not converge."""


@dataclass(frozen=True)
class SolverStatus:
    """Fields every iterative solver result carries (results embed these by inheritance).

    converged : bool   whether the stopping criterion was met.
    status : int       0 success; 1 max iterations reached; 2 numerical failure; 3 bad problem.
    message : str      what happened and, on failure, what to change.
    nit : int          iterations used.
    residual : float   final residual of the equations solved (max-abs unless stated).
    """

    converged: bool
    status: int
    message: str
    nit: int
    residual: float


def raise_if_failed(result: SolverStatus, throw: bool) -> None:
    if throw and not result.converged:
        raise SolverError(result.message)
