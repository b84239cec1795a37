"""Prior large deviations of the alignment of a two-layer erf network (seed 002, eqs. 6, 25-34).

Paper: Rubin, Davidovich, Ringel, *Mitigating the Curse of Detail* (seed 002), App. B.3.
The LDT of the paper is a statement about the network **prior**: the alignment
``A = <f, y>/<y, y>`` with ``y = He_3(w*.x)/sqrt(6)`` satisfies ``Pr_prior[A >= alpha] ~
exp(-E(alpha))`` with ``E`` the Legendre transform of the cumulant generating function (CGF)
``Lambda(t) = log E_prior e^{tA}``, and, conditioned on that rare event, the first-layer weights
follow the exponentially tilted law ``p_t(w) ∝ p0(w) exp(tau G(w)^2)``,
``tau = t^2 sigma_a^2/(2 chi N)`` (eqs. 31-34, spec 3.1-3.2).  These cases test both statements
by sampling the prior exactly, without Langevin dynamics.

Exact per-neuron CGF.  ``G(w) = <erf(w.x), y>`` depends on ``w`` only through ``w_par = w.w*``
and ``r = |w_perp|^2`` (rotation invariance), with ``w_par ~ N(0, sigma_w^2/d)`` and
``r ~ (sigma_w^2/d) chi^2_{d-1}`` independent under the prior, so

    Lambda(t) = N log Z_1(tau),   Z_1(tau) = E_{w_par, r} exp(tau G(w_par, r)^2)          (34)

is a two-dimensional integral: ``perp="exact"`` of :func:`richlazy.theory.ldt._erf.ldt_log_mgf`,
:func:`~richlazy.theory.ldt._erf.ldt_two_layer_erf` and
:func:`~richlazy.theory.ldt._erf.tilted_overlap_density`.  The paper's eq. (36) instead freezes the
orthogonal part at ``r = sigma_w^2 (d-1)/d`` ("weakly fluctuating"; ``perp="frozen"``, the
default).  Case ``ldt/prior-rate`` compares the simulation with the exact form; case
``ldt/prior-rate-eq36`` (full suite only: an open disagreement) compares the same simulation with
eq. (36).

Simulation.  Networks are drawn from the prior with explicit ``numpy`` generators; the readout is
integrated out exactly (given the first layer, ``A ~ N(0, V)``, ``V = sigma_a^2/(chi N) sum_i
G_i^2``, so ``Pr[A >= alpha | w] = Phi_c(alpha/sqrt(V))``).  ``Pr_prior[A >= alpha]`` is estimated by
importance sampling with a per-neuron proposal ``q = (1 - eps) q_grid + eps p0``: ``q_grid`` is the
exact tilted density at the saddle point, discretised as a piecewise-constant density on a
``(|w_par|, log r)`` grid (its density is known exactly, so the weights ``prod_i p0/q`` are exact
and the estimator is unbiased whatever the grid), and the defensive prior part covers the whole
support.  Cross-checks without importance sampling: direct Monte Carlo of full weight vectors and
readouts where the probability is not tiny, and direct Monte Carlo of the per-neuron CGF.
"""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from richlazy.theory.ldt._erf import (  # noqa: E402
    erf_hermite_overlap,
    ldt_log_mgf,
    ldt_two_layer_erf,
    outlier_threshold,
    tilted_overlap_density,
)
from scipy import special  # noqa: E402

from ...core._compare import compare  # noqa: E402
from ...core._registry import CaseContext, CaseOutcome, register_case  # noqa: E402

__all__ = [
    "prior_log_density",
    "weighted_mean_se",
    "TiltedProposal",
    "neuron_g2",
    "prior_rare_event_is",
    "direct_mc_probability",
    "direct_mc_log_z1",
]

_C2 = 8.0 / (3.0 * math.pi)  # c_3^2: G^2 = c_3^2 w_par^6 / (1 + 2|w|^2)^3 (sigma_w2 = 1)


def _check_d(d):
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 2:
        raise ValueError(f"d must be an int >= 2, got {d!r}")
    return int(d)


def _check_tau(tau):
    tau = float(tau)
    if not (math.isfinite(tau) and tau >= 0):
        raise ValueError(f"tau must be a finite number >= 0, got {tau!r}")
    return tau


