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
arrays/scalars only (:mod:`._erf_kernels`); the problem object :class:`ErfModel`
(:mod:`._erf_model`) owns the grids and validates the problem; this module holds the solvers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import mpmath
import numpy as np
from scipy import optimize, special

from .._numerics import iterate
from .._results import SolverStatus, Status, grid_status, raise_if_failed
from ..checks import as_float_array, check_int, check_nonneg_float, check_pos_float, renamed_option
from ._erf_model import ErfModel, erf_hermite_coefficient_sq, outlier_threshold

__all__ = [
    "LDTResult",
    "ldt_log_mgf",
    "ldt_two_layer_erf",
    "tilted_overlap_density",
    "log_z1_reference",
]

_RESIDUAL_TOL = 1e-8  # relative residual of eq. (37) below which a saddle point is accepted


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
    :func:`richlazy.theory.chernoff_energy`.
    """
    pr = ErfModel(d, N, sigma_w2=sigma_w2, sigma_a2=sigma_a2, chi=chi, degree=degree,
                  points_per_width=points_per_width, perp=perp)
    t = as_float_array("t", t)
    lam = np.empty(t.shape)
    dlam = np.empty(t.shape)
    for i, ti in np.ndenumerate(t):
        logz, mean, _ = pr.moments(pr.tau(float(ti)))
        lam[i] = pr.N * logz
        dlam[i] = ti * pr.scale * mean
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
    statuses : per-alpha :class:`~richlazy.theory.Status` codes (int array of alpha's shape);
        ``status`` is the worst of them.
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
    statuses: np.ndarray | None = None


MAX_ROOT_ITER = 10**7  # bound on the root finders' maxiter (scipy's brentq takes a C int)
_MAX_DPS = 10**5  # bound on log_z1_reference's mpmath precision


def _check_root_maxiter(maxiter) -> int:
    """``maxiter`` of a Brent / Newton root finder: an int in [1, MAX_ROOT_ITER]."""
    maxiter = check_int("maxiter", maxiter, minimum=1)
    if maxiter > MAX_ROOT_ITER:
        raise ValueError(f"maxiter must be <= {MAX_ROOT_ITER} (the root finder's iteration budget; "
                         f"it converges in far fewer), got {maxiter}")
    return maxiter


def _solve_t(pr: ErfModel, alpha: float, rtol: float, maxiter: int):
    """Root of F(t) = (t sigma_a^2/chi) E_t[g] - alpha (monotone increasing in t) by Brent's
    method in ``log t`` (``rtol``: tolerance on ``log t``, i.e. relative on ``t``).  Returns
    ``(t, nit, converged)``; not converged means an iteration budget ran out (the 200 bracket
    doublings or ``maxiter``)."""
    g_inf = pr.g_inf
    scale = pr.scale

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
        xtol=rtol,
        rtol=4 * np.finfo(float).eps,
        maxiter=maxiter,
        full_output=True,
        disp=False,
    )
    return math.exp(root), nit + info.iterations, bool(info.converged)


def _solve_t_newton(pr: ErfModel, alpha: float, rtol: float, maxiter: int, t_guess: float):
    """Root of ``F(t) = (t sigma_a^2/chi) E_t[g] - alpha`` by a safeguarded Newton iteration in
    ``v = log t`` (used for ``perp="exact"``, where one evaluation costs ~1 ms): bracket by
    factors of 2 around ``t_guess`` (the eq. 36 root, typically 1.2x the exact one), then Newton
    steps with ``dF/dv = t (sigma_a^2/chi) (E_t[g] + t^2 sigma_a^2/(chi N) Var_t[g])``
    (``dE_t[g]/dtau = Var_t[g]``), falling back to bisection whenever a step leaves the bracket
    or does not halve ``|F|`` fast enough."""
    scale = pr.scale
    c = pr.scale / pr.N
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
    init = _NewtonBracket(x=x, fx=fx, dfx=dfx, lo=lo, hi=hi, dx=hi - lo, dx_old=hi - lo, nit=nit)
    out = iterate(init, lambda st, _it: _newton_bracket_step(fdf, st, rtol), maxiter=maxiter)
    return math.exp(out.state.x), out.state.nit, out.converged


@dataclass
class _NewtonBracket:
    """State of the safeguarded Newton iteration of :func:`_solve_t_newton` in v = log t: the
    iterate x with F(x), F'(x), the bracket [lo, hi] of the root, the last two step lengths
    (the bisection test compares with the one before the last) and the evaluations so far."""

    x: float
    fx: float
    dfx: float
    lo: float
    hi: float
    dx: float
    dx_old: float
    nit: int


def _newton_bracket_step(fdf, st, rtol):
    """One step of the safeguarded Newton iteration (state updated in place): bisection when
    F' <= 0, the Newton point leaves [lo, hi] or |F| does not halve fast enough, else Newton.
    Converged (SUCCESS) when the step is below ``rtol``, before evaluating there; else F and F'
    are evaluated at the new x, which replaces the bracket end of its sign."""
    x, fx, dfx, lo, hi = st.x, st.fx, st.dfx, st.lo, st.hi
    out_of_bracket = ((x - hi) * dfx - fx) * ((x - lo) * dfx - fx) > 0.0
    if dfx <= 0.0 or out_of_bracket or abs(2.0 * fx) > abs(st.dx_old * dfx):
        st.dx_old, st.dx = st.dx, 0.5 * (hi - lo)
        st.x = lo + st.dx
    else:
        st.dx_old, st.dx = st.dx, fx / dfx
        st.x = x - st.dx
    if abs(st.dx) < rtol:
        return st, Status.SUCCESS
    st.fx, st.dfx = fdf(st.x)
    st.nit += 1
    if st.fx < 0:
        st.lo = st.x
    else:
        st.hi = st.x
    return st, None


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
    rtol: float | None = None,
    maxiter: int = 200,
    throw: bool = False,
    xtol: float | None = None,
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
        Alignment thresholds (vectorised; ``statuses`` has one code per alpha).
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
        Treatment of the orthogonal part of w (see above); the problem is an :class:`ErfModel`.
    rtol : float, default 1e-12
        Relative tolerance on ``t*`` (absolute on ``log t*``).
    maxiter : int
        Iteration budget of the root finder per alpha (<= 10**7; it converges in far fewer).
    throw : bool
        Raise :class:`~richlazy.theory.SolverError` when some alpha did not converge.
    xtol : float, optional
        Deprecated spelling of ``rtol``.

    Status per alpha: MAX_ITERATIONS when the root finder ran out of iterations,
    NUMERICAL_FAILURE when it stopped but the relative residual of eq. (37) exceeds 1e-8
    (quadrature too coarse).
    """
    from ._bounds import k_factor_two_layer_erf

    rtol = renamed_option("rtol", rtol, "xtol", xtol, default=1e-12)
    a = as_float_array("alpha", alpha)
    if np.any(a <= 0):
        raise ValueError("alpha must be > 0 (alignment threshold above the prior mean 0)")
    pr = ErfModel(d, N, sigma_w2=sigma_w2, sigma_a2=sigma_a2, chi=chi, degree=degree,
                  points_per_width=points_per_width, perp=perp)
    kappa = check_pos_float("kappa", kappa)
    if k is None:
        k = k_factor_two_layer_erf(pr.sigma_w2, pr.sigma_a2, chi=pr.chi)
    k = check_pos_float("k", k)
    rtol = check_pos_float("rtol", rtol)
    maxiter = _check_root_maxiter(maxiter)
    thr = outlier_threshold(pr.d, sigma_w2=pr.sigma_w2, n_sigma=n_sigma)
    prior_tail = float(special.erfc(n_sigma / math.sqrt(2.0)))
    outs, statuses, nit = _saddle_points(pr, a, rtol, maxiter, thr)
    residual = float(np.max(outs["res"])) if a.size else 0.0
    converged, status = grid_status(statuses)
    msg = "converged" if converged else _ldt_failure_message(statuses, status, residual)
    res = _ldt_result(pr, a, outs, statuses.reshape(a.shape), kappa, float(k), prior_tail,
                      converged=converged, status=status, message=msg, nit=nit,
                      residual=residual)
    raise_if_failed(res, throw)
    return res


