"""``sweep``: run an experiment over a parameter grid × replicates, resumably, on any executor."""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import numbers
import os
import pathlib
import socket
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from richlazy.theory.checks import check_int

from ._executors import open_executor
from ._registry import (
    SweepContext,
    SweepSpec,
    check_grid,
    config_json,
    get_sweep,
    grid_points,
)
from ._store import check_column_name, point_key, read_point, table_columns, write_point, write_table

__all__ = ["SweepResult", "SweepTask", "sweep", "run_task", "check_seed", "check_shard",
           "shard_tasks", "MAX_SEED"]

_DEVICES = ("auto", "cpu", "cuda")
MAX_SEED = 2**63 - 1  # the table's seed column is a 64-bit signed integer (Parquet int64)
TABLE_EVERY_S = 2.0  # rewrite the table at most this often while tasks finish (and at the end)


@dataclass(frozen=True)
class SweepTask:
    """One grid point × replicate, as sent to a worker (small and picklable)."""

    experiment: str
    fn: Callable | None          # None: look the registered experiment up by name on the worker
    config: dict
    grid_config: dict            # the keyword arguments passed to fn
    point: int
    replicate: int
    seed: int
    key: str
    device: str
    checkpoint_dir: str | None
    threads: int = 1
    progress: bool = False


def _version() -> str:
    from richlazy import __version__  # the one source: pyproject's version, installed

    return __version__


def _check_metrics(metrics) -> dict:
    if not isinstance(metrics, Mapping):
        raise TypeError(f"an experiment must return a mapping metric -> number, got "
                        f"{type(metrics).__name__}")
    out = {}
    for k, v in metrics.items():
        check_column_name(k, "metric", "metric names")
        if hasattr(v, "item") and getattr(v, "ndim", 0) == 0:
            v = v.item()
        if isinstance(v, bool):
            v = int(v)
        if not isinstance(v, numbers.Real):
            raise TypeError(f"metric {k!r} must be a number, got {v!r} ({type(v).__name__})")
        out[k] = int(v) if isinstance(v, numbers.Integral) else float(v)
    return out


def run_task(task: SweepTask) -> dict:
    """Run one task (on whichever process the executor chose); never raises for the experiment's
    own errors: they come back as ``{"error": ..., "traceback": ...}``."""
    from ..core._registry import limit_threads

    t0 = time.perf_counter()
    ck = None
    if task.checkpoint_dir is not None:
        ck = pathlib.Path(task.checkpoint_dir)
        ck.mkdir(parents=True, exist_ok=True)
    ctx = SweepContext(experiment=task.experiment, config=dict(task.config),
                       replicate=task.replicate, seed=task.seed, device=task.device,
                       checkpoint_dir=ck, progress=task.progress)
    fn = task.fn if task.fn is not None else get_sweep(task.experiment).fn
    result = {"worker": f"{socket.gethostname()}:{os.getpid()}", "device": task.device}
    try:
        with limit_threads(task.threads):
            metrics = _check_metrics(fn(ctx, **task.grid_config))
        result.update(metrics=metrics, error=None, traceback=None)
    except Exception as exc:
        result.update(metrics={}, error=f"{type(exc).__name__}: {exc}".splitlines()[0][:500],
                      traceback=traceback.format_exc())
    result["wall_s"] = time.perf_counter() - t0
    return result


@dataclass(frozen=True)
class SweepResult:
    """Outcome of :func:`sweep`.

    experiment : name.  grid : the checked grid.  rows : one dict per grid point × replicate in
    grid order (see :mod:`._store` for the columns); rows of tasks that did not finish (an
    interrupted run) are absent.  columns : table column order.  out : the sweep folder or None.
    resumed : number of rows read back from an earlier run.  files : table and figure files
    written (relative to ``out``).  executor : what ran the tasks.  shard : ``(index, count)`` of
    a sharded run (its rows are those of its slice; it writes no table or figures), else None.
    """

    experiment: str
    grid: dict
    rows: list
    columns: list
    out: pathlib.Path | None
    resumed: int
    executor: str
    files: list = field(default_factory=list)
    shard: tuple | None = None

    @property
    def n_failed(self) -> int:
        return sum(r["status"] != "ok" for r in self.rows)

    @property
    def ok(self) -> bool:
        """Every task finished without error."""
        return self.n_failed == 0

    def column(self, name: str) -> list:
        """The values of one column, in row order."""
        if name not in self.columns:
            raise ValueError(f"no column {name!r}; columns: {', '.join(self.columns)}")
        return [r.get(name) for r in self.rows]


