"""``richlazy reproduce``: --list, errors (one line, exit 2), and one key end to end at a tiny
stand-in for the quick size."""

import csv
import dataclasses
import json
import math
import pathlib

import pytest
from cli_helpers import one_error_line, resize_case, run_main
from richlazy.validate.reproduce import _run
from richlazy.validate.reproduce._catalogue import CATALOGUE

ROOT = pathlib.Path(__file__).resolve().parents[3]


def test_list_prints_every_entry_grouped_by_paper(capsys):
    assert run_main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    headers = [i for i, line in enumerate(lines) if not line.startswith(" ")]
    assert [lines[i][:3] for i in headers] == ["000", "002", "003", "004"]
    for e in CATALOGUE:
        (row,) = [line for line in lines if line.split()[:1] == [e.key]]
        assert e.status in row and e.what in row
    assert "coding/real-images [quick] fig6_panels.png, generalisation_errors.png" in out
    assert "needs CIFAR-100" in out


def test_list_markdown_is_the_table_of_docs_reproduce(capsys):
    assert run_main(["reproduce", "--list", "--markdown"]) == 0
    out = capsys.readouterr().out
    assert out == _run.format_catalogue(markdown=True)
    assert out.count("| key | status | what | how |") == 4
    doc = (ROOT / "docs" / "reproduce.md").read_text()
    assert out.strip() in doc, "docs/reproduce.md is stale: rerun `richlazy reproduce --list --markdown`"


@pytest.mark.parametrize(("argv", "expected"), [
    (["reproduce", "002:table3"], "unknown figure '002:table3'; did you mean 002:table1"),
    (["reproduce", "003:fig1"], "did you mean 003:fig1a, 003:fig1b"),
    (["reproduce", "003:fig3h"], "003:fig3h is not implemented: needs CIFAR-100"),
    (["reproduce", "000:fig7"], "000:fig7 is not implemented: needs the CIFAR-10"),
    (["reproduce"], "give a PAPER:FIGURE key"),
    (["reproduce", "--markdown"], "--markdown needs --list"),
    (["reproduce", "000:fig6", "--list"], "--list takes no PAPER:FIGURE"),
])
def test_bad_keys_exit_2_with_one_line(argv, expected, capsys, tmp_path):
    assert run_main([*argv, "--out", str(tmp_path / "o")] if "--list" not in argv
                    and "--markdown" not in argv else argv) == 2
    captured = capsys.readouterr()
    assert expected in one_error_line(captured.err)
    assert captured.out == "" and not (tmp_path / "o").exists()


def test_out_that_is_a_file_exits_2(tmp_path, capsys):
    f = tmp_path / "f"
    f.write_text("x")
    assert run_main(["reproduce", "003:fig2", "--out", str(f)]) == 2
    assert "is an existing file" in one_error_line(capsys.readouterr().err)


@pytest.fixture
def tiny_noisy_bayes(monkeypatch):
    from richlazy.validate.cases.equality import _noisy

    tiny = dataclasses.replace(_noisy.SIZES.quick, d=8, sigma2s=(1.0,), Ls=(4, 64), seeds=2, width=32,
                               steps=200, n_test=200, protocols=("richlazy",))
    resize_case(monkeypatch, _noisy.CASE, quick=tiny)


def _num(text):
    return None if text == "" else float(text)


