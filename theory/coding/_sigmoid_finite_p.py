"""Finite-P readout posterior of the sigmoid toy task: exact readout integral by adaptive
Gauss-Hermite quadrature around every local maximum of g (seed 000 Fig. 4a caption "finite P
correction"; notes §4.3 last bullet [RECON]).

For the toy the readout marginal is exactly ``P(a) ∝ exp(P g_t(a))`` (N -> infinity, any P); the
smooth convex ``Phi_P(t) = (1/P) log int da exp(P g_t(a)) - sum_c rho_c t_c . y_c`` is minimised by
Newton with the a-integral done per peak (Laplace Gaussian as weight, beyond-Laplace corrections
included). Its stationarity is the exact finite-P output constraint
``<a^r psi'(t_c . a)>_{P(a)} = y_c^r``.
"""

from __future__ import annotations

import itertools

import numpy as np

from ._toy_core import _linear_part

__all__: list[str] = []


def _tensor_rule(m, nq):
    x, w = np.polynomial.hermite_e.hermegauss(nq)
    w = w / np.sqrt(2.0 * np.pi)
    X = np.array(list(itertools.product(x, repeat=m)))
    logW = np.array([np.sum(np.log(c)) for c in itertools.product(w, repeat=m)])
    # int f(a) da = det(L) E_x[f(a0 + L x) / N(x)],  1/N(x) = (2 pi)^(m/2) exp(|x|^2/2)
    return X, logW + 0.5 * np.sum(X * X, axis=1) + 0.5 * m * np.log(2.0 * np.pi)


def _finite_P_state(t, search, Yc, P, rule, T=0.0):
    """Phi_P (+ (T/2) sum_c rho_c |t_c|^2 at rescaled temperature T), its gradient
    F (= rho_c (<a psi'_c> - y_c + T t_c)) and Hessian J at t, plus peak data."""
    neuron = search.neuron
    k, m, rho = neuron.k, neuron.m, neuron.rho
    A, g, Hs = search.maxima(t, full=True)
    X, logw = rule
    pts, logint, which, covs = [], [], [], []
    for j in range(A.shape[0]):
        cov = np.linalg.inv(-P * Hs[j])
        cov = 0.5 * (cov + cov.T)
        L = np.linalg.cholesky(cov)
        a = A[j] + X @ L.T
        pts.append(a)
        logint.append(logw + np.sum(np.log(np.diag(L))))
        which.append(np.full(X.shape[0], j))
        covs.append(cov)
    pts = np.vstack(pts)
    which = np.concatenate(which)
    val, Hh, p1, p2 = neuron.evaluate(pts, t, order=0)
    li = np.concatenate(logint) + P * val
    mx = li.max()
    p = np.exp(li - mx)
    Z = p.sum()
    p /= Z
    logZ = mx + np.log(Z)
    phi_P = logZ / P - _linear_part(rho, t, Yc, T)
    G = rho[None, :, None] * p1[:, :, None] * pts[:, None, :]  # grad_t g at every node (k, c, i)
    Gm = np.einsum("k,kci->ci", p, G)
    F = Gm - rho[:, None] * (Yc - T * t)
    D = (G - Gm).reshape(len(p), k * m)
    J = P * (D.T * p) @ D + T * np.diag(np.repeat(rho, m))
    for c in range(k):
        J[c * m:(c + 1) * m, c * m:(c + 1) * m] += rho[c] * np.einsum("k,k,ki,kj->ij", p, p2[:, c], pts, pts)
    weights = np.bincount(which, weights=p, minlength=A.shape[0])
    return dict(phi=phi_P, F=F, J=J, A=A, g=g, hess=Hs, covs=np.array(covs), weights=weights,
                mean_out=np.einsum("k,kc,kr->cr", p, p1, pts))


def _finite_P_solve(t0, search, Yc, P, nq, tol, maxiter, T=0.0):
    """Damped Newton on the finite-P output constraint; one iteration = one Newton step (one
    Jacobian solve and its backtracking line search). Returns (t, state, nit, converged,
    stalled): ``stalled`` when the line search found no decrease (otherwise a failure means
    the ``maxiter`` budget ran out)."""
    rule = _tensor_rule(search.neuron.m, nq)
    k, m = search.neuron.k, search.neuron.m
    t = t0.copy()
    st = _finite_P_state(t, search, Yc, P, rule, T)
    nit = 0
    for nit in range(1, maxiter + 1):
        if np.max(np.abs(st["F"])) < tol:
            break
        d = -np.linalg.solve(st["J"], st["F"].ravel()).reshape(k, m)
        slope = float(np.sum(st["F"] * d))
        alpha = 1.0
        for _ in range(40):
            try:
                new = _finite_P_state(t + alpha * d, search, Yc, P, rule, T)
                if new["phi"] <= st["phi"] + 1e-4 * alpha * slope + 1e-15 * abs(st["phi"]):
                    break
            except (RuntimeError, np.linalg.LinAlgError):
                pass
            alpha *= 0.5
        else:
            return t, st, nit, False, True  # the line search stalled
        t = t + alpha * d
        st = new
    return t, st, nit, bool(np.max(np.abs(st["F"])) < tol), False
