"""Finite-P readout posterior of the sigmoid toy task: the exact readout integral (seed 000
Fig. 4a caption "finite P correction"; notes §4.3 last bullet [RECON]).

For the toy the readout marginal is exactly ``P(a) ∝ exp(P g_t(a))`` (N -> infinity, any P); the
smooth convex ``Phi_P(t) = (1/P) log int da exp(P g_t(a)) - sum_c rho_c t_c . y_c`` is minimised by
Newton. Its stationarity is the exact finite-P output constraint
``<a^r psi'(t_c . a)>_{P(a)} = y_c^r``.

The a-integral: for m <= 3 readouts on a lattice (trapezoid rule; the box grows until the
integrand on its faces is negligible, so peaks that overlap, merge or flatten near T_c are
integrated as one function); for larger m, or a lattice too fine at large P, by Gauss-Hermite
rules around every local maximum of g, each weighted by its peak's share of a partition of unity
(nothing is counted twice where peaks overlap).
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.special import ndtr

from .._code_core import _linear_part

__all__: list[str] = []


def _tensor_rule(m, nq):
    x, w = np.polynomial.hermite_e.hermegauss(nq)
    w = w / np.sqrt(2.0 * np.pi)
    X = np.array(list(itertools.product(x, repeat=m)))
    logW = np.array([np.sum(np.log(c)) for c in itertools.product(w, repeat=m)])
    # int f(a) da = det(L) E_x[f(a0 + L x) / N(x)],  1/N(x) = (2 pi)^(m/2) exp(|x|^2/2)
    return X, logW + 0.5 * np.sum(X * X, axis=1) + 0.5 * m * np.log(2.0 * np.pi)


# Readouts of dimension m <= GRID_MAX_M are integrated on a lattice, higher m peak by peak.
GRID_MAX_M = 3
# lattice: spacing = GRID_STEP x the smallest peak standard deviation; the box reaches
# GRID_MARGIN of the widest standard deviations beyond the peaks and is grown until the log
# integrand on its faces is GRID_EDGE below the maximum
GRID_STEP = 0.75
GRID_MARGIN = 8.0
GRID_EDGE = 36.0
GRID_MAX_POINTS = 4_000_000
# above this many points at the start the per-peak rule is used (large P: separated peaks)
GRID_START_POINTS = 400_000


def _peak_gaussians(A, Hs, P):
    """Laplace covariances ``(-P H_j)^-1`` of the peaks and their Cholesky factors."""
    covs, chols = [], []
    for H in Hs:
        cov = np.linalg.inv(-P * H)
        cov = 0.5 * (cov + cov.T)
        covs.append(cov)
        chols.append(np.linalg.cholesky(cov))
    return np.array(covs), chols


def _peak_log_shares(pts, A, g, chols, P):
    """(n_pts, n_peaks): log w_j(a) = log[pi_j N_j(a) / sum_k pi_k N_k(a)].

    The shares are a partition of unity (sum_j w_j = 1 everywhere): N_j is the Laplace
    Gaussian of peak j and pi_j its Laplace mass ``exp(P g_j) sqrt(det cov_j)``. They split
    the readout posterior among the peaks where peaks overlap (P_gamma, per-peak means), and
    let the per-peak rule integrate each peak's share only, so nothing is counted twice."""
    logq = np.empty((len(pts), A.shape[0]))
    for k, L in enumerate(chols):
        x = np.linalg.solve(L, (pts - A[k]).T).T
        # log pi_k + log N_k(a) up to a common constant: sqrt(det cov_k) cancels
        logq[:, k] = P * g[k] - 0.5 * np.sum(x * x, axis=1)
    mx = logq.max(axis=1, keepdims=True)
    return logq - (mx + np.log(np.exp(logq - mx).sum(axis=1, keepdims=True)))


def _peak_nodes(A, g, chols, P, rule):
    """Per-peak tensor Gauss-Hermite nodes, each weighted by its peak's share."""
    X, logw = rule
    pts = np.vstack([A[j] + X @ L.T for j, L in enumerate(chols)])
    which = np.repeat(np.arange(A.shape[0]), X.shape[0])
    logint = np.concatenate([logw + np.sum(np.log(np.diag(L))) for L in chols])
    shares = _peak_log_shares(pts, A, g, chols, P)
    return pts, logint + shares[np.arange(len(pts)), which]


def _initial_reach(covs, P):
    """How far the lattice box first extends beyond the peaks, per axis: GRID_MARGIN Laplace
    standard deviations, but at most where a Gaussian of unit curvature (the prior term of g)
    has fallen by GRID_EDGE / P; the box then grows where the integrand is not yet negligible
    (a flat direction near T_c has a huge Laplace width but a quartic, narrower, tail)."""
    sd = np.sqrt(np.max(np.diagonal(covs, axis1=1, axis2=2), axis=0))
    return np.minimum(GRID_MARGIN * sd, np.sqrt(2.0 * GRID_EDGE / P))