def neuron_g2(w_par, r):
    """``G^2 = <erf(w.x), He_3(w*.x)/sqrt(6)>^2`` for ``w.w* = w_par``, ``|w_perp|^2 = r`` (closed
    form of seed 002 eq. 35, :func:`erf_hermite_overlap`)."""
    w_par = np.asarray(w_par, dtype=float)
    G = erf_hermite_overlap(3, w_par, w_par * w_par + np.asarray(r, dtype=float)) / math.sqrt(6.0)
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


def prior_log_density(w_abs, u, d):
    """log prior density of ``(|w_par|, u = log(d r))``: ``|w_par|`` folded N(0, 1/d) and ``d r``
    chi-square with ``d - 1`` degrees of freedom (density of its logarithm)."""
    k = d - 1
    w_abs = np.asarray(w_abs, dtype=float)
    u = np.asarray(u, dtype=float)
    lw = math.log(2.0) + 0.5 * math.log(d / (2.0 * math.pi)) - 0.5 * d * w_abs * w_abs
    lu = 0.5 * k * u - 0.5 * np.exp(u) - 0.5 * k * math.log(2.0) - special.gammaln(0.5 * k)
    return lw + lu


class TiltedProposal:
    """Per-neuron importance-sampling proposal ``q = (1 - eps) q_grid + eps p0`` on
    ``(|w_par|, u = log(d r))``.

    ``q_grid`` is piecewise constant on the cells of a ``(|w_par|, log r)`` grid, with cell masses
    proportional to the tilted density ``p0 exp(tau G^2)`` at the cell centres; ``p0`` is the
    prior.  ``log_density`` is the exact density of what ``sample`` draws, so importance weights
    ``p0/q`` are exact.
    """

    def __init__(self, tau, d: int, *, eps: float = 0.05, points_per_width: float = 4.0):
        self.d = _check_d(d)
        self.tau = _check_tau(tau)
        if not (0.0 < float(eps) < 1.0):
            raise ValueError(f"eps must be in (0, 1), got {eps!r}")
        self.eps = float(eps)
        gr = _Grid(self.d, self.tau, points_per_width)
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

    def sample(self, n: int, rng: np.random.Generator):
        """``n`` i.i.d. draws ``(|w_par|, u)`` from ``q``."""
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


def prior_rare_event_is(alpha, d: int, N: int, *, chi: float, tau_prop: float, n_net: int,
                        rng: np.random.Generator, eps: float = 0.05, chunk: int = 20_000):
    """Importance-sampling estimate of ``Pr_prior[A >= alpha]`` for the two-layer erf network
    (sigma_w^2 = sigma_a^2 = 1) with the readout integrated out, and of the conditional law of
    the first layer given the event.

    Returns a dict: ``log_p`` and its standard error ``log_p_se`` (delta method on the mean of
    i.i.d. network weights), ``ess`` (effective sample size of the conditional weights),
    ``w_abs``/``r`` (n_net, N) samples and ``weight`` (n_net,) normalised conditional weights.
    """
    d = _check_d(d)
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
    return dict(log_p=float(m + math.log(mean)), log_p_se=float(se / mean),
                ess=float(1.0 / np.sum(weight**2)), w_abs=np.concatenate(ws),
                r=np.concatenate(rs), weight=weight)


def weighted_mean_se(x, weight):
    """Self-normalised importance-sampling mean of ``x`` (one value per network) and its
    delta-method standard error ``sqrt(sum w^2 (x - mean)^2)`` (weights summing to 1)."""
    x = np.asarray(x, dtype=float)
    weight = np.asarray(weight, dtype=float)
    mu = float(np.sum(weight * x))
    return mu, float(math.sqrt(np.sum(weight**2 * (x - mu) ** 2)))


def direct_mc_probability(alpha, d: int, N: int, *, chi: float, n_net: int,
                          rng: np.random.Generator, chunk: int = 20_000):
    """Plain Monte Carlo of ``Pr_prior[A >= alpha]``: full weight vectors ``W (N, d)`` with
    ``w* = e_1`` and Gaussian readouts, ``A = sum_i a_i G(w_i)``.  Returns ``(p, se)``."""
    d = _check_d(d)
    hits = 0
    done = 0
    while done < n_net:
        n = min(chunk, n_net - done)
        W = rng.standard_normal((n, N, d)) / math.sqrt(d)
        a = rng.standard_normal((n, N)) / math.sqrt(chi * N)
        G = erf_hermite_overlap(3, W[..., 0], (W * W).sum(-1)) / math.sqrt(6.0)
        hits += int(np.sum((a * G).sum(-1) >= alpha))
        done += n
    p = hits / n_net
    return p, math.sqrt(max(p * (1 - p), 1.0 / n_net) / n_net)


