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

``python -m richlazy ...`` runs the same ``main``.

Only what a command needs is imported: ``tables`` imports neither torch nor matplotlib.

The commands live in ``_cli_validate`` (validate, list, info, bench), ``_cli_sweep`` (sweep),
``_cli_reports`` (diff, validation-page, tables) and ``_cli_reproduce`` (reproduce), their shared
checks in ``_cli_common``; this module assembles the parser, dispatches, and turns Ctrl-C and
report warnings into one line.
"""

from __future__ import annotations

import argparse
import sys
import warnings

from ... import __version__  # the one source: pyproject's version, read from the installed metadata
from . import _cli_reports, _cli_reproduce, _cli_sweep, _cli_validate
from ._cli_common import INTERRUPTED as INTERRUPTED
from ._cli_common import RESUME_HINT as RESUME_HINT
from ._cli_common import SCHEDULER_TIMEOUT_S as SCHEDULER_TIMEOUT_S
from ._cli_common import WORKERS_PER_CORE as WORKERS_PER_CORE
from ._cli_common import _check_out as _check_out
from ._cli_common import _check_out_file as _check_out_file
from ._cli_common import _check_scheduler as _check_scheduler
from ._cli_common import _fail as _fail
from ._cli_common import _Parser
from ._cli_common import usable_cores as usable_cores
from ._cli_reports import _cmd_diff as _cmd_diff
from ._cli_reports import _cmd_tables as _cmd_tables
from ._cli_reports import _cmd_validation_page as _cmd_validation_page
from ._cli_sweep import _cmd_sweep as _cmd_sweep
from ._cli_sweep import _parse_grid as _parse_grid
from ._cli_validate import _cmd_bench as _cmd_bench
from ._cli_validate import _cmd_info as _cmd_info
from ._cli_validate import _cmd_list as _cmd_list
from ._cli_validate import _cmd_validate as _cmd_validate

__all__ = ["main", "build_parser"]

_COMMANDS = {**_cli_validate.COMMANDS, **_cli_sweep.COMMANDS, **_cli_reports.COMMANDS,
             **_cli_reproduce.COMMANDS}


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="richlazy", description="Theory of rich vs lazy learning: validation, "
                "benchmarks and scaling tables.")
    p.add_argument("--version", action="version", version=f"richlazy {__version__}",
                   help="print richlazy's version and exit")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    _cli_validate.add_parsers(sub)  # validate, list, info, bench: the order --help lists them in
    _cli_sweep.add_parser(sub)
    _cli_reports.add_parsers(sub)  # diff, validation-page, tables
    _cli_reproduce.add_parser(sub)
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
