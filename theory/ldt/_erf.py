"""Exact large-deviation (LDT) energy of a two-layer erf network with a Hermite target.

Paper: Rubin, Davidovich, Ringel, *Mitigating the Curse of Detail* (seed 002), App. B.3,
eqs. (34)-(40). The seed lost every display equation; this module implements the reconstruction
of the spec note ``curse_of_detail.md`` section 3.2 (tags [RECON]; items we checked numerically
are marked [CHECKED], see ``docs/ldt.md``).

Model (spec 3.2):  f(x) = sum_{i=1}^N a_i erf(w_i . x),  x ~ N(0, I_d),
    w_i ~ N(0, sigma_w^2 I / d),  a_i ~ N(0, sigma_a^2 / (chi N)),
    y(x) = He_m(w* . x) / sqrt(m!),  |w*| = 1, m odd (the paper's case is m = 3).
chi = 1 is standard scaling, chi = N mean-field scaling.

Integrating out the readout (eq. 31) and the per-neuron factorisation (34) give

    Lambda(t) = N log Z_1(tau),   tau = t^2 sigma_a^2 / (2 chi N)
    Z_1(tau)  = E_{w_par ~ N(0, sigma_w^2/d)} exp(tau g(w_par))                        (39)
    g(w_par)  = c_m^2 w_par^{2m} / (1 + 2 sigma_perp^2 + 2 w_par^2)^m,
                sigma_perp^2 = sigma_w^2 (d-1)/d                                        (36)
    alpha     = (t sigma_a^2 / chi) E_{p_t}[g],   p_t ∝ p0 exp(tau g)                    (37)
    E(alpha)  = t* alpha - Lambda(t*),    P_* = (2 kappa / k) E(alpha)               (38),(40)

where ``c_m = <erf(w.x), He_m(w*.x)>/(sqrt(m!) (w.w*)^m (1+2|w|^2)^{-m/2})``; for m = 3,
``c_3^2 = 8/(3 pi)``. The orthogonal part of w is treated as non-fluctuating (36) [RECON].

Option ``perp="exact"`` [derived here, not in the paper; it uses only (34)-(35), RECON].
``G(w)^2`` depends on ``w`` only
through ``w_par = w.w*`` and ``r = |w_perp|^2``, which are independent under the prior
(``w_par ~ N(0, sigma_w^2/d)``, ``x = d r / sigma_w^2 ~ chi^2_{d-1}``), so eq. (34) needs no
approximation:

    Z_1(tau) = E_{w_par, x} exp(tau g(w_par, r)),
    g(w_par, r) = c_m^2 w_par^{2m} / (1 + 2 r + 2 w_par^2)^m,   r = sigma_w^2 x / d,

a two-dimensional integral.  Eq. (36) is its ``r -> E r = sigma_w^2 (d-1)/d`` limit.  At the LDT
saddle point ``tau* = O(d)`` specialists gain ``O(d)`` by shrinking ``r`` (to ~0.3-0.4 for
``sigma_w^2 = 1``), which eq. (36) forbids; it overestimates ``E(alpha)`` (exact/eq. 36 =
0.81-0.82 for d = 8-800, standard and mean-field; ``docs/ldt.md``, case ``ldt/prior-rate-eq36``),
while the exact form reproduces prior Monte Carlo (case ``ldt/prior-rate``).  The default stays
``perp="frozen"`` (the paper's chain).

Numerics: the exponents ``-d w^2/(2 sigma_w^2) + tau g(w)`` are O(d), so every integral is
evaluated in log-sum-exp form (or with ``expm1`` when the tilt is weak, which keeps
``log Z_1 << 1`` accurate) on a uniform grid whose spacing resolves the width ``sigma_w/sqrt(d)``
of both the Gaussian bulk and the specialist peaks; the trapezoid rule is spectrally accurate for
these analytic, rapidly decaying integrands. The exact option uses a 2-D trapezoid grid in
``(w_par >= 0, u = log x)`` (``points_per_width`` per ``sigma_w/sqrt(d)`` and per ``sqrt(2/(d-1))``),
evaluated only on the cells where a coarse pass (one node per width) finds the integrand within
``exp(-40)`` of its maximum (plus one neighbouring cell): the support is two blobs (GP bulk,
specialists) of size ``O(1/sqrt(d))``.  Outlier fractions use Gauss-Legendre panels in ``w_par``
split at the threshold.  The saddle point of the exact option is found by a safeguarded Newton
iteration started from the eq. (36) root.  Kernels are numba-compiled (``cache=True``) and take
arrays/scalars only; the public functions validate input and build results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import mpmath
import numba
import numpy as np
from scipy import optimize, special

from .._results import SolverStatus, raise_if_failed
from ..checks import as_float_array, check_int, check_pos_float

__all__ = [
    "LDTResult",
    "erf_derivative_gaussian_mean",
    "erf_hermite_overlap",
    "erf_hermite_coefficient_sq",
    "overlap_potential",
    "ldt_log_mgf",
    "ldt_two_layer_erf",
    "tilted_overlap_density",
    "log_z1_reference",
    "outlier_threshold",
]

_LOG_CUTOFF = 50.0  # integrand below exp(-50) of its value at w = 0 is dropped
_CELL_CUTOFF = 40.0  # exact 2-D kernel: cells below exp(-40) of the maximum are skipped


# --------------------------------------------------------------------------------------------
# closed forms (Stein / Rodrigues, eq. 35)
# --------------------------------------------------------------------------------------------
def erf_derivative_gaussian_mean(n: int, s2) -> np.ndarray:
    """``E_{u ~ N(0, s2)}[erf^{(n)}(u)]`` in closed form (seed 002 eq. 35 generalised) [RECON,
    CHECKED by quadrature].

    n = 0 or even n: 0 (odd integrand).  Odd ``n = 2k+1``:
        (2/sqrt(pi)) (-1)^k ((2k)!/k!) (1 + 2 s2)^{-n/2},
    from ``erf^{(2k+1)}(u) = (2/sqrt(pi)) H_{2k}(u) e^{-u^2}`` and the Hermite generating function.
    """
    n = check_int("n", n, minimum=0)
    s2 = as_float_array("s2", s2)
    if np.any(s2 < 0):
        raise ValueError("s2 must be >= 0 (a variance)")
    if n % 2 == 0:
        return np.zeros_like(s2)
    k = (n - 1) // 2
    coef = 2.0 / math.sqrt(math.pi) * (-1) ** k * math.factorial(2 * k) / math.factorial(k)
    return coef * (1.0 + 2.0 * s2) ** (-n / 2.0)


def erf_hermite_overlap(n: int, w_par, w_norm2) -> np.ndarray:
    """``<erf(w.x), He_n(w*.x)>`` for x ~ N(0, I), |w*| = 1 (seed 002, App. B.3, eq. 35) [RECON,
    CHECKED by 2-D Gauss-Hermite quadrature]:

        <sigma(w.x), He_n(w*.x)> = (w.w*)^n E_{z~N(0,1)} sigma^{(n)}(|w| z)

    (Rodrigues formula + repeated Gaussian integration by parts). He_n is the probabilists'
    Hermite polynomial (not normalised).  ``w_par = w.w*``, ``w_norm2 = |w|^2 >= w_par^2``.
    """
    n = check_int("n", n, minimum=0)
    wp = as_float_array("w_par", w_par)
    wn = as_float_array("w_norm2", w_norm2)
    try:
        wp, wn = np.broadcast_arrays(wp, wn)
    except ValueError:
        raise ValueError(
            f"w_par and w_norm2 must broadcast, got {wp.shape} and {wn.shape}"
        ) from None
    if np.any(wn < wp * wp * (1 - 1e-12) - 1e-300):
        raise ValueError("w_norm2 must be >= w_par**2 (|w|^2 >= (w.w*)^2 for a unit w*)")
    return wp**n * erf_derivative_gaussian_mean(n, wn)


def erf_hermite_coefficient_sq(m: int) -> float:
    """``c_m^2`` with ``g = c_m^2 w_par^{2m} / (1 + 2|w|^2)^m`` the squared overlap of erf with
    the *normalised* target He_m/sqrt(m!) (spec eq. 36; m = 3 gives 8/(3 pi)) [RECON]."""
    m = check_int("m", m, minimum=1)
    if m % 2 == 0:
        raise ValueError(
            f"degree must be odd (erf is odd, so even Hermite overlaps vanish), got {m}"
        )
    k = (m - 1) // 2
    c = 2.0 / math.sqrt(math.pi) * math.factorial(2 * k) / math.factorial(k)
    return c * c / math.factorial(m)


def overlap_potential(w_par, d: int, *, sigma_w2: float = 1.0, degree: int = 3) -> np.ndarray:
    """``g(w_par) = G(w)^2`` in the weakly fluctuating approximation (spec eq. 36) [RECON]:

    g = c_m^2 w_par^{2m} / (1 + 2 sigma_w^2 (d-1)/d + 2 w_par^2)^m.
    """
    wp = as_float_array("w_par", w_par)
    d = check_int("d", d, minimum=1)
    sigma_w2 = check_pos_float("sigma_w2", sigma_w2)
    c2 = erf_hermite_coefficient_sq(degree)
    b = 1.0 + 2.0 * sigma_w2 * (d - 1) / d
    return c2 * wp ** (2 * degree) / (b + 2.0 * wp * wp) ** degree


# --------------------------------------------------------------------------------------------
# numba kernels (arrays / scalars only)
# --------------------------------------------------------------------------------------------
@numba.njit(cache=True)
def _g(w, c2, b, m):
    w2 = w * w
    return c2 * w2**m / (b + 2.0 * w2) ** m


@numba.njit(cache=True)
def _tilted_moments_kernel(tau, prec, c2, b, m, w_max, n):
    """Trapezoid on [0, w_max] (n intervals) of exp(-prec w^2/2 + tau g(w)), the integrand being
    even.  Returns (log Z_1, E_t[g], Var_t[g]) with Z_1 normalised by the prior Gaussian."""
    h = w_max / n
    emax = -1e300
    for i in range(n + 1):
        w = i * h
        e = -0.5 * prec * w * w + tau * _g(w, c2, b, m)
        if e > emax:
            emax = e
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    sx = 0.0  # sum of gauss * expm1(tau g), for the weak-tilt branch
    for i in range(n + 1):
        w = i * h
        wt = 0.5 if (i == 0 or i == n) else 1.0
        gw = _g(w, c2, b, m)
        gauss = -0.5 * prec * w * w
        ew = wt * math.exp(gauss + tau * gw - emax)
        s0 += ew
        s1 += ew * gw
        s2 += ew * gw * gw
        if emax < 600.0:
            tg = tau * gw
            if tg < 1.0:
                sx += wt * math.exp(gauss) * math.expm1(tg)
            else:
                sx += wt * (math.exp(gauss + tg) - math.exp(gauss))
    norm = 2.0 * h * math.sqrt(prec / (2.0 * math.pi))
    if emax < 600.0:
        logz = math.log1p(norm * sx)
    else:
        logz = emax + math.log(norm * s0)
    mean = s1 / s0
    var = s2 / s0 - mean * mean
    if var < 0.0:
        var = 0.0
    return logz, mean, var


@numba.njit(cache=True)
def _log_integral_simpson(a, bnd, n, tau, prec, c2, b, m):
    """log of int_a^bnd exp(-prec w^2/2 + tau g(w)) dw by composite Simpson (n even)."""
    h = (bnd - a) / n
    emax = -1e300
    for i in range(n + 1):
        w = a + i * h
        e = -0.5 * prec * w * w + tau * _g(w, c2, b, m)
        if e > emax:
            emax = e
    s = 0.0
    for i in range(n + 1):
        w = a + i * h
        if i == 0 or i == n:
            wt = 1.0
        elif i % 2 == 1:
            wt = 4.0
        else:
            wt = 2.0
        s += wt * math.exp(-0.5 * prec * w * w + tau * _g(w, c2, b, m) - emax)
    return emax + math.log(s * h / 3.0)


@numba.njit(cache=True)
def _exact_axes(wv, prec, c2, m, r_scale, k, u_lo, hu, nu):
    """Row factors (nodes ``wv`` of w_par >= 0) and column factors (``u = u_lo + j hu``) of the
    exact integrand ``log p0 + tau g = A_i + B_j + tau P_i/(S_i + 2 R_j)^m``.  ``p0`` is the
    normalised prior density of ``(|w_par|, u = log x)``, ``x ~ chi^2_k``, ``r = r_scale x``."""
    lognorm = (
        math.log(2.0)
        + 0.5 * math.log(prec / (2.0 * math.pi))
        - 0.5 * k * math.log(2.0)
        - math.lgamma(0.5 * k)
    )
    nw = wv.size
    A = np.empty(nw)
    P = np.empty(nw)
    S = np.empty(nw)
    for i in range(nw):
        w2 = wv[i] * wv[i]
        A[i] = -0.5 * prec * w2
        P[i] = c2 * w2**m
        S[i] = 1.0 + 2.0 * w2
    B = np.empty(nu + 1)
    R = np.empty(nu + 1)
    for j in range(nu + 1):
        u = u_lo + j * hu
        x = math.exp(u)
        B[j] = 0.5 * k * u - 0.5 * x + lognorm
        R[j] = r_scale * x
    return A, P, S, B, R


@numba.njit(cache=True)
def _coarse_nodes(n, s):
    """Indices 0, s, 2s, ..., n - 1 (the last always included)."""
    nc = (n - 1) // s + 1
    if (nc - 1) * s < n - 1:
        nc += 1
    out = np.empty(nc, np.int64)
    for a in range(nc):
        out[a] = min(a * s, n - 1)
    return out


@numba.njit(cache=True)
def _exact_kernel(tau, wv, wq, wtail, prec, c2, m, r_scale, k, u_lo, hu, nu, s, cutoff):
    """2-D quadrature of ``p0(w_par, u) exp(tau g(w_par, r))`` over ``w_par >= 0`` (nodes
    ``wv``, weights ``wq``; ``wtail`` the weights of the outlier region, zero elsewhere) and
    ``u in [u_lo, u_lo + nu hu]`` (trapezoid).  Only cells of a coarse grid (every ``s``-th node
    in each direction) with a corner within ``cutoff`` of the coarse maximum, dilated by one cell
    (so that a peak between coarse nodes is not missed), are summed; the rest of the integrand is
    below ``~e^{-cutoff}`` of its maximum.

    Returns ``(log Z_1, E_t[g], Var_t[g], Pr_t(outlier), E_t[r | outlier])`` (the last NaN when
    the outlier mass is 0)."""
    A, P, S, B, R = _exact_axes(wv, prec, c2, m, r_scale, k, u_lo, hu, nu)
    ci = _coarse_nodes(wv.size, s)
    cj = _coarse_nodes(nu + 1, s)
    nci = ci.size
    ncj = cj.size
    ec = np.empty((nci, ncj))
    gmax = -1e300
    for a in range(nci):
        i = ci[a]
        for b in range(ncj):
            j = cj[b]
            e = A[i] + B[j] + tau * P[i] / (S[i] + 2.0 * R[j]) ** m
            ec[a, b] = e
            if e > gmax:
                gmax = e
    lim = gmax - cutoff
    act = np.zeros((nci - 1, ncj - 1), np.bool_)
    for a in range(nci - 1):
        for b in range(ncj - 1):
            e = max(max(ec[a, b], ec[a + 1, b]), max(ec[a, b + 1], ec[a + 1, b + 1]))
            if e > lim:  # hot cell: activate it and its 8 neighbours
                for aa in range(max(a - 1, 0), min(a + 2, nci - 1)):
                    for bb in range(max(b - 1, 0), min(b + 2, ncj - 1)):
                        act[aa, bb] = True
    weak = gmax < 600.0
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    sx = 0.0
    t0 = 0.0
    tr = 0.0
    for a in range(nci - 1):
        i_end = ci[a + 1] if a + 1 < nci - 1 else ci[a + 1] + 1
        for b in range(ncj - 1):
            if not act[a, b]:
                continue
            j_end = cj[b + 1] if b + 1 < ncj - 1 else cj[b + 1] + 1
            for i in range(ci[a], i_end):
                for j in range(cj[b], j_end):
                    gq = P[i] / (S[i] + 2.0 * R[j]) ** m
                    tg = tau * gq
                    wj = 0.5 if (j == 0 or j == nu) else 1.0
                    f = wj * math.exp(A[i] + B[j] + tg - gmax)
                    fw = wq[i] * f
                    s0 += fw
                    s1 += fw * gq
                    s2 += fw * gq * gq
                    if weak:
                        # e^{A+B}(e^{tg} - 1) = e^{gmax} f (1 - e^{-tg}), accurate for all tg
                        sx -= fw * math.expm1(-tg)
                    if wtail[i] != 0.0:
                        ft = wtail[i] * f
                        t0 += ft
                        tr += ft * R[j]
    if weak:
        logz = math.log1p(hu * sx * math.exp(gmax))
    else:
        logz = gmax + math.log(hu * s0)
    mean = s1 / s0
    var = s2 / s0 - mean * mean
    if var < 0.0:
        var = 0.0
    r_out = tr / t0 if t0 > 0.0 else math.nan
    return logz, mean, var, t0 / s0, r_out


@numba.njit(cache=True)
def _exact_marginal_kernel(w, tau, prec, c2, m, r_scale, k, u_lo, hu, nu):
    """``log int du p0(|w_par|, u) exp(tau g(w_par, r))`` for each ``w_par`` in ``w`` (trapezoid
    over the whole u range, log-sum-exp); ``p0`` folded (density of ``|w_par|``)."""
    _, _, _, B, R = _exact_axes(np.zeros(1), prec, c2, m, r_scale, k, u_lo, hu, nu)
    out = np.empty(w.size)
    for q in range(w.size):
        w2 = w[q] * w[q]
        a = -0.5 * prec * w2
        p = c2 * w2**m
        sq = 1.0 + 2.0 * w2
        emax = -1e300
        for j in range(nu + 1):
            e = a + B[j] + tau * p / (sq + 2.0 * R[j]) ** m
            if e > emax:
                emax = e
        acc = 0.0
        for j in range(nu + 1):
            e = a + B[j] + tau * p / (sq + 2.0 * R[j]) ** m
            acc += (0.5 if (j == 0 or j == nu) else 1.0) * math.exp(e - emax)
        out[q] = emax + math.log(acc * hu)
    return out


def _log_rho_bound(level: float, k: float, upper: bool) -> float:
    """``v = log rho`` with ``(k/2)(rho - 1 - log rho) = level`` on the branch ``rho > 1``
    (``upper``) or ``rho < 1``: where the chi^2_k density of ``x = k rho`` has dropped by
    ``e^{-level}`` from its mode.  Newton on the convex ``e^v - v - c``, started on the far side
    of the root (monotone convergence)."""
    c = 1.0 + 2.0 * level / k
    v = math.log(2.0 * c) if upper else -c
    for _ in range(200):
        f = math.exp(v) - v - c
        step = f / (math.exp(v) - 1.0)
        v -= step
        if abs(step) < 1e-12 * max(1.0, abs(v)):
            break
    return v


# --------------------------------------------------------------------------------------------
# validated wrappers
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Problem:
    d: int
    N: int
    sigma_w2: float
    sigma_a2: float
    chi: float
    degree: int
    points_per_width: float
    c2: float
    b: float
    prec: float  # d / sigma_w^2
    perp: str = "frozen"  # "frozen" (eq. 36) or "exact" (joint law of w_par and |w_perp|^2)

    def grid(self, tau: float) -> tuple[float, int]:
        width = math.sqrt(self.sigma_w2 / self.d)
        g_inf = self.c2 / 2.0**self.degree
        w_max = max(12.0 * width, math.sqrt(2.0 * (tau * g_inf + _LOG_CUTOFF) / self.prec))
        n = int(math.ceil(w_max / width * self.points_per_width))
        return w_max, max(n, 64)

    def u_grid(self, tau: float) -> tuple[float, float, int]:
        """``(u_lo, hu, nu)`` for ``u = log x``, ``x = d |w_perp|^2 / sigma_w^2 ~ chi^2_{d-1}``.
        Above ``u_hi`` the prior density has dropped by ``e^{-50}`` from its mode and the tilt
        only decreases (g falls with r); below ``u_lo`` by ``e^{-50 - tau g_inf}``, more than
        any tilt ``tau g <= tau g_inf`` can recover."""
        k = self.d - 1.0
        g_inf = self.c2 / 2.0**self.degree
        lk = math.log(k)
        u_lo = lk + _log_rho_bound(_LOG_CUTOFF + tau * g_inf, k, upper=False)
        u_hi = lk + _log_rho_bound(_LOG_CUTOFF, k, upper=True)
        hu = math.sqrt(2.0 / k) / self.points_per_width
        nu = max(int(math.ceil((u_hi - u_lo) / hu)), 64)
        return u_lo, (u_hi - u_lo) / nu, nu

    def _exact(self, tau: float, threshold: float | None):
        """The exact 2-D kernel.  Without threshold: trapezoid nodes ``i w_max/n`` in w_par
        (spectrally accurate: the integrand is even in w_par and negligible at w_max).  With a
        threshold c: Gauss-Legendre panels of about one width on [0, c] and [c, w_max] (the
        integrand is not smooth across c once restricted to the tail, so the trapezoid rule
        would be O(h^2) there and Simpson O(h^4))."""
        w_max, n = self.grid(tau)
        s = max(1, int(round(self.points_per_width)))
        if threshold is None:
            wv = np.linspace(0.0, w_max, n + 1)
            wq = np.full(n + 1, w_max / n)
            wq[0] = wq[-1] = 0.5 * w_max / n
            wtail = np.zeros(n + 1)
        else:
            width = math.sqrt(self.sigma_w2 / self.d)
            q = max(s, 6)
            x, wx = np.polynomial.legendre.leggauss(q)
            parts = []
            for lo, hi in ((0.0, threshold), (threshold, w_max)):
                npan = max(1, int(math.ceil((hi - lo) / width)))
                hp = (hi - lo) / npan
                left = lo + hp * np.arange(npan)
                parts.append(((left[:, None] + hp * (x + 1.0) / 2.0).ravel(),
                              np.tile(wx * hp / 2.0, npan)))
            wv = np.concatenate([parts[0][0], parts[1][0]])
            wq = np.concatenate([parts[0][1], parts[1][1]])
            wtail = np.concatenate([np.zeros(parts[0][1].size), parts[1][1]])
        u_lo, hu, nu = self.u_grid(tau)
        return _exact_kernel(
            tau, wv, wq, wtail, self.prec, self.c2, self.degree, self.sigma_w2 / self.d,
            self.d - 1.0, u_lo, hu, nu, s, _CELL_CUTOFF,
        )

    def moments(self, tau: float) -> tuple[float, float, float]:
        """``(log Z_1(tau), E_t[g], Var_t[g])`` (eq. 39 or its exact form)."""
        if self.perp == "exact":
            return self._exact(tau, None)[:3]
        w_max, n = self.grid(tau)
        return _tilted_moments_kernel(tau, self.prec, self.c2, self.b, self.degree, w_max, n)

    def tail(self, tau: float, threshold: float) -> tuple[float, float]:
        """``Pr_t(|w_par| > threshold)`` and ``E_t[|w_perp|^2 | |w_par| > threshold]`` (the
        frozen value ``sigma_w^2 (d-1)/d`` for eq. 36)."""
        if self.perp == "exact":
            w_max, _ = self.grid(tau)
            if threshold >= w_max:
                return 0.0, math.nan
            return tuple(self._exact(tau, threshold)[3:])
        return _tail_fraction(self, tau, threshold), (self.b - 1.0) / 2.0

    def tau(self, t):
        return t * t * self.sigma_a2 / (2.0 * self.chi * self.N)


def _check_perp(perp) -> str:
    if perp not in ("frozen", "exact"):
        raise ValueError(
            f"perp must be 'frozen' (eq. 36, |w_perp|^2 fixed at sigma_w2 (d-1)/d) or 'exact' "
            f"(its prior fluctuations integrated), got {perp!r}"
        )
    return perp


def _make_problem(
    d, N, sigma_w2, sigma_a2, chi, degree, points_per_width, perp="frozen"
) -> _Problem:
    d = check_int("d", d, minimum=2)
    N = check_int("N", N, minimum=1)
    sigma_w2 = check_pos_float("sigma_w2", sigma_w2)
    sigma_a2 = check_pos_float("sigma_a2", sigma_a2)
    if isinstance(chi, str):
        if chi not in ("standard", "mean-field"):
            raise ValueError(
                f"chi must be a positive number, 'standard' or 'mean-field', got {chi!r}"
            )
        chi = 1.0 if chi == "standard" else float(N)
    chi = check_pos_float("chi", chi)
    degree = check_int("degree", degree, minimum=1)
    c2 = erf_hermite_coefficient_sq(degree)
    points_per_width = check_pos_float("points_per_width", points_per_width)
    if points_per_width < 2:
        raise ValueError(
            f"points_per_width must be >= 2 to resolve the bulk, got {points_per_width}"
        )
    perp = _check_perp(perp)
    b = 1.0 + 2.0 * sigma_w2 * (d - 1) / d
    return _Problem(
        d, N, sigma_w2, sigma_a2, chi, degree, points_per_width, c2, b, d / sigma_w2, perp
    )


def ldt_log_mgf(
    t,
    d: int,
    N: int,
    *,
    sigma_w2: float = 1.0,
    sigma_a2: float = 1.0,
    chi=1.0,
    degree: int = 3,
    points_per_width: float = 8.0,
    perp: str = "frozen",
) -> tuple[np.ndarray, np.ndarray]:
    """Cumulant generating function of the prior alignment and its derivative (eqs. 34, 39):

        Lambda(t) = N log Z_1(tau),   Lambda'(t) = (t sigma_a^2/chi) E_{p_t}[g]  [RECON].

    ``perp="frozen"`` (default): ``Z_1`` of eq. (39) with ``|w_perp|^2`` frozen at
    ``sigma_w^2 (d-1)/d`` (eq. 36) [RECON].  ``perp="exact"``: ``Z_1 = E_{w_par, x}
    exp(tau g(w_par, sigma_w^2 x/d))`` with ``x ~ chi^2_{d-1}`` independent of ``w_par`` (eq. 34
    without approximation; derived here, see the module docstring).

    Returns ``(Lambda, dLambda)`` with the shape of ``t``.  ``chi`` may be a number or
    ``"standard"`` (1) / ``"mean-field"`` (N).  Suitable as the ``cgf``/``cgf_prime`` of
    :func:`richlazy.theory.ldt._bounds.chernoff_energy`.
    """
    pr = _make_problem(d, N, sigma_w2, sigma_a2, chi, degree, points_per_width, perp)
    t = as_float_array("t", t)
    lam = np.empty(t.shape)
    dlam = np.empty(t.shape)
    for i, ti in np.ndenumerate(t):
        logz, mean, _ = pr.moments(pr.tau(ti))
        lam[i] = pr.N * logz
        dlam[i] = ti * pr.sigma_a2 / pr.chi * mean
    return lam, dlam


@dataclass(frozen=True)
class LDTResult(SolverStatus):
    """Exact LDT of the two-layer erf network at each alpha (arrays of alpha's shape).

    t_star, tau_star : saddle point of eq. (37) and tau = t^2 sigma_a^2 / (2 chi N).
    energy : E(alpha) = t* alpha - Lambda(t*) (eq. 38).
    log_mgf : Lambda(t*).
    P_star : (2 kappa / k) E(alpha) (eq. 40).
    k : the k factor used (given, or :func:`k_factor_two_layer_erf`).
    outlier_fraction : Pr_{p_t*}(|w.w*| > 3 sigma_w / sqrt(d))  (App. F 3-sigma rule).
    n_outliers : N * outlier_fraction (predicted outlier count per network).
    n_specialists : N * (outlier_fraction - Pr_prior(|z| > 3)) (outliers in excess of the GP).
    mean_g : E_{p_t*}[g]  (so that alpha = t* sigma_a^2 mean_g / chi).
    outlier_perp_norm2 : E_{p_t*}[|w_perp|^2 | outlier] (perp="exact"); the frozen value
        sigma_w^2 (d-1)/d for perp="frozen".
    perp : "frozen" (eq. 36) or "exact" (see :func:`ldt_two_layer_erf`).
    d, N, sigma_w2, sigma_a2, chi, degree, kappa : the problem.
    """

    alpha: np.ndarray
    t_star: np.ndarray
    tau_star: np.ndarray
    energy: np.ndarray
    log_mgf: np.ndarray
    P_star: np.ndarray
    k: float
    outlier_fraction: np.ndarray
    n_outliers: np.ndarray
    n_specialists: np.ndarray
    mean_g: np.ndarray
    d: int
    N: int
    sigma_w2: float
    sigma_a2: float
    chi: float
    degree: int
    kappa: float
    outlier_perp_norm2: np.ndarray | None = None
    perp: str = "frozen"


def outlier_threshold(d: int, *, sigma_w2: float = 1.0, n_sigma: float = 3.0) -> float:
    """``n_sigma`` GP standard deviations of the first-layer overlap, ``n_sigma sigma_w/sqrt(d)``
    (App. F: outliers beyond 3x the GP standard deviation) [PROSE; the GP std is RECON]."""
    d = check_int("d", d, minimum=1)
    sigma_w2 = check_pos_float("sigma_w2", sigma_w2)
    n_sigma = check_pos_float("n_sigma", n_sigma)
    return n_sigma * math.sqrt(sigma_w2 / d)


def _tail_fraction(pr: _Problem, tau: float, c: float) -> float:
    w_max, n = pr.grid(tau)
    if c >= w_max:
        return 0.0
    n1 = 2 * int(math.ceil(n * c / w_max / 2.0)) + 2
    n2 = 2 * int(math.ceil(n * (w_max - c) / w_max / 2.0)) + 2
    la = _log_integral_simpson(0.0, c, n1, tau, pr.prec, pr.c2, pr.b, pr.degree)
    lb = _log_integral_simpson(c, w_max, n2, tau, pr.prec, pr.c2, pr.b, pr.degree)
    mx = max(la, lb)
    return math.exp(lb - mx) / (math.exp(la - mx) + math.exp(lb - mx))


def _solve_t(pr: _Problem, alpha: float, xtol: float, maxiter: int):
    """Root of F(t) = (t sigma_a^2/chi) E_t[g] - alpha (monotone increasing in t)."""
    g_inf = pr.c2 / 2.0**pr.degree
    scale = pr.sigma_a2 / pr.chi

    def F(logt):
        t = math.exp(logt)
        return t * scale * pr.moments(pr.tau(t))[1] - alpha

    lo = math.log(alpha / (scale * g_inf))  # E_t[g] <= g_inf  =>  F(lo) <= 0
    hi = lo + math.log(2.0)
    nit = 0
    while F(hi) < 0:
        lo, hi = hi, hi + math.log(2.0)
        nit += 1
        if nit > 200:
            return math.exp(hi), nit, False
    root, info = optimize.brentq(
        F,
        lo,
        hi,
        xtol=xtol,
        rtol=4 * np.finfo(float).eps,
        maxiter=maxiter,
        full_output=True,
        disp=False,
    )
    return math.exp(root), nit + info.iterations, bool(info.converged)


def _solve_t_newton(pr: _Problem, alpha: float, xtol: float, maxiter: int, t_guess: float):
    """Root of ``F(t) = (t sigma_a^2/chi) E_t[g] - alpha`` by a safeguarded Newton iteration in
    ``v = log t`` (used for ``perp="exact"``, where one evaluation costs ~1 ms): bracket by
    factors of 2 around ``t_guess`` (the eq. 36 root, typically 1.2x the exact one), then Newton
    steps with ``dF/dv = t (sigma_a^2/chi) (E_t[g] + t^2 sigma_a^2/(chi N) Var_t[g])``
    (``dE_t[g]/dtau = Var_t[g]``), falling back to bisection whenever a step leaves the bracket
    or does not halve ``|F|`` fast enough."""
    scale = pr.sigma_a2 / pr.chi
    c = pr.sigma_a2 / (pr.chi * pr.N)
    nit = 0

    def fdf(v):
        t = math.exp(v)
        _, mean, var = pr.moments(pr.tau(t))
        return t * scale * mean - alpha, t * scale * (mean + t * t * c * var)

    step = math.log(2.0)
    v = math.log(t_guess)
    f, df = fdf(v)
    nit += 1
    x, fx, dfx = v, f, df
    if f > 0:
        hi, lo = v, v - step
        while True:
            f, df = fdf(lo)
            nit += 1
            if f <= 0 or nit > 200:
                break
            hi, x, fx, dfx = lo, lo, f, df
            lo -= step
    else:
        lo, hi = v, v + step
        while True:
            f, df = fdf(hi)
            nit += 1
            if f >= 0 or nit > 200:
                break
            lo, x, fx, dfx = hi, hi, f, df
            hi += step
    if nit > 200:
        return math.exp(x), nit, False
    dx_old = dx = hi - lo
    for _ in range(maxiter):
        out_of_bracket = ((x - hi) * dfx - fx) * ((x - lo) * dfx - fx) > 0.0
        if dfx <= 0.0 or out_of_bracket or abs(2.0 * fx) > abs(dx_old * dfx):
            dx_old, dx = dx, 0.5 * (hi - lo)
            x = lo + dx
        else:
            dx_old, dx = dx, fx / dfx
            x -= dx
        if abs(dx) < xtol:
            return math.exp(x), nit, True
        fx, dfx = fdf(x)
        nit += 1
        if fx < 0:
            lo = x
        else:
            hi = x
    return math.exp(x), nit, False


def ldt_two_layer_erf(
    alpha,
    d: int,
    N: int,
    *,
    sigma_w2: float = 1.0,
    sigma_a2: float = 1.0,
    chi=1.0,
    kappa: float = 1.0,
    k: float | None = None,
    degree: int = 3,
    n_sigma: float = 3.0,
    points_per_width: float = 8.0,
    perp: str = "frozen",
    xtol: float = 1e-12,
    maxiter: int = 200,
    throw: bool = False,
) -> LDTResult:
    """Exact LDT energy E(alpha), saddle point t*, P_* and predicted specialist count for the
    two-layer erf network with target He_degree(w*.x)/sqrt(degree!) (seed 002, App. B.3,
    eqs. 34-40; spec note section 3.2) [RECON, CHECKED against an mpmath reference and against
    the pattern scalings of section 5.1].

    ``E(alpha) = t* alpha - Lambda(t*)`` with ``Lambda'(t*) = alpha`` (eqs. 37-38),
    ``P_* = (2 kappa/k) E`` (eq. 40); ``Lambda`` from :func:`ldt_log_mgf` with the same ``perp``:

    * ``perp="frozen"`` (default): the paper's eq. (36), ``|w_perp|^2 = sigma_w^2 (d-1)/d``
      [RECON].  Overestimates E by ~22 % (E_exact/E_36 = 0.81-0.82, d = 8-800; docs/ldt.md).
    * ``perp="exact"``: the prior fluctuations of ``|w_perp|^2`` integrated exactly (2-D
      integral; derived here, not in the paper).  ``E`` is then a true Chernoff bound,
      ``Pr_prior[A >= alpha] <= exp(-E)``, reproduced by prior Monte Carlo up to an O(log d)
      prefactor (case ``ldt/prior-rate``).  ``outlier_perp_norm2`` is the mean ``|w_perp|^2``
      of the predicted outliers.  A 2-D integral per evaluation: ~10-20 ms per alpha at
      d = 400 on one CPU core, ~30-80x the frozen time.

    Parameters
    ----------
    alpha : array_like, > 0
        Alignment thresholds (vectorised).
    d, N : int
        Input dimension and width.
    sigma_w2, sigma_a2 : float
        Prior variances: w ~ N(0, sigma_w2 I/d), a ~ N(0, sigma_a2/(chi N)).
    chi : float or {"standard", "mean-field"}
        Mean-field scale (1 standard, N mean-field).
    kappa : float
        Ridge / Langevin temperature.
    k : float, optional
        The k factor of eq. (22); default :func:`k_factor_two_layer_erf` (typical |x|^2 = d).
    degree : int
        Odd Hermite degree m of the target (3 in the paper).
    n_sigma : float
        Outlier threshold in GP standard deviations (3 in App. F).
    points_per_width : float
        Grid points per ``sigma_w/sqrt(d)`` (and, for ``perp="exact"``, per ``sqrt(2/(d-1))``
        in ``log |w_perp|^2``); 8 gives ~1e-12 relative accuracy.
    perp : {"frozen", "exact"}
        Treatment of the orthogonal part of w (see above).
    xtol, maxiter, throw : root-finding controls; ``throw`` raises on failure.
    """
    from ._bounds import k_factor_two_layer_erf

    a = as_float_array("alpha", alpha)
    if np.any(a <= 0):
        raise ValueError("alpha must be > 0 (alignment threshold above the prior mean 0)")
    pr = _make_problem(d, N, sigma_w2, sigma_a2, chi, degree, points_per_width, perp)
    kappa = check_pos_float("kappa", kappa)
    if k is None:
        k = k_factor_two_layer_erf(pr.sigma_w2, pr.sigma_a2, chi=pr.chi)
    k = check_pos_float("k", k)
    check_pos_float("xtol", xtol)
    maxiter = check_int("maxiter", maxiter, minimum=1)
    thr = outlier_threshold(pr.d, sigma_w2=pr.sigma_w2, n_sigma=n_sigma)
    prior_tail = float(special.erfc(n_sigma / math.sqrt(2.0)))
    shape = a.shape
    outs = {
        key: np.empty(a.size) for key in ("t", "tau", "E", "lam", "frac", "rperp", "g", "res")
    }
    nit = 0
    ok = True
    guide = replace(pr, perp="frozen") if pr.perp == "exact" else None
    for j, al in enumerate(a.ravel()):
        if guide is None:
            t, it, conv = _solve_t(pr, float(al), xtol, maxiter)
        else:
            t_guess, it0, _ = _solve_t(guide, float(al), 1e-6, maxiter)
            t, it, conv = _solve_t_newton(pr, float(al), xtol, maxiter, t_guess)
            it += it0
        nit += it
        ok &= conv
        tau = pr.tau(t)
        logz, mean, _ = pr.moments(tau)
        lam = pr.N * logz
        outs["t"][j] = t
        outs["tau"][j] = tau
        outs["lam"][j] = lam
        outs["E"][j] = t * al - lam
        outs["g"][j] = mean
        outs["frac"][j], outs["rperp"][j] = pr.tail(tau, thr)
        outs["res"][j] = abs(t * pr.sigma_a2 / pr.chi * mean - al) / al
    residual = float(np.max(outs["res"])) if a.size else 0.0
    converged = bool(ok and residual < 1e-8)
    msg = (
        "converged"
        if converged
        else (
            "saddle-point equation (37) not solved to tolerance "
            f"(relative residual {residual:.2e}); "
            "increase maxiter or points_per_width"
        )
    )
    E = outs["E"].reshape(shape)
    res = LDTResult(
        converged=converged,
        status=0 if converged else 2,
        message=msg,
        nit=nit,
        residual=residual,
        alpha=a,
        t_star=outs["t"].reshape(shape),
        tau_star=outs["tau"].reshape(shape),
        energy=E,
        log_mgf=outs["lam"].reshape(shape),
        P_star=2.0 * kappa / k * E,
        k=float(k),
        outlier_fraction=outs["frac"].reshape(shape),
        n_outliers=pr.N * outs["frac"].reshape(shape),
        n_specialists=pr.N * (outs["frac"].reshape(shape) - prior_tail),
        mean_g=outs["g"].reshape(shape),
        d=pr.d,
        N=pr.N,
        sigma_w2=pr.sigma_w2,
        sigma_a2=pr.sigma_a2,
        chi=pr.chi,
        degree=pr.degree,
        kappa=kappa,
        outlier_perp_norm2=outs["rperp"].reshape(shape),
        perp=pr.perp,
    )
    raise_if_failed(res, throw)
    return res


def tilted_overlap_density(
    w_par,
    t: float,
    d: int,
    N: int,
    *,
    sigma_w2: float = 1.0,
    sigma_a2: float = 1.0,
    chi=1.0,
    degree: int = 3,
    points_per_width: float = 8.0,
    perp: str = "frozen",
) -> np.ndarray:
    """Tilted density ``p_t(w_par) ∝ exp(-d w_par^2/(2 sigma_w^2) + tau g(w_par))`` of the
    first-layer overlap w.w*, normalised to unit mass (spec 3.2, "Fig. 2a prediction") [RECON].

    At ``t = t*(alpha)`` (:func:`ldt_two_layer_erf`) or at the adaptive-kernel field ``t(P)``
    it is the predicted posterior histogram of w.w*: a GP bulk of width sigma_w/sqrt(d) plus
    specialist peaks at |w.w*| = O(1).  With ``perp="exact"`` it is the marginal of the exact
    tilt, ``p_t(w_par) = E_x[p0(w_par) exp(tau g(w_par, sigma_w^2 x/d))] / Z_1``,
    ``x ~ chi^2_{d-1}`` (derived here; see :func:`ldt_log_mgf`).
    """
    pr = _make_problem(d, N, sigma_w2, sigma_a2, chi, degree, points_per_width, perp)
    t = float(as_float_array("t", t, ndim=0))
    if t < 0:
        raise ValueError(f"t must be >= 0, got {t}")
    w = as_float_array("w_par", w_par)
    tau = pr.tau(t)
    logz, _, _ = pr.moments(tau)
    if pr.perp == "exact":
        u_lo, hu, nu = pr.u_grid(tau)
        flat = np.ascontiguousarray(np.abs(w).ravel(), dtype=float)
        lm = _exact_marginal_kernel(
            flat, tau, pr.prec, pr.c2, pr.degree, pr.sigma_w2 / pr.d, pr.d - 1.0, u_lo, hu, nu
        )
        return np.exp(lm - math.log(2.0) - logz).reshape(w.shape)
    g = pr.c2 * w ** (2 * pr.degree) / (pr.b + 2 * w * w) ** pr.degree
    logp = 0.5 * math.log(pr.prec / (2 * math.pi)) - 0.5 * pr.prec * w * w + tau * g - logz
    return np.exp(logp)


def log_z1_reference(
    tau: float, d: int, *, sigma_w2: float = 1.0, degree: int = 3, dps: int = 30
) -> tuple[float, float]:
    """mpmath reference for ``(log Z_1(tau), E_{p_t}[g])`` (eq. 39) by adaptive high-precision
    quadrature, with break points at the Gaussian bulk and at the maximum of the exponent.
    Slow; for tests and benchmarks."""
    d = check_int("d", d, minimum=2)
    sigma_w2 = check_pos_float("sigma_w2", sigma_w2)
    tau = float(tau)
    if not (tau >= 0 and math.isfinite(tau)):
        raise ValueError(f"tau must be a finite number >= 0, got {tau}")
    c2 = erf_hermite_coefficient_sq(degree)
    with mpmath.workdps(dps):
        prec = mpmath.mpf(d) / sigma_w2
        b = 1 + 2 * mpmath.mpf(sigma_w2) * (d - 1) / d
        m = degree

        def g(w):
            return c2 * w ** (2 * m) / (b + 2 * w * w) ** m

        def expo(w):
            return -prec * w * w / 2 + tau * g(w)

        # locate the maximum of the exponent on w > 0 (coarse scan, then refine)
        width = mpmath.sqrt(1 / prec)
        g_inf = c2 / 2**m
        w_max = max(12 * width, mpmath.sqrt(2 * (tau * g_inf + 60) / prec))
        scan = [w_max * i / 4000 for i in range(4001)]
        vals = [expo(w) for w in scan]
        i_best = max(range(len(vals)), key=lambda i: vals[i])
        emax = max(vals[i_best], mpmath.mpf(0))
        # break points every 3 widths (bulk and peaks are ~1 width wide) plus around the peak
        n_int = int(min(400, mpmath.ceil(w_max / (3 * width))))
        wb = scan[i_best]
        pts = {w_max * i / n_int for i in range(n_int + 1)}
        pts |= {wb, max(wb - 8 * width, 0), min(wb + 8 * width, w_max)}
        pts = sorted(pts)

        def f0(w):
            return mpmath.exp(expo(w) - emax)

        def f1(w):
            return g(w) * mpmath.exp(expo(w) - emax)

        i0 = mpmath.quad(f0, pts)
        i1 = mpmath.quad(f1, pts)
        logz = emax + mpmath.log(2 * i0) + mpmath.log(mpmath.sqrt(prec / (2 * mpmath.pi)))
        return float(logz), float(i1 / i0)
