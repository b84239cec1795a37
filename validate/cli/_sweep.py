"""The ``richlazy sweep`` command (see ``_main``): its subparser (``add_parser``: --list,
--describe, --grid, --seeds, the executor options and the mutually exclusive --shard I/N and
--print-sbatch N of a Slurm array), the parsing of ``--grid KEY=V1,V2`` against an experiment's
parameters, and the handler ``_cmd_sweep``, which checks every argument (and reaches a
--scheduler) before anything is written. The sweep library is imported only when a sweep runs.
"""

from __future__ import annotations

import argparse
import sys

from ._common import (
    _THREADS,
    _check_out,
    _check_scheduler,
    _executor_options,
    _fail,
    _int_at_least,
    _run_on_executor,
    _seed,
)


def _shard(text: str) -> tuple[int, int]:
    from ..sweeps._slurm import parse_shard  # --shard I/N: integers, N >= 1, 0 <= I < N

    try:
        return parse_shard(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_parser(sub) -> None:
    """The sweep subparser of ``sub``."""
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

    res, rc = _run_on_executor(
        args, scheduler, out,
        lambda executor, workers: sweep(spec.name, grid, seeds=args.seeds, out=out, executor=executor,
                                        workers=workers, device=args.device, seed=args.seed,
                                        threads=args.threads, figures=not args.no_figures,
                                        on_point_end=end, shard=args.shard),
        shard=args.shard)
    if rc is not None:
        return rc
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



COMMANDS = {"sweep": _cmd_sweep}
