"""The ``richlazy validate``, ``list``, ``info`` and ``bench`` commands (see ``_main``): their
subparsers (``add_parsers``, in the order ``richlazy --help`` lists them) and their handlers
(``COMMANDS``, command name -> ``_cmd_*``). Each handler checks every argument before anything is
written and returns the exit code; torch, numba and the case registry are imported only inside
the handler that needs them, so ``richlazy --help`` and the other commands stay fast.
"""

from __future__ import annotations

import platform
import sys

from ... import __version__
from ._common import (
    _THREADS,
    _check_out,
    _check_scheduler,
    _executor_options,
    _fail,
    _positive_float,
    _run_on_executor,
    _seed,
)


def add_parsers(sub) -> None:
    """The validate, list, info and bench subparsers of ``sub``."""
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


def _cmd_validate(args) -> int:
    from ..core._compare import VERDICTS
    from ..core._registry import get_cases
    from ..core._runner import resolve_device_name, run_suite
    from ..rendering._report import render_case_line

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

    # interrupted, the report on disk holds every finished case (it is rewritten atomically after
    # each) and the running case's checkpoints are written atomically too
    report, rc = _run_on_executor(
        args, scheduler, args.out,
        lambda executor, workers: run_suite(args.suite, only=args.only, device=args.device,
                                            out_dir=args.out, seed=args.seed, progress=not args.quiet,
                                            on_case_start=start, on_case_end=end, threads=args.threads,
                                            executor=executor, workers=workers))
    if rc is not None:
        return rc
    n = len(report.cases)
    counts = ", ".join(f"{sum(c.verdict == v for c in report.cases)} {v}" for v in VERDICTS
                       if any(c.verdict == v for c in report.cases))
    print(f"{n} cases: {counts}; report written to {args.out}/report.md and report.json")
    # exit 1 when a case disagrees or errors; a not-mixed or not-equilibrated case is inconclusive
    return 0 if report.ok else 1


def _cmd_list(args) -> int:
    from ..core._registry import all_cases

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



COMMANDS = {"validate": _cmd_validate, "list": _cmd_list, "info": _cmd_info, "bench": _cmd_bench}
