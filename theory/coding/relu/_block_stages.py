"""The numerical stages of :func:`._relu_block.solve_relu_block` (seed 000, notes §5.2 [RECON],
class-block extension [OURS]): the log-barrier interior point on the single-class outlier
constraints, Newton on the KKT system, and the stage that replaces the Laplace bulk by the bulk's
whole readout law. They work on the solver's problem object (``_relu_block._Problem``: bulk part,
objective, faces, KKT residual)."""

from __future__ import annotations

import itertools

import numpy as np
from scipy import optimize

from ..._numerics import _newton_lstsq

__all__: list[str] = []

_LAW_SETTLE_SD = 1e-4  # the readout-law rule has settled when its centre moves less (sd)
_LAW_SHIFTS = 2  # field-rule mean shifts per tilt in the readout-law stage (_BlockBulk.log_z)


def _single_class_factors(prob):
    """kappa_c with ``lambda_c(t) = kappa_c |t_c|^2`` the largest ratio of a single-class
    outlier of class c (w_c = 1, w_F < 0 on a set F of other classes where that lowers w^T G w,
    0 elsewhere): fixed directions, so each constraint is a convex quadratic in t_c."""
    k, G = prob.k, prob.G
    kappa = np.empty(k)
    for c in range(k):
        best = G[c, c]
        others = [j for j in range(k) if j != c]
        for size in range(1, k):
            for F in itertools.combinations(others, size):
                F = list(F)
                wF = -np.linalg.solve(G[np.ix_(F, F)], G[F, c])
                if np.all(wF < 0):
                    best = min(best, G[c, c] + G[c, F] @ wF)
        kappa[c] = prob.counts[c] ** 2 / (prob.P_s * best)
    return kappa


def _barrier(prob, tau, mus, maxiter):
    """Log-barrier interior point on the single-class outlier constraints (as
    ``solve_relu_toy``): damped Newton on ``objective(t) / P - mu sum_c log(1 - lambda_c(t))``
    for each barrier weight mu in turn (a t outside, or without a bulk maximum, is rejected);
    outliers on several classes are judged afterwards by the exact lambda*. Newton works on
    ``x_c = t_c / d_c`` with ``d_c = kappa_c^(-1/2)`` (the size of a marginal single-class t_c)
    and on the objective over P, so that both are of order one."""
    k, m = prob.k, prob.m
    kappa = _single_class_factors(prob)
    d = 1.0 / np.sqrt(kappa)[:, None]
    P = float(prob.counts.sum())

    def obj(x, mu, probe=False):
        t = x.reshape(k, m) * d
        slack = 1.0 - kappa * np.sum(t * t, axis=1)
        fg = prob.objective(t, local=probe) if np.all(slack > 0) else None
        if fg is None:
            return np.inf, np.zeros_like(x)
        grad = fg[1] / P + mu * (2.0 * kappa / slack)[:, None] * t
        return fg[0] / P - mu * np.sum(np.log(slack)), (grad * d).ravel()

    x, nit = (tau / d).ravel(), 0
    for mu in mus:
        x, n = _damped_newton(lambda z, probe=False, mu=mu: obj(z, mu, probe), x, maxiter)
        nit += n
    return x.reshape(k, m) * d, nit


def _damped_newton(fg, x, maxiter, eps=1e-6):
    """Minimise a smooth convex f (``fg(x, probe) -> (f, grad)``, f = inf outside its domain;
    ``probe`` marks the finite-difference points of the Hessian) by
    Newton steps with a finite-difference Hessian of the gradient (its eigenvalues floored at
    1e-6 times the largest: at y- = -1/2 and T = 0 t has flat gauge directions), steps of at most
    0.5 (max-abs) and backtracking that stays inside the domain; stops when the Newton decrement
    is below 1e-14 or after ``maxiter`` steps. Returns (x, steps)."""
    f, g = fg(x)
    n = x.size
    for it in range(maxiter):
        H = np.empty((n, n))
        for i in range(n):
            e = np.zeros(n)
            e[i] = eps
            H[:, i] = (fg(x + e, True)[1] - fg(x - e, True)[1]) / (2 * eps)
        H = 0.5 * (H + H.T)
        ev = np.linalg.eigvalsh(H)
        floor = 1e-6 * max(float(ev[-1]), 1e-12)  # flat (gauge) directions of t: regularised
        if ev[0] < floor:
            H = H + (floor - ev[0]) * np.eye(n)
        step = -np.linalg.solve(H, g)
        step *= min(1.0, 0.5 / max(float(np.max(np.abs(step))), 1e-300))  # trust radius 0.5
        dec = -float(g @ step)
        if dec < 1e-14:
            return x, it
        alpha = 1.0
        while alpha > 1e-12:
            fn, gn = fg(x + alpha * step)
            if np.isfinite(fn) and fn <= f - 0.25 * alpha * dec:
                break
            alpha *= 0.5
        else:
            return x, it
        x, f, g = x + alpha * step, fn, gn
    return x, maxiter


