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
    richlazy reproduce PAPER:FIGURE [--size quick|paper] [--device auto|cpu|cuda] [--out DIR]
                       | richlazy reproduce --list [--markdown]

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

``python -m richlazy ...`` runs the same ``main`` (the package's ``__main__``).

Only what a command needs is imported: ``tables`` imports neither torch nor matplotlib.

The commands live in ``_validate`` (validate, list, info, bench), ``_sweep`` (sweep),
``_reports`` (diff, validation-page, tables) and ``_reproduce`` (reproduce), their shared checks
in ``_common``; this module assembles the parser, dispatches, and turns Ctrl-C and report
warnings into one line.
"""

from __future__ import annotations

import argparse
import sys
import warnings

from ... import __version__  # the one source: pyproject's version, read from the installed metadata
from . import _reports, _reproduce, _sweep, _validate
from ._common import INTERRUPTED, _Parser

__all__ = ["main", "build_parser"]

_COMMANDS = {**_validate.COMMANDS, **_sweep.COMMANDS, **_reports.COMMANDS, **_reproduce.COMMANDS}


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="richlazy", description="Theory of rich vs lazy learning: validation, "
                "benchmarks and scaling tables.")
    p.add_argument("--version", action="version", version=f"richlazy {__version__}",
                   help="print richlazy's version and exit")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    _validate.add_parsers(sub)  # validate, list, info, bench: the order --help lists them in
    _sweep.add_parser(sub)
    _reports.add_parsers(sub)  # diff, validation-page, tables
    _reproduce.add_parser(sub)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    handler = _COMMANDS[args.command]
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