def _saddle_point(pr: ErfModel, guide, alpha: float, rtol: float, maxiter: int):
    """Root ``t*`` of eq. (37) at one alpha: Brent's method for ``perp="frozen"``; for
    ``perp="exact"`` the safeguarded Newton iteration started from the root of the frozen
    ``guide`` model. Returns ``(t*, iterations, converged)``."""
    if guide is None:
        return _solve_t(pr, alpha, rtol, maxiter)
    t_guess, it0, _ = _solve_t(guide, alpha, 1e-6, maxiter)
    t, it, conv = _solve_t_newton(pr, alpha, rtol, maxiter, t_guess)
    it += it0
    return t, it, conv


def _saddle_points(pr: ErfModel, a, rtol: float, maxiter: int, thr: float):
    """The saddle point of eq. (37) and the fields at it for every alpha in ``a`` (flattened):
    a dict of arrays ("t", "tau", "E", "lam", "frac", "rperp", "g", "res": relative residual
    of eq. 37), the per-alpha statuses (MAX_ITERATIONS when the root finder ran out of
    iterations, NUMERICAL_FAILURE when the residual exceeds ``_RESIDUAL_TOL``) and the total
    iterations."""
    outs = {
        key: np.empty(a.size) for key in ("t", "tau", "E", "lam", "frac", "rperp", "g", "res")
    }
    statuses = np.zeros(a.size, dtype=int)
    nit = 0
    guide = replace(pr, perp="frozen") if pr.perp == "exact" else None
    for j, al in enumerate(a.ravel()):
        al = float(al)
        t, it, conv = _saddle_point(pr, guide, al, rtol, maxiter)
        nit += it
        tau = pr.tau(t)
        logz, mean, _ = pr.moments(tau)
        lam = pr.N * logz
        outs["t"][j] = t
        outs["tau"][j] = tau
        outs["lam"][j] = lam
        outs["E"][j] = t * al - lam
        outs["g"][j] = mean
        outs["frac"][j], outs["rperp"][j] = pr.tail(tau, thr)
        outs["res"][j] = abs(t * pr.scale * mean - al) / al
        if not conv:
            statuses[j] = Status.MAX_ITERATIONS
        elif not outs["res"][j] < _RESIDUAL_TOL:
            statuses[j] = Status.NUMERICAL_FAILURE
    return outs, statuses, nit


