"""Run validation cases and collect a :class:`Report` (no printing; the CLI renders)."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import hashlib
import json
import os
import pathlib
import re
import shutil
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable

from richlazy.theory.checks import check_int

from ..rendering._report import (
    CaseResult,
    Report,
    ReportWarning,
    atomic_write_text,
    merge_cases,
    read_report_cases,
    write_report,
)
from ._compare import case_verdict
from ._lock import out_lock
from ._registry import CaseContext, CaseOutcome, CaseSpec, case_threads, get_cases

__all__ = ["run_suite", "execute_case", "resolve_device_name", "prepare_out_dir", "checkpoint_key"]


def resolve_device_name(device: str) -> str:
    """Resolve ``auto|cpu|cuda`` to a concrete torch device string (ValueError if unavailable)."""
    from richlazy.simulate import resolve_device

    return str(resolve_device(device))


def _version():
    from richlazy import __version__  # the one source: pyproject's version, installed

    return __version__


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def prepare_out_dir(out_dir, *, name: str = "out_dir") -> pathlib.Path:
    """Create the report folder ``out_dir`` if needed and check that files can be written in it.

    Raises ValueError naming ``name`` (the CLI passes ``--out``) when the path is an existing
    file, cannot be created, or is not writable, before any case runs. Temporary files that
    interrupted atomic writes left in it are removed
    (:func:`richlazy.simulate.clean_orphaned_temp_files`).
    """
    if not isinstance(out_dir, (str, pathlib.PurePath)) or str(out_dir) == "":
        raise ValueError(f"{name} must be a folder path, got {out_dir!r}")
    path = pathlib.Path(out_dir)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{name} {str(path)!r} is an existing file; a folder is required")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise ValueError(f"{name} {str(path)!r} is not a writable folder "
                         f"({exc.strerror or type(exc).__name__})") from None
    from richlazy.simulate import clean_orphaned_temp_files

    clean_orphaned_temp_files(path)
    return path


def checkpoint_key(spec: CaseSpec, *, suite: str, seed: int, device: str) -> dict:
    """What a case's checkpoints depend on: name, suite (size), seed, device, richlazy version
    and a hash of the source file defining the case. Its hash names the checkpoint folder, so
    another seed or suite never meets the checkpoints of this one."""
    mod = sys.modules.get(getattr(spec.fn, "__module__", ""), None)
    src = getattr(mod, "__file__", None)
    try:
        code = hashlib.sha256(pathlib.Path(src).read_bytes()).hexdigest()[:16] if src else ""
    except OSError:  # pragma: no cover
        code = ""
    return {"case": spec.name, "suite": suite, "seed": int(seed), "device": device,
            "richlazy_version": _version(), "case_source_sha256": code}


def _key_dir(root: pathlib.Path, key: dict) -> pathlib.Path:
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return root / "checkpoints" / _safe(key["case"]) / digest


def _is_stale_checkpoint_error(exc: BaseException) -> bool:
    # run_chain refuses a checkpoint whose stored run configuration differs from the requested one
    return isinstance(exc, ValueError) and "checkpoint" in str(exc) and "configuration" in str(exc)


def _run_case(spec: CaseSpec, ctx: CaseContext, threads: int, discarded: list | None = None):
    """Run the case; the messages of the checkpoints its chains discarded
    (:class:`richlazy.simulate.CheckpointDiscardedWarning`) are appended to ``discarded`` instead
    of being shown, other warnings are shown as usual."""
    from richlazy.simulate import CheckpointDiscardedWarning

    with warnings.catch_warnings():  # restores the filters and showwarning on exit
        warnings.simplefilter("always", CheckpointDiscardedWarning)
        show = warnings.showwarning

        def note_or_show(message, category, *args, **kwargs):
            if issubclass(category, CheckpointDiscardedWarning) and discarded is not None:
                discarded.append(str(message))
            else:
                show(message, category, *args, **kwargs)

        warnings.showwarning = note_or_show
        with case_threads(ctx, threads):
            outcome = spec.fn(ctx)
    if not isinstance(outcome, CaseOutcome):
        raise TypeError(f"case {spec.name} returned {type(outcome).__name__}, not CaseOutcome")
    return outcome


def execute_case(spec: CaseSpec, *, suite: str, seed: int, device: str, out_dir: pathlib.Path,
                 threads: int = 1, progress: bool = False, cache: dict | None = None) -> CaseResult:
    """Run one case into ``out_dir`` (its figures and checkpoints) and return its result; a case
    that raises comes back failed with its traceback. Runs wherever an executor puts it."""
    out_dir = pathlib.Path(out_dir)
    dev = device
    case_dir = out_dir / "figures" / _safe(spec.name)
    key = checkpoint_key(spec, suite=suite, seed=seed, device=dev)
    ck_dir = _key_dir(out_dir, key)
    case_dir.mkdir(parents=True, exist_ok=True)
    ck_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(ck_dir / "key.json", json.dumps(key, indent=2, sort_keys=True) + "\n")
    ctx = CaseContext(size=suite, device=dev, seed=seed, out_dir=case_dir,
                      checkpoint_dir=ck_dir, progress=progress, name=spec.name,
                      cache={} if cache is None else cache)
    t0 = time.perf_counter()
    error = None
    extra_note = ""
    discarded: list[str] = []  # checkpoints the case's chains could not trust (damaged, planted)
    try:
        try:
            outcome = _run_case(spec, ctx, threads, discarded)
        except Exception as exc:
            if not _is_stale_checkpoint_error(exc):
                raise
            # same key but the case now asks for another run configuration (code changed
            # under an unchanged version): never continue it; start this case afresh
            shutil.rmtree(ck_dir)
            ck_dir.mkdir(parents=True)
            atomic_write_text(ck_dir / "key.json", json.dumps(key, indent=2, sort_keys=True) + "\n")
            extra_note = (f"Discarded stale checkpoints ({exc}); the case ran from the start.")
            ctx.figures.clear()
            outcome = _run_case(spec, ctx, threads, discarded)
    except Exception:  # a failing case must not stop the suite
        outcome = CaseOutcome(quantities=[])
        error = traceback.format_exc()
    secs = time.perf_counter() - t0
    names = list(outcome.figures) + [f for f in ctx.figures if f not in outcome.figures]
    figs = [str((case_dir / f).relative_to(out_dir)) for f in names]
    # verdict: error / not mixed / not equilibrated / agrees / disagrees (rule in
    # core._compare); only "agrees" passes
    verdict = case_verdict(outcome.quantities, error)
    notes = "\n\n".join(x for x in (outcome.notes, extra_note, *dict.fromkeys(discarded)) if x)
    return CaseResult(
        name=spec.name, paper=spec.paper, description=spec.description,
        passed=verdict == "agrees", seconds=secs, device=dev, seed=seed, suite=suite,
        quantities=list(outcome.quantities), figures=figs, params=dict(outcome.params),
        notes=notes, error=error, verdict=verdict,
    )


def _case_task(task: dict) -> CaseResult:
    """A case as an executor task: looked up by name on the worker (module-level, picklable)."""
    from ._registry import all_cases

    spec = all_cases()[task["name"]]
    return execute_case(spec, suite=task["suite"], seed=task["seed"], device=task["device"],
                        out_dir=pathlib.Path(task["out_dir"]), threads=task["threads"],
                        progress=False)


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
    executor="sequential",
    workers: int | None = None,
    outside_suite: bool = False,
) -> Report:
    """Run the cases of ``suite`` matching the glob ``only``; write the report into ``out_dir``.

    A case that raises is recorded as failed with its traceback (the other cases still run).
    Every case gets a verdict ("agrees", "disagrees", "not mixed", "not equilibrated", "error";
    rule in :func:`richlazy.validate.core._compare.case_verdict`) and passes iff it "agrees": a
    case whose chains have not mixed on some compared quantity that is not frozen fails as "not
    mixed", one with a frozen quantity that population annealing has not equilibrated as "not
    equilibrated".
    Every case runs with ``threads`` CPU threads for torch and for the BLAS/OpenMP pools of
    numpy/scipy (default 1: the quick cases use small tensors and small solves, and
    oversubscribed threads on shared cores slow them down by 10x).
    The report is rewritten (atomically) after every case, so an interrupted run keeps what it
    finished. ``out_dir/report.json`` and ``report.md`` also keep the cases of earlier runs into
    the same folder (a case run again replaces its entry; a damaged report.json is moved to
    ``report.json.damaged`` with a :class:`ReportWarning`); the returned :class:`Report` holds
    this run's cases only. One run at a time per folder: ``out_dir/.lock`` is held (flock) for the
    whole run, and a second run into a held folder raises ValueError at once. Long cases
    checkpoint into ``out_dir/checkpoints/<case>/<key>``, where the key hashes the suite,
    seed, device, richlazy version and the case's source file (:func:`checkpoint_key`): a
    rerun with the same arguments resumes, another seed or suite starts its own checkpoints,
    and a checkpoint the sampler driver finds to belong to another run configuration is
    discarded (with a note in the case's report) and the case rerun.

    ``executor`` runs the cases elsewhere, one task per case (see
    :func:`richlazy.validate.sweep`): ``"sequential"`` (default, this process), ``"dask-local"``
    with ``workers`` processes, a Dask scheduler address or a ``dask.distributed.Client``. The
    workers must see ``out_dir`` (one machine, or a shared file system). Cases then run without
    progress bars and each computes what it needs itself (no cache shared between cases); the
    report lists them in suite order whatever order they finish in. ``on_case_start`` is called
    when a case is handed to the executor.

    ``outside_suite``: ``only`` may also match declared cases that are not members of ``suite``;
    they run at the configuration they declare for it (``richlazy reproduce KEY --size quick``
    runs a full-suite case at its quick sizes this way). Their results say ``suite``.
    """
    from ..sweeps._executors import check_executor, open_executor
    from ..sweeps._run import check_seed

    if only is not None and not isinstance(only, str):
        raise TypeError(f"only must be a glob string or None, got {type(only).__name__}")
    for arg, value in (("progress", progress), ("outside_suite", outside_suite)):
        if not isinstance(value, bool):
            raise TypeError(f"{arg} must be a bool, got {value!r}")
    cases = get_cases(suite, only, outside_suite=outside_suite)
    if not cases:
        raise ValueError(f"no case of suite {suite!r} matches --only {only!r}; see `richlazy list`")
    seed = check_seed(seed)
    threads = check_int("threads", threads, minimum=1)
    check_executor(executor, workers)
    sequential = executor == "sequential"
    if sequential or device == "cpu":
        dev = resolve_device_name(device)
    else:
        dev = None  # decided by the cluster's workers below
    with contextlib.ExitStack() as stack:
        # the cluster is reached before anything is written: an unreachable scheduler leaves
        # no folder behind
        ex = None if sequential else stack.enter_context(open_executor(executor, workers=workers))
        out_dir = prepare_out_dir(out_dir)
        stack.enter_context(out_lock(out_dir, name="out_dir"))
        run = _SuiteRun(suite, seed, out_dir, [c.name for c in cases], on_case_end)
        if sequential:
            run.dev = dev
            cache: dict = {}  # shared by the cases of this run (see CaseContext.cache)
            for spec in cases:
                if on_case_start:
                    on_case_start(spec)
                run.record(execute_case(spec, suite=suite, seed=seed, device=dev,
                                        out_dir=out_dir, threads=threads, progress=progress,
                                        cache=cache))
            return run.report()
        if dev is None:
            if device == "cuda" and not ex.gpu:
                raise ValueError("device 'cuda' but no Dask worker has the GPU resource "
                                 "(start GPU workers with --resources GPU=1)")
            dev = "cuda" if ex.gpu else "cpu"
        run.dev = dev
        tasks = [{"name": c.name, "suite": suite, "seed": seed, "device": dev,
                  "out_dir": str(out_dir.resolve()), "threads": threads} for c in cases]
        if on_case_start:
            for spec in cases:
                on_case_start(spec)

        def done(task, res, error):
            if res is None:  # the worker died (twice) or the task could not run at all
                spec = next(c for c in cases if c.name == task["name"])
                res = CaseResult(name=spec.name, paper=spec.paper, description=spec.description,
                                 passed=False, seconds=float("nan"), device=dev, seed=seed,
                                 suite=suite, quantities=[], figures=[], params={}, notes="",
                                 error=error, verdict="error")
            run.record(res)

        ex.map(_case_task, tasks, done, gpu_flags=[dev.startswith("cuda")] * len(tasks))
    return run.report()


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


class _SuiteRun:
    """The cases one :func:`run_suite` call has finished, written after each into
    ``out_dir/report.json`` and ``report.md`` together with the earlier cases found there."""

    def __init__(self, suite, seed, out_dir, order, on_case_end):
        self.suite, self.seed, self.out_dir, self.order = suite, seed, out_dir, order
        self.on_case_end = on_case_end
        self.dev = None
        self.created = _now()
        self.results: dict[str, CaseResult] = {}
        self.earlier = _earlier_cases(out_dir)

    def report(self, cases=None) -> Report:
        """This run's cases in suite order (or ``cases``)."""
        if cases is None:
            cases = [self.results[n] for n in self.order if n in self.results]
        return Report(self.suite, self.dev, self.seed, self.created, _version(), cases)

    def record(self, res: CaseResult) -> None:
        res = dataclasses.replace(res, finished=_now())
        self.results[res.name] = res
        write_report(self.report(merge_cases(self.earlier, self.report().cases)), self.out_dir)
        if self.on_case_end:
            self.on_case_end(res)


def _earlier_cases(out_dir: pathlib.Path) -> list[CaseResult]:
    """The cases of the report.json an earlier run left in ``out_dir`` (read as plain JSON).
    A damaged one is moved to ``report.json.damaged`` with a :class:`ReportWarning`; the report
    then starts afresh."""
    path = out_dir / "report.json"
    if not path.exists():
        return []
    try:
        return read_report_cases(path)
    except (OSError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    aside = path.with_name("report.json.damaged")
    try:
        os.replace(path, aside)
        kept = f"kept as {aside.name}"
    except OSError:
        kept = "left in place"
    with warnings.catch_warnings():  # every time, not once per process
        warnings.simplefilter("always", ReportWarning)
        warnings.warn(f"{path} is not a readable richlazy report ({reason}); {kept}, starting a "
                      "new report", ReportWarning, stacklevel=2)
    return []
