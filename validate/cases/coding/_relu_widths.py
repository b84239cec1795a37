"""Validation case: the correlated-class ReLU code of ``coding/relu-correlated`` sampled at three
widths and extrapolated to N -> infinity, where its theory lives.

The theory (:func:`richlazy.theory.solve_relu_block` with ``bulk="readout_law"``) is the
N -> infinity limit at fixed P. At N = 100 the sampled bulk activations lie 6-9 % below it
(``coding/relu-correlated``), more than that case's 3/N allowance. Whether that is a finite-width
offset or an error of the theory is settled here: the same seeded Gibbs-HMC ensemble is sampled at
N = 100, 200 and 400 (same P, T, sampler and chain lengths), every compared quantity x is fitted
by weighted least squares with ``x(N) = x_inf + b / N`` through the three widths (weights
1/SE^2), and x_inf is compared with the theory.

Tolerance, fixed before the run: |theory - x_inf| <= 4 SE(x_inf) + 0.005 (relative for the
outliers' z̄ and readouts and the bulk activations, absolute for the bulk readout a_0). SE(x_inf)
is the fit's standard error from the per-width standard errors (not rescaled by the fit's chi^2);
0.005 covers the readout law's quadrature error (3.6e-3 at P = 100, docs/coding_relu.md) and
the O(1/N^2) terms the fit leaves out. The fit's chi^2 (one degree of freedom) is in the notes:
a large one says that the 1/N form does not describe the three widths. The chain diagnostics of
an extrapolated quantity are the worst of its three widths' (R-hat, ESS).

The Laplace bulk (``bulk="laplace"``, the readout law's large-P_s limit) is shown in the figure
and the notes for reference; it is not compared.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
from richlazy.theory import input_kernel, solve_relu_block
from richlazy.validate import ChainBudget, Compared, Sizes, compare, declare_case

from ...recipes import (
    CLASS_COVARIANCE,
    OUTLIER_THRESHOLD,
    RELU_TOY_SIZES,
    BlockView,
    correlated_problem,
    fit_inverse_width,
    seeded_relu_samples,
)
from ...stats import chain_diagnostics, chain_se, worst_mixing

__all__ = ["WIDTHS"]

NAME = "coding/relu-correlated-widths"
#: the sampled widths (the rest of the configuration is coding/relu-correlated's)
WIDTHS = (100, 200, 400)
#: systematic allowance of the N -> infinity comparison (see the module doc)
SYSTEMATIC = 0.005


@dataclass(frozen=True)
class WidthsSize(ChainBudget):
    """coding/relu-correlated's seeded ensemble without its width (sampled at each of WIDTHS)."""

    P: int
    N0: int
    amplitudes: tuple[float, ...]
    sampler: str


_SIZE = WidthsSize(**{k: v for k, v in RELU_TOY_SIZES["quick"].items()
                      if k != "N" and not k.startswith("prior")})


def _extrapolated(run, name, theory, fit):
    """x_inf of the fit x_inf + b/N against the N -> infinity theory: |theory - x_inf| <=
    4 SE(x_inf) + SYSTEMATIC (relative or absolute); chain diagnostics the worst width's."""
    kind, x_inf, se_inf = fit.kind, fit.x_inf, fit.se_inf
    tol = 4 * se_inf + SYSTEMATIC if kind == "abs" else 4 * se_inf / abs(theory) + SYSTEMATIC
    return compare(
        name, theory, x_inf, stderr=se_inf, kind=kind, tol=tol,
        mixing=fit.mixing,
        note=(f"{kind} tol = 4 SE(x_inf) + {SYSTEMATIC} (fixed before the run: readout-law "
              "quadrature error and the O(1/N^2) terms the fit leaves out); weighted fit "
              f"through N = {list(WIDTHS)}, SE per width = max(batch means, chain-to-chain)."))


