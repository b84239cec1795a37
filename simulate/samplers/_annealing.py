"""Population annealing (Hukushima & Iba 2003; Machta, Phys. Rev. E 82, 026704 (2010); Wang,
Machta & Katzgraber, Phys. Rev. E 92, 063307 (2015)): a sequential Monte Carlo sampler (Del
Moral, Doucet & Jasra, J. R. Stat. Soc. B 68, 411 (2006)) for the tempered laws

    p_beta(theta) ∝ exp(-beta * loss(theta) - prior(theta)),    beta_start -> beta_target.

The E = G * R rows of ``theta`` are G independent populations of R members; row ``g * R + i`` is
member i of population g. Every population starts from the caller's draw of ``p_beta_start``
(the prior when ``beta_start`` is 0) and runs its own schedule. Stage k of population g:

1. next weight (conditional-ESS rule): the largest ``beta' <= beta_target`` with
   ``ESS(w) = (sum w)^2 / sum w^2 >= ess_min * R`` for ``w_i = exp(-(beta' - beta) loss_i)``,
   found by bisection on ``beta' - beta`` (ESS decreases along it);
2. evidence: ``log Z(beta') - log Z(beta) += logsumexp(-(beta' - beta) loss) - log R``, so the
   sum over the stages estimates ``log [Z(beta_target) / Z(beta_start)]`` with
   ``Z(beta) = ∫ prior exp(-beta loss)`` (the log evidence when the prior is normalised and
   ``beta_start`` = 0); the estimate of Z itself is unbiased (Del Moral et al. 2006);
3. systematic resampling with the normalised weights ``W_i``: one uniform ``u`` per population,
   member i of the new population is the old member ``a_i = min{j : sum_{l<=j} W_l > (u+i)/R}``
   (every member gets ``floor(R W_j)`` or ``ceil(R W_j)`` copies); its family (the index of its
   ancestor in the initial population) is inherited;
4. ``n_moves`` exact transitions (:func:`hmc_step` or :func:`mala_step`, or the caller's
   ``kernel``) of every row at its population's new weight, after :func:`mcmc_refresh`
   (resampling moved positions between rows).

A population that has reached ``beta_target`` is neither reweighted nor resampled again; its
rows keep moving at ``beta_target`` (transitions that leave the target invariant) while the
others finish. Step sizes are fixed within a stage, so each stage's kernel leaves that stage's
law exactly invariant; between stages (``adapt_step_size``) every population's step size is
multiplied by ``exp(2 (a - target_accept))``, a its mean acceptance over the stage.

The run is checkpointed after every stage through the driver's checksummed, atomic writer and
resumes bit for bit; a damaged checkpoint is moved aside and the run starts over
(:class:`CheckpointDiscardedWarning`). Diagnostics and estimates: :mod:`._annealing_stats`.
"""

from __future__ import annotations

import hashlib
import json
import math
import pathlib
import time
from dataclasses import dataclass, field, replace

import numpy as np
import torch
from tqdm.auto import tqdm

from ..checks import check_count, check_generator_on, check_nonneg_float, check_pos_float, check_real
from ._driver import _discard, _resume, _state_to_dict, _unplain, _write_checkpoint
from ._hmc import MAX_LEAPFROG, hmc_init, hmc_step
from ._mala import mala_step
from ._mh import MCMCState, _check_positions, _check_potential, _check_target_accept, mcmc_refresh

__all__ = ["AnnealingRun", "population_annealing"]

_METHODS = ("hmc", "mala")
_STEP_GAIN = 2.0  # log step size += _STEP_GAIN * (mean acceptance - target), between stages
_BISECTION_ITERS = 60  # halvings of the beta interval (float64 resolution)
_RECORDS = ("beta", "ess_fraction", "n_families", "family_count", "acceptance", "step_size")


