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


def resize_case(monkeypatch, declaration, **sizes):
    """Run a declared case (``richlazy.validate.CaseDeclaration``) at other sizes for one test:
    its ``Sizes`` with ``quick=`` and/or ``full=`` replaced, restored when the test ends (the
    declaration is frozen, so the swap goes through its ``__dict__``)."""
    from richlazy.validate import Sizes

    new = Sizes(**{s: sizes.pop(s, getattr(declaration.sizes, s)) for s in ("quick", "full")})
    if sizes:
        raise TypeError(f"resize_case takes quick= and full=, got {sorted(sizes)}")
    monkeypatch.setitem(vars(declaration), "sizes", new)