def _ldt_failure_message(statuses, status, residual: float) -> str:
    """The message of an :class:`LDTResult` with some alpha not solved to tolerance."""
    bad = int(np.count_nonzero(statuses))
    return (
        f"saddle-point equation (37) not solved to tolerance at {bad} of {statuses.size} alpha "
        f"(relative residual {residual:.2e}); "
        + ("increase maxiter" if status is Status.MAX_ITERATIONS
           else "increase points_per_width")
    )


def _ldt_result(pr: ErfModel, a, outs, statuses, kappa: float, k: float, prior_tail: float,
                **status) -> LDTResult:
    """The :class:`LDTResult` of the per-alpha fields ``outs`` (flat, reshaped to alpha's shape),
    with ``P_* = (2 kappa/k) E`` and the outlier counts; ``status``: the solver-status fields."""
    shape = a.shape
    E = outs["E"].reshape(shape)
    return LDTResult(
        **status,
        alpha=a,
        t_star=outs["t"].reshape(shape),
        tau_star=outs["tau"].reshape(shape),
        energy=E,
        log_mgf=outs["lam"].reshape(shape),
        P_star=2.0 * kappa / k * E,
        k=k,
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
        statuses=statuses,
    )


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
    ``x ~ chi^2_{d-1}`` (derived here; see :func:`ldt_log_mgf`).  Equals
    ``exp(ErfModel(...).log_overlap_density(w_par, tau))``.
    """
    pr = ErfModel(d, N, sigma_w2=sigma_w2, sigma_a2=sigma_a2, chi=chi, degree=degree,
                  points_per_width=points_per_width, perp=perp)
    t = check_nonneg_float("t", float(as_float_array("t", t, ndim=0)))
    return np.exp(pr.log_overlap_density(w_par, pr.tau(t)))


def log_z1_reference(
    tau: float, d: int, *, sigma_w2: float = 1.0, degree: int = 3, dps: int = 30
) -> tuple[float, float]:
    """mpmath reference for ``(log Z_1(tau), E_{p_t}[g])`` (eq. 39) by adaptive high-precision
    quadrature, with break points at the Gaussian bulk and at the maximum of the exponent.
    Slow; for tests and benchmarks. ``dps`` (mpmath's decimal digits) is at most 10**5."""
    d = check_int("d", d, minimum=2)
    sigma_w2 = check_pos_float("sigma_w2", sigma_w2)
    tau = check_nonneg_float("tau", tau)
    degree = check_int("degree", degree, minimum=1)
    dps = check_int("dps", dps, minimum=1)
    if dps > _MAX_DPS:
        raise ValueError(f"dps must be <= {_MAX_DPS} (mpmath's working precision in decimal digits; "
                         f"the quadrature's cost grows faster than dps^2), got {dps}")
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