def _kkt_newton(prob, x0, active, atol):
    """Newton (least squares) on the KKT system of the faces ``active`` from x0 = [t, sigma^2].
    The Jacobian is by finite differences, except, once the readout-law rule is frozen
    (``prob.grid``), the bulk's block, which is analytic (:meth:`_BlockBulk.readout_law` with
    ``jac=True``, one evaluation of the law for F and its block). Returns (x, function
    evaluations)."""
    k, m = prob.k, prob.m
    km = k * m
    no_bulk = np.zeros((k, m))

    def fun(x):
        if prob.grid is None:
            F = prob.kkt(x, active)
            return F, optimize.approx_fprime(x, lambda z: prob.kkt(z, active, True), 1e-7)
        # on a frozen readout-law rule: the bulk's block analytically, the outliers' part (cheap)
        # by finite differences
        law = prob.bulk.readout_law(x[:km].reshape(k, m), *prob.grid, jac=True)
        F = prob.kkt(x, active, bulk_output=law["B"])
        J = optimize.approx_fprime(x, lambda z: prob.kkt(z, active, True, no_bulk), 1e-7)
        J[:km, :km] -= law["dB"].reshape(km, km)
        return F, J

    x, _, nfev = _newton_lstsq(fun, x0, atol)
    return x, nfev


def _readout_law_stage(prob, x, active, atol, nodes, rounds=8, tol=_LAW_SETTLE_SD):
    """From the Laplace KKT point x, the KKT point with the whole bulk readout law [OURS]: the
    bulk value W(t) = log int exp(g(a)) da and output E[M a] on a Gauss-Hermite rule centred on
    the law (first its Laplace approximation at a_0), held fixed while Newton solves the KKT
    system, then re-centred on the law's mean and covariance at the new t; stops when the centre
    moves less than ``tol`` standard deviations (the rule that x solves stays in ``prob.grid``;
    the last move is ``prob.law_shift``).
    The rule over the class fields is shifted onto the tilted mean at every readout node.
    Returns (x, function evaluations)."""
    k, m = prob.k, prob.m
    tau = x[:k * m].reshape(k, m)
    part = prob.bulk_part(tau)
    if part is None:
        return x, 0
    prob.bulk.shifts = _LAW_SHIFTS  # the law's outer nodes carry large tilts
    H = prob.bulk.hessian(part[2], tau)
    try:
        centre, chol = part[2], np.linalg.cholesky(np.linalg.inv(-H))
    except np.linalg.LinAlgError:
        return x, 0
    nit = 0
    prob.law_shift = np.inf  # how far the law's centre moved in the last re-centring (sd)
    for _ in range(rounds):
        prob.grid = (centre, chol, nodes)
        x, nfev = _kkt_newton(prob, x, active, atol)
        nit += nfev
        law = prob.bulk.readout_law(x[:k * m].reshape(k, m), centre, chol, nodes)
        try:
            new_chol = np.linalg.cholesky(law["cov"])
        except np.linalg.LinAlgError:
            break
        sd = np.sqrt(np.diag(law["cov"]))
        shift = float(np.max(np.abs(law["mean"] - centre) / sd))
        shift = max(shift, float(np.max(np.abs(new_chol - chol)) / sd.min()))
        prob.law_shift = shift
        if shift < tol:
            break
        centre, chol = law["mean"], new_chol
    return x, nit


def _strengths(prob, tau, B, faces):
    """Non-negative outlier strengths sigma^2 from the output constraint (least squares)."""
    terms = prob.outlier_terms(tau, faces) or []
    target = (prob.Yc - prob.T * tau - B).ravel()
    if not terms:
        return np.zeros(0)
    return optimize.nnls(np.stack([u.ravel() for _, u in terms], axis=1), target)[0]
