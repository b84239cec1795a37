"""Exact prior sampling of two-layer erf networks and importance sampling of the rare event
``A >= alpha`` (seed 002, eqs. 6, 25-34; App. B.3).

Network ``f(x) = sum_{i=1}^N a_i erf(w_i . x)`` with prior ``w_i ~ N(0, I/d)``,
``a_i ~ N(0, 1/(chi N))`` (``sigma_w^2 = sigma_a^2 = 1``) and target ``y = He_3(w*.x)/sqrt(6)``.
Its alignment on the Gaussian measure is ``A = <f, y> = sum_i a_i G(w_i)`` with the closed form
(Stein / Rodrigues, eq. 35)

    G(w) = <erf(w.x), He_3(w*.x)>/sqrt(6) = -(4/sqrt(pi)) w_par^3 (1 + 2|w|^2)^{-3/2} / sqrt(6),

which depends on ``w`` only through ``w_par = w.w*`` and ``r = |w_perp|^2``; under the prior these
are independent, ``w_par ~ N(0, 1/d)`` and ``d r ~ chi^2_{d-1}``.  Given the first layer the
readout integrates out exactly: ``A ~ N(0, V)``, ``V = (1/(chi N)) sum_i G_i^2``, so
``Pr[A >= alpha | w] = Phi_c(alpha/sqrt(V))``.

``Pr_prior[A >= alpha]`` is estimated by importance sampling with the per-neuron proposal
``q = (1 - eps) q_grid + eps p0`` (:class:`TiltedProposal`): ``q_grid`` is the tilted density
``p0 exp(tau G^2)`` (the LDT tilt of eq. 34) discretised as a piecewise-constant density on a
``(|w_par|, log r)`` grid.  Its density is known exactly, so the weights ``prod_i p0/q`` are exact
and the estimator is unbiased whatever the grid; the defensive prior part covers the whole
support.  Cross-checks without importance sampling: :func:`direct_mc_probability` (full weight
vectors and readouts) and :func:`direct_mc_log_z1` (the per-neuron CGF).

numpy only (no torch): randomness comes from ``seed``, a non-negative int or a
``numpy.random.Generator`` (advanced in place).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from scipy import special

from .._results import DeprecatedDictAccess
from ..checks import check_alloc, check_int

__all__ = [
    "TiltedProposal",
    "direct_mc_log_z1",
    "direct_mc_probability",
    "neuron_g2",
    "prior_log_density",
    "PriorRareEventEstimate",
    "prior_rare_event_is",
    "weighted_mean_se",
    "weighted_ratio_se",
]

_C2 = 8.0 / (3.0 * math.pi)  # c_3^2: G^2 = c_3^2 w_par^6 / (1 + 2|w|^2)^3 (sigma_w2 = 1)
_G_COEF = -4.0 / math.sqrt(math.pi) / math.sqrt(6.0)  # G = _G_COEF w_par^3 (1 + 2|w|^2)^(-3/2)


def _check_d(d) -> int:
    if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 2:
        raise ValueError(f"d must be an int >= 2, got {d!r}")
    return int(d)


def _check_tau(tau, name: str = "tau") -> float:
    if isinstance(tau, bool) or not isinstance(tau, numbers.Real):
        raise ValueError(f"{name} must be a finite number >= 0, got {tau!r}")
    tau = float(tau)
    if not (math.isfinite(tau) and tau >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {tau!r}")
    return tau


def _check_prob_eps(eps) -> float:
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not 0.0 < float(eps) < 1.0:
        raise ValueError(f"eps must be in (0, 1), got {eps!r}")
    return float(eps)


def _check_pos(name: str, v) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (
            math.isfinite(float(v)) and float(v) > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
    return float(v)


def _as_rng(seed) -> np.random.Generator:
    """``seed`` (non-negative int or numpy Generator) as a Generator; None is rejected."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be a non-negative int or a numpy.random.Generator, got "
                        f"{seed!r} ({type(seed).__name__})")
    if int(seed) < 0:
        raise ValueError(f"seed must be >= 0, got {int(seed)}")
    return np.random.default_rng(int(seed))


