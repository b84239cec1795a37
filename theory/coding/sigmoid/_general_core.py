"""General-data single-neuron problem of the sigmoid network without z|a fluctuations (seed 000,
notes §4.4 [RECON]): the neuron, the search for its maxima, the exact code equations, and the
strategies that solve them (annealing, continuation from the orthonormal toy, repair).

Training inputs enter through the input kernel ``K0 = X^T X / N0`` (P x P, inputs as columns of
X); targets Y are (P, m), one row per training input, m = number of outputs. The public solver
and its result are in :mod:`._sigmoid_general`; the loop and bookkeeping shared with the toy in
:mod:`._toy_core`.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..._numerics import _ascend_to_maxima, _newton_lstsq
from ...kernels._gauss import _phi_derivs
from .._code_core import (
    _add_code,
    _anneal_and_refine,
    _CodeProblem,
    _drop_code,
    _join_tied,
    _select_from_system,
    _split_others,
)
from ._toy import solve_sigmoid_toy

__all__: list[str] = []


class _GeneralNeuron:
    """Fluctuation-free single-neuron problem on general inputs (notes §4.4) [RECON].

    With a eliminated at its optimum a = t^T phi(z) / P, the codes are the local maxima in z of
    ``Q_t(z) = |t^T phi(z)|^2 / (2P) - z^T K0^{-1} z / 2``, and ``G_t(a) = Q_t(z) / P``.
    """

    def __init__(self, K0, activation):
        self.K0 = K0
        self.P = K0.shape[0]
        L = np.linalg.cholesky(K0)
        self.L = L
        Linv = np.linalg.solve(L, np.eye(self.P))
        self.K0inv = Linv.T @ Linv
        self.activation = activation

    def evaluate(self, Z, t, order=2):
        P = self.P
        ph, d1, d2 = _phi_derivs(Z, self.activation)
        V = ph @ t  # (k, m): t^T phi(z)
        ZK = Z @ self.K0inv
        Q = np.sum(V * V, axis=1) / (2 * P) - 0.5 * np.sum(Z * ZK, axis=1)
        if order == 0:
            return Q, V
        TV = V @ t.T  # (k, P): (t v)_mu
        grad = d1 * TV / P - ZK
        if order == 1:
            return Q, V, grad
        Dt = d1[:, :, None] * t[None, :, :]  # (k, P, m)
        hess = np.matmul(Dt, Dt.transpose(0, 2, 1)) / P - self.K0inv
        idx = np.arange(P)
        hess[:, idx, idx] += d2 * TV / P
        return Q, V, grad, hess, ph, d1, d2

    def local_maxima(self, t, starts, *, tol=1e-11, maxiter=200, dedup=1e-6):
        """Distinct local maxima of Q_t by damped Newton ascent (saddle-free where a Hessian is
        not negative definite). Returns (Z (n, P), G = Q/P (n,)) sorted by decreasing G."""
        Z, Q = _ascend_to_maxima(lambda X, order=2: self.evaluate(X, t, order), starts, tol,
                                 maxiter, dedup)
        return Z, Q / self.P

    def a_hessian(self, Z, t):
        """grad_a^2 G at the codes: -I + t^T D (K0^{-1} - diag(h phi''))^{-1} D t / P (m x m)."""
        P, m = self.P, t.shape[1]
        ph, d1, d2 = _phi_derivs(Z, self.activation)
        out = []
        for k in range(Z.shape[0]):
            h = t @ (t.T @ ph[k]) / P
            M = self.K0inv - np.diag(h * d2[k])
            Dt = d1[k][:, None] * t
            out.append(-np.eye(m) + Dt.T @ np.linalg.solve(M, Dt) / P)
        return np.array(out)


def _class_patterns(Y, m_codes=None):
    """0/1 activation patterns over the training inputs, one per binary code over the classes
    (class of input mu = argmax_r Y[mu, r])."""
    lab = np.argmax(Y, axis=1)
    m = Y.shape[1]
    B = np.array(list(itertools.product((0.0, 1.0), repeat=m)))
    return B[:, lab]  # (2^m, P)


class _GeneralSearch:
    def __init__(self, neuron, Y, n_random, rng):
        self.neuron = neuron
        self.patterns = _class_patterns(Y)
        self.n_random = n_random
        self.rng = rng
        self.known = np.zeros((0, neuron.P))

    def maxima(self, t, *, full=False, n_random=None):
        if full or self.known.shape[0] == 0:
            k = self.n_random if n_random is None else n_random
            rand = self.rng.integers(0, 2, (k, self.neuron.P)).astype(float)
            pats = np.vstack([self.patterns, rand])
            starts = np.vstack([self.known, 1.5 * (2.0 * pats - 1.0)])
            if full and k:
                # prior draws z ~ N(0, K0) as well: saturated sign patterns alone missed a
                # higher maximum on Fashion-MNIST classes 5, 6, 9 (Q 183.38 vs 181.55) that
                # the first 10 Gaussian starts find
                starts = np.vstack([starts, self.rng.standard_normal((k, self.neuron.P))
                                    @ self.neuron.L.T])
        else:
            starts = self.known
        Z, G = self.neuron.local_maxima(t, starts)
        if Z.shape[0] == 0:
            raise RuntimeError("no local maximum of G found")
        self.known = Z.copy()
        return Z, G


def _general_smoothed(t_flat, search, Y, beta, report=None):
    """P * Phi_beta(t) = (P/beta) log sum exp(beta G_gamma) - tr(t^T Y) and its gradient."""
    neuron = search.neuron
    P, m = Y.shape
    t = t_flat.reshape(P, m)
    Z, G = search.maxima(t, full=True, n_random=0)
    w = np.exp(beta * (G - G[0]))
    Zw = w.sum()
    w /= Zw
    ph = _phi_derivs(Z, neuron.activation)[0]
    A = ph @ t / P
    val = P * (G[0] + np.log(Zw) / beta) - np.sum(t * Y)
    grad = np.einsum("k,kp,kr->pr", w, ph, A) - Y
    if report is not None:
        report(f"smoothing beta={beta:g}: P Phi_beta = {val:.8g}, {Z.shape[0]} maxima of G")
    return val, grad.ravel()


def _general_exact_system(x, neuron, Y, n):
    """Residuals and Jacobian of the fluctuation-free P -> inf equations, x = [t, z_1..z_n, P_g]."""
    P, m = Y.shape
    t = x[: P * m].reshape(P, m)
    Z = x[P * m: P * m + n * P].reshape(n, P)
    Pg = x[P * m + n * P:]
    Q, V, grad, hess, ph, d1, d2 = neuron.evaluate(Z, t)
    A = V / P
    F_stat = grad.ravel()
    F_deg = (Q[1:] - Q[0]) / P
    F_norm = np.array([Pg.sum() - 1.0])
    O = np.einsum("g,gp,gr->pr", Pg, ph, A)
    F_out = (O - Y).ravel()
    F = np.concatenate([F_stat, F_deg, F_norm, F_out])
    N = F.size
    J = np.zeros((N, N))
    iz, ip = P * m, P * m + n * P
    for g_ in range(n):
        r0 = g_ * P
        J[r0:r0 + P, iz + g_ * P: iz + (g_ + 1) * P] = hess[g_]
        # d grad_mu / d t_{nu r} = (1/P)[delta_mu,nu phi'_mu v_r + phi'_mu t_mu,r phi_nu]
        blk = np.zeros((P, P, m))
        idx = np.arange(P)
        blk[idx, idx, :] += d1[g_][:, None] * V[g_][None, :]
        blk += d1[g_][:, None, None] * t[:, None, :] * ph[g_][None, :, None]
        J[r0:r0 + P, :P * m] = blk.reshape(P, P * m) / P
    r = n * P

    def dG_row(g_):
        row = np.zeros(N)
        row[iz + g_ * P: iz + (g_ + 1) * P] = grad[g_] / P
        row[:P * m] = (ph[g_][:, None] * A[g_][None, :]).ravel() / P
        return row

    row0 = dG_row(0)
    for g_ in range(1, n):
        J[r + g_ - 1] = dG_row(g_) - row0
    r += n - 1
    J[r, ip: ip + n] = 1.0
    r += 1
    # output O[mu, r] = sum_g P_g phi_g,mu v_g,r / P
    for g_ in range(n):
        J[r:, ip + g_] = (ph[g_][:, None] * A[g_][None, :]).ravel()
        # d/dz_g,nu: (P_g/P)[delta_mu,nu phi'_mu v_r + phi_mu t_nu,r phi'_nu]
        blk = np.zeros((P, m, P))
        idx = np.arange(P)
        blk[idx, :, idx] += d1[g_][:, None] * V[g_][None, :]
        blk += ph[g_][:, None, None] * (t.T * d1[g_][None, :])[None, :, :]
        J[r:, iz + g_ * P: iz + (g_ + 1) * P] += Pg[g_] / P * blk.reshape(P * m, P)
    # d/dt_{nu s}: sum_g (P_g/P) phi_g,mu delta_rs phi_g,nu
    Kphi = np.einsum("g,gp,gq->pq", Pg, ph, ph) / P
    J[r:, :P * m] = np.einsum("pq,rs->prqs", Kphi, np.eye(m)).reshape(P * m, P * m)
    return F, J


def _general_global_check(neuron, search, t, Z_active, G_tied, n_random):
    """All maxima of G_t (``n_random`` random starts): gap of the best one outside the codes."""
    Z, G = search.maxima(t, full=True, n_random=n_random)
    return _split_others(Z, G, Z_active, G_tied, 1e-5 * (1.0 + np.max(np.abs(Z_active))))


def _solve_general(K0, Y, neuron, t0, betas, rng, n_random, tol, report=None):
    """Annealed smoothing + exact refinement on general data (the loop of the toy solver)."""
    P, m = Y.shape
    search = _GeneralSearch(neuron, Y, n_random, rng)

    def finish(x, n, beta, nit, resid):
        fin = _finish_general(neuron, Y, x, n, rng, n_random, tol, search=search)
        if fin["converged"]:
            fin["nit"] += nit
            fin["message"] += f" (smoothing beta={beta:g})"
        return fin

    prob = _CodeProblem(
        shape=(P, m), dim=P, search=search,
        smoothed=lambda t_flat, beta: _general_smoothed(t_flat, search, Y, beta, report),
        system=lambda x, n: _general_exact_system(x, neuron, Y, n),
        method="L-BFGS-B", options={"gtol": 1e-9, "ftol": 1e-15, "maxiter": 5000},
        hybr_maxfev=200, lm_maxiter=500, finish=finish)
    return _anneal_and_refine(prob, t0, betas, n_random, tol)


def _finish_general(neuron, Y, x, n, rng, n_random, tol, search=None):
    """Global check, tied maxima, weight selection for a solution x of the exact system."""
    P, m = Y.shape
    tt = x[: P * m].reshape(P, m)
    ZZ = x[P * m: P * m + n * P].reshape(n, P)
    Pg = x[P * m + n * P:]
    F = _general_exact_system(x, neuron, Y, n)[0]
    resid = float(np.max(np.abs(F)))
    if search is None:
        search = _GeneralSearch(neuron, Y, n_random, rng)
    search.known = ZZ.copy()
    G_tied = float(neuron.evaluate(ZZ[:1], tt, order=0)[0][0]) / P
    gap, other, other_G = _general_global_check(neuron, search, tt, ZZ, G_tied, 4 * n_random)
    if gap > 1e-9:
        return dict(converged=False, nit=0, better=other[int(np.argmax(other_G))],
                    message=(f"solution with {n} codes is not global: another maximum of G is "
                             f"higher by {gap:.3g}"))
    ZZ, Pg, other, other_G, gap = _join_tied(ZZ, Pg, other, other_G, G_tied)
    ph = _phi_derivs(ZZ, neuron.activation)[0]
    A = ph @ tt / P
    Mw = np.vstack([(ph[:, :, None] * A[:, None, :]).reshape(ZZ.shape[0], P * m).T,
                    np.ones(ZZ.shape[0])])
    Pg, null = _select_from_system(Mw, Pg, neuron.a_hessian(ZZ, tt))
    msg = f"converged: {ZZ.shape[0]} tied codes (exact refinement residual {resid:.1e})"
    if null.shape[1]:
        msg += (f"; the code weights are not unique ({null.shape[1]}-parameter family); "
                f"reported: the P -> infinity limit of the finite-P weights")
    return dict(t=tt, Z=ZZ, A=A, Pg=Pg, G=G_tied, gap=gap, other=other, other_G=other_G,
                nit=0, converged=True, null=null, message=msg)


def _repair_general(neuron, Y, x, n, rng, n_random, tol, max_rounds=10):
    """Finish a solution of the exact system; while a higher maximum of G exists, add it as a
    code (small weight) and re-solve, dropping codes whose weight turns negative."""
    P, m = Y.shape
    nit = 0
    for _ in range(max_rounds):
        fin = _finish_general(neuron, Y, x, n, rng, n_random, tol)
        if fin["converged"] or "better" not in fin:
            fin["nit"] += nit
            return fin
        x = _add_code(x, P * m, n, P, fin["better"])
        n += 1
        while n >= 1:
            xn, resid, nfev = _exact_solve(neuron, Y, x, n, tol)
            nit += nfev
            if resid > tol:
                return dict(converged=False, nit=nit, message=(
                    f"adding a code that overtook the tied maxima: exact solve failed "
                    f"(residual {resid:.2e})"))
            Pg = xn[P * m + n * P:]
            if np.min(Pg) >= -1e-9:
                x = xn
                break
            x = _drop_code(xn, P * m, n, P, int(np.argmin(Pg)), 1e-6)
            n -= 1
    return dict(converged=False, nit=nit, message=f"no global code set after {max_rounds} rounds")


def _exact_solve(neuron, Y, x0, n, tol):
    return _newton_lstsq(lambda x: _general_exact_system(x, neuron, Y, n), x0, tol)


def _solve_general_continuation(K0, Y, activation, structure, rng, n_random, tol, n_steps,
                                report=None, start=None):
    """Homotopy K0(lam) = (1 - lam) I + lam K0 from the orthonormal toy (lam = 0, solved exactly
    by the class-reduced solver) to the data (lam = 1), Newton-correcting the exact equations at
    every step; codes whose weight reaches 0 are dropped, maxima that overtake are added.
    ``start = (K_start, t, Z, P_gamma)``, a solution at another kernel, replaces the toy: the path
    is then (1 - lam) K_start + lam K0 (``structure`` is not used)."""
    P, m = Y.shape
    if start is None:
        lab, rho, Yc = structure
        toy = solve_sigmoid_toy(rho, Yc, fluctuations=False, activation=activation, seed=int(
            rng.integers(2**31)))
        if not toy.converged:
            return dict(t=np.zeros((P, m)), converged=False, nit=toy.nit,
                        message=f"continuation: toy start failed ({toy.message})")
        keep = toy.P_gamma > 0
        K_start, t, Z, Pg = np.eye(P), toy.t[lab], toy.preactivation_modes[keep][:, lab], toy.P_gamma[keep]
        origin = "the orthonormal toy"
    else:
        K_start, t, Z, Pg = start
        origin = "the start solution"
    x = np.concatenate([t.ravel(), Z.ravel(), Pg])
    n = Z.shape[0]
    lam, dlam, nit, events = 0.0, 1.0 / n_steps, 0, 0
    while lam < 1.0:
        if report is not None:
            report(f"continuation from {origin}: lambda = {lam:.4f} of 1, {n} codes")
        step = min(dlam, 1.0 - lam)
        lam_new = lam + step
        neuron = _GeneralNeuron((1.0 - lam_new) * K_start + lam_new * K0, activation)
        xn, resid, nfev = _exact_solve(neuron, Y, x, n, tol)
        nit += nfev
        if resid > tol:
            dlam = 0.5 * dlam
            if dlam < 1e-4:
                return dict(t=x[: P * m].reshape(P, m), converged=False, nit=nit,
                            message=f"continuation stalled at lambda={lam:.4f} (residual "
                                    f"{resid:.2e})")
            continue
        Pg = xn[P * m + n * P:]
        if np.min(Pg) < -1e-9:  # a code dies between lam and lam_new: drop it, retry the step
            events += 1
            if events > 50:
                return dict(t=xn[: P * m].reshape(P, m), converged=False, nit=nit,
                            message=f"continuation: too many code-set changes near "
                                    f"lambda={lam:.4f}")
            x = _drop_code(x, P * m, n, P, int(np.argmin(Pg)), 1e-6)
            n -= 1
            continue
        # a new maximum overtaking the tied ones joins the code set; first shrink the step
        # until the crossing is resolved (small gap), then add it with a small weight
        t_new = xn[: P * m].reshape(P, m)
        Z_new = xn[P * m: P * m + n * P].reshape(n, P)
        search = _GeneralSearch(neuron, Y, n_random, rng)
        search.known = Z_new.copy()
        G_tied = float(neuron.evaluate(Z_new[:1], t_new, order=0)[0][0]) / P
        gap, other, other_G = _general_global_check(neuron, search, t_new, Z_new, G_tied,
                                                    n_random)
        if gap > 1e-9:
            if gap > 1e-4 and dlam > 1e-3:
                dlam = 0.5 * dlam
                continue
            events += 1
            if events > 50:
                return dict(t=t_new, converged=False, nit=nit,
                            message=f"continuation: too many code-set changes near "
                                    f"lambda={lam:.4f}")
            x = _add_code(x, P * m, n, P, other[int(np.argmax(other_G))])
            n += 1
            continue
        x, lam = xn, lam_new
        dlam = min(2.0 * dlam, 1.0 / n_steps)
    return dict(x=x, n=n, nit=nit, converged=True)