def _row(over):
    """The extrapolated quantities with index keys ``over(run)`` (see :func:`_keys`)."""
    return Compared(lambda run, *key: f"{run.simulation.fits[key].label}: fit x_inf + b/N at N -> inf",
                    theory=lambda run, *key: _theory_value(run.theory.law, key),
                    estimate=lambda run, *key: run.simulation.fits[key], rule=_extrapolated, over=over)


CASE = declare_case(
    NAME,
    description=(
        "coding/relu-correlated's correlated-class ReLU problem (N0=120, P=100, T=0.01, "
        "q_cc=0.3, q_cc'=0.1) sampled at N = 100, 200 and 400 with the same seeded Gibbs-HMC "
        "ensemble; each outlier and bulk quantity is extrapolated by a weighted fit "
        "x_inf + b/N and x_inf compared with the N -> infinity readout-law theory "
        "(solve_relu_block, bulk='readout_law')."
    ),
    sizes=Sizes(quick=_SIZE, full=_SIZE),
    theory=lambda ctx, cfg: _theory(ctx, cfg),
    simulation=lambda ctx, cfg, th: _simulation(ctx, cfg, th),
    compared=(
        _row(lambda run: [k for k in run.simulation.fits if k[0] in ("z", "abar")]),
        _row(lambda run: [k for k in run.simulation.fits if k[0] == "a0"]),
        _row(lambda run: [k for k in run.simulation.fits if k[0] == "act"]),
    ),
    figures=lambda run: [_figure(run.ctx, run.simulation.fits, run.theory.law, run.theory.lap)],
    notes=lambda run: _notes(run),
    params=lambda run: dict(widths=list(WIDTHS), m=run.theory.Yc.shape[1], sigma_a2=1.0 / run.cfg.P,
                            amplitudes=list(run.cfg.amplitudes), outlier_threshold=OUTLIER_THRESHOLD,
                            class_covariance=[list(r) for r in CLASS_COVARIANCE], systematic=SYSTEMATIC),
    suites=("full",),
)


def _keys(k, m):
    """The compared quantities' (label, kind, index key), in their order: per class the outlier's
    zbar and readouts, the bulk readout per output, the bulk activation per class."""
    out = []
    for c in range(k):
        out.append((f"outlier preactivation zbar_{c} (class {c}, /sqrt(N))", "rel", ("z", c)))
        out += [(f"outlier readout abar_{c}^{r} (class {c}, output {r}, /sqrt(N))", "rel", ("abar", c, r))
                for r in range(m)]
    out += [(f"bulk readout a_0^{r}", "abs", ("a0", r)) for r in range(m)]
    out += [(f"bulk mean activation <relu(z)> on class {c}", "rel", ("act", c)) for c in range(k)]
    return out


def _series(summ, key):
    """The per-(sample, chain) series of one width for an index key (a lost outlier: zbar = 0)."""
    if key[0] == "z":
        return np.nan_to_num(summ["zbar"][..., key[1]], nan=0.0)
    if key[0] == "abar":
        return np.nan_to_num(summ["abar"][..., key[1], key[2]], nan=0.0)
    if key[0] == "a0":
        return summ["a0"][..., key[1]]
    return summ["bulk_activation"][..., key[1]]


def _theory(ctx, cfg):
    """The correlated-class problem, its readout-law theory (compared) and its Laplace bulk
    (reference)."""
    _, task, sol, Yc = correlated_problem(ctx, NAME)
    lap_sol = solve_relu_block(input_kernel(task.X), task.Y, T=cfg.T)
    return SimpleNamespace(task=task, sol=sol, law=BlockView(sol), lap_sol=lap_sol, lap=BlockView(lap_sol),
                           Yc=Yc)


