"""Progress reporting of long theory solves (one helper for every solver).

A solver that can run for minutes takes ``progress=`` and reports through :func:`as_progress`:

* ``False`` or ``None`` (default): silent;
* ``True``: one line per report on stderr, ``[solver] message (elapsed s)``, at most one line
  every ``min_interval`` seconds (stage changes and the final line always print);
* a callable: called with each message string (for a GUI, a logger or a test), unthrottled.

Theory never imports torch or tqdm; the lines are plain text so they interleave cleanly with the
validation runner's case lines.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numpy as np

__all__: list[str] = []


class _Progress:
    def __init__(self, sink: Callable[[str], None] | None, name: str, min_interval: float):
        self._sink = sink
        self._name = name
        self._min_interval = min_interval
        self._t0 = time.perf_counter()
        self._last = -float("inf")

    @property
    def enabled(self) -> bool:
        return self._sink is not None

    def __call__(self, message: str, *, force: bool = False) -> None:
        if self._sink is None:
            return
        now = time.perf_counter()
        if not force and now - self._last < self._min_interval:
            return
        self._last = now
        self._sink(f"[{self._name}] {message} ({now - self._t0:.0f} s)")


def _stderr_line(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def as_progress(progress, name: str, *, min_interval: float = 10.0) -> _Progress:
    """The reporter for a solver's ``progress=`` option (see the module docstring)."""
    if progress is None or isinstance(progress, (bool, np.bool_)):
        return _Progress(_stderr_line if progress else None, name, min_interval)
    if callable(progress):
        return _Progress(progress, name, 0.0)
    raise TypeError(f"progress must be a bool, None or a callable taking a message string, got "
                    f"{type(progress).__name__} {progress!r}")
