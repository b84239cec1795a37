"""The comparison of a seeded ReLU ensemble with an outlier-plus-bulk theory as the stages and
compared rows of declared cases (:func:`richlazy.validate.declare_case`), shared by
``coding/relu-toy`` and ``coding/relu-correlated``: the simulation stage (seeded ensemble and the
documented prior-initialised one), the rows (outlier counts, the aggregated outliers, the bulk),
figures and notes.

The rows read ``run.theory.sol`` (the attributes that function reads), ``run.theory.Yc`` (class
targets, (k, m)), ``run.theory.dT`` (relative finite-T allowance) and ``run.theory.note_rel``, and
``run.simulation`` as :func:`relu_seeded_simulation` returns it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from ..core._compare import compare
from ..core._declaration import Compared, Sizes
from ..stats import chain_se
from ._network_size import NetworkSize
from ._relu import OUTLIER_THRESHOLD, RELU_TOY_SIZES, seeded_relu_samples
from ._relu_comparison import (
    _BULK,
    _OUTLIER_STATE,
    _OUTLIER_VALUES,
    _figures,
    _notes,
    _prior_samples,
)

__all__ = ["RELU_ROWS", "RELU_SIZES", "ReluToySize", "relu_figures", "relu_notes", "relu_seeded_simulation"]


@dataclass(frozen=True)
class ReluToySize(NetworkSize):
    """The sizes of ``coding/relu-toy`` (:data:`RELU_TOY_SIZES`), typed; a sampler the size
    does not name is ULA."""

    prior_chains: int  # the prior-initialised ensemble (documented, not compared)
    prior_steps: int
    prior_thin: int
    prior_sampler: str = "ula"
    amplitudes: tuple[float, ...] = (0.5, 2.0)  # of the seeded single-class neurons
    sampler: str = "ula"


RELU_SIZES = Sizes(quick=ReluToySize(**RELU_TOY_SIZES["quick"]), full=ReluToySize(**RELU_TOY_SIZES["full"]))


def relu_seeded_simulation(ctx, cfg, name, task, Yc):
    """The seeded ensemble (seed stream 1, ``seeded.pt``), its samples and outlier summary, the
    prior-initialised ensemble (stream 2, ``prior.pt``) and its summary, and the last activations
    of chain 0 (raster figure)."""
    cfg = dataclasses.asdict(cfg)
    post, run, smp, summ = seeded_relu_samples(ctx, cfg, name, task, Yc)
    prior_run, psumm = _prior_samples(ctx, cfg, name, task, post.spec, Yc.shape[1])
    z_last = post.preactivations(run.state.theta)[-1][0]
    acts = post.phi(z_last).double().cpu().numpy()  # (N, P) of chain 0
    return SimpleNamespace(run=run, smp=smp, summ=summ, prior_run=prior_run, psumm=psumm, acts=acts)


def relu_figures(run):
    cfg, sol, sim = run.cfg, run.theory.sol, run.simulation
    return _figures(run.ctx, sol, sim.summ, sim.smp["A"], sim.acts, run.theory.task.labels, sim.psumm,
                    sim.prior_run.sample_steps.numpy(), cfg.dt if cfg.prior_sampler == "ula" else None)


def relu_notes(run):
    sim = run.simulation
    return _notes(dataclasses.asdict(run.cfg), run.theory.sol, sim.summ, sim.psumm, sim.run, sim.prior_run)


# ---- the rows ------------------------------------------------------------------------------------

_COUNT_NOTE = ("abs tol 0.1 per network: an extra outlier costs exp(-P (1-rho_c) log 2) in "
               "equilibrium, so splits/losses may occur only as rare threshold crossings; "
               f"outlier = |a_i| > {OUTLIER_THRESHOLD} sqrt(N), codes c iff class-c mean "
               f"activation > {OUTLIER_THRESHOLD} sqrt(N).")


def _count(run, name, theory, n, *, note):
    """An outlier count per network: absolute tolerance 0.1."""
    return compare(name, theory, float(n.mean()), stderr=chain_se(n), kind="abs", tol=0.1, mixing=n,
                   note=note, **_OUTLIER_STATE)


def _outlier(run, name, theory, ser):
    """An aggregated outlier value: relative tolerance 3/N + dT + 4 SE."""
    se = chain_se(ser)
    return compare(name, theory, float(ser.mean()), stderr=se, kind="rel",
                   tol=3.0 / run.cfg.N + run.theory.dT + 4 * se / abs(theory), note=run.theory.note_rel,
                   mixing=ser, **_OUTLIER_VALUES)


def _bulk_readout(run, name, theory, ser):
    """The bulk readout: absolute tolerance 4 SE + 3/P + dT |a_0|."""
    se, P, dT = chain_se(ser), run.cfg.P, run.theory.dT
    return compare(name, theory, float(ser.mean()), stderr=se, kind="abs",
                   tol=4 * se + 3.0 / P + dT * abs(theory), mixing=ser,
                   note=(f"abs tol = 4 SE + 3/P (P={P}: O(1/P) shift of the mean of the finite-P bulk "
                         "readout law exp(P g(a)) from its maximiser a_0) + finite-T allowance "
                         f"{dT:.3f} |a_0|; bulk = non-outlier neurons, readouts O(1), not sqrt(N)-scaled."),
                   **_BULK)


def _bulk_activation(run, name, theory, ser):
    """A bulk mean activation: relative tolerance 3/N + dT + 4 SE."""
    se, sol = chain_se(ser), run.theory.sol
    return compare(name, theory, float(ser.mean()), stderr=se, kind="rel",
                   tol=3.0 / run.cfg.N + run.theory.dT + 4 * se / abs(theory), mixing=ser,
                   note=run.theory.note_rel + getattr(sol, "spread_note", " The O(1/P) spread of bulk "
                                                      "readouts (and so of h_c) is in 3/N."), **_BULK)


def _outlier_theory(run, c, r):
    """zbar_c (r None) or abar_c^r of the theory's outlier of class c (NaN if it has none)."""
    sol, (k, m) = run.theory.sol, run.theory.Yc.shape
    th_abar, th_z = np.full((k, m), np.nan), np.full(k, np.nan)
    for i, cls in enumerate(sol.outlier_classes):
        th_abar[cls] = sol.outlier_readouts[i]
        th_z[cls] = sol.outlier_preactivations[i]
    return th_z[c] if r is None else th_abar[c, r]