def _lattice_nodes(A, covs, h, P, lo=None, hi=None):
    """Points of the lattice h Z^m in the box around the peaks (integer corners lo, hi)."""
    m = A.shape[1]
    if lo is None:
        reach = _initial_reach(covs, P)
        lo = np.floor((A.min(axis=0) - reach) / h).astype(int)
        hi = np.ceil((A.max(axis=0) + reach) / h).astype(int)
    n = int(np.prod(hi - lo + 1))
    if n > GRID_MAX_POINTS:
        raise RuntimeError(f"the readout lattice needs {n} points (> {GRID_MAX_POINTS})")
    axes = [h * np.arange(lo[i], hi[i] + 1) for i in range(m)]
    pts = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, m)
    return pts, lo, hi


# psi on the lattice: quintic Hermite interpolation of (psi, psi', psi'') tabulated at this
# spacing in h (interpolation error ~ PSI_TABLE_STEP^6 psi^(6) / 1e4, below 1e-12 here)
PSI_TABLE_STEP = 0.01

# quintic Hermite basis on [0, 1] and its first two derivatives: rows multiply
# (f0, f1, d f'0, d f'1, d^2 f''0, d^2 f''1) for the step d
_Q5 = np.array([
    [1, 0, 0, -10, 15, -6],
    [0, 0, 0, 10, -15, 6],
    [0, 1, 0, -6, 8, -3],
    [0, 0, 0, -4, 7, -3],
    [0, 0, 0.5, -1.5, 1.5, -0.5],
    [0, 0, 0, 0.5, -1, 0.5],
])


def _tabulated_psi(neuron, H):
    """(psi, psi', psi'') at the tilts H from a table over [min H, max H]: psi is the quintic
    Hermite interpolant of the tabulated (psi, psi', psi''), psi' and psi'' its derivatives, so
    the three stay consistent. The lattice needs psi at up to millions of tilts per Newton step;
    the table needs a few thousand quadratures."""
    lo, hi = float(H.min()), float(H.max())
    d = PSI_TABLE_STEP
    n = max(2, int(np.ceil((hi - lo) / d)) + 1)
    x = lo + d * np.arange(n)
    f, f1, f2 = neuron.psi(x)
    j = np.minimum(((H - lo) / d).astype(int), n - 2)
    u = (H - lo) / d - j
    coef = np.stack([f[j], f[j + 1], d * f1[j], d * f1[j + 1], d * d * f2[j], d * d * f2[j + 1]])
    c = np.tensordot(_Q5.T, coef, axes=1)  # polynomial coefficients in u, (6, ...)
    p0 = c[5]
    p1 = c[5] * 5
    p2 = c[5] * 20
    for k in range(4, -1, -1):
        p0 = p0 * u + c[k]
        if k >= 1:
            p1 = p1 * u + k * c[k]
        if k >= 2:
            p2 = p2 * u + k * (k - 1) * c[k]
    return p0, p1 / d, p2 / (d * d)


