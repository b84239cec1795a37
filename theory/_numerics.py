"""Generic numerics shared by the solvers (no physics here): one iteration driver
(:func:`iterate`: the loop, its count, history and stopping status for an init / step /
terminate triple), batched Newton ascent to the local maxima of an objective (plain Newton where
the Hessian is negative definite, saddle-free Newton elsewhere, backtracking on the value), the
duplicate filter for the maxima found, and Newton's method for square, possibly singular but
consistent systems (minimum-norm least-squares steps).

The coding solvers of seed 000 use them for the single-neuron problems (code search, code
equations), the ReLU solvers for their KKT systems; the deep fixed point and the LDT saddle
point run their Newton loops through :func:`iterate`."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import linalg

__all__: list[str] = []

# Stopping codes of the driver: the stable integer values of ``richlazy.theory._results.Status``
# (this module imports nothing of richlazy, tests/test_layering.py; ``Status(code)`` is the member)
SUCCESS, MAX_ITERATIONS, NUMERICAL_FAILURE = 0, 1, 2


@dataclass(frozen=True)
class Iteration:
    """Outcome of :func:`iterate`: the last state, why the loop stopped (``status``, the int
    code of a ``richlazy.theory.Status``: 0 SUCCESS, 1 MAX_ITERATIONS, 2 NUMERICAL_FAILURE, ...;
    ``Status(status)`` is the member, and ``why``, what happened in words), ``nit`` (steps
    taken) and ``history`` (``record(state)`` of the initial state and of each recorded step)."""

    state: object
    status: int
    why: str
    nit: int
    history: list = field(default_factory=list)

    @property
    def converged(self) -> bool:
        """Whether the stopping criterion was met (status SUCCESS)."""
        return self.status == SUCCESS


def _stop(stop):
    """``(code, why)`` of a stop given as a status code (a ``Status`` or its int) or a
    ``(code, why)`` pair."""
    if isinstance(stop, tuple):
        return int(stop[0]), str(stop[1])
    return int(stop), ""


def iterate(init, step, terminate=None, *, maxiter, record=None, values=None,
            nonfinite="the iteration produced non-finite values",
            exhausted="the iteration budget ran out: raise maxiter, loosen the tolerance or start "
                      "from a better initial guess"):
    """Run ``state = step(state, nit)`` from ``init`` until a stop; the driver of every
    Newton / fixed-point loop (in the style of Optimistix's init / step / terminate and SciPy's
    ``_elementwise_iterative_method._loop``, for one problem at a time).

    Stops are given in the status vocabulary of ``richlazy.theory.Status`` (a member or its int
    code, alone or as a ``(code, why)`` pair). Before each step ``nit = 0, 1, ..., maxiter`` the
    loop stops, in this order of precedence, with NUMERICAL_FAILURE (why: ``nonfinite``, or
    ``nonfinite(state)`` if callable) when ``values(state)`` has a non-finite entry; with what
    ``terminate(state)`` returns when that is not None (e.g. SUCCESS); with MAX_ITERATIONS
    (why: ``exhausted``) when ``nit == maxiter``. A step returns ``(state, stop)``: a ``stop``
    that is not None (same forms) ends the loop at the returned state (a breakdown, or a
    convergence test that must come inside the step). After each step that did not stop,
    ``record(state)`` is appended to the history unless it is None (a step that produced no new
    iterate, e.g. a Jacobian refresh). Returns an :class:`Iteration`; nit = steps taken."""
    if isinstance(maxiter, bool) or not isinstance(maxiter, int | np.integer) or maxiter < 0:
        raise ValueError(f"maxiter must be an int >= 0 (the number of steps allowed), got {maxiter!r}")
    state = init
    history = []
    if record is not None:
        history.append(record(state))
    for nit in range(maxiter + 1):
        stop = None
        if values is not None and not np.all(np.isfinite(values(state))):
            stop = (NUMERICAL_FAILURE, nonfinite(state) if callable(nonfinite) else nonfinite)
        elif terminate is not None:
            stop = terminate(state)
        if stop is None and nit == maxiter:
            stop = (MAX_ITERATIONS, exhausted)
        if stop is not None:
            return Iteration(state, *_stop(stop), nit, history)
        state, stop = step(state, nit)
        if stop is not None:
            return Iteration(state, *_stop(stop), nit + 1, history)
        if record is not None:
            entry = record(state)
            if entry is not None:
                history.append(entry)
    raise AssertionError("unreachable: the loop stops at nit == maxiter")


def _saddle_free_step(hess, grad, with_max=False):
    """Saddle-free Newton step for a batch: an ascent direction from |eigenvalues| >= 1e-3.
    ``with_max``: also return each Hessian's largest eigenvalue."""
    lam, V = np.linalg.eigh(hess)
    lam_max = lam[:, -1]
    lam = -np.maximum(np.abs(lam), 1e-3)
    Vt_g = np.einsum("kji,kj->ki", V, grad)
    step = -np.einsum("kij,kj->ki", V, Vt_g / lam)
    return (step, lam_max) if with_max else step


