"""The files of :func:`run_chain`: atomic writes (and the removal of the temporary files a killed
writer leaves behind), and the checksummed checkpoint format with the checks that decide whether a
checkpoint can be resumed (:mod:`._driver` resumes or discards it)."""

from __future__ import annotations

import hashlib
import io
import os
import pathlib
import re
import socket
import tempfile
import time
from collections.abc import Callable
from dataclasses import fields, is_dataclass

import numpy as np
import torch

from ..checks import check_count, check_nonneg_float

__all__ = ["atomic_write", "atomic_torch_save", "clean_orphaned_temp_files"]


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


# -- checkpoint files ---------------------------------------------------------------------------
# A checkpoint is  MAGIC  +  SHA-256 of the payload (64 hex digits)  +  "\n"  +  payload, where the
# payload is torch.save of a dict of tensors and plain values, read back with weights_only=True.
_CKPT_MAGIC = b"richlazy-checkpoint sha256\n"
_PLAIN = (type(None), bool, int, float, str)
#: the running statistics a checkpoint may carry (the fields of the driver's ``_RunStats``)
_STATS_KEYS = ("acc_sum", "acc_n", "acc_sum_all", "acc_n_all", "blk_sum", "blk_n", "low",
               "swap_sum", "swap_n")


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
    if not (isinstance(st, dict) and set(st) <= set(_STATS_KEYS) and all(
            v is None or torch.is_tensor(v) or (isinstance(v, int) and not isinstance(v, bool))
            for v in st.values())):
        return "its acceptance statistics are not a dict of tensors and counts"
    return None
