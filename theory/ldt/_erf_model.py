"""The two-layer erf network with a Hermite target as a per-neuron large-deviation problem.

Paper: Rubin, Davidovich, Ringel, *Mitigating the Curse of Detail* (seed 002), App. B.3,
eqs. (34)-(39); reconstruction of the spec note ``curse_of_detail.md`` section 3.2 [RECON].

Model:  f(x) = sum_{i=1}^N a_i erf(w_i . x),  x ~ N(0, I_d),
    w_i ~ N(0, sigma_w^2 I / d),  a_i ~ N(0, sigma_a^2 / (chi N)),
    y(x) = He_m(w* . x) / sqrt(m!),  |w*| = 1, m odd (the paper's case is m = 3);
chi = 1 standard scaling, chi = N mean-field scaling.

Per-neuron problem (readout integrated out, eqs. 31, 34):

    Lambda(t) = N log Z_1(tau),   tau = t^2 sigma_a^2 / (2 chi N)
    Z_1(tau)  = E_{p0} exp(tau g),   p_t ∝ p0 exp(tau g)                                  (39)
    g(w_par)  = c_m^2 w_par^{2m} / (1 + 2 sigma_w^2 (d-1)/d + 2 w_par^2)^m  ("frozen", eq. 36)
    g(w_par, r) = c_m^2 w_par^{2m} / (1 + 2 r + 2 w_par^2)^m, r = |w_perp|^2    ("exact")

This module holds the closed forms (Stein/Rodrigues, eq. 35) and :class:`ErfModel`, the
validated problem object whose :meth:`ErfModel.moments` and :meth:`ErfModel.tail` evaluate
``log Z_1``, the tilted moments of ``g`` and the tilted outlier law by the numba kernels of
:mod:`._erf_kernels`. The solvers built on it live in :mod:`._erf` (exact LDT),
:mod:`._adaptive_kernel` (AK closure) and :mod:`._patterns` (pattern energies).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..checks import as_float_array, broadcast_named, check_int, check_nonneg_float, check_pos_float
from ._erf_kernels import (
    CELL_CUTOFF,
    LOG_CUTOFF,
    _exact_kernel,
    _exact_marginal_kernel,
    _log_integral_simpson,
    _log_rho_bound,
    _tilted_moments_kernel,
)

__all__ = [
    "ErfModel",
    "erf_derivative_gaussian_mean",
    "erf_hermite_overlap",
    "erf_hermite_coefficient_sq",
    "overlap_potential",
    "outlier_threshold",
]


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
    wp, wn = broadcast_named({"w_par": wp, "w_norm2": wn}, message="w_par and w_norm2 must broadcast")
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
    degree = check_int("degree", degree, minimum=1)
    c2 = erf_hermite_coefficient_sq(degree)
    b = 1.0 + 2.0 * sigma_w2 * (d - 1) / d
    return c2 * wp ** (2 * degree) / (b + 2.0 * wp * wp) ** degree


def outlier_threshold(d: int, *, sigma_w2: float = 1.0, n_sigma: float = 3.0) -> float:
    """``n_sigma`` GP standard deviations of the first-layer overlap, ``n_sigma sigma_w/sqrt(d)``
    (App. F: outliers beyond 3x the GP standard deviation) [PROSE; the GP std is RECON]."""
    d = check_int("d", d, minimum=1)
    sigma_w2 = check_pos_float("sigma_w2", sigma_w2)
    n_sigma = check_pos_float("n_sigma", n_sigma)
    return n_sigma * math.sqrt(sigma_w2 / d)


# --------------------------------------------------------------------------------------------
# the problem object
# --------------------------------------------------------------------------------------------
def _check_perp(perp) -> str:
    if perp not in ("frozen", "exact"):
        raise ValueError(
            f"perp must be 'frozen' (eq. 36, |w_perp|^2 fixed at sigma_w2 (d-1)/d) or 'exact' "
            f"(its prior fluctuations integrated), got {perp!r}"
        )
    return perp


@dataclass(frozen=True)
class ErfModel:
    """Two-layer erf network with target ``He_degree(w*.x)/sqrt(degree!)``, reduced to its
    per-neuron tilted law (seed 002, App. B.3, eqs. 34-39; spec note 3.2) [RECON].

    ``ErfModel(d, N, sigma_w2=..., sigma_a2=..., chi=..., degree=..., points_per_width=...,
    perp=...)`` validates its inputs on construction; the object is immutable and cheap, so
    build a new one (``dataclasses.replace``) to change a parameter.

    Parameters / fields
    -------------------
    d : int >= 2            input dimension.
    N : int >= 1            width.
    sigma_w2, sigma_a2 : float > 0
        prior variances, ``w ~ N(0, sigma_w2 I/d)``, ``a ~ N(0, sigma_a2/(chi N))``.
    chi : float > 0 or {"standard", "mean-field"}
        mean-field scale (stored as a float: "standard" -> 1, "mean-field" -> N).
    degree : odd int >= 1   Hermite degree m of the target (3 in the paper).
    points_per_width : float >= 2
        quadrature nodes per ``sigma_w/sqrt(d)`` (and, for ``perp="exact"``, per
        ``sqrt(2/(d-1))`` in ``log |w_perp|^2``); 8 gives ~1e-12 relative accuracy.
    perp : {"frozen", "exact"}
        ``|w_perp|^2`` frozen at ``sigma_w^2 (d-1)/d`` (eq. 36, the paper) or its prior
        fluctuations integrated exactly (a 2-D integral; derived here, see :mod:`._erf`).

    Derived fields: ``c2 = c_m^2`` (:func:`erf_hermite_coefficient_sq`), ``b = 1 + 2 sigma_w^2
    (d-1)/d`` (eq. 36 denominator), ``prec = d / sigma_w^2`` (prior precision of ``w_par``),
    ``scale = sigma_a^2/chi`` (so that ``<V>_t = scale E_t[g]``), ``g_inf = c2 / 2^m = sup g``.
    """

    d: int
    N: int
    sigma_w2: float = 1.0
    sigma_a2: float = 1.0
    chi: float = 1.0
    degree: int = 3
    points_per_width: float = 8.0
    perp: str = "frozen"
    c2: float = field(init=False, repr=False)
    b: float = field(init=False, repr=False)
    prec: float = field(init=False, repr=False)

    def __post_init__(self):
        d = check_int("d", self.d, minimum=2)
        N = check_int("N", self.N, minimum=1)
        sigma_w2 = check_pos_float("sigma_w2", self.sigma_w2)
        sigma_a2 = check_pos_float("sigma_a2", self.sigma_a2)
        chi = self.chi
        if isinstance(chi, str):
            if chi not in ("standard", "mean-field"):
                raise ValueError(
                    f"chi must be a positive number, 'standard' or 'mean-field', got {chi!r}"
                )
            chi = 1.0 if chi == "standard" else float(N)
        chi = check_pos_float("chi", chi)
        degree = check_int("degree", self.degree, minimum=1)
        c2 = erf_hermite_coefficient_sq(degree)
        ppw = check_pos_float("points_per_width", self.points_per_width)
        if ppw < 2:
            raise ValueError(f"points_per_width must be >= 2 to resolve the bulk, got {ppw}")
        perp = _check_perp(self.perp)
        for name, value in (
            ("d", d), ("N", N), ("sigma_w2", sigma_w2), ("sigma_a2", sigma_a2), ("chi", chi),
            ("degree", degree), ("points_per_width", ppw), ("perp", perp), ("c2", c2),
            ("b", 1.0 + 2.0 * sigma_w2 * (d - 1) / d), ("prec", d / sigma_w2),
        ):
            object.__setattr__(self, name, value)

    @property
    def scale(self) -> float:
        """``sigma_a^2 / chi``: ``<V>_t = scale E_t[g]`` and ``Lambda'(t) = t scale E_t[g]``."""
        return self.sigma_a2 / self.chi

    @property
    def g_inf(self) -> float:
        """``sup g = c_m^2 / 2^m`` (the ``w_par -> inf`` limit)."""
        return self.c2 / 2.0**self.degree

    def tau(self, t):
        """``tau = t^2 sigma_a^2 / (2 chi N)`` (eq. 34); ``t`` a number or an array."""
        return t * t * self.sigma_a2 / (2.0 * self.chi * self.N)

    def grid(self, tau: float) -> tuple[float, int]:
        """``(w_max, n)``: the ``w_par`` range ``[0, w_max]`` outside which the tilted integrand
        is below ``e^{-50}`` of its value at 0, and the number of intervals
        (``points_per_width`` per ``sigma_w/sqrt(d)``, at least 64)."""
        width = math.sqrt(self.sigma_w2 / self.d)
        w_max = max(12.0 * width, math.sqrt(2.0 * (tau * self.g_inf + LOG_CUTOFF) / self.prec))
        n = int(math.ceil(w_max / width * self.points_per_width))
        return w_max, max(n, 64)

    def u_grid(self, tau: float) -> tuple[float, float, int]:
        """``(u_lo, hu, nu)`` for ``u = log x``, ``x = d |w_perp|^2 / sigma_w^2 ~ chi^2_{d-1}``.
        Above ``u_hi`` the prior density has dropped by ``e^{-50}`` from its mode and the tilt
        only decreases (g falls with r); below ``u_lo`` by ``e^{-50 - tau g_inf}``, more than
        any tilt ``tau g <= tau g_inf`` can recover."""
        k = self.d - 1.0
        lk = math.log(k)
        u_lo = lk + _log_rho_bound(LOG_CUTOFF + tau * self.g_inf, k, upper=False)
        u_hi = lk + _log_rho_bound(LOG_CUTOFF, k, upper=True)
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
            self.d - 1.0, u_lo, hu, nu, s, CELL_CUTOFF,
        )

    def moments(self, tau: float) -> tuple[float, float, float]:
        """``(log Z_1(tau), E_t[g], Var_t[g])`` of the tilt ``p_t ∝ p0 exp(tau g)`` (eq. 39, or
        its exact 2-D form for ``perp="exact"``); ``log Z_1`` stays accurate when ``<< 1``.
        ``E_t[g] = d log Z_1 / d tau`` and ``Var_t[g] = d E_t[g] / d tau``."""
        tau = check_nonneg_float("tau", tau)
        return self._moments(tau)

    def _moments(self, tau: float) -> tuple[float, float, float]:
        if self.perp == "exact":
            return self._exact(tau, None)[:3]
        w_max, n = self.grid(tau)
        return _tilted_moments_kernel(tau, self.prec, self.c2, self.b, self.degree, w_max, n)

    def tail(self, tau: float, threshold: float) -> tuple[float, float]:
        """``Pr_t(|w_par| > threshold)`` and ``E_t[|w_perp|^2 | |w_par| > threshold]`` under the
        tilt (the frozen value ``sigma_w^2 (d-1)/d`` for eq. 36); App. F outlier law with
        ``threshold =`` :func:`outlier_threshold`."""
        tau = check_nonneg_float("tau", tau)
        threshold = check_nonneg_float("threshold", threshold)
        if self.perp == "exact":
            w_max, _ = self.grid(tau)
            if threshold >= w_max:
                return 0.0, math.nan
            return tuple(self._exact(tau, threshold)[3:])
        return self._tail_fraction(tau, threshold), (self.b - 1.0) / 2.0

    def _tail_fraction(self, tau: float, c: float) -> float:
        """Frozen tilt: composite Simpson on ``[0, c]`` and ``[c, w_max]`` (log-sum-exp)."""
        w_max, n = self.grid(tau)
        if c >= w_max:
            return 0.0
        n1 = 2 * int(math.ceil(n * c / w_max / 2.0)) + 2
        n2 = 2 * int(math.ceil(n * (w_max - c) / w_max / 2.0)) + 2
        la = _log_integral_simpson(0.0, c, n1, tau, self.prec, self.c2, self.b, self.degree)
        lb = _log_integral_simpson(c, w_max, n2, tau, self.prec, self.c2, self.b, self.degree)
        mx = max(la, lb)
        return math.exp(lb - mx) / (math.exp(la - mx) + math.exp(lb - mx))

    def log_overlap_density(self, w_par, tau: float) -> np.ndarray:
        """``log p_t(w_par)``: log density of the first-layer overlap ``w.w*`` under the tilt
        (normalised to unit mass on the real line; for ``perp="exact"`` the marginal over
        ``|w_perp|^2``)."""
        tau = check_nonneg_float("tau", tau)
        w = as_float_array("w_par", w_par)
        logz = self._moments(tau)[0]
        if self.perp == "exact":
            u_lo, hu, nu = self.u_grid(tau)
            flat = np.ascontiguousarray(np.abs(w).ravel(), dtype=float)
            lm = _exact_marginal_kernel(flat, tau, self.prec, self.c2, self.degree,
                                        self.sigma_w2 / self.d, self.d - 1.0, u_lo, hu, nu)
            return (lm - math.log(2.0) - logz).reshape(w.shape)
        g = self.c2 * w ** (2 * self.degree) / (self.b + 2 * w * w) ** self.degree
        return 0.5 * math.log(self.prec / (2 * math.pi)) - 0.5 * self.prec * w * w + tau * g - logz
