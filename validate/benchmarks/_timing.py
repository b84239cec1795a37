"""Timing helpers shared by the benchmarks (one copy; benchmarks print ratios of these times)."""

from __future__ import annotations

import statistics
import time

__all__ = ["mean_time", "median_time", "sync"]


def sync(device) -> None:
    """Wait for queued CUDA work on ``device`` (a torch.device); nothing on the CPU."""
    if getattr(device, "type", None) == "cuda":
        import torch

        torch.cuda.synchronize(device)


def median_time(fn, *, min_time: float = 0.0, min_repeats: int = 1, device=None):
    """``(median seconds, last result, repeats)`` of ``fn()`` over at least ``min_repeats`` calls
    and at least ``min_time`` seconds in total (each call synchronised on ``device``)."""
    times, out = [], None
    t_start = time.perf_counter()
    while len(times) < min_repeats or time.perf_counter() - t_start < min_time:
        t0 = time.perf_counter()
        out = fn()
        sync(device)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out, len(times)


def mean_time(fn, device, *, min_time: float = 1.0, min_reps: int = 5) -> float:
    """Mean seconds per call of a fast ``fn`` after one warm-up call: calls run back to back
    (synchronised every 5 calls) until ``min_time`` seconds and ``min_reps`` calls."""
    fn()
    sync(device)
    reps, total = 0, 0.0
    t0 = time.perf_counter()
    while total < min_time or reps < min_reps:
        fn()
        reps += 1
        if reps % 5 == 0 or reps >= min_reps:
            sync(device)
            total = time.perf_counter() - t0
    sync(device)
    return (time.perf_counter() - t0) / reps
