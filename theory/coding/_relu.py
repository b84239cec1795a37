"""Sparse coding in ReLU non-lazy networks: outliers plus a bulk (L = 1, T = 0).

Source: A. van Meegen & H. Sompolinsky, *Coding schemes in neural networks learning
classification tasks*, Nat. Commun. 16, 3354 (2025) (seed 000), main text "Sparse coding scheme"
[MT]; the self-consistency equations are the reconstruction of our notes
``spec/coding_schemes.md`` §5.2 [RECON] (supplement C was not available).

[MT] The readout posterior splits into n = O(1) *outlier* neurons, whose readouts and
preactivations are frozen at O(sqrt N) values ``a_i = sqrt(N) abar_i``, ``z_i = sqrt(N) zbar_i``,
and a *bulk* with ``P(a) = delta(a - a_0)`` and the non-Gaussian ``P(z | a_0) ∝ N(z|0,K0)
exp(a_0^T t^T relu(z))``. sigma_a^2 = P^{-1/L} = 1/P for L = 1.

Orthogonal toy (K0 = I, class fractions rho_c, class targets y_c), [RECON, notes §5.2]:

* bulk readout ``a_0 = argmax g``, ``g(a) = -|a|^2/2 + sum_c rho_c psi_R(t_c . a)``, i.e.
  ``a_0 = sum_c rho_c t_c M(t_c . a_0)`` with ``psi_R(h) = log[1/2 + e^{h^2/2} Phi_N(h)]`` and
  ``M = psi_R'`` (:mod:`richlazy.theory.kernels._tilted`);
* a single-class outlier coding class c is *marginal*: ``rho_c |t_c|^2 = 1`` (its log-weight
  ``N E`` with ``E = P rho_c zbar_c^2 (rho_c |t_c|^2 - 1)/2`` vanishes), it is silent on the
  other classes (needs ``t_c' . t_c <= 0``), ``zbar_mu = zbar_c`` on class c, and
  ``abar = rho_c t_c zbar_c``;
* output constraint ``y_c^r = a_0^r M(t_c . a_0) + rho_c t_c^r s_c``, ``s_c = sum over the
  outliers coding c of zbar_c^2`` (only s_c is determined; one outlier with zbar_c = sqrt(s_c)
  is reported);
* all of it is the KKT system of the convex problem ``min_t g_t(a_0(t)) - sum_c rho_c t_c . y_c``
  subject to the readout integral being finite, ``sum_c rho_c relu(t_c . u)^2 <= |u|^2`` for
  all u; the multipliers of the active single-class constraints ``rho_c |t_c|^2 <= 1`` are the
  outlier strengths (rho_c s_c / 2) -- a condensation.

Outlier-only theory for general data (notes §5.2 last bullet; MT: on MNIST the mean predictor
is captured by the outliers alone): the same KKT conditions without the bulk are those of the
minimum-norm interpolation ``min sum_i [P |abar_i|^2 + zbar_i^T K0^{-1} zbar_i]/2`` subject to
``sum_i abar_i relu(zbar_i)^T = Y^T``; the Lagrange multiplier is t.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy import linalg, optimize

from .._results import SolverStatus, raise_if_failed
from ..checks import as_float_array, as_float_matrix, check_int, check_pos_float
from ..kernels._tilted import tilted_density
from ._sigmoid import _check_labels, _check_toy_problem, _newton_lstsq, _ToyNeuron

__all__ = [
    "ReLUToySolution",
    "solve_relu_toy",
    "ReLUOutlierSolution",
    "solve_relu_outliers",
    "relu_stability_margin",
]


# --------------------------------------------------------------------------------------------
# stability of the readout integral
# --------------------------------------------------------------------------------------------


def relu_stability_margin(t, ratios):
    """``lambda* = max_{|u| = 1} sum_c rho_c relu(t_c . u)^2`` (notes §5.2) [OURS, exact].

    The toy readout integral ``int da exp(P g(a))`` exists iff lambda* < 1 (psi_R(h) ~ h^2/2 for
    h -> +inf); outliers sit on the marginal directions (lambda* = 1). The maximiser lies on a
    face where a set S of classes is active, where it is an eigenvector of
    ``sum_{c in S} rho_c t_c t_c^T``; all eigenvectors of all subsets (both signs) are
    evaluated, so the maximum is exact. Returns (lambda*, maximiser u).
    """
    t = as_float_matrix("t", t)
    rho = as_float_array("ratios", ratios, ndim=1)
    m = rho.size
    if t.shape[0] != m:
        raise ValueError(f"t must have k = {m} rows (one per class), got shape {t.shape}")

    def f(u):
        return float(np.sum(rho * np.maximum(t @ u, 0.0) ** 2))

    best, arg = 0.0, np.zeros(t.shape[1])
    for k in range(1, m + 1):
        for S in itertools.combinations(range(m), k):
            S = list(S)
            M = (t[S].T * rho[S]) @ t[S]
            _, V = np.linalg.eigh(M)
            for v in V.T:
                for sgn in (1.0, -1.0):
                    val = f(sgn * v)
                    if val > best:
                        best, arg = val, sgn * v
    return best, arg


# --------------------------------------------------------------------------------------------
# toy task
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReLUToySolution(SolverStatus):
    """Mean-field posterior of the ReLU network on the orthogonal toy task (notes §5.2).

    Attributes (k classes, m outputs, n_o outliers)
    ----------
    t : (k, m)                     conjugate field, row c = t_c.
    a0 : (m,)                      bulk readout (every bulk neuron has a = a_0).
    bulk_h : (k,)                  tilts t_c . a_0 of the bulk preactivation law on class c.
    bulk_mean_activation : (k,)    <relu(z)> of a bulk neuron on class c: M(t_c . a_0).
    bulk_activation_variance : (k,)  Var(relu(z)) of a bulk neuron on class c: psi_R''.
    outlier_classes : (n_o,) int   the class each outlier codes (single-class outliers).
    outlier_strength : (k,)        s_c = sum of zbar_c^2 over the outliers coding c (0: none).
    outlier_readouts : (n_o, m)    sqrt(N)-scaled readouts abar = rho_c t_c zbar_c.
    outlier_preactivations : (n_o,)  sqrt(N)-scaled preactivation zbar_c on the coded class (0
                                   on the others); one outlier per class with zbar_c = sqrt(s_c).
    marginality : (k,)             rho_c |t_c|^2 (= 1 for an outlier class, <= 1 otherwise).
    cone : (k, k)                  t_c . t_c' (must be <= 0 off the diagonal for outlier c).
    stability_margin : float       lambda* (:func:`relu_stability_margin`; must be 1 with
                                   outliers, < 1 without).
    bulk_gap : float               max g over other local maxima minus g(a_0) (< 0 required).
    g_value : float                g(a_0).
    residuals : dict               "bulk_stationarity", "output", "marginality" (max-abs).
    bulk_readout_covariance : (m, m)  finite P: (-P grad^2 g(a_0))^-1 (zeros for P = None).
    ratios, class_targets, P : the problem.
    """

    t: np.ndarray
    a0: np.ndarray
    bulk_h: np.ndarray
    bulk_mean_activation: np.ndarray
    bulk_activation_variance: np.ndarray
    outlier_classes: np.ndarray
    outlier_strength: np.ndarray
    outlier_readouts: np.ndarray
    outlier_preactivations: np.ndarray
    marginality: np.ndarray
    cone: np.ndarray
    stability_margin: float
    bulk_gap: float
    g_value: float
    residuals: dict
    bulk_readout_covariance: np.ndarray
    ratios: np.ndarray
    class_targets: np.ndarray
    P: int | None

    def outliers(self) -> list[dict]:
        """One dict per outlier: coded class, sqrt(N)-scaled readout abar and preactivation
        zbar on the coded class (relu(zbar) = 0 on the other classes)."""
        return [
            {"class": int(c), "abar": self.outlier_readouts[i].copy(),
             "zbar": float(self.outlier_preactivations[i])}
            for i, c in enumerate(self.outlier_classes)
        ]

    def mean_output(self, labels) -> np.ndarray:
        """Training output (P, m): ``a_0^r M(t_c . a_0) + sum_outliers abar^r relu(zbar_mu)``
        (MT mean predictor restricted to training inputs); equals the targets at T = 0."""
        lab = _check_labels(labels, self.t.shape[0])
        out = self.bulk_mean_activation[:, None] * self.a0[None, :]
        for i, c in enumerate(self.outlier_classes):
            out[c] += self.outlier_readouts[i] * self.outlier_preactivations[i]
        return out[lab]

    def feature_kernel(self, labels) -> np.ndarray:
        """Posterior-averaged feature kernel on training inputs (P, P) [MT form]: bulk
        ``<relu relu>`` (independent inputs: M_c M_c'; diagonal psi_R'' + M_c^2) plus
        ``sum_outliers relu(zbar_mu) relu(zbar_nu)``."""
        lab = _check_labels(labels, self.t.shape[0])
        Mv = self.bulk_mean_activation
        K = np.outer(Mv, Mv)[lab][:, lab]
        K[np.diag_indices_from(K)] = (self.bulk_activation_variance + Mv * Mv)[lab]
        for i, c in enumerate(self.outlier_classes):
            v = (lab == c) * self.outlier_preactivations[i]
            K += np.outer(v, v)
        return K

    def bulk_preactivation_density(self, z, c):
        """P(z_mu | a_0) on an input of class c: ``N(z|0,1) exp(h relu(z) - psi_R(h))``,
        h = t_c . a_0 (Fig. 4c, bulk) [RECON]."""
        c = check_int("c", c, minimum=0)
        if c >= self.t.shape[0]:
            raise ValueError(f"c must be in 0..{self.t.shape[0] - 1}, got {c}")
        return tilted_density(z, self.bulk_h[c], activation="relu")

    def bulk_readout_density(self, a, r):
        """Finite-P density of the bulk readout component a^r (Laplace Gaussian around a_0)."""
        r = check_int("r", r, minimum=0)
        if r >= self.t.shape[1]:
            raise ValueError(f"r must be in 0..{self.t.shape[1] - 1}, got {r}")
        if self.P is None:
            raise ValueError("bulk_readout_density needs a finite P (P=None gives a delta)")
        a = as_float_array("a", a)
        var = self.bulk_readout_covariance[r, r]
        return (np.exp(-0.5 * (a - self.a0[r]) ** 2 / var) / np.sqrt(2 * np.pi * var))[()]


def _relu_kkt(x, neuron, Yc, active):
    """Residuals of the toy KKT system in x = [t (k*m), a0 (m), s_A (|A|)]."""
    k, m, rho = neuron.k, neuron.m, neuron.rho
    t = x[: k * m].reshape(k, m)
    a0 = x[k * m: k * m + m]
    s = np.zeros(k)
    s[active] = x[k * m + m:]
    h = t @ a0
    M = neuron.psi(h[None, :])[1][0]
    F_bulk = a0 - (rho * M) @ t
    F_out = Yc - M[:, None] * a0[None, :] - (rho * s)[:, None] * t
    F_marg = rho[active] * np.sum(t[active] ** 2, axis=1) - 1.0
    return np.concatenate([F_bulk, F_out.ravel(), F_marg])


def _bulk_max(neuron, t, a_prev):
    """Global maximum of g (or None if g is unbounded / no maximum found)."""
    k, m, rho = neuron.k, neuron.m, neuron.rho
    B = np.array(list(itertools.product((0.0, 1.0), repeat=k)))
    starts = np.vstack([np.zeros(m), a_prev, 0.5 * (B * rho) @ t])
    A, g, H = neuron.local_maxima(t, starts)
    if A.shape[0] == 0:
        return None
    return A, g, H


def solve_relu_toy(
    ratios,
    class_targets,
    *,
    P: int | None = None,
    mu_schedule=(1e-1, 1e-2, 1e-3, 1e-4, 1e-6),
    tol: float = 1e-10,
    throw: bool = False,
) -> ReLUToySolution:
    """Sparse code of a ReLU non-lazy network on the orthogonal toy task (notes §5.2 [RECON]).

    Algorithm: the convex problem ``min_t g_t(a_0(t)) - sum_c rho_c t_c . y_c`` with the
    single-class constraints ``rho_c |t_c|^2 <= 1`` is solved by a log-barrier interior-point
    method (BFGS, barrier weights ``mu_schedule``; g is maximised by multi-start Newton, and a t
    where g has no maximum is rejected). The classes whose constraint is active define the
    outliers; the KKT system (bulk stationarity, output constraint, marginality) is then solved
    exactly, and the solution is checked: s_c >= 0, rho_c |t_c|^2 <= 1 off the active set, a_0
    the global maximum of g, and the exact stability margin lambda* <= 1 (which also implies
    t_c' . t_c <= 0 for every outlier class c).

    Parameters
    ----------
    ratios : (m,)            class fractions rho_c.
    class_targets : (k, m)   row c = target vector y_c (k classes, m outputs).
    P : int, optional        training-set size; only used for the finite-P bulk readout width.
    mu_schedule              barrier weights of the interior-point stage.
    tol, throw               residual tolerance; raise SolverError on failure.
    """
    rho, Yc = _check_toy_problem(ratios, class_targets)
    k, m = Yc.shape
    if P is not None:
        P = check_int("P", P, minimum=1)
    mus = tuple(float(check_pos_float("mu_schedule", float(v))) for v in mu_schedule)
    if len(mus) == 0:
        raise ValueError("mu_schedule must contain at least one barrier weight")
    tol = check_pos_float("tol", tol)
    neuron = _ToyNeuron(rho, "relu", True, 0, m)
    state = {"a": np.zeros(m)}

    def barrier_obj(x, mu):
        t = x.reshape(k, m)
        slack = 1.0 - rho * np.sum(t * t, axis=1)
        if np.any(slack <= 0):
            return np.inf, np.zeros_like(x)
        found = _bulk_max(neuron, t, state["a"])
        if found is None:
            return np.inf, np.zeros_like(x)
        A, g, _ = found
        a0 = A[0]
        state["a"] = a0
        M = neuron.psi((t @ a0)[None, :])[1][0]
        val = g[0] - np.sum(rho * np.sum(t * Yc, axis=1)) - mu * np.sum(np.log(slack))
        grad = rho[:, None] * (M[:, None] * a0[None, :] - Yc) \
            + mu * (2.0 * rho / slack)[:, None] * t
        return val, grad.ravel()

    x = np.zeros(k * m)
    nit = 0
    for mu in mus:
        res = optimize.minimize(barrier_obj, x, args=(mu,), jac=True, method="BFGS",
                                options={"gtol": 1e-10, "maxiter": 2000})
        x = res.x
        nit += int(res.nit)
    t = x.reshape(k, m)
    found = _bulk_max(neuron, t, state["a"])
    a0 = found[0][0]
    marg = rho * np.sum(t * t, axis=1)
    active = np.flatnonzero(marg > 1.0 - 1e-3)
    M = neuron.psi((t @ a0)[None, :])[1][0]
    s0 = np.array([np.dot(Yc[c] - M[c] * a0, t[c]) / (rho[c] * np.dot(t[c], t[c]))
                   for c in active])
    x0 = np.concatenate([t.ravel(), a0, s0])

    def fun(z):
        F = _relu_kkt(z, neuron, Yc, active)
        J = optimize.approx_fprime(z, lambda w: _relu_kkt(w, neuron, Yc, active), 1e-7)
        return F, J

    sol = optimize.root(_relu_kkt, x0, args=(neuron, Yc, active), method="hybr",
                        options={"xtol": 1e-14})
    xs = sol.x
    if np.max(np.abs(_relu_kkt(xs, neuron, Yc, active))) > tol:
        xs, _, _ = _newton_lstsq(fun, x0, tol)
    nit += int(sol.nfev)
    F = _relu_kkt(xs, neuron, Yc, active)
    t = xs[: k * m].reshape(k, m)
    a0 = xs[k * m: k * m + m]
    s = np.zeros(k)
    s[active] = xs[k * m + m:]
    res = {
        "bulk_stationarity": float(np.max(np.abs(F[:m]))),
        "output": float(np.max(np.abs(F[m: m + k * m]))),
        "marginality": float(np.max(np.abs(F[m + k * m:]), initial=0.0)),
    }
    resid = max(res.values())
    h = t @ a0
    _, Mv, Vv = (v[0] for v in neuron.psi(h[None, :]))
    g0 = float(neuron.evaluate(a0[None, :], t, order=0)[0][0])
    found = _bulk_max(neuron, t, a0)
    others = found[1][np.max(np.abs(found[0] - a0), axis=1) > 1e-6] if found else np.zeros(0)
    bulk_gap = float(np.max(others) - g0) if others.size else -np.inf
    lam_star, _ = relu_stability_margin(t, rho)
    marg = rho * np.sum(t * t, axis=1)
    problems = []
    if resid > tol:
        problems.append(f"KKT residual {resid:.2e} > tol")
    if np.any(s[active] < -1e-9):
        problems.append(f"negative outlier strength {s[active].min():.3g}")
    if bulk_gap > 1e-9:
        problems.append(f"a_0 is not the global maximum of g (gap {bulk_gap:.3g})")
    if lam_star > 1.0 + 1e-8:
        problems.append(f"readout integral unstable (lambda* = {lam_star:.6f} > 1)")
    ok = not problems
    outl = np.array([c for c in active if s[c] > 0], dtype=int)
    zbar = np.sqrt(s[outl])
    abar = rho[outl, None] * t[outl] * zbar[:, None]
    cov = np.zeros((m, m))
    if P is not None:
        Hs = neuron.evaluate(a0[None, :], t)[2][0]
        cov = np.linalg.inv(-P * Hs)
    msg = (f"converged: {outl.size} outliers (classes {outl.tolist()}), KKT residual "
           f"{resid:.1e}, lambda* = {lam_star:.12f}" if ok else "; ".join(problems))
    out = ReLUToySolution(
        converged=ok, status=0 if ok else 2, message=msg, nit=nit, residual=resid, t=t, a0=a0,
        bulk_h=h, bulk_mean_activation=Mv, bulk_activation_variance=Vv, outlier_classes=outl,
        outlier_strength=s, outlier_readouts=abar, outlier_preactivations=zbar,
        marginality=marg, cone=t @ t.T, stability_margin=float(lam_star), bulk_gap=bulk_gap,
        g_value=g0, residuals=res, bulk_readout_covariance=cov, ratios=rho, class_targets=Yc,
        P=P,
    )
    raise_if_failed(out, throw)
    return out


# --------------------------------------------------------------------------------------------
# outlier-only theory on general data
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReLUOutlierSolution(SolverStatus):
    """Outlier-only mean-field theory of a ReLU network on general data (notes §5.2) [RECON].

    Attributes (n_o outliers, P training inputs, m outputs)
    ----------
    abar : (n_o, m)      sqrt(N)-scaled outlier readouts.
    zbar : (n_o, P)      sqrt(N)-scaled outlier preactivations on the training inputs.
    t : (P, m)           conjugate field = Lagrange multiplier of the interpolation constraint.
    cost : float         sum_i [P |abar_i|^2 + zbar_i^T K0^-1 zbar_i] / 2 (minimised).
    dual_margin : float  max over neurons of |t^T relu(z)|^2 / (P z^T K0^-1 z) found by a
                         multi-start search; <= 1 certifies (up to the search) that no further
                         outlier direction is unstable, i.e. the KKT point is the global optimum.
    residuals : dict     "stationarity_a", "stationarity_z", "output" (max-abs; the relu
                         subgradient in [0, 1] is allowed where zbar_mu = 0).
    K0, Y, P_scale, T : the problem (P_scale = inverse readout prior variance, default P;
                         T = rescaled temperature, 0 = interpolation).
    """

    abar: np.ndarray
    zbar: np.ndarray
    t: np.ndarray
    cost: float
    dual_margin: float
    residuals: dict
    K0: np.ndarray
    Y: np.ndarray
    P_scale: float
    T: float = 0.0

    @property
    def n_outliers(self) -> int:
        return int(self.abar.shape[0])

    def mean_output(self) -> np.ndarray:
        """Training output ``sum_i relu(zbar_i) abar_i^T`` (P, m); equals Y - T t."""
        return np.maximum(self.zbar, 0.0).T @ self.abar

    def predict(self, k0) -> np.ndarray:
        """Mean predictor (Q, m) [MT, outlier part]: ``f_r(x) = sum_i abar_i^r relu(zbar_i(x))``,
        ``zbar_i(x) = zbar_i^T K0^{-1} k0(x)``; ``k0`` is (P, Q) with columns X^T x / N0."""
        k0 = as_float_matrix("k0", k0)
        P = self.K0.shape[0]
        if k0.shape[0] != P:
            raise ValueError(f"k0 must have P = {P} rows (k0(x) = X^T x / N0 as columns), got "
                             f"shape {k0.shape}")
        zx = self.zbar @ np.linalg.solve(self.K0, k0)  # (n_o, Q)
        return np.maximum(zx, 0.0).T @ self.abar

    def test_kernel(self, k0_a, k0_b) -> np.ndarray:
        """Outlier part of the test kernel [MT]: ``sum_i relu(zbar_i(x1)) relu(zbar_i(x2))``."""
        k0_a = as_float_matrix("k0_a", k0_a)
        k0_b = as_float_matrix("k0_b", k0_b)
        za = np.maximum(self.zbar @ np.linalg.solve(self.K0, k0_a), 0.0)
        zb = np.maximum(self.zbar @ np.linalg.solve(self.K0, k0_b), 0.0)
        return za.T @ zb

    def generalization_error(self, k0, Y_test) -> np.ndarray:
        """Per-output ``eps_r = mean_mu [y_mu^r - f_r(x_mu)]^2`` ([MT], no variance term)."""
        f = self.predict(k0)
        Y_test = as_float_matrix("Y_test", Y_test, allow_1d=True)
        if Y_test.shape != f.shape:
            raise ValueError(f"Y_test must have shape {f.shape} (Q, m), got {Y_test.shape}")
        return np.mean((Y_test - f) ** 2, axis=0)


def _penalised_objective(x, n, m, L, Ps, Y, lam):
    """Weight-decay regression ``[Ps|A|^2 + |W|^2]/2 + |sum_i relu(L w_i) a_i^T - Y|^2/(2 lam)``
    in x = [A (n m), W (n P)], z_i = L w_i (so that |w_i|^2 = z_i^T K0^-1 z_i); value, gradient."""
    P = L.shape[0]
    A = x[: n * m].reshape(n, m)
    W = x[n * m:].reshape(n, P)
    Z = W @ L.T
    R = np.maximum(Z, 0.0)
    D = (R.T @ A - Y) / lam  # (P, m) = -t
    val = 0.5 * (Ps * np.sum(A * A) + np.sum(W * W)) + 0.5 * lam * np.sum(D * D)
    gA = Ps * A + R @ D
    gW = W + ((Z > 0) * (A @ D.T)) @ L
    return val, np.concatenate([gA.ravel(), gW.ravel()])


def _pricing(t, L, Ps, rng, W_known, n_random):
    """Dual margin ``max_z |t^T relu(z)|^2 / (Ps z^T K0^-1 z)`` (z = L w) by L-BFGS from the
    known neurons, from the signed output directions of t, and from ``n_random`` random starts.
    Returns (margin, maximiser w with |w| = 1)."""
    P, m = t.shape

    def f(w):
        z = L @ w
        v = t.T @ np.maximum(z, 0.0)
        nw = w @ w
        val = (v @ v) / (Ps * nw)
        gz = (z > 0) * (t @ v) * (2.0 / (Ps * nw))
        return -val, -(L.T @ gz - 2.0 * val * w / nw)

    starts = [w for w in W_known if np.linalg.norm(w) > 0]
    K0 = L @ L.T
    for r in range(m):
        for sgn in (1.0, -1.0):
            h = sgn * t[:, r]
            for u in (np.maximum(h, 0.0), K0 @ np.maximum(h, 0.0)):
                if np.any(u > 0):
                    starts.append(linalg.solve_triangular(L, u, lower=True))
    starts += list(rng.standard_normal((n_random, P)))
    best, arg = 0.0, None
    for w0 in starts:
        res = optimize.minimize(f, w0 / np.linalg.norm(w0), jac=True, method="L-BFGS-B",
                                options={"maxiter": 500})
        if -res.fun > best:
            best, arg = -float(res.fun), res.x / np.linalg.norm(res.x)
    return best, arg


def _kkt_pattern(x, n, m, K0inv, Ps, Y, T, pos, zero):
    """KKT system of the outlier problem with a fixed sign pattern of the preactivations.

    x = [t (P m), A (n m), V (n P)]; z_i,mu = V_i,mu on ``pos`` (> 0) and on the negative set,
    z_i,mu = 0 on ``zero``, where V_i,mu is instead the subgradient theta in [0, 1] of relu at 0.
    Equations: Ps a_i = t^T relu(z_i); K0^-1 z_i = g_i o (t a_i) with g = Theta(z) (theta on the
    zero set); sum_i relu(z_i) a_i^T = Y - T t. Returns (F, J) with the analytic Jacobian.
    """
    P = K0inv.shape[0]
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
    F2 = Z @ K0inv - G * TA
    F3 = R.T @ A - Y + T * t
    F = np.concatenate([F1.ravel(), F2.ravel(), F3.ravel()])
    Nx = x.size
    J = np.zeros((Nx, Nx))
    r1, r2, r3 = 0, n * m, n * m + n * P
    Im = np.eye(m)
    for i in range(n):
        rows1 = slice(r1 + i * m, r1 + (i + 1) * m)
        J[rows1, ia + i * m: ia + (i + 1) * m] = Ps * Im
        J[rows1, it:ia] = -np.kron(R[i], Im)
        J[rows1, iv + i * P: iv + (i + 1) * P] = -(t * posf[i][:, None]).T
        rows2 = slice(r2 + i * P, r2 + (i + 1) * P)
        J[rows2, iv + i * P: iv + (i + 1) * P] = (K0inv * (1.0 - zerof[i])[:, None]).T \
            - np.diag(zerof[i] * TA[i])
        J[rows2, ia + i * m: ia + (i + 1) * m] = -G[i][:, None] * t
        blk = np.zeros((P, P, m))
        idx = np.arange(P)
        blk[idx, idx, :] = -G[i][:, None] * A[i][None, :]
        J[rows2, it:ia] = blk.reshape(P, P * m)
        J[r3:, ia + i * m: ia + (i + 1) * m] = np.kron(R[i][:, None], Im)
        blk3 = np.zeros((P, m, P))
        blk3[idx, :, idx] = posf[i][:, None] * A[i][None, :]
        J[r3:, iv + i * P: iv + (i + 1) * P] = blk3.reshape(P * m, P)
    J[r3:, it:ia] += T * np.eye(P * m)
    return F, J


def _kkt_residuals(t, A, Z, K0inv, Ps, Y, T, zero_tol):
    """Max-abs KKT residuals of a candidate, with the relu subgradient at z = 0: on entries with
    |z| <= zero_tol the stationarity residual is the distance of (K0^-1 z)_mu to the interval
    between 0 and (t a_i)_mu."""
    R = np.maximum(Z, 0.0)
    TA = A @ t.T
    S = Z @ K0inv
    r_z = np.where(Z > zero_tol, S - TA, np.where(Z < -zero_tol, S, 0.0))
    lo, hi = np.minimum(TA, 0.0), np.maximum(TA, 0.0)
    at0 = np.abs(Z) <= zero_tol
    r_z = np.where(at0, np.maximum(lo - S, 0.0) + np.maximum(S - hi, 0.0), r_z)
    return {
        "stationarity_a": float(np.max(np.abs(Ps * A - R @ t), initial=0.0)),
        "stationarity_z": float(np.max(np.abs(r_z), initial=0.0)),
        "output": float(np.max(np.abs(R.T @ A - Y + T * t))),
    }


def _polish(t, A, Z, K0inv, Ps, Y, T, tol, zero_rel=1e-5, rounds=8):
    """Exact KKT solve by (least-squares) Newton at a fixed sign pattern; entries that leave
    their sign class are moved (active-set style) and the solve is repeated."""
    n, P = Z.shape
    m = A.shape[1]
    scale = np.max(np.abs(Z), axis=1, keepdims=True)
    zero = np.abs(Z) <= zero_rel * scale
    pos = (Z > 0) & ~zero
    nfev = 0
    x = None
    for _ in range(rounds):
        TA = A @ t.T
        S = Z @ K0inv
        theta = np.clip(np.divide(S, TA, out=np.zeros_like(S), where=np.abs(TA) > 0), 0.0, 1.0)
        V = np.where(zero, theta, Z)
        x = np.concatenate([t.ravel(), A.ravel(), V.ravel()])

        def fun(v, pos=pos, zero=zero):
            return _kkt_pattern(v, n, m, K0inv, Ps, Y, T, pos, zero)

        x, res, k = _newton_lstsq(fun, x, tol)
        nfev += k
        t = x[: P * m].reshape(P, m)
        A = x[P * m: P * m + n * m].reshape(n, m)
        V = x[P * m + n * m:].reshape(n, P)
        Z = np.where(zero, 0.0, V)
        bad_pos = pos & (V <= 0)
        bad_neg = ~pos & ~zero & (V >= 0)
        bad_zero_hi = zero & (V > 1.0 + 1e-9)
        bad_zero_lo = zero & (V < -1e-9)
        if not (bad_pos.any() or bad_neg.any() or bad_zero_hi.any() or bad_zero_lo.any()):
            break
        zero = (zero | bad_pos | bad_neg) & ~bad_zero_hi & ~bad_zero_lo
        pos = (pos & ~bad_pos) | bad_zero_hi
        tiny = 1e-8 * np.max(np.abs(Z))
        Z = np.where(bad_zero_hi, tiny, np.where(bad_zero_lo, -tiny, Z))
    return t, A, Z, nfev


def _prune_merge(A, Z, Ps, K0inv, rel=1e-6):
    w = np.linalg.norm(A, axis=1) * np.linalg.norm(np.maximum(Z, 0.0), axis=1)
    keep = w > rel * max(w.max(), 1e-300)
    return _merge_parallel(A[keep], Z[keep], Ps, K0inv)


def _row_space_projector(Y):
    """Projector onto the span of the target vectors (rows of Y) in output space."""
    U, s, Vt = np.linalg.svd(Y, full_matrices=False)
    k = int(np.sum(s > 1e-12 * max(s[0], 1e-300)))
    return Vt[:k].T @ Vt[:k]


def _penalised_stage(A, W, m, L, Ps, Y, lam):
    """L-BFGS on :func:`_penalised_objective` from (A, W); returns (A, W, iterations)."""
    k, P = W.shape
    x = np.concatenate([A.ravel(), W.ravel()])
    res = optimize.minimize(_penalised_objective, x, args=(k, m, L, Ps, Y, lam), jac=True,
                            method="L-BFGS-B", options={"maxiter": 3000,
                                                         "gtol": 1e-12 * max(1.0, lam),
                                                         "ftol": 1e-15})
    return res.x[: k * m].reshape(k, m).copy(), res.x[k * m:].reshape(k, P).copy(), int(res.nit)


def _insert(A, W, t, L, Ps, w_star):
    """Add a small neuron along the violating direction w* (readout along t^T relu(L w*)),
    reusing a dead neuron when there is one."""
    v = t.T @ np.maximum(L @ w_star, 0.0)
    s = 0.1 * np.sqrt(np.mean(np.sum(W * W, axis=1))) + 1e-3
    a_new = s * v / (np.linalg.norm(v) * np.sqrt(Ps))
    live = np.linalg.norm(A, axis=1) * np.linalg.norm(W, axis=1)
    dead = np.flatnonzero(live < 1e-8 * max(live.max(), 1e-300))
    if dead.size:
        A, W = A.copy(), W.copy()
        A[dead[0]], W[dead[0]] = a_new, s * w_star
        return A, W
    return np.vstack([A, a_new]), np.vstack([W, s * w_star])


def solve_relu_outliers(
    K0,
    Y,
    *,
    P: float | None = None,
    T: float = 0.0,
    n_neurons: int | None = None,
    n_restarts: int = 2,
    seed: int = 0,
    tol: float = 1e-10,
    maxiter: int = 20,
    throw: bool = False,
) -> ReLUOutlierSolution:
    """Outlier-only ReLU theory (notes §5.2 last bullet) [RECON]: the minimum-norm interpolant

        min sum_i [P |abar_i|^2 + zbar_i^T K0^-1 zbar_i]/2   s.t.   sum_i abar_i relu(zbar_i)^T = Y^T

    whose KKT conditions are the outlier equations ``P abar = t^T relu(zbar)``,
    ``K0^-1 zbar = Theta(zbar) o (t abar)`` (relu subgradient in [0, 1] where zbar_mu = 0) with
    the multiplier t. It is convex over neuron measures (an atomic-norm problem); its dual is
    ``max_t tr(t^T Y)`` subject to ``|t^T relu(z)|^2 <= P z^T K0^-1 z`` for every z, so a KKT
    point whose t satisfies that bound (``dual_margin <= 1``) is the global optimum.

    With ``T > 0`` the interpolation constraint is replaced by the finite-temperature output
    ``sum_i abar_i relu(zbar_i)^T = (Y - T t)^T`` (notes §2.3 (S1)), i.e. the weight-decay
    regression ``min cost + |F - Y|^2 / (2T)`` with ``t = (Y - F)/T`` [RECON, outlier-only].

    Algorithm (conditional gradient with sliding neurons): the weight-decay regression
    ``cost + |F - Y|^2/(2 lam)`` is minimised over ``n_neurons`` neurons (L-BFGS, z = chol(K0) w)
    for decreasing lam (down to T, or to 1e-7 x the data scale at T = 0); after each stage the
    dual margin is searched (multi-start L-BFGS, :func:`_pricing`) with ``t = (Y - F)/lam``, and
    a neuron is inserted in the most violating direction while the margin exceeds 1 (at most
    ``maxiter`` insertions). Negligible neurons are pruned, parallel ones merged, the KKT system
    is solved exactly at the final sign pattern (least-squares Newton with an active-set update
    of the zero entries), t is projected onto the span of the targets, and the certificate is
    recomputed. The lowest-cost certified result of ``n_restarts`` random initialisations is
    returned.

    Parameters
    ----------
    K0 : (P, P)        input kernel (symmetric positive definite).
    Y : (P, m)         targets.
    P : float          inverse readout prior variance (sigma_a^2 = 1/P); default K0.shape[0].
    T : float >= 0     rescaled temperature (0: interpolation).
    n_neurons          initial number of candidate neurons (default 3 m).
    n_restarts, seed   random initialisations; tol, maxiter, throw: convergence / insertions.
    """
    K0 = as_float_matrix("K0", K0)
    Pn = K0.shape[0]
    if K0.shape != (Pn, Pn):
        raise ValueError(f"K0 must be square (P x P), got shape {K0.shape}")
    if not np.allclose(K0, K0.T, rtol=1e-10, atol=1e-12 * np.max(np.abs(K0))):
        raise ValueError("K0 must be symmetric")
    try:
        L = np.linalg.cholesky(K0)
    except np.linalg.LinAlgError:
        raise ValueError("K0 must be positive definite (Cholesky failed)") from None
    Y = as_float_matrix("Y", Y, allow_1d=True)
    if Y.shape[0] != Pn:
        raise ValueError(f"Y must have P = {Pn} rows (one per training input), got shape {Y.shape}")
    m = Y.shape[1]
    Ps = float(Pn) if P is None else check_pos_float("P", P)
    T = float(as_float_array("T", T, ndim=0))
    if not (np.isfinite(T) and T >= 0):
        raise ValueError(f"T must be a finite number >= 0, got {T!r}")
    n = 3 * m if n_neurons is None else check_int("n_neurons", n_neurons, minimum=1)
    n_restarts = check_int("n_restarts", n_restarts, minimum=1)
    tol = check_pos_float("tol", tol)
    maxiter = check_int("maxiter", maxiter, minimum=0)
    if not np.any(Y):
        raise ValueError("Y must not be all zero (the minimum-norm solution is then empty)")
    rng = np.random.default_rng(seed)
    Linv = linalg.solve_triangular(L, np.eye(Pn), lower=True)
    K0inv = Linv.T @ Linv
    Pi = _row_space_projector(Y)
    lam_end = T if T > 0 else 1e-4
    lams = [lam for lam in (1.0, 1e-1, 1e-2, 1e-3) if lam > lam_end] + [lam_end]
    n_random = 10 + Pn // 2

    best = None
    nit = 0
    for _ in range(n_restarts):
        A = rng.standard_normal((n, m)) / np.sqrt(Ps)
        W = rng.standard_normal((n, Pn)) / np.sqrt(Pn)
        inserted = 0
        schedule = lams
        for _round in range(maxiter + 1):
            for lam in schedule:
                while True:
                    A, W, k_nit = _penalised_stage(A, W, m, L, Ps, Y, lam)
                    nit += k_nit
                    if inserted >= maxiter:
                        break
                    t = (Y - np.maximum(W @ L.T, 0.0).T @ A) / lam
                    margin, w_star = _pricing(t @ Pi, L, Ps, rng, W, n_random)
                    if margin <= 1.0 + 1e-3 or w_star is None:
                        break
                    A, W = _insert(A, W, t, L, Ps, w_star)
                    inserted += 1
            Z = W @ L.T
            t = (Y - np.maximum(Z, 0.0).T @ A) / lam_end
            A, Z = _prune_merge(A, Z, Ps, K0inv)
            t, A, Z, nfev = _polish(t @ Pi, A, Z, K0inv, Ps, Y, T, tol)
            nit += nfev
            t = t @ Pi
            A, Z = _prune_merge(A, Z, Ps, K0inv)
            W = np.array([linalg.solve_triangular(L, z, lower=True) for z in Z])
            zero_tol = 1e-9 * max(1.0, float(np.max(np.abs(Z))))
            res_d = _kkt_residuals(t, A, Z, K0inv, Ps, Y, T, zero_tol)
            resid = max(res_d.values())
            ok_kkt = resid <= 10 * max(tol, 1e-8)
            margin, w_star = _pricing(t, L, Ps, rng, W, n_random)
            if (ok_kkt and margin <= 1.0 + 1e-6) or inserted >= maxiter or w_star is None:
                break
            # sliding continues from the polished neurons plus one inserted in the violating
            # direction, at the final penalty only
            A, W = _insert(A, W, t, L, Ps, w_star)
            inserted += 1
            schedule = [lam_end]
        cost = 0.5 * (Ps * np.sum(A * A) + np.sum(Z * (Z @ K0inv)))
        if T > 0:
            cost += 0.5 * np.sum((np.maximum(Z, 0.0).T @ A - Y) ** 2) / T
        cand = (t, A, Z, float(cost), resid, res_d, ok_kkt)
        if best is None or (ok_kkt and (not best[6] or cost < best[3] - 1e-9)) or \
                (not best[6] and not ok_kkt and resid < best[4]):
            best = cand
    t, A, Z, cost, resid, res_d, ok_kkt = best
    margin, _ = _pricing(t, L, Ps, rng, np.array([linalg.solve_triangular(L, z, lower=True)
                                                  for z in Z]), n_random + Pn)
    ok = ok_kkt and margin <= 1.0 + 1e-6
    msg = (f"converged: {A.shape[0]} outliers, cost {cost:.10g}, KKT residual {resid:.1e}, dual "
           f"margin {margin:.8f}")
    if not ok:
        msg = ("not certified: " + msg + ("; dual margin > 1: another neuron direction would "
               "lower the cost (try more n_restarts / maxiter)" if margin > 1.0 + 1e-6 else
               "; KKT system not solved to tolerance"))
    out = ReLUOutlierSolution(
        converged=bool(ok), status=0 if ok else 2, message=msg, nit=nit, residual=resid,
        abar=A, zbar=Z, t=t, cost=float(cost), dual_margin=float(margin), residuals=res_d,
        K0=K0, Y=Y, P_scale=Ps, T=T,
    )
    raise_if_failed(out, throw)
    return out


def _merge_parallel(A, Z, Ps, K0inv, tol=1e-4):
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
        # balance: Ps |a|^2 = s^2 zhat^T K0^-1 zhat with a = c / s
        q = float(zhat @ K0inv @ zhat)
        s = (Ps * (c @ c) / q) ** 0.25
        outA.append(c / s)
        outZ.append(s * zhat)
    return np.array(outA), np.array(outZ)
