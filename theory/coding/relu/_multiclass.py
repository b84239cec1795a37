"""Multi-class outliers of the ReLU toy (notes §5.2 [RECON], generalised [OURS]).

The toy problem is the convex ``min_t g_t(a_0(t)) - sum_c rho_c t_c . y_c`` subject to
``lambda*(t) = max_{|u|=1} sum_c rho_c relu(t_c . u)^2 <= 1``. Where the single-class
constraints ``rho_c |t_c|^2 <= 1`` do not suffice (e.g. y- = +1/2: the single-class solution has
lambda* = 1.048), the optimum has marginal directions u that are active on several classes.

An outlier along the unit direction u (active classes S = {c : t_c . u > 0}) has readout
``abar = r u`` and class preactivations ``zbar_c = r relu(t_c . u)``: the stationarity
``abar = sum_c rho_c t_c zbar_c`` makes u an eigenvector of ``M_S = sum_{c in S} rho_c t_c t_c^T``
with eigenvalue 1 (marginality, log-weight 0). Its output on class c is ``s relu(t_c . u) u``
with ``s = r^2``. The KKT system for a set of outlier types {S_j}:

    a_0 = sum_c rho_c t_c M(t_c . a_0)                              (bulk stationarity, m)
    y_c = a_0 M(t_c . a_0) + sum_j s_j relu(t_c . u_j) u_j            (output, k m)
    M_{S_j} u_j = u_j,  |u_j| = 1                                    (marginality, m + 1 each)

is square in (t, a_0, u_j, s_j). It is a global optimum iff s_j >= 0, every u_j lies in its
cone (active set exactly S_j), lambda*(t) <= 1 and a_0 is the global maximum of g (convexity).
t and a_0 are unique; the outlier measure need not be: at the optimum several outlier types
can be marginal at once. With y- = +1/2 on Fig. 2's classes the t_c come out mutually
orthogonal with rho_c |t_c|^2 = 1, so every direction in the positive cone of the t_c is
marginal; only Q = sum_j s_j u_j u_j^T (hence the outputs and the outlier feature kernel
t_c^T Q t_c') is fixed, and any non-negative decomposition of Q is a solution. The solver
reports the first valid set of types (fewest types, in class-subset order) and says when other
types are marginal too.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy import optimize

from ..._numerics import _newton_lstsq

__all__: list[str] = []

# candidate outlier types: class subsets S whose M_S has its top eigenvalue above this at the
# barrier solution (an outer approximation of the final marginal set)
CANDIDATE_LEVEL = 1.0 - 2e-2
# at most this many combinations of candidate types are tried for the exact KKT solve
MAX_COMBINATIONS = 4096


def _class_subsets(k):
    """All non-empty class subsets S as tuples, smallest first."""
    return [S for n in range(1, k + 1) for S in itertools.combinations(range(k), n)]


def _face_matrix(t, rho, S):
    """``M_S = sum_{c in S} rho_c t_c t_c^T``."""
    S = list(S)
    return (t[S].T * rho[S]) @ t[S]


def _face_mask(faces, k):
    """(n, k): 1 on the classes of each face S_j."""
    mask = np.zeros((len(faces), k))
    for j, S in enumerate(faces):
        mask[j, list(S)] = 1.0
    return mask


def _face_directions(t, rho):
    """(S, u) for every class subset S and every unit eigenvector u of M_S, both signs: the
    candidates for the maximiser of ``sum_c rho_c relu(t_c . u)^2`` on the sphere, which is an
    eigenvector of M_S for its own active set S."""
    for S in _class_subsets(t.shape[0]):
        for v in np.linalg.eigh(_face_matrix(t, rho, S))[1].T:
            yield S, v
            yield S, -v


def _cone_faces(t, rho, level):
    """All (S, u, f): u a unit eigenvector of M_S whose active set {c : t_c . u > 0} is exactly S,
    with f = sum_c rho_c relu(t_c . u)^2 >= level (f is then the eigenvalue)."""
    out = []
    for S, u in _face_directions(t, rho):
        h = t @ u
        if set(np.flatnonzero(h > 1e-9).tolist()) != set(S):
            continue
        f = float(np.sum(rho * np.maximum(h, 0.0) ** 2))
        if f >= level:
            out.append((S, u, f))
    return out


def _unpack(x, k, m, n):
    t = x[: k * m].reshape(k, m)
    a0 = x[k * m: k * m + m]
    rest = x[k * m + m:].reshape(n, m + 1)
    return t, a0, rest[:, :m], rest[:, m]


def _outlier_outputs(t, U, s, faces):
    """(k, m): sum_j s_j relu(t_c . u_j) u_j restricted to the face S_j."""
    out = np.zeros((t.shape[0], U.shape[1] if U.size else t.shape[1]))
    for j, mask in enumerate(_face_mask(faces, t.shape[0])):
        out += s[j] * (mask * (t @ U[j]))[:, None] * U[j][None, :]
    return out


def _kkt(x, neuron, Yc, faces):
    k, m, rho = neuron.k, neuron.m, neuron.rho
    t, a0, U, s = _unpack(x, k, m, len(faces))
    M = neuron.psi((t @ a0)[None, :])[1][0]
    parts = [a0 - (rho * M) @ t,
             (Yc - M[:, None] * a0[None, :] - _outlier_outputs(t, U, s, faces)).ravel()]
    for j, S in enumerate(faces):
        parts.append(_face_matrix(t, rho, S) @ U[j] - U[j])
        parts.append([U[j] @ U[j] - 1.0])
    return np.concatenate(parts)


def _start(neuron, t, a0, faces, Yc):
    rho = neuron.rho
    U = []
    for S in faces:
        u = np.linalg.eigh(_face_matrix(t, rho, S))[1][:, -1]
        U.append(u if np.sum(t[list(S)] @ u) >= 0 else -u)
    U = np.array(U)
    M = neuron.psi((t @ a0)[None, :])[1][0]
    R = (Yc - M[:, None] * a0[None, :]).ravel()
    B = np.stack([_outlier_outputs(t, U[j:j + 1], np.ones(1), [S]).ravel()
                  for j, S in enumerate(faces)], axis=1)
    s = np.linalg.lstsq(B, R, rcond=None)[0]
    return np.concatenate([t.ravel(), a0] + [np.append(U[j], s[j]) for j in range(len(faces))])


def _barrier_minimise(neuron, Yc, log_slack, bulk_max, mus):
    """Log-barrier interior point for ``min_t g_t(a_0(t)) - sum_c rho_c t_c . y_c`` on a convex
    feasible set: BFGS on the objective ``- mu log_slack(t)`` for each barrier weight mu in turn.
    ``log_slack(t)`` returns (value, gradient (k, m)) inside the set and None outside; g is
    maximised by ``bulk_max`` (a t where g has no maximum is rejected). Returns (t, the last
    bulk maximiser, BFGS iterations)."""
    k, m, rho = neuron.k, neuron.m, neuron.rho
    state = {"a": np.zeros(m)}

    def obj(x, mu):
        t = x.reshape(k, m)
        slack = log_slack(t)
        if slack is None:
            return np.inf, np.zeros_like(x)
        found = bulk_max(neuron, t, state["a"])
        if found is None:
            return np.inf, np.zeros_like(x)
        A, g, _ = found
        a0 = A[0]
        state["a"] = a0
        M = neuron.psi((t @ a0)[None, :])[1][0]
        val = g[0] - np.sum(rho * np.sum(t * Yc, axis=1)) - mu * slack[0]
        grad = rho[:, None] * (M[:, None] * a0[None, :] - Yc) - mu * slack[1]
        return val, grad.ravel()

    x = np.zeros(k * m)
    nit = 0
    for mu in mus:
        res = optimize.minimize(obj, x, args=(mu,), jac=True, method="BFGS",
                                options={"gtol": 1e-10, "maxiter": 2000})
        x, nit = res.x, nit + int(res.nit)
    return x.reshape(k, m), state["a"], nit


def _stability_slack(stability, rho):
    """log(1 - lambda*(t)) and its gradient (the exact stability constraint lambda* <= 1)."""
    def log_slack(t):
        lam, u = stability(t, rho)
        if lam >= 1.0:
            return None
        dlam = 2.0 * rho[:, None] * np.maximum(t @ u, 0.0)[:, None] * u[None, :]
        return np.log(1.0 - lam), -dlam / (1.0 - lam)
    return log_slack


def _solve_multiclass(neuron, Yc, tol, bulk_max, stability, mus):
    """The toy optimum with outliers of any class pattern. Returns a dict (t, a0, the outliers'
    unit directions U, readouts abar and class preactivations zbar, kkt_residual, nit, null =
    the number of further marginal outlier types, n_tried) or None when no valid KKT point was
    found."""
    k, m, rho = neuron.k, neuron.m, neuron.rho
    t_b, a_b, nit = _barrier_minimise(neuron, Yc, _stability_slack(stability, rho),
                                      bulk_max, mus)
    # candidate types: every class subset whose M_S reaches the level (the cone condition is
    # imposed on the exact solution only: near the optimum directions sit on cone boundaries)
    cands = [S for S in _class_subsets(k)
             if np.linalg.eigvalsh(_face_matrix(t_b, rho, S))[-1] >= CANDIDATE_LEVEL]
    tried = 0
    for size in range(1, len(cands) + 1):
        for faces in itertools.combinations(cands, size):
            tried += 1
            if tried > MAX_COMBINATIONS:
                return None
            x0 = _start(neuron, t_b, a_b, faces, Yc)
            sol = optimize.root(_kkt, x0, args=(neuron, Yc, faces), method="hybr",
                                options={"xtol": 1e-14})
            nit += int(sol.nfev)
            x = sol.x
            r0 = np.max(np.abs(_kkt(x, neuron, Yc, faces)))
            if r0 > 1e-4:  # not this set of types (a polish cannot help)
                continue
            if r0 > tol:
                def fun(z, faces=faces):
                    F = _kkt(z, neuron, Yc, faces)
                    J = optimize.approx_fprime(z, lambda w: _kkt(w, neuron, Yc, faces), 1e-7)
                    return F, J
                x, _, _ = _newton_lstsq(fun, x, tol)
            F = _kkt(x, neuron, Yc, faces)
            if not np.max(np.abs(F)) <= tol:
                continue
            t, a0, U, s = _unpack(x, k, m, len(faces))
            in_cone = all(set(np.flatnonzero(t @ U[j] > 1e-9).tolist()) == set(S)
                          for j, S in enumerate(faces))
            if s.min() < -1e-9 or not in_cone or stability(t, rho)[0] > 1.0 + 1e-8:
                continue
            # other outlier types marginal at the optimum: the split is then not unique
            marginal = {S for S, _u, _f in _cone_faces(t, rho, 1.0 - 1e-7)} | set(faces)
            keep = s > 1e-12
            r = np.sqrt(s[keep])
            U = U[keep]
            # the outliers: readouts r u and class preactivations r relu(t_c . u) on the face
            zbar = r[:, None] * np.maximum(U @ t.T, 0.0) * _face_mask(faces, k)[keep]
            return dict(t=t, a0=a0, U=U, abar=r[:, None] * U, zbar=zbar,
                        kkt_residual=float(np.max(np.abs(F))), nit=nit,
                        null=len(marginal) - len(faces), n_tried=tried)
    return None
