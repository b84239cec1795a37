"""Newton's method for the fixed point of a deep network's kernel map (seed 000, notes §2.3,
§4.5 [RECON]), shared by the L = 2 and general-L sigmoid solvers.

The unknowns are the class-block parameters of the hidden-layer kernels; ``F(x)`` is one pass
of the mean-field map (feature layer, conjugate kernels, lower layers). The map has a large
gain, so plain iteration does not converge; Newton with a forward-difference Jacobian, Broyden
updates between refreshes and backtracking on the max-abs residual does, from a start in the
basin. Where a fresh Newton direction gives no descent, damped (Levenberg-Marquardt) steps are
tried before giving up.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._numerics import iterate
from ..._results import Status
from ...checks import as_float_matrix, check_int, check_pos_float
from .._problem import _check_labels

__all__: list[str] = []

#: damping factors mu of the Levenberg-Marquardt steps tried when a fresh Newton direction gives
#: no descent: dx = -(J^T J + mu diag(J^T J))^-1 J^T r
_LM_DAMPING = (1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0)


@dataclass
class _NewtonRun:
    """Outcome of :func:`_newton_fixed_point`: the last iterate, the map's extra outputs there,
    the residual history, the map gain (largest singular value of dF/dx at the last Jacobian
    refresh), the status and, on failure, why."""

    x: np.ndarray
    extra: tuple
    history: list
    gain: float
    status: Status
    why: str


def _newton_fixed_point(F, x, *, rtol, maxiter, fd_step, report, start_name, failure):
    """Solve ``F(x)[0] = x``. ``F(x)`` returns (value, *extra) with NaN values where the map
    failed; ``failure(extra)`` says why in words. Stops when ``max|F(x) - x| <= rtol max|x|``.
    The loop is :func:`richlazy.theory._numerics.iterate` over :func:`_newton_step`."""
    fx, *extra = F(x)
    r = fx - x
    init = _FixedPointState(x=x, r=r, extra=extra, res=float(np.max(np.abs(r))))

    def converged(st):
        return Status.SUCCESS if st.res <= rtol * max(float(np.max(np.abs(st.x))), 1e-300) else None

    out = iterate(init, lambda st, it: _newton_step(F, st, it, fd_step, report, start_name, failure),
                  converged, maxiter=maxiter, record=lambda st: st.res if st.new else None,
                  values=lambda st: st.r, nonfinite=lambda st: failure(st.extra),
                  exhausted=f"raise maxiter or start closer ({start_name})")
    st = out.state
    return _NewtonRun(x=st.x, extra=tuple(st.extra), history=out.history, gain=st.gain,
                      status=Status(out.status), why=out.why)


@dataclass
class _FixedPointState:
    """Iterate of :func:`_newton_fixed_point`: x, the residual r = F(x) - x and max|r|, the map's
    extra outputs at x, the Jacobian model J of r (None: to be refreshed by finite differences),
    whether J is fresh, the map gain at the last refresh, and whether the last step moved x."""

    x: np.ndarray
    r: np.ndarray
    extra: list
    res: float
    J: np.ndarray | None = None
    fresh: bool = False
    gain: float = float("nan")
    new: bool = True


def _newton_step(F, st, it, fd_step, report, start_name, failure):
    """One step of :func:`_newton_fixed_point` (state updated in place): refresh J by finite
    differences if it is None; the Newton direction, halved down to 1/64 until max|r| decreases;
    with a fresh J, Levenberg-Marquardt steps next; accepted: Broyden's good update of J. A stale
    J that gives no descent is dropped (no new iterate: the next step refreshes it); a fresh one
    ends the loop (NUMERICAL_FAILURE), as does a Jacobian column the map fails on."""
    st.new = False
    if st.J is None:
        st.J, bad = _fd_jacobian(F, st.x, st.r, fd_step)
        if st.J is None:
            return st, (Status.NUMERICAL_FAILURE, "the map failed at both finite-difference points "
                        f"of a Jacobian column ({failure(bad)}); try another fd_step")
        st.fresh = True
        st.gain = float(np.linalg.svd(st.J + np.eye(st.x.size), compute_uv=False)[0])
    trial = _descent(F, st)
    if trial is None:
        if st.fresh:
            return st, (Status.NUMERICAL_FAILURE, "no descent along the Newton direction of a fresh "
                        "Jacobian nor along damped (Levenberg-Marquardt) "
                        f"steps; try another {start_name} or fd_step")
        st.J = None  # the Broyden model went stale: refresh it by finite differences
        return st, None
    lam, dx, r2, extra2 = trial
    s, y = lam * dx, r2 - st.r
    st.J, st.fresh = st.J + np.outer(y - st.J @ s, s) / (s @ s), False  # Broyden's good update
    st.x, st.r, st.extra = st.x + s, r2, extra2
    st.res, st.new = float(np.max(np.abs(st.r))), True
    report(f"iteration {it + 1}: max|F(K) - K| = {st.res:.2e} (step {lam:g}, {F.n_evals} "
           f"evaluations of the map)")
    return st, None


def _descent(F, st):
    """A trial point with a smaller max|r|: the Newton direction dx = -J^+ r scaled by
    lam = 1, 1/2, ..., 1/64, then (fresh J only) the Levenberg-Marquardt steps of
    ``_LM_DAMPING``. Returns (lam, dx, r2, extra2) of the first that decreases, else None."""
    x, r, J, hist = st.x, st.r, st.J, st.res
    dx = np.linalg.lstsq(J, -r, rcond=None)[0]
    lam = 1.0
    while lam >= 1.0 / 64:
        fx2, *extra2 = F(x + lam * dx)
        r2 = fx2 - (x + lam * dx)
        if np.all(np.isfinite(r2)) and np.max(np.abs(r2)) < hist:
            return lam, dx, r2, extra2
        lam /= 2
    if st.fresh:  # Levenberg-Marquardt steps, shorter and turned to the gradient
        A, g = J.T @ J, J.T @ r
        for mu in _LM_DAMPING:
            dx = np.linalg.solve(A + mu * np.diag(np.diag(A) + 1e-300), -g)
            fx2, *extra2 = F(x + dx)
            r2 = fx2 - (x + dx)
            if np.all(np.isfinite(r2)) and np.max(np.abs(r2)) < hist:
                return 1.0, dx, r2, extra2
    return None


def _check_problem(labels, Y):
    """(Y (P, m), labels (P,)) of a deep-network fixed-point problem, checked."""
    Y = as_float_matrix("Y", Y, allow_1d=True)
    P = Y.shape[0]
    lab = _check_labels(labels, P)
    if lab.shape != (P,):
        raise ValueError(f"labels must have one entry per row of Y ({P}), got shape {lab.shape}")
    return Y, lab


def _check_newton_options(sigma_w2, rtol, fd_step, maxiter, seed):
    """(sigma_w2, rtol, fd_step, maxiter, seed) checked; the seed must be an int so that every
    evaluation of the map runs the same searches (a Generator would change the map)."""
    out = (check_pos_float("sigma_w2", sigma_w2), check_pos_float("rtol", rtol),
           check_pos_float("fd_step", fd_step), check_int("maxiter", maxiter, minimum=1))
    if not isinstance(seed, int | np.integer) or isinstance(seed, bool):
        raise TypeError(f"seed must be an int (the same search at every evaluation of the map), "
                        f"got {type(seed).__name__}")
    return (*out, int(seed))


def _fd_jacobian(F, x, r, h):
    """Forward-difference Jacobian of r(x) = F(x) - x (a backward difference for a column whose
    forward point fails). Returns (J, None), or (None, extra of the failed evaluation)."""
    J = np.empty((x.size, x.size))
    for k in range(x.size):
        for sign in (1.0, -1.0):
            e = np.zeros_like(x)
            e[k] = sign * h
            fe, *extra = F(x + e)
            col = sign * (fe - (x + e) - r) / h
            if np.all(np.isfinite(col)):
                break
        else:
            return None, tuple(extra)
        J[:, k] = col
    return J, None


def _positive_definite(K):
    try:
        np.linalg.cholesky(K)
    except np.linalg.LinAlgError:
        return False
    return True
