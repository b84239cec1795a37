"""KKT machinery of the outlier-only ReLU theory (seed 000, notes §5.2 last bullet [RECON]):
the stationarity and output equations at a fixed sign pattern, their least-squares Newton solve
(:func:`_polish`), the residuals, and the pruning and merging of neurons.

Source: A. van Meegen & H. Sompolinsky, *Coding schemes in neural networks learning
classification tasks*, Nat. Commun. 16, 3354 (2025) (seed 000), main text "Sparse coding
scheme". The problem (minimum-norm interpolation ``min sum_i [Ps |abar_i|^2 + zbar_i^T K0^+
zbar_i]/2`` subject to ``sum_i abar_i relu(zbar_i)^T = Y^T``, multiplier t) is stated in
:mod:`._relu_outliers`; ``fac`` is its :class:`._relu_factor._Factor` of K0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from ..._numerics import _newton_lstsq, iterate
from ..._results import Status


def _kkt_pattern(x, n, m, fac, Ps, Y, T, pos, zero):
    """KKT system of the outlier problem with a fixed sign pattern of the preactivations.

    x = [t (P m), A (n m), V (n P)]; z_i,mu = V_i,mu on ``pos`` (> 0) and on the negative set,
    z_i,mu = 0 on ``zero``, where V_i,mu is instead the subgradient theta in [0, 1] of relu at 0.
    Equations: Ps a_i = t^T relu(z_i); ``z_i M = h_i E`` with h_i = g_i o (t a_i),
    g = Theta(z) (theta on the zero set), ``M = K0^+ + N N^T`` and ``E = I - N N^T`` (the
    projector onto the range of K0): on the range ``K0^+ z_i = Pi h_i``, i.e. ``z_i = K0 h_i``
    (the stationarity ``w_i = B^T h_i`` in range coordinates), and ``z_i N = 0``; for a
    positive-definite K0 this is ``K0^-1 z_i = h_i``. sum_i relu(z_i) a_i^T = Y - T t.
    Returns (F, J) with the analytic Jacobian.
    """
    M, E = fac.M, fac.E
    P = M.shape[0]
    it, ia, iv = 0, P * m, P * m + n * m
    t = x[:ia].reshape(P, m)
    A = x[ia:iv].reshape(n, m)
    V = x[iv:].reshape(n, P)
    posf = pos.astype(float)
    zerof = zero.astype(float)
    Z = V * (1.0 - zerof)
    R = V * posf
    G = posf + zerof * V
    TA = A @ t.T  # (n, P)
    F1 = Ps * A - R @ t
    F2 = Z @ M - (G * TA) @ E.T
    F3 = R.T @ A - Y + T * t
    F = np.concatenate([F1.ravel(), F2.ravel(), F3.ravel()])
    Nx = x.size
    J = np.zeros((Nx, Nx))
    r1, r2, r3 = 0, n * m, n * m + n * P
    Im = np.eye(m)
    idx = np.arange(P)
    for i in range(n):
        rows1 = slice(r1 + i * m, r1 + (i + 1) * m)
        J[rows1, ia + i * m: ia + (i + 1) * m] = Ps * Im
        J[rows1, it:ia] = -np.kron(R[i], Im)
        J[rows1, iv + i * P: iv + (i + 1) * P] = -(t * posf[i][:, None]).T
        rows2 = slice(r2 + i * P, r2 + (i + 1) * P)
        J[rows2, iv + i * P: iv + (i + 1) * P] = (M * (1.0 - zerof[i])[:, None]).T \
            - E * (zerof[i] * TA[i])[None, :]
        J[rows2, ia + i * m: ia + (i + 1) * m] = -E @ (G[i][:, None] * t)
        # d h_i,mu / d t_mu,r = G_i,mu A_i,r
        J[rows2, it:ia] = -((E * G[i][None, :])[:, :, None] * A[i][None, None, :]).reshape(P, P * m)
        J[r3:, ia + i * m: ia + (i + 1) * m] = np.kron(R[i][:, None], Im)
        blk3 = np.zeros((P, m, P))
        blk3[idx, :, idx] = posf[i][:, None] * A[i][None, :]
        J[r3:, iv + i * P: iv + (i + 1) * P] = blk3.reshape(P * m, P)
    J[r3:, it:ia] += T * np.eye(P * m)
    return F, J


def _subgradient(Z, A, t, fac, at0):
    """Best relu subgradient on the zero entries ``at0`` and the z-stationarity residual
    ``K0^+ z_i - Pi h_i`` (Pi: projector onto the range of K0), h_i = g_i o (t a_i) with g = 1
    where z > 0 (not at0), 0 where z < 0 and theta in [0, 1] at0, theta minimising the residual
    (bounded least squares). For a positive-definite K0 the entries decouple: theta is
    ``(K0^-1 z)_mu / (t a_i)_mu`` clipped to [0, 1], and the residual on a zero entry is the
    distance of ``(K0^-1 z)_mu`` to the interval between 0 and ``(t a_i)_mu``.
    Returns (theta (n, P), zero off at0; residuals (n, P))."""
    TA = A @ t.T
    S = Z @ fac.pinv
    g = ((Z > 0) & ~at0).astype(float)
    if not fac.singular:
        theta = np.clip(np.divide(S, TA, out=np.zeros_like(S), where=np.abs(TA) > 0), 0.0, 1.0)
        theta = np.where(at0, theta, 0.0)
        return theta, S - (g + theta) * TA
    theta = np.zeros_like(Z)
    res = S - (g * TA) @ fac.proj
    for i in range(Z.shape[0]):
        j = np.flatnonzero(at0[i] & (TA[i] != 0.0))
        if j.size:
            C = fac.proj[:, j] * TA[i, j]  # (P, k): d(Pi h_i)/d theta
            sol = optimize.lsq_linear(C, res[i], bounds=(0.0, 1.0), method="bvls", tol=1e-14)
            theta[i, j] = sol.x
            res[i] = res[i] - C @ sol.x
    return theta, res


def _kkt_residuals(t, A, Z, fac, Ps, Y, T, zero_tol):
    """Max-abs KKT residuals of a candidate, with the relu subgradient at z = 0 (entries with
    |z| <= zero_tol): "stationarity_z" is the residual of ``K0^+ z_i = Pi h_i`` with the best
    subgradient in [0, 1] (:func:`_subgradient`) and, for a singular K0, of ``z_i N = 0``
    (z_i in the range of K0)."""
    R = np.maximum(Z, 0.0)
    _, r_z = _subgradient(Z, A, t, fac, np.abs(Z) <= zero_tol)
    r_range = Z @ fac.N
    return {
        "stationarity_a": float(np.max(np.abs(Ps * A - R @ t), initial=0.0)),
        "stationarity_z": float(max(np.max(np.abs(r_z), initial=0.0),
                                    np.max(np.abs(r_range), initial=0.0))),
        "output": float(np.max(np.abs(R.T @ A - Y + T * t))),
    }


def _polish(t, A, Z, fac, Ps, Y, T, tol, zero_rel=1e-5, rounds=8):
    """Exact KKT solve by (least-squares) Newton at a fixed sign pattern; entries that leave
    their sign class are moved (active-set style) and the solve is repeated, at most ``rounds``
    times (the loop is :func:`richlazy.theory._numerics.iterate` over :func:`_polish_round`).
    Returns (t, A, Z, nfev)."""
    scale = np.max(np.abs(Z), axis=1, keepdims=True)
    zero = np.abs(Z) <= zero_rel * scale
    st = _PolishState(t=t, A=A, Z=Z, zero=zero, pos=(Z > 0) & ~zero)
    st = iterate(st, lambda s, _it: _polish_round(s, fac, Ps, Y, T, tol), maxiter=rounds).state
    return st.t, st.A, st.Z, st.nfev


@dataclass
class _PolishState:
    """Candidate of :func:`_polish`: readout field t, readouts A, preactivations Z, the sign
    pattern (``zero``: z = 0 with a subgradient; ``pos``: z > 0; the rest z < 0) and the KKT
    evaluations so far."""

    t: np.ndarray
    A: np.ndarray
    Z: np.ndarray
    zero: np.ndarray
    pos: np.ndarray
    nfev: int = 0


def _polish_round(st, fac, Ps, Y, T, tol):
    """One round of :func:`_polish` (state updated in place): Newton on the KKT system at the
    current sign pattern from the best subgradient; SUCCESS when every entry stays in its sign
    class (subgradients in [0, 1]), else the entries that left are moved and nudged off zero."""
    n, P = st.Z.shape
    m = st.A.shape[1]
    pos, zero = st.pos, st.zero
    theta = _subgradient(st.Z, st.A, st.t, fac, zero)[0]
    V = np.where(zero, theta, st.Z)
    x = np.concatenate([st.t.ravel(), st.A.ravel(), V.ravel()])

    def fun(v):
        return _kkt_pattern(v, n, m, fac, Ps, Y, T, pos, zero)
    x, res, k = _newton_lstsq(fun, x, tol)
    st.nfev += k
    st.t = x[: P * m].reshape(P, m)
    st.A = x[P * m: P * m + n * m].reshape(n, m)
    V = x[P * m + n * m:].reshape(n, P)
    st.Z = np.where(zero, 0.0, V)
    bad_pos = pos & (V <= 0)
    bad_neg = ~pos & ~zero & (V >= 0)
    bad_zero_hi = zero & (V > 1.0 + 1e-9)
    bad_zero_lo = zero & (V < -1e-9)
    if not (bad_pos.any() or bad_neg.any() or bad_zero_hi.any() or bad_zero_lo.any()):
        return st, Status.SUCCESS
    st.zero = (zero | bad_pos | bad_neg) & ~bad_zero_hi & ~bad_zero_lo
    st.pos = (pos & ~bad_pos) | bad_zero_hi
    tiny = 1e-8 * np.max(np.abs(st.Z))
    st.Z = np.where(bad_zero_hi, tiny, np.where(bad_zero_lo, -tiny, st.Z))
    return st, None


def _prune_merge(A, Z, Ps, K0pinv, rel=1e-6):
    w = np.linalg.norm(A, axis=1) * np.linalg.norm(np.maximum(Z, 0.0), axis=1)
    keep = w > rel * max(w.max(), 1e-300)
    return _merge_parallel(A[keep], Z[keep], Ps, K0pinv)


def _merge_parallel(A, Z, Ps, K0pinv, tol=1e-4):
    """Merge neurons with the same active pattern direction (relu(z) parallel): the pair is
    replaced by one balanced neuron with the same output contribution."""
    R = np.maximum(Z, 0.0)
    used = np.zeros(A.shape[0], bool)
    outA, outZ = [], []
    for i in range(A.shape[0]):
        if used[i]:
            continue
        ri = R[i] / np.linalg.norm(R[i])
        group = [i]
        for j in range(i + 1, A.shape[0]):
            if not used[j]:
                rj = R[j] / np.linalg.norm(R[j])
                if np.max(np.abs(ri - rj)) < tol:
                    group.append(j)
        used[group] = True
        # contribution sum_j a_j |r_j| r_hat^T; keep z direction of the largest member
        c = sum(A[j] * np.linalg.norm(R[j]) for j in group)
        j0 = max(group, key=lambda j: np.linalg.norm(A[j]) * np.linalg.norm(R[j]))
        zhat = Z[j0] / np.linalg.norm(R[j0])
        # balance: Ps |a|^2 = s^2 zhat^T K0^+ zhat with a = c / s
        q = float(zhat @ K0pinv @ zhat)
        s = (Ps * (c @ c) / q) ** 0.25
        outA.append(c / s)
        outZ.append(s * zhat)
    return np.array(outA), np.array(outZ)