def _resolve(fn):
    if isinstance(fn, str):
        try:
            spec = get_sweep(fn)
        except ValueError as exc:
            raise ValueError(f"fn: {exc}") from None
        return spec, spec.name, None, spec.params
    if isinstance(fn, SweepSpec):
        return fn, fn.name, None, fn.params
    if callable(fn):
        name = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"
        return None, name, fn, None
    raise TypeError(f"fn must be a registered experiment name, a SweepSpec or a callable "
                    f"fn(ctx, **config), got {type(fn).__name__}")


def check_seed(seed, name: str = "seed") -> int:
    """``seed`` as an int in [0, MAX_SEED] (ValueError/TypeError naming ``name``)."""
    seed = check_int(name, seed, minimum=0)
    if seed > MAX_SEED:
        raise ValueError(f"{name} must be <= {MAX_SEED} (2**63 - 1), got {seed}")
    return seed


MAX_REPLICATES = 10**6  # most replicates per grid point one sweep accepts


def _check_seeds(seeds) -> list[int]:
    if isinstance(seeds, numbers.Integral) and not isinstance(seeds, bool):
        n = check_int("seeds", seeds, minimum=1)
        if n > MAX_REPLICATES:
            raise ValueError(f"seeds must be <= {MAX_REPLICATES} replicates per grid point (each is "
                             f"a task with its own row), got {n}")
        return list(range(n))
    try:
        reps = [check_int("seeds", s, minimum=0) for s in seeds]
    except TypeError:
        raise TypeError(f"seeds must be a positive int (number of replicates) or a list of "
                        f"replicate indices, got {seeds!r}") from None
    if not reps or len(set(reps)) != len(reps):
        raise ValueError(f"seeds must list distinct replicate indices, got {seeds!r}")
    return reps


def check_shard(shard) -> tuple[int, int] | None:
    """``shard`` as ``(index, count)`` with ``0 <= index < count`` (or None)."""
    if shard is None:
        return None
    if isinstance(shard, (str, bytes)) or not hasattr(shard, "__len__") or len(shard) != 2:
        raise TypeError(f"shard must be a pair (index, count), got {shard!r}")
    count = check_int("shard count", shard[1], minimum=1)
    index = check_int("shard index", shard[0], minimum=0)
    if index >= count:
        raise ValueError(f"shard index must be < the shard count {count} (shards are numbered "
                         f"0 to {count - 1}), got {index}")
    return index, count


def shard_tasks(n_tasks: int, shard: tuple[int, int] | None) -> list[int]:
    """Positions (in grid order: point-major, then replicate) of the tasks of ``shard``: task k
    belongs to shard ``k mod count``."""
    if shard is None:
        return list(range(n_tasks))
    return list(range(shard[0], n_tasks, shard[1]))