def _lattice_values(neuron, t, A, covs, h, P):
    """g on a lattice box that holds all the mass: grown while a face is within GRID_EDGE/P."""
    lo = hi = None
    for _ in range(20):
        pts, lo, hi = _lattice_nodes(A, covs, h, P, lo, hi)
        p0, p1, p2 = _tabulated_psi(neuron, pts @ t.T)
        val = -0.5 * np.sum(pts * pts, axis=1) + p0 @ neuron.rho
        gmax = val.max()
        shape = tuple(hi - lo + 1)
        V = (val - gmax).reshape(shape)
        grow = np.zeros((len(shape), 2), dtype=bool)
        for i in range(len(shape)):
            lo_face = np.take(V, 0, axis=i).max()
            hi_face = np.take(V, shape[i] - 1, axis=i).max()
            grow[i] = lo_face > -GRID_EDGE / P, hi_face > -GRID_EDGE / P
        if not grow.any():
            return pts, val, p1, p2
        step = np.maximum(1, (np.asarray(shape) // 4))
        lo = lo - step * grow[:, 0]
        hi = hi + step * grow[:, 1]
    raise RuntimeError("the readout lattice did not close around the posterior mass")


def _finite_P_state(t, search, Yc, P, rule, T=0.0):
    """Phi_P (+ (T/2) sum_c rho_c |t_c|^2 at rescaled temperature T), its gradient
    F (= rho_c (<a psi'_c> - y_c + T t_c)) and Hessian J at t, plus peak data.

    ``rule``: ("grid", h) integrates exp(P g) on the lattice h Z^m (trapezoid rule, spectrally
    accurate for this smooth integrand; exact bookkeeping however the peaks overlap or merge);
    ("peaks", X, logw) by the per-peak Gauss-Hermite rule weighted with the peak shares."""
    neuron = search.neuron
    k, m, rho = neuron.k, neuron.m, neuron.rho
    A, g, Hs = search.maxima(t, full=True)
    covs, chols = _peak_gaussians(A, Hs, P)
    if rule[0] == "grid":
        h = rule[1]
        pts, val, p1, p2 = _lattice_values(neuron, t, A, covs, h, P)
        li = P * val + m * np.log(h)
    else:
        pts, logw = _peak_nodes(A, g, chols, P, rule[1:])
        val, _, p1, p2 = neuron.evaluate(pts, t, order=0)
        li = logw + P * val
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
    return dict(phi=phi_P, F=F, J=J, A=A, g=g, hess=Hs, covs=covs, chols=chols,
                mean_out=np.einsum("k,kc,kr->cr", p, p1, pts),
                nodes=(pts, p, p1, p2))


def _peak_weights(state, P):
    """Each peak's share of the posterior at a final state: its weight P_gamma (once per solve,
    not in the Newton loop: the shares cost as much as the lattice's psi)."""
    pts, p = state["nodes"][:2]
    return p @ np.exp(_peak_log_shares(pts, state["A"], state["g"], state["chols"], P))


def _quadrature_rule(search, t, P, nq):
    """The lattice (m <= GRID_MAX_M; spacing from the peaks at the start, then fixed so the
    discrete objective is smooth in t) or the per-peak Gauss-Hermite rule."""
    m = search.neuron.m
    if m <= GRID_MAX_M and search.neuron.activation != "linear":  # linear: one exact Gaussian
        A, g, Hs = search.maxima(t, full=True)
        covs, _ = _peak_gaussians(A, Hs, P)
        h = GRID_STEP * min(float(np.sqrt(np.linalg.eigvalsh(c)[0])) for c in covs)
        reach = _initial_reach(covs, P)
        if np.prod((A.max(axis=0) - A.min(axis=0) + 2 * reach) / h + 1) <= GRID_START_POINTS:
            return ("grid", h)
    return ("peaks",) + _tensor_rule(m, nq)


def _code_summary(nodes, threshold, class_sizes):
    """Fractions, mean readouts and mean activations of the codes of a finite-P posterior.

    A neuron's code is read off as the sampler and the paper do: its empirical mean activation
    over the n_c training inputs of each class, thresholded. Given a the n_c activations are
    i.i.d. with mean psi'(h_c) and variance psi''(h_c) (h_c = t_c . a), and the empirical mean is
    taken normal (central limit; the activations are bounded): class c is 'on' with probability
    q_c(a) = Phi((psi'_c - threshold) / s_c), s_c^2 = psi''_c / n_c, independently over classes.
    Then P(code) = E_a[prod_c q_c or 1 - q_c], <a | code> and <mean activation | code> (its
    truncated-normal mean) follow from the quadrature nodes. ``class_sizes`` None: n_c -> inf
    (the code of a is the pattern of psi'(h_c) > threshold)."""
    pts, p, p1, p2 = nodes
    k = p1.shape[1]
    if class_sizes is None:
        on = (p1 > threshold).astype(float)
        q, upper, lower = on, p1 * on, p1 * (1.0 - on)
    else:
        s = np.sqrt(np.maximum(p2, 0.0) / np.asarray(class_sizes, dtype=float)) + 1e-300
        z = (p1 - threshold) / s
        q = ndtr(z)
        dens = s * np.exp(-0.5 * z * z) / np.sqrt(2.0 * np.pi)
        upper, lower = p1 * q + dens, p1 * (1.0 - q) - dens  # E[mean 1(on)], E[mean 1(off)]
    out = {}
    for key in range(1 << k):
        bits = np.array([(key >> c) & 1 for c in range(k)], dtype=bool)
        side = np.where(bits, q, 1.0 - q)  # (n, k)
        w = p * np.prod(side, axis=1)
        frac = float(w.sum())
        if frac <= 1e-9:  # codes no neuron shows
            continue
        acts = np.empty(k)
        for c in range(k):
            rest = np.prod(np.delete(side, c, axis=1), axis=1)
            acts[c] = float(np.sum(p * rest * np.where(bits[c], upper[:, c], lower[:, c]))) / frac
        label = "-".join(str(int(b)) for b in bits)
        out[label] = (frac, (w @ pts) / frac, acts)
    return out


def _finite_P_solve(t0, search, Yc, P, nq, tol, maxiter, T=0.0):
    """Damped Newton on the finite-P output constraint; one iteration = one Newton step (one
    Jacobian solve and its backtracking line search). Returns (t, state, nit, converged,
    stalled): ``stalled`` when the line search found no decrease (otherwise a failure means
    the ``maxiter`` budget ran out)."""
    rule = _quadrature_rule(search, t0, P, nq)
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
