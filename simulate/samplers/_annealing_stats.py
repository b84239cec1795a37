"""Estimates and equilibration diagnostics of a population-annealing run
(:func:`population_annealing`).

Estimates: after the final resampling every member of a population carries the same weight, so
a population's estimate of ``E_target[f]`` is its plain mean; the G populations are independent,
so the mean over populations has the standard error ``std_G / sqrt(G)`` (sample standard
deviation over the G population means). Within one population, members that descend from one
initial ancestor (a family) are correlated; the family-cluster standard error

    SE_g^2 = F/(F-1) * sum_f (n_f / R)^2 (xbar_f - m_g)^2      (F families, n_f members, mean xbar_f)

treats families as the independent units (it is conservative when families have decorrelated).

Diagnostics, with thresholds fixed before the run (:func:`annealing_diagnostics`):

* ``converged``: every population reached ``beta_target`` (the run's status);
* ``ess``: the weight ESS fraction of every stage of every population stayed >=
  ``min_ess_fraction`` (default 0.3); a too-coarse schedule (``ess_min`` too small) fails it;
* ``families``: the effective number of families ``exp(S_f)`` of every population at the end is
  >= ``min_families`` (default 20). Wang, Machta & Katzgraber (Phys. Rev. E 92, 063307 (2015))
  estimate the equilibration population size by ``rho_s = R / exp(S_f)`` and ask for
  ``R >> rho_s``; systematic errors scale as ``rho / R = 1 / exp(S_f)``, so the criterion is a
  count: 20 effective families bound them at about 5 % and, when families stay in their
  metastable state, still give every state of weight >= 0.15 an expected three families;
* ``spread``: the populations agree on the quantity ``values``: for every pair,
  ``|m_g - m_h| / sqrt(SE_g^2 + SE_h^2) <= max_spread_z`` (default 4: a false alarm has
  probability < 1e-4 per pair for Gaussian errors) with the family-cluster SEs;
* ``evidence``: ``max_g log Z_g - min_g log Z_g <= max_logz_spread`` (default 1 nat). A stage at
  ``ESS = R/2`` adds at most about ``1/R`` to the variance of ``log Z_g``, so a sound run of K
  stages spreads by a few ``sqrt(K / R)`` (0.4 nat over 8 populations of the tests' 4-stage,
  R = 250 multi-well run); a population that missed a state of weight w is off by ``-log(1-w)``.

The last two need G >= 2 populations (``spread`` also ``values``); otherwise they are listed as
skipped, not failed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..checks import as_real_tensor, check_pos_float, check_real
from ._annealing import AnnealingRun

__all__ = ["AnnealedMean", "AnnealingDiagnostics", "annealed_mean", "annealing_diagnostics"]


@dataclass(frozen=True)
class AnnealedMean:
    """Result of :func:`annealed_mean` (float64 tensors on the CPU; ``...`` the shape of one
    member's value).

    population_means : (G, ...) ``m_g``, the mean over the R members of population g.
    mean : (...) the mean of ``m_g`` over the G populations.
    se : (...) ``std(m_g) / sqrt(G)`` (sample std over populations; NaN when G = 1).
    population_se : (G, ...) the family-cluster standard error of each ``m_g`` (module doc).
    """

    population_means: torch.Tensor
    mean: torch.Tensor
    se: torch.Tensor
    population_se: torch.Tensor


@dataclass(frozen=True)
class AnnealingDiagnostics:
    """Result of :func:`annealing_diagnostics`.

    equilibrated : no diagnostic failed.
    failed : names of the failed diagnostics ("converged", "ess", "families", "spread",
        "evidence"); skipped : those not applicable (G = 1, or no ``values``).
    min_ess_fraction : smallest stage ESS / R;  min_family_count : smallest final exp(S_f).
    max_z : largest pairwise z of the population means (None when skipped).
    logz_spread : max - min log evidence over populations (None when G = 1).
    thresholds : the thresholds applied;  message : one line per failed diagnostic.
    """

    equilibrated: bool
    failed: tuple
    skipped: tuple
    min_ess_fraction: float
    min_family_count: float
    max_z: float | None
    logz_spread: float | None
    thresholds: dict
    message: str


def _check_run(run) -> AnnealingRun:
    if not isinstance(run, AnnealingRun):
        raise TypeError(f"run must be an AnnealingRun (from population_annealing), got "
                        f"{type(run).__name__}")
    return run


def _member_values(run: AnnealingRun, values) -> torch.Tensor:
    """``values`` (E, ...) as a float64 CPU tensor of shape (G, R, K) (K: flattened rest)."""
    E = run.families.shape[0]
    v = as_real_tensor("values", values.detach() if torch.is_tensor(values) else values,
                       dtype=torch.float64, device="cpu")
    if v.ndim < 1 or v.shape[0] != E:
        raise ValueError(f"values must have one row per member: shape (E, ...) = ({E}, ...), got "
                         f"{tuple(v.shape)}")
    G = run.n_populations
    return v.reshape(G, E // G, -1)


def _cluster_se(x: torch.Tensor, families: torch.Tensor) -> torch.Tensor:
    """Family-cluster SE (G, K) of the population means of ``x`` (G, R, K)."""
    G, R, K = x.shape
    fam = families.view(G, R).cpu()
    sums = torch.zeros(G, R, K, dtype=torch.float64).scatter_add_(
        1, fam.unsqueeze(2).expand(G, R, K), x)
    n = torch.zeros(G, R, dtype=torch.float64).scatter_add_(1, fam, torch.ones(G, R, dtype=torch.float64))
    m = x.mean(1, keepdim=True)
    dev = sums - n.unsqueeze(2) * m  # n_f (xbar_f - m_g), zero for empty families
    F = (n > 0).sum(1).to(torch.float64).clamp(min=2.0)
    return torch.sqrt((dev * dev).sum(1) / R**2 * (F / (F - 1.0)).unsqueeze(1))


def annealed_mean(run: AnnealingRun, values) -> AnnealedMean:
    """Estimate ``E_target[f]`` from ``values`` (E, ...) = f at the final members ``run.theta``:
    ``m_g = (1/R) sum_i f(theta_{g,i})`` per population, ``mean = (1/G) sum_g m_g``,
    ``se = std_g(m_g) / sqrt(G)`` and the family-cluster SE of each ``m_g`` (module doc)."""
    _check_run(run)
    x = _member_values(run, values)
    shape = tuple(torch.as_tensor(values).shape[1:])
    G = run.n_populations
    pm = x.mean(1)
    se = pm.std(0) / math.sqrt(G) if G > 1 else torch.full_like(pm[0], math.nan)
    return AnnealedMean(population_means=pm.reshape((G,) + shape), mean=pm.mean(0).reshape(shape),
                        se=se.reshape(shape),
                        population_se=_cluster_se(x, run.families).reshape((G,) + shape))


def _max_pair_z(est: AnnealedMean) -> float:
    m = est.population_means.reshape(est.population_means.shape[0], -1)
    s2 = est.population_se.reshape(m.shape) ** 2
    d = (m.unsqueeze(0) - m.unsqueeze(1)).abs()
    den = torch.sqrt(s2.unsqueeze(0) + s2.unsqueeze(1))
    z = torch.where(d == 0, torch.zeros(()), d / den)  # d > 0 with den == 0: inf
    return float(z.max())


def _check_thresholds(min_ess_fraction, min_families, max_spread_z, max_logz_spread) -> dict:
    f = check_real("min_ess_fraction", min_ess_fraction)
    if not 0.0 < f <= 1.0:
        raise ValueError(f"min_ess_fraction must be in (0, 1], got {f}")
    return dict(min_ess_fraction=f, min_families=check_pos_float("min_families", min_families),
                max_spread_z=check_pos_float("max_spread_z", max_spread_z),
                max_logz_spread=check_pos_float("max_logz_spread", max_logz_spread))


def annealing_diagnostics(run: AnnealingRun, values=None, *, min_ess_fraction: float = 0.3,
                          min_families: float = 20.0, max_spread_z: float = 4.0,
                          max_logz_spread: float = 1.0) -> AnnealingDiagnostics:
    """Whether ``run`` is equilibrated, diagnostic by diagnostic (module doc): ``converged``;
    ``ess`` (``min_{k,g} ESS_kg / R >= min_ess_fraction``); ``families`` (final
    ``exp(S_f) >= min_families`` in every population); ``spread`` (pairwise
    ``|m_g - m_h| / sqrt(SE_g^2 + SE_h^2) <= max_spread_z`` for the quantity ``values`` (E, ...),
    every component); ``evidence`` (``max log Z_g - min log Z_g <= max_logz_spread``)."""
    _check_run(run)
    th = _check_thresholds(min_ess_fraction, min_families, max_spread_z, max_logz_spread)
    est = None if values is None else annealed_mean(run, values)
    G = run.n_populations
    ess = float(run.ess_fraction.min()) if run.n_stages else math.nan
    fam = float(run.family_count[-1].min()) if run.n_stages else float(run.families.numel() // G)
    z = _max_pair_z(est) if est is not None and G > 1 else None
    dz = float(run.log_evidence.max() - run.log_evidence.min()) if G > 1 else None
    checks = {
        "converged": (run.converged, run.message),
        "ess": (not ess < th["min_ess_fraction"], f"a stage's weight ESS fell to {ess:.3g} R < "
                f"{th['min_ess_fraction']:g} R: the schedule is too coarse (raise ess_min)"),
        "families": (fam >= th["min_families"], f"only {fam:.3g} effective families survive "
                     f"(< {th['min_families']:g}): raise R, n_moves or ess_min"),
        "spread": (z is None or z <= th["max_spread_z"], f"the populations disagree on the "
                   f"quantity: max pairwise z = {z if z is None else round(z, 2)} > "
                   f"{th['max_spread_z']:g}"),
        "evidence": (dz is None or dz <= th["max_logz_spread"], f"the log evidences of the "
                     f"populations spread over {dz if dz is None else round(dz, 3)} > "
                     f"{th['max_logz_spread']:g} nats"),
    }
    failed = tuple(k for k, (ok, _) in checks.items() if not ok)
    skipped = tuple(k for k, v in (("spread", z), ("evidence", dz)) if v is None)
    return AnnealingDiagnostics(
        equilibrated=not failed, failed=failed, skipped=skipped, min_ess_fraction=ess,
        min_family_count=fam, max_z=z, logz_spread=dz, thresholds=th,
        message="; ".join(checks[k][1] for k in failed) or "all diagnostics passed")