def direct_mc_log_z1(taus, d: int, *, n: int, rng: np.random.Generator, chunk: int = 500_000):
    """Plain Monte Carlo of the per-neuron CGF ``log E_prior exp(tau G(w)^2)`` from full prior
    weight vectors ``w ~ N(0, I/d)`` (one sample set for all ``taus``).  Returns arrays
    ``(log Z_1, se)`` (delta method)."""
    d = _check_d(d)
    taus = np.atleast_1d(np.asarray(taus, dtype=float))
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


# ============================================================================================
# cases
# ============================================================================================
SIZES = {
    "quick": dict(ds=(8, 12, 16, 24, 32, 48), alpha=0.3, n_net=40_000, mc_d=8, mc_alpha=0.1,
                  mc_n=400_000, cgf_d=8, cgf_n=4_000_000),
    "full": dict(ds=(8, 12, 16, 24, 32, 48, 64, 96), alpha=0.3, n_net=400_000, mc_d=8,
                 mc_alpha=0.1, mc_n=4_000_000, cgf_d=8, cgf_n=40_000_000),
}
_SCALINGS = (("standard", lambda N: 1.0), ("mean-field", lambda N: float(N)))
_RUNS: dict = {}


def _simulate(ctx: CaseContext) -> dict:
    """All simulations and predictions shared by the two cases (cached per size and seed)."""
    key = (ctx.size, ctx.seed)
    if key in _RUNS:
        return _RUNS[key]
    cfg = SIZES[ctx.size]
    alpha = cfg["alpha"]
    rng = np.random.default_rng([ctx.seed, 2002])
    out = {"cfg": cfg}
    for label, chi_of in _SCALINGS:
        rows = []
        for d in cfg["ds"]:
            N = d
            chi = chi_of(N)
            ex = ldt_two_layer_erf(alpha, d, N, chi=chi, perp="exact", throw=True)
            t_ex = float(ex.t_star)
            tau_ex = float(ex.tau_star)
            fr = ldt_two_layer_erf(alpha, d, N, chi=chi, throw=True)
            sim = prior_rare_event_is(alpha, d, N, chi=chi, tau_prop=tau_ex,
                                      n_net=cfg["n_net"], rng=rng)
            thr = outlier_threshold(d)
            is_out = sim["w_abs"] > thr
            n_out = is_out.sum(1).astype(float)
            r_sum = np.where(is_out, sim["r"], 0.0).sum(1)
            wgt = sim["weight"]
            n_mean, n_se = weighted_mean_se(n_out, wgt)
            R = float(np.sum(wgt * r_sum) / np.sum(wgt * n_out))
            R_se = float(math.sqrt(np.sum(wgt**2 * (r_sum - R * n_out) ** 2))
                         / np.sum(wgt * n_out))
            wg = np.linspace(0.0, 2.5, 501)
            dens = 2.0 * tilted_overlap_density(wg, t_ex, d, N, chi=chi, perp="exact")
            rows.append(dict(
                d=d, N=N, chi=chi, E_exact=float(ex.energy), t_exact=t_ex, tau_exact=tau_ex,
                E_eq36=float(fr.energy), t_eq36=float(fr.t_star),
                n_out_eq36=float(fr.n_outliers), log_p=sim["log_p"], log_p_se=sim["log_p_se"],
                ess=sim["ess"], n_out=n_mean, n_out_se=n_se, r_out=R, r_out_se=R_se,
                n_out_exact=float(ex.n_outliers), r_out_exact=float(ex.outlier_perp_norm2),
                w_grid=wg, w_dens=dens,
                hist=(sim["w_abs"], sim["r"], wgt)))
        out[label] = rows
    # estimator cross-check: plain Monte Carlo of full networks where Pr is not tiny
    d, a_mc = cfg["mc_d"], cfg["mc_alpha"]
    tau = float(ldt_two_layer_erf(a_mc, d, d, perp="exact", throw=True).tau_star)
    sim = prior_rare_event_is(a_mc, d, d, chi=1.0, tau_prop=tau, n_net=cfg["n_net"], rng=rng)
    p, se = direct_mc_probability(a_mc, d, d, chi=1.0, n_net=cfg["mc_n"], rng=rng)
    out["mc"] = dict(d=d, alpha=a_mc, log_p_is=sim["log_p"], log_p_is_se=sim["log_p_se"],
                     log_p_mc=math.log(p) if p > 0 else -math.inf,
                     log_p_mc_se=se / p if p > 0 else math.inf)
    # per-neuron CGF by plain Monte Carlo of full prior weight vectors, at both saddle points
    d = cfg["cgf_d"]
    ex = ldt_two_layer_erf(alpha, d, d, perp="exact", throw=True)
    fr = ldt_two_layer_erf(alpha, d, d, throw=True)
    t_pts = np.array([float(ex.t_star), float(fr.t_star)])
    taus = t_pts**2 / (2.0 * d)
    lz, lz_se = direct_mc_log_z1(taus, d, n=cfg["cgf_n"], rng=rng)
    out["cgf"] = dict(d=d, t=t_pts, tau=taus, mc=lz, mc_se=lz_se,
                      exact=ldt_log_mgf(t_pts, d, d, perp="exact")[0] / d,
                      eq36=ldt_log_mgf(t_pts, d, d)[0] / d)
    _RUNS[key] = out
    return out


