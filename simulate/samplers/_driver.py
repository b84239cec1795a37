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
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, is_dataclass, replace

import torch
from tqdm.auto import tqdm

from .._divergence import SamplerDivergedError, member_list, nonfinite_members
from ..checks import check_count, check_generator, check_real
from ._checkpoint import (
    _STATS_KEYS,
    _checkpoint_problem,
    _read_checkpoint,
    _state_to_dict,
    _unplain,
    _write_checkpoint,
    atomic_torch_save,
    atomic_write,
    clean_orphaned_temp_files,
)

__all__ = ["ChainRun", "SamplerDivergedError", "LowAcceptanceError", "CheckpointDiscardedWarning",
           "run_chain", "atomic_torch_save", "atomic_write", "clean_orphaned_temp_files"]


class LowAcceptanceError(SamplerDivergedError):
    """A Metropolis-adjusted chain stopped moving: its mean acceptance probability over a block
    of ``acceptance_window`` steps fell below ``min_acceptance``; the message says which chains,
    when, and what to change (a smaller step size, fewer leapfrog steps, adaptation)."""


class CheckpointDiscardedWarning(UserWarning):
    """:func:`run_chain` found a checkpoint it cannot trust (damaged or truncated, not written by
    it, holding anything but tensors and plain values, or with missing or ill-typed fields),
    moved it aside to ``<name>.discarded`` and ran the chain from the start; the message names
    the file and the reason (also in ``ChainRun.discarded_checkpoint``)."""


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
    discarded_checkpoint : None, or which checkpoint file was discarded and why (the chain then
        ran from the start; see :class:`CheckpointDiscardedWarning`).
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
    discarded_checkpoint: str | None = None


class _RunStats:
    """Running acceptance and swap statistics of :func:`run_chain` (float64 sums on the chains'
    device; everything a checkpoint needs to continue them bit for bit)."""

    KEYS = _STATS_KEYS

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


def _discard(path: pathlib.Path, why: str, desc: str) -> str:
    """Move the untrusted checkpoint ``path`` aside (``<name>.discarded``; deleted if that fails),
    warn with :class:`CheckpointDiscardedWarning` and return the note."""
    aside = path.with_name(path.name + ".discarded")
    try:
        os.replace(path, aside)
        where = f"moved aside to {aside.name}"
    except OSError:
        path.unlink(missing_ok=True)
        where = "deleted"
    note = f"Discarded checkpoint {path.name}: {why}; {where}, the chain ran from the start."
    warnings.warn(f"{desc}: {note}", CheckpointDiscardedWarning, stacklevel=4)
    return note


def _resume(path: pathlib.Path, state, generator, cfg_hash: str, desc: str):
    """Load the checkpoint ``path`` for ``state``: ``(ck, None)`` when it can be resumed (the
    generator then holds its state), ``(None, note)`` when it was discarded. A sound checkpoint of
    another run configuration raises ValueError."""
    ck, why = _read_checkpoint(path)
    if ck is not None and not (isinstance(ck, dict) and isinstance(ck.get("config_hash"), str)):
        ck, why = None, "it is not a dict with a config_hash"
    if ck is not None and ck["config_hash"] != cfg_hash:
        raise ValueError(f"checkpoint {path.name} belongs to a different run configuration; "
                         "delete it or pass the same config to resume")
    if ck is not None:
        why = _checkpoint_problem(ck, state)
    if why is None:
        try:
            generator.set_state(ck["generator"])
        except (RuntimeError, TypeError, ValueError) as exc:
            why = f"its generator state does not fit the generator ({type(exc).__name__})"
    if why is not None:
        return None, _discard(path, why, desc)
    return ck, None


@dataclass(frozen=True)
class _Settings:
    """The checked arguments of :func:`run_chain` that its loop reads."""

    n_steps: int
    burn_in: int
    thin: int
    observe: Callable | None
    checkpoint_every: int
    divergence_check_every: int
    divergence_hint: str
    progress: bool
    desc: str
    throw: bool
    acceptance_window: int
    min_acceptance: float | None


