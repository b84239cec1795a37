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
import io
import json
import os
import pathlib
import re
import socket
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass, replace

import numpy as np
import torch
from tqdm.auto import tqdm

from .._divergence import SamplerDivergedError, member_list, nonfinite_members
from ..checks import check_count, check_generator, check_nonneg_float, check_real

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


# temporary files of atomic_write: <name>.rltmp-<host>-<pid>.<random>.tmp (older versions wrote
# <name>.<8 random characters>.tmp)
_TMP_NAME = re.compile(r"^.+\.rltmp-(?P<host>[A-Za-z0-9_]*)-(?P<pid>[0-9]+)\.[a-z0-9_]+\.tmp$")
_LEGACY_TMP_NAME = re.compile(r"^.+\.[a-z0-9_]{8}\.tmp$")


def _host_tag() -> str:
    """This machine's name, reduced to ``[A-Za-z0-9_]`` (at most 32 characters)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", socket.gethostname())[:32]


def _temp_prefix(path: pathlib.Path) -> str:
    """Prefix of the temporary file of ``path``: it names the writer (host and process id)."""
    return f"{path.name}.rltmp-{_host_tag()}-{os.getpid()}."


def atomic_write(path, write: Callable, *, mode: int = 0o644) -> pathlib.Path:
    """Write a file atomically: ``write(fh)`` fills a temporary file (binary handle) in the same
    folder, which is flushed, synced and renamed over ``path``, so a reader never sees a half-written
    file and an interrupted write leaves the old file (or none) in place. The file gets ``mode``
    (default 0644, readable by others; permission bits, an int in [0, 0o7777]) limited by the
    process umask."""
    mode = check_count("mode", mode, maximum=0o7777)
    if not callable(write):
        raise TypeError(f"write must be callable (a function of the open binary file), got "
                        f"{type(write).__name__}")
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(path), suffix=".tmp", dir=path.parent)
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


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` of this machine still runs (POSIX; elsewhere assumed alive)."""
    if pid == os.getpid() or os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. another user's process: it exists
        return True
    return True


_DEAD_WRITER_GRACE_S = 60.0  # a dead writer's file must also be this old (another PID namespace
#                              with the same host name could hold a live writer of that pid)


def _is_orphan(path: pathlib.Path, now: float, min_age_s: float) -> bool:
    """Whether ``path`` is a temporary file of :func:`atomic_write` that nobody will finish."""
    m = _TMP_NAME.match(path.name)
    if m is None and not _LEGACY_TMP_NAME.match(path.name):
        return False
    try:
        age = now - path.stat().st_mtime
    except OSError:
        return False
    if m is not None and m["host"] == _host_tag():  # a writer of this machine: judged by its process
        return age > min(min_age_s, _DEAD_WRITER_GRACE_S) and not _pid_alive(int(m["pid"]))
    return age > min_age_s


def clean_orphaned_temp_files(folder, *, min_age_s: float = 600.0) -> list[pathlib.Path]:
    """Remove the temporary files that :func:`atomic_write` left in ``folder`` and its subfolders
    when its process was killed mid-write; returns the removed paths ([] if ``folder`` is absent).

    A temporary file of a writer on this machine is removed once that process no longer runs
    (and the file is a minute old); one of another machine sharing the folder, or of an older
    version (which did not name the writer), once it has not been modified for ``min_age_s``
    seconds (default 10 minutes). Files
    not named like these temporary files are never touched, nor are symbolic links."""
    if not isinstance(folder, (str, os.PathLike)):
        raise TypeError(f"folder must be a path, got {type(folder).__name__}")
    min_age_s = check_nonneg_float("min_age_s", min_age_s)
    root = pathlib.Path(folder)
    if not root.is_dir():
        return []
    now, removed = time.time(), []
    for dirpath, _, names in os.walk(root):
        for name in names:
            p = pathlib.Path(dirpath) / name
            if not name.endswith(".tmp") or p.is_symlink() or not _is_orphan(p, now, min_age_s):
                continue
            try:
                p.unlink()
            except FileNotFoundError:  # its writer finished (renamed it) meanwhile
                continue
            removed.append(p)
    return removed


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


# -- checkpoint files ---------------------------------------------------------------------------
# A checkpoint is  MAGIC  +  SHA-256 of the payload (64 hex digits)  +  "\n"  +  payload, where the
# payload is torch.save of a dict of tensors and plain values, read back with weights_only=True.
_CKPT_MAGIC = b"richlazy-checkpoint sha256\n"
_PLAIN = (type(None), bool, int, float, str)


def _plain(name: str, v):
    """``v`` as something the weights-only unpickler accepts: CPU tensors, None/bool/int/float/str
    and lists, tuples and str-keyed dicts of them (numpy arrays become ``{"__ndarray__": tensor}``,
    numpy scalars Python numbers); anything else is a TypeError naming ``name``."""
    if torch.is_tensor(v):
        return v.detach().cpu()
    if isinstance(v, np.ndarray) and v.dtype != object:
        return {"__ndarray__": torch.from_numpy(np.ascontiguousarray(v).copy())}
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, _PLAIN):
        return v
    if isinstance(v, (list, tuple)):
        return type(v)(_plain(name, x) for x in v)
    if isinstance(v, dict) and all(isinstance(k, str) for k in v):
        return {k: _plain(name, x) for k, x in v.items()}
    raise TypeError(f"sampler state field {name} holds a {type(v).__name__}; a checkpointed state "
                    "may hold only tensors, numpy arrays, numbers, strings, None and lists, tuples "
                    "and dicts of them")