def _finite_array(name: str, x) -> np.ndarray:
    """``x`` as a float array with only finite entries (ValueError naming ``name`` otherwise)."""
    try:
        if np.iscomplexobj(x):
            raise TypeError
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number or an array of real numbers, got "
                        f"{type(x).__name__}") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (it contains NaN or inf)")
    return arr


def _broadcast(arrays: dict):
    try:
        np.broadcast_shapes(*(a.shape for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} {v.shape}" for k, v in arrays.items())
        raise ValueError(f"{' and '.join(arrays)} must broadcast against each other, got {shapes}") from None


def _neuron_g(w_par, r):
    w_par = _finite_array("w_par", w_par)
    r = _finite_array("r", r)
    _broadcast({"w_par": w_par, "r": r})
    if np.any(r < 0):
        raise ValueError("w_norm2 must be >= w_par**2: r = |w_perp|^2 must be >= 0, got a "
                         f"negative value (min {float(np.min(r))})")
    return _G_COEF * w_par**3 * (1.0 + 2.0 * (w_par * w_par + r)) ** -1.5


def neuron_g2(w_par, r):
    """``G^2 = <erf(w.x), He_3(w*.x)/sqrt(6)>^2`` for ``w.w* = w_par``, ``|w_perp|^2 = r`` (closed
    form of seed 002 eq. 35: ``G^2 = c_3^2 w_par^6 / (1 + 2 w_par^2 + 2 r)^3``,
    ``c_3^2 = 8/(3 pi)``).  Broadcasts ``w_par`` against ``r >= 0``."""
    G = _neuron_g(w_par, r)
    return G * G


class _Grid:
    """Cell grid of the importance-sampling proposal on ``(|w_par|, u = log x)``,
    ``x = d r / sigma_w^2 ~ chi^2_{d-1}`` (sigma_w^2 = 1), resolving the width ``1/sqrt(d)`` of
    the bulk and of the specialist peaks with ``ppw`` cells per width in both directions."""

    def __init__(self, d, tau, ppw):
        self.d = d
        k = d - 1
        width = 1.0 / math.sqrt(d)
        w_max = max(12.0 * width, math.sqrt(2.0 * (tau * _C2 / 8.0 + 50.0) / d))
        nw = max(64, int(math.ceil(w_max / width * ppw)))
        self.w = np.linspace(0.0, w_max, nw + 1)
        su = math.sqrt(2.0 / k)
        # x from k e^-14 (the tilt gains at most tau*g_max; the chi^2 density there is
        # < e^-(7k)) to far in the upper tail
        u_lo = math.log(k) - 14.0
        u_hi = math.log(k + 20.0 * math.sqrt(2.0 * k) + 100.0)
        nu = max(64, int(math.ceil((u_hi - u_lo) / su * ppw)))
        self.u = np.linspace(u_lo, u_hi, nu + 1)
        self.hw = self.w[1] - self.w[0]
        self.hu = self.u[1] - self.u[0]


def prior_log_density(w_abs, u, d: int):
    """log prior density of ``(|w_par|, u = log(d r))``: ``|w_par|`` folded N(0, 1/d) and ``d r``
    chi-square with ``d - 1`` degrees of freedom (density of its logarithm)."""
    d = _check_d(d)
    k = d - 1
    w_abs = _finite_array("w_abs", w_abs)
    u = _finite_array("u", u)
    if np.any(w_abs < 0):
        raise ValueError("w_abs must be >= 0 (it is |w_par|)")
    _broadcast({"w_abs": w_abs, "u": u})
    lw = math.log(2.0) + 0.5 * math.log(d / (2.0 * math.pi)) - 0.5 * d * w_abs * w_abs
    lu = 0.5 * k * u - 0.5 * np.exp(u) - 0.5 * k * math.log(2.0) - special.gammaln(0.5 * k)
    return lw + lu


class TiltedProposal:
    """Per-neuron importance-sampling proposal ``q = (1 - eps) q_grid + eps p0`` on
    ``(|w_par|, u = log(d r))``.

    ``q_grid`` is piecewise constant on the cells of a ``(|w_par|, log r)`` grid
    (``points_per_width`` cells per ``1/sqrt(d)`` and per ``sqrt(2/(d-1))``), with cell masses
    proportional to the tilted density ``p0 exp(tau G^2)`` (seed 002 eq. 34) at the cell centres;
    ``p0`` is the prior.  ``log_density`` is the exact density of what ``sample`` draws, so
    importance weights ``p0/q`` are exact.  Use ``tau`` of the LDT saddle point of the event.
    A cell grid above 16 GiB (very large ``d``) raises ValueError.
    """

    def __init__(self, tau, d: int, *, eps: float = 0.05, points_per_width: float = 4.0):
        self.d = _check_d(d)
        self.tau = _check_tau(tau)
        self.eps = _check_prob_eps(eps)
        points_per_width = _check_pos("points_per_width", points_per_width)
        gr = _Grid(self.d, self.tau, points_per_width)
        check_alloc(f"d={self.d} (with points_per_width={points_per_width})",
                    10 * (gr.w.size - 1) * (gr.u.size - 1), what="the proposal's cell grid")
        self.w_edges, self.u_edges = gr.w, gr.u
        wc = 0.5 * (gr.w[1:] + gr.w[:-1])
        uc = 0.5 * (gr.u[1:] + gr.u[:-1])
        Wc, Uc = np.meshgrid(wc, uc, indexing="ij")
        e = prior_log_density(Wc, Uc, self.d) + self.tau * neuron_g2(Wc, np.exp(Uc) / self.d)
        p = np.exp(e - e.max())
        self.cell_p = (p / p.sum()).ravel()
        self.cell_area = gr.hw * gr.hu
        self.shape = p.shape
        self._cdf = np.cumsum(self.cell_p)
        self._cdf[-1] = 1.0

    def sample(self, n: int, seed):
        """``n`` i.i.d. draws ``(|w_par|, u)`` from ``q`` (``seed``: int or numpy Generator);
        an ``n`` whose draws exceed 16 GiB raises ValueError."""
        n = check_int("n", n, minimum=0)
        check_alloc("n", 6 * n, what="the draws and their work arrays")
        rng = _as_rng(seed)
        from_prior = rng.random(n) < self.eps
        w = np.empty(n)
        u = np.empty(n)
        m = int(from_prior.sum())
        w[from_prior] = np.abs(rng.standard_normal(m)) / math.sqrt(self.d)
        u[from_prior] = np.log(rng.chisquare(self.d - 1, m))
        k = n - m
        cell = np.minimum(np.searchsorted(self._cdf, rng.random(k), side="right"),
                          self._cdf.size - 1)
        iw, iu = np.unravel_index(cell, self.shape)
        hw = self.w_edges[1] - self.w_edges[0]
        hu = self.u_edges[1] - self.u_edges[0]
        w[~from_prior] = self.w_edges[iw] + hw * rng.random(k)
        u[~from_prior] = self.u_edges[iu] + hu * rng.random(k)
        return w, u

    def log_density(self, w, u):
        """``log q(|w_par|, u)``."""
        w = np.asarray(w, dtype=float)
        u = np.asarray(u, dtype=float)
        hw = self.w_edges[1] - self.w_edges[0]
        hu = self.u_edges[1] - self.u_edges[0]
        iw = np.floor((w - self.w_edges[0]) / hw).astype(np.int64)
        iu = np.floor((u - self.u_edges[0]) / hu).astype(np.int64)
        inside = (iw >= 0) & (iw < self.shape[0]) & (iu >= 0) & (iu < self.shape[1])
        qg = np.zeros(w.shape)
        flat = np.ravel_multi_index((iw[inside], iu[inside]), self.shape)
        qg[inside] = self.cell_p[flat] / self.cell_area
        return np.log((1.0 - self.eps) * qg + self.eps * np.exp(prior_log_density(w, u, self.d)))


@dataclass(frozen=True)
class PriorRareEventEstimate(DeprecatedDictAccess):
    """Importance-sampling estimate of ``Pr_prior[A >= alpha]`` and the conditional first layer
    (:func:`prior_rare_event_is`); ``res["log_p"]`` etc. still work for one release, with a
    DeprecationWarning.

    log_p : float            log of the estimated probability.
    log_p_se : float         its standard error (delta method on the mean of i.i.d. network weights).
    ess : float              effective sample size of the conditional weights, ``1/sum weight^2``.
    w_abs : (n_net, N)       sampled ``|w_par|`` of every neuron of every network.
    r : (n_net, N)           sampled ``|w_perp|^2``.
    weight : (n_net,)        normalised conditional (self-normalised IS) weights, summing to 1.
    """

    log_p: float
    log_p_se: float
    ess: float
    w_abs: np.ndarray
    r: np.ndarray
    weight: np.ndarray


def prior_rare_event_is(alpha, d: int, N: int, *, chi: float, tau_prop: float, n_net: int,
                        seed, eps: float = 0.05, chunk: int = 20_000) -> PriorRareEventEstimate:
    """Importance-sampling estimate of ``Pr_prior[A >= alpha]`` for the two-layer erf network
    (sigma_w^2 = sigma_a^2 = 1, readout variance ``1/(chi N)``) with the readout integrated out,
    and of the conditional law of the first layer given the event (seed 002 eqs. 6, 25, 34).

    ``tau_prop`` is the tilt of the proposal (:class:`TiltedProposal`; best the LDT saddle point
    ``tau*``), ``n_net`` the number of sampled networks (in chunks of ``chunk``).

    Returns a :class:`PriorRareEventEstimate`: ``log_p`` and its standard error ``log_p_se``
    (delta method on the mean of i.i.d. network weights), ``ess`` (effective sample size of the
    conditional weights), ``w_abs``/``r`` (n_net, N) samples and ``weight`` (n_net,) normalised
    conditional weights (for :func:`weighted_mean_se` / :func:`weighted_ratio_se`). Sizes whose
    arrays would exceed 16 GiB (``MAX_ALLOC_BYTES``) raise ValueError.
    """
    d = _check_d(d)
    N = check_int("N", N, minimum=1)
    alpha = _check_pos("alpha", alpha)
    chi = _check_pos("chi", chi)
    n_net = check_int("n_net", n_net, minimum=2)
    chunk = check_int("chunk", chunk, minimum=1)
    check_alloc(f"n_net={n_net} with N={N}", 2 * n_net * N + 8 * min(chunk, n_net) * N,
                what="the returned (n_net, N) samples and a chunk's draws")
    _check_tau(tau_prop, "tau_prop")
    rng = _as_rng(seed)
    prop = TiltedProposal(tau_prop, d, eps=eps)
    ws, rs, lws = [], [], []
    done = 0
    while done < n_net:
        n = min(chunk, n_net - done)
        w, u = prop.sample(n * N, rng)
        lw = (prior_log_density(w, u, d) - prop.log_density(w, u)).reshape(n, N).sum(1)
        r = np.exp(u) / d
        V = neuron_g2(w, r).reshape(n, N).sum(1) / (chi * N)
        lws.append(lw + special.log_ndtr(-alpha / np.sqrt(V)))
        ws.append(w.reshape(n, N))
        rs.append(r.reshape(n, N))
        done += n
    lw = np.concatenate(lws)
    m = lw.max()
    x = np.exp(lw - m)
    mean = x.mean()
    se = x.std(ddof=1) / math.sqrt(x.size)
    weight = x / x.sum()
    return PriorRareEventEstimate(log_p=float(m + math.log(mean)), log_p_se=float(se / mean),
                                  ess=float(1.0 / np.sum(weight**2)), w_abs=np.concatenate(ws),
                                  r=np.concatenate(rs), weight=weight)


def _weights(x, weight, name="x"):
    x = _finite_array(name, x)
    weight = _finite_array("weight", weight)
    if x.shape != weight.shape or x.ndim != 1 or x.size == 0:
        raise ValueError(f"{name} and weight must be non-empty 1-D arrays of equal length, got "
                         f"{x.shape} and {weight.shape}")
    if np.any(weight < 0) or not math.isclose(float(weight.sum()), 1.0, rel_tol=1e-9):
        raise ValueError("weight must be non-negative and sum to 1 (self-normalised IS weights)")
    return x, weight


def weighted_mean_se(x, weight):
    """Self-normalised importance-sampling mean of ``x`` (one value per network) and its
    delta-method standard error ``sqrt(sum w^2 (x - mean)^2)`` (weights summing to 1, e.g. the
    ``weight`` of :func:`prior_rare_event_is`): an expectation under the conditioned prior."""
    x, weight = _weights(x, weight)
    mu = float(np.sum(weight * x))
    return mu, float(math.sqrt(np.sum(weight**2 * (x - mu) ** 2)))


def weighted_ratio_se(num, den, weight):
    """Self-normalised IS estimate of the ratio ``E[num]/E[den]`` under the conditioned law and
    its delta-method standard error ``sqrt(sum w^2 (num - R den)^2) / sum w den`` (e.g. the mean
    ``|w_perp|^2`` per outlier: ``num`` the sum over outliers of a network, ``den`` its count)."""
    num, weight = _weights(num, weight, "num")
    den, _ = _weights(den, weight, "den")
    s_den = float(np.sum(weight * den))
    if not s_den > 0:
        raise ValueError("the weighted mean of den must be > 0")
    R = float(np.sum(weight * num)) / s_den
    return R, float(math.sqrt(np.sum(weight**2 * (num - R * den) ** 2)) / s_den)


def direct_mc_probability(alpha, d: int, N: int, *, chi: float, n_net: int, seed,
                          chunk: int = 20_000):
    """Plain Monte Carlo of ``Pr_prior[A >= alpha]``: full weight vectors ``W (N, d)`` with
    ``w* = e_1`` and Gaussian readouts, ``A = sum_i a_i G(w_i)``.  Returns ``(p, se)`` (the
    binomial standard error, floored at the resolution ``1/n_net``). A chunk of weights above
    16 GiB (``min(chunk, n_net) N d`` floats) raises ValueError."""
    d = _check_d(d)
    N = check_int("N", N, minimum=1)
    alpha = _check_pos("alpha", alpha)
    chi = _check_pos("chi", chi)
    n_net = check_int("n_net", n_net, minimum=1)
    chunk = check_int("chunk", chunk, minimum=1)
    check_alloc(f"N={N} with d={d}", 3 * min(chunk, n_net) * N * d,
                what="the (min(chunk, n_net), N, d) weights of a chunk")
    rng = _as_rng(seed)
    hits = 0
    done = 0
    while done < n_net:
        n = min(chunk, n_net - done)
        W = rng.standard_normal((n, N, d)) / math.sqrt(d)
        a = rng.standard_normal((n, N)) / math.sqrt(chi * N)
        G = _neuron_g(W[..., 0], (W[..., 1:] ** 2).sum(-1))
        hits += int(np.sum((a * G).sum(-1) >= alpha))
        done += n
    p = hits / n_net
    return p, math.sqrt(max(p * (1 - p), 1.0 / n_net) / n_net)


def direct_mc_log_z1(taus, d: int, *, n: int, seed, chunk: int = 500_000):
    """Plain Monte Carlo of the per-neuron CGF ``log E_prior exp(tau G(w)^2)`` (seed 002 eq. 34)
    from full prior weight vectors ``w ~ N(0, I/d)`` (one sample set for all ``taus``).  Returns
    arrays ``(log Z_1, se)`` (delta method). Sizes whose arrays would exceed 16 GiB
    (``MAX_ALLOC_BYTES``) raise ValueError."""
    d = _check_d(d)
    taus = np.atleast_1d(_finite_array("taus", taus))
    if taus.ndim != 1 or taus.size == 0 or np.any(taus < 0):
        raise ValueError(f"taus must be a non-empty 1-D array of finite numbers >= 0, got {taus!r}")
    n = check_int("n", n, minimum=2)
    chunk = check_int("chunk", chunk, minimum=1)
    check_alloc(f"n={n} with d={d}", 3 * min(chunk, n) * d + 3 * n,
                what="a chunk's (min(chunk, n), d) weights and the n samples")
    rng = _as_rng(seed)
    g2 = []
    done = 0
    while done < n:
        m = min(chunk, n - done)
        w = rng.standard_normal((m, d)) / math.sqrt(d)
        g2.append(neuron_g2(w[:, 0], (w[:, 1:] ** 2).sum(1)))
        done += m
    g2 = np.concatenate(g2)
    out, se = [], []
    for tau in taus:
        e = tau * g2
        mx = e.max()
        x = np.exp(e - mx)
        mean = x.mean()
        out.append(mx + math.log(mean))
        se.append(x.std(ddof=1) / math.sqrt(n) / mean)
    return np.array(out), np.array(se)
