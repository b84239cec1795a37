"""The ``richlazy`` command line: a thin layer over library functions.

    richlazy --version
    richlazy validate [--suite quick|full] [--only GLOB] [--device auto|cpu|cuda] [--out DIR]
                      [--seed N] [--threads N] [--workers N|auto | --scheduler ADDR
                      [--scheduler-timeout S] [--scheduler-security FILE]] [--quiet]
    richlazy list
    richlazy info
    richlazy bench [--only NAME[,NAME]] [--device auto|cpu|cuda] [--min-time S] [--threads N]
    richlazy tables [--format md|latex|csv|json] [--model GLOB]
    richlazy diff REPORT_A REPORT_B [--z K]
    richlazy validation-page REPORT.json [REPORT.json ...] [--label L ...] [--classes FILE]
                             [--out FILE]
    richlazy sweep NAME --grid KEY=V1,V2 [--grid ...] [--seeds N] [--out DIR]
                   [--workers N|auto | --scheduler ADDR [--scheduler-timeout S]
                   [--scheduler-security FILE] | --shard I/N | --print-sbatch N]
                   [--device auto|cpu|cuda] [--seed N] [--threads N] [--no-figures] [--quiet]
    richlazy sweep --list | richlazy sweep NAME --describe

``validate`` and ``sweep`` run on Dask with ``--workers N`` (a LocalCluster of N one-thread
processes, at most 4 per usable core; ``auto``: one per usable core) or ``--scheduler ADDR`` (an
existing cluster, reached within ``--scheduler-timeout`` seconds, default 10; ``tcp://`` is plain
TCP without authentication, ``tls://`` needs ``--scheduler-security FILE``, a JSON file with
``tls_ca_file``, ``tls_client_cert``, ``tls_client_key``); install ``richlazy[distributed]``.

Every argument is checked (and the scheduler reached) before anything is written. One run at a
time per ``--out`` folder (a lock file ``.lock`` in it): a second run into a folder in use exits
2 at once; ``sweep --shard I/N`` (a Slurm array task, see ``--print-sbatch N``) locks only its own
slice (``.lock.shard-I-of-N``), so shards share a folder. ``validate`` adds its cases to the
report already in ``--out`` (a case run again replaces its entry).

Exit codes: 0 success, 1 a selected validation case (or sweep task) failed, 2 bad arguments
(one line on stderr naming the option: a bad value, an --out that is a file, not writable or in
use, a --device this machine or benchmark does not have, a scheduler that cannot be reached),
130 interrupted (Ctrl-C; ``validate`` resumes when rerun).

``python -m richlazy ...`` runs the same ``main``.

Only what a command needs is imported: ``tables`` imports neither torch nor matplotlib.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pathlib
import platform
import sys
import warnings

from ... import __version__  # the one source: pyproject's version, read from the installed metadata

__all__ = ["main", "build_parser"]

INTERRUPTED = 130  # the shell's code for a process ended by SIGINT
RESUME_HINT = "interrupted — rerun the same command to resume"


def _int_at_least(minimum: int, what: str):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        return value

    return parse


def _positive_number(what: str):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not (value > 0 and value < float("inf")):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        return value

    return parse


_positive_float = _positive_number("a positive number of seconds")


WORKERS_PER_CORE = 4  # --workers beyond this many per usable core only thrashes (420 MB each)
SCHEDULER_TIMEOUT_S = 10.0


def _seed(text: str) -> int:
    from ..sweeps._run import MAX_SEED  # the one bound: a sweep table's int64 seed column

    what = f"an integer from 0 to {MAX_SEED} (2**63 - 1)"
    value = _int_at_least(0, what)(text)
    if value > MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
    return value


_THREADS = _int_at_least(1, "a positive integer")


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def _workers(text: str) -> int:
    """``--workers``: a positive integer, or ``auto`` (one worker per usable core)."""
    if text == "auto":
        return usable_cores()
    try:
        n = _THREADS(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"must be a positive integer or 'auto', got {text!r}") from None
    limit = WORKERS_PER_CORE * usable_cores()
    if n > limit:
        raise argparse.ArgumentTypeError(
            f"must be at most {limit} ({WORKERS_PER_CORE} x {usable_cores()} usable cores) on this "
            f"machine, got {text!r}; for more workers start a Dask cluster and pass --scheduler")
    return n


def _fail(message: str) -> int:
    print(f"richlazy: error: {message}", file=sys.stderr)
    return 2


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # exit code 2 with a one-line reason
        print(f"richlazy: error: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def _executor_options(parser, what: str):
    """--workers | --scheduler (their group is returned) and the scheduler's options."""
    g = parser.add_mutually_exclusive_group()
    g.add_argument("--workers", type=_workers, default=None, metavar="N",
                   help=f"run the {what} on a Dask LocalCluster of N one-thread worker processes, "
                        f"at most {WORKERS_PER_CORE} per usable core; 'auto': one per usable "
                        "core (needs richlazy[distributed])")
    g.add_argument("--scheduler", metavar="ADDR", default=None,
                   help=f"run the {what} on the Dask cluster at ADDR, e.g. tcp://127.0.0.1:8786 "
                        "(needs richlazy[distributed]; workers must see the output folder; "
                        "tcp:// is plain TCP without authentication, see docs/distributed.md)")
    parser.add_argument("--scheduler-timeout", type=_positive_number("a positive number of "
                        "seconds"), default=None, metavar="S",
                        help=f"seconds to reach --scheduler before giving up (default "
                             f"{SCHEDULER_TIMEOUT_S:g})")
    parser.add_argument("--scheduler-security", metavar="FILE", default=None,
                        help="TLS for a tls:// --scheduler: a JSON file with tls_ca_file, "
                             "tls_client_cert and tls_client_key (paths of PEM files)")
    return g


