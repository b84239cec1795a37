"""Adaptive-kernel (AK) self-consistency for the mean alignment, and its relation to the LDT.

Paper: Rubin, Davidovich, Ringel, *Mitigating the Curse of Detail* (seed 002), App. G,
eqs. (91)-(103). The step list survives in prose; the equations are the reconstruction of the
spec note ``curse_of_detail.md`` section 6 [RECON]. Population limit (sum_mu -> P E_mu), <y,y> = 1:

    weight action     p_t(theta) ∝ p0(theta) exp(t^2 V(theta) / 2)     (same tilt as the LDT)
    mean alignment    A = t <V>_t                          (LDT eq. 33 with alpha -> A)
    AK closure        t = (P/kappa)(1 - A)  <=>  t = 1/(<V>_t + kappa/P)
                      <=>  A = <V>_t / (<V>_t + kappa/P)                 (101)-(103)

For the two-layer erf network ``<V>_t = (sigma_a^2/chi) E_{p_t}[g(w_par)]`` with
``tau = t^2 sigma_a^2/(2 chi N)``, evaluated through the public problem object
:class:`~richlazy.theory.ErfModel` (eq. 36, ``perp="frozen"``).  In the LDT ``t`` is fixed
by the requested alpha; here by ``P``.  At equal ``t`` both give the same alignment, hence the
AK sample size at which the mean alignment reaches alpha is
``P_AK(alpha) = kappa t*(alpha)/(1-alpha)``
with ``t*`` the LDT saddle point.  Without tilt (``tau -> 0``, e.g. N -> inf in standard scaling)
the closure reduces to the GP learning curve ``A = lambda/(lambda + kappa/P)``,
``lambda = <y, K, y>``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from .._results import SolverStatus, Status, grid_status, raise_if_failed
from ..checks import as_float_array, check_pos_float, renamed_option
from ._erf import _check_root_maxiter, ldt_two_layer_erf
from ._erf_model import ErfModel, outlier_threshold

__all__ = ["AKResult", "ak_two_layer_erf", "ak_sample_complexity"]


@dataclass(frozen=True)
class AKResult(SolverStatus):
    """Adaptive-kernel solution at each P (arrays of P's shape).

    t : the self-consistent alignment field, t = (P/kappa)(1 - A).
    tau : t^2 sigma_a^2 / (2 chi N).
    mean_alignment : A = <V>_t / (<V>_t + kappa/P).
    mean_V : <V>_t = (sigma_a^2/chi) E_{p_t}[g].
    outlier_fraction, n_outliers : Pr_{p_t}(|w.w*| > n_sigma sigma_w/sqrt(d)) and N times it:
        the predicted posterior outlier count (App. F 3-sigma rule).
    n_specialists : n_outliers minus the GP expectation N erfc(n_sigma/sqrt 2).
    statuses : per-P :class:`~richlazy.theory.Status` codes (``status`` is the worst).
    """

    P: np.ndarray
    t: np.ndarray
    tau: np.ndarray
    mean_alignment: np.ndarray
    mean_V: np.ndarray
    outlier_fraction: np.ndarray
    n_outliers: np.ndarray
    n_specialists: np.ndarray
    statuses: np.ndarray | None = None


def ak_two_layer_erf(
    P,
    d: int,
    N: int,
    *,
    kappa: float = 1.0,
    sigma_w2: float = 1.0,
    sigma_a2: float = 1.0,
    chi=1.0,
    degree: int = 3,
    n_sigma: float = 3.0,
    points_per_width: float = 8.0,
    rtol: float | None = None,
    maxiter: int = 200,
    throw: bool = False,
    xtol: float | None = None,
) -> AKResult:
    """Mean alignment vs P of the two-layer erf network from the AK closure (App. G,
    eqs. 101-103; spec section 6) [RECON].

    Solves ``t (<V>_t + kappa/P) = 1`` for t > 0; the left side is increasing in t (``t <V>_t``
    is the derivative of a convex CGF), so the root is unique and is bracketed by
    ``1/(sup V + kappa/P) <= t <= 1/(<V>_0 + kappa/P)``, found by Brent's method in ``log t``.

    ``rtol`` (default 1e-12) is the tolerance on ``log t`` (relative on ``t``; ``xtol`` is its
    deprecated spelling), ``maxiter`` the Brent budget per P (<= 10**7), ``throw`` raises
    :class:`~richlazy.theory.SolverError` on failure.  Status per P: MAX_ITERATIONS when Brent
    ran out of iterations, NUMERICAL_FAILURE when the closure residual exceeds 1e-8.
    """
    rtol = renamed_option("rtol", rtol, "xtol", xtol, default=1e-12)
    Pa = as_float_array("P", P)
    if np.any(Pa <= 0):
        raise ValueError("P must be > 0 (number of training samples)")
    pr = ErfModel(d, N, sigma_w2=sigma_w2, sigma_a2=sigma_a2, chi=chi, degree=degree,
                  points_per_width=points_per_width)
    kappa = check_pos_float("kappa", kappa)
    rtol = check_pos_float("rtol", rtol)
    maxiter = _check_root_maxiter(maxiter)
    scale = pr.scale
    g_inf = pr.g_inf
    V0 = scale * pr.moments(0.0)[1]
    thr = outlier_threshold(pr.d, sigma_w2=pr.sigma_w2, n_sigma=n_sigma)
    prior_tail = float(special.erfc(n_sigma / math.sqrt(2.0)))
    out = {key: np.empty(Pa.size) for key in ("t", "tau", "A", "V", "frac", "res")}
    statuses = np.zeros(Pa.size, dtype=int)
    nit = 0
    for j, p in enumerate(Pa.ravel()):
        r = kappa / p

        def G(logt, r=r):
            t = math.exp(logt)
            return t * (scale * pr.moments(pr.tau(t))[1] + r) - 1.0

        lo = -math.log(scale * g_inf + r)
        hi = -math.log(V0 + r)
        if G(hi) <= 0.0:
            root, conv, its = hi, True, 0
        elif G(lo) >= 0.0:
            root, conv, its = lo, True, 0
        else:
            root, info = optimize.brentq(
                G, lo, hi, xtol=rtol, maxiter=maxiter, full_output=True, disp=False
            )
            conv, its = bool(info.converged), info.iterations
        nit += its
        t = math.exp(root)
        tau = pr.tau(t)
        V = scale * pr.moments(tau)[1]
        out["t"][j] = t
        out["tau"][j] = tau
        out["V"][j] = V
        out["A"][j] = V / (V + r)
        out["frac"][j] = pr.tail(tau, thr)[0]
        out["res"][j] = abs(t * (V + r) - 1.0)
        if not conv:
            statuses[j] = Status.MAX_ITERATIONS
        elif not out["res"][j] < 1e-8:
            statuses[j] = Status.NUMERICAL_FAILURE
    shape = Pa.shape
    residual = float(np.max(out["res"])) if Pa.size else 0.0
    converged, status = grid_status(statuses)
    res = AKResult(
        converged=converged,
        status=status,
        message="converged"
        if converged
        else (f"AK closure not solved to tolerance at {int(np.count_nonzero(statuses))} of "
              f"{Pa.size} P (residual {residual:.2e}); "
              + ("increase maxiter" if status is Status.MAX_ITERATIONS
                 else "increase points_per_width")),
        nit=nit,
        residual=residual,
        P=Pa,
        t=out["t"].reshape(shape),
        tau=out["tau"].reshape(shape),
        mean_alignment=out["A"].reshape(shape),
        mean_V=out["V"].reshape(shape),
        outlier_fraction=out["frac"].reshape(shape),
        n_outliers=pr.N * out["frac"].reshape(shape),
        n_specialists=pr.N * (out["frac"].reshape(shape) - prior_tail),
        statuses=statuses.reshape(shape),
    )
    raise_if_failed(res, throw)
    return res


def ak_sample_complexity(
    alpha,
    d: int,
    N: int,
    *,
    kappa: float = 1.0,
    sigma_w2: float = 1.0,
    sigma_a2: float = 1.0,
    chi=1.0,
    degree: int = 3,
) -> np.ndarray:
    """Sample size at which the AK mean alignment reaches alpha,
    ``P_AK = kappa t*(alpha)/(1-alpha)``
    with ``t*(alpha)`` the LDT saddle point (eq. 37) — the App. G link between the two
    equations [RECON].  Requires 0 < alpha < 1."""
    a = as_float_array("alpha", alpha)
    if np.any((a <= 0) | (a >= 1)):
        raise ValueError("alpha must lie in (0, 1) for the AK sample size")
    kappa = check_pos_float("kappa", kappa)
    r = ldt_two_layer_erf(
        a,
        d,
        N,
        sigma_w2=sigma_w2,
        sigma_a2=sigma_a2,
        chi=chi,
        degree=degree,
        kappa=kappa,
        throw=True,
    )
    return kappa * r.t_star / (1.0 - a)
