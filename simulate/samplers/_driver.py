"""The one loop that runs a sampler: burn-in, thinning, progress bar, divergence detection,
periodic atomic checkpoints and exact resume.

Divergence follows the policy of :mod:`richlazy.simulate` (one ``diverged`` flag per ensemble
member): by default (``throw=True``) the driver raises :class:`SamplerDivergedError` as soon as a
chain produces NaN/inf; with ``throw=False`` it records the diverged chains in
``ChainRun.diverged`` and runs to the end.

The step function is pure: ``step_fn(state, generator) -> (state, info)``. The driver owns the
``torch.Generator``; a checkpoint stores the sampler state, the generator state, the step counter,
every observation recorded so far and the running acceptance statistics, so a resumed run
continues the very same random stream and ends bit-for-bit where an uninterrupted run would.

Metropolis-adjusted steps (:func:`mala_step`, :func:`hmc_step`) report ``info["accept_prob"]``
(E,); the driver keeps its running mean per chain (``ChainRun.acceptance``) and watches it in
blocks of ``acceptance_window`` steps: a chain whose mean acceptance over a block falls below
``min_acceptance`` raises :class:`LowAcceptanceError` (or, with ``throw=False``, is flagged in
``ChainRun.low_acceptance``). Steps that report ``info["adapting"]`` true (step-size warm-up) are
left out of both. Replica exchange reports ``info["swap_accept"]`` (K-1,) (NaN: pair not
proposed); the driver averages it per pair over the steps that proposed it (``ChainRun.swap_rates``).
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass, replace

import torch
from tqdm.auto import tqdm

from .._divergence import SamplerDivergedError, member_list, nonfinite_members
from ..checks import check_count, check_generator, check_real

__all__ = ["ChainRun", "SamplerDivergedError", "LowAcceptanceError", "run_chain", "atomic_torch_save",
           "atomic_write"]


class LowAcceptanceError(SamplerDivergedError):
    """A Metropolis-adjusted chain stopped moving: its mean acceptance probability over a block
    of ``acceptance_window`` steps fell below ``min_acceptance``; the message says which chains,
    when, and what to change (a smaller step size, fewer leapfrog steps, adaptation)."""


@dataclass(frozen=True)
class ChainRun:
    """Result of :func:`run_chain`.

    samples : dict name -> tensor (S, ...) of observations (on CPU), S = number recorded.
    sample_steps : (S,) step index of each observation.
    state : final sampler state.
    n_steps : total steps taken;  seconds : wall time of this call (excludes earlier sessions);
    resumed_from : step a checkpoint was resumed from (None when started fresh).
    diverged : (E,) bool (on CPU), chains that produced NaN/inf at a divergence check (all False
        unless ``run_chain(..., throw=False)``; with the default ``throw=True`` it raises).
    acceptance : (E,) float64 (on CPU) mean ``info["accept_prob"]`` per chain over the steps not
        marked ``info["adapting"]`` (over all steps when every step adapted), including earlier
        sessions of a resumed run; None when the step reports no acceptance (e.g. ULA).
    low_acceptance : (E,) bool (on CPU), chains whose block mean acceptance fell below
        ``min_acceptance`` (only with ``throw=False``); None when the step reports no acceptance.
    swap_rates : (K-1,) float64 (on CPU) mean ``info["swap_accept"]`` per adjacent temperature
        pair over the steps that proposed it; None without replica exchange.
    """

    samples: dict
    sample_steps: torch.Tensor
    state: object
    n_steps: int
    seconds: float
    resumed_from: int | None
    diverged: torch.Tensor
    acceptance: torch.Tensor | None = None
    low_acceptance: torch.Tensor | None = None
    swap_rates: torch.Tensor | None = None


def atomic_write(path, write: Callable, *, mode: int = 0o644) -> pathlib.Path:
    """Write a file atomically: ``write(fh)`` fills a temporary file (binary handle) in the same
    folder, which is flushed, synced and renamed over ``path``, so a reader never sees a half-written
    file and an interrupted write leaves the old file (or none) in place. The file gets ``mode``
    (default 0644, readable by others) limited by the process umask."""
    if not callable(write):
        raise TypeError(f"write must be callable (a function of the open binary file), got "
                        f"{type(write).__name__}")
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, mode & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def atomic_torch_save(obj, path: pathlib.Path) -> None:
    """``torch.save(obj)`` to ``path`` through :func:`atomic_write`: a reader never sees a
    half-written checkpoint."""
    atomic_write(path, lambda fh: torch.save(obj, fh))


class _RunStats:
    """Running acceptance and swap statistics of :func:`run_chain` (float64 sums on the chains'
    device; everything a checkpoint needs to continue them bit for bit)."""

    KEYS = ("acc_sum", "acc_n", "acc_sum_all", "acc_n_all", "blk_sum", "blk_n", "low",
            "swap_sum", "swap_n")

    def __init__(self, device):
        self.device = device
        self.acc_sum = self.acc_sum_all = self.blk_sum = self.low = None
        self.acc_n = self.acc_n_all = self.blk_n = 0
        self.swap_sum = self.swap_n = None

    def to_dict(self):
        return {k: (v.detach().cpu() if torch.is_tensor(v) else v)
                for k, v in ((k, getattr(self, k)) for k in self.KEYS)}

    def load(self, d):
        for k in self.KEYS:
            v = d.get(k)
            setattr(self, k, v.to(self.device) if torch.is_tensor(v) and k != "low" else v)

    def add_acceptance(self, ap, adapting: bool, n_chains: int):
        if not (torch.is_tensor(ap) and ap.shape == (n_chains,)):
            raise ValueError(f"info['accept_prob'] must be a tensor of shape ({n_chains},) (one "
                             f"acceptance probability per chain), got "
                             f"{tuple(ap.shape) if torch.is_tensor(ap) else type(ap).__name__}")
        ap = ap.detach().to(device=self.device, dtype=torch.float64)
        if self.acc_sum is None:
            self.acc_sum = torch.zeros(n_chains, dtype=torch.float64, device=self.device)
            self.acc_sum_all = self.acc_sum.clone()
            self.blk_sum = self.acc_sum.clone()
            self.low = torch.zeros(n_chains, dtype=torch.bool)
        self.acc_sum_all += ap
        self.acc_n_all += 1
        if not adapting:
            self.acc_sum += ap
            self.acc_n += 1
            self.blk_sum += ap
            self.blk_n += 1

    def add_swaps(self, sa):
        if not (torch.is_tensor(sa) and sa.ndim == 1):
            raise ValueError("info['swap_accept'] must be a 1-D tensor (one rate per adjacent pair)")
        sa = sa.detach().to(device=self.device, dtype=torch.float64)
        if self.swap_sum is None:
            self.swap_sum = torch.zeros_like(sa)
            self.swap_n = torch.zeros(sa.shape, dtype=torch.int64, device=self.device)
        fin = torch.isfinite(sa)
        self.swap_sum += torch.where(fin, sa, torch.zeros((), dtype=sa.dtype, device=sa.device))
        self.swap_n += fin.to(torch.int64)

    def close_block(self):
        """Mean acceptance (E,) on CPU of the block just completed; starts a new block."""
        m = (self.blk_sum / self.blk_n).cpu()
        self.blk_sum.zero_()
        self.blk_n = 0
        return m

    def acceptance(self):
        if self.acc_sum is None:
            return None
        if self.acc_n:
            return (self.acc_sum / self.acc_n).cpu()
        return (self.acc_sum_all / self.acc_n_all).cpu()

    def swap_rates(self):
        if self.swap_sum is None:
            return None
        return (self.swap_sum / self.swap_n).cpu()


def _state_to_dict(state):
    if not is_dataclass(state):
        raise TypeError(f"sampler state must be a dataclass, got {type(state).__name__}")
    return {f.name: getattr(state, f.name) for f in fields(state)}


def run_chain(
    state,
    step_fn: Callable,
    *,
    n_steps: int,
    generator: torch.Generator,
    burn_in: int = 0,
    thin: int = 1,
    observe: Callable | None = None,
    checkpoint_path: str | os.PathLike | None = None,
    checkpoint_every: int = 1000,
    config: dict | None = None,
    divergence_check_every: int = 50,
    divergence_hint: str = "reduce the step size or the temperature",
    progress: bool = True,
    desc: str = "sampling",
    throw: bool = True,
    acceptance_window: int = 200,
    min_acceptance: float | None = 0.05,
) -> ChainRun:
    """Run ``n_steps`` steps of ``step_fn`` from ``state``.

    Parameters
    ----------
    state : dataclass with a ``theta`` tensor field (e.g. :class:`LangevinState`).
    step_fn : ``(state, generator) -> (state, info)``; ``info`` may hold a ``"loss"`` tensor.
    n_steps : total number of steps (including burn-in).
    generator : the torch.Generator the steps draw from (its state is checkpointed).
    burn_in : steps before the first observation;  thin : observe every ``thin`` steps after it.
    observe : ``state -> dict[str, tensor]`` small observables recorded at each kept step.
    checkpoint_path : file for periodic atomic checkpoints; if it exists, the run resumes from it
        (after checking that ``config`` matches the one stored).
    checkpoint_every : steps between checkpoints.
    config : JSON-serialisable description of the run; stored in checkpoints and compared on
        resume so that a checkpoint of a different run is never continued silently.
    divergence_check_every : steps between NaN/inf checks of the positions (per chain: row e of
        ``state.theta``) and of ``info["loss"]`` (entry e when it has one entry per chain).
    divergence_hint : advice appended to the divergence error.
    progress : show a tqdm progress bar on stderr.
    throw : raise :class:`SamplerDivergedError` at the first check that finds a diverged chain
        (default). With False the diverged chains are flagged in ``ChainRun.diverged`` and the
        run goes on (chains are independent rows, so the others are unaffected; observables
        recorded from a diverged chain are NaN/inf). The same holds for low acceptance
        (:class:`LowAcceptanceError`, ``ChainRun.low_acceptance``).
    acceptance_window : block length (steps, not counting adaptation steps) over which the mean
        ``info["accept_prob"]`` of every chain is compared with ``min_acceptance``.
    min_acceptance : in [0, 1), or None to disable the check (default 0.05).
    """
    n_steps = check_count("n_steps", n_steps, minimum=1)
    burn_in = check_count("burn_in", burn_in, minimum=0)
    thin = check_count("thin", thin, minimum=1)
    checkpoint_every = check_count("checkpoint_every", checkpoint_every, minimum=1)
    divergence_check_every = check_count("divergence_check_every", divergence_check_every, minimum=1)
    if burn_in >= n_steps and observe is not None:
        raise ValueError(f"burn_in ({burn_in}) must be smaller than n_steps ({n_steps})")
    check_generator(generator)
    if not isinstance(throw, bool):
        raise TypeError(f"throw must be a bool, got {throw!r}")
    acceptance_window = check_count("acceptance_window", acceptance_window, minimum=1)
    if min_acceptance is not None:
        min_acceptance = check_real("min_acceptance", min_acceptance)
        if not 0.0 <= min_acceptance < 1.0:
            raise ValueError(f"min_acceptance must be in [0, 1) or None (no check), got {min_acceptance}")
    theta0 = getattr(state, "theta", None)
    if (not is_dataclass(state) or not torch.is_tensor(theta0) or theta0.ndim != 2
            or not hasattr(state, "step")):
        raise TypeError("state must be a sampler state (a dataclass with a theta tensor (E, D) and a step "
                        f"count, e.g. langevin_init(theta)), got {type(state).__name__}")
    if not callable(step_fn):
        raise TypeError(f"step_fn must be callable (state, generator) -> (state, info), got "
                        f"{type(step_fn).__name__}")
    if observe is not None and not callable(observe):
        raise TypeError(f"observe must be callable state -> dict or None, got {type(observe).__name__}")
    n_chains = state.theta.shape[0]
    diverged = torch.zeros(n_chains, dtype=torch.bool)
    cfg_json = json.dumps(config if config is not None else {}, sort_keys=True, default=str)
    cfg_hash = hashlib.sha256(cfg_json.encode()).hexdigest()

    records: dict[str, list] = {}
    steps_rec: list[int] = []
    resumed_from = None
    stats = _RunStats(state.theta.device)
    if checkpoint_path is not None:
        checkpoint_path = pathlib.Path(checkpoint_path)
        if checkpoint_path.exists():
            ck = torch.load(checkpoint_path, map_location="cpu", weights_only=False)
            if ck.get("config_hash") != cfg_hash:
                raise ValueError(
                    f"checkpoint {checkpoint_path.name} belongs to a different run configuration; "
                    "delete it or pass the same config to resume"
                )
            sd = ck["state"]
            sd = {k: (v.to(state.theta.device) if torch.is_tensor(v) else v) for k, v in sd.items()}
            state = replace(state, **sd)
            generator.set_state(ck["generator"])
            records = {k: list(v) for k, v in ck["records"].items()}
            steps_rec = list(ck["sample_steps"])
            if "diverged" in ck:
                diverged = ck["diverged"].clone()
            if "stats" in ck:
                stats.load(ck["stats"])
            resumed_from = int(state.step)

    def save():
        if checkpoint_path is None:
            return
        atomic_torch_save(
            {
                "config": cfg_json,
                "config_hash": cfg_hash,
                "state": {k: (v.detach().cpu() if torch.is_tensor(v) else v)
                          for k, v in _state_to_dict(state).items()},
                "generator": generator.get_state(),
                "records": records,
                "sample_steps": steps_rec,
                "diverged": diverged,
                "stats": stats.to_dict(),
            },
            checkpoint_path,
        )

    t0 = time.perf_counter()
    start = int(state.step)
    bar = tqdm(total=n_steps, initial=start, disable=not progress, desc=desc, leave=False,
               mininterval=1.0, unit="step")
    info = {}
    try:
        while state.step < n_steps:
            before = int(state.step)
            state, info = step_fn(state, generator)
            k = int(state.step)
            if k != before + 1:
                raise ValueError(f"step_fn must advance state.step by one (from {before} it returned "
                                 f"{k}); build the new state with langevin_step or step=state.step + 1")
            if k % divergence_check_every == 0 or k == n_steps:
                loss = info.get("loss") if isinstance(info, dict) else None
                bad = nonfinite_members(n_chains, state.theta, loss).cpu()
                if bool(bad.any()):
                    if throw:
                        raise SamplerDivergedError(
                            f"{desc}: non-finite parameters or loss at step {k} in "
                            f"{member_list(bad, 'chain')} (checked every {divergence_check_every} steps); "
                            f"{divergence_hint}"
                        )
                    diverged |= bad
            if isinstance(info, dict) and "accept_prob" in info:
                stats.add_acceptance(info["accept_prob"], bool(info.get("adapting", False)), n_chains)
                if stats.blk_n == acceptance_window:
                    blk = stats.close_block()
                    if min_acceptance is not None:
                        low = blk < min_acceptance
                        if bool(low.any()):
                            if throw:
                                raise LowAcceptanceError(
                                    f"{desc}: mean acceptance probability over the last "
                                    f"{acceptance_window} steps fell below min_acceptance = "
                                    f"{min_acceptance:g} at step {k} in {member_list(low, 'chain')} "
                                    f"(lowest {float(blk.min()):.3g}); reduce step_size (HMC: or "
                                    "n_leapfrog * step_size), adapt it during warm-up (adapt=True), "
                                    "or lower min_acceptance (None disables the check)"
                                )
                            stats.low |= low
            if isinstance(info, dict) and "swap_accept" in info:
                stats.add_swaps(info["swap_accept"])
            if observe is not None and k > burn_in and (k - burn_in) % thin == 0:
                obs = observe(state)
                for name, v in obs.items():
                    records.setdefault(name, []).append(v.detach().to("cpu", copy=True))
                steps_rec.append(k)
            if k % checkpoint_every == 0 and k < n_steps:
                save()
            bar.update(1)
            if progress and k % 500 == 0 and isinstance(info, dict) and "loss" in info:
                bar.set_postfix(loss=f"{float(info['loss'].mean()):.3g}", refresh=False)
    finally:
        bar.close()
    save()
    samples = {k: torch.stack(v) for k, v in records.items()}
    return ChainRun(
        samples=samples,
        sample_steps=torch.tensor(steps_rec, dtype=torch.long),
        state=state,
        n_steps=int(state.step),
        seconds=time.perf_counter() - t0,
        resumed_from=resumed_from,
        diverged=diverged,
        acceptance=stats.acceptance(),
        low_acceptance=None if stats.low is None else stats.low.clone(),
        swap_rates=stats.swap_rates(),
    )