def _shard(text: str) -> tuple[int, int]:
    from ..sweeps._slurm import parse_shard  # --shard I/N: integers, N >= 1, 0 <= I < N

    try:
        return parse_shard(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _check_scheduler(args):
    """The checked --scheduler options: None, or (address, timeout, Security or None)."""
    from ..sweeps._executors import _ADDRESS_PREFIXES, _import_distributed, load_security

    if args.scheduler is None:
        for opt in ("--scheduler-timeout", "--scheduler-security"):
            if getattr(args, opt[2:].replace("-", "_")) is not None:
                raise ValueError(f"{opt} needs --scheduler ADDR")
        return None
    addr = args.scheduler
    if not addr.startswith(_ADDRESS_PREFIXES):
        raise ValueError(f"--scheduler must be a Dask scheduler address such as "
                         f"tcp://127.0.0.1:8786 ({', '.join(_ADDRESS_PREFIXES)}), got {addr!r}")
    if addr.startswith("tls://") and args.scheduler_security is None:
        raise ValueError(f"--scheduler {addr} needs --scheduler-security FILE (a JSON file with "
                         "tls_ca_file, tls_client_cert, tls_client_key)")
    try:
        _import_distributed(addr)
    except ValueError as exc:
        raise ValueError(f"--scheduler: {exc}") from None
    security = None
    if args.scheduler_security is not None:
        try:
            security = load_security(args.scheduler_security)
        except ValueError as exc:
            raise ValueError(f"--scheduler-security: {exc}") from None
    timeout = args.scheduler_timeout or SCHEDULER_TIMEOUT_S
    return addr, timeout, security


def _check_out(out) -> None:
    """--out must be (or be creatable as) a writable folder; checked without creating it."""
    path = pathlib.Path(out)
    if path.exists() and not path.is_dir():
        raise ValueError(f"--out {str(path)!r} is an existing file; a folder is required")
    probe = path.absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise ValueError(f"--out {str(path)!r} is not a writable folder "
                         f"({str(probe)!r} is not a writable folder)")


def _executor(args, scheduler, stack: contextlib.ExitStack):
    """(executor, workers) for run_suite/sweep; a --scheduler is connected to here (one-line
    ValueError naming it when it cannot be reached) and closed with ``stack``."""
    if args.workers is not None:
        return "dask-local", args.workers
    if scheduler is None:
        return "sequential", None
    from ..sweeps._executors import SchedulerUnreachable, connect_scheduler

    addr, timeout, security = scheduler
    try:
        client = connect_scheduler(addr, timeout=timeout, security=security)
    except SchedulerUnreachable as exc:
        raise ValueError(f"--scheduler {addr}: {exc}") from None
    stack.enter_context(client)
    return client, None


def _claim_out(out, stack: contextlib.ExitStack, shard: tuple[int, int] | None = None) -> None:
    """Create --out and hold its (or ``shard``'s) lock for the rest of ``stack`` (ValueError)."""
    from ._lock import out_lock, shard_lock
    from ._runner import prepare_out_dir

    prepare_out_dir(out, name="--out")
    stack.enter_context(out_lock(out, name="--out") if shard is None
                        else shard_lock(out, *shard, name="--out"))


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="richlazy", description="Theory of rich vs lazy learning: validation, "
                "benchmarks and scaling tables.")
    p.add_argument("--version", action="version", version=f"richlazy {__version__}",
                   help="print richlazy's version and exit")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    v = sub.add_parser("validate", help="run theory-vs-simulation cases and write a report folder")
    v.add_argument("--suite", choices=("quick", "full"), default="quick",
                   help="quick: minutes on a CPU; full: paper sizes, meant for a GPU (default quick)")
    v.add_argument("--only", metavar="GLOB", default=None,
                   help="run only cases whose name matches this glob, e.g. 'coding/*'")
    v.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="torch device for the simulations (auto = CUDA when available)")
    v.add_argument("--out", metavar="DIR", default="richlazy-report",
                   help="report folder (report.json, report.md, figures/; default richlazy-report)")
    v.add_argument("--seed", type=_seed, default=0, metavar="N",
                   help="base seed of every case, 0 to 2**63 - 1 (default 0)")
    v.add_argument("--threads", type=_THREADS, default=1, metavar="N",
                   help="CPU threads per case for torch and for BLAS/OpenMP (numpy, scipy) "
                        "(default 1; the quick cases use small tensors and solves, where more "
                        "threads rarely help and on shared cores slow them down)")
    v.add_argument("--quiet", action="store_true", help="no progress bars")
    _executor_options(v, "cases")

    sub.add_parser("list", help="list validation cases: name, suites, paper")
    sub.add_parser("info", help="versions, device and threads")

    b = sub.add_parser("bench", help="benchmarks with ratios measured in one run")
    b.add_argument("--only", metavar="NAMES", default=None,
                   help="comma-separated subset of the benchmarks: sampler, sampler-ess, coding, "
                        "richness, ldt, ldt-sampler, equality, equality-structured, sigmoid-data, "
                        "relu-data, relu-search, relu-block, code-moves (default: all)")
    b.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    b.add_argument("--min-time", type=_positive_float, default=1.0, metavar="S",
                   help="minimum seconds per timed measurement (default 1.0)")
    b.add_argument("--threads", type=_THREADS, default=1, metavar="N",
                   help="CPU threads for torch and for BLAS/OpenMP (default 1: on shared cores more "
                        "threads mostly measure contention)")

    w = sub.add_parser("sweep", help="run a registered experiment over a parameter grid "
                       "(resumable; tidy table as CSV/Parquet, figures)")
    w.add_argument("name", nargs="?", default=None, metavar="NAME",
                   help="experiment (see --list)")
    w.add_argument("--list", action="store_true", help="list the sweepable experiments")
    w.add_argument("--describe", action="store_true",
                   help="show NAME's parameters (type, default, meaning) and metrics")
    w.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2,...",
                   help="values of one parameter (repeat for more keys; an integer range "
                        "A..B is inclusive); the grid is their Cartesian product")
    w.add_argument("--seeds", type=_THREADS, default=1, metavar="N",
                   help="replicates per grid point (default 1)")
    w.add_argument("--out", metavar="DIR", default=None,
                   help="sweep folder (default richlazy-sweep-NAME); rerun to resume")
    w.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    w.add_argument("--seed", type=_seed, default=0, metavar="N",
                   help="base seed, 0 to 2**63 - 1 (default 0)")
    w.add_argument("--threads", type=_THREADS, default=1, metavar="N",
                   help="CPU threads per task for torch and BLAS (default 1)")
    w.add_argument("--no-figures", action="store_true", help="write no figures")
    w.add_argument("--quiet", action="store_true", help="no line per finished task")
    g = _executor_options(w, "tasks")
    g.add_argument("--shard", type=_shard, metavar="I/N", help="run only tasks k with k mod N == I "
                   "(a Slurm array task: --shard $SLURM_ARRAY_TASK_ID/N); shards run at once into "
                   "one --out and write no table: the command without --shard then merges")
    g.add_argument("--print-sbatch", type=_int_at_least(1, "a positive integer"), metavar="N",
                   help="print the Slurm array script of N shards of this command and exit")

    d = sub.add_parser("diff", help="compare the simulations of two reports of the same cases "
                       "(e.g. a CPU and a CUDA run): z of each difference over the combined SE")
    d.add_argument("a", metavar="REPORT_A", help="a report.json, a report folder, or a folder of "
                   "report folders")
    d.add_argument("b", metavar="REPORT_B", help="the same for the second run")
    d.add_argument("--z", type=_positive_number("a positive number"), default=3.0, metavar="K",
                   help="list the quantities with |z| > K (default 3)")

    g = sub.add_parser("validation-page", help="the Markdown results page (docs/validation.md) "
                       "generated from report.json files")
    g.add_argument("reports", nargs="+", metavar="REPORT.json",
                   help="report.json files, one section each in the order given")
    g.add_argument("--label", action="append", default=None, metavar="L",
                   help="section title of a report, once per REPORT.json in order (default: "
                        "each report's suite)")
    g.add_argument("--classes", metavar="FILE", default=None,
                   help="JSON object classifying the cases that do not agree: case name -> "
                        '{"kind": "agreement once equilibrated" | "theory or reconstruction '
                        'error" | "open", "evidence": text} (default: all unclassified)')
    g.add_argument("--out", metavar="FILE", default=None,
                   help="write the page to FILE atomically (default: print it)")

    t = sub.add_parser("tables", help="analytic scaling tables (seed 002)")
    t.add_argument("--format", choices=("md", "latex", "csv", "json"), default="md")
    t.add_argument("--model", metavar="GLOB", default=None, help="only models matching this glob")
    return p