def _backtrack(value_at, X, step, alpha, val, slack, n_halvings):
    """Halve the per-point step lengths ``alpha`` until no value decreases (beyond ``slack``)."""
    for _bt in range(n_halvings):
        vt = value_at(X + alpha[:, None] * step)
        ok = vt >= val - slack * (1.0 + np.abs(val))
        if np.all(ok):
            break
        alpha = np.where(ok, alpha, 0.5 * alpha)
    return alpha


def _keep_maxima(X, val, grad, hess, tol, dedup, relative):
    """Points that are local maxima (small gradient, negative-definite Hessian), sorted by
    decreasing value, duplicates (max-abs distance below ``dedup``, times ``1 + max|x|`` if
    ``relative``) removed. Returns the kept indices into the sorted, filtered arrays' source."""
    lam = np.linalg.eigvalsh(hess)
    good = np.flatnonzero((np.max(np.abs(grad), axis=1) < 1e3 * tol) & (lam[:, -1] < 0))
    good = good[np.argsort(-val[good])]
    if good.size == 0:
        return good
    return good[_distinct(X[good], dedup, relative)]


def _distinct(X, dedup, relative=True):
    """Indices of the rows of X (n >= 1, in order of preference) kept by a greedy pass that drops
    each row within max-abs distance ``dedup`` (times ``1 + max|x|`` if ``relative``) of a row
    kept before it."""
    scale = (1.0 + np.max(np.abs(X), axis=1)) if relative else np.ones(len(X))
    keep = [0]
    for i in range(1, len(X)):
        if np.min(np.max(np.abs(X[keep] - X[i]), axis=1)) > dedup * scale[i]:
            keep.append(i)
    return np.array(keep, dtype=int)


def _newton_lstsq(fun, x0, tol, maxiter=60):
    """Newton's method for a square system that may be singular but consistent (non-unique
    code weights; at y_- = -1/2 also gauge directions of t, see the docs). The Jacobian's
    singular values are computed once: if it is numerically singular every step is the
    minimum-norm least-squares step (SVD), else an LU step; backtracking on max|F|.
    A Jacobian that LAPACK cannot factorise (an SVD that does not converge, e.g. non-finite
    entries) ends the iteration at the current point: the caller judges its residual.
    Returns (x, residual, nfev)."""
    x = x0.copy()
    F, J = fun(x)
    res = float(np.max(np.abs(F)))
    if res <= tol:
        return x, res, 1
    try:
        s = np.linalg.svd(J, compute_uv=False)
    except np.linalg.LinAlgError:
        return x, res, 1
    state = _LstsqState(x, F, J, res, 1, s[-1] < 1e-12 * s[0])
    out = iterate(state, lambda st, _nit: _lstsq_step(fun, st),
                  lambda st: SUCCESS if st.res <= tol else None, maxiter=maxiter)
    return out.state.x, out.state.res, out.state.nfev


@dataclass
class _LstsqState:
    """Iterate of :func:`_newton_lstsq`: x, F(x), J(x), max|F|, evaluations, and whether the
    first Jacobian was numerically singular (then every step is a least-squares step)."""

    x: np.ndarray
    F: np.ndarray
    J: np.ndarray
    res: float
    nfev: int
    singular: bool


def _lstsq_dx(J, F, singular):
    """Newton direction solving ``J dx = -F``: minimum-norm least squares (gelsd, cond 1e-13)
    when ``singular`` or when LU finds J singular, else LU."""
    if singular:
        return linalg.lstsq(J, -F, cond=1e-13, lapack_driver="gelsd")[0]
    try:
        return np.linalg.solve(J, -F)
    except np.linalg.LinAlgError:
        return linalg.lstsq(J, -F, cond=1e-13, lapack_driver="gelsd")[0]


