"""The one loop that runs a sampler: burn-in, thinning, progress bar, divergence detection,
periodic atomic checkpoints and exact resume.

Divergence follows the policy of :mod:`richlazy.simulate` (one ``diverged`` flag per ensemble
member): by default (``throw=True``) the driver raises :class:`SamplerDivergedError` as soon as a
chain produces NaN/inf; with ``throw=False`` it records the diverged chains in
``ChainRun.diverged`` and runs to the end.

The step function is pure: ``step_fn(state, generator) -> (state, info)``. The driver owns the
``torch.Generator``; a checkpoint stores the sampler state, the generator state, the step counter
and every observation recorded so far, so a resumed run continues the very same random stream
and ends bit-for-bit where an uninterrupted run would.
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
from ..checks import check_count, check_generator

__all__ = ["ChainRun", "SamplerDivergedError", "run_chain", "atomic_torch_save", "atomic_write"]


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
    """

    samples: dict
    sample_steps: torch.Tensor
    state: object
    n_steps: int
    seconds: float
    resumed_from: int | None
    diverged: torch.Tensor


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
        recorded from a diverged chain are NaN/inf).
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
    )