@dataclass(frozen=True)
class AnnealingRun:
    """Result of :func:`population_annealing`. Per-stage records are (K, G) tensors on the CPU
    (K stages, G populations; row k describes stage k + 1).

    theta : (E, D) final positions (row ``g * R + i``: member i of population g); loss : (E,).
    state : the final :class:`MCMCState` (to continue sampling at ``beta_target``).
    betas : (K, G) float64 weight each population reached at each stage.
    ess_fraction : (K, G) ``ESS / R`` of the stage's incremental weights (1 once finished).
    n_families : (K, G) int64 families (distinct initial ancestors) alive after the stage.
    family_count : (K, G) ``exp(S_f)``, ``S_f = -sum_f nu_f log nu_f`` with ``nu_f`` the fraction
        of the population in family f: the effective number of families (Wang et al. 2015).
    acceptance : (K, G) mean acceptance probability of the stage's transitions.
    step_size : (K, G) mean step size of the stage's transitions.
    log_evidence : (G,) float64 ``log [Z(beta_target) / Z(beta_start)]`` per population.
    families : (E,) int64 family of each final member (0..R-1 within its population).
    n_populations : G;  n_stages : K.
    status : "converged" (every population reached ``beta_target``) or "max_stages";
    converged : ``status == "converged"``;  message : what happened, and what to change.
    resumed_from : stage a checkpoint was resumed from (None when started fresh).
    discarded_checkpoint : None, or which checkpoint was discarded and why.
    seconds : wall time of this call.
    """

    theta: torch.Tensor
    loss: torch.Tensor
    state: MCMCState
    betas: torch.Tensor
    ess_fraction: torch.Tensor
    n_families: torch.Tensor
    family_count: torch.Tensor
    acceptance: torch.Tensor
    step_size: torch.Tensor
    log_evidence: torch.Tensor
    families: torch.Tensor
    n_populations: int
    n_stages: int
    status: str
    converged: bool
    message: str
    resumed_from: int | None = None
    discarded_checkpoint: str | None = None
    seconds: float = 0.0


@dataclass(frozen=True)
class _Config:
    G: int
    R: int
    beta_start: float
    beta_target: float
    ess_min: float
    n_moves: int
    method: str
    n_leapfrog: int | None
    target_accept: float
    adapt_step_size: bool
    max_stages: int
    kernel: object = None
    kernel_label: str | None = None


@dataclass
class _Carry:
    """What a stage changes besides the MCMC state (all of it checkpointed)."""

    beta: torch.Tensor  # (G,) float64, current weight per population
    log_z: torch.Tensor  # (G,) float64
    families: torch.Tensor  # (E,) int64
    records: dict = field(default_factory=lambda: {k: [] for k in _RECORDS})

    @property
    def stage(self) -> int:
        return len(self.records["beta"])


# -- checks ------------------------------------------------------------------------------------

def _check_args(theta, potential, generator, kw) -> _Config:
    """Every argument checked before anything is evaluated; returns the run's configuration."""
    theta = _check_positions(theta)
    _check_potential(potential)
    check_generator_on(generator, theta.device, what="theta")
    G = check_count("n_populations", kw["n_populations"], minimum=1)
    E = theta.shape[0]
    if E % G or E // G < 2:
        raise ValueError(f"n_populations must divide the number of rows E = {E} of theta into "
                         f"populations of R >= 2 members (E = n_populations * R), got {G}")
    b0 = check_nonneg_float("beta_start", kw["beta_start"])
    b1 = check_pos_float("beta_target", kw["beta_target"])
    if not b1 > b0:
        raise ValueError(f"beta_target must be larger than beta_start (annealing runs from "
                         f"beta_start to beta_target), got beta_start={b0}, beta_target={b1}")
    ess_min = check_real("ess_min", kw["ess_min"])
    if not 0.0 < ess_min < 1.0:
        raise ValueError(f"ess_min must be in (0, 1) (a fraction of R), got {ess_min}")
    method = kw["method"]
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    nl = kw["n_leapfrog"]
    if method == "hmc":
        nl = check_count("n_leapfrog", 5 if nl is None else nl, minimum=1, maximum=MAX_LEAPFROG)
    elif nl is not None:
        raise ValueError(f"n_leapfrog is only used by method='hmc', got n_leapfrog={nl!r}")
    ta = kw["target_accept"]
    ta = _check_target_accept(ta if ta is not None else (0.8 if method == "hmc" else 0.574))
    if not isinstance(kw["adapt_step_size"], bool):
        raise TypeError(f"adapt_step_size must be a bool, got {kw['adapt_step_size']!r}")
    kernel, label = kw["kernel"], kw["kernel_label"]
    if kernel is not None and not callable(kernel):
        raise TypeError(f"kernel must be None or callable (state, generator) -> (state, info), got "
                        f"{type(kernel).__name__}")
    if kernel is not None and not (isinstance(label, str) and label):
        raise ValueError(f"kernel_label must name the kernel (a non-empty str: it enters the "
                         f"checkpoint's configuration) when kernel is given, got {label!r}")
    if kernel is None and label is not None:
        raise ValueError(f"kernel_label is only used with kernel, got kernel_label={label!r}")
    if not isinstance(kw["progress"], bool):
        raise TypeError(f"progress must be a bool, got {kw['progress']!r}")
    return _Config(G=G, R=E // G, beta_start=b0, beta_target=b1, ess_min=ess_min,
                   n_moves=check_count("n_moves", kw["n_moves"], minimum=1), method=method,
                   n_leapfrog=nl, target_accept=ta, adapt_step_size=kw["adapt_step_size"],
                   max_stages=check_count("max_stages", kw["max_stages"], minimum=1),
                   kernel=kernel, kernel_label=label)


