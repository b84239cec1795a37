"""One run at a time per output folder: an exclusive ``flock`` on ``<folder>/.lock``.

A second run into a folder that another run holds fails at once (ValueError naming the folder and
the holder's process id; the command line turns it into one line and exit code 2) instead of
waiting: a validation or sweep may hold its folder for hours. The lock is released when the run
ends, however it ends (the operating system drops it with the process); the ``.lock`` file itself
stays (removing it would race with a run that just opened it). Within one process the lock is
reentrant: the command line takes it (so that its error names ``--out``) and the library
function it calls takes it again.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import threading
from collections.abc import Iterator

__all__ = ["out_lock", "LOCK_NAME"]

LOCK_NAME = ".lock"
_HELD: dict[str, int] = {}  # folders this process holds -> nesting depth
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
    key = os.path.realpath(folder)
    with _HELD_GUARD:
        nested = key in _HELD
        if nested:
            _HELD[key] += 1
    if nested:
        try:
            yield pathlib.Path(folder)
        finally:
            with _HELD_GUARD:
                _HELD[key] -= 1
        return
    with _flock(folder, name):
        with _HELD_GUARD:
            _HELD[key] = 1
        try:
            yield pathlib.Path(folder)
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
            raise ValueError(f"{name} {str(folder)!r} is in use by another richlazy run "
                             f"({_holder(fh)}, lock file {LOCK_NAME}); wait for it to finish or "
                             "choose another folder") from None
        try:
            fh.seek(0)
            fh.truncate()
            fh.write(f"{os.getpid()}\n")
            fh.flush()
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