def _cmd_validate(args) -> int:
    from ..rendering._report import render_case_line
    from ._compare import VERDICTS
    from ._registry import get_cases
    from ._runner import resolve_device_name, run_suite

    try:
        resolve_device_name(args.device)
    except ValueError as exc:
        return _fail(f"--device {args.device}: {exc}")
    try:  # every argument before anything is written
        if not get_cases(args.suite, args.only):
            raise ValueError(f"--only {args.only!r} matches no case of suite {args.suite!r}; "
                             "see `richlazy list`")
        scheduler = _check_scheduler(args)
        _check_out(args.out)
    except ValueError as exc:
        return _fail(str(exc))
    # on a cluster every case is handed over at once; its line below comes when it finishes
    started = "..." if args.workers is None and scheduler is None else "queued"

    def start(spec):
        if not args.quiet:
            print(f"[richlazy] {spec.name} {started}", file=sys.stderr, flush=True)

    def end(res):
        print(render_case_line(res), flush=True)
        if res.error:
            print(res.error.rstrip().splitlines()[-1], flush=True)

    try:
        with contextlib.ExitStack() as stack:
            executor, workers = _executor(args, scheduler, stack)
            _claim_out(args.out, stack)
            report = run_suite(args.suite, only=args.only, device=args.device, out_dir=args.out,
                               seed=args.seed, progress=not args.quiet, on_case_start=start,
                               on_case_end=end, threads=args.threads, executor=executor,
                               workers=workers)
    except ValueError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        # the report on disk holds every finished case (it is rewritten atomically after each)
        # and the running case's checkpoints are written atomically too
        print(f"richlazy: {RESUME_HINT}", file=sys.stderr, flush=True)
        return INTERRUPTED
    n = len(report.cases)
    counts = ", ".join(f"{sum(c.verdict == v for c in report.cases)} {v}" for v in VERDICTS
                       if any(c.verdict == v for c in report.cases))
    print(f"{n} cases: {counts}; report written to {args.out}/report.md and report.json")
    # exit 1 when a case disagrees or errors; a not-mixed or not-equilibrated case is inconclusive
    return 0 if report.ok else 1