def _prepare_out(out, manifest: dict, stack: contextlib.ExitStack,
                 shard: tuple[int, int] | None = None) -> pathlib.Path:
    """Create and lock (for the rest of ``stack``) the sweep folder, then write sweep.json.

    A sharded run holds its shard's lock instead of the folder's (shards run side by side) and
    records its shard count in sweep.json; a shard of another count is refused. An unsharded
    run's manifest has no shard count, so after it any split may start again."""
    from ..core._lock import out_lock, shard_lock
    from ..core._runner import prepare_out_dir
    from ..rendering._report import atomic_write_text

    path = prepare_out_dir(out, name="out")
    if shard is None:
        stack.enter_context(out_lock(path, name="out"))
    else:
        stack.enter_context(shard_lock(path, *shard, name="out"))
        manifest = dict(manifest, shards=shard[1])
    old = path / "sweep.json"
    if old.exists():
        try:
            prev = json.loads(old.read_text())
        except (OSError, ValueError):
            prev = {}
        if prev.get("experiment") not in (None, manifest["experiment"]):
            raise ValueError(f"out {str(path)!r} holds a sweep of {prev.get('experiment')!r}, not "
                             f"{manifest['experiment']!r}; choose another folder")
        if shard is not None and prev.get("shards") not in (None, shard[1]):
            n = prev["shards"]
            raise ValueError(f"out {str(path)!r} holds shards of a split into {n} (sweep.json); "
                             f"every shard of one folder must use the same N: run --shard I/{n}, "
                             f"or merge with the unsharded command first, got shard "
                             f"{shard[0]}/{shard[1]}")
    atomic_write_text(old, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return path


def sweep(
    fn,
    grid: Mapping,
    *,
    seeds=1,
    out=None,
    executor="sequential",
    workers: int | None = None,
    device: str = "auto",
    seed: int = 0,
    threads: int = 1,
    progress: bool = False,
    figures: bool = True,
    on_point_end: Callable | None = None,
    shard: tuple[int, int] | None = None,
) -> SweepResult:
    """Run ``fn`` on every point of ``grid`` × replicate and collect a tidy table.

    Parameters
    ----------
    fn : str, SweepSpec or callable
        a registered experiment (``richlazy sweep --list``) or any ``fn(ctx, **config) ->
        {metric: number}`` taking a :class:`SweepContext` (a plain function's grid keys are not
        checked against declared parameters; it must be importable by Dask workers).
    grid : mapping key -> list of values
        the Cartesian product is run; parameters not in the grid take their defaults. Checked
        before anything runs (unknown key, empty list, wrong type, out of range, repeats).
    seeds : int or list of int
        replicates per point (int n -> 0..n-1, n <= 10**6) or the replicate indices to run.
    out : folder or None
        where rows, checkpoints, the table (CSV and Parquet) and figures go. A rerun with the same
        folder skips finished tasks (failed ones run again) and a task restarts from its own
        checkpoints. None keeps nothing on disk (no resume). The folder is locked
        (``out/.lock``) while the tasks run: a second sweep into it raises ValueError at once.
    executor : "sequential" (default), "dask-local" (with ``workers``), a Dask scheduler
        address, or a ``dask.distributed.Client``. A scheduler address is connected to (within
        ``CONNECT_TIMEOUT_S`` seconds) before anything is written.
    device : "auto" | "cpu" | "cuda"
        for experiments that can use a GPU; "auto" uses CUDA when this process (sequential) or
        some Dask worker (resource ``GPU``) has it. Theory-only experiments run on the CPU.
    seed : base seed in [0, 2**63 - 1]; task streams are ``SeedSequence([seed, crc32(experiment),
        crc32(config), replicate, k])``, independent of executor and order.
    threads : CPU threads (torch and BLAS) per task (default 1).
    figures : write the experiment's standard figures into ``out/figures`` at the end.
    on_point_end : called with each finished row (e.g. to print progress).
    shard : ``(index, count)``, 0 <= index < count: run only the tasks k (in grid order, point
        by point, replicates within a point) with ``k mod count == index``, into the same folder
        as the whole sweep, and write no table or figures (a later unsharded run into ``out``
        reads every finished task back and writes them). Shards of one ``count`` may run at once
        from separate processes into one folder: each holds its own lock
        (``out/.lock.shard-I-of-N``) and ``out/.lock`` shared; an unsharded run, the same shard
        twice, or shards of another count are refused (ValueError), as is a shard count other
        than the one sweep.json records.

    Returns a :class:`SweepResult`. A failing task is recorded (status "failed", its error) and
    the sweep goes on. KeyboardInterrupt propagates after the finished rows are on disk.
    """
    spec, name, plain_fn, params = _resolve(fn)
    checked = check_grid(grid, params)
    reps = _check_seeds(seeds)
    shard = check_shard(shard)
    seed = check_seed(seed)
    threads = check_int("threads", threads, minimum=1)
    _check_options(device, executor, progress=progress, figures=figures, on_point_end=on_point_end)
    points = grid_points(checked, params)
    config_keys = list(params) if params is not None else list(checked)
    manifest = {"experiment": name, "grid": checked, "replicates": reps, "seed": seed,
                "richlazy_version": _version(),
                "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")}
    uses_gpu = spec.uses_gpu if spec is not None else True

    # the executor first: an unreachable scheduler leaves nothing on disk
    with open_executor(executor, workers=workers) as ex, contextlib.ExitStack() as held:
        out_path = _prepare_out(out, manifest, held, shard) if out is not None else None
        dev = "cpu"
        if uses_gpu and device != "cpu" and (device == "cuda" or ex.gpu):
            dev = "cuda"
        order = [(i, r) for i in range(len(points)) for r in reps]
        order = [order[k] for k in shard_tasks(len(order), shard)]  # a shard's slice
        shared = SweepTask(name, plain_fn, {}, {}, 0, 0, seed, "", dev, None, threads, progress)
        tasks, done = _plan_tasks(shared, points, checked, params, reps, set(order), out_path)
        resumed = len(done)
        metric_names = list(spec.metrics) if spec is not None else []
        rows = _Rows(name, order, done, config_keys, metric_names, out_path, shard, on_point_end)
        table_files: list = []
        try:
            ex.map(run_task, tasks, rows.finished, gpu_flags=[t.device == "cuda" for t in tasks])
        finally:  # also on Ctrl-C: the table holds exactly the finished rows
            if out_path is not None and shard is None:
                table_files[:] = rows.write_table()
        exname = ex.name

    in_order, cols = rows.in_order(), rows.columns()
    files = []
    if out_path is not None:
        files += table_files
        if figures and in_order and shard is None:
            files += _figure_files(spec, name, in_order, checked, _metrics_of(cols, rows.fixed), out_path)
    return SweepResult(name, checked, in_order, cols, out_path, resumed, exname, files, shard)


