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

The outlier-only theory for general data is in :mod:`._relu_outliers`; the single-neuron core
(:class:`_ToyNeuron` with the ReLU tilted integrals, :func:`_newton_lstsq`) is shared with the
sigmoid solvers (:mod:`._toy_core`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import optimize

from ..._numerics import _newton_lstsq
from ..._results import SolverStatus, Status, raise_if_failed
from ...checks import as_float_array, as_float_matrix, check_int, check_pos_float, renamed_option
from ...kernels._tilted import tilted_density
from .._code_core import _ToyNeuron, _vertex_starts
from .._problem import _check_labels, _check_ratios, _check_toy_problem
from ._multiclass import _barrier_minimise, _face_directions, _solve_multiclass

__all__ = ["ReLUToySolution", "solve_relu_toy", "relu_stability_margin"]


# --------------------------------------------------------------------------------------------
# stability of the readout integral
# --------------------------------------------------------------------------------------------


def relu_stability_margin(t, ratios):
    """``lambda* = max_{|u| = 1} sum_c rho_c relu(t_c . u)^2`` (notes §5.2) [OURS, exact].

    The toy readout integral ``int da exp(P g(a))`` exists iff lambda* < 1 (psi_R(h) ~ h^2/2 for
    h -> +inf); outliers sit on the marginal directions (lambda* = 1). The maximiser lies on a
    face where a set S of classes is active, where it is an eigenvector of
    ``sum_{c in S} rho_c t_c t_c^T``; all eigenvectors of all subsets (both signs) are
    evaluated, so the maximum is exact. ``ratios`` (k,) are class fractions (> 0, summing to
    1). Returns (lambda*, maximiser u).
    """
    t = as_float_matrix("t", t)
    rho = _check_ratios(ratios)
    m = rho.size
    if t.shape[0] != m:
        raise ValueError(f"t must have k = {m} rows (one per class), got shape {t.shape}")

    def f(u):
        return float(np.sum(rho * np.maximum(t @ u, 0.0) ** 2))

    best, arg = 0.0, np.zeros(t.shape[1])
    for _S, u in _face_directions(t, rho):
        val = f(u)
        if val > best:
            best, arg = val, u
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
    outlier_classes : (n_o,) int   the class each outlier codes; -1 for an outlier that codes
                                   several classes (see outlier_codes).
    outlier_strength : (k,)        s_c = sum of zbar_c^2 over the outliers coding c (0: none).
    outlier_readouts : (n_o, m)    sqrt(N)-scaled readouts abar (= rho_c t_c zbar_c for a
                                   single-class outlier; r u for a multi-class one, below).
    outlier_preactivations : (n_o,)  sqrt(N)-scaled preactivation on the coded class (single-class:
                                   one outlier per class with zbar_c = sqrt(s_c)); the largest
                                   class value for a multi-class outlier.
    outlier_codes : (n_o, k) bool  the classes each outlier is active on.
    outlier_class_preactivations : (n_o, k)  sqrt(N)-scaled zbar of each outlier on each class
                                   (0 where silent). A multi-class outlier along the unit
                                   direction u has abar = r u and zbar_c = r relu(t_c . u), u an
                                   eigenvector with eigenvalue 1 of sum_{c active} rho_c t_c t_c^T
                                   (:mod:`._relu_multiclass`); when more outlier types are
                                   marginal than used, the split is not unique (``message``
                                   says so) but outputs and the feature kernel are.
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
    outlier_codes: np.ndarray = field(default=None, repr=False)
    outlier_class_preactivations: np.ndarray = field(default=None, repr=False)

    def outliers(self) -> list[dict]:
        """One dict per outlier: coded class (-1: several), sqrt(N)-scaled readout abar,
        preactivation zbar on the coded class, the coded classes and zbar on every class."""
        return [
            {"class": int(c), "abar": self.outlier_readouts[i].copy(),
             "zbar": float(self.outlier_preactivations[i]),
             "codes": np.flatnonzero(self.outlier_codes[i]).tolist(),
             "zbar_classes": self.outlier_class_preactivations[i].copy()}
            for i, c in enumerate(self.outlier_classes)
        ]

    def mean_output(self, labels) -> np.ndarray:
        """Training output (P, m): ``a_0^r M(t_c . a_0) + sum_outliers abar^r relu(zbar_mu)``
        (MT mean predictor restricted to training inputs); equals the targets at T = 0."""
        lab = _check_labels(labels, self.t.shape[0])
        out = self.bulk_mean_activation[:, None] * self.a0[None, :]
        out += self.outlier_class_preactivations.T @ self.outlier_readouts
        return out[lab]

    def feature_kernel(self, labels) -> np.ndarray:
        """Posterior-averaged feature kernel on training inputs (P, P) [MT form]: bulk
        ``<relu relu>`` (independent inputs: M_c M_c'; diagonal psi_R'' + M_c^2) plus
        ``sum_outliers relu(zbar_mu) relu(zbar_nu)``."""
        lab = _check_labels(labels, self.t.shape[0])
        Mv = self.bulk_mean_activation
        K = np.outer(Mv, Mv)[lab][:, lab]
        K[np.diag_indices_from(K)] = (self.bulk_activation_variance + Mv * Mv)[lab]
        for zc in self.outlier_class_preactivations:
            v = zc[lab]
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


def _bulk_summary(neuron, t, a0):
    """Tilts h, M(h), Var and g at a_0, and the bulk gap: the largest other local maximum of g
    minus g(a_0) (< 0 required: a_0 the global maximum)."""
    h = t @ a0
    _, Mv, Vv = (v[0] for v in neuron.psi(h[None, :]))
    g0 = float(neuron.evaluate(a0[None, :], t, order=0)[0][0])
    found = _bulk_max(neuron, t, a0)
    others = found[1][np.max(np.abs(found[0] - a0), axis=1) > 1e-6] if found else np.zeros(0)
    bulk_gap = float(np.max(others) - g0) if others.size else -np.inf
    return h, Mv, Vv, g0, bulk_gap


def _bulk_max(neuron, t, a_prev):
    """Global maximum of g (or None if g is unbounded / no maximum found)."""
    starts = np.vstack([np.zeros(neuron.m), a_prev, 0.5 * _vertex_starts(neuron.rho, t)])
    A, g, H = neuron.local_maxima(t, starts)
    if A.shape[0] == 0:
        return None
    return A, g, H


def solve_relu_toy(
    ratios,
    class_targets=None,
    *,
    P: int | None = None,
    mu_schedule=(1e-1, 1e-2, 1e-3, 1e-4, 1e-6),
    atol: float | None = None,
    throw: bool = False,
    tol: float | None = None,
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
    ratios : (k,) or ToyTask class fractions rho_c, or a :class:`ToyTask` holding both (then
                             leave out ``class_targets``).
    class_targets : (k, m)   row c = target vector y_c (k classes, m outputs).
    P : int, optional        training-set size; only used for the finite-P bulk readout width
                             (the readout prior is sigma_a2 = 1/P).
    mu_schedule              barrier weights of the interior-point stage.
    atol, throw              max-abs KKT residual tolerance (default 1e-10; ``tol=`` is its
                             deprecated spelling); raise SolverError on failure.
    """
    atol = renamed_option("atol", atol, "tol", tol, default=1e-10)
    rho, Yc = _check_toy_problem(ratios, class_targets)
    m = Yc.shape[1]
    if P is not None:
        P = check_int("P", P, minimum=1)
    mus = tuple(check_pos_float("mu_schedule", v) for v in mu_schedule)
    if len(mus) == 0:
        raise ValueError("mu_schedule must contain at least one barrier weight")
    tol = check_pos_float("atol", atol)
    neuron = _ToyNeuron(rho, "relu", True, 0, m)
    t, a_last, nit = _barrier_minimise(neuron, Yc, _single_class_log_slack(rho), _bulk_max, mus)
    xs, active, nfev = _solve_single_class_kkt(neuron, rho, Yc, t, a_last, tol)
    nit += nfev
    pt, problems, unstable = _single_class_point(neuron, rho, Yc, xs, active, tol)
    if unstable and len(problems) == 1:
        # the single-class constraints do not suffice: outliers on several classes
        mc = _solve_multiclass(neuron, Yc, tol, _bulk_max, relu_stability_margin, mus)
        if mc is None:
            pt.msg += ("; no KKT point with multi-class outliers found either (combinations of "
                       "the near-marginal outlier types at the barrier solution)")
        else:
            nit = nit + mc["nit"]
            pt = _multiclass_point(neuron, rho, Yc, tol, mc)
    cov = np.zeros((m, m))
    if P is not None:  # the Laplace width of the bulk readout at finite P
        Hs = neuron.evaluate(pt.a0[None, :], pt.t)[2][0]
        cov = np.linalg.inv(-P * Hs)
    out = ReLUToySolution(
        converged=pt.ok, status=Status.SUCCESS if pt.ok else Status.NUMERICAL_FAILURE,
        message=pt.msg, nit=nit, residual=pt.resid, t=pt.t, a0=pt.a0,
        bulk_h=pt.h, bulk_mean_activation=pt.Mv, bulk_activation_variance=pt.Vv,
        outlier_classes=pt.outl, outlier_strength=pt.s, outlier_readouts=pt.abar,
        outlier_preactivations=pt.zbar, marginality=pt.marg, cone=pt.t @ pt.t.T,
        stability_margin=float(pt.lam_star), bulk_gap=pt.bulk_gap, g_value=pt.g0,
        residuals=pt.res, bulk_readout_covariance=cov, ratios=rho, class_targets=Yc, P=P,
        outlier_codes=pt.zcls > 0.0, outlier_class_preactivations=pt.zcls,
    )
    raise_if_failed(out, throw)
    return out


@dataclass
class _ToyPoint:
    """A KKT point of the toy with its diagnostics (names as in :class:`ReLUToySolution`): the
    field t, bulk readout a0, outlier strengths s, the outliers (classes, zbar, abar, per-class
    zbar), the bulk tilts, moments, g(a0) and gap, residuals, lambda*, marginality, and whether
    it passed its checks, with the message."""

    t: np.ndarray
    a0: np.ndarray
    s: np.ndarray
    outl: np.ndarray
    zbar: np.ndarray
    abar: np.ndarray
    zcls: np.ndarray
    h: np.ndarray
    Mv: np.ndarray
    Vv: np.ndarray
    g0: float
    bulk_gap: float
    res: dict
    resid: float
    lam_star: float
    marg: np.ndarray
    ok: bool
    msg: str


def _single_class_log_slack(rho):
    """The barrier of the single-class constraints ``rho_c |t_c|^2 <= 1``: ``t -> (sum_c log
    slack_c, its gradient)``, None outside the feasible set."""

    def log_slack(t):  # the single-class constraints rho_c |t_c|^2 <= 1
        slack = 1.0 - rho * np.sum(t * t, axis=1)
        if np.any(slack <= 0):
            return None
        return np.sum(np.log(slack)), -(2.0 * rho / slack)[:, None] * t

    return log_slack


def _solve_single_class_kkt(neuron, rho, Yc, t, a_last, tol):
    """The exact KKT system of single-class outliers from the barrier solution t (bulk maximum
    near ``a_last``; the classes with ``rho_c |t_c|^2 > 1 - 1e-3`` active): Powell's hybrid
    method, then least-squares Newton when it misses ``tol``. Returns (x, active classes,
    hybrid's function evaluations)."""
    found = _bulk_max(neuron, t, a_last)
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
    return xs, active, int(sol.nfev)


def _single_class_point(neuron, rho, Yc, xs, active, tol):
    """The single-class outlier solution at the KKT root x, checked (residual, s_c >= 0, a_0 the
    global maximum of g, lambda* <= 1). Returns (point, the failed checks, whether lambda* > 1)."""
    k, m = Yc.shape
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
    h, Mv, Vv, g0, bulk_gap = _bulk_summary(neuron, t, a0)
    lam_star, _ = relu_stability_margin(t, rho)
    marg = rho * np.sum(t * t, axis=1)
    problems = []
    if resid > tol:
        problems.append(f"KKT residual {resid:.2e} > tol")
    if np.any(s[active] < -1e-9):
        problems.append(f"negative outlier strength {s[active].min():.3g}")
    if bulk_gap > 1e-9:
        problems.append(f"a_0 is not the global maximum of g (gap {bulk_gap:.3g})")
    unstable = lam_star > 1.0 + 1e-8
    if unstable:
        problems.append(f"readout integral unstable (lambda* = {lam_star:.6f} > 1)")
    ok = not problems
    outl = np.array([c for c in active if s[c] > 0], dtype=int)
    zbar = np.sqrt(s[outl])
    abar = rho[outl, None] * t[outl] * zbar[:, None]
    zcls = np.zeros((outl.size, k))
    zcls[np.arange(outl.size), outl] = zbar
    msg = (f"converged: {outl.size} outliers (classes {outl.tolist()}), KKT residual "
           f"{resid:.1e}, lambda* = {lam_star:.12f}" if ok else "; ".join(problems))
    return (_ToyPoint(t, a0, s, outl, zbar, abar, zcls, h, Mv, Vv, g0, bulk_gap, res, resid,
                      lam_star, marg, ok, msg), problems, unstable)


def _multiclass_point(neuron, rho, Yc, tol, mc):
    """The solution with multi-class outliers of :func:`._multiclass._solve_multiclass` (its
    dict ``mc``), with its residuals and checks (residual, a_0 global, lambda* <= 1)."""
    t, a0 = mc["t"], mc["a0"]
    U, abar, zcls = mc["U"], mc["abar"], mc["zbar"]
    codes = zcls > 0.0
    outl = np.where(codes.sum(axis=1) == 1, np.argmax(codes, axis=1), -1)
    zbar = zcls.max(axis=1)
    s = np.sum(zcls * zcls, axis=0)
    h, Mv, Vv, g0, bulk_gap = _bulk_summary(neuron, t, a0)
    res = {
        "bulk_stationarity": float(np.max(np.abs(a0 - (rho * Mv) @ t))),
        "output": float(np.max(np.abs(Yc - Mv[:, None] * a0[None, :] - zcls.T @ abar))),
        "marginality": float(np.max(np.abs(
            np.sum(rho * np.maximum(U @ t.T, 0.0) ** 2, axis=1) - 1.0))),
    }
    resid = max(res.values())
    lam_star, _ = relu_stability_margin(t, rho)
    marg = rho * np.sum(t * t, axis=1)
    ok = resid <= max(tol, 1e-9) and bulk_gap <= 1e-9 and lam_star <= 1.0 + 1e-8
    pats = ["-".join(str(int(b)) for b in c) for c in codes]
    msg = (f"converged with multi-class outliers: {len(pats)} outlier types {pats}, "
           f"KKT residual {resid:.1e}, lambda* = {lam_star:.12f}"
           + (f"; the split into outliers is not unique ({mc['null']} more outlier "
              "types are marginal; outputs and the outlier feature kernel are unique, "
              "one split is reported)" if mc["null"] else "")
           if ok else f"multi-class outliers: KKT residual {resid:.1e}, lambda* = "
           f"{lam_star:.6f}, bulk gap {bulk_gap:.3g}")
    return _ToyPoint(t, a0, s, outl, zbar, abar, zcls, h, Mv, Vv, g0, bulk_gap, res, resid,
                     lam_star, marg, ok, msg)
