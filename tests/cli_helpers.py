"""Helpers shared by the command-line tests (on sys.path through pytest's ``pythonpath``)."""

from richlazy.validate.cli import main


def run_main(argv):
    """The exit code of ``richlazy ARGV``, argparse's SystemExit included."""
    try:
        return main(argv)
    except SystemExit as exc:  # argparse errors
        return exc.code


def one_error_line(err: str) -> str:
    """The single ``richlazy: error: ...`` line a failing command prints (no traceback)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("richlazy: error: ") and "Traceback" not in err
    return lines[0]


def validate_one(out, key, *, suite=None, seed=None):
    """``richlazy validate --only KEY`` on the CPU, quietly, into the folder ``out``: (exit code,
    the report's one case as a dict)."""
    import json

    argv = ["validate", "--only", key, "--out", str(out), "--device", "cpu", "--quiet"]
    if suite is not None:
        argv += ["--suite", suite]
    if seed is not None:
        argv += ["--seed", str(seed)]
    rc = main(argv)
    (case,) = json.loads((out / "report.json").read_text())["cases"]
    return rc, case
