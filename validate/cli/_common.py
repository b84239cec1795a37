"""Shared pieces of the ``richlazy`` command line (see ``_main``): the one-line error and its exit
code 2, the parser class that reports bad arguments as one line, the value checks of options
used by several commands (seed, thread and worker counts, positive numbers), the --workers /
--scheduler options with their checks and connection, and the --out folder and file checks and
lock. Only the standard library is imported here; what a check needs is imported when it runs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pathlib
import sys

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
    from ..core._lock import out_lock, shard_lock
    from ..core._runner import prepare_out_dir

    prepare_out_dir(out, name="--out")
    stack.enter_context(out_lock(out, name="--out") if shard is None
                        else shard_lock(out, *shard, name="--out"))


def _run_command(run):
    """(run(), None), or (None, exit code) when it stops: a ValueError is its one error line (exit
    2), an interrupt the resume hint (exit INTERRUPTED): what is on disk is kept (reports and
    checkpoints are written atomically) and the same command resumes."""
    try:
        return run(), None
    except ValueError as exc:
        return None, _fail(str(exc))
    except KeyboardInterrupt:
        print(f"richlazy: {RESUME_HINT}", file=sys.stderr, flush=True)
        return None, INTERRUPTED


def _run_on_executor(args, scheduler, out, run, shard: tuple[int, int] | None = None):
    """:func:`_run_command` of ``run(executor, workers)`` on the executor of the options (a
    --scheduler connected for the run) with ``out`` (or its ``shard``) claimed for the run."""

    def go():
        with contextlib.ExitStack() as stack:
            executor, workers = _executor(args, scheduler, stack)
            _claim_out(out, stack, shard)
            return run(executor, workers)

    return _run_command(go)


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