def _outlier_series(run, c, r):
    """The sampled zbar_c (r None) or abar_c^r per (sample, chain); a lost outlier counts as 0."""
    s = run.simulation.summ["zbar"][..., c] if r is None else run.simulation.summ["abar"][..., c, r]
    return np.where(np.isfinite(s), s, 0.0)


def _outlier_name(run, c, r):
    if r is None:
        return f"outlier preactivation zbar_{c} (class {c}, /sqrt(N))"
    return f"outlier readout abar_{c}^{r} (class {c}, output {r}, /sqrt(N))"


def _classes(run):
    return range(run.theory.Yc.shape[0])


def _outputs(run):
    return range(run.theory.Yc.shape[1])


RELU_ROWS = (
    Compared("single-class outliers coding class {0} per network", theory=lambda run, c: 1.0,
             estimate=lambda run, c: run.simulation.summ["n_single"][..., c].astype(float), rule=_count,
             over=_classes, options=lambda run, c: dict(note=_COUNT_NOTE)),
    Compared("outliers coding no class or several classes per network", theory=lambda run: 0.0,
             estimate=lambda run: run.simulation.summ["n_other"].astype(float), rule=_count,
             options=lambda run: dict(note="theory: every outlier is single-class; abs tol 0.1 as for "
                                           "the counts.")),
    Compared(_outlier_name, theory=_outlier_theory, estimate=_outlier_series, rule=_outlier,
             over=lambda run: [(c, r) for c in _classes(run) for r in (None, *_outputs(run))]),
    Compared("bulk readout a_0^{0}", theory=lambda run, r: run.theory.sol.a0[r], rule=_bulk_readout,
             estimate=lambda run, r: run.simulation.summ["a0"][..., r], over=_outputs),
    Compared(lambda run, c: (f"bulk mean activation <relu(z)> on class {c} = "
                             f"{getattr(run.theory.sol, 'activation_name', 'M(t_c.a_0)')}"),
             theory=lambda run, c: run.theory.sol.bulk_mean_activation[c], rule=_bulk_activation,
             estimate=lambda run, c: run.simulation.summ["bulk_activation"][..., c], over=_classes),
)