def _lstsq_step(fun, st):
    """One damped step of :func:`_newton_lstsq` (the state is updated in place): the direction
    of :func:`_lstsq_dx`, halved until max|F| decreases by the factor ``1 - 1e-4 alpha`` (or
    alpha < 1e-8). Stops (NUMERICAL_FAILURE) when the direction cannot be computed or is not
    finite, or when the accepted trial point does not decrease max|F|."""
    try:
        dx = _lstsq_dx(st.J, st.F, st.singular)
    except (np.linalg.LinAlgError, ValueError):
        return st, (NUMERICAL_FAILURE, "the Newton direction could not be computed")
    if not np.all(np.isfinite(dx)):
        return st, (NUMERICAL_FAILURE, "the Newton direction is not finite")
    alpha = 1.0
    while True:
        Fn, Jn = fun(st.x + alpha * dx)
        st.nfev += 1
        rn = float(np.max(np.abs(Fn)))
        if rn < (1.0 - 1e-4 * alpha) * st.res or alpha < 1e-8:
            break
        alpha *= 0.5
    if not rn < st.res:  # no decrease (or a non-finite residual): stop here
        return st, (NUMERICAL_FAILURE, "no decrease of max|F| along the Newton direction")
    st.x, st.F, st.J, st.res = st.x + alpha * dx, Fn, Jn, rn
    return st, None


def _negative_definite(hess):
    """(k,) bool: which Hessians of the batch are negative definite (their Cholesky factor of -H
    exists). One batched factorisation when all are; a batched factorisation fails as a whole,
    so otherwise each matrix is factorised on its own (the same LAPACK call on the same matrix,
    so the same flags as any batching; 5x faster than bisecting the batch, which refactorised
    the definite ones at every level, on a batch of 60 matrices of size 55 with 30 % indefinite)."""
    try:
        np.linalg.cholesky(-hess)
        return np.ones(hess.shape[0], dtype=bool)
    except np.linalg.LinAlgError:
        pass
    ok = np.ones(hess.shape[0], dtype=bool)
    for i, h in enumerate(hess):
        try:
            np.linalg.cholesky(-h)
        except np.linalg.LinAlgError:
            ok[i] = False
    return ok


def _ascent_step(hess, grad, newton):
    """Newton step towards a maximum for a batch, and which Hessians were negative definite.

    Points flagged ``newton`` (their Hessian was negative definite at the previous step) take
    plain Newton (Cholesky of -H as the test, one solve); a failure there is localised by
    :func:`_negative_definite`. The others, and the points that failed, take the saddle-free
    step (eigenvalues |lambda| >= 1e-3), whose eigenvalues also say whether they may return to
    Newton. Where every eigenvalue is below -1e-3 the two steps are the same, so the flags only
    decide which factorisation is paid for. Returns (step, negative-definite flags)."""
    step = np.empty_like(grad)
    ok = newton.copy()
    if ok.any():
        ok[ok] = _negative_definite(hess[ok])  # one batched Cholesky when all are definite
    if ok.any():
        step[ok] = np.linalg.solve(-hess[ok], grad[ok][:, :, None])[:, :, 0]
    if not ok.all():
        step[~ok], lam_max = _saddle_free_step(hess[~ok], grad[~ok], with_max=True)
        ok[~ok] = lam_max < 0
    return step, ok


def _ascend_to_maxima(evaluate, starts, tol, maxiter, dedup):
    """Distinct local maxima of a batched objective by damped Newton ascent from ``starts``
    (saddle-free Newton where a Hessian is not negative definite). ``evaluate(X, order)``
    returns (value, _) for order 0 and (value, _, grad, hess, ...) for order 2. Returns
    (X (n, d), value (n,)) sorted by decreasing value, duplicates removed."""
    X = np.array(starts, dtype=float, copy=True)
    active = np.ones(X.shape[0], dtype=bool)
    newton = np.ones(X.shape[0], dtype=bool)
    for _ in range(maxiter):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        Q, _V, grad, hess, *_ = evaluate(X[idx], 2)
        done = np.max(np.abs(grad), axis=1) < tol
        active[idx[done]] = False
        idx, Q, grad, hess = idx[~done], Q[~done], grad[~done], hess[~done]
        if idx.size == 0:
            break
        step, newton[idx] = _ascent_step(hess, grad, newton[idx])
        nrm = np.max(np.abs(step), axis=1)
        alpha = np.minimum(1.0, 2.0 / np.maximum(nrm, 1e-300))
        alpha = _backtrack(lambda Xt: evaluate(Xt, 0)[0], X[idx], step, alpha, Q, 1e-13, 40)
        X[idx] = X[idx] + alpha[:, None] * step
    Q, _V, grad, hess, *_ = evaluate(X, 2)
    keep = _keep_maxima(X, Q, grad, hess, tol, dedup, relative=True)
    return X[keep], Q[keep]
