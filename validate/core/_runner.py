"""Run validation cases and collect a :class:`Report` (no printing; the CLI renders)."""

from __future__ import annotations

import datetime as _dt
import pathlib
import re
import time
import traceback
from collections.abc import Callable

from richlazy.theory.checks import check_int

from ..rendering._report import CaseResult, Report, write_report
from ._registry import CaseContext, CaseOutcome, case_threads, get_cases

__all__ = ["run_suite", "resolve_device_name"]


def resolve_device_name(device: str) -> str:
    """Resolve ``auto|cpu|cuda`` to a concrete torch device string (ValueError if unavailable)."""
    from richlazy.simulate import resolve_device

    return str(resolve_device(device))


def _version():
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("richlazy")
    except PackageNotFoundError:  # pragma: no cover
        return "unknown"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def run_suite(
    suite: str = "quick",
    *,
    only: str | None = None,
    device: str = "auto",
    out_dir: str | pathlib.Path = "richlazy-report",
    seed: int = 0,
    progress: bool = True,
    on_case_start: Callable | None = None,
    on_case_end: Callable | None = None,
    threads: int = 1,
) -> Report:
    """Run the cases of ``suite`` matching the glob ``only``; write the report into ``out_dir``.

    A case that raises is recorded as failed with its traceback (the other cases still run).
    On the CPU every case runs with ``threads`` torch threads (default 1: the quick cases use
    small tensors, and oversubscribed OpenMP threads on shared cores slow them down by 10x).
    The report is rewritten after every case, so an interrupted run keeps what it finished;
    long cases checkpoint into ``out_dir/checkpoints`` and resume from there when rerun with
    the same arguments.
    """
    cases = get_cases(suite, only)
    if not cases:
        raise ValueError(f"no case of suite {suite!r} matches --only {only!r}; see `richlazy list`")
    seed = check_int("seed", seed, minimum=0)
    threads = check_int("threads", threads, minimum=1)
    dev = resolve_device_name(device)
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    created = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    results: list[CaseResult] = []
    cache: dict = {}  # shared by the cases of this run (see CaseContext.cache)
    for spec in cases:
        if on_case_start:
            on_case_start(spec)
        case_dir = out_dir / "figures" / _safe(spec.name)
        ck_dir = out_dir / "checkpoints" / _safe(spec.name)
        case_dir.mkdir(parents=True, exist_ok=True)
        ck_dir.mkdir(parents=True, exist_ok=True)
        ctx = CaseContext(size=suite, device=dev, seed=seed, out_dir=case_dir,
                          checkpoint_dir=ck_dir, progress=progress, name=spec.name, cache=cache)
        t0 = time.perf_counter()
        error = None
        try:
            with case_threads(ctx, threads):
                outcome = spec.fn(ctx)
            if not isinstance(outcome, CaseOutcome):
                raise TypeError(f"case {spec.name} returned {type(outcome).__name__}, not CaseOutcome")
        except Exception:  # a failing case must not stop the suite
            outcome = CaseOutcome(quantities=[])
            error = traceback.format_exc()
        secs = time.perf_counter() - t0
        names = list(outcome.figures) + [f for f in ctx.figures if f not in outcome.figures]
        figs = [str((case_dir / f).relative_to(out_dir)) for f in names]
        passed = error is None and bool(outcome.quantities) and all(q.passed for q in outcome.quantities)
        res = CaseResult(
            name=spec.name, paper=spec.paper, description=spec.description, passed=passed,
            seconds=secs, device=dev, seed=seed, suite=suite, quantities=list(outcome.quantities),
            figures=figs, params=dict(outcome.params), notes=outcome.notes, error=error,
        )
        results.append(res)
        report = Report(suite, dev, seed, created, _version(), results)
        write_report(report, out_dir)
        if on_case_end:
            on_case_end(res)
    return Report(suite, dev, seed, created, _version(), results)
