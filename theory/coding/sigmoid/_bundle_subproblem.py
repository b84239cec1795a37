"""The restricted problem of the proximal bundle (:mod:`._bundle`, seed 000, notes §4.4
[RECON]) over the atoms found so far: its proximal step, solved in the dual over the simplex of
atom weights by a primal-dual interior-point method (:func:`_simplex_subproblem`, with the
bordered Newton solve :func:`_bordered_solver`), and the dual value that bounds the minimum of
the outer problem from below (:func:`_restricted_dual`).

Each bundle cut is an exact piece ``q_k(t) = |t^T phi_k|^2/(2P) - |u_k|^2/2`` (a local maximum
u_k of ``Q_t``); the proximal step maximises ``-1/2 tr(R^T (Phi W Phi^T/P + I/tau)^{-1} R) -
w.c`` over the simplex, ``R = Y + t_c/tau``.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import linalg

__all__: list[str] = []


def _bordered_solver(A, rp):
    """``solve(r) -> (x, nu)`` for ``A x + nu 1 = r``, ``1^T x = -rp`` with A symmetric positive
    definite: Cholesky of A and the Schur complement on the one equality (``x = A^{-1}(r - nu
    1)``); the bordered matrix by LU if round-off makes A indefinite, and by its pseudo-inverse
    (minimum-norm least squares) if that LU is singular too: with a thousand candidate atoms
    and the lower bound's tau -> inf, A can be singular to round-off (an exact zero pivot was
    met on Fashion-MNIST at P = 60)."""
    K = A.shape[0]
    try:
        cf = linalg.cho_factor(A, check_finite=False)
    except linalg.LinAlgError:
        kkt = np.ones((K + 1, K + 1))
        kkt[:K, :K], kkt[K, K] = A, 0.0
        with warnings.catch_warnings():  # a singular LU is handled below
            warnings.simplefilter("ignore", linalg.LinAlgWarning)
            lu = linalg.lu_factor(kkt, check_finite=False)
        diag = np.abs(np.diag(lu[0]))
        if not (np.all(np.isfinite(diag)) and diag.min() > 1e-14 * diag.max()):
            pinv = linalg.pinvh(kkt, check_finite=False)

            def solve_pinv(r):
                sol = pinv @ np.concatenate([r, [-rp]])
                return sol[:K], sol[K]

            return solve_pinv

        def solve_lu(r):
            sol = linalg.lu_solve(lu, np.concatenate([r, [-rp]]), check_finite=False)
            return sol[:K], sol[K]

        return solve_lu
    a1 = linalg.cho_solve(cf, np.ones(K), check_finite=False)

    def solve(r):
        a0 = linalg.cho_solve(cf, r, check_finite=False)
        nu = (a0.sum() + rp) / a1.sum()
        return a0 - nu * a1, nu

    return solve


def _simplex_subproblem(Phi, c, Y, t_c, tau, w0, gap_end=1e-13, maxit=100):
    """Proximal bundle step in the dual over atom weights w in the simplex. Phi (P, K) holds
    phi(z_k) as columns, c (K,) = |u_k|^2/2. Returns (w, t).

    Maximises the concave ``h(w) = -1/2 tr(R^T (Phi W Phi^T/P + I/tau)^{-1} R) - w.c`` (R = Y +
    t_c/tau) over the simplex by a primal-dual interior-point method (Mehrotra predictor-
    corrector): with F = -h, multipliers s >= 0 of w >= 0 and nu of sum w = 1, Newton on
    ``grad F - s + nu 1 = 0``, ``w o s = sigma mu``, ``1^T w = 1`` with ``sigma = (mu_aff/mu)^3``,
    steps to 0.99 of the boundary. Stops when the complementarity ``mu = w.s/K <= gap_end`` and
    the stationarity residual is at round-off (<= 1e-12 (1 + max|grad F|), or h no longer moves
    by 1e-13 relative: with tau -> inf the matrix is nearly singular and the residual stalls
    near 1e-10). About 12-20 Newton steps, against about 90 of the former barrier path."""
    P, K = Phi.shape
    R = Y + t_c / tau
    eye = np.eye(P) / tau

    def evaluate(w):
        cf = linalg.cho_factor((Phi * w) @ Phi.T / P + eye)
        t = linalg.cho_solve(cf, R)
        v = Phi.T @ t
        h = -0.5 * np.sum(R * t) - w @ c
        g = np.sum(v * v, axis=1) / (2 * P) - c  # grad h
        H = -(Phi.T @ linalg.cho_solve(cf, Phi)) * (v @ v.T) / P**2  # hess h
        return h, g, t, H

    def max_step(x, dx):
        neg = dx < 0
        return min(1.0, float(np.min(-x[neg] / dx[neg]))) if np.any(neg) else 1.0

    w0 = np.clip(w0, 0.0, None)
    w = 0.5 * w0 / max(w0.sum(), 1e-300) + 0.5 / K
    h, g, t, H = evaluate(w)
    gF = -g
    nu = -np.min(gF) + 1.0 + 1e-2 * np.max(np.abs(gF))
    s = gF + nu  # >= 1: a strictly feasible multiplier with zero stationarity residual
    h_prev = None
    for _ in range(maxit):
        rd = gF - s + nu
        mu = w @ s / K
        res = np.max(np.abs(rd)) / (1.0 + np.max(np.abs(gF)))
        if mu <= gap_end and (res <= 1e-12 or (
                h_prev is not None and abs(h - h_prev) <= 1e-13 * (1.0 + abs(h)))):
            break
        # Newton system (hess F + S/W) dw + dnu 1 = target/w - s - rd, 1^T dw = -rp, and
        # ds = (target - w s - s dw)/w; predictor target 0, corrector sigma mu - dw_aff ds_aff
        A = -H
        A[np.diag_indices(K)] += s / w
        solve = _bordered_solver(A, w.sum() - 1.0)
        dw, _ = solve(-s - rd)
        if not np.all(np.isfinite(dw)):
            break  # keep the last (feasible) weights: their dual value is still a lower bound
        ds = -s - s * dw / w
        a = min(max_step(w, dw), max_step(s, ds))
        sigma = ((w + a * dw) @ (s + a * ds) / K / mu) ** 3
        target = sigma * mu - dw * ds
        dw, dnu = solve(target / w - s - rd)
        ds = (target - w * s - s * dw) / w
        if not (np.all(np.isfinite(dw)) and np.all(np.isfinite(ds)) and np.isfinite(dnu)):
            break
        a = 0.99 * min(max_step(w, dw), max_step(s, ds))
        w, s, nu = w + a * dw, s + a * ds, nu + a * dnu
        h_prev = h
        h, g, t, H = evaluate(w)
        gF = -g
    return w / w.sum(), t


def _restricted_dual(Phi, c, Y, w):
    """Dual value ``h(w) = -1/2 tr(Y^T A^+ Y) - w.c``, ``A = Phi W Phi^T / P``, of the
    restricted problem ``min_t max_k q_k(t) - tr(t^T Y)`` over the atoms in Phi: a lower bound
    on its minimum, hence (the restricted objective lies below f) on min f. -inf unless Y lies
    in the range of A (to 1e-8 relative; class-structured codes span only the class
    directions, which is enough when the targets are class-structured too)."""
    P = Phi.shape[0]
    lam, V = np.linalg.eigh((Phi * w) @ Phi.T / P)
    keep = lam > 1e-10 * lam[-1]
    VY = V[:, keep].T @ Y
    if np.linalg.norm(Y - V[:, keep] @ VY) > 1e-8 * np.linalg.norm(Y):
        return -np.inf
    return float(-0.5 * np.sum(VY * VY / lam[keep][:, None]) - w @ c)