def _simulation(ctx, cfg, th):
    """The seeded ensemble at each width, and per compared quantity its means and SE per width and
    the weighted fit x_inf + b/N."""
    k, m = th.Yc.shape
    summs, runs = [], []
    for N in WIDTHS:
        _, run, _, summ = seeded_relu_samples(ctx, dict(dataclasses.asdict(cfg), N=N), NAME, th.task, th.Yc,
                                              checkpoint=f"seeded_N{N}.pt")
        summs.append(summ)
        runs.append(f"N = {N}: {run.seconds:.0f} s")
    fits = {}
    for label, kind, idx in _keys(k, m):
        series = [_series(summ, idx) for summ in summs]
        mean = [float(s.mean()) for s in series]
        se = [chain_se(s) for s in series]
        x_inf, se_inf, b, chi2 = fit_inverse_width(mean, se, WIDTHS)
        fits[idx] = SimpleNamespace(label=label, kind=kind, mean=mean, se=se, x_inf=x_inf, se_inf=se_inf,
                                    b=b, chi2=chi2,
                                    mixing=worst_mixing(*(chain_diagnostics(s, layout="draw_chain")
                                                          for s in series)))
    return SimpleNamespace(fits=fits, runs=runs)


def _notes(run):
    cfg, th, fits = run.cfg, run.theory, run.simulation.fits
    lines = [f"{f.label}: " + ", ".join(f"N={N} {v:.4f}±{s:.4f}" for N, v, s in zip(WIDTHS, f.mean, f.se,
                                                                                       strict=True))
             + f"; x_inf {f.x_inf:.4f}±{f.se_inf:.4f}, b {f.b:.2f}, chi2 {f.chi2:.2f} (1 dof); theory "
             f"{_theory_value(th.law, idx):.4f}, Laplace bulk {_theory_value(th.lap, idx):.4f}."
             for idx, f in fits.items()]
    return (f"Theory: {th.sol.message}. Laplace bulk (reference, not compared): {th.lap_sol.message}. "
            f"Seeded ensembles ({cfg.sampler}, {cfg.n_steps} steps x {cfg.n_chains} "
            f"chains, burn-in {cfg.burn_in}, amplitudes {list(cfg.amplitudes)}): "
            + ", ".join(run.simulation.runs) + ". Per quantity: " + " ".join(lines))


def _theory_value(view, key):
    if key[0] == "z":
        return float(view.outlier_preactivations[list(view.outlier_classes).index(key[1])])
    if key[0] == "abar":
        return float(view.outlier_readouts[list(view.outlier_classes).index(key[1]), key[2]])
    if key[0] == "a0":
        return float(view.a0[key[1]])
    return float(view.bulk_mean_activation[key[1]])


def _figure(ctx, fits, law, lap):
    panels = (("act", "bulk mean activation"), ("z", "outlier z̄_c (/√N)"), ("a0", "bulk readout a_0"))
    x = 1.0 / np.asarray(WIDTHS, dtype=float)
    xx = np.linspace(0.0, x.max() * 1.05, 50)
    with ctx.figure("width_extrapolation.png", 1, 3, figsize=(13, 3.6)) as (fig, axes):
        for ax, (kind, title) in zip(axes, panels, strict=True):
            for j, (key, r) in enumerate((key, r) for key, r in fits.items() if key[0] == kind):
                col = f"C{j}"
                ax.errorbar(x, r.mean, yerr=2 * np.asarray(r.se), fmt="o", color=col,
                            capsize=2, label=f"{'class' if kind != 'a0' else 'output'} {key[1]}")
                ax.plot(xx, r.x_inf + r.b * xx, "-", color=col, lw=0.8)
                ax.errorbar([0.0], [r.x_inf], yerr=[2 * r.se_inf], fmt="s", color=col,
                            mfc="white", capsize=3)
                ax.plot([0.0], [_theory_value(law, key)], "*", color=col, ms=11)
                ax.plot([0.0], [_theory_value(lap, key)], "x", color=col, ms=8)
            ax.set_xlabel("1/N")
            ax.set_title(title)
        axes[0].plot([], [], "s", color="0.3", mfc="white", label="fit at N → ∞ (±2 SE)")
        axes[0].plot([], [], "*", color="0.3", label="theory (readout law)")
        axes[0].plot([], [], "x", color="0.3", label="Laplace bulk (not compared)")
        axes[0].legend(frameon=False, fontsize=7)
    return "width_extrapolation.png"


