"""Posterior/prior sample-complexity bound and the Chernoff (large-deviation) energy E(alpha).

Paper: N. Rubin, O. Davidovich, Z. Ringel, *Mitigating the Curse of Detail* (ICLR 2026,
arXiv 2512.04165; seed 002). All display equations were stripped from the seed text; the formulas
below follow the reconstruction in the spec note ``curse_of_detail.md`` (sections 1.6, 2.1-2.3) and
carry its provenance tags:

* [PROSE]  structure stated in words in the surviving text;
* [RECON]  re-derived by the note from the prose (constants / factor-2 conventions may differ);
* [CHECKED] a reconstruction we checked numerically (see ``docs/ldt.md``).

Chain of the argument (eqs. 3-6, 18-29):

    A_f = <f, y> / <y, y>                                  alignment            (3)  [PROSE]
    int dmu (f - y)^2 >= <y, y> (A_f - 1)^2                Cauchy-Schwarz       (3)  [PROSE]
    log Pr_post[A_f >= a] <= P k / (2 kappa) + log Pr_prior[A_f >= a]         (4)/(20) [RECON]
    P_* = -(2 kappa / k) log Pr_prior[A_f >= a]                               (5)/(22) [RECON]
    Pr_prior[A_f >= a] <= exp(-E(a)),  E(a) = sup_{t>0} [t a - Lambda(t)]     (6)/(25) [RECON]
    P_* = (2 kappa / k) E(a)                                                  (26)     [RECON]

The normalisation of the posterior exponent (1/(2 kappa) vs 1/kappa) is an open item of the note
(section 8.1); it enters only through the documented factor ``2 kappa / k``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import integrate

from .._results import SolverStatus, Status, grid_status, raise_if_failed
from ..checks import as_float_array, broadcast_named, check_int, check_pos_float

__all__ = [
    "ChernoffResult",
    "alignment",
    "mse_lower_bound",
    "k_factor",
    "k_factor_two_layer_erf",
    "log_posterior_bound",
    "sample_complexity",
    "sample_complexity_from_energy",
    "chernoff_energy",
    "binary_kl",
    "log_partition_classes_asymptotic",
    "log_partition_classes_exact",
    "classification_rate",
    "sample_complexity_classification",
]


# --------------------------------------------------------------------------------------------
# alignment and the MSE bound
# --------------------------------------------------------------------------------------------
def alignment(f_values, y_values, *, weights=None) -> np.ndarray:
    """Alignment ``A_f = <f, y> / <y, y>`` on a discrete test measure (seed 002, eq. 3) [PROSE].

    Parameters
    ----------
    f_values : array (..., n)
        Network outputs at ``n`` test points; leading axes are a batch (e.g. an ensemble).
    y_values : array (n,) or broadcastable to ``f_values``
        Target values at the same points.
    weights : array (n,), optional
        Non-negative weights of the test measure (normalised internally); uniform when None,
        i.e. ``<f, y> = mean_x f(x) y(x)``.

    Returns
    -------
    ndarray of shape ``f_values.shape[:-1]``.
    """
    f = as_float_array("f_values", f_values)
    y = as_float_array("y_values", y_values)
    if f.ndim == 0 or f.shape[-1] == 0:
        raise ValueError(
            f"f_values must have a non-empty last axis of test points, got shape {f.shape}"
        )
    if y.ndim > f.ndim:
        raise ValueError(f"y_values must have at most f_values.ndim = {f.ndim} axes (shape (n,) "
                         f"or broadcastable to f_values {f.shape}), got shape {y.shape}")
    fb, yb = broadcast_named({"f_values": f, "y_values": y},
                             message="y_values must broadcast against f_values")
    n = f.shape[-1]
    if weights is None:
        w = np.full(n, 1.0 / n)
    else:
        w = as_float_array("weights", weights, ndim=1)
        if w.shape[0] != n:
            raise ValueError(f"weights must have length {n} (test points), got {w.shape[0]}")
        if np.any(w < 0) or w.sum() <= 0:
            raise ValueError("weights must be non-negative with a positive sum")
        w = w / w.sum()
    yy = np.sum(w * yb * yb, axis=-1)
    if np.any(yy <= 0):
        raise ValueError("y_values has zero norm <y, y> on the test measure; alignment undefined")
    return np.sum(w * fb * yb, axis=-1) / yy


def mse_lower_bound(alignment_value, *, y_norm2: float = 1.0) -> np.ndarray:
    """Cauchy-Schwarz bound ``E_mu (f - y)^2 >= <y, y> (A_f - 1)^2`` (seed 002, eq. 3) [PROSE].

    Proof: ``E(f-y)^2 >= <f-y, y>^2/<y,y> = <y,y>(A_f - 1)^2``. ``alignment_value`` may be any
    finite real (A_f is not bounded by 1: f = 2y has A_f = 2).
    """
    a = as_float_array("alignment_value", alignment_value)
    y_norm2 = check_pos_float("y_norm2", y_norm2)
    return y_norm2 * (a - 1.0) ** 2


# --------------------------------------------------------------------------------------------
# the k factor and the posterior bound
# --------------------------------------------------------------------------------------------
def k_factor(K_diag, y_values) -> float:
    """Training-set factor ``k = (1/P) sum_mu [K(x_mu, x_mu) + y(x_mu)^2]`` (App. A.1, after
    eq. 19) [RECON].

    ``E_prior sum_mu (f(x_mu) - y_mu)^2 = P k`` because the prior output has mean 0 and variance
    ``K(x, x)`` (the NNGP output kernel).
    """
    K = as_float_array("K_diag", K_diag, ndim=1)
    y = as_float_array("y_values", y_values, ndim=1)
    if K.shape != y.shape or K.size == 0:
        raise ValueError(
            f"K_diag and y_values must be non-empty with equal lengths, got {K.shape} and {y.shape}"
        )
    if np.any(K < 0):
        raise ValueError("K_diag must be >= 0 (prior output variances)")
    return float(np.mean(K + y * y))


def k_factor_two_layer_erf(
    sigma_w2: float = 1.0, sigma_a2: float = 1.0, *, chi: float = 1.0, y_norm2: float = 1.0
) -> float:
    """``k`` of a two-layer erf network at typical inputs ``|x|^2 = d`` (spec 2.1) [RECON]:

        k = <y^2> + (sigma_a^2 / chi) (2/pi) arcsin( 2 sigma_w^2 / (1 + 2 sigma_w^2) ).

    The second term is the erf NNGP kernel ``K(x, x)`` with first-layer prior
    ``w ~ N(0, sigma_w^2 I/d)`` and readout prior ``a ~ N(0, sigma_a^2/(chi N))``.
    """
    sigma_w2 = check_pos_float("sigma_w2", sigma_w2)
    sigma_a2 = check_pos_float("sigma_a2", sigma_a2)
    chi = check_pos_float("chi", chi)
    y_norm2 = check_pos_float("y_norm2", y_norm2)
    q = 2.0 * sigma_w2
    return y_norm2 + (sigma_a2 / chi) * (2.0 / math.pi) * math.asin(q / (1.0 + q))


def _check_log_prob(log_prior_prob) -> np.ndarray:
    """``log_prior_prob`` as an array of log-probabilities (<= 0; -inf allowed)."""
    lp = as_float_array("log_prior_prob", log_prior_prob, finite=False)
    if np.any(np.isnan(lp)) or np.any(lp > 0):
        raise ValueError(
            "log_prior_prob must be <= 0 (log of a probability), got a positive or NaN value"
        )
    return lp


def log_posterior_bound(P, log_prior_prob, *, kappa: float, k: float) -> np.ndarray:
    """``log Pr_post[A_f >= a] <= P k / (2 kappa) + log Pr_prior[A_f >= a]`` (eqs. 4/20) [RECON].

    Returns the right-hand side (clipped at 0 is left to the caller: a probability bound above 0
    is vacuous).
    """
    P = as_float_array("P", P)
    if np.any(P < 0):
        raise ValueError("P must be >= 0 (number of training samples)")
    lp = _check_log_prob(log_prior_prob)
    kappa = check_pos_float("kappa", kappa)
    k = check_pos_float("k", k)
    return P * k / (2.0 * kappa) + lp


def sample_complexity(log_prior_prob, *, kappa: float, k: float) -> np.ndarray:
    """Minimal sample size ``P_* = -(2 kappa / k) log Pr_prior[A_f >= a]`` (eqs. 5/22) [RECON].

    An unlearnability bound: with ``P < P_*`` the posterior alignment probability is
    exponentially small.
    """
    lp = _check_log_prob(log_prior_prob)
    kappa = check_pos_float("kappa", kappa)
    k = check_pos_float("k", k)
    return -(2.0 * kappa / k) * lp


def sample_complexity_from_energy(energy, *, kappa: float, k: float) -> np.ndarray:
    """``P_* = (2 kappa / k) E(alpha)`` (eq. 26) [RECON]."""
    E = as_float_array("energy", energy, finite=False)
    if np.any(np.isnan(E)) or np.any(E < 0):
        raise ValueError("energy must be >= 0 (a rate function), got a negative or NaN value")
    kappa = check_pos_float("kappa", kappa)
    k = check_pos_float("k", k)
    return (2.0 * kappa / k) * E


def binary_kl(q, p) -> np.ndarray:
    """Binary KL ``q log(q/p) + (1-q) log((1-q)/(1-p))`` (footnote 3, PAC-Bayes link) [PROSE].

    Lower-bounds KL(posterior || prior) by the data-processing inequality, with ``q`` and ``p``
    the posterior and prior probabilities of the event ``A_f >= alpha``.
    """
    q = as_float_array("q", q)
    p = as_float_array("p", p)
    if np.any((q < 0) | (q > 1)):
        raise ValueError("q must lie in [0, 1]")
    if np.any((p <= 0) | (p >= 1)):
        raise ValueError("p must lie in the open interval (0, 1)")
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(q > 0, q * np.log(q / p), 0.0)
        t2 = np.where(q < 1, (1 - q) * np.log((1 - q) / (1 - p)), 0.0)
    return t1 + t2


# --------------------------------------------------------------------------------------------
# generic Chernoff / Legendre energy
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ChernoffResult(SolverStatus):
    """Result of :func:`chernoff_energy` (arrays have the shape of ``alpha``).

    energy : E(alpha) = sup_{t>=0} [t alpha - Lambda(t)] (a valid lower bound on the rate even
             where ``converged`` is False: any t gives a Chernoff bound).
    t_star : maximiser (0 where alpha <= Lambda'(0), i.e. no large deviation).
    point_converged : per-alpha convergence flags (``statuses == SUCCESS``).
    statuses : per-alpha :class:`~richlazy.theory.Status` codes: MAX_ITERATIONS where the
               bisection ran out of ``maxiter`` before the bracket shrank to ``rtol``;
               BAD_PROBLEM where alpha is beyond the range of ``Lambda'`` (no root below
               ``t_max``, or ``Lambda`` infinite beyond the bracket: a boundary supremum).
               ``status`` is the worst of them.
    """

    alpha: np.ndarray
    energy: np.ndarray
    t_star: np.ndarray
    point_converged: np.ndarray
    statuses: np.ndarray | None = None


def _numeric_derivative(cgf):
    def d(t):
        h = 1e-5 * np.maximum(1.0, np.abs(t))
        return (np.asarray(cgf(t + h), float) - np.asarray(cgf(t - h), float)) / (2.0 * h)

    return d


def _eval(fn, t):
    with np.errstate(all="ignore"):
        return np.asarray(fn(t), dtype=float).reshape(t.shape)


def chernoff_energy(
    alpha,
    cgf: Callable[[np.ndarray], np.ndarray],
    *,
    cgf_prime: Callable[[np.ndarray], np.ndarray] | None = None,
    t_scale: float = 1.0,
    t_max: float = 1e12,
    rtol: float = 1e-13,
    maxiter: int = 400,
    throw: bool = False,
) -> ChernoffResult:
    """Chernoff energy ``E(alpha) = sup_{t>0} [t alpha - Lambda(t)]`` for every alpha at once.

    Seed 002, eqs. (6)/(25): ``Pr[A >= alpha] <= exp(-E(alpha))`` with ``Lambda(t) = log E e^{tA}``
    the cumulant generating function (CGF); a Legendre transform [RECON].

    Method: ``Lambda`` is convex, so ``Lambda'`` is non-decreasing and the supremum is at the root
    of ``Lambda'(t) = alpha``.  The root is bracketed by doubling from ``t_scale`` and refined by a
    vectorised bisection on all alphas simultaneously.  Where ``alpha <= Lambda'(0)`` the
    supremum over ``t >= 0`` is at ``t = 0`` and ``E = 0``.  Where ``Lambda`` is infinite beyond a
    critical ``t_c`` (e.g. unbounded activations, spec 3.1) and ``Lambda'(t) < alpha`` up to it,
    the supremum sits on the boundary: reported with ``point_converged = False``.  Where the root
    lies beyond ``t_max`` (alpha at or above the top of a bounded support) likewise.

    Parameters
    ----------
    alpha : array_like
        Thresholds.
    cgf : callable
        Vectorised ``Lambda(t)`` with ``Lambda(0) = 0``; returns ``inf``/``nan`` outside its domain.
    cgf_prime : callable, optional
        Vectorised ``Lambda'(t)``; a central difference of ``cgf`` when None.
    t_scale : float
        First trial upper bracket.
    t_max, rtol, maxiter :
        Largest t tried, relative bracket tolerance, bisection iterations.
    throw : bool
        Raise :class:`SolverError` if any alpha did not converge.
    """
    a = as_float_array("alpha", alpha)
    if not callable(cgf):
        raise TypeError(f"cgf must be callable, got {type(cgf).__name__}")
    if cgf_prime is not None and not callable(cgf_prime):
        raise TypeError(f"cgf_prime must be callable or None, got {type(cgf_prime).__name__}")
    t_scale = check_pos_float("t_scale", t_scale)
    t_max = check_pos_float("t_max", t_max)
    rtol = check_pos_float("rtol", rtol)
    maxiter = check_int("maxiter", maxiter, minimum=1)
    c0 = float(_eval(cgf, np.zeros(1))[0])
    if not (math.isfinite(c0) and abs(c0) < 1e-8):
        raise ValueError(
            f"cgf must satisfy Lambda(0) = 0 (a cumulant generating function), got {c0!r}"
        )
    dfun = cgf_prime if cgf_prime is not None else _numeric_derivative(cgf)
    shape = a.shape
    a = a.ravel()
    mean = float(_eval(dfun, np.zeros(1))[0])
    active = a > mean
    lo, hi, n_grow = _bracket_roots(cgf, dfun, a, active, t_scale, t_max)
    lo, hi, n_bisect = _bisect_roots(cgf, dfun, a, active, lo, hi, rtol, maxiter)
    t, energy, res, pc, statuses, at_tmax = _legendre_at_roots(cgf, dfun, a, active, lo, hi, mean,
                                                              t_max, rtol)
    converged, status = grid_status(statuses)
    out = ChernoffResult(
        converged=converged,
        status=status,
        message="converged" if converged else _chernoff_failures(statuses, pc, at_tmax, maxiter),
        nit=n_grow + n_bisect,
        residual=float(np.max(res)) if res.size else 0.0,
        alpha=a.reshape(shape),
        energy=energy.reshape(shape),
        t_star=t.reshape(shape),
        point_converged=pc.reshape(shape),
        statuses=statuses.reshape(shape),
    )
    raise_if_failed(out, throw)
    return out


def _bracket_roots(cgf, dfun, a, active, t_scale, t_max):
    """Bracket the root of ``Lambda'(t) = alpha`` for every active alpha: double ``hi`` from
    ``t_scale`` until ``Lambda'(hi) >= alpha``, ``Lambda(hi)`` is not finite, or ``hi`` passes
    ``t_max`` (then ``hi = t_max``). Returns ``(lo, hi, doubling rounds)``."""
    lo = np.zeros_like(a)
    hi = np.full_like(a, t_scale)
    grow = active.copy()
    nit = 0
    while np.any(grow):
        nit += 1
        th = hi[grow]
        ok = np.isfinite(_eval(cgf, th))
        dp = _eval(dfun, th)
        done = (~ok) | (~np.isfinite(dp)) | (dp >= a[grow])
        idx = np.flatnonzero(grow)
        moving = idx[~done]
        lo[moving] = hi[moving]
        hi[moving] *= 2.0
        too_far = moving[hi[moving] > t_max]
        hi[too_far] = t_max
        grow[:] = False
        grow[moving] = True
        grow[too_far] = False
    return lo, hi, nit


def _bisect_roots(cgf, dfun, a, active, lo, hi, rtol, maxiter):
    """Vectorised bisection of the brackets on ``sign(Lambda'(t) - alpha)`` (non-finite counts
    as "above"), at most ``maxiter`` halvings, until every active bracket is below ``rtol``
    relative. Returns ``(lo, hi, halvings)``."""
    nit = 0
    for _ in range(maxiter):
        if not np.any(active):
            break
        if np.all((hi - lo)[active] <= rtol * np.maximum(hi[active], 1e-300)):
            break
        nit += 1
        mid = 0.5 * (lo + hi)
        with np.errstate(all="ignore"):
            lam = _eval(cgf, mid)
            dp = _eval(dfun, mid)
        above = (~np.isfinite(lam)) | (~np.isfinite(dp)) | (dp >= a)
        hi = np.where(active & above, mid, hi)
        lo = np.where(active & ~above, mid, lo)
    return lo, hi, nit


def _legendre_at_roots(cgf, dfun, a, active, lo, hi, mean, t_max, rtol):
    """The Legendre transform at the bracketed roots: ``t*`` (``lo``, always inside the domain;
    0 where inactive), ``E = t* alpha - Lambda(t*)``, the relative residual of
    ``Lambda'(t*) = alpha``, the per-alpha convergence flags and statuses (SUCCESS;
    BAD_PROBLEM at ``t_max`` or beyond the range of ``Lambda'``; MAX_ITERATIONS for an open
    bracket), and the mask of the roots stopped at ``t_max``."""
    t = np.where(active, lo, 0.0)  # lo is always inside the domain
    lam = _eval(cgf, t)
    energy = np.where(active, t * a - lam, 0.0)
    dp = np.where(active, _eval(dfun, t), mean)
    scale = np.maximum(1.0, np.abs(a))
    res = np.where(active, np.abs(dp - a) / scale, 0.0)
    pc = (~active) | (res <= 1e-6)
    at_tmax = active & (t >= t_max * (1 - 1e-12))
    bracket_open = active & ((hi - lo) > rtol * np.maximum(hi, 1e-300))
    statuses = np.where(
        pc,
        Status.SUCCESS,
        np.where(at_tmax, Status.BAD_PROBLEM,
                 np.where(bracket_open, Status.MAX_ITERATIONS, Status.BAD_PROBLEM)),
    ).astype(int)
    return t, energy, res, pc, statuses, at_tmax


def _chernoff_failures(statuses, pc, at_tmax, maxiter):
    """The message of a :class:`ChernoffResult` with some alpha not converged: why, per kind."""
    parts = []
    if np.any(statuses == Status.MAX_ITERATIONS):
        parts.append(
            f"the bisection ran out of maxiter={maxiter} iterations before the bracket "
            f"shrank to rtol for {int(np.sum(statuses == Status.MAX_ITERATIONS))} alpha"
        )
    if np.any(at_tmax & ~pc):
        parts.append(
            "no root of Lambda'(t) = alpha below t_max for some alpha: alpha is at or above "
            "the top of the support (E may be +inf); increase t_max to confirm"
        )
    if np.any((statuses == Status.BAD_PROBLEM) & ~at_tmax):
        parts.append(
            "Lambda'(t) stays below alpha up to the edge of the CGF domain for some alpha "
            "(Lambda infinite or overflowing beyond a finite t): alpha is beyond the range of "
            "Lambda' (top of a bounded support, or a boundary supremum); the reported energy "
            "is a lower bound"
        )
    return "; ".join(parts)


# --------------------------------------------------------------------------------------------
# classification: the log C variant (App. A.2)
# --------------------------------------------------------------------------------------------
def _check_K_C(K, C):
    K = as_float_array("K", K)
    if np.any(K < 0):
        raise ValueError("K must be >= 0 (prior output variance K(x, x))")
    C = check_int("C", C, minimum=2)
    return K, C


def log_partition_classes_asymptotic(K, C) -> np.ndarray:
    """``E[log sum_c e^{z_c}] ~ log C + K/2 - (e^K - 1)/(2C)``, z_c i.i.d. N(0, K), error
    O(C^-2) (App. A.2, eqs. 23-24) [RECON; CHECKED against :func:`log_partition_classes_exact`].

    The leading ``log C`` is the entropy of C equiprobable classes (REM analogy) [PROSE].
    """
    K, C = _check_K_C(K, C)
    return math.log(C) + K / 2.0 - np.expm1(K) / (2.0 * C)


def _mean_exp_neg(s: float, sd: float) -> float:
    """m(s) = E exp(-s e^{sd z}), z ~ N(0, 1), by adaptive quadrature."""
    if sd == 0.0:
        return math.exp(-s)

    def f(z):
        return math.exp(-0.5 * z * z - s * math.exp(sd * z)) / math.sqrt(2 * math.pi)

    z0 = -math.log(max(s, 1e-300)) / sd  # where s e^{sd z} = 1
    pts = sorted({-12.0, min(max(z0, -12.0), 12.0), 12.0})
    val = 0.0
    for lo_, hi_ in zip(pts[:-1], pts[1:], strict=False):
        if hi_ > lo_:
            val += integrate.quad(f, lo_, hi_, epsabs=1e-15, epsrel=1e-12, limit=200)[0]
    return val


def log_partition_classes_exact(K, C) -> np.ndarray:
    """Exact ``E[log sum_{c=1}^C e^{z_c}]`` for z_c i.i.d. N(0, K), by Frullani's integral

        log S = int_0^inf (e^{-s} - e^{-s S}) ds / s   =>
        E log S = int_0^inf (e^{-s} - m(s)^C) ds / s,   m(s) = E exp(-s e^{z}),

    evaluated with nested adaptive quadrature in ``u = log s``. Reference for the asymptotic form
    of App. A.2 (our derivation; not in the paper).
    """
    K, C = _check_K_C(K, C)
    out = np.empty(K.shape)
    for i, k in np.ndenumerate(K):
        sd = math.sqrt(k)

        def g(u, sd=sd):
            s = math.exp(u)
            return math.exp(-s) - _mean_exp_neg(s, sd) ** C

        center = -math.log(C) - k / 2.0
        pts = [-60.0, center - 10, center, center + 10, 60.0]
        val = 0.0
        for lo_, hi_ in zip(pts[:-1], pts[1:], strict=False):
            val += integrate.quad(g, lo_, hi_, epsabs=1e-12, epsrel=1e-10, limit=200)[0]
        out[i] = val
    return out


def classification_rate(K_diag, C) -> float:
    """Per-sample data term of the classification bound,
    ``(1/P) sum_mu [log C + K_mumu/2 - (e^{K_mumu} - 1)/(2C)]`` (App. A.2, eq. 24) [RECON].

    It replaces ``k/2`` of the regression bound; the temperature multiplying the cross-entropy
    in the posterior (``kappa'``) is a parameter because its normalisation is [UNKNOWN].
    """
    K = as_float_array("K_diag", K_diag, ndim=1)
    if K.size == 0:
        raise ValueError("K_diag must be non-empty")
    if np.any(K < 0):
        raise ValueError(f"K_diag must be >= 0 (diagonal of a kernel), got min {K.min()!r}")
    return float(np.mean(log_partition_classes_asymptotic(K, C)))


def sample_complexity_classification(energy, *, kappa: float, K_diag, C) -> np.ndarray:
    """``P_* = kappa' E(alpha) / [log C + K/2 - (e^K - 1)/(2C)]`` (App. A.2: eq. 22 with
    ``k/(2 kappa)`` replaced by the classification rate over ``kappa'``) [RECON]."""
    E = as_float_array("energy", energy, finite=False)
    if np.any(np.isnan(E)) or np.any(E < 0):
        raise ValueError("energy must be >= 0 (a rate function), got a negative or NaN value")
    kappa = check_pos_float("kappa", kappa)
    rate = classification_rate(K_diag, C)
    if rate <= 0:
        raise ValueError(f"classification rate must be > 0, got {rate} (K too large for this C)")
    return kappa * E / rate