def _check_options(device, executor, *, progress, figures, on_point_end) -> None:
    """Check :func:`sweep`'s device, flags and callback (and CUDA for a sequential cuda sweep)."""
    if device not in _DEVICES:
        raise ValueError(f"device must be one of {_DEVICES}, got {device!r}")
    for flag, v in (("progress", progress), ("figures", figures)):
        if not isinstance(v, bool):
            raise TypeError(f"{flag} must be a bool, got {v!r}")
    if on_point_end is not None and not callable(on_point_end):
        raise TypeError(f"on_point_end must be callable or None, got {type(on_point_end).__name__}")
    if device == "cuda":
        import torch

        if executor == "sequential" and not torch.cuda.is_available():
            raise ValueError("device='cuda' but CUDA is not available on this machine")


def _plan_tasks(shared: SweepTask, points, checked, params, reps, mine, out_path):
    """The tasks of ``mine`` still to run (copies of ``shared``) and the finished rows read back."""
    tasks, done = [], {}
    for i, cfg in enumerate(points):
        text = config_json(cfg)
        grid_cfg = cfg if params is not None else {k: cfg[k] for k in checked}
        for r in reps:
            if (i, r) not in mine:
                continue
            key = point_key(shared.experiment, text, r, shared.seed)
            row = read_point(out_path, key) if out_path is not None else None
            if row is not None and row.get("status") == "ok":
                done[key] = row
                continue
            ck = str(out_path / "checkpoints" / key) if out_path is not None else None
            tasks.append(replace(shared, config=cfg, grid_config=grid_cfg, point=i, replicate=r,
                                 key=key, checkpoint_dir=ck))
    return tasks, done


class _Rows:
    """A sweep's rows by key as its tasks finish: point files, ``on_point_end`` and the table."""

    def __init__(self, name, order, done, config_keys, metric_names, out_path, shard, on_point_end):
        self.name, self.order, self.done = name, order, done
        self.config_keys, self.metric_names = config_keys, metric_names
        self.out_path, self.shard, self.on_point_end = out_path, shard, on_point_end
        self.fixed = set(table_columns(config_keys, []))
        self.last_table = time.monotonic()

    def in_order(self) -> list:
        """The rows in grid order (point-major, then replicate)."""
        by = {(row["point"], row["replicate"]): row for row in self.done.values()}
        return [by[k] for k in self.order if k in by]

    def columns(self) -> list:
        """The table's columns: the fixed ones, the declared metrics, then any other row keys."""
        names = list(self.metric_names)
        for row in self.done.values():
            for k in row:
                if k not in names and k not in self.fixed:
                    names.append(k)
        return table_columns(self.config_keys, names)

    def write_table(self) -> list:
        """Rewrite the table from the rows; returns its files."""
        return write_table(self.out_path, self.in_order(), self.columns())

    def finished(self, task: SweepTask, result, error) -> None:
        """Record the row of a finished ``task`` (the executor's ``on_done``)."""
        res = result or {}
        err = error or res.get("error")
        metrics = res.get("metrics") or {}
        row = {"experiment": self.name, "point": task.point, "replicate": task.replicate,
               "seed": task.seed, "key": task.key, **task.config,
               "status": "failed" if err else "ok", **metrics,
               "wall_s": float(res.get("wall_s", math.nan)), "device": task.device,
               "worker": res.get("worker", ""), "error": err or None}
        if err:
            for m in self.metric_names:
                row.setdefault(m, math.nan)
        self.done[task.key] = row
        if self.out_path is not None:
            write_point(self.out_path, row, res.get("traceback"))
            now = time.monotonic()
            # the point files are the record; the table is rebuilt from them (not by a shard:
            # shards share the folder, each writes only its own tasks' files)
            if self.shard is None and now - self.last_table >= TABLE_EVERY_S:
                self.write_table()
                self.last_table = now
        if self.on_point_end is not None:
            self.on_point_end(row)


def _figure_files(spec, name, rows, checked, metrics, out_path) -> list:
    """Draw the experiment's standard figures into ``out_path/figures``; their relative paths."""
    from ..rendering._sweep_plots import sweep_figures

    figs = spec.figures if spec is not None else ()
    return [str(p.relative_to(out_path))
            for p in sweep_figures(rows, checked, metrics, out_path / "figures", figs, title=name)]


def _metrics_of(cols, fixed):
    return [c for c in cols if c not in fixed and not c.endswith("_se")]