@pytest.mark.slow
def test_reproduce_end_to_end_writes_figure_and_table(tmp_path, tiny_noisy_bayes, capsys):
    out = tmp_path / "fig2"
    rc = run_main(["reproduce", "003:fig2", "--size", "quick", "--device", "cpu", "--out",
                   str(out), "--quiet"])
    printed = capsys.readouterr().out
    rep = json.loads((out / "run" / "report.json").read_text())
    (case,) = rep["cases"]
    assert case["name"] == "equality/noisy-bayes" and case["error"] is None
    assert rc == (0 if case["verdict"] == "agrees" else 1)
    png, table = out / "003_fig2.png", out / "003_fig2.csv"
    assert png.stat().st_size > 1000
    assert png.read_bytes() == (out / "run" / case["figures"][0]).read_bytes()
    assert str(png) in printed and str(table) in printed
    with table.open() as fh:
        rows = list(csv.DictReader(fh))
    assert [r["quantity"] for r in rows] == [q["name"] for q in case["quantities"]]
    for r, q in zip(rows, case["quantities"], strict=True):
        assert r["case"] == "equality/noisy-bayes"
        assert _num(r["theory"]) == q["theory"] and _num(r["simulation"]) == q["simulation"]
        assert _num(r["se"]) == q["stderr"] or (q["stderr"] is None and r["se"] == "")
        assert r["verdict"] == ("agrees" if q["passed"] else "disagrees")
        assert r["param:d"] == "8" and json.loads(r["param:Ls"]) == [4, 64]
    assert all(math.isfinite(_num(r["theory"])) for r in rows)
    # a rerun resumes from the same run folder and rewrites the same numbers
    assert run_main(["reproduce", "003:fig2", "--device", "cpu", "--out", str(out), "--quiet"]) == rc
    with table.open() as fh:
        assert list(csv.DictReader(fh)) == rows


@pytest.mark.slow  # imports every case module
def test_full_suite_cases_run_at_their_declared_quick_sizes():
    run, skipped = _run.runnable_producers(_run.lookup("000:fig2"), "quick")
    assert [p.name for p in run] == ["coding/linear-toy", "coding/sigmoid-toy", "coding/relu-toy"]
    assert not skipped
    assert [p.name for p in _run.outside_suite(run, "quick")] == ["coding/sigmoid-toy"]
    run, skipped = _run.runnable_producers(_run.lookup("000:fig2"), "paper")
    assert len(run) == 3 and not skipped and not _run.outside_suite(run, "paper")
    with pytest.raises(ValueError, match="not implemented: a schematic"):
        _run.runnable_producers(_run.lookup("002:fig1"), "paper")


def test_a_plain_function_case_outside_the_suite_is_skipped(scratch_registry):
    """Only a declared case has a configuration for every suite; a case registered as a plain
    function in the full suite only cannot run at quick size."""
    from richlazy.validate import CaseOutcome, register_case
    from richlazy.validate.core._registry import get_cases
    from richlazy.validate.reproduce._catalogue import Entry, Producer

    @register_case("ldt/zz-full-only", description="full only", suites=("full",))
    def _full_only(ctx):  # pragma: no cover - never run
        return CaseOutcome(quantities=[])

    producer = Producer("case", "ldt/zz-full-only", "full", ("x.png",))
    entry = Entry("002:zz", "002", "a test entry", "not run", (producer,))
    with pytest.raises(ValueError, match=r"002:zz runs only at paper size \(ldt/zz-full-only: full "
                                         r"suite\); use --size paper"):
        _run.runnable_producers(entry, "quick")
    assert _run.runnable_producers(entry, "paper") == ([producer], [])
    assert not get_cases("quick", "ldt/zz-*", outside_suite=True)


@pytest.mark.slow  # imports every case module
def test_run_suite_runs_a_declared_case_outside_its_suite_only_when_asked(tmp_path):
    from richlazy.validate.core._registry import get_cases
    from richlazy.validate.core._runner import run_suite

    assert not get_cases("quick", "ldt/pstar-exponent")
    assert [c.name for c in get_cases("quick", "ldt/pstar-exponent", outside_suite=True)] == [
        "ldt/pstar-exponent"]
    with pytest.raises(ValueError, match="no case of suite 'quick' matches"):
        run_suite("quick", only="ldt/pstar-exponent", out_dir=tmp_path / "r", progress=False)
    with pytest.raises(TypeError, match="outside_suite must be a bool, got 'yes'"):
        run_suite("quick", only="ldt/pstar-exponent", out_dir=tmp_path / "r", outside_suite="yes")
    assert not (tmp_path / "r").exists()