def _checkpoint_file(path):
    if path is None:
        return None
    if not isinstance(path, (str, pathlib.PurePath)):
        raise TypeError(f"checkpoint_path must be None or a path, got {type(path).__name__}")
    path = pathlib.Path(path)
    if path.is_dir():
        raise ValueError(f"checkpoint_path {str(path)!r} is a folder; give a file path")
    return path


# -- one stage ---------------------------------------------------------------------------------

def _ess(loss: np.ndarray, dbeta: float) -> float:
    """``(sum w)^2 / sum w^2`` of ``w = exp(-dbeta * loss)`` (shifted by the smallest loss)."""
    if dbeta == 0.0:
        return float(loss.size)
    w = np.exp(-dbeta * (loss - loss.min()))
    return float(w.sum() ** 2 / (w * w).sum())


def _next_beta(loss: np.ndarray, beta: float, beta_target: float, ess_min: float) -> float:
    """The conditional-ESS rule: ``beta_target`` when its weights keep ``ESS >= ess_min * R``,
    else the bisection root of ``ESS(beta' - beta) = ess_min * R`` (the largest resolved step
    that keeps it; the smallest resolved step if none does)."""
    span = beta_target - beta
    if span <= 0.0:
        return beta_target
    need = ess_min * loss.size
    if _ess(loss, span) >= need:
        return beta_target
    lo, hi = 0.0, span
    for _ in range(_BISECTION_ITERS):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _ess(loss, mid) >= need else (lo, mid)
    return beta + (lo if lo > 0.0 else hi)