def _cmd_list(args) -> int:
    from ._registry import all_cases

    for name, spec in all_cases().items():
        print(f"{name}\t{','.join(spec.suites)}\t{spec.paper}")
    return 0


def _cmd_info(args) -> int:
    import numba
    import numpy
    import scipy
    import sympy
    import torch

    print(f"richlazy {__version__}")
    print(f"python {platform.python_version()} ({platform.platform()})")
    for mod in (numpy, scipy, sympy, numba, torch):
        print(f"{mod.__name__} {mod.__version__}")
    cuda = torch.cuda.is_available()
    print(f"cuda available: {cuda}" + (f" ({torch.cuda.get_device_name(0)})" if cuda else ""))
    print(f"default device (auto): {'cuda' if cuda else 'cpu'}")
    print(f"torch threads: {torch.get_num_threads()} (interop {torch.get_num_interop_threads()})")
    return 0


def _cmd_bench(args) -> int:
    from ..benchmarks._registry import benchmark_device, benchmarks, run_benchmark

    specs = benchmarks()
    names = list(specs) if args.only is None else [s.strip() for s in args.only.split(",") if s.strip()]
    bad = [n for n in names if n not in specs]
    if bad or not names:
        return _fail(f"--only must name benchmarks from {','.join(specs)}, got {args.only!r}")
    for name in names:  # every device checked before the first benchmark runs
        try:
            benchmark_device(name, args.device)
        except ValueError as exc:
            return _fail(f"--device {args.device}: {exc}")
    for name in names:
        try:
            res = run_benchmark(name, device=args.device, min_time=args.min_time, threads=args.threads)
        except ValueError as exc:
            return _fail(str(exc))
        print(res.text, flush=True)
    return 0