def _unplain(v):
    """Undo :func:`_plain`'s wrapping of numpy arrays."""
    if isinstance(v, dict) and set(v) == {"__ndarray__"} and torch.is_tensor(v["__ndarray__"]):
        return v["__ndarray__"].numpy()
    return v


def _state_to_dict(state):
    """The fields of a sampler state (a dataclass) as plain values (see :func:`_plain`)."""
    if not is_dataclass(state):
        raise TypeError(f"sampler state must be a dataclass, got {type(state).__name__}")
    return {f.name: _plain(f.name, getattr(state, f.name)) for f in fields(state)}


def _write_checkpoint(obj: dict, path: pathlib.Path) -> None:
    """Write ``obj`` atomically as a checksummed checkpoint (header, then torch.save payload)."""
    buf = io.BytesIO()
    torch.save(obj, buf)
    payload = buf.getvalue()
    header = _CKPT_MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n"
    atomic_write(path, lambda fh: (fh.write(header), fh.write(payload)))


def _read_checkpoint(path: pathlib.Path):
    """``(content, None)`` of a checkpoint whose header and checksum check out and whose payload
    the weights-only unpickler accepts (tensors and plain values: it never runs code), else
    ``(None, reason)``."""
    try:
        data = pathlib.Path(path).read_bytes()
    except OSError as exc:
        return None, f"unreadable ({exc.strerror or type(exc).__name__})"
    n = len(_CKPT_MAGIC)
    if not data.startswith(_CKPT_MAGIC) or data[n + 64:n + 65] != b"\n":
        return None, "no checksum header (damaged, or not written by this version of run_chain)"
    digest, payload = data[n:n + 64], data[n + 65:]
    if hashlib.sha256(payload).hexdigest().encode() != digest:
        return None, "checksum mismatch (the file is damaged or truncated)"
    try:
        ck = torch.load(io.BytesIO(payload), map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any refusal means: not a checkpoint we can use
        first = (str(exc).strip().splitlines() or [""])[0][:160]
        return None, f"refused by the weights-only loader ({type(exc).__name__}: {first})"
    return ck, None


def _tensor_like(v, ref, *, shape=None) -> bool:
    """``v`` is a tensor with ``ref``'s dtype and shape (or ``shape``)."""
    return (torch.is_tensor(v) and v.dtype == ref.dtype
            and tuple(v.shape) == tuple(ref.shape if shape is None else shape))


def _state_problem(sd, state) -> str | None:
    """Why the stored state ``sd`` cannot continue ``state`` (None if it can)."""
    names = {f.name for f in fields(state)}
    if not isinstance(sd, dict) or set(sd) != names:
        return f"its state does not have the fields of {type(state).__name__} ({sorted(names)})"
    step = sd["step"]
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        return f"its state has step {step!r}, not a count"
    for k, v in sd.items():
        ref = getattr(state, k)
        if torch.is_tensor(ref) and not _tensor_like(v, ref):
            return f"its state field {k} is not a {ref.dtype} tensor of shape {tuple(ref.shape)}"
    return None


def _int_list(v) -> bool:
    return isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in v)


def _checkpoint_problem(ck: dict, state) -> str | None:
    """Why the loaded checkpoint ``ck`` cannot resume ``state`` (None when every field it needs
    is present and well typed)."""
    bad = _state_problem(ck.get("state"), state)
    if bad:
        return bad
    g = ck.get("generator")
    if not (torch.is_tensor(g) and g.dtype == torch.uint8 and g.ndim == 1):
        return "its generator state is missing or not a uint8 tensor"
    steps, recs = ck.get("sample_steps"), ck.get("records")
    if not _int_list(steps):
        return "its sample_steps are missing or not a list of ints"
    if not (isinstance(recs, dict) and all(
            isinstance(k, str) and isinstance(v, list) and len(v) == len(steps)
            and all(torch.is_tensor(x) for x in v) for k, v in recs.items())):
        return "its records are missing or not lists of tensors, one per recorded step"
    E = state.theta.shape[0]
    if "diverged" in ck and not _tensor_like(ck["diverged"], torch.zeros(0, dtype=torch.bool),
                                             shape=(E,)):
        return f"its diverged flags are not a bool tensor of shape ({E},)"
    st = ck.get("stats", {})
    if not (isinstance(st, dict) and set(st) <= set(_RunStats.KEYS) and all(
            v is None or torch.is_tensor(v) or (isinstance(v, int) and not isinstance(v, bool))
            for v in st.values())):
        return "its acceptance statistics are not a dict of tensors and counts"
    return None


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
    discarded = None
    if checkpoint_path is not None:
        checkpoint_path = pathlib.Path(checkpoint_path)
        if checkpoint_path.is_dir():
            raise ValueError(f"checkpoint_path {str(checkpoint_path)!r} is a folder; give a file path")
        ck = None
        if checkpoint_path.exists():
            ck, discarded = _resume(checkpoint_path, state, generator, cfg_hash, desc)
        if ck is not None:
            sd = {k: _unplain(v) for k, v in ck["state"].items()}
            sd = {k: (v.to(state.theta.device) if torch.is_tensor(v) else v) for k, v in sd.items()}
            state = replace(state, **sd)
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
        _write_checkpoint(
            {
                "config": cfg_json,
                "config_hash": cfg_hash,
                "state": _state_to_dict(state),
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
        discarded_checkpoint=discarded,
    )


