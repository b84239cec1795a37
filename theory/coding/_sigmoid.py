"""Redundant coding in sigmoidal non-lazy networks: the orthogonal toy task (L = 1, T = 0).

Source: A. van Meegen & H. Sompolinsky, *Coding schemes in neural networks learning
classification tasks*, Nat. Commun. 16, 3354 (2025) (seed 000), main text "Redundant coding
scheme" and Figs. 2, 4 [MT]; the self-consistency equations are the reconstruction of our notes
``spec/coding_schemes.md`` §2.3-2.4 and §4.2-4.3 [RECON] (the supplement B was not available).

Setting: one hidden layer, phi(z) = [1 + erf(sqrt(pi) z/2)]/2, readout prior variance
sigma_a^2 = 1/P, orthonormal inputs (K0 = I), class fractions rho_c and one target vector y_c per
class. The single-neuron posterior (poster form [MT/POSTER]) is

    P(a) = sum_gamma P_gamma delta(a - a_gamma),   P(z_mu | a) ∝ N(z_mu|0,1) exp(h_c phi(z_mu)),
    h_c = t_c . a   for input mu of class c,

with the class-wise conjugate field t (m x m, row c = t_c). With
``g(a) = -|a|^2/2 + sum_c rho_c psi(t_c . a)`` and ``psi(h) = log E exp(h phi(z))``
(:mod:`richlazy.theory.kernels._tilted`), the P -> infinity equations are [RECON, notes §4.3]

    stationarity   a_gamma = sum_c rho_c t_c psi'(t_c . a_gamma)          (grad g(a_gamma) = 0)
    degeneracy     g(a_1) = ... = g(a_n) = max_a g(a)                      (global maxima tie)
    output         sum_gamma P_gamma a_gamma^r psi'(t_c . a_gamma) = y_c^r,   sum P_gamma = 1.

They are the optimality conditions of the convex problem
``min_t Phi_inf(t) = max_a g_t(a) - sum_c rho_c t_c . y_c`` (notes §2.4): the P_gamma are the
convex-combination coefficients of the gradients of the tied maxima. A neuron's code is
``[psi'(h_c) > 1/2]_c``, i.e. ``h_c > 0`` (mean activation above phi(0) = 1/2).

Finite P (notes §4.3 last bullet, the "finite P correction" of the Fig. 4a caption): for the toy
the readout marginal is exactly ``P(a) ∝ exp(P g_t(a))`` (N -> infinity, any P); we minimise the
smooth convex ``Phi_P(t) = (1/P) log int da exp(P g_t(a)) - sum_c rho_c t_c . y_c`` with the
a-integral done by adaptive Gauss-Hermite quadrature around every local maximum (Laplace
Gaussian as weight; beyond-Laplace corrections included). Its stationarity is the exact finite-P
output constraint ``<a^r psi'(t_c . a)>_{P(a)} = y_c^r``.

``fluctuations=False`` replaces psi by the fluctuation-free psi_0 (z|a fluctuations neglected,
notes §4.4); this is the toy limit of :func:`solve_sigmoid_general` (general inputs K0, same
module, notes §4.4).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
from scipy import linalg, optimize, special

from .._results import SolverStatus, raise_if_failed
from ..checks import as_float_array, as_float_matrix, check_int, check_pos_float
from ..kernels._tilted import _check_tilted_activation, _moments_flat, _saddle_flat, tilted_density

__all__ = [
    "SigmoidToySolution",
    "solve_sigmoid_toy",
    "SigmoidGeneralSolution",
    "solve_sigmoid_general",
    "sweep_y_minus",
    "code_transitions",
    "locate_code_transition",
    "toy_class_targets",
]


# --------------------------------------------------------------------------------------------
# the single-neuron problem of the toy task
# --------------------------------------------------------------------------------------------


class _ToyNeuron:
    """g(a) = -|a|^2/2 + sum_c rho_c psi(t_c . a) and its derivatives for batches of a."""

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
        A = np.array(starts, dtype=float, copy=True)
        active = np.ones(A.shape[0], dtype=bool)
        for _ in range(maxiter):
            idx = np.flatnonzero(active)
            if idx.size == 0:
                break
            val, grad, hess, *_ = self.evaluate(A[idx], t)
            gn = np.max(np.abs(grad), axis=1)
            done = gn < tol
            active[idx[done]] = False
            idx, val, grad, hess = idx[~done], val[~done], grad[~done], hess[~done]
            if idx.size == 0:
                break
            lam, V = np.linalg.eigh(hess)
            lam = -np.maximum(np.abs(lam), 1e-3)  # saddle-free Newton: an ascent direction
            Vt_g = np.einsum("kji,kj->ki", V, grad)
            step = -np.einsum("kij,kj->ki", V, Vt_g / lam)
            nrm = np.linalg.norm(step, axis=1)
            cap = np.minimum(1.0, 1.0 / np.maximum(nrm, 1e-300))  # trust radius 1
            alpha = cap.copy()
            # backtracking on g
            for _bt in range(30):
                trial = A[idx] + alpha[:, None] * step
                vt = self.evaluate(trial, t, order=0)[0]
                ok = vt >= val - 1e-14 * (1.0 + np.abs(val))
                if np.all(ok):
                    break
                alpha = np.where(ok, alpha, 0.5 * alpha)
            A[idx] = A[idx] + alpha[:, None] * step
        val, grad, hess, *_ = self.evaluate(A, t)
        lam = np.linalg.eigvalsh(hess)
        good = (np.max(np.abs(grad), axis=1) < 1e3 * tol) & (lam[:, -1] < 0)
        A, val, hess = A[good], val[good], hess[good]
        order = np.argsort(-val)
        A, val, hess = A[order], val[order], hess[order]
        keep = []
        for i in range(A.shape[0]):
            if all(np.max(np.abs(A[i] - A[j])) > dedup for j in keep):
                keep.append(i)
        return A[keep], val[keep], hess[keep]


def _vertex_starts(rho, t):
    """Saturated-code guesses a_b = sum_c rho_c b_c t_c for every binary code b in {0,1}^m."""
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


def _smoothed(t_flat, search, Yc, beta):
    """Phi_beta(t) = (1/beta) log sum_gamma exp(beta g_gamma) - sum_c rho_c t_c . y_c, gradient.

    The maxima are searched from the warm starts and the 2^m code vertices at every call (no
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
    val = gmax + np.log(Zw) / beta - np.sum(rho * np.sum(t * Yc, axis=1))
    grad = rho[:, None] * (np.einsum("k,kc,ki->ci", w, p1, A) - Yc)
    return val, grad.ravel()


def _exact_system(x, neuron, Yc, n):
    """Residuals and Jacobian of the P -> infinity equations in x = [t, a_1..a_n, P_1..P_n]
    (t: k classes x m outputs)."""
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
    F_out = (O - Yc).ravel()
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
    return F, J


# --------------------------------------------------------------------------------------------
# finite P: exact readout integral by adaptive Gauss-Hermite quadrature around each maximum
# --------------------------------------------------------------------------------------------


def _tensor_rule(m, nq):
    x, w = np.polynomial.hermite_e.hermegauss(nq)
    w = w / np.sqrt(2.0 * np.pi)
    X = np.array(list(itertools.product(x, repeat=m)))
    logW = np.array([np.sum(np.log(c)) for c in itertools.product(w, repeat=m)])
    # int f(a) da = det(L) E_x[f(a0 + L x) / N(x)],  1/N(x) = (2 pi)^(m/2) exp(|x|^2/2)
    return X, logW + 0.5 * np.sum(X * X, axis=1) + 0.5 * m * np.log(2.0 * np.pi)


def _finite_P_state(t, search, Yc, P, rule):
    """Phi_P, its gradient F (= rho_c (<a psi'_c> - y_c)) and Hessian J at t, plus peak data."""
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
    phi_P = logZ / P - np.sum(rho * np.sum(t * Yc, axis=1))
    G = rho[None, :, None] * p1[:, :, None] * pts[:, None, :]  # grad_t g at every node (k, c, i)
    Gm = np.einsum("k,kci->ci", p, G)
    F = Gm - rho[:, None] * Yc
    D = (G - Gm).reshape(len(p), k * m)
    J = P * (D.T * p) @ D
    for c in range(k):
        J[c * m:(c + 1) * m, c * m:(c + 1) * m] += rho[c] * np.einsum("k,k,ki,kj->ij", p, p2[:, c], pts, pts)
    weights = np.bincount(which, weights=p, minlength=A.shape[0])
    return dict(phi=phi_P, F=F, J=J, A=A, g=g, hess=Hs, covs=np.array(covs), weights=weights,
                mean_out=np.einsum("k,kc,kr->cr", p, p1, pts))


def _finite_P_solve(t0, search, Yc, P, nq, tol, maxiter):
    rule = _tensor_rule(search.neuron.m, nq)
    k, m = search.neuron.k, search.neuron.m
    t = t0.copy()
    st = _finite_P_state(t, search, Yc, P, rule)
    nit = 0
    for nit in range(1, maxiter + 1):
        if np.max(np.abs(st["F"])) < tol:
            break
        d = -np.linalg.solve(st["J"], st["F"].ravel()).reshape(k, m)
        slope = float(np.sum(st["F"] * d))
        alpha = 1.0
        for _ in range(40):
            try:
                new = _finite_P_state(t + alpha * d, search, Yc, P, rule)
                if new["phi"] <= st["phi"] + 1e-4 * alpha * slope + 1e-15 * abs(st["phi"]):
                    break
            except (RuntimeError, np.linalg.LinAlgError):
                pass
            alpha *= 0.5
        else:
            return t, st, nit, False
        t = t + alpha * d
        st = new
    return t, st, nit, bool(np.max(np.abs(st["F"])) < tol)


# --------------------------------------------------------------------------------------------
# result
# --------------------------------------------------------------------------------------------


def _check_labels(labels, m):
    lab = np.asarray(labels)
    if lab.ndim != 1 or lab.size == 0:
        raise ValueError(f"labels must be a non-empty 1-D array of class indices, got shape {lab.shape}")
    if not np.issubdtype(lab.dtype, np.integer):
        raise TypeError(f"labels must be integers (class indices 0..{m - 1}), got dtype {lab.dtype}")
    if lab.min() < 0 or lab.max() >= m:
        raise ValueError(f"labels must lie in 0..{m - 1}, got values in [{lab.min()}, {lab.max()}]")
    return lab.astype(int)


@dataclass(frozen=True)
class SigmoidToySolution(SolverStatus):
    """Mean-field posterior of the sigmoidal network on the orthogonal toy task (notes §4.3).

    Attributes (n codes, k classes, m outputs; k = m for one-hot tasks)
    ----------
    t : (k, m)              conjugate field, row c = t_c (the same for every input of class c).
    P_gamma : (n,)          fraction of neurons using code gamma (>= 0, sums to 1).
    a_gamma : (n, m)        their readout vectors (the posterior is sum P_gamma delta(a - a_gamma)).
    h : (n, k)              tilts h[gamma, c] = t_c . a_gamma.
    mean_activations : (n, k)  <phi(z)> on class c for code gamma: psi'(h) (psi_0'(h) without
                            fluctuations).
    activation_variances : (n, k)  Var(phi(z) | a_gamma) on class c: psi''(h) (0 without
                            fluctuations, where z|a is a delta at the mode).
    codes : (n, k) bool     mean_activations > threshold (the code, e.g. 1-1-0).
    preactivation_modes : (n, k)  maximiser z* of -z^2/2 + h phi(z) (the mode of P(z|a)).
    g_value : float         the tied maximal value of g (P = None) / log-partition per P.
    residuals : dict        max-abs residuals: "stationarity", "degeneracy", "output",
                            "normalisation" (P = None) or "output" and "stationarity" (finite P).
    global_gap : float      max g over the other local maxima minus the tied value (< 0: the
                            codes are the global maxima, as required).
    other_maxima : (k, m)   the other (metastable) local maxima of g at the solution, and
    other_g : (k,)          their g values (candidate "unlikely" coding schemes, MT).
    readout_covariances : (n, m, m)  finite P only: Laplace covariance (-P grad^2 g)^-1 of each
                            peak (zeros for P = None).
    weight_null_space : (n, k)  P = None: directions along which the weights could move without
                            violating any equation (k = 0: unique). For k > 0 the reported
                            P_gamma is the P -> infinity limit of the finite-P weights [OURS].
    ratios, class_targets, P, activation, fluctuations, threshold : the problem.
    """

    t: np.ndarray
    P_gamma: np.ndarray
    a_gamma: np.ndarray
    h: np.ndarray
    mean_activations: np.ndarray
    activation_variances: np.ndarray
    codes: np.ndarray
    preactivation_modes: np.ndarray
    g_value: float
    residuals: dict
    global_gap: float
    other_maxima: np.ndarray
    other_g: np.ndarray
    readout_covariances: np.ndarray
    weight_null_space: np.ndarray
    ratios: np.ndarray
    class_targets: np.ndarray
    P: int | None
    activation: str
    fluctuations: bool
    threshold: float
    mean_output_classes: np.ndarray = field(repr=False, default=None)

    @property
    def n_codes(self) -> int:
        return int(self.P_gamma.size)

    def code_strings(self) -> list[str]:
        """Codes as strings like '1-1-0' (class order 0..m-1), one per gamma."""
        return ["-".join("1" if b else "0" for b in row) for row in self.codes]

    def mean_output(self, labels) -> np.ndarray:
        """Posterior-mean network output on training inputs with the given class labels (P, m):
        ``f_r(x_mu) = sum_gamma P_gamma a_gamma^r psi'(t_c . a_gamma)``, c = labels[mu] (P = None;
        at finite P the exact ``<a^r psi'(t_c . a)>_{P(a)}``). Equals the targets at T = 0."""
        lab = _check_labels(labels, self.t.shape[0])
        return self.mean_output_classes[lab]

    def feature_kernel(self, labels) -> np.ndarray:
        """Posterior-averaged feature kernel K_1 on training inputs (P x P), Eq. (2) [MT]:

        ``K_1(mu, nu) = sum_gamma P_gamma <phi(z_mu) phi(z_nu)>_gamma``; given a_gamma the
        preactivations of different inputs are independent (K0 = I), so for mu != nu it is
        ``sum_gamma P_gamma psi'_c psi'_c'`` and on the diagonal
        ``sum_gamma P_gamma (psi''_c + psi'_c^2)`` (c, c' the classes of mu, nu)."""
        lab = _check_labels(labels, self.t.shape[0])
        M, V, w = self.mean_activations, self.activation_variances, self.P_gamma
        Kc = np.einsum("g,gc,gd->cd", w, M, M)
        diag = np.einsum("g,gc->c", w, V + M * M)
        K = Kc[lab][:, lab]
        K[np.diag_indices_from(K)] = diag[lab]
        return K

    def preactivation_density(self, z, gamma, c):
        """Conditional preactivation posterior P(z_mu | a_gamma) on an input of class c, the
        tilted density ``N(z|0,1) exp(h phi(z) - psi(h))``, h = t_c . a_gamma (Fig. 4c) [RECON]."""
        gamma = check_int("gamma", gamma, minimum=0)
        c = check_int("c", c, minimum=0)
        n, m = self.h.shape
        if gamma >= n:
            raise ValueError(f"gamma must be in 0..{n - 1}, got {gamma}")
        if c >= m:
            raise ValueError(f"c must be in 0..{m - 1}, got {c}")
        if not self.fluctuations:
            raise ValueError(
                "preactivation_density needs fluctuations=True; without fluctuations P(z|a) is a "
                "delta at preactivation_modes[gamma, c]"
            )
        return tilted_density(z, self.h[gamma, c], activation=self.activation)

    def readout_marginal_density(self, a, r):
        """Density of the readout component a^r (Fig. 4a). P = None: not a density (deltas),
        raises. Finite P: Laplace mixture ``sum_gamma P_gamma N(a | a_gamma^r, Sigma_gamma[r,r])``."""
        r = check_int("r", r, minimum=0)
        if r >= self.t.shape[1]:
            raise ValueError(f"r must be in 0..{self.t.shape[1] - 1}, got {r}")
        if self.P is None:
            raise ValueError("readout_marginal_density needs a finite P (P=None gives deltas)")
        a = as_float_array("a", a)
        var = self.readout_covariances[:, r, r]
        mu = self.a_gamma[:, r]
        dens = np.exp(-0.5 * (a[..., None] - mu) ** 2 / var) / np.sqrt(2 * np.pi * var)
        return (dens @ self.P_gamma)[()]


# --------------------------------------------------------------------------------------------
# solver
# --------------------------------------------------------------------------------------------


def toy_class_targets(m: int, *, y_plus: float = 1.0, y_minus: float = 0.0) -> np.ndarray:
    """Class target vectors of the toy task (seed 000 §Main theoretical result [MT]): row c is
    y_c with y_c^c = y_plus and y_c^r = y_minus for r != c."""
    m = check_int("m", m, minimum=1)
    return np.where(np.eye(m, dtype=bool), float(y_plus), float(y_minus))


def _check_toy_problem(ratios, class_targets):
    rho = as_float_array("ratios", ratios, ndim=1)
    m = rho.size
    if m == 0:
        raise ValueError("ratios must be non-empty")
    if np.any(rho <= 0):
        raise ValueError(f"ratios must be > 0 (class fractions rho_c), got {rho.tolist()}")
    if abs(rho.sum() - 1.0) > 1e-10:
        raise ValueError(f"ratios must sum to 1 (class fractions), got sum {rho.sum():.12g}")
    Yc = as_float_matrix("class_targets", class_targets, allow_1d=True)
    if Yc.shape[0] != m:
        raise ValueError(
            f"class_targets must have one row per class, shape ({m}, m_outputs) (row c = target "
            f"vector of class c), got {Yc.shape}"
        )
    return rho, Yc


def _global_check(neuron, t, A_active, g_tied, rng, n_random):
    search = _Search(neuron, n_random, rng)
    search.known = A_active.copy()
    A, g, _ = search.maxima(t, full=True)
    d = np.array([np.min(np.max(np.abs(A_active - a), axis=1)) for a in A])
    other = d > 1e-5
    gap = float(np.max(g[other]) - g_tied) if np.any(other) else -np.inf
    return gap, A[other], g[other]


def _weight_system(neuron, t, A, Yc):
    """Linear system M w = b for the code weights at fixed (t, a_gamma): rows are the output
    constraint sum_gamma w_gamma rho_c psi'(h_c) a_gamma = rho_c y_c and sum w = 1."""
    rho, k, m = neuron.rho, neuron.k, neuron.m
    p1 = neuron.psi(A @ t.T)[1]
    G = (rho[None, :, None] * p1[:, :, None] * A[:, None, :]).reshape(A.shape[0], k * m)
    M = np.vstack([G.T, np.ones(A.shape[0])])
    b = np.concatenate([(rho[:, None] * Yc).ravel(), [1.0]])
    return M, b


def _select_weights(neuron, t, A, Pg, Yc):
    """Resolve non-unique code weights of the toy (see :func:`_select_from_system`)."""
    M, b = _weight_system(neuron, t, A, Yc)
    hess = neuron.evaluate(A, t)[2]
    return _select_from_system(M, Pg, hess)


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


def _solve_infinite_P(rho, Yc, neuron, neuron_fast, t0, betas, rng, n_random, tol):
    """Annealed smoothing + exact refinement (notes §4.3 steps 2-5). Returns a dict."""
    k, m = Yc.shape
    km = k * m
    search = _Search(neuron_fast, n_random, rng)
    t = t0.copy()
    nit = 0
    last = "no stage attempted"
    for beta in betas:
        search.maxima(t, full=True)

        res = optimize.minimize(_smoothed, t.ravel(), args=(search, Yc, beta), jac=True,
                                method="BFGS", options={"gtol": 1e-7})
        nit += int(res.nit)
        t = res.x.reshape(k, m)
        A, g, _ = search.maxima(t, full=True, n_random=3 * n_random)
        cand = np.flatnonzero(beta * (g - g[0]) > -10.0)
        w = np.exp(beta * (g[cand] - g[0]))
        w /= w.sum()
        A_c = A[cand]
        t_c = t
        while A_c.shape[0] >= 1:
            n = A_c.shape[0]
            x0 = np.concatenate([t_c.ravel(), A_c.ravel(), w])
            sol = optimize.root(_exact_system, x0, args=(neuron, Yc, n), jac=True, method="hybr",
                                options={"xtol": 1e-13, "maxfev": 400})
            F = _exact_system(sol.x, neuron, Yc, n)[0]
            resid = float(np.max(np.abs(F)))
            nit += int(sol.nfev)
            if resid > tol:  # singular Jacobian (non-unique weights): Levenberg-Marquardt
                sol = optimize.root(_exact_system, x0, args=(neuron, Yc, n), jac=True,
                                    method="lm", options={"xtol": 1e-15, "ftol": 1e-15,
                                                          "maxiter": 2000})
                F = _exact_system(sol.x, neuron, Yc, n)[0]
                resid = float(np.max(np.abs(F)))
                nit += int(sol.nfev)
            Pg = sol.x[km + n * m:]
            if resid > tol:  # drop the lowest candidate and retry from the smoothed solution
                last = f"exact refinement with {n} codes did not converge (residual {resid:.2e})"
                A_c, w, t_c = A_c[:-1], w[:-1] / w[:-1].sum(), t
                continue
            if np.min(Pg) < -1e-9:
                drop = int(np.argmin(Pg))
                keep = np.arange(n) != drop
                A_c = sol.x[km: km + n * m].reshape(n, m)[keep]
                w = np.clip(Pg[keep], 1e-3, None)
                w /= w.sum()
                t_c = sol.x[:km].reshape(k, m)
                last = f"a code weight came out negative ({Pg[drop]:.3g}); dropped it"
                continue
            tt = sol.x[:km].reshape(k, m)
            AA = sol.x[km: km + n * m].reshape(n, m)
            g_tied = float(neuron.evaluate(AA, tt, order=0)[0][0])
            gap, other, other_g = _global_check(neuron, tt, AA, g_tied, rng, 4 * n_random)
            if gap > 1e-9:
                last = (f"solution with {n} codes is not global: another maximum of g is higher "
                        f"by {gap:.3g}")
                break
            # maxima tied with the solution but outside the solved set join it with weight 0
            tied = np.abs(other_g - g_tied) <= 1e-9 * (1.0 + abs(g_tied))
            AA = np.vstack([AA, other[tied]])
            Pg = np.concatenate([np.clip(Pg, 0.0, None), np.zeros(int(tied.sum()))])
            other, other_g = other[~tied], other_g[~tied]
            gap = float(np.max(other_g) - g_tied) if other_g.size else -np.inf
            Pg, null = _select_weights(neuron, tt, AA, Pg, Yc)
            msg = (f"converged: {AA.shape[0]} tied codes (smoothing beta={beta:g}, exact "
                   f"refinement residual {resid:.1e})")
            if null.shape[1]:
                msg += (f"; the code weights are not unique ({null.shape[1]}-parameter family, "
                        f"see weight_null_space); reported: the P -> infinity limit of the "
                        f"finite-P weights (maximum entropy relative to det(-grad^2 g)^(-1/2))")
            return dict(t=tt, A=AA, Pg=Pg, g=g_tied, gap=gap, other=other, other_g=other_g,
                        nit=nit, converged=True, beta=beta, null=null, message=msg)
    return dict(t=t, converged=False, nit=nit,
                message=f"no self-consistent code set found ({last}); try another t0, more "
                        f"n_random, or a larger anneal schedule")


def solve_sigmoid_toy(
    ratios,
    class_targets,
    *,
    P: int | None = None,
    activation: str = "sigmoid_erf",
    fluctuations: bool = True,
    threshold: float = 0.5,
    t0=None,
    anneal=(50.0, 500.0, 5000.0, 1e5),
    n_random: int = 20,
    n_nodes: int = 121,
    search_nodes: int = 41,
    quad_nodes: int = 8,
    seed: int = 0,
    tol: float = 1e-10,
    maxiter: int = 100,
    throw: bool = False,
) -> SigmoidToySolution:
    """Self-consistent redundant code of a sigmoidal non-lazy network on the orthogonal toy task.

    Solves the equations of the notes §4.3 [RECON] (module docstring): P = None is the P -> inf
    limit (readouts are exact deltas at the tied global maxima a_gamma of
    ``g(a) = -|a|^2/2 + sum_c rho_c psi(t_c . a)``); a finite P gives the finite-P posterior
    ``P(a) ∝ exp(P g_t(a))`` with t from the exact finite-P output constraint (Fig. 4a caption
    "finite P correction", notes §4.3 last bullet).

    Algorithm (notes §4.3 / §11): all local maxima of g by multi-start Newton (warm starts, the
    2^m saturated-code vertices ``sum_c rho_c b_c t_c`` and ``n_random`` uniform starts); the
    convex outer problem smoothed as ``(1/beta) log sum_gamma exp(beta g_gamma)`` and minimised
    by BFGS for beta in ``anneal`` until the maxima with non-negligible weight solve the exact
    system (stationarity + degeneracy + output + normalisation, ``scipy.optimize.root`` with the
    analytic Jacobian) with P_gamma >= 0 and no other maximum higher (global check with
    4 n_random extra starts). Finite P: Newton on the convex Phi_P from the P = inf solution.

    Parameters
    ----------
    ratios : (k,)               class fractions rho_c (> 0, sum 1).
    class_targets : (k, m)      row c = target vector y_c of class c (see toy_class_targets);
                                usually k = m (one-hot tasks), but e.g. Fig. 1 has k = 2 classes
                                and m = 1 output (y = +-1).
    P : int or None             number of training inputs; None = P -> infinity.
    activation : str            "sigmoid_erf" (paper), "erf", or "linear" (finite P only: the
                                Gaussian linear network, a check against solve_linear_network).
    fluctuations : bool         keep the z|a fluctuations (psi) or neglect them (psi_0, notes §4.4).
    threshold : float           code threshold on the mean activation (1/2 = phi(0)).
    t0 : (k, m), optional       starting conjugate field (default 2 (Y - mean Y)).
    anneal : sequence of float  smoothing parameters beta tried in turn.
    n_random, seed              random starts of the maximum search (np.random.default_rng(seed)).
    n_nodes, search_nodes       Gauss-Hermite nodes for psi: final equations / during the search.
    quad_nodes : int            nodes per dimension of the finite-P readout quadrature.
    tol, maxiter, throw         residual tolerance, Newton iterations (finite P), raise on failure.
    """
    rho, Yc = _check_toy_problem(ratios, class_targets)
    k, m = Yc.shape
    activation = _check_tilted_activation(activation)
    if activation == "relu":
        raise ValueError("activation='relu' is not a redundant-code problem; use solve_relu_toy")
    if P is not None:
        P = check_int("P", P, minimum=1)
    if activation == "linear" and P is None:
        raise ValueError(
            "activation='linear' has a Gaussian readout posterior of width O(1) only at finite P; "
            "pass P (an integer)"
        )
    if not isinstance(fluctuations, bool):
        raise TypeError(f"fluctuations must be a bool, got {fluctuations!r}")
    threshold = float(as_float_array("threshold", threshold, ndim=0))
    if t0 is not None:
        t0 = as_float_matrix("t0", t0)
        if t0.shape != (k, m):
            raise ValueError(f"t0 must have shape ({k}, {m}), got {t0.shape}")
    betas = tuple(float(check_pos_float("anneal", float(b))) for b in anneal)
    if len(betas) == 0:
        raise ValueError("anneal must contain at least one smoothing parameter")
    n_random = check_int("n_random", n_random, minimum=0)
    n_nodes = check_int("n_nodes", n_nodes, minimum=5)
    search_nodes = check_int("search_nodes", search_nodes, minimum=5)
    quad_nodes = check_int("quad_nodes", quad_nodes, minimum=2)
    tol = check_pos_float("tol", tol)
    maxiter = check_int("maxiter", maxiter, minimum=1)
    rng = np.random.default_rng(seed)

    neuron = _ToyNeuron(rho, activation, fluctuations, n_nodes, m)
    fast = _ToyNeuron(rho, activation, fluctuations, search_nodes, m)
    if t0 is None:
        t0 = np.zeros((k, m)) if activation == "linear" else 2.0 * (Yc - Yc.mean())

    if activation != "linear":
        inf = _solve_infinite_P(rho, Yc, neuron, fast, t0, betas, rng, n_random, tol)
        if not inf["converged"]:
            out = _failed(inf, rho, Yc, P, activation, fluctuations, threshold)
            raise_if_failed(out, throw)
            return out
    if P is None:
        t, A, Pg = inf["t"], inf["A"], inf["Pg"]
        x = np.concatenate([t.ravel(), A.ravel(), Pg])
        F = _exact_system(x, neuron, Yc, A.shape[0])[0]
        n = A.shape[0]
        res = {
            "stationarity": float(np.max(np.abs(F[: n * m]))),
            "degeneracy": float(np.max(np.abs(F[n * m: n * m + n - 1]), initial=0.0)),
            "normalisation": float(abs(F[n * m + n - 1])),
            "output": float(np.max(np.abs(F[n * m + n:]))),
        }
        covs = np.zeros((n, m, m))
        g_value, gap, other, other_g = inf["g"], inf["gap"], inf["other"], inf["other_g"]
        null = inf["null"]
        nit, msg, ok = inf["nit"], inf["message"], True
    else:
        start = inf["t"] if activation != "linear" else t0
        search = _Search(neuron, n_random, rng)
        t, st, nit_p, ok = _finite_P_solve(start, search, Yc, float(P), quad_nodes, tol, maxiter)
        A, Pg, covs = st["A"], st["weights"], st["covs"]
        g_value = float(st["phi"] + np.sum(rho * np.sum(t * Yc, axis=1)))
        grad = neuron.evaluate(A, t)[1]
        res = {
            "output": float(np.max(np.abs(st["mean_out"] - Yc))),
            "stationarity": float(np.max(np.abs(grad))),
        }
        gap, other, other_g = float("nan"), np.zeros((0, m)), np.zeros(0)
        null = np.zeros((A.shape[0], 0))
        nit = nit_p + (0 if activation == "linear" else inf["nit"])
        msg = (f"converged at finite P={P}: {A.shape[0]} readout peaks (Newton, {nit_p} iterations)"
               if ok else f"finite-P Newton did not converge in {maxiter} iterations; increase "
               f"maxiter or quad_nodes")
        # peaks must be well separated for the per-peak quadrature
        for i in range(A.shape[0]):
            for j in range(i + 1, A.shape[0]):
                d = A[i] - A[j]
                if d @ np.linalg.solve(covs[i], d) < 64.0:
                    msg += "; warning: readout peaks overlap (< 8 std), the quadrature double counts"
        n = A.shape[0]
    H = A @ t.T
    if fluctuations:
        _, p1, p2 = neuron.psi(H)
        zs = _saddle_flat(np.ascontiguousarray(H.ravel()), activation)[3].reshape(H.shape) \
            if activation != "linear" else H.copy()
    else:
        _, p1, _ = neuron.psi(H)
        p2 = np.zeros_like(H)
        zs = _saddle_flat(np.ascontiguousarray(H.ravel()), activation)[3].reshape(H.shape)
    if P is None:
        mean_out = np.einsum("g,gc,gr->cr", Pg, p1, A)
    else:
        mean_out = st["mean_out"]
    resid = max(res.values())
    ok = ok and resid < max(tol, 1e-8) * 10
    out = SigmoidToySolution(
        converged=bool(ok), status=0 if ok else 2, message=msg, nit=int(nit), residual=resid,
        t=t, P_gamma=Pg, a_gamma=A, h=H, mean_activations=p1, activation_variances=p2,
        codes=p1 > threshold, preactivation_modes=zs, g_value=float(g_value), residuals=res,
        global_gap=gap, other_maxima=other, other_g=other_g, readout_covariances=covs,
        weight_null_space=null, ratios=rho, class_targets=Yc, P=P, activation=activation,
        fluctuations=fluctuations, threshold=threshold, mean_output_classes=mean_out,
    )
    raise_if_failed(out, throw)
    return out


def _failed(info, rho, Yc, P, activation, fluctuations, threshold):
    k, m = Yc.shape
    e = np.zeros((0, m))
    return SigmoidToySolution(
        converged=False, status=2, message=info["message"], nit=int(info["nit"]),
        residual=float("inf"), t=info["t"], P_gamma=np.zeros(0), a_gamma=e, h=np.zeros((0, k)),
        mean_activations=np.zeros((0, k)), activation_variances=np.zeros((0, k)),
        codes=np.zeros((0, k), bool),
        preactivation_modes=np.zeros((0, k)), g_value=float("nan"), residuals={},
        global_gap=float("nan"),
        other_maxima=e, other_g=np.zeros(0), readout_covariances=np.zeros((0, m, m)),
        weight_null_space=np.zeros((0, 0)), ratios=rho, class_targets=Yc, P=P,
        activation=activation, fluctuations=fluctuations, threshold=threshold,
        mean_output_classes=np.full((k, m), np.nan),
    )


# --------------------------------------------------------------------------------------------
# general (non-orthogonal) data with z|a fluctuations neglected (notes §4.4)
# --------------------------------------------------------------------------------------------


def _phi_derivs(Z, activation):
    """phi, phi', phi'' for the bounded activations (sigmoid_erf, erf)."""
    if activation == "sigmoid_erf":
        ph = 0.5 * special.erfc(-0.5 * np.sqrt(np.pi) * Z)
        d1 = 0.5 * np.exp(-0.25 * np.pi * Z * Z)
        d2 = -0.5 * np.pi * Z * d1
    else:  # erf
        ph = special.erf(Z)
        d1 = (2.0 / np.sqrt(np.pi)) * np.exp(-Z * Z)
        d2 = -2.0 * Z * d1
    return ph, d1, d2


class _GeneralNeuron:
    """Fluctuation-free single-neuron problem on general inputs (notes §4.4) [RECON].

    With a eliminated at its optimum a = t^T phi(z) / P, the codes are the local maxima in z of
    ``Q_t(z) = |t^T phi(z)|^2 / (2P) - z^T K0^{-1} z / 2``, and ``G_t(a) = Q_t(z) / P``.
    """

    def __init__(self, K0, activation):
        self.K0 = K0
        self.P = K0.shape[0]
        L = np.linalg.cholesky(K0)
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
        hess = (np.einsum("kpm,kqm->kpq", Dt, Dt) / P) - self.K0inv
        idx = np.arange(P)
        hess[:, idx, idx] += d2 * TV / P
        return Q, V, grad, hess, ph, d1, d2

    def local_maxima(self, t, starts, *, tol=1e-11, maxiter=200, dedup=1e-6):
        Z = np.array(starts, dtype=float, copy=True)
        active = np.ones(Z.shape[0], dtype=bool)
        for _ in range(maxiter):
            idx = np.flatnonzero(active)
            if idx.size == 0:
                break
            Q, V, grad, hess, *_ = self.evaluate(Z[idx], t)
            done = np.max(np.abs(grad), axis=1) < tol
            active[idx[done]] = False
            idx, Q, grad, hess = idx[~done], Q[~done], grad[~done], hess[~done]
            if idx.size == 0:
                break
            try:  # all Hessians negative definite: plain Newton via Cholesky
                Lc = np.linalg.cholesky(-hess)
                step = np.linalg.solve(np.swapaxes(Lc, 1, 2),
                                       np.linalg.solve(Lc, grad[:, :, None]))[:, :, 0]
            except np.linalg.LinAlgError:  # saddle-free Newton: an ascent direction
                lam, W = np.linalg.eigh(hess)
                lam = -np.maximum(np.abs(lam), 1e-3)
                step = -np.einsum("kij,kj->ki", W, np.einsum("kji,kj->ki", W, grad) / lam)
            nrm = np.max(np.abs(step), axis=1)
            alpha = np.minimum(1.0, 2.0 / np.maximum(nrm, 1e-300))
            for _bt in range(40):
                Qt = self.evaluate(Z[idx] + alpha[:, None] * step, t, order=0)[0]
                ok = Qt >= Q - 1e-13 * (1.0 + np.abs(Q))
                if np.all(ok):
                    break
                alpha = np.where(ok, alpha, 0.5 * alpha)
            Z[idx] = Z[idx] + alpha[:, None] * step
        Q, V, grad, hess, *_ = self.evaluate(Z, t)
        lam = np.linalg.eigvalsh(hess)
        good = (np.max(np.abs(grad), axis=1) < 1e3 * tol) & (lam[:, -1] < 0)
        Z, Q = Z[good], Q[good]
        order = np.argsort(-Q)
        Z, Q = Z[order], Q[order]
        keep = []
        for i in range(Z.shape[0]):
            if all(np.max(np.abs(Z[i] - Z[j])) > dedup * (1 + np.max(np.abs(Z[i]))) for j in keep):
                keep.append(i)
        return Z[keep], Q[keep] / self.P

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
        else:
            starts = self.known
        Z, G = self.neuron.local_maxima(t, starts)
        if Z.shape[0] == 0:
            raise RuntimeError("no local maximum of G found")
        self.known = Z.copy()
        return Z, G


def _general_smoothed(t_flat, search, Y, beta):
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
    Z, G = search.maxima(t, full=True, n_random=n_random)
    scale = 1.0 + np.max(np.abs(Z_active))
    d = np.array([np.min(np.max(np.abs(Z_active - z), axis=1)) for z in Z])
    other = d > 1e-5 * scale
    gap = float(np.max(G[other]) - G_tied) if np.any(other) else -np.inf
    return gap, Z[other], G[other]


def _solve_general(K0, Y, neuron, t0, betas, rng, n_random, tol):
    P, m = Y.shape
    search = _GeneralSearch(neuron, Y, n_random, rng)
    t = t0.copy()
    nit = 0
    last = "no stage attempted"
    for beta in betas:
        search.maxima(t, full=True)
        res = optimize.minimize(_general_smoothed, t.ravel(), args=(search, Y, beta), jac=True,
                                method="L-BFGS-B", options={"gtol": 1e-9, "ftol": 1e-15,
                                                            "maxiter": 5000})
        nit += int(res.nit)
        t = res.x.reshape(P, m)
        Z, G = search.maxima(t, full=True, n_random=3 * n_random)
        cand = np.flatnonzero(beta * (G - G[0]) > -10.0)
        w = np.exp(beta * (G[cand] - G[0]))
        w /= w.sum()
        Z_c, t_c = Z[cand], t
        while Z_c.shape[0] >= 1:
            n = Z_c.shape[0]
            x0 = np.concatenate([t_c.ravel(), Z_c.ravel(), w])
            sol = optimize.root(_general_exact_system, x0, args=(neuron, Y, n), jac=True,
                                method="hybr", options={"xtol": 1e-13, "maxfev": 200})
            F = _general_exact_system(sol.x, neuron, Y, n)[0]
            resid = float(np.max(np.abs(F)))
            nit += int(sol.nfev)
            if resid > tol:
                sol = optimize.root(_general_exact_system, x0, args=(neuron, Y, n), jac=True,
                                    method="lm", options={"xtol": 1e-15, "ftol": 1e-15,
                                                          "maxiter": 500})
                F = _general_exact_system(sol.x, neuron, Y, n)[0]
                resid = float(np.max(np.abs(F)))
                nit += int(sol.nfev)
            Pg = sol.x[P * m + n * P:]
            if resid > tol:
                last = f"exact refinement with {n} codes did not converge (residual {resid:.2e})"
                Z_c, w, t_c = Z_c[:-1], w[:-1] / w[:-1].sum(), t
                continue
            if np.min(Pg) < -1e-9:
                drop = int(np.argmin(Pg))
                keep = np.arange(n) != drop
                Z_c = sol.x[P * m: P * m + n * P].reshape(n, P)[keep]
                w = np.clip(Pg[keep], 1e-3, None)
                w /= w.sum()
                t_c = sol.x[: P * m].reshape(P, m)
                last = f"a code weight came out negative ({Pg[drop]:.3g}); dropped it"
                continue
            fin = _finish_general(neuron, Y, sol.x, n, rng, n_random, tol, search=search)
            if not fin["converged"]:
                last = fin["message"]
                break
            fin["nit"] += nit
            fin["message"] += f" (smoothing beta={beta:g})"
            return fin
    return dict(t=t, converged=False, nit=nit,
                message=f"no self-consistent code set found ({last}); try another t0, more "
                        f"n_random, or a larger anneal schedule")


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
    tied = np.abs(other_G - G_tied) <= 1e-9 * (1.0 + abs(G_tied))
    ZZ = np.vstack([ZZ, other[tied]])
    Pg = np.concatenate([np.clip(Pg, 0.0, None), np.zeros(int(tied.sum()))])
    other, other_G = other[~tied], other_G[~tied]
    gap = float(np.max(other_G) - G_tied) if other_G.size else -np.inf
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
        Zc = np.vstack([x[P * m: P * m + n * P].reshape(n, P), fin["better"]])
        Pc = np.concatenate([x[P * m + n * P:], [1e-3]])
        x = np.concatenate([x[: P * m], Zc.ravel(), Pc / Pc.sum()])
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
            sel = np.arange(n) != int(np.argmin(Pg))
            Zc = xn[P * m: P * m + n * P].reshape(n, P)[sel]
            Pc = np.clip(Pg[sel], 1e-6, None)
            x = np.concatenate([xn[: P * m], Zc.ravel(), Pc / Pc.sum()])
            n -= 1
    return dict(converged=False, nit=nit, message=f"no global code set after {max_rounds} rounds")


@dataclass(frozen=True)
class SigmoidGeneralSolution(SolverStatus):
    """Fluctuation-free mean-field posterior of a sigmoidal network on general data (notes §4.4).

    Attributes (n codes, P training inputs, m outputs)
    ----------
    t : (P, m)             conjugate field.
    P_gamma : (n,)         code weights (>= 0, sum 1).
    a_gamma : (n, m)       readouts, ``a_gamma = t^T phi(z_gamma) / P``.
    z_gamma : (n, P)       preactivation modes on the training inputs (P(z|a_gamma) ≈ delta).
    mean_activations : (n, P)  phi(z_gamma).
    codes : (n, P) bool    mean_activations > threshold.
    g_value : float        tied maximal value of G_t(a).
    residuals : dict       "stationarity", "degeneracy", "normalisation", "output" (max-abs).
    global_gap, other_maxima (k, P), other_g : as in :class:`SigmoidToySolution` (in z).
    weight_null_space : (n, k)  non-uniqueness of the weights (k = 0: unique).
    K0, Y, activation, threshold : the problem.
    """

    t: np.ndarray
    P_gamma: np.ndarray
    a_gamma: np.ndarray
    z_gamma: np.ndarray
    mean_activations: np.ndarray
    codes: np.ndarray
    g_value: float
    residuals: dict
    global_gap: float
    other_maxima: np.ndarray
    other_g: np.ndarray
    weight_null_space: np.ndarray
    K0: np.ndarray
    Y: np.ndarray
    activation: str
    threshold: float

    @property
    def n_codes(self) -> int:
        return int(self.P_gamma.size)

    def mean_output(self) -> np.ndarray:
        """Training output ``sum_gamma P_gamma phi(z_gamma) a_gamma^T`` (P, m); equals Y."""
        return np.einsum("g,gp,gr->pr", self.P_gamma, self.mean_activations, self.a_gamma)

    def feature_kernel(self) -> np.ndarray:
        """Feature kernel on the training inputs without z|a fluctuations (P, P):
        ``K_1 = sum_gamma P_gamma phi(z_gamma) phi(z_gamma)^T``."""
        ph = self.mean_activations
        return np.einsum("g,gp,gq->pq", self.P_gamma, ph, ph)

    def class_codes(self, labels) -> np.ndarray:
        """Per-class codes (n, m_classes) bool: class-averaged mean activation > threshold."""
        P = self.K0.shape[0]
        lab = _check_labels(labels, P)
        if lab.size != P:
            raise ValueError(f"labels must have length P = {P}, got {lab.size}")
        k = int(lab.max()) + 1
        oh = np.eye(k)[lab]
        avg = self.mean_activations @ oh / oh.sum(0)
        return avg > self.threshold

    # -- test inputs (notes §4.4 "B.2") -------------------------------------------------------
    def _conditional(self, name, k0, k_diag, keep_variance):
        k0 = as_float_matrix(name, k0)
        P = self.K0.shape[0]
        if k0.shape[0] != P:
            raise ValueError(f"{name} must have P = {P} rows (k0(x) = X^T x / N0 as columns), "
                             f"got shape {k0.shape}")
        R = np.linalg.solve(self.K0, k0)  # K0^{-1} k0, (P, Q)
        means = self.z_gamma @ R  # (n, Q)
        if keep_variance:
            kd = as_float_array("k_test_diag", k_diag, ndim=1)
            if kd.size != k0.shape[1]:
                raise ValueError(f"k_test_diag must have length Q = {k0.shape[1]} (K0(x, x) of "
                                 f"each test input), got {kd.size}")
            s2 = kd - np.sum(k0 * R, axis=0)
            s2 = np.maximum(s2, 0.0)
        else:
            s2 = np.zeros(k0.shape[1])
        return R, means, s2

    def predict(self, k0, k_test_diag, *, keep_variance: bool = True) -> np.ndarray:
        """Mean predictor on test inputs (Q, m) (seed 000 Eq. for f_r(x) [MT]; notes §4.4):

        ``f_r(x) = sum_gamma P_gamma a_gamma^r <phi(z*)>_gamma`` with ``z* | z_gamma ~
        N(m_gamma(x), s^2(x))``, ``m_gamma = k0(x)^T K0^{-1} z_gamma``,
        ``s^2 = K0(x,x) - k0^T K0^{-1} k0`` and the closed form ``<phi> = 1/2[1 + erf(sqrt(pi)
        m / (2 sqrt(1 + pi s^2/2)))]`` [RECON]. ``keep_variance=False`` drops s^2 (whether the
        paper kept it is not known, notes §4.4). ``k0`` is (P, Q), ``k_test_diag`` (Q,).
        """
        from ..kernels._nngp import mean_activation

        _, means, s2 = self._conditional("k0", k0, k_test_diag, keep_variance)
        act = mean_activation(means, s2[None, :], self.activation)  # (n, Q)
        return np.einsum("g,gq,gr->qr", self.P_gamma, act, self.a_gamma)

    def test_kernel(self, k0_a, k0_b, K0_ab, k_diag_a, k_diag_b, *, keep_variance: bool = True,
                    n_nodes: int = 40) -> np.ndarray:
        """Feature kernel on test inputs (Qa, Qb) [MT form; notes §4.4]:
        ``K(x1, x2) = sum_gamma P_gamma E[phi(u) phi(v)]`` with (u, v) Gaussian, means
        m_gamma(x1), m_gamma(x2) and covariance ``K0(xi, xj) - k0(xi)^T K0^{-1} k0(xj)``
        (2-D Gauss-Hermite, ``n_nodes`` per dimension)."""
        from ..kernels._gauss import gaussian_pair_expectation

        Ra, ma, sa = self._conditional("k0_a", k0_a, k_diag_a, keep_variance)
        Rb, mb, sb = self._conditional("k0_b", k0_b, k_diag_b, keep_variance)
        K0_ab = as_float_matrix("K0_ab", K0_ab)
        if K0_ab.shape != (Ra.shape[1], Rb.shape[1]):
            raise ValueError(f"K0_ab must have shape {(Ra.shape[1], Rb.shape[1])}, got "
                             f"{K0_ab.shape}")
        if not keep_variance:
            pa = _phi_derivs(ma, self.activation)[0]
            pb = _phi_derivs(mb, self.activation)[0]
            return np.einsum("g,ga,gb->ab", self.P_gamma, pa, pb)
        c12 = K0_ab - np.asarray(k0_a).T @ Rb
        c11 = np.broadcast_to(sa[:, None], c12.shape)
        c22 = np.broadcast_to(sb[None, :], c12.shape)
        # clip round-off so that |c12| <= sqrt(c11 c22)
        bound = np.sqrt(c11 * c22)
        c12 = np.clip(c12, -bound, bound)
        out = np.zeros(c12.shape)
        for g_ in range(self.n_codes):
            out += self.P_gamma[g_] * gaussian_pair_expectation(
                self.activation, self.activation, c11, c12, c22,
                m1=ma[g_][:, None], m2=mb[g_][None, :], n_nodes=n_nodes)
        return out

    def generalization_error(self, k0, k_test_diag, Y_test, *, keep_variance: bool = True):
        """Per-output ``eps_r = mean_mu [y_mu^r - f_r(x_mu)]^2`` (no variance term, [MT])."""
        f = self.predict(k0, k_test_diag, keep_variance=keep_variance)
        Y_test = as_float_matrix("Y_test", Y_test, allow_1d=True)
        if Y_test.shape != f.shape:
            raise ValueError(f"Y_test must have shape {f.shape} (Q, m), got {Y_test.shape}")
        return np.mean((Y_test - f) ** 2, axis=0)


def solve_sigmoid_general(
    K0,
    Y,
    *,
    activation: str = "sigmoid_erf",
    threshold: float = 0.5,
    t0=None,
    anneal=(50.0, 500.0, 5000.0),
    n_random: int = 10,
    strategy: str = "auto",
    n_steps: int = 10,
    seed: int = 0,
    tol: float = 1e-10,
    throw: bool = False,
) -> SigmoidGeneralSolution:
    """Redundant code of a sigmoidal non-lazy network (L = 1, T = 0, sigma_a^2 = 1/P, P -> inf)
    on general training data, neglecting the z|a fluctuations (the MT's MNIST approximation).

    Equations (notes §4.4 [RECON]): with ``Q_t(z) = |t^T phi(z)|^2/(2P) - z^T K0^{-1} z/2`` the
    codes are the tied global maxima z_gamma of Q_t (mode ``z = K0[(t a) o phi'(z)]``), the
    readouts ``a_gamma = t^T phi(z_gamma)/P``, ``G_t(a_gamma) = Q_t(z_gamma)/P`` equal, and the
    output constraint ``sum_gamma P_gamma phi(z_gamma) a_gamma^T = Y``. The outer problem in
    t (P x m) is the same convex one as for the toy (smoothing + L-BFGS for beta in ``anneal``,
    then the exact square system with the analytic Jacobian, global check of the maxima).
    On orthonormal toy inputs it reduces to ``solve_sigmoid_toy(..., fluctuations=False)``.

    Parameters
    ----------
    K0 : (P, P)      input kernel X^T X / N0 (symmetric positive definite).
    Y : (P, m)       targets; the class of input mu (for the start patterns) is argmax_r Y[mu, r].
    activation       "sigmoid_erf" (paper) or "erf".
    strategy         "continuation": homotopy ``K0(lam) = (1-lam) I + lam K0`` from the exactly
                     solved orthonormal toy (needs class-structured Y: every row equal to the
                     target of its class), correcting the exact equations with Newton at each of
                     >= ``n_steps`` steps, dropping codes whose weight reaches 0 and adding maxima
                     that overtake; "anneal": smoothing + L-BFGS from ``t0`` (default
                     ``2 (Y - mean Y)``); "auto": continuation when possible, else anneal.
    t0 : (P, m)      start of the annealing strategy.
    anneal, n_random, seed, tol, throw : as in :func:`solve_sigmoid_toy`.
    """
    K0 = as_float_matrix("K0", K0)
    P = K0.shape[0]
    if K0.shape != (P, P):
        raise ValueError(f"K0 must be square (P x P), got shape {K0.shape}")
    if not np.allclose(K0, K0.T, rtol=1e-10, atol=1e-12 * np.max(np.abs(K0))):
        raise ValueError("K0 must be symmetric")
    try:
        np.linalg.cholesky(K0)
    except np.linalg.LinAlgError:
        raise ValueError("K0 must be positive definite (Cholesky failed)") from None
    Y = as_float_matrix("Y", Y, allow_1d=True)
    if Y.shape[0] != P:
        raise ValueError(f"Y must have P = {P} rows (one per training input), got shape {Y.shape}")
    m = Y.shape[1]
    activation = _check_tilted_activation(activation)
    if activation not in ("sigmoid_erf", "erf"):
        raise ValueError(f"activation must be 'sigmoid_erf' or 'erf' for solve_sigmoid_general, "
                         f"got {activation!r}")
    threshold = float(as_float_array("threshold", threshold, ndim=0))
    if t0 is not None:
        t0 = as_float_matrix("t0", t0)
        if t0.shape != (P, m):
            raise ValueError(f"t0 must have shape ({P}, {m}), got {t0.shape}")
    betas = tuple(float(check_pos_float("anneal", float(b))) for b in anneal)
    if len(betas) == 0:
        raise ValueError("anneal must contain at least one smoothing parameter")
    n_random = check_int("n_random", n_random, minimum=0)
    if strategy not in ("auto", "continuation", "anneal"):
        raise ValueError(f"strategy must be 'auto', 'continuation' or 'anneal', got {strategy!r}")
    n_steps = check_int("n_steps", n_steps, minimum=1)
    tol = check_pos_float("tol", tol)
    rng = np.random.default_rng(seed)
    neuron = _GeneralNeuron(K0, activation)
    structure = _class_structure(Y) if (t0 is None and strategy != "anneal") else None
    if strategy == "continuation" and structure is None:
        raise ValueError("strategy='continuation' needs class-structured targets (every row of Y "
                         "equal to the target vector of its class argmax) and no t0")
    out = None
    if structure is not None:
        cont = _solve_general_continuation(K0, Y, activation, structure, rng, n_random, tol,
                                           n_steps)
        if cont["converged"]:
            out = _repair_general(neuron, Y, cont["x"], cont["n"], rng, n_random, tol)
            out["nit"] += cont["nit"]
            out["message"] = "continuation from the orthonormal toy: " + out["message"]
    if out is None or not out["converged"]:
        if t0 is None:
            t0 = 2.0 * (Y - Y.mean())
        out = _solve_general(K0, Y, neuron, t0, betas, rng, n_random, tol)
    if not out["converged"]:
        e = np.zeros((0, P))
        sol = SigmoidGeneralSolution(
            converged=False, status=2, message=out["message"], nit=int(out["nit"]),
            residual=float("inf"), t=out["t"], P_gamma=np.zeros(0), a_gamma=np.zeros((0, m)),
            z_gamma=e, mean_activations=e, codes=np.zeros((0, P), bool), g_value=float("nan"),
            residuals={}, global_gap=float("nan"), other_maxima=e, other_g=np.zeros(0),
            weight_null_space=np.zeros((0, 0)), K0=K0, Y=Y, activation=activation,
            threshold=threshold)
        raise_if_failed(sol, throw)
        return sol
    t, Z, Pg = out["t"], out["Z"], out["Pg"]
    n = Z.shape[0]
    F = _general_exact_system(np.concatenate([t.ravel(), Z.ravel(), Pg]), neuron, Y, n)[0]
    res = {
        "stationarity": float(np.max(np.abs(F[: n * P]))),
        "degeneracy": float(np.max(np.abs(F[n * P: n * P + n - 1]), initial=0.0)),
        "normalisation": float(abs(F[n * P + n - 1])),
        "output": float(np.max(np.abs(F[n * P + n:]))),
    }
    resid = max(res.values())
    ph = _phi_derivs(Z, activation)[0]
    ok = resid < max(tol, 1e-8) * 10
    sol = SigmoidGeneralSolution(
        converged=bool(ok), status=0 if ok else 2, message=out["message"], nit=int(out["nit"]),
        residual=resid, t=t, P_gamma=Pg, a_gamma=out["A"], z_gamma=Z, mean_activations=ph,
        codes=ph > threshold, g_value=float(out["G"]), residuals=res, global_gap=out["gap"],
        other_maxima=out["other"], other_g=out["other_G"], weight_null_space=out["null"], K0=K0,
        Y=Y, activation=activation, threshold=threshold)
    raise_if_failed(sol, throw)
    return sol


def _class_structure(Y):
    """(labels, class fractions, class targets) if every row of Y equals the target of its
    class (argmax), else None."""
    lab = np.argmax(Y, axis=1)
    m = Y.shape[1]
    if np.unique(lab).size != m:
        return None
    Yc = np.array([Y[lab == c][0] for c in range(m)])
    if not np.allclose(Y, Yc[lab], rtol=0, atol=1e-12):
        return None
    rho = np.bincount(lab, minlength=m) / lab.size
    return lab, rho, Yc


def _newton_lstsq(fun, x0, tol, maxiter=60):
    """Newton's method for a square system that may be singular but consistent (non-unique
    code weights; at y_- = -1/2 also gauge directions of t, see the docs). The Jacobian's
    singular values are computed once: if it is numerically singular every step is the
    minimum-norm least-squares step (SVD), else an LU step; backtracking on max|F|.
    Returns (x, residual, nfev)."""
    x = x0.copy()
    F, J = fun(x)
    res = float(np.max(np.abs(F)))
    nfev = 1
    if res <= tol:
        return x, res, nfev
    s = np.linalg.svd(J, compute_uv=False)
    singular = s[-1] < 1e-12 * s[0]
    for _ in range(maxiter):
        if res <= tol:
            break
        if singular:
            dx = linalg.lstsq(J, -F, cond=1e-13, lapack_driver="gelsd")[0]
        else:
            try:
                dx = np.linalg.solve(J, -F)
            except np.linalg.LinAlgError:
                dx = linalg.lstsq(J, -F, cond=1e-13, lapack_driver="gelsd")[0]
        alpha = 1.0
        while True:
            Fn, Jn = fun(x + alpha * dx)
            nfev += 1
            rn = float(np.max(np.abs(Fn)))
            if rn < (1.0 - 1e-4 * alpha) * res or alpha < 1e-8:
                break
            alpha *= 0.5
        if rn >= res:
            break
        x, F, J, res = x + alpha * dx, Fn, Jn, rn
    return x, res, nfev


def _exact_solve(neuron, Y, x0, n, tol):
    return _newton_lstsq(lambda x: _general_exact_system(x, neuron, Y, n), x0, tol)


def _solve_general_continuation(K0, Y, activation, structure, rng, n_random, tol, n_steps):
    """Homotopy K0(lam) = (1 - lam) I + lam K0 from the orthonormal toy (lam = 0, solved exactly
    by the class-reduced solver) to the data (lam = 1), Newton-correcting the exact equations at
    every step; codes whose weight reaches 0 are dropped, maxima that overtake are added."""
    P, m = Y.shape
    lab, rho, Yc = structure
    toy = solve_sigmoid_toy(rho, Yc, fluctuations=False, activation=activation, seed=int(
        rng.integers(2**31)))
    if not toy.converged:
        return dict(t=np.zeros((P, m)), converged=False, nit=toy.nit,
                    message=f"continuation: toy start failed ({toy.message})")
    keep = toy.P_gamma > 0
    t = toy.t[lab]
    Z = toy.preactivation_modes[keep][:, lab]
    Pg = toy.P_gamma[keep]
    x = np.concatenate([t.ravel(), Z.ravel(), Pg])
    n = Z.shape[0]
    lam, dlam, nit, events = 0.0, 1.0 / n_steps, 0, 0
    I = np.eye(P)
    while lam < 1.0:
        step = min(dlam, 1.0 - lam)
        lam_new = lam + step
        neuron = _GeneralNeuron((1.0 - lam_new) * I + lam_new * K0, activation)
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
            drop = int(np.argmin(Pg))
            sel = np.arange(n) != drop
            Zc = x[P * m: P * m + n * P].reshape(n, P)[sel]
            Pc = np.clip(x[P * m + n * P:][sel], 1e-6, None)
            x = np.concatenate([x[: P * m], Zc.ravel(), Pc / Pc.sum()])
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
            j = int(np.argmax(other_G))
            Zc = np.vstack([x[P * m: P * m + n * P].reshape(n, P), other[j]])
            Pc = np.concatenate([x[P * m + n * P:], [1e-3]])
            x = np.concatenate([x[: P * m], Zc.ravel(), Pc / Pc.sum()])
            n += 1
            continue
        x, lam = xn, lam_new
        dlam = min(2.0 * dlam, 1.0 / n_steps)
    return dict(x=x, n=n, nit=nit, converged=True)


# --------------------------------------------------------------------------------------------
# y_- sweep (MT: "increasing y_- from 0.1 to 0.5 ... successive transitions between four
# different coding schemes", supplement E; notes §7.1 open point)
# --------------------------------------------------------------------------------------------


def _active_codes(sol, min_weight):
    return tuple(sorted(c for c, w in zip(sol.code_strings(), sol.P_gamma, strict=True) if w > min_weight))


def sweep_y_minus(y_minus_values, *, ratios, y_plus: float = 1.0, **solver_kw):
    """Solve the sigmoid toy (:func:`solve_sigmoid_toy`, P = inf unless ``P`` is passed) for the
    one-hot targets (y_+, y_-) at every y_- of the grid. Returns a list of SigmoidToySolution in
    grid order. Keyword options are passed to the solver."""
    ys = as_float_array("y_minus_values", y_minus_values, ndim=1)
    if ys.size == 0:
        raise ValueError("y_minus_values must be non-empty")
    y_plus = float(as_float_array("y_plus", y_plus, ndim=0))
    if np.any(ys >= y_plus):
        raise ValueError(f"y_minus_values must be < y_plus = {y_plus}, got max {ys.max()}")
    rho = as_float_array("ratios", ratios, ndim=1)
    return [solve_sigmoid_toy(rho, toy_class_targets(rho.size, y_plus=y_plus, y_minus=float(y)),
                              **solver_kw) for y in ys]


def code_transitions(y_minus_values, solutions, *, min_weight: float = 1e-6) -> list[dict]:
    """Where the active code set (codes with P_gamma > min_weight) changes along a sweep.

    Returns one dict per change between consecutive grid points: ``{"between": (y_a, y_b),
    "before": codes at y_a, "after": codes at y_b}``; codes are strings like '1-1-0'. Grid
    points whose solve did not converge are skipped (listed under "failed" of the first dict if
    any, with ``between = None``)."""
    ys = as_float_array("y_minus_values", y_minus_values, ndim=1)
    if len(solutions) != ys.size:
        raise ValueError(f"solutions must have one entry per y_minus value ({ys.size}), got "
                         f"{len(solutions)}")
    min_weight = check_pos_float("min_weight", min_weight)
    out = []
    failed = [float(y) for y, s in zip(ys, solutions, strict=True) if not s.converged]
    if failed:
        out.append({"between": None, "before": None, "after": None, "failed": failed})
    prev = None
    for y, s in zip(ys, solutions, strict=True):
        if not s.converged:
            continue
        codes = _active_codes(s, min_weight)
        if prev is not None and codes != prev[1]:
            out.append({"between": (prev[0], float(y)), "before": prev[1], "after": codes})
        prev = (float(y), codes)
    return out


def locate_code_transition(y_lo: float, y_hi: float, *, ratios, y_plus: float = 1.0,
                           min_weight: float = 1e-6, xtol: float = 1e-4, **solver_kw) -> dict:
    """Bisect a code-set change between y_lo and y_hi (different active code sets at the ends)
    down to ``xtol``. Returns ``{"y_minus": midpoint, "interval": (a, b), "before", "after"}``."""
    rho = as_float_array("ratios", ratios, ndim=1)
    xtol = check_pos_float("xtol", xtol)

    def codes(y):
        s = solve_sigmoid_toy(rho, toy_class_targets(rho.size, y_plus=y_plus, y_minus=y),
                              **solver_kw)
        if not s.converged:
            raise RuntimeError(f"solve at y_minus={y} failed: {s.message}")
        return _active_codes(s, min_weight)

    a, b = float(y_lo), float(y_hi)
    ca, cb = codes(a), codes(b)
    if ca == cb:
        raise ValueError(f"the active code sets at y_lo={a} and y_hi={b} are equal ({ca}); "
                         f"nothing to locate")
    while b - a > xtol:
        c = 0.5 * (a + b)
        cc = codes(c)
        if cc == ca:
            a = c
        else:
            b, cb = c, cc
    return {"y_minus": 0.5 * (a + b), "interval": (a, b), "before": ca, "after": cb}
