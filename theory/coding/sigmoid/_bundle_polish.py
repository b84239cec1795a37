"""Exact polish of a proximal-bundle solution of the general-data sigmoid problem [OURS].

The bundle converges sublinearly: near the optimum its centre t_c moves by ~1e-8 per iteration,
and its lower bound (the restricted problem over the atoms found) closes the gap only as fast as
the atoms approach the optimal code positions. Once the bundle's codes are the right set, the
optimum is the root of a square system (notes §4.4, the equations of ``solve_sigmoid_general``)
and Newton reaches it in a few steps. Here the system is written in the whitened coordinates of
the bundle (z = B u, K0 = B B^T, B: P x r), so it holds on the range of a singular K0 too:

* stationarity of every code: ``grad_u Q_t(u_g) = B^T [phi'(B u_g) o (t v_g)] / P - u_g = 0``,
  ``v_g = t^T phi(B u_g)``  (n r equations);
* ties: ``(Q_t(u_g) - Q_t(u_0)) / P = 0``, ``Q_t(u) = |t^T phi(B u)|^2 / (2P) - |u|^2 / 2``
  (n - 1);
* normalisation: ``sum_g P_g = 1`` (1);
* output: ``sum_g P_g phi(B u_g) v_g^T / P = Y``  (P m);

for the unknowns t (P x m), u_1..u_n (r each) and P_1..P_n. A root with P_g >= 0 whose codes are
the global maxima of Q_t is the optimum; the caller checks that by the bundle's own certificate
search at the polished t, so the polish never weakens a certificate: it only supplies a better
centre and exact code positions for the lower bound.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

__all__: list[str] = []


def _range_blocks(x, neuron, Y, n):
    """Residuals F = [stationarity (n r), ties (n - 1), normalisation (1), output (P m)] of the
    system above, ``x = [t, u_1..u_n, P_g]`` (``neuron`` a ``_RangeNeuron``), and the blocks of
    its Jacobian: ``hess`` (n, r, r) = d stat_g / d u_g, ``st`` (n, r, Pm) = d stat_g / d t,
    ``qt`` (n, Pm) = d Q_g / d t / P, ``grad`` (n, r) = d Q_g / d u_g, ``ou`` (n, Pm, r) =
    d out / d u_g, ``op`` (Pm, n) = d out / d P_g, ``ot`` (Pm, Pm) = d out / d t."""
    P, m = Y.shape
    B, r = neuron.B, neuron.r
    iz, ip = P * m, P * m + n * r
    t = x[:iz].reshape(P, m)
    U = x[iz:ip].reshape(n, r)
    Pg = x[ip:]
    Q, V, grad, hess, ph, d1, _ = neuron.evaluate(U, t)
    A = V / P
    out = np.einsum("g,gp,gr->pr", Pg, ph, A)
    F = np.concatenate([grad.ravel(), (Q[1:] - Q[0]) / P, [Pg.sum() - 1.0], (out - Y).ravel()])
    C = np.einsum("pk,gp,ps->gks", B, d1, t)  # (n, r, m): B^T (phi' o t)
    # d grad_k / d t_{nu s} = [B_{nu k} phi'_nu v_s + C_{k s} phi_nu] / P
    st = ((B.T[None] * d1[:, None, :])[:, :, :, None] * V[:, None, None, :]
          + C[:, :, None, :] * ph[:, None, :, None]).reshape(n, r, P * m) / P
    # d Q_g / d t_{nu s} = v_{g s} phi_{g nu} / P
    qt = np.einsum("gp,gs->gps", ph, V).reshape(n, P * m) / P
    # output O_{mu r} = sum_g P_g phi_{g mu} v_{g r} / P
    op = np.einsum("gp,gr->prg", ph, A).reshape(P * m, n)
    ou = ((d1[:, :, None] * B[None])[:, :, None, :] * V[:, None, :, None]
          + ph[:, :, None, None] * np.transpose(C, (0, 2, 1))[:, None, :, :])
    ou = (Pg / P)[:, None, None] * ou.reshape(n, P * m, r)
    Kphi = np.einsum("g,gp,gq->pq", Pg, ph, ph) / P
    ot = np.einsum("pq,rs->prqs", Kphi, np.eye(m)).reshape(P * m, P * m)
    return F, dict(hess=hess, st=st, qt=qt, grad=grad, ou=ou, op=op, ot=ot)


def _range_exact_system(x, neuron, Y, n):
    """Residuals F and the dense Jacobian J of the square system above (from
    :func:`_range_blocks`; for tests and small systems)."""
    P, m = Y.shape
    r = neuron.r
    iz, ip = P * m, P * m + n * r
    F, b = _range_blocks(x, neuron, Y, n)
    J = np.zeros((F.size, F.size))
    for g in range(n):
        J[g * r:(g + 1) * r, iz + g * r: iz + (g + 1) * r] = b["hess"][g]
        J[g * r:(g + 1) * r, :iz] = b["st"][g]
    row = n * r
    for g in range(1, n):
        J[row, :iz] = (b["qt"][g] - b["qt"][0]) / P
        J[row, iz + g * r: iz + (g + 1) * r] = b["grad"][g] / P
        J[row, iz: iz + r] = -b["grad"][0] / P
        row += 1
    J[row, ip:] = 1.0
    row += 1
    J[row:, :iz] = b["ot"]
    J[row:, ip:] = b["op"]
    for g in range(n):
        J[row:, iz + g * r: iz + (g + 1) * r] = b["ou"][g]
    return F, J


def _schur_step(F, b, P, m, n, r):
    """The Newton step J dx = -F with every code's u eliminated through its (negative definite)
    Hessian: ``du_g = -H_g^{-1} (F_g + S_g dt)``; the reduced system in (dt, dP) has P m + n
    unknowns and is solved in the least-squares sense (minimum norm where the weights are not
    unique). Returns dx, or None when a Hessian is singular."""
    iz = P * m
    Fs = F[:n * r].reshape(n, r)
    Fd, Fn, Fo = F[n * r: n * r + n - 1], F[n * r + n - 1], F[n * r + n:]
    try:
        sol = np.linalg.solve(b["hess"], np.concatenate([Fs[:, :, None], b["st"]], axis=2))
    except np.linalg.LinAlgError:
        return None
    a, S = -sol[:, :, 0], -sol[:, :, 1:]  # du_g = a_g + S_g dt
    gS = np.einsum("gk,gkj->gj", b["grad"], S)
    ga = np.einsum("gk,gk->g", b["grad"], a)
    M = np.zeros((iz + n, iz + n))
    rhs = np.empty(iz + n)
    M[: n - 1, :iz] = ((b["qt"][1:] - b["qt"][0]) + (gS[1:] - gS[0])) / P
    rhs[: n - 1] = -Fd - (ga[1:] - ga[0]) / P
    M[n - 1, iz:] = 1.0
    rhs[n - 1] = -Fn
    M[n:, :iz] = b["ot"] + np.einsum("gpk,gkj->pj", b["ou"], S)
    M[n:, iz:] = b["op"]
    rhs[n:] = -Fo - np.einsum("gpk,gk->p", b["ou"], a)
    try:
        y = linalg.lstsq(M, rhs, cond=1e-13, lapack_driver="gelsd")[0]
    except (np.linalg.LinAlgError, ValueError):
        return None
    dt = y[:iz]
    dU = a + np.einsum("gkj,j->gk", S, dt)
    return np.concatenate([dt, dU.ravel(), y[iz:]])


def polish_bundle(neuron, Y, t, U, Pg, *, tol=1e-10, maxiter=100):
    """Newton on the square system from a bundle solution (t, codes U (n, r), weights Pg), each
    step by :func:`_schur_step` (cost O(n r^3 + (P m)^3), not O((n r)^3)), backtracking (Armijo)
    on the squared residual |F|^2, for which the Newton step is a descent direction. From a
    bundle centre the first steps are short (1/32 of the Newton step on Fashion-MNIST at P = 60,
    where a code moves far) before the full steps converge quadratically; hence the default
    ``maxiter``.

    Returns ``(t, U, Pg, residual)`` of the root with the weights clipped at 0, or None when
    Newton does not reach ``tol`` within ``maxiter`` steps, a weight is below -1e-9, or a
    polished code is not a strict local maximum of Q_t."""
    P, m = Y.shape
    n, r = U.shape[0], neuron.r
    if n == 0:
        return None
    x = np.concatenate([np.asarray(t, float).ravel(), np.asarray(U, float).ravel(),
                        np.asarray(Pg, float)])
    F, b = _range_blocks(x, neuron, Y, n)
    sq = float(F @ F)
    for _ in range(maxiter):
        if np.max(np.abs(F)) <= tol:
            break
        dx = _schur_step(F, b, P, m, n, r)
        if dx is None or not np.all(np.isfinite(dx)):
            return None
        alpha = 1.0
        while True:
            Fn, bn = _range_blocks(x + alpha * dx, neuron, Y, n)
            sqn = float(Fn @ Fn)
            if sqn <= (1.0 - 1e-4 * alpha) * sq or alpha < 1e-8:
                break
            alpha *= 0.5
        if not sqn < sq:
            return None
        x, F, b, sq = x + alpha * dx, Fn, bn, sqn
    res = float(np.max(np.abs(F)))
    if not res <= tol:
        return None
    iz, ip = P * m, P * m + n * r
    t1, U1, P1 = x[:iz].reshape(P, m), x[iz:ip].reshape(n, r), x[ip:]
    if np.min(P1) < -1e-9 or np.max(np.linalg.eigvalsh(b["hess"])) >= 0.0:
        return None
    return t1, U1, np.clip(P1, 0.0, None), res
