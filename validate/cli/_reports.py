"""The ``richlazy diff``, ``validation-page`` and ``tables`` commands (see ``_main``): commands that
read finished reports or the analytic theory and print (or write) a table or a page. Their
subparsers (``add_parsers``, in the order ``richlazy --help`` lists them) and handlers
(``COMMANDS``). Nothing here imports torch or matplotlib: ``tables`` must stay light, and the
report readers and renderers are imported inside the handlers.
"""

from __future__ import annotations

import pathlib

from ._common import _check_out_file, _fail, _positive_number


def add_parsers(sub) -> None:
    """The diff, validation-page and tables subparsers of ``sub``."""
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


def _cmd_diff(args) -> int:
    from ..core._report_diff import diff_reports
    from ..rendering._report_diff import render_report_diff

    try:
        d = diff_reports(args.a, args.b, names=("REPORT_A", "REPORT_B"))
    except ValueError as exc:
        return _fail(str(exc))
    if not d.cases:
        return _fail(f"REPORT_A and REPORT_B have no case in common ({len(d.only_a)} and "
                     f"{len(d.only_b)} cases)")
    print(render_report_diff(d, label_a="A", label_b="B", z_flag=args.z))
    return 0


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



COMMANDS = {"diff": _cmd_diff, "validation-page": _cmd_validation_page, "tables": _cmd_tables}
