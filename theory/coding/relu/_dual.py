"""Dual ascent for the outlier-only ReLU theory: a proximal column-generation method that raises
the weak-duality lower bound to the global minimum (seed 000, notes §5.2 last bullet [RECON]).

Source: A. van Meegen & H. Sompolinsky, *Coding schemes in neural networks learning
classification tasks*, Nat. Commun. 16, 3354 (2025) (seed 000), main text "Sparse coding
scheme"; the convex (atomic-norm) form of the outlier problem is the reconstruction in
:mod:`._relu_outliers`.

With balanced neurons (``Ps |abar|^2 = zbar^T K0^+ zbar``) a neuron of direction w (|w| = 1,
z = B w, K0 = B B^T) and output vector v costs ``sqrt(Ps) |v|``, so the outlier problem is the
group lasso over the continuum of directions

    primal   min sum_j sqrt(Ps) |v_j| + |F - Y|^2 / (2T),   F = sum_j relu(B w_j) v_j^T
    dual     max_t  D(t) = tr(t^T Y) - (T/2) |t|^2   s.t.  |t^T relu(B w)|^2 <= Ps  for all |w| = 1

(at T = 0 the squared error is the constraint F = Y). Any t whose dual margin
``max_w |t^T relu(B w)|^2 / Ps`` is at most 1 gives the lower bound D(t) on every interpolant.
At T = 0 the dual optimum is degenerate (t is not unique), so the plain column-generation
multiplier (the analytic centre of a restricted optimal face) is a poor pricing point. The
proximal version used here keeps a dual-feasible centre t_hat and solves

    max_t  D(t) - (rho/2) |t - t_hat|^2   s.t.  |t^T phi_j|^2 <= Ps  for the directions so far,

adds the directions the pricing search (:func:`._relu_certificate._local_maxima`) finds
violated at the solution, and repeats; once the solution is feasible (margin <= 1 + 1e-9, up to
the search), it becomes the new centre if it raises D (a proximal-point / bundle step). Each
restricted problem is a convex QCQP in t, solved by a log-barrier Newton method (the barrier
``-log(Ps - |c_j|^2)`` is self-concordant; damped Newton steps keep every iterate strictly
feasible). Every centre is dual feasible up to the search, so the bound only rises.

The proximal steps raise the lower bound fast from a poor multiplier, but the bracket they
leave between it and the network over the collected directions is wide (2.6 % on a digits
problem at P = 30). :func:`_inout_refinement` then narrows it by in-out column generation
(the "in-out" stabilisation of Ben-Ameur & Neto, 2007): it keeps a dual-feasible t_in and the
restricted optimum t_out (whose value is the cheapest network over the directions so far, an
upper bound) and prices the point between them. A feasible midpoint raises the lower bound; an
infeasible one yields directions that cut t_out off and lower the upper bound.

The pricing search is the weak point: it is a multi-start local search, not an exhaustive one.
On a Fashion-MNIST problem (P = 30) 25 random starts reported a margin of 0.99993 where 200
starts found 1.0017, and the bound built on it lay above the cost of a feasible network found
by another restart. So each final centre is checked by a search with ``n_verify`` (default
40 P) starts and scaled down by what that search finds; the bound is valid up to that search.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from threadpoolctl import threadpool_limits

from ._certificate import _feasible_multiple, _local_maxima

__all__: list[str] = []

_MARGIN_TOL = 1e-9  # a restricted solution with dual margin <= 1 + this is accepted as feasible
_N_CUTS = 20  # most directions added per pricing search


def _dual_value(t, Y, T):
    """The dual objective ``D(t) = tr(t^T Y) - (T/2)|t|^2``."""
    return float(np.sum(t * Y) - 0.5 * T * np.sum(t * t))


def _binding(W, B, t, Ps):
    """Ratio ``|t^T relu(B w_j)|^2 / Ps`` of each direction (row w_j of W): 1 where it binds."""
    C = np.maximum(W @ B.T, 0.0) @ t
    return np.sum(C * C, axis=1) / Ps


def _price(t, fac, Ps, rng, starts, n_starts):
    """Dual margin of t by :func:`._relu_certificate._local_maxima` from ``starts`` and
    ``n_starts`` random starts; returns (margin, the violated directions found)."""
    found = _local_maxima(t, fac, Ps, rng, starts, n_starts)
    margin = found[0][0] if found else 0.0
    return margin, [w for val, w in found if val > 1.0 + _MARGIN_TOL]


def _restricted_dual(Phi, Y, Ps, T, gap_tol, s_max=1e10, max_newton=60):
    """Maximise ``tr(t^T Y) - (T/2)|t|^2`` subject to ``|t^T phi_j|^2 <= Ps`` (rows phi_j of
    Phi (n, P)) by a log-barrier method started at t = 0 (strictly feasible), the barrier
    weight 1/s shrinking 20-fold per round. Returns (t, gap, V): gap is |primal - dual| with the
    primal readouts V (rows ``v_j = 2 c_j / (s g_j)``) that the barrier's stationarity implies
    (``c_j = t^T phi_j``, ``g_j = Ps - |c_j|^2``; an exact gap only at the barrier minimiser);
    the loop stops once it is below ``gap_tol`` or s exceeds ``s_max``."""
    n, P = Phi.shape
    m = Y.shape[1]
    t = np.zeros((P, m))
    s = n / max(float(np.abs(Y).sum()), 1.0)
    eye = np.eye(m * P)
    gap = np.inf
    while True:
        for _ in range(max_newton):
            C = Phi @ t
            g = Ps - np.sum(C * C, axis=1)
            w = 2.0 / g
            grad = -s * (Y - T * t) + Phi.T @ (w[:, None] * C)
            H = np.empty((m, P, m, P))
            for r in range(m):
                for q in range(r, m):
                    d = 4.0 * C[:, r] * C[:, q] / (g * g)
                    if r == q:
                        d = d + w
                    blk = (Phi.T * d) @ Phi
                    H[r, :, q, :] = blk
                    H[q, :, r, :] = blk.T
            H = H.reshape(m * P, m * P)
            if T > 0:
                H += (s * T) * eye
            gv = grad.T.ravel()
            try:
                step = -linalg.cho_solve(linalg.cho_factor(H), gv)
            except linalg.LinAlgError:
                step = -np.linalg.lstsq(H, gv, rcond=None)[0]
            dec = float(-gv @ step)
            if not np.isfinite(dec) or dec / 2 < 1e-10:
                break
            a = 1.0 if dec < 0.0625 else 1.0 / (1.0 + np.sqrt(dec))  # damped Newton
            D = step.reshape(m, P).T
            while a > 1e-14:
                Cn = Phi @ (t + a * D)
                if np.all(Ps - np.sum(Cn * Cn, axis=1) > 0):
                    break
                a *= 0.5
            if a <= 1e-14:
                break
            t = t + a * D
        C = Phi @ t
        g = Ps - np.sum(C * C, axis=1)
        V = (2.0 / (s * g))[:, None] * C
        F = Phi.T @ V
        primal = np.sqrt(Ps) * np.sum(np.linalg.norm(V, axis=1))
        primal += 0.5 * np.sum((F - Y) ** 2) / T if T > 0 else 0.0
        dual = _dual_value(t, Y, T)
        gap = abs(primal - dual)
        if gap <= gap_tol or s >= s_max:
            return t, gap, V
        s *= 20.0


def _prox_dual_ascent(fac, Y, Ps, T, t0, W0, rng, n_random, **options):
    """Raise the weak-duality lower bound of the outlier problem from the multiplier t0 (one
    BLAS thread: the matrices are small, and the result must not depend on the thread count;
    :func:`_ascent` documents the arguments)."""
    with threadpool_limits(limits=1):
        return _ascent(fac, Y, Ps, T, t0, W0, rng, n_random, **options)


def _ascent(fac, Y, Ps, T, t0, W0, rng, n_random, *, n_verify=None, rho=None, n_outer=12,
            n_inner=25, max_atoms=None, target=None, gap_rtol=1e-7, report=None):
    """Raise the weak-duality lower bound of the outlier problem from the multiplier t0.

    fac : :class:`._relu_factor._Factor` of K0; Y (P, m) targets; Ps = 1/sigma_a2; T >= 0;
    t0 (P, m) any multiplier (scaled to dual feasibility first); W0 (k, r) known neuron
    directions (range coordinates) that seed the restricted problem; ``n_random`` random starts
    of each pricing search; ``n_verify`` (default 40 P) random starts of the search that
    verifies the final centre (and any centre that reaches ``target``): a violation found there
    scales the centre down (so the bound stays valid) and the ascent goes on. ``rho`` is the
    proximal weight (default 0.1 x the scale ``D(t0_feasible) / |t0|^2``); ``target`` (an
    upper bound, e.g. the cost of a feasible network) stops the ascent once the relative gap
    to it is <= ``gap_rtol``; a step that neither raises the bound nor finds a new violated
    direction stops it too.

    Returns (t, bound, n_solves, W): the best dual-feasible t found (dual margin <= 1 up to the
    verification search), its dual value D(t) (a lower bound on the global minimum), the number of
    restricted problems solved and the directions collected (unit rows, range coordinates)."""
    B = fac.B
    P, r = B.shape
    scale = max(float(np.abs(Y).max()), 1e-300)

    def D(t):
        return _dual_value(t, Y, T)

    def feasible(t, n_starts=n_random):
        # starts: the directions that (nearly) bind at t, the signed output directions, random
        ratio = _binding(W, B, t, Ps)
        return _price(t, fac, Ps, rng, W[ratio >= 0.9 * ratio.max()][:4 * P], n_starts)

    W = np.asarray(W0, float).reshape(-1, r)
    W = np.vstack([W, rng.standard_normal((2 * P, r))])
    W = W[np.linalg.norm(W, axis=1) > 0]
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    margin, _ = feasible(t0)
    # the best feasible multiple (at T > 0 the dual is a concave quadratic along the ray)
    t_hat = _feasible_multiple(t0, Y, T, max(margin, 1.0))
    best = D(t_hat)
    if rho is None:
        rho = 0.1 * max(abs(best), scale) / max(float(np.sum(t_hat * t_hat)), 1e-300)
    max_atoms = 40 * P if max_atoms is None else max_atoms
    n_verify = 40 * P if n_verify is None else n_verify
    n_solves = 0
    for outer in range(n_outer):
        n_new = 0
        for _ in range(n_inner):
            Phi = np.maximum(W @ B.T, 0.0)
            keep = np.linalg.norm(Phi, axis=1) > 0
            W, Phi = W[keep], Phi[keep]
            t, _, _ = _restricted_dual(Phi, Y + rho * t_hat, Ps, T + rho,
                                    gap_tol=1e-10 * max(abs(best), scale))
            n_solves += 1
            margin, new = feasible(t)
            if new:
                W = np.vstack([W, np.array(new[:_N_CUTS])])
                n_new += min(len(new), _N_CUTS)
            if len(W) > max_atoms:  # drop the directions farthest from binding at t
                W = W[np.argsort(-_binding(W, B, t, Ps))[:max_atoms]]
            if margin <= 1.0 + _MARGIN_TOL:
                break
        t_feas = t / np.sqrt(max(margin, 1.0))
        val = D(t_feas)
        serious = val > best
        if serious:
            t_hat, best = t_feas, val
        if report is not None:
            report(f"dual ascent step {outer + 1}/{n_outer}: lower bound {best:.10g}, "
                   f"{len(W)} directions")
        done = target is not None and (target - best) <= gap_rtol * abs(target)
        stalled = not serious and n_new == 0  # the same restricted problem again
        if done or stalled or outer == n_outer - 1:
            # the bound stands only if no direction violates t_hat: a much wider search
            margin_v, new = feasible(t_hat, n_verify)
            t_hat = t_hat / np.sqrt(max(margin_v, 1.0))
            best = D(t_hat)
            if margin_v <= 1.0 + _MARGIN_TOL or outer == n_outer - 1:
                break
            W = np.vstack([W, np.array(new[:50])])  # missed directions: go on ascending
            if report is not None:
                report(f"dual ascent: the verification search found dual margin {margin_v:.9f}; "
                       f"bound lowered to {best:.10g}")
    return t_hat, best, n_solves, W


def _inout_refinement(fac, Y, Ps, T, t0, W0, rng, n_random, **options):
    """Raise the weak-duality lower bound of the outlier problem from the multiplier t0 (one
    BLAS thread: the matrices are small, and the result must not depend on the thread count;
    :func:`_inout` documents the arguments)."""
    with threadpool_limits(limits=1):
        return _inout(fac, Y, Ps, T, t0, W0, rng, n_random, **options)


def _inout(fac, Y, Ps, T, t0, W0, rng, n_random, *, n_verify=None, n_iter=60, alpha=0.5,
            max_atoms=None, target=None, gap_rtol=1e-7, report=None):
    """In-out column generation on the dual of the outlier problem, from the multiplier t0.

    fac : :class:`._relu_factor._Factor` of K0; Y (P, m) targets; Ps = 1/sigma_a2; T >= 0;
    t0 (P, m) any multiplier (scaled to dual feasibility first); W0 (k, r) known neuron
    directions (range coordinates) that seed the restricted problem; ``n_random`` random starts
    of each pricing search; ``n_verify`` (default 40 P) random starts of the search that
    verifies the final centre: a violation found there scales the centre down (so the bound
    stays valid) and, budget permitting, the method goes on with those directions. ``alpha``
    is the step from the inner point towards the restricted optimum; ``n_iter`` bounds the
    number of restricted problems; ``max_atoms`` (default 60 P) the directions kept (those
    nearest to binding at the restricted optimum); ``target`` (an upper bound, e.g. the cost
    of a feasible network) and the restricted optimum itself stop the method once the relative
    gap to the bound is <= ``gap_rtol``.

    Returns (t, bound, n_solves, W, V, upper): the best t that passed a verification search
    (dual margin <= 1 up to that search; scaled down by what it found), its dual value D(t) (a
    lower bound on the global minimum), the number of restricted problems solved, the
    directions W of the last restricted problem (unit rows, range coordinates), the barrier
    readouts V of its solution (rows of W; a warm start for :func:`_restricted_primal`) and its
    optimal value (an upper bound on the global minimum up to the barrier's gap: the minimum
    over the directions W)."""
    B = fac.B
    P, r = B.shape
    scale = max(float(np.abs(Y).max()), 1e-300)

    def D(t):
        return _dual_value(t, Y, T)

    def feasible(t, n_starts=n_random):
        # starts: the 2 P directions nearest to binding at t, the signed output directions, random
        return _price(t, fac, Ps, rng, W[np.argsort(-_binding(W, B, t, Ps))[:2 * P]], n_starts)

    def best_multiple(t):  # at T > 0 the dual is a concave quadratic along the ray
        return _feasible_multiple(t, Y, T, 1.0)

    W = np.asarray(W0, float).reshape(-1, r)
    W = W[np.linalg.norm(W, axis=1) > 0]
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    margin, _ = feasible(t0)
    t_in = best_multiple(t0 / np.sqrt(max(margin, 1.0)))
    best = D(t_in)
    max_atoms = 60 * P if max_atoms is None else max_atoms
    n_verify = 40 * P if n_verify is None else n_verify
    n_solves, upper, V = 0, np.inf, None
    verified = (t_in, -np.inf)
    for it in range(n_iter):
        Phi = np.maximum(W @ B.T, 0.0)
        keep = np.linalg.norm(Phi, axis=1) > 0
        W, Phi = W[keep], Phi[keep]
        t_out, _, V = _restricted_dual(Phi, Y, Ps, T, gap_tol=1e-10 * max(abs(best), scale))
        n_solves += 1
        upper = D(t_out)  # the optimum over the directions W (>= the global minimum)
        stop = min(upper, np.inf if target is None else target)
        done = stop - best <= gap_rtol * abs(stop)
        check = it in (n_iter // 2, (3 * n_iter) // 4)  # verify on the way, too
        if done or check or it == n_iter - 1:
            # the bound stands only if no direction violates t_in: a much wider search
            margin_v, new = feasible(t_in, n_verify)
            t_in = best_multiple(t_in / np.sqrt(max(margin_v, 1.0)))
            best = D(t_in)
            if best > verified[1]:  # the best multiplier that passed a verification search
                verified = (t_in, best)
            if it == n_iter - 1 or (margin_v <= 1.0 + _MARGIN_TOL and done):
                break
            if margin_v > 1.0 + _MARGIN_TOL:
                W = np.vstack([W, np.array(new[:50])])  # missed directions: go on
                if report is not None:
                    report(f"in-out: the verification search found dual margin "
                           f"{margin_v:.9f}; bound lowered to {best:.10g}")
                continue
        # price at a point between the feasible t_in and the restricted optimum t_out
        # (in-out separation): a feasible point raises the bound, an infeasible one yields
        # directions that cut t_out off
        t_mid = t_in + alpha * (t_out - t_in)
        margin, new = feasible(t_mid)
        if margin <= 1.0 + _MARGIN_TOL:
            t_in, best = t_mid, D(t_mid)
        else:
            W = np.vstack([W, np.array(new[:_N_CUTS])])
            cand = best_multiple(t_mid / np.sqrt(margin))
            if D(cand) > best:
                t_in, best = cand, D(cand)
        if len(W) > max_atoms:  # drop the directions farthest from binding at t_out
            W = W[np.argsort(-_binding(W, B, t_out, Ps))[:max_atoms]]
            V = None
        if report is not None:
            report(f"in-out {it + 1}/{n_iter}: bounds [{best:.10g}, {upper:.10g}], "
                   f"{len(W)} directions")
    if V is not None and len(V) != len(W):
        V = None
    return verified[0], verified[1], n_solves, W, V, upper


def _restricted_primal(fac, W, Y, Ps, T, *, V0=None, iters=3000, rtol=1e-13, readouts=False):
    """Upper bound from the directions W (rows, range coordinates of K0 = B B^T): the cost of
    the best network whose neurons point along them, i.e. the group lasso
    ``min sqrt(Ps) sum_j |v_j| + |Phi^T V - Y|^2 / (2T)`` over the readouts V
    (``Phi = relu(W B^T)`` with unit rows w_j; at T = 0 subject to ``Phi^T V = Y``), solved by
    iteratively reweighted least squares (weights ``eta_j = sqrt(Ps) |v_j|``, floored at 1e-12
    of the largest so the Gram matrix stays invertible). A neuron ``z_j = s_j B w_j``,
    ``abar_j = v_j / s_j`` with ``s_j^2 = sqrt(Ps) |v_j|`` costs ``sqrt(Ps) |v_j|`` (balanced,
    notes §5.2). Every IRLS iterate interpolates when any readouts do, so the returned cost is
    that of a feasible network whatever the number of iterations. ``V0`` (rows of W, e.g. the
    barrier readouts of :func:`_restricted_dual`) sets the first weights (a warm start).

    Returns (cost, output residual): at T = 0 the cost is an upper bound on the global minimum
    only when the residual (max-abs of ``Phi^T V - Y``) is at rounding level; if Y is not in the
    span of the features it is not. With ``readouts=True`` also the readouts V (one row per row
    of W; zero for directions without features)."""
    B = fac.B
    W = np.asarray(W, float).reshape(-1, B.shape[1])
    nonzero = np.linalg.norm(W, axis=1) > 0
    Phi = np.maximum((W[nonzero] / np.linalg.norm(W[nonzero], axis=1, keepdims=True)) @ B.T, 0.0)
    used = np.linalg.norm(Phi, axis=1) > 0
    Phi = Phi[used]  # (J, P)
    P = B.shape[0]
    if len(Phi) == 0:
        out = (float("inf"), float(np.abs(Y).max()))
        return out + (np.zeros((len(W), Y.shape[1])),) if readouts else out
    eta = np.ones(len(Phi))
    if V0 is not None and len(V0) == len(W):
        n0 = np.sqrt(Ps) * np.linalg.norm(np.asarray(V0, float)[nonzero][used], axis=1)
        if np.isfinite(n0).all() and n0.max() > 0:
            eta = np.maximum(n0, 1e-12 * n0.max())
    prev = np.inf
    for _ in range(iters):
        G = (Phi.T * (eta / Ps)) @ Phi + T * np.eye(P)
        V = (eta / Ps)[:, None] * (Phi @ np.linalg.lstsq(G, Y, rcond=None)[0])
        norms = np.linalg.norm(V, axis=1)
        cost = float(np.sqrt(Ps) * norms.sum())
        if not np.isfinite(cost) or norms.max() == 0 or abs(prev - cost) <= rtol * cost:
            break
        eta = np.maximum(np.sqrt(Ps) * norms, 1e-12 * np.sqrt(Ps) * norms.max())
        prev = cost
    err = Phi.T @ V - Y
    out = (cost + 0.5 * float(np.sum(err * err)) / T, 0.0) if T > 0 else \
        (cost, float(np.abs(err).max()))
    if readouts:
        full = np.zeros((len(W), Y.shape[1]))
        full[np.flatnonzero(nonzero)[used]] = V
        return out + (full,)
    return out


def _network_point(fac, W, V, Ps, Y, T, out_tol):
    """Neurons of the group-lasso network with directions W (rows, range coordinates; taken as
    unit vectors, as :func:`_restricted_primal` does) and its readouts V: balanced
    neurons ``z_j = s_j B w_j``, ``abar_j = v_j / s_j`` with ``s_j^2 = sqrt(Ps) |v_j|`` (cost
    ``sqrt(Ps) |v_j|`` each, notes §5.2), on the support of the readouts when that network is
    feasible and no dearer. Returns (A, Z, cost), or None when the network does not interpolate
    (T = 0)."""
    W = np.asarray(W, float)
    lengths = np.linalg.norm(W, axis=1)
    # the readouts are for unit directions; rows already unit to rounding are left bit for bit
    # (the solver's compaction of this network follows L-BFGS paths that a 1e-13 change can
    # send elsewhere)
    off = (lengths > 0) & (np.abs(lengths - 1.0) > 1e-12)
    if np.any(off):
        W = W.copy()
        W[off] /= lengths[off, None]
    norms = np.linalg.norm(V, axis=1)
    if norms.size == 0 or norms.max() <= 0:
        return None
    # the support (readouts above 1e-6 of the largest), its readouts solved again on it alone so
    # that the smaller network interpolates exactly; the cheaper of the two networks is kept
    keep = norms > 1e-6 * norms.max()
    cost_k, res_k, V_k = _restricted_primal(fac, W[keep], Y, Ps, T, V0=V[keep], readouts=True)
    cost_all = np.sqrt(Ps) * float(norms.sum())
    if res_k <= out_tol and (T > 0 or cost_k <= cost_all * (1 + 1e-9)):
        W, V, norms = W[keep], V_k, np.linalg.norm(V_k, axis=1)
    keep = norms > 0
    s = np.sqrt(np.sqrt(Ps) * norms[keep])
    A = V[keep] / s[:, None]
    Z = (s[:, None] * W[keep]) @ fac.B.T
    err = np.maximum(Z, 0.0).T @ A - Y
    cost = 0.5 * (Ps * float(np.sum(A * A)) + float(np.sum(Z * (Z @ fac.pinv))))
    if T > 0:
        return A, Z, cost + 0.5 * float(np.sum(err * err)) / T
    return (A, Z, cost) if float(np.abs(err).max()) <= out_tol else None