def _cmd_tables(args) -> int:
    from richlazy.theory import scaling_tables

    from ..rendering._tables import render_tables

    try:
        rows = scaling_tables(model=args.model)
    except ValueError as exc:
        return _fail(str(exc))
    if not rows:
        return _fail(f"no table row matches --model {args.model!r}")
    print(render_tables(rows, args.format))
    return 0


def _parse_grid(spec, items):
    """``--grid KEY=V1,V2`` options -> {key: [values]} (ValueError naming the key)."""
    grid = {}
    for item in items:
        key, eq, text = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ValueError(f"--grid takes KEY=V1,V2,..., got {item!r}")
        if key not in spec.params:
            raise ValueError(f"unknown grid key {key!r}; {spec.name} takes: {', '.join(spec.params)}")
        if key in grid:
            raise ValueError(f"grid key {key!r} is given twice")
        p = spec.params[key]
        parts = [t for t in text.split(",")]
        if any(not t.strip() for t in parts):
            raise ValueError(f"grid key {key!r} has an empty value in {text!r}")
        values = []
        for t in parts:
            lo, dots, hi = t.partition("..")
            if dots and p.kind is int:
                a, b = p.parse(key, lo), p.parse(key, hi)
                if b < a:
                    raise ValueError(f"grid key {key!r}: range {t!r} is empty")
                values += list(range(a, b + 1))
            else:
                values.append(p.parse(key, t))
        grid[key] = values
    return grid


def _cmd_sweep(args) -> int:
    import pathlib

    from ..sweeps import all_sweeps, get_sweep, sweep

    if args.list:
        for name, spec in all_sweeps().items():
            print(f"{name}\t{spec.description}")
        return 0
    if args.name is None:
        return _fail("sweep needs an experiment NAME (see richlazy sweep --list)")
    try:
        spec = get_sweep(args.name)
    except ValueError as exc:
        return _fail(str(exc))
    if args.describe:
        print(f"{spec.name}: {spec.description}")
        print("parameters (--grid KEY=V1,V2,...):")
        for k, p in spec.params.items():
            extra = f" one of {list(p.choices)}" if p.choices else ""
            print(f"  {k} ({p.kind.__name__}, default {p.default!r}){extra}: {p.help}")
        if spec.metrics:
            print("metrics: " + ", ".join(spec.metrics))
        return 0
    out = args.out or f"richlazy-sweep-{spec.name}"
    try:  # every argument before anything is written
        grid = _parse_grid(spec, args.grid)
        scheduler = _check_scheduler(args)
        if args.print_sbatch is not None:
            from ..sweeps._slurm import sbatch_for_args

            print(sbatch_for_args(spec.name, grid, out, args), end="")
            return 0
        _check_out(out)
    except ValueError as exc:
        return _fail(str(exc))
    total = [0]

    def end(row):
        total[0] += 1
        if args.quiet:
            return
        cfg = " ".join(f"{k}={row[k]}" for k in grid)
        mark = "ok  " if row["status"] == "ok" else "FAIL"
        tail = "" if row["status"] == "ok" else f"  {row['error']}"
        print(f"{mark} [{total[0]}] {cfg} replicate={row['replicate']} ({row['wall_s']:.1f} s)"
              f"{tail}", file=sys.stderr, flush=True)

    try:
        with contextlib.ExitStack() as stack:
            executor, workers = _executor(args, scheduler, stack)
            _claim_out(out, stack, args.shard)
            res = sweep(spec.name, grid, seeds=args.seeds, out=out, executor=executor,
                        workers=workers, device=args.device, seed=args.seed,
                        threads=args.threads, figures=not args.no_figures, on_point_end=end,
                        shard=args.shard)
    except ValueError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        print(f"richlazy: {RESUME_HINT}", file=sys.stderr, flush=True)
        return INTERRUPTED
    n = len(res.rows)
    if args.shard is not None:
        print(f"shard {args.shard[0]}/{args.shard[1]}: {n - res.n_failed} of {n} tasks ok "
              f"({res.resumed} resumed); when every shard has finished, run this command without "
              "--shard to merge (table and figures)")
        return 0 if res.ok else 1
    print(f"{n - res.n_failed} of {n} tasks ok ({res.resumed} resumed, {res.executor}); table in "
          f"{pathlib.Path(out) / 'table.csv'}" + (" and table.parquet" if "table.parquet" in res.files
                                                  else " (install pyarrow for Parquet)"))
    return 0 if res.ok else 1


