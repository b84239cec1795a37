"""One run at a time per output folder: an exclusive ``flock`` on ``<folder>/.lock``.

A second run into a folder that another run holds fails at once (ValueError naming the folder and
the holder's process id; the command line turns it into one line and exit code 2) instead of
waiting: a validation or sweep may hold its folder for hours. The lock is released when the run
ends, however it ends (the operating system drops it with the process); the ``.lock`` file itself
stays (removing it would race with a run that just opened it). Within one process the lock is
reentrant: the command line takes it (so that its error names ``--out``) and the library
function it calls takes it again.

Sharded sweeps (``richlazy sweep ... --shard I/N``, one Slurm array task each) run side by side in
one folder: each holds ``.lock`` *shared* (so no unsharded run can start beside them, and none
starts while one holds it) and its own ``.lock.shard-I-of-N`` exclusively (the same shard twice is
refused); a shard is refused while a shard of another N holds its lock.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import re
import threading
import time
from collections.abc import Iterator

__all__ = ["out_lock", "shard_lock", "shard_lock_name", "running_shards", "LOCK_NAME"]

LOCK_NAME = ".lock"
SHARD_LOCK_TRIES = 20  # a shard tries its own lock this often, 50 ms apart (see running_shards)
_HELD: dict[str, int] = {}  # locks this process holds (folder, or folder and shard) -> depth
_HELD_GUARD = threading.Lock()


def _holder(fh) -> str:
    fh.seek(0)
    text = fh.read(32).strip()
    return f"pid {text}" if text.isdigit() else "unknown process"


@contextlib.contextmanager
def out_lock(folder, *, name: str = "out") -> Iterator[pathlib.Path]:
    """Hold the exclusive lock of the existing folder ``folder`` for the ``with`` block.

    ValueError naming ``name`` when another process holds it. Where ``fcntl`` does not exist
    (Windows) no lock is taken.
    """
    with _reentrant(os.path.realpath(folder), lambda: _flock(folder, name)):
        yield pathlib.Path(folder)


@contextlib.contextmanager
def shard_lock(folder, index: int, count: int, *, name: str = "out") -> Iterator[pathlib.Path]:
    """Hold the locks of shard ``index`` of ``count`` in the existing folder ``folder``: ``.lock``
    shared and ``.lock.shard-I-of-N`` exclusive, for the ``with`` block (reentrant within a
    process, like :func:`out_lock`).

    ValueError naming ``name`` when an unsharded run holds the folder, when this shard already
    runs, or when a shard of another ``count`` runs in it.
    """
    lock = shard_lock_name(index, count)
    with _reentrant(f"{os.path.realpath(folder)}\0{lock}",
                    lambda: _shard_flock(folder, index, count, name)):
        yield pathlib.Path(folder)


def shard_lock_name(index: int, count: int) -> str:
    """File name of the lock of shard ``index`` of ``count``."""
    return f"{LOCK_NAME}.shard-{index}-of-{count}"


_SHARD_LOCK = re.compile(r"^\.lock\.shard-(\d+)-of-(\d+)$")


@contextlib.contextmanager
def _reentrant(key: str, acquire) -> Iterator[None]:
    with _HELD_GUARD:
        nested = key in _HELD
        if nested:
            _HELD[key] += 1
    if nested:
        try:
            yield
        finally:
            with _HELD_GUARD:
                _HELD[key] -= 1
        return
    with acquire():
        with _HELD_GUARD:
            _HELD[key] = 1
        try:
            yield
        finally:
            with _HELD_GUARD:
                del _HELD[key]


@contextlib.contextmanager
def _flock(folder, name: str) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    path = pathlib.Path(folder) / LOCK_NAME
    with open(path, "a+", encoding="ascii") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            shards = running_shards(folder)
            holder = (f"sharded runs --shard {', '.join(shards)}" if shards
                      else f"{_holder(fh)}, lock file {LOCK_NAME}")
            raise ValueError(f"{name} {str(folder)!r} is in use by another richlazy run "
                             f"({holder}); wait for it to finish or choose another folder") from None
        try:
            _write_pid(fh)
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _write_pid(fh) -> None:
    fh.seek(0)
    fh.truncate()
    fh.write(f"{os.getpid()}\n")
    fh.flush()


def _try_flock(fh, op, *, tries: int = 1) -> bool:
    """A non-blocking ``flock(op)``, tried ``tries`` times 50 ms apart; whether it was taken."""
    import fcntl

    for k in range(tries):
        try:
            fcntl.flock(fh, op | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if k + 1 < tries:
                time.sleep(0.05)
    return False


def running_shards(folder, *, other_than: int | None = None) -> list[str]:
    """``"I/N"`` of the shards whose lock in ``folder`` is held now (those of ``N == other_than``
    left out), in order. A probe holds a free shard lock (shared) for a moment; a shard starting
    then retries its own lock for a while (:func:`_shard_flock`)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return []
    found = []
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    for fname in names:
        m = _SHARD_LOCK.match(fname)
        if m is None or int(m[2]) == other_than:
            continue
        try:
            with open(pathlib.Path(folder) / fname, "a+", encoding="ascii") as fh:
                if _try_flock(fh, fcntl.LOCK_SH):
                    fcntl.flock(fh, fcntl.LOCK_UN)
                else:
                    found.append((int(m[2]), int(m[1])))
        except OSError:
            continue
    return [f"{i}/{n}" for n, i in sorted(found)]


@contextlib.contextmanager
def _shard_flock(folder, index: int, count: int, name: str) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    folder = pathlib.Path(folder)
    where = f"{name} {str(folder)!r}"
    with open(folder / LOCK_NAME, "a+", encoding="ascii") as common:
        # shared with the other shards; refused while an unsharded run holds it (exclusively)
        if not _try_flock(common, fcntl.LOCK_SH):
            raise ValueError(f"{where} is in use by an unsharded richlazy run ({_holder(common)}, "
                             f"lock file {LOCK_NAME}); a shard cannot run beside it: wait for it "
                             "to finish or choose another folder")
        try:
            own_name = shard_lock_name(index, count)
            with open(folder / own_name, "a+", encoding="ascii") as own:
                # retried: another run may be probing this lock for a moment (running_shards)
                if not _try_flock(own, fcntl.LOCK_EX, tries=SHARD_LOCK_TRIES):
                    raise ValueError(f"{where}: shard {index}/{count} is already running "
                                     f"({_holder(own)}, lock file {own_name})")
                try:
                    # taken after our own lock, so of two shards of different N starting at once
                    # at least the later one sees the other
                    others = running_shards(folder, other_than=count)
                    if others:
                        raise ValueError(f"{where} has shards of another split running (--shard "
                                         f"{', '.join(others)}); every shard of one folder must "
                                         f"use the same N, got --shard {index}/{count}")
                    _write_pid(own)
                    yield
                finally:
                    fcntl.flock(own, fcntl.LOCK_UN)
        finally:
            fcntl.flock(common, fcntl.LOCK_UN)
