"""Shared core of the single-neuron (code) solvers of seed 000: one implementation of the pieces
that the sigmoid toy solver, the general-data sigmoid solver, the population solver and the ReLU
solvers all use.

Source: A. van Meegen & H. Sompolinsky, *Coding schemes in neural networks learning
classification tasks*, Nat. Commun. 16, 3354 (2025) (seed 000); our notes
``spec/coding_schemes.md`` §4.3-4.4 and §5.2 [RECON].

* :class:`_ToyNeuron`: ``g(a) = -|a|^2/2 + sum_c rho_c psi(t_c . a)`` of the orthogonal toy task
  (k classes, m outputs, ``psi(h) = log E exp(h phi(z))``) with its derivatives and local maxima;
* :class:`_Search`: tracking of all local maxima while the conjugate field t moves;
* :func:`_exact_system`: the P -> infinity code equations of the toy (stationarity, degeneracy,
  normalisation, output) with their analytic Jacobian;
* :func:`_anneal_and_refine`: the annealed smoothing + exact refinement loop (notes §4.3 steps
  2-5) shared by the toy and the general-data solvers, with the code-set bookkeeping
  (:func:`_split_others`, :func:`_join_tied`, :func:`_drop_code`, :func:`_add_code`);
* :func:`_select_from_system`: the choice among non-unique code weights [OURS];
* :func:`_newton_lstsq`: Newton for square, possibly singular but consistent systems.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from .._numerics import _backtrack, _keep_maxima, _saddle_free_step
from ..kernels._tilted import _moments_flat, _saddle_flat

__all__: list[str] = []


# --------------------------------------------------------------------------------------------
# multi-start Newton ascent (shared by the toy and the general single-neuron problems)
# --------------------------------------------------------------------------------------------


class _ToyNeuron:
    """g(a) = -|a|^2/2 + sum_c rho_c psi(t_c . a) and its derivatives for batches of a.

    ``rho`` (k,) class fractions, ``m`` number of outputs (dimension of a; default k)."""

    def __init__(self, rho, activation, fluctuations, n_nodes, m=None):
        self.rho = rho
        self.k = rho.size  # classes
        self.m = rho.size if m is None else m  # outputs (dimension of a)
        self.activation = activation
        self.fluctuations = fluctuations
        self.n_nodes = n_nodes

    def psi(self, H):
        flat = np.ascontiguousarray(H, dtype=float).reshape(-1)
        if self.fluctuations:
            out = _moments_flat(flat, self.activation, self.n_nodes)
        else:
            out = _saddle_flat(flat, self.activation)[:3]
        return tuple(o.reshape(H.shape) for o in out)

    def evaluate(self, A, t, order=2):
        """Values, gradients and Hessians of g at the rows of A (k, m)."""
        H = A @ t.T
        p0, p1, p2 = self.psi(H)
        val = -0.5 * np.sum(A * A, axis=1) + p0 @ self.rho
        if order == 0:
            return val, H, p1, p2
        grad = -A + (p1 * self.rho) @ t
        hess = -np.eye(self.m) + np.einsum("kc,ci,cj->kij", p2 * self.rho, t, t)
        return val, grad, hess, H, p1, p2

    def local_maxima(self, t, starts, *, tol=1e-12, maxiter=200, dedup=1e-6):
        """All distinct local maxima reached by damped (saddle-free) Newton ascent from starts.

        Returns (A (n, m), g (n,), hess (n, m, m)) sorted by decreasing g. Points whose Hessian
        is not negative definite (saddles, unconverged) are dropped.
        """
        # Not _general_core._ascend_to_maxima: the m-dimensional toy always takes the
        # saddle-free step with an L2 trust radius of 1 and absolute de-duplication, the
        # settings its validated tables were computed with.
        A = np.array(starts, dtype=float, copy=True)
        active = np.ones(A.shape[0], dtype=bool)
        for _ in range(maxiter):
            idx = np.flatnonzero(active)
            if idx.size == 0:
                break
            val, grad, hess, *_ = self.evaluate(A[idx], t)
            done = np.max(np.abs(grad), axis=1) < tol
            active[idx[done]] = False
            idx, val, grad, hess = idx[~done], val[~done], grad[~done], hess[~done]
            if idx.size == 0:
                break
            step = _saddle_free_step(hess, grad)
            nrm = np.linalg.norm(step, axis=1)
            alpha = np.minimum(1.0, 1.0 / np.maximum(nrm, 1e-300))  # trust radius 1
            alpha = _backtrack(lambda X: self.evaluate(X, t, order=0)[0], A[idx], step, alpha,
                               val, 1e-14, 30)
            A[idx] = A[idx] + alpha[:, None] * step
        val, grad, hess, *_ = self.evaluate(A, t)
        keep = _keep_maxima(A, val, grad, hess, tol, dedup, relative=False)
        return A[keep], val[keep], hess[keep]


def _vertex_starts(rho, t):
    """Saturated-code guesses a_b = sum_c rho_c b_c t_c for every binary code b in {0,1}^k."""
    m = rho.size
    B = np.array(list(itertools.product((0.0, 1.0), repeat=m)))
    return (B * rho) @ t


class _Search:
    """Tracks the local maxima of g_t while t moves (warm starts + code vertices + random)."""

    def __init__(self, neuron, n_random, rng):
        self.neuron = neuron
        self.n_random = n_random
        self.rng = rng
        self.known = np.zeros((0, neuron.m))

    def maxima(self, t, *, full=False, n_random=None):
        """Local maxima of g_t. ``full``: also start from the code vertices and random points
        (|a| <= sum_c rho_c |t_c| bounds every stationary point since 0 < psi' < 1);
        otherwise only from the maxima found last time (warm start while t moves a little)."""
        rho = self.neuron.rho
        if full or self.known.shape[0] == 0:
            k = self.n_random if n_random is None else n_random
            R = float(np.sum(rho * np.linalg.norm(t, axis=1))) + 1e-3
            rand = self.rng.uniform(-R, R, (k, self.neuron.m))
            starts = np.vstack([self.known, _vertex_starts(rho, t), rand])
        else:
            starts = self.known
        A, g, H = self.neuron.local_maxima(t, starts)
        if A.shape[0] == 0:  # cannot happen for bounded phi; keep the caller informative
            raise RuntimeError("no local maximum of g found")
        self.known = A.copy()
        return A, g, H


def _linear_part(rho, t, Yc, T):
    """The explicit part ``sum_c rho_c t_c . (y_c - T t_c / 2)`` of the toy's outer objective
    ``Phi(t) = max_a g_t(a) - sum_c rho_c t_c . y_c + (T/2) sum_c rho_c |t_c|^2`` (subtracted)."""
    return float(np.sum(rho * np.sum(t * (Yc - 0.5 * T * t), axis=1)))


def _smoothed(t_flat, search, Yc, beta, T=0.0):
    """Phi_beta(t) = (1/beta) log sum_gamma exp(beta g_gamma) - sum_c rho_c t_c . y_c
    + (T/2) sum_c rho_c |t_c|^2 (the last term: rescaled temperature T, notes §2.3), gradient.

    The maxima are searched from the warm starts and the 2^k code vertices at every call (no
    random starts: those are used between stages)."""
    neuron = search.neuron
    k, m, rho = neuron.k, neuron.m, neuron.rho
    t = t_flat.reshape(k, m)
    A, g, _ = search.maxima(t, full=True, n_random=0)
    gmax = g[0]
    w = np.exp(beta * (g - gmax))
    Zw = w.sum()
    w /= Zw
    H = A @ t.T
    p1 = neuron.psi(H)[1]
    val = gmax + np.log(Zw) / beta - _linear_part(rho, t, Yc, T)
    grad = rho[:, None] * (np.einsum("k,kc,ki->ci", w, p1, A) - Yc + T * t)
    return val, grad.ravel()


def _exact_system(x, neuron, Yc, n, T=0.0):
    """Residuals and Jacobian of the P -> infinity equations in x = [t, a_1..a_n, P_1..P_n]
    (t: k classes x m outputs); at rescaled temperature T the output rows read
    ``sum_gamma P_gamma a_gamma psi'_c = y_c - T t_c`` (notes §2.3 (S1))."""
    k, m, rho = neuron.k, neuron.m, neuron.rho
    km = k * m
    t = x[:km].reshape(k, m)
    A = x[km: km + n * m].reshape(n, m)
    Pg = x[km + n * m:]
    val, grad, hess, H, p1, p2 = neuron.evaluate(A, t)
    F_stat = grad.ravel()  # n*m
    F_deg = val[1:] - val[0]  # n-1
    F_norm = np.array([Pg.sum() - 1.0])
    O = np.einsum("g,gc,gr->cr", Pg, p1, A)  # output O[c, r]
    F_out = (O - Yc + T * t).ravel()
    F = np.concatenate([F_stat, F_deg, F_norm, F_out])
    N = F.size
    J = np.zeros((N, N))
    it, ia, ip = 0, km, km + n * m
    # stationarity rows
    for g_ in range(n):
        r0 = g_ * m
        J[r0:r0 + m, ia + g_ * m: ia + (g_ + 1) * m] = hess[g_]
        for c in range(k):
            blk = rho[c] * (p2[g_, c] * np.outer(t[c], A[g_]) + p1[g_, c] * np.eye(m))
            J[r0:r0 + m, it + c * m: it + (c + 1) * m] = blk

    # degeneracy rows: d g_gamma = grad . da + sum_c rho_c psi'_c a . dt_c
    def dg_row(g_):
        row = np.zeros(N)
        row[ia + g_ * m: ia + (g_ + 1) * m] = grad[g_]
        for c in range(k):
            row[it + c * m: it + (c + 1) * m] = rho[c] * p1[g_, c] * A[g_]
        return row

    r = n * m
    row0 = dg_row(0)
    for g_ in range(1, n):
        J[r + g_ - 1] = dg_row(g_) - row0
    r += n - 1
    J[r, ip: ip + n] = 1.0
    r += 1
    # output rows: O[c, r'] = sum_g P_g psi'_gc a_g^r'
    for c in range(k):
        for rr in range(m):
            row = r + c * m + rr
            J[row, ip: ip + n] = p1[:, c] * A[:, rr]
            for g_ in range(n):
                da = Pg[g_] * p2[g_, c] * A[g_, rr] * t[c]
                da[rr] += Pg[g_] * p1[g_, c]
                J[row, ia + g_ * m: ia + (g_ + 1) * m] = da
            J[row, it + c * m: it + (c + 1) * m] = np.einsum("g,g,g,gj->j", Pg, p2[:, c],
                                                             A[:, rr], A)
            J[row, it + c * m + rr] += T
    return F, J


def _residual_parts(F, n, dim):
    """Max-abs residuals of an exact code system F = [stationarity (n dim), degeneracy (n-1),
    normalisation (1), output]."""
    return {
        "stationarity": float(np.max(np.abs(F[: n * dim]))),
        "degeneracy": float(np.max(np.abs(F[n * dim: n * dim + n - 1]), initial=0.0)),
        "normalisation": float(abs(F[n * dim + n - 1])),
        "output": float(np.max(np.abs(F[n * dim + n:]))),
    }


# --------------------------------------------------------------------------------------------
# code-set bookkeeping
# --------------------------------------------------------------------------------------------


def _split_others(points, values, active, tied, dist_tol):
    """Maxima ``points`` (values ``values``) that are not in the ``active`` code set (max-abs
    distance > ``dist_tol``), and the gap = their best value minus the tied value (-inf if none)."""
    d = np.array([np.min(np.max(np.abs(active - p), axis=1)) for p in points])
    other = d > dist_tol
    gap = float(np.max(values[other]) - tied) if np.any(other) else -np.inf
    return gap, points[other], values[other]


def _join_tied(active, Pg, other, other_vals, tied):
    """Maxima tied with the solution but outside the solved set join it with weight 0.
    Returns (active, Pg, other, other_vals, gap)."""
    is_tied = np.abs(other_vals - tied) <= 1e-9 * (1.0 + abs(tied))
    active = np.vstack([active, other[is_tied]])
    Pg = np.concatenate([np.clip(Pg, 0.0, None), np.zeros(int(is_tied.sum()))])
    other, other_vals = other[~is_tied], other_vals[~is_tied]
    gap = float(np.max(other_vals) - tied) if other_vals.size else -np.inf
    return active, Pg, other, other_vals, gap


def _drop_code(x, off, n, dim, j, floor):
    """x = [t (off), points (n dim), weights (n)] without code j; the weights are clipped at
    ``floor`` and renormalised."""
    sel = np.arange(n) != j
    Zc = x[off: off + n * dim].reshape(n, dim)[sel]
    Pc = np.clip(x[off + n * dim:][sel], floor, None)
    return np.concatenate([x[:off], Zc.ravel(), Pc / Pc.sum()])


def _merge_duplicate_codes(x, off, n, dim, dist_tol):
    """x = [t (off), points (n dim), weights (n)] with codes closer than ``dist_tol`` (max-abs)
    merged into the first of them, weights summed. Returns (x, n)."""
    Z = x[off: off + n * dim].reshape(n, dim)
    Pg = x[off + n * dim:]
    keep, weights = [], []
    for j in range(n):
        for i, k in enumerate(keep):
            if np.max(np.abs(Z[j] - Z[k])) <= dist_tol:
                weights[i] += Pg[j]
                break
        else:
            keep.append(j)
            weights.append(Pg[j])
    return np.concatenate([x[:off], Z[keep].ravel(), np.array(weights)]), len(keep)


def _add_code(x, off, n, dim, z, weight=1e-3):
    """x = [t (off), points (n dim), weights (n)] with code z added at a small weight."""
    Zc = np.vstack([x[off: off + n * dim].reshape(n, dim), z])
    Pc = np.concatenate([x[off + n * dim:], [weight]])
    return np.concatenate([x[:off], Zc.ravel(), Pc / Pc.sum()])


@dataclass
class _CodeProblem:
    """What :func:`_anneal_and_refine` needs from a single-neuron code problem.

    shape : shape of the conjugate field t;  dim : dimension of one code point (a or z);
    search : object with ``maxima(t, full=, n_random=) -> (points, values, ...)``;
    smoothed(t_flat, beta) -> (value, gradient) of the smoothed outer objective;
    system(x, n) -> (F, J) of the exact equations in x = [t, points, weights];
    method, options : scipy.optimize.minimize settings of the smoothing stage;
    hybr_maxfev, lm_maxiter : budgets of the exact refinement (hybr, then Levenberg-Marquardt);
    finish(x, n, beta, nit, resid) -> dict with ``converged`` (and ``message``).
    """

    shape: tuple
    dim: int
    search: object
    smoothed: Callable
    system: Callable
    method: str
    options: dict
    hybr_maxfev: int
    lm_maxiter: int
    finish: Callable


def _anneal_and_refine(prob: _CodeProblem, t0, betas, n_random, tol):
    """Annealed smoothing + exact refinement (notes §4.3 steps 2-5).

    For each beta: minimise the smoothed outer objective from the current t, take the maxima
    whose weight exp(beta (g - g_max)) is non-negligible as candidate codes, and solve the exact
    square system for them (hybr, then Levenberg-Marquardt when the Jacobian is singular). A
    candidate set whose solve fails loses its lowest member; a code whose weight comes out
    negative is dropped. A solved set is passed to ``prob.finish`` (global check, weights)."""
    off = int(np.prod(prob.shape))
    dim = prob.dim
    search = prob.search
    t = t0.copy()
    nit = 0
    last = "no stage attempted"
    for beta in betas:
        search.maxima(t, full=True)
        res = optimize.minimize(prob.smoothed, t.ravel(), args=(beta,), jac=True,
                                method=prob.method, options=prob.options)
        nit += int(res.nit)
        t = res.x.reshape(prob.shape)
        pts, vals = search.maxima(t, full=True, n_random=3 * n_random)[:2]
        cand = np.flatnonzero(beta * (vals - vals[0]) > -10.0)
        w = np.exp(beta * (vals[cand] - vals[0]))
        w /= w.sum()
        X_c, t_c = pts[cand], t
        while X_c.shape[0] >= 1:
            n = X_c.shape[0]
            x0 = np.concatenate([t_c.ravel(), X_c.ravel(), w])
            sol = optimize.root(prob.system, x0, args=(n,), jac=True, method="hybr",
                                options={"xtol": 1e-13, "maxfev": prob.hybr_maxfev})
            F = prob.system(sol.x, n)[0]
            resid = float(np.max(np.abs(F)))
            nit += int(sol.nfev)
            if resid > tol:  # singular Jacobian (non-unique weights): Levenberg-Marquardt
                sol = optimize.root(prob.system, x0, args=(n,), jac=True, method="lm",
                                    options={"xtol": 1e-15, "ftol": 1e-15,
                                             "maxiter": prob.lm_maxiter})
                F = prob.system(sol.x, n)[0]
                resid = float(np.max(np.abs(F)))
                nit += int(sol.nfev)
            Pg = sol.x[off + n * dim:]
            if resid > tol:  # drop the lowest candidate and retry from the smoothed solution
                last = f"exact refinement with {n} codes did not converge (residual {resid:.2e})"
                X_c, w, t_c = X_c[:-1], w[:-1] / w[:-1].sum(), t
                continue
            if np.min(Pg) < -1e-9:
                drop = int(np.argmin(Pg))
                keep = np.arange(n) != drop
                X_c = sol.x[off: off + n * dim].reshape(n, dim)[keep]
                w = np.clip(Pg[keep], 1e-3, None)
                w /= w.sum()
                t_c = sol.x[:off].reshape(prob.shape)
                last = f"a code weight came out negative ({Pg[drop]:.3g}); dropped it"
                continue
            fin = prob.finish(sol.x, n, beta, nit, resid)
            if fin["converged"]:
                return fin
            last = fin["message"]
            break
    return dict(t=t, converged=False, nit=nit,
                message=f"no self-consistent code set found ({last}); try another t0, more "
                        f"n_random, or a larger anneal schedule")


# --------------------------------------------------------------------------------------------
# non-unique weights; singular Newton
# --------------------------------------------------------------------------------------------


def _select_from_system(M, Pg, hess):
    """Resolve non-unique code weights [OURS].

    At fixed t the weights solve a linear system M w = b (output constraint and sum w = 1). If its
    rank is below n there is a family ``w = Pg + N s`` (N: null space). At large finite P the
    weights are ``w_gamma ∝ det(-grad_a^2 g(a_gamma))^(-1/2) exp(grad_t g_gamma . delta)`` with
    t = t* + delta/P (Laplace), an exponential family in the statistics grad_t g_gamma; matching
    the output constraint selects its unique member, i.e. the member of the family with minimal
    KL divergence to q_gamma ∝ det(-grad_a^2 g)^(-1/2). Returns (weights, N (n x k)).
    """
    U, S, Vt = np.linalg.svd(M)
    rank = int(np.sum(S > 1e-9 * S[0]))
    n = M.shape[1]
    if rank >= n:
        return Pg, np.zeros((n, 0))
    N = Vt[rank:].T
    logq = np.array([-0.5 * np.linalg.slogdet(-H)[1] for H in hess])
    logq -= logq.max()

    def f(s):
        w = Pg + N @ s
        if np.any(w <= 0):
            return np.inf, None
        r = np.log(w) - logq
        return float(w @ r), N.T @ (r + 1.0)

    # interior start: maximise min(w) over the family (small LP)
    k = N.shape[1]
    c = np.zeros(k + 1)
    c[-1] = -1.0
    A_ub = np.hstack([-N, np.ones((n, 1))])
    lp = optimize.linprog(c, A_ub=A_ub, b_ub=Pg, bounds=[(None, None)] * k + [(None, 1.0)])
    if not lp.success or lp.x[-1] <= 0:  # the family touches the boundary only
        return Pg, N
    s = lp.x[:k]
    for _ in range(100):
        val, grad = f(s)
        w = Pg + N @ s
        Hs = (N.T / w) @ N
        d = -np.linalg.solve(Hs, grad)
        alpha = 1.0
        while f(s + alpha * d)[0] > val + 1e-4 * alpha * (grad @ d) and alpha > 1e-12:
            alpha *= 0.5
        s = s + alpha * d
        if np.max(np.abs(alpha * d)) < 1e-15:
            break
    return Pg + N @ s, N