def _systematic(logw: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """Systematic resampling of each row of ``logw`` (G, R) with one uniform ``u`` (G,) per row:
    ancestor of member i = first j with cumulative normalised weight ``C_j > (u + i) / R``."""
    G, R = logw.shape
    C = torch.cumsum(torch.softmax(logw, dim=1), dim=1)
    C[:, -1] = 1.0
    pts = (u.unsqueeze(1) + torch.arange(R, dtype=logw.dtype)) / R
    return torch.searchsorted(C, pts, right=True).clamp_(max=R - 1)


def family_stats(families: torch.Tensor, G: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(n_families (G,) int64, exp(S_f) (G,) float64)`` of the (E,) family labels (0..R-1 in
    each of the G populations): the number of distinct families and the exponential of the
    Shannon entropy ``S_f = -sum_f nu_f log nu_f`` of the family fractions ``nu_f``."""
    R = families.numel() // G
    counts = torch.zeros(G, R, dtype=torch.float64)
    counts.scatter_add_(1, families.view(G, R).cpu(), torch.ones(G, R, dtype=torch.float64))
    nu = counts / R
    ent = -(torch.where(nu > 0, nu * torch.log(nu), torch.zeros(())).sum(1))
    return (counts > 0).sum(1), torch.exp(ent)


def _reweight(state, carry: _Carry, cfg: _Config, generator):
    """Steps 1-3 for every population: new weights, evidence, ESS, resampled row order."""
    G, R = cfg.G, cfg.R
    loss = state.loss.detach().to("cpu", torch.float64).view(G, R)
    loss = torch.where(torch.isnan(loss), torch.full((), math.inf, dtype=loss.dtype), loss)
    new = torch.tensor([_next_beta(loss[g].numpy(), float(carry.beta[g]), cfg.beta_target,
                                   cfg.ess_min) for g in range(G)], dtype=torch.float64)
    dbeta = (new - carry.beta).unsqueeze(1)
    logw = torch.where(dbeta > 0, -dbeta * loss, torch.zeros((), dtype=loss.dtype))
    lse = torch.logsumexp(logw, dim=1)
    ess = torch.exp(2.0 * lse - torch.logsumexp(2.0 * logw, dim=1)) / R
    u = torch.rand(G, generator=generator, dtype=torch.float64, device=state.theta.device).cpu()
    idx = torch.where(dbeta > 0, _systematic(logw, u), torch.arange(R).expand(G, R))
    carry.log_z = carry.log_z + (lse - math.log(R)) * (dbeta.squeeze(1) > 0)
    carry.families = carry.families.view(G, R).gather(1, idx).reshape(-1)
    carry.beta = new
    rows = (idx + R * torch.arange(G).unsqueeze(1)).reshape(-1)
    return rows, ess


def _moves(state, potential, generator, cfg: _Config):
    """``n_moves`` transitions of every row; returns the state and the (G,) mean acceptance."""
    acc = torch.zeros(state.theta.shape[0], dtype=torch.float64, device=state.theta.device)
    for _ in range(cfg.n_moves):
        if cfg.kernel is not None:
            state, info = cfg.kernel(state, generator)
        elif cfg.method == "hmc":
            state, info = hmc_step(state, potential, generator=generator, n_leapfrog=cfg.n_leapfrog,
                                   target_accept=cfg.target_accept)
        else:
            state, info = mala_step(state, potential, generator=generator,
                                    target_accept=cfg.target_accept)
        acc += info["accept_prob"].to(torch.float64)
    return state, (acc / cfg.n_moves).view(cfg.G, cfg.R).mean(1).cpu()


def _stage(state, potential, generator, cfg: _Config, carry: _Carry):
    """One stage of every population (module doc, steps 1-4); appends its records."""
    rows, ess = _reweight(state, carry, cfg, generator)
    dev = state.theta.device
    row_beta = carry.beta.to(dtype=state.theta.dtype, device=dev).repeat_interleave(cfg.R)
    state = replace(state, theta=state.theta[rows.to(dev)])
    state = mcmc_refresh(state, potential, beta=row_beta)
    eps = state.step_size.detach().to("cpu", torch.float64).view(cfg.G, cfg.R).mean(1)
    state, acc = _moves(state, potential, generator, cfg)
    if cfg.adapt_step_size:
        f = torch.exp(_STEP_GAIN * (acc - cfg.target_accept))
        state = replace(state, step_size=state.step_size * f.to(state.step_size).repeat_interleave(
            cfg.R).to(dev))
    n_fam, fam_count = family_stats(carry.families, cfg.G)
    for k, v in zip(_RECORDS, (carry.beta, ess, n_fam, fam_count, acc, eps), strict=True):
        carry.records[k].append(v.clone())
    return state


# -- checkpoints -------------------------------------------------------------------------------

def _digest(t) -> str:
    t = t.detach().cpu().contiguous()
    return hashlib.sha256(t.view(torch.uint8).numpy().tobytes()).hexdigest()[:20]


def _config_json(cfg: _Config, state: MCMCState) -> str:
    d = {k: getattr(cfg, k) for k in cfg.__dataclass_fields__ if k not in ("max_stages", "kernel")}
    d.update(kind="population_annealing", theta=_digest(state.theta), dtype=str(state.theta.dtype),
             step_size=_digest(state.step_size), precond=_digest(state.precond))
    return json.dumps(d, sort_keys=True)


def _save(path, cfg_json, state, carry: _Carry, generator) -> None:
    _write_checkpoint({
        "config": cfg_json,
        "config_hash": hashlib.sha256(cfg_json.encode()).hexdigest(),
        "state": _state_to_dict(state),
        "generator": generator.get_state(),
        "records": {k: list(v) for k, v in carry.records.items()},
        "sample_steps": list(range(1, carry.stage + 1)),
        "anneal": {"beta": carry.beta, "log_z": carry.log_z, "families": carry.families},
    }, path)


def _carry_problem(ck, cfg: _Config) -> str | None:
    """Why the annealing part of a loaded checkpoint is unusable (None when it is sound)."""
    a, recs = ck.get("anneal"), ck.get("records")
    G, E = cfg.G, cfg.G * cfg.R
    if not (isinstance(a, dict) and set(a) == {"beta", "log_z", "families"}):
        return "its annealing fields are missing"
    f64 = (torch.float64, (G,))
    want = {"beta": f64, "log_z": f64, "families": (torch.int64, (E,))}
    for k, (dt, shape) in want.items():
        if not (torch.is_tensor(a[k]) and a[k].dtype == dt and tuple(a[k].shape) == shape):
            return f"its annealing field {k} is not a {dt} tensor of shape {shape}"
    if bool(((a["families"] < 0) | (a["families"] >= cfg.R)).any()):
        return "its family labels are out of range"
    if set(recs) != set(_RECORDS) or any(x.shape != (G,) for v in recs.values() for x in v):
        return "its stage records are not (G,) tensors of the annealing records"
    return None


def _load(path, state, cfg: _Config, cfg_json, generator, desc):
    """``(state, carry, resumed_from, note)`` from the checkpoint at ``path`` (carry None when
    there is none or it was discarded; the generator then keeps its state)."""
    if path is None or not path.exists():
        return state, None, None, None
    g0 = generator.get_state()
    ck, note = _resume(path, state, generator, hashlib.sha256(cfg_json.encode()).hexdigest(), desc)
    if ck is not None and (why := _carry_problem(ck, cfg)) is not None:
        generator.set_state(g0)
        ck, note = None, _discard(path, why, desc)
    if ck is None:
        return state, None, None, note
    sd = {k: _unplain(v) for k, v in ck["state"].items()}
    sd = {k: (v.to(state.theta.device) if torch.is_tensor(v) else v) for k, v in sd.items()}
    a = ck["anneal"]
    carry = _Carry(beta=a["beta"].clone(), log_z=a["log_z"].clone(),
                   families=a["families"].clone(),
                   records={k: list(v) for k, v in ck["records"].items()})
    return replace(state, **sd), carry, carry.stage, note


# -- the run -----------------------------------------------------------------------------------

def _fresh_carry(cfg: _Config) -> _Carry:
    z = torch.zeros(cfg.G, dtype=torch.float64)
    fam = torch.arange(cfg.R, dtype=torch.int64).repeat(cfg.G)
    return _Carry(beta=torch.full((cfg.G,), cfg.beta_start, dtype=torch.float64), log_z=z,
                  families=fam)


def _result(state, carry: _Carry, cfg: _Config, **extra) -> AnnealingRun:
    recs = {k: (torch.stack(v) if v else torch.zeros(0, cfg.G, dtype=torch.int64 if k == "n_families"
                                                      else torch.float64))
            for k, v in carry.records.items()}
    done = bool((carry.beta >= cfg.beta_target).all())
    K = carry.stage
    if done:
        status, msg = "converged", (f"every population reached beta_target = {cfg.beta_target:g} "
                                    f"({K} stages)")
    else:
        status, msg = "max_stages", (
            f"stopped after max_stages = {cfg.max_stages} stages with populations at beta = "
            f"{[round(float(b), 6) for b in carry.beta]} < beta_target = {cfg.beta_target:g}; "
            "raise max_stages (a run with a checkpoint_path resumes where it stopped) or lower "
            "ess_min (fewer, coarser stages)")
    return AnnealingRun(
        theta=state.theta, loss=state.loss, state=state, betas=recs["beta"],
        ess_fraction=recs["ess_fraction"], n_families=recs["n_families"],
        family_count=recs["family_count"], acceptance=recs["acceptance"],
        step_size=recs["step_size"], log_evidence=carry.log_z.clone(),
        families=carry.families.clone(), n_populations=cfg.G, n_stages=K, status=status,
        converged=done, message=msg, **extra)


def population_annealing(theta: torch.Tensor, potential, *, generator: torch.Generator,
                         beta_target: float = 1.0, beta_start: float = 0.0, n_populations: int = 2,
                         ess_min: float = 0.5, n_moves: int = 10, method: str = "hmc",
                         step_size=0.1, n_leapfrog: int | None = None, precond=None,
                         target_accept: float | None = None, adapt_step_size: bool = True,
                         max_stages: int = 1000, kernel=None, kernel_label: str | None = None,
                         checkpoint_path=None, progress: bool = False,
                         desc: str = "annealing") -> AnnealingRun:
    """Population annealing of ``p_beta ∝ exp(-beta loss - prior)`` from ``beta_start`` to
    ``beta_target`` (stage rules in the module doc): per stage and population, the next beta
    keeps ``ESS >= ess_min * R`` for ``w_i = exp(-(beta' - beta) loss_i)``,
    ``log Z += logsumexp(-(beta' - beta) loss) - log R``, systematic resampling, then
    ``n_moves`` exact transitions at beta'.

    theta : (E, D) finite float32/float64 initial population, E = ``n_populations`` * R, R >= 2;
        row ``g * R + i`` is member i of population g. Every row must be an independent draw of
        ``p_beta_start`` - the prior when ``beta_start`` is 0 (e.g.
        ``posterior.sample_prior(E, generator=g)``); the caller draws it.
    potential : an :class:`ExactPotential` (``grad(theta, beta)`` with ``info["loss"]``,
        ``energy(theta, beta)``; ``beta`` an (E,) tensor of per-row weights).
    generator : torch.Generator on theta's device: G uniforms per stage (resampling), then the
        transitions' draws. Its state is checkpointed.
    beta_target > beta_start >= 0 : the schedule's ends.
    n_populations : G independent populations (G >= 2 gives error bars from their spread).
    ess_min : in (0, 1), the conditional-ESS fraction each stage keeps (0.5 is the usual choice).
    n_moves : transitions per stage (>= 1);  method : "hmc" (default) or "mala".
    step_size : initial step size (number or (E,) tensor; HMC leapfrog step, MALA ``eps``).
    n_leapfrog : HMC leapfrog steps per transition (None: 5; not used by MALA).
    precond : (D,) diagonal preconditioner (prior variances for a network posterior).
    target_accept : acceptance the between-stage step-size update aims at (default 0.8 for HMC,
        0.574 for MALA);  adapt_step_size : update step sizes between stages (default True).
    max_stages : stop (status "max_stages", not an exception) after this many stages.
    kernel : optional transition ``(state, generator) -> (state, info)`` used for the moves
        instead of ``method``: it must leave every row's tempered law at ``state.beta`` (the (E,)
        per-row weight) invariant - e.g. a blocked-Gibbs step with an exact readout draw at
        ``state.beta`` and an HMC move of the other block - and return ``info["accept_prob"]``
        (E,). ``state.step_size`` is still adapted between stages. kernel_label : a name for it
        (required with kernel; stored in the checkpoint's configuration).
    checkpoint_path : file written atomically after every stage (checksummed, weights-only); an
        existing one resumes the run bit for bit; a damaged one is moved aside with a
        :class:`CheckpointDiscardedWarning`; one of another configuration raises ValueError.
    progress : tqdm bar over the stages (stderr);  desc : its label.
    """
    kw = dict(n_populations=n_populations, beta_start=beta_start, beta_target=beta_target,
              ess_min=ess_min, method=method, n_leapfrog=n_leapfrog, target_accept=target_accept,
              adapt_step_size=adapt_step_size, n_moves=n_moves, max_stages=max_stages,
              kernel=kernel, kernel_label=kernel_label, progress=progress)
    cfg = _check_args(theta, potential, generator, kw)
    path = _checkpoint_file(checkpoint_path)
    b_init = cfg.beta_start if cfg.beta_start > 0 else cfg.beta_target
    state = hmc_init(theta, potential, step_size=step_size, precond=precond,
                     beta=torch.full((theta.shape[0],), b_init, dtype=theta.dtype,
                                     device=theta.device))
    cfg_json = _config_json(cfg, state)
    state, carry, resumed, note = _load(path, state, cfg, cfg_json, generator, desc)
    carry = carry or _fresh_carry(cfg)
    t0 = time.perf_counter()
    with tqdm(total=cfg.max_stages, initial=carry.stage, disable=not progress, desc=desc,
              leave=False, unit="stage") as bar:
        while bool((carry.beta < cfg.beta_target).any()) and carry.stage < cfg.max_stages:
            state = _stage(state, potential, generator, cfg, carry)
            if path is not None:
                _save(path, cfg_json, state, carry, generator)
            bar.update(1)
            bar.set_postfix(beta=f"{float(carry.beta.min()):.4g}", refresh=False)
    return _result(state, carry, cfg, resumed_from=resumed, discarded_checkpoint=note,
                   seconds=time.perf_counter() - t0)