def _slope(ds, y, se=None):
    """Weighted least-squares slope of y vs d and its standard error (se=None: unweighted, no
    error).  Theory and simulation are fitted with the same weights (those of the simulation),
    so that a curvature of E(d) (mean-field: E ∝ d^{3/2}) enters both fits identically."""
    X = np.vstack([np.ones(len(ds)), np.asarray(ds, float)]).T
    y = np.asarray(y, float)
    if se is None:
        coef = np.linalg.lstsq(X, y, rcond=None)[0]
        return float(coef[1]), None
    Wt = 1.0 / np.asarray(se, float) ** 2
    A = X.T @ (Wt[:, None] * X)
    cov = np.linalg.inv(A)
    coef = cov @ (X.T @ (Wt * y))
    return float(coef[1]), float(math.sqrt(cov[1, 1]))


_SLOPE_NOTE = ("a priori: -log Pr = E(alpha) + sub-exponential prefactor c log d (c = O(1)), which "
               "shifts the d-slope by a few %; the Chernoff energy is the convex hull over the "
               "specialist number M, and an integer M instead of the continuous optimum "
               "M* ~ 1.5-5 can raise the true rate by up to ~5-8 %; tolerance 10 % (rel)")
_COUNT_NOTE = ("conditioned limit (Gibbs conditioning) with O(1) specialists: the conditioned "
               "law selects an integer specialist count near the tilt's continuous mean, so "
               "|difference| <= 0.5 + 3 standard errors (fixed a priori)")
_R_NOTE = ("orthogonal norm |w_perp|^2 of the outliers: the effective tilt on a specialist "
           "shifts with the integer specialist count; 0.15 + 3 standard errors fixed a priori")