def _check_arguments(state, step_fn, generator, *, n_steps, burn_in, thin, observe,
                     checkpoint_every, divergence_check_every, divergence_hint, progress, desc,
                     throw, acceptance_window, min_acceptance) -> _Settings:
    """The arguments of :func:`run_chain`, checked (TypeError/ValueError naming the first bad one)."""
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
    return _Settings(n_steps, burn_in, thin, observe, checkpoint_every, divergence_check_every,
                     divergence_hint, progress, desc, throw, acceptance_window, min_acceptance)


def _checkpoint_file(checkpoint_path) -> pathlib.Path:
    """``checkpoint_path`` as a path (ValueError when it names a folder)."""
    path = pathlib.Path(checkpoint_path)
    if path.is_dir():
        raise ValueError(f"checkpoint_path {str(path)!r} is a folder; give a file path")
    return path


class _Chain:
    """What one :func:`run_chain` call carries from step to step, and where it is checkpointed."""

    def __init__(self, state, generator, config, opts: _Settings):
        self.state, self.generator, self.opts = state, generator, opts
        self.n_chains = state.theta.shape[0]
        self.diverged = torch.zeros(self.n_chains, dtype=torch.bool)
        self.cfg_json = json.dumps(config if config is not None else {}, sort_keys=True, default=str)
        self.cfg_hash = hashlib.sha256(self.cfg_json.encode()).hexdigest()
        self.records: dict[str, list] = {}
        self.steps_rec: list[int] = []
        self.resumed_from = None
        self.stats = _RunStats(state.theta.device)
        self.discarded = None
        self.path = None

    def restore(self, ck: dict) -> None:
        """Continue from the checkpoint ``ck`` that :func:`_resume` accepted."""
        state = self.state
        sd = {k: _unplain(v) for k, v in ck["state"].items()}
        sd = {k: (v.to(state.theta.device) if torch.is_tensor(v) else v) for k, v in sd.items()}
        self.state = replace(state, **sd)
        self.records = {k: list(v) for k, v in ck["records"].items()}
        self.steps_rec = list(ck["sample_steps"])
        if "diverged" in ck:
            self.diverged = ck["diverged"].clone()
        if "stats" in ck:
            self.stats.load(ck["stats"])
        self.resumed_from = int(self.state.step)

    def save(self) -> None:
        """Write the checkpoint (nothing without a checkpoint path)."""
        if self.path is None:
            return
        _write_checkpoint(
            {
                "config": self.cfg_json,
                "config_hash": self.cfg_hash,
                "state": _state_to_dict(self.state),
                "generator": self.generator.get_state(),
                "records": self.records,
                "sample_steps": self.steps_rec,
                "diverged": self.diverged,
                "stats": self.stats.to_dict(),
            },
            self.path,
        )

    def advance(self, step_fn):
        """One step of ``step_fn``: ``(k, info)``, k the new step (ValueError unless it is one more)."""
        before = int(self.state.step)
        self.state, info = step_fn(self.state, self.generator)
        k = int(self.state.step)
        if k != before + 1:
            raise ValueError(f"step_fn must advance state.step by one (from {before} it returned "
                             f"{k}); build the new state with langevin_step or step=state.step + 1")
        return k, info

    def check_divergence(self, k: int, info) -> None:
        """At a check step, raise on (or, without throw, flag) chains with non-finite positions or loss."""
        o = self.opts
        if not (k % o.divergence_check_every == 0 or k == o.n_steps):
            return
        loss = info.get("loss") if isinstance(info, dict) else None
        bad = nonfinite_members(self.n_chains, self.state.theta, loss).cpu()
        if bool(bad.any()):
            if o.throw:
                raise SamplerDivergedError(
                    f"{o.desc}: non-finite parameters or loss at step {k} in "
                    f"{member_list(bad, 'chain')} (checked every {o.divergence_check_every} steps); "
                    f"{o.divergence_hint}"
                )
            self.diverged |= bad

    def track_acceptance(self, k: int, info) -> None:
        """Add the step's acceptance and swap rates to the statistics; check each full block."""
        if isinstance(info, dict) and "accept_prob" in info:
            self.stats.add_acceptance(info["accept_prob"], bool(info.get("adapting", False)), self.n_chains)
            if self.stats.blk_n == self.opts.acceptance_window:
                self._check_block(k)
        if isinstance(info, dict) and "swap_accept" in info:
            self.stats.add_swaps(info["swap_accept"])

    def _check_block(self, k: int) -> None:
        """Close the acceptance block ending at step k; raise on (or flag) chains below min_acceptance."""
        o = self.opts
        blk = self.stats.close_block()
        if o.min_acceptance is None:
            return
        low = blk < o.min_acceptance
        if bool(low.any()):
            if o.throw:
                raise LowAcceptanceError(
                    f"{o.desc}: mean acceptance probability over the last "
                    f"{o.acceptance_window} steps fell below min_acceptance = "
                    f"{o.min_acceptance:g} at step {k} in {member_list(low, 'chain')} "
                    f"(lowest {float(blk.min()):.3g}); reduce step_size (HMC: or "
                    "n_leapfrog * step_size), adapt it during warm-up (adapt=True), "
                    "or lower min_acceptance (None disables the check)"
                )
            self.stats.low |= low

    def record(self, k: int) -> None:
        """Record the observables at step k when it is a kept step (after burn-in, every thin)."""
        o = self.opts
        if o.observe is not None and k > o.burn_in and (k - o.burn_in) % o.thin == 0:
            obs = o.observe(self.state)
            for name, v in obs.items():
                self.records.setdefault(name, []).append(v.detach().to("cpu", copy=True))
            self.steps_rec.append(k)

    def result(self, t0: float) -> ChainRun:
        """The :class:`ChainRun` of the chain, its wall time counted from ``t0``."""
        samples = {k: torch.stack(v) for k, v in self.records.items()}
        return ChainRun(
            samples=samples,
            sample_steps=torch.tensor(self.steps_rec, dtype=torch.long),
            state=self.state,
            n_steps=int(self.state.step),
            seconds=time.perf_counter() - t0,
            resumed_from=self.resumed_from,
            diverged=self.diverged,
            acceptance=self.stats.acceptance(),
            low_acceptance=None if self.stats.low is None else self.stats.low.clone(),
            swap_rates=self.stats.swap_rates(),
            discarded_checkpoint=self.discarded,
        )


