"""The ``richlazy reproduce`` command (see ``_main``): its subparser (``add_parser``) and handler
(``COMMANDS``). The catalogue and the run live in ``richlazy.validate.reproduce``; every argument
(key, size, device, --out) is checked before anything is written, and the cases run through the
same runner as ``richlazy validate --only NAME``.

    richlazy reproduce --list [--markdown]
    richlazy reproduce KEY [--size quick|paper] [--device auto|cpu|cuda] [--out DIR] [--seed N]
                       [--threads N] [--quiet]
"""

from __future__ import annotations

import sys

from ._common import _THREADS, _check_out, _fail, _run_command, _seed


def add_parser(sub) -> None:
    r = sub.add_parser("reproduce", help="reproduce one figure or table of the papers (PAPER:FIGURE, "
                                         "e.g. 000:fig6) from its validation case(s)")
    r.add_argument("key", nargs="?", metavar="PAPER:FIGURE",
                   help="catalogue key, e.g. 000:fig6, 003:fig1c, 004:table2 (see --list)")
    r.add_argument("--list", action="store_true",
                   help="print the catalogue: every main-text figure and table, its status and the "
                        "cases that draw it")
    r.add_argument("--markdown", action="store_true", help="with --list: as Markdown tables")
    r.add_argument("--size", choices=("quick", "paper"), default="quick",
                   help="quick: the quick suite's sizes (minutes on a CPU; a case of the full suite "
                        "only runs at the quick sizes it declares); paper: the full suite's (meant "
                        "for a GPU) (default quick)")
    r.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="torch device for the simulations (auto = CUDA when available)")
    r.add_argument("--out", metavar="DIR", default=None,
                   help="output folder (default reproduce/<key>, ':' written '_'): <key>.png, "
                        "<key>.csv and run/ (the cases' report and checkpoints; a rerun resumes)")
    r.add_argument("--seed", type=_seed, default=0, metavar="N", help="base seed (default 0)")
    r.add_argument("--threads", type=_THREADS, default=1, metavar="N",
                   help="CPU threads per case (default 1)")
    r.add_argument("--quiet", action="store_true", help="no progress bars")


def _cmd_reproduce(args) -> int:
    from ..reproduce import _run

    if args.list:
        if args.key is not None:
            return _fail("--list takes no PAPER:FIGURE")
        print(_run.format_catalogue(markdown=args.markdown), end="")
        return 0
    if args.markdown:
        return _fail("--markdown needs --list")
    if args.key is None:
        return _fail("give a PAPER:FIGURE key (e.g. 000:fig6) or --list")
    from ..core._runner import resolve_device_name

    try:  # every argument before anything is written
        entry = _run.lookup(args.key)
        run, skipped = _run.runnable_producers(entry, args.size)
        try:
            resolve_device_name(args.device)
        except ValueError as exc:
            raise ValueError(f"--device {args.device}: {exc}") from None
        out = args.out if args.out is not None else f"reproduce/{_run.safe_key(entry.key)}"
        _check_out(out)
    except ValueError as exc:
        return _fail(str(exc))
    for p in _run.outside_suite(run, args.size):
        print(f"richlazy: {entry.key}: {p.name} is not in the {_run.SIZES[args.size]} suite; it runs "
              f"at the {args.size} sizes its declaration gives", file=sys.stderr, flush=True)
    for p in skipped:
        print(f"richlazy: {entry.key}: skipping {p.name} (full suite only; use --size paper)",
              file=sys.stderr, flush=True)

    def start(spec):
        if not args.quiet:
            print(f"[richlazy] {spec.name} ...", file=sys.stderr, flush=True)

    rep, rc = _run_command(
        lambda: _run.reproduce(entry.key, size=args.size, device=args.device, out=out, seed=args.seed,
                               threads=args.threads, progress=not args.quiet, on_case_start=start))
    if rc is not None:
        return rc
    verdicts = ", ".join(f"{n} {r.verdict}" for n, r in rep.results.items())
    print(f"{entry.key} ({entry.what}) at {args.size} size: {verdicts}")
    for path, case, fig in rep.figures:
        print(f"  figure {path}  ({case}: {fig})")
    n = sum(1 for _ in rep.table.open()) - 1
    print(f"  table  {rep.table}  ({n} quantities)")
    print(f"  run    {rep.run_dir}/report.md  (report, figures, checkpoints; a rerun resumes)")
    for case, fig in rep.missing:
        print(f"  missing: {case} wrote no {fig}", file=sys.stderr)
    for name, res in rep.results.items():
        if res.error:
            print(f"  {name}: {res.error.rstrip().splitlines()[-1]}", file=sys.stderr)
    return 0 if rep.ok and not rep.missing else 1


COMMANDS = {"reproduce": _cmd_reproduce}