def _cmd_diff(args) -> int:
    from ..rendering._report_diff import render_report_diff
    from ._report_diff import diff_reports

    try:
        d = diff_reports(args.a, args.b, names=("REPORT_A", "REPORT_B"))
    except ValueError as exc:
        return _fail(str(exc))
    if not d.cases:
        return _fail(f"REPORT_A and REPORT_B have no case in common ({len(d.only_a)} and "
                     f"{len(d.only_b)} cases)")
    print(render_report_diff(d, label_a="A", label_b="B", z_flag=args.z))
    return 0


def _check_out_file(out) -> None:
    """--out must be (or be creatable as) a file in a writable folder; checked without creating
    anything."""
    path = pathlib.Path(out)
    if path.is_dir():
        raise ValueError(f"--out {str(path)!r} is an existing folder; a file is required")
    probe = path.absolute().parent
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise ValueError(f"--out {str(path)!r} is not in a writable folder "
                         f"({str(probe)!r} is not a writable folder)")


def _classes(path, read):
    """The classifications of --classes FILE (ValueError naming --classes)."""
    try:
        return read(path)
    except ValueError as exc:
        raise ValueError(f"--classes: {exc}") from None


def _cmd_validation_page(args) -> int:
    from ..rendering._report import atomic_write_text
    from ..rendering._validation_page import read_classifications, render_validation_page

    labels = args.label or [None] * len(args.reports)
    try:  # every argument before anything is written
        if len(labels) != len(args.reports):
            raise ValueError(f"--label is given {len(labels)} times for {len(args.reports)} "
                             "reports; give it once per REPORT.json or not at all")
        if any(lab is not None and not lab.strip() for lab in labels):
            raise ValueError("--label must not be empty")
        classes = None if args.classes is None else _classes(args.classes, read_classifications)
        if args.out is not None:
            _check_out_file(args.out)
        page = render_validation_page(list(zip(labels, args.reports, strict=True)),
                                      classifications=classes)
    except ValueError as exc:
        return _fail(str(exc))
    if args.out is None:
        print(page, end="")
        return 0
    try:
        atomic_write_text(pathlib.Path(args.out), page)
    except OSError as exc:
        return _fail(f"--out {args.out!r} cannot be written ({exc.strerror or exc})")
    return 0


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    handler = {"validate": _cmd_validate, "list": _cmd_list, "info": _cmd_info,
               "bench": _cmd_bench, "tables": _cmd_tables, "sweep": _cmd_sweep,
               "diff": _cmd_diff, "validation-page": _cmd_validation_page}[args.command]
    try:
        with warnings.catch_warnings():  # restores showwarning afterwards
            warnings.showwarning = _warning_printer(warnings.showwarning)
            return handler(args)
    except KeyboardInterrupt:  # one line, no traceback (validate prints how to resume itself)
        print("richlazy: interrupted", file=sys.stderr, flush=True)
        return INTERRUPTED


def _warning_printer(show):
    """``warnings.showwarning`` that prints a report-folder warning as one line."""

    def printer(message, category, *args, **kwargs):
        from ..rendering._report import ReportWarning

        if issubclass(category, ReportWarning):
            print(f"richlazy: warning: {message}", file=sys.stderr, flush=True)
        else:
            show(message, category, *args, **kwargs)

    return printer


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
