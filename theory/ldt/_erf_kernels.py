"""Numba kernels of the two-layer erf large-deviation problem (seed 002, App. B.3, eqs. 34-39).

Internal core module shared by :mod:`._erf_model` (the public :class:`ErfModel`, which owns the
grids and validates inputs) and nothing else: the kernels take arrays and scalars only, never
check their inputs and are compiled with ``cache=True``. The quadrature rules are described in
the docstring of :mod:`richlazy.theory.ldt._erf`.

Notation (spec note ``curse_of_detail.md`` 3.2): ``g(w) = c2 w^{2m} / (b + 2 w^2)^m`` is the
squared erf-Hermite overlap with ``|w_perp|^2`` frozen (eq. 36, ``b = 1 + 2 sigma_w^2 (d-1)/d``);
``prec = d / sigma_w^2`` the prior precision of ``w_par``; ``tau = t^2 sigma_a^2 / (2 chi N)``.
"""

from __future__ import annotations

import math

import numba
import numpy as np

LOG_CUTOFF = 50.0  # integrand below exp(-50) of its value at w = 0 is dropped
CELL_CUTOFF = 40.0  # exact 2-D kernel: cells below exp(-40) of the maximum are skipped


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