def _figures(ctx, sims, theory_key, tag):
    cfg = sims["cfg"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, (label, _) in zip(axes, _SCALINGS, strict=True):
        rows = sims[label]
        ds = [r["d"] for r in rows]
        ax.errorbar(ds, [-r["log_p"] for r in rows], yerr=[r["log_p_se"] for r in rows], fmt="o",
                    label="-log Pr_prior[A >= alpha] (importance sampling)")
        ax.plot(ds, [r["E_exact"] for r in rows], "s-", label="E(alpha), exact CGF (perp='exact')")
        ax.plot(ds, [r["E_eq36"] for r in rows], "^--", label="E(alpha), eq. (36) (perp='frozen')")
        ax.set_xlabel("d (N = d)")
        ax.set_ylabel("rate")
        ax.set_title(f"{label}, alpha = {cfg['alpha']}")
        ax.legend(fontsize=7)
    fig.tight_layout()
    f1 = f"ldt_prior_rate_{tag}.png"
    fig.savefig(ctx.out_dir / f1, dpi=120)
    plt.close(fig)
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    for col, (label, _) in enumerate(_SCALINGS):
        row = sims[label][-1]
        d, N = row["d"], row["N"]
        w_abs, r, wgt = row["hist"]
        wn = np.repeat(wgt, N) / N
        ax = axes[0, col]
        bins = np.linspace(0.0, 2.5, 101)
        h, _ = np.histogram(w_abs.ravel(), bins=bins, weights=wn)
        ax.stairs(h / np.diff(bins), bins, label="prior | A >= alpha (IS)")
        ax.plot(row["w_grid"], row["w_dens"], "r-", label="exact tilt p0 exp(tau* G^2)")
        wq = np.linspace(0.0, 2.5, 501)
        ax.plot(wq, 2 * tilted_overlap_density(wq, row["t_eq36"], d, N, chi=row["chi"]), "g--",
                label="eq. (36) tilt (tilted_overlap_density)")
        ax.set_yscale("log")
        ax.set_ylim(1e-4, None)
        ax.set_xlabel("|w . w*|")
        ax.set_title(f"{label}, d = N = {d}")
        ax.legend(fontsize=7)
        ax = axes[1, col]
        sel = w_abs > outlier_threshold(d)
        rb = np.linspace(0.0, 2.0, 61)
        wr = np.broadcast_to(wgt[:, None], w_abs.shape)[sel]
        h, _ = np.histogram(r[sel], bins=rb, weights=wr)
        ax.stairs(h / max(h.sum(), 1e-300) / np.diff(rb), rb, label="outliers | A >= alpha")
        ax.axvline(row["r_out_exact"], color="r", label="exact tilt: mean |w_perp|^2")
        ax.axvline((d - 1) / d, color="g", ls="--", label="eq. (36): frozen (d-1)/d")
        ax.set_xlabel("|w_perp|^2 of outliers")
        ax.legend(fontsize=7)
    fig.tight_layout()
    f2 = f"ldt_prior_conditional_{tag}.png"
    fig.savefig(ctx.out_dir / f2, dpi=120)
    plt.close(fig)
    return [f1, f2]


def _params(sims, which):
    out = {"alpha": sims["cfg"]["alpha"], "n_net": sims["cfg"]["n_net"]}
    for label, _ in _SCALINGS:
        out[label] = [{k: v for k, v in r.items() if k in (
            "d", "N", "chi", which, "log_p", "log_p_se", "ess", "n_out", "n_out_se", "r_out",
            "r_out_se", "n_out_exact", "r_out_exact", "n_out_eq36")} for r in sims[label]]
    return out


@register_case(
    "ldt/prior-rate",
    description=(
        "Prior large deviations of the alignment of a two-layer erf network with He_3 target "
        "(seed 002 eqs. 6, 25, 31, 34): -log Pr_prior[A >= alpha] by exact prior sampling + "
        "importance sampling vs the Chernoff energy of the exact per-neuron CGF "
        "(ldt_two_layer_erf with perp='exact'), over d with N = d in standard and mean-field "
        "scaling; "
        "conditional outlier count and orthogonal norm given A >= alpha vs the exact tilted law; "
        "per-neuron CGF and the estimator checked by plain Monte Carlo."
    ),
    suites=("quick", "full"),
)
def prior_rate(ctx: CaseContext) -> CaseOutcome:
    sims = _simulate(ctx)
    qs = []
    for label, _ in _SCALINGS:
        rows = sims[label]
        for r in rows:
            excess = max(0.0, r["E_exact"] - (-r["log_p"]))
            qs.append(compare(
                f"{label} d=N={r['d']}: E_exact - (-log Pr) must be <= 0 (Chernoff bound)",
                0.0, excess, stderr=r["log_p_se"], kind="abs",
                tol=3.0 * r["log_p_se"] + 1e-9,
                note="rigorous Chernoff bound with the exact CGF; 3 standard errors of the IS "
                     f"estimate (ESS {r['ess']:.0f}); measured gap -log Pr - E = "
                     f"{-r['log_p'] - r['E_exact']:.3f} (the prefactor)"))
        ds = [r["d"] for r in rows]
        s_sim, s_se = _slope(ds, [-r["log_p"] for r in rows], [r["log_p_se"] for r in rows])
        s_th, _ = _slope(ds, [r["E_exact"] for r in rows], [r["log_p_se"] for r in rows])
        qs.append(compare(f"{label}: d-slope of -log Pr_prior[A >= alpha] (N = d)", s_th, s_sim,
                          stderr=s_se, kind="rel", tol=0.10, note=_SLOPE_NOTE))
        r = rows[-1]
        qs.append(compare(f"{label} d=N={r['d']}: outliers per network | A >= alpha",
                          r["n_out_exact"], r["n_out"], stderr=r["n_out_se"], kind="abs",
                          tol=0.5 + 3.0 * r["n_out_se"], note=_COUNT_NOTE))
        qs.append(compare(f"{label} d=N={r['d']}: mean |w_perp|^2 of outliers | A >= alpha",
                          r["r_out_exact"], r["r_out"], stderr=r["r_out_se"], kind="abs",
                          tol=0.15 + 3.0 * r["r_out_se"], note=_R_NOTE))
    c = sims["cgf"]
    for j, which in enumerate(("exact saddle", "eq.(36) saddle")):
        qs.append(compare(f"per-neuron CGF log Z_1(tau={c['tau'][j]:.1f}) at d={c['d']} "
                          f"({which}): plain MC vs exact 2-D quadrature",
                          c["exact"][j], c["mc"][j], stderr=c["mc_se"][j], kind="z", tol=4.0,
                          note="no approximation on either side; 4 standard errors"))
    m = sims["mc"]
    se = math.hypot(m["log_p_is_se"], m["log_p_mc_se"])
    qs.append(compare(f"estimator check d=N={m['d']}, alpha={m['alpha']}: log Pr, plain MC "
                      "(theory column) vs importance sampling", m["log_p_mc"], m["log_p_is"],
                      stderr=se, kind="z", tol=4.0,
                      note="two unbiased estimators of the same probability; combined standard "
                           "error, 4 sigma"))
    figs = _figures(ctx, sims, "E_exact", "exact")
    return CaseOutcome(qs, figs, params=_params(sims, "E_exact"),
                       notes="exact CGF = eq. (34) with the joint law of (w.w*, |w_perp|^2) "
                             "(theory._ldt_erf, perp='exact'); the eq. (36) comparison is case "
                             "ldt/prior-rate-eq36 (full suite)")


@register_case(
    "ldt/prior-rate-eq36",
    description=(
        "Same prior simulation as ldt/prior-rate, compared with the paper's eq. (36) machinery "
        "(orthogonal part of w frozen; ldt_two_layer_erf, ldt_log_mgf, tilted_overlap_density "
        "with perp='frozen'): d-slope of -log Pr_prior[A >= alpha] vs the slope of E(alpha), "
        "conditional outlier count and orthogonal norm, per-neuron CGF at the eq. (36) saddle "
        "point."
        " Full suite only: eq. (36) overestimates the prior rate by ~20 % (open disagreement, "
        "kept visible in the full suite and docs/ldt.md)."
    ),
    suites=("full",),
)
def prior_rate_eq36(ctx: CaseContext) -> CaseOutcome:
    sims = _simulate(ctx)
    qs = []
    for label, _ in _SCALINGS:
        rows = sims[label]
        ds = [r["d"] for r in rows]
        s_sim, s_se = _slope(ds, [-r["log_p"] for r in rows], [r["log_p_se"] for r in rows])
        s_th, _ = _slope(ds, [r["E_eq36"] for r in rows], [r["log_p_se"] for r in rows])
        qs.append(compare(f"{label}: d-slope of -log Pr_prior[A >= alpha] vs eq. (36) E(alpha)",
                          s_th, s_sim, stderr=s_se, kind="rel", tol=0.10, note=_SLOPE_NOTE))
        r = rows[-1]
        qs.append(compare(f"{label} d=N={r['d']}: outliers per network | A >= alpha vs eq. (36)",
                          r["n_out_eq36"], r["n_out"], stderr=r["n_out_se"], kind="abs",
                          tol=0.5 + 3.0 * r["n_out_se"], note=_COUNT_NOTE))
        qs.append(compare(f"{label} d=N={r['d']}: mean |w_perp|^2 of outliers vs eq. (36) "
                          "frozen value (d-1)/d", (r["d"] - 1) / r["d"], r["r_out"],
                          stderr=r["r_out_se"], kind="abs", tol=0.15 + 3.0 * r["r_out_se"],
                          note=_R_NOTE))
    c = sims["cgf"]
    qs.append(compare(f"per-neuron CGF log Z_1 at the eq. (36) saddle (tau={c['tau'][1]:.1f}, "
                      f"d={c['d']}): plain MC vs ldt_log_mgf/N", c["eq36"][1], c["mc"][1],
                      stderr=c["mc_se"][1], kind="rel", tol=0.25,
                      note="eq. (36) neglects the O(sqrt(2/d)) ~ 0.5 relative fluctuations of "
                           "|w_perp|^2; a second-order effect ~ 0.25 allowed a priori"))
    figs = _figures(ctx, sims, "E_eq36", "eq36")
    return CaseOutcome(qs, figs, params=_params(sims, "E_eq36"),
                       notes="the simulation is shared with ldt/prior-rate")