def _run_steps(chain: _Chain, step_fn) -> None:
    """The loop of :func:`run_chain`: step, check, record and checkpoint, with a progress bar."""
    o = chain.opts
    bar = tqdm(total=o.n_steps, initial=int(chain.state.step), disable=not o.progress, desc=o.desc,
               leave=False, mininterval=1.0, unit="step")
    try:
        while chain.state.step < o.n_steps:
            k, info = chain.advance(step_fn)
            chain.check_divergence(k, info)
            chain.track_acceptance(k, info)
            chain.record(k)
            if k % o.checkpoint_every == 0 and k < o.n_steps:
                chain.save()
            bar.update(1)
            if o.progress and k % 500 == 0 and isinstance(info, dict) and "loss" in info:
                bar.set_postfix(loss=f"{float(info['loss'].mean()):.3g}", refresh=False)
    finally:
        bar.close()


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
    opts = _check_arguments(state, step_fn, generator, n_steps=n_steps, burn_in=burn_in, thin=thin,
                            observe=observe, checkpoint_every=checkpoint_every,
                            divergence_check_every=divergence_check_every,
                            divergence_hint=divergence_hint, progress=progress, desc=desc,
                            throw=throw, acceptance_window=acceptance_window,
                            min_acceptance=min_acceptance)
    chain = _Chain(state, generator, config, opts)
    if checkpoint_path is not None:
        chain.path = _checkpoint_file(checkpoint_path)
        if chain.path.exists():  # resumed here, so that a discard warning names run_chain's caller
            ck, chain.discarded = _resume(chain.path, state, generator, chain.cfg_hash, desc)
            if ck is not None:
                chain.restore(ck)
    t0 = time.perf_counter()
    _run_steps(chain, step_fn)
    chain.save()
    return chain.result(t0)
