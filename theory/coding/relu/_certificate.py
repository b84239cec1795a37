"""Dual certificate of the outlier-only ReLU theory: a multiplier t that proves a KKT point
globally optimal, or a proof that none exists (seed 000, notes §5.2 last bullet [RECON]).

Source: A. van Meegen & H. Sompolinsky, *Coding schemes in neural networks learning
classification tasks*, Nat. Commun. 16, 3354 (2025) (seed 000), main text "Sparse coding
scheme"; the convex (atomic-norm) form of the outlier problem is the reconstruction in
:mod:`._relu_outliers`.

At T = 0 the multiplier of a KKT point is not unique. The KKT conditions fix t only through

    P a_i = t^T relu(z_i)                       (readout stationarity, m equations per neuron)
    w_i = B^T h_i,  h_i = g_i o (t a_i)         (preactivation stationarity, z_i = B w_i)

where g_i is 1 on the positive entries of z_i, 0 on the negative ones and a subgradient
theta in [0, 1] on the zero ones. Writing u_i = theta o (t a_i) on the zero entries, these are
linear in (t, u), with the inequalities ``0 <= sigma u <= sigma (t a_i)`` (sigma the sign of
u, or of t a_i where u = 0 is not fixed by the equalities; for a positive-definite K0 the
equalities fix u = K0^-1 z on the zero entries, and where that is 0, theta = 0 leaves t a
free). Strong duality holds (t = 0 is strictly dual feasible), so the point is a global
minimum iff some (t, u) in that polyhedron satisfies the dual bound
``|t^T relu(B w)|^2 <= P |w|^2`` for every w, i.e. iff

    min_{(t, u) feasible} max_{|w| = 1} |t^T relu(B w)|^2 / P  <=  1.

That min-max is convex in (t, u). It is solved by cutting planes: the inner maximum is
evaluated by the multi-start search :func:`_local_maxima` (which returns every distinct
local maximiser it finds); the outer minimum over the cuts collected so far is a
small smooth convex program (SLSQP on the null space of the equalities). The cut value is a
lower bound on the min-max: once it exceeds 1, no multiplier consistent with the point is
dual feasible, which proves the point is *not* the global minimum (the cut directions are
returned).

Also here: the dual-margin search (:func:`_pricing`, :func:`_local_maxima`) and the weak-duality
lower bound (:func:`_dual_lower_bound`) that every result reports.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from ._search import _batched_local_maxima

__all__: list[str] = []


def _dual_lower_bound(t, Y, T, margin):
    """Weak-duality lower bound on the minimum cost from any multiplier t (notes §5.2 [RECON]).

    The dual of the outlier problem is ``max_t tr(t^T Y) - (T/2)|t|^2`` subject to
    ``|t^T relu(z)|^2 <= P z^T K0^+ z`` for every z in the range of K0 (at T > 0 the squared
    error ``|F - Y|^2/(2T)`` is ``max_t tr(t^T (Y - F)) - (T/2)|t|^2``). With ``margin`` the
    largest ratio of the two sides, ``s t`` is feasible for ``0 <= s <= 1/sqrt(margin)``; the
    bound is the dual objective at the best such s. At a certified point (margin 1) it equals
    the cost."""
    ts = _feasible_multiple(t, Y, T, margin)
    return float(np.sum(ts * Y)) - 0.5 * T * float(np.sum(ts * ts))


def _feasible_multiple(t, Y, T, margin):
    """The dual-feasible multiple ``s t`` of :func:`_dual_lower_bound` (its bound's multiplier)."""
    tY = float(np.sum(t * Y))
    tt = float(np.sum(t * t))
    s = 1.0 / np.sqrt(margin) if margin > 0 else 1.0
    if T > 0 and tt > 0:
        s = min(s, max(tY, 0.0) / (T * tt))
    return s * t


def _pricing(t, fac, Ps, rng, W_known, n_random):
    """Dual margin ``max_z |t^T relu(z)|^2 / (Ps z^T K0^+ z)`` over z = B w in the range of K0
    (:func:`_local_maxima`). Returns (margin, maximiser w with |w| = 1), (0, None) if no start
    gave a positive ratio."""
    found = _local_maxima(t, fac, Ps, rng, W_known, n_random)
    return found[0] if found else (0.0, None)


def _local_maxima(t, fac, Ps, rng, W_known, n_random):
    """Distinct local maxima of the dual ratio ``|t^T relu(B w)|^2 / (Ps |w|^2)`` found from the
    known neurons, from the signed output directions of t (projected onto the range) and from
    ``n_random`` random starts (``fac``: :class:`._relu_factor._Factor`), all maximised by
    :func:`._relu_search._batched_local_maxima` (compiled L-BFGS, then the exact face polish).
    Returns a list of (margin, w with |w| = 1), largest first; maximisers closer than 1e-6
    count once."""
    return _batched_local_maxima(_starts(t, fac, rng, W_known, n_random), fac.B, t, Ps)


def _starts(t, fac, rng, W_known, n_random):
    """Starting directions of :func:`_local_maxima`, rows of an (S, r) array."""
    m = t.shape[1]
    starts = [w for w in W_known if np.linalg.norm(w) > 0]
    K0 = fac.B @ fac.B.T
    for k in range(m):
        for sgn in (1.0, -1.0):
            h = sgn * t[:, k]
            for u in (np.maximum(h, 0.0), K0 @ np.maximum(h, 0.0)):
                if np.any(u > 0):
                    w = fac.to_w(u)[0]  # coordinates of the projection of u onto the range
                    if np.linalg.norm(w) > 0:
                        starts.append(w)
    starts += list(rng.standard_normal((n_random, fac.r)))
    return np.array(starts, dtype=float).reshape(len(starts), fac.r)


@dataclass(frozen=True)
class _Certificate:
    """Result of :func:`_certify_kkt_point`.

    t : (P, m)        the multiplier with the smallest dual margin found.
    margin : float    its dual margin (search over directions); <= 1 + tol certifies.
    cut_bound : float min over multipliers of the max over the cut directions: a lower bound on
                      the best achievable margin (> 1 proves the point is not a global minimum).
    rounds : int      cutting-plane rounds used.
    n_cuts : int      directions in the final cut set.
    free_dims : int   dimension of the set of multipliers consistent with the KKT point.
    exact : bool      the polyhedron is the whole set of consistent multipliers (always for a
                      positive-definite K0); only then does ``cut_bound`` > 1 prove that the
                      point is not a global minimum (and only if SLSQP reported convergence).
    cuts : (J, r)     the cut directions (unit w, z = B w).
    polyhedron        (x0, N, G) of :func:`_multiplier_polyhedron`.
    """

    t: np.ndarray
    margin: float
    cut_bound: float
    rounds: int
    n_cuts: int
    free_dims: int
    exact: bool
    cuts: np.ndarray
    polyhedron: tuple


def _multiplier_polyhedron(t0, A, Z, fac, zero_tol, theta0):
    """Linear description of the multipliers (t, u) consistent with the KKT point (A, Z):
    the point x0 = (t0, u0), an orthonormal basis N of the null space of the equalities, and the
    inequalities ``G x >= 0`` (x = (t, u) flattened), and whether the description is exact."""
    P, m = t0.shape
    B = fac.B
    n, r = Z.shape[0], B.shape[1]
    at0 = np.abs(Z) <= zero_tol
    pos = (Z > 0) & ~at0
    zi, zmu = np.nonzero(at0)
    nz = zi.size
    TA0 = A @ t0.T
    u0 = theta0[zi, zmu] * TA0[zi, zmu]
    nv = P * m + nz
    R = np.maximum(Z, 0.0)
    rows = []
    for i in range(n):
        blk = np.zeros((m, P, m))
        blk[np.arange(m), :, np.arange(m)] = R[i]
        rows.append(np.hstack([blk.reshape(m, P * m), np.zeros((m, nz))]))
        # d (B^T (pos_i o (t a_i)))_k / d t_{mu, q} = B_{mu k} pos_{i mu} a_{i q}
        Mt = ((B * pos[i][:, None])[:, :, None] * A[i][None, None, :]).transpose(1, 0, 2)
        Mu = np.zeros((r, nz))
        sel = np.flatnonzero(zi == i)
        Mu[:, sel] = B[zmu[sel]].T
        rows.append(np.hstack([Mt.reshape(r, P * m), Mu]))
    M = np.vstack(rows)
    _, s, Vt = np.linalg.svd(M)
    rank = int(np.sum(s > 1e-10 * s[0])) if s.size else 0
    N = Vt[rank:].T
    # u = theta (t a) with theta in [0, 1]: u and t a share a sign and |t a| >= |u|. A nonzero
    # u0 fixes that sign. Where u0 = 0 and u is pinned by the equalities (a positive-definite
    # K0: u = (K0^-1 z)_mu), theta = 0 leaves t a free and no inequality is needed; where u is
    # free (singular K0) the sign of t0 a is imposed, a convex restriction of the true
    # (non-convex) set, and the description is then not exact.
    x0 = np.concatenate([t0.ravel(), u0])
    scale = max(float(np.max(np.abs(u0), initial=0.0)), float(np.max(np.abs(TA0))), 1e-300)
    nonzero = np.abs(u0) > 1e-9 * scale
    pinned = np.linalg.norm(N[P * m:], axis=1) <= 1e-9 if N.size else np.ones(nz, bool)
    exact = bool(np.all(nonzero | pinned))
    sig = np.where(nonzero, np.sign(u0), np.sign(TA0[zi, zmu]))
    sig[sig == 0] = 1.0
    keep = np.flatnonzero(nonzero | ~pinned)
    G = np.zeros((2 * keep.size, nv))
    for j, k in enumerate(keep):
        G[j, P * m + k] = sig[k]
        blk = np.zeros((P, m))
        blk[zmu[k]] = A[zi[k]]
        G[keep.size + j, : P * m] = sig[k] * blk.ravel()
        G[keep.size + j, P * m + k] = -sig[k]
    return x0, N, G, exact


def _min_max_over_cuts(x0, N, G, Phi, P, m, Ps, y0, tau0):
    """min over y of max_j |t(y)^T Phi_j|^2 / Ps subject to G (x0 + N y) >= 0, with
    t(y) = (x0 + N y)[:P m]; SLSQP from (y0, tau0). Returns (y, value, whether SLSQP reported
    convergence)."""
    d = N.shape[1]
    Nt = N[: P * m].reshape(P, m, d)
    V0 = Phi.T @ x0[: P * m].reshape(P, m)  # (J, m)
    D = np.einsum("pj,pmd->jmd", Phi, Nt)  # (J, m, d)
    GN, g0 = G @ N, G @ x0

    def values(z):
        return V0 + np.einsum("jmd,d->jm", D, z[:-1])

    def con(z):
        v = values(z)
        return np.concatenate([z[-1] - np.sum(v * v, axis=1) / Ps, GN @ z[:-1] + g0])

    def jac(z):
        v = values(z)
        top = np.hstack([-2.0 * np.einsum("jm,jmd->jd", v, D) / Ps, np.ones((v.shape[0], 1))])
        return np.vstack([top, np.hstack([GN, np.zeros((GN.shape[0], 1))])])

    res = optimize.minimize(lambda z: (z[-1], np.r_[np.zeros(d), 1.0]), np.r_[y0, tau0],
                            jac=True, method="SLSQP",
                            constraints=[{"type": "ineq", "fun": con, "jac": jac}],
                            options={"maxiter": 1000, "ftol": 1e-15})
    v = values(res.x)
    return res.x[:-1], float(np.max(np.sum(v * v, axis=1)) / Ps), bool(res.success)


def _certify_kkt_point(t0, A, Z, fac, Ps, pricing, *, theta0, zero_tol, tol=1e-6,
                       max_rounds=30, cuts_per_round=10, verify=None):
    """Cutting-plane search for a multiplier that certifies the KKT point (A, Z) (module
    docstring). ``pricing(t, W_known)`` returns the distinct local maxima of the dual ratio as
    a list of (margin, w) sorted by margin (:func:`_local_maxima`). ``verify`` (same call) is a
    wider search run on a multiplier that ``pricing`` finds within ``1 + tol``: what it finds
    above that becomes cuts and the rounds go on, so a certificate rests on the wider search
    (a search of a few dozen starts certified points that one of 40 P starts refutes)."""
    P, m = t0.shape
    x0, N, G, exact = _multiplier_polyhedron(t0, A, Z, fac, zero_tol, theta0)
    W = fac.to_w(Z)
    cuts = list(W / np.linalg.norm(W, axis=1, keepdims=True))
    y = np.zeros(N.shape[1])
    best_t, best_margin = t0, np.inf
    bound = 0.0
    rounds = 0
    last = []
    while rounds < max_rounds:
        rounds += 1
        t = (x0 + N @ y)[: P * m].reshape(P, m)
        # starts: the neurons and the last round's cuts (not all cuts: the search stays cheap)
        found = pricing(t, np.array(cuts[: W.shape[0]] + last))
        margin = found[0][0] if found else 0.0
        if margin <= 1.0 + tol and verify is not None:
            wide = verify(t, np.array(cuts))
            if wide and wide[0][0] > margin:
                found, margin = wide, wide[0][0]
        if margin < best_margin:
            best_t, best_margin = t, margin
        if margin <= 1.0 + tol or N.shape[1] == 0:
            break
        new = [w for val, w in found if val > 1.0 + tol][:cuts_per_round]
        cuts += new
        last = new
        Phi = np.maximum(fac.B @ np.array(cuts).T, 0.0)
        y, bound, solved = _min_max_over_cuts(x0, N, G, Phi, P, m, Ps, y, margin * 1.01)
        if bound > 1.0 + tol:  # no consistent multiplier satisfies even the cuts
            exact = exact and solved  # a proof only if the convex min-max was solved
            break
    return _Certificate(t=best_t, margin=float(best_margin), cut_bound=float(bound),
                        rounds=rounds, n_cuts=len(cuts), free_dims=int(N.shape[1]),
                        exact=exact, cuts=np.array(cuts),
                        polyhedron=(x0, N, G))


def _reprice_lower(fac, Ps, Y, T, multipliers, W_known, feasible_Z, rng, n_random):
    """The best weak-duality lower bound (:func:`_dual_lower_bound`) over
    ``multipliers``, each priced by the search from the known directions and the neurons of
    the feasible networks (``feasible_Z``: their preactivations; if a multiplier's dual value
    exceeds such a network's cost, one of its neurons violates the dual bound, by weak
    duality). Returns (bound, the feasible multiple of its multiplier)."""
    W = np.vstack([W_known] + [fac.to_w(Zf) for Zf in feasible_Z])
    best, t_best = -np.inf, None
    for t in multipliers:
        margin, _ = _pricing(t, fac, Ps, rng, W, n_random)
        bound = _dual_lower_bound(t, Y, T, margin)
        if bound > best:
            best, t_best = bound, _feasible_multiple(t, Y, T, margin)
    return float(best), t_best
