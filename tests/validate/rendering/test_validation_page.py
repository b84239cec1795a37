"""``richlazy validation-page``: the results page docs/validation.md generated from report.json
files (numbers, verdict counts, classifications), its errors, and the committed page and report.
"""

import json

import pytest
from cli_helpers import one_error_line as _one_error_line
from cli_helpers import run_main as _rc
from import_helpers import ROOT
from richlazy.validate.rendering._validation_page import read_classifications, render_validation_page

COMMITTED = ROOT / "docs" / "report" / "report.json"


def _q(name, *, passed=True, rhat=None, mixed=None, erg="absent", equilibrated=None, note=""):
    """A report.json quantity; ``erg="absent"`` leaves out the ergodicity fields (older reports)."""
    q = {"name": name, "theory": 1.0, "simulation": 1.0123456, "stderr": 0.0123456, "z": -1.0,
         "rel_error": 0.0123, "tolerance_kind": "z", "tolerance": 3.0, "passed": passed,
         "note": "", "rhat": rhat, "ess_bulk": None if rhat is None else 400.0,
         "ess_tail": None if rhat is None else 300.0, "mixed": mixed}
    if erg != "absent":
        q.update(ergodicity=erg, ergodicity_reason="why" if erg else "", equilibrated=equilibrated,
                 equilibration_note=note)
    return q


def _case(name, verdict, quantities, seconds=12.345):
    return {"name": name, "paper": "test", "description": "d", "passed": verdict == "agrees",
            "seconds": seconds, "device": "cpu", "seed": 7, "suite": "quick",
            "quantities": quantities, "figures": [], "params": {}, "notes": "", "error": None,
            "verdict": verdict, "finished": "2026-12-01T00:01:00+00:00",
            "max_rhat": None, "min_ess_bulk": None}


def _report(path, suite, cases):
    path.write_text(json.dumps({"richlazy_version": "9.9.9", "suite": suite,
                                "created": "2026-12-01T00:00:00+00:00", "device": "cuda",
                                "seed": 7, "passed": False, "ok": True, "verdicts": {},
                                "cases": cases}))
    return path


@pytest.fixture
def two_reports(tmp_path):
    a = _report(tmp_path / "a.json", "quick", [
        _case("t/agree", "agrees", [_q("U", rhat=1.002, mixed=True, erg="mixing"),
                                    _q("old-style")]),
        _case("t/unmixed", "not mixed", [_q("K", rhat=1.05, mixed=False, erg="mixing"),
                                         _q("code", rhat=3.0, mixed=False, erg="frozen",
                                            equilibrated=True, note="weight ESS ok")]),
    ])
    b = _report(tmp_path / "b.json", "full", [
        _case("t/frozen", "not equilibrated", [
            _q("U", rhat=1.003, mixed=True, erg="mixing"),
            _q("code 1-1-0", rhat=2.5, mixed=False, erg="frozen", equilibrated=False,
               note="weight ESS 3 < 50 at stage 7")]),
        _case("t/stuck|pipe", "not mixed", [_q("a|b", passed=False, rhat="inf", mixed=False)],
              seconds=None),
    ])
    return a, b


def _row(page, case):
    rows = [line for line in page.splitlines() if line.startswith(f"| `{case}` |")]
    assert len(rows) == 1, (case, rows)
    return [c.strip() for c in rows[0].strip("|").split(" | ")]


def test_page_numbers_counts_and_classifications(two_reports):
    a, b = two_reports
    classes = {"t/unmixed": {"kind": "open", "evidence": "needs chains 10x longer"}}
    page = render_validation_page([("A run", str(a)), (None, b)], classifications=classes)
    assert page.startswith("# Validation results\n")
    assert f"from `{a}`, `{b}` and must not be edited by hand" in page
    assert "## A run\n" in page and "## full\n" in page  # label, or the suite by default
    assert "seed 7 · device `cuda` · richlazy 9.9.9 · created 2026-12-01T00:00:00+00:00" in page
    assert "**2 cases: 1 agrees, 1 not mixed.**" in page
    assert "**2 cases: 1 not mixed, 1 not equilibrated.**" in page
    # case | paper | verdict | quantities | mixing | frozen | undeclared | max R̂ | frozen eq. | s
    assert _row(page, "t/agree") == ["`t/agree`", "test", "agrees", "2", "1", "0", "1", "1.002",
                                     "—", "12.3"]
    # the frozen quantity's R̂ 3.0 is left out of the maximum
    assert _row(page, "t/unmixed") == ["`t/unmixed`", "test", "not mixed", "2", "1", "1", "0",
                                       "1.05", "1/1", "12.3"]
    assert _row(page, "t/frozen")[3:] == ["2", "1", "1", "0", "1.003", "0/1", "12.3"]
    assert _row(page, "t/stuck\\|pipe")[3:] == ["1", "0", "0", "1", "inf", "—", "—"]
    inconclusive = page.split("## Inconclusive and disagreeing cases", 1)[1]
    assert "t/agree" not in inconclusive
    assert "### `t/unmixed` (A run)" in inconclusive
    assert "Classification: **open** — needs chains 10x longer" in inconclusive
    assert inconclusive.count("Classification: unclassified.") == 2
    assert "| K | not mixed | 1 | 1.012 | 0.01235 | 1.05 | mixing | — |" in inconclusive
    assert "| code | " not in inconclusive  # frozen and equilibrated: not behind the verdict
    assert ("| code 1-1-0 | not equilibrated | 1 | 1.012 | 0.01235 | 2.5 | frozen | "
            "weight ESS 3 < 50 at stage 7 |") in inconclusive
    assert "| a\\|b | failed, not mixed | 1 | 1.012 | 0.01235 | inf | — | — |" in inconclusive
    # deterministic: the same files give the same page
    assert render_validation_page([("A run", str(a)), (None, b)],
                                  classifications=classes) == page


def test_every_case_agreeing_has_no_inconclusive_case(tmp_path):
    a = _report(tmp_path / "a.json", "quick", [_case("t/agree", "agrees", [_q("U")])])
    page = render_validation_page([(None, a)])
    assert "**1 case: 1 agrees.**" in page
    assert "None: every case of every report agrees." in page


@pytest.mark.parametrize("entry, match", [
    ({"kind": "probably fine", "evidence": ""}, "t/unmixed"),
    ({"kind": "open", "evidance": "typo"}, "t/unmixed.*unknown keys"),
])
def test_a_bad_classification_names_the_case(two_reports, entry, match):
    a, _ = two_reports
    with pytest.raises(ValueError, match=match):
        render_validation_page([(None, a)], classifications={"t/unmixed": entry})


@pytest.mark.parametrize("text", ["{not json", '{"cases": 3}', "[1, 2]",
                                  '{"suite": 3, "cases": []}'])
def test_a_malformed_report_names_the_file(tmp_path, text):
    bad = tmp_path / "broken-report.json"
    bad.write_text(text)
    with pytest.raises(ValueError, match="broken-report.json"):
        render_validation_page([(None, bad)])


def test_bad_arguments_name_the_argument(two_reports):
    a, _ = two_reports
    with pytest.raises(ValueError, match="at least one"):
        render_validation_page([])
    with pytest.raises(TypeError, match="reports"):
        render_validation_page(str(a))
    with pytest.raises(ValueError, match="label"):
        render_validation_page([("", a)])
    with pytest.raises(TypeError, match="classifications"):
        render_validation_page([(None, a)], classifications=[("t/unmixed", "open")])


# --------------------------------------------------------------------------------------------
# the command line
# --------------------------------------------------------------------------------------------






def test_cli_writes_the_page(two_reports, tmp_path, capsys):
    a, b = two_reports
    classes = tmp_path / "classes.json"
    classes.write_text(json.dumps({"t/frozen": {"kind": "agreement once equilibrated",
                                                "evidence": "annealed run agrees"}}))
    out = tmp_path / "pages" / "validation.md"
    assert _rc(["validation-page", str(a), str(b), "--label", "A", "--label", "B",
                "--classes", str(classes), "--out", str(out)]) == 0
    assert capsys.readouterr().err == ""
    expected = render_validation_page([("A", str(a)), ("B", str(b))],
                                      classifications=read_classifications(classes))
    assert out.read_text() == expected
    assert "Classification: **agreement once equilibrated** — annealed run agrees" in expected
    assert _rc(["validation-page", str(a)]) == 0  # no --out: printed
    assert capsys.readouterr().out == render_validation_page([(None, str(a))])


@pytest.mark.parametrize("extra, word", [
    ([], "missing.json"),
    (["--label", "A"], "--label"),
    (["--classes", "nope.json"], "--classes"),
])
def test_cli_errors_are_one_line_exit_2_and_write_nothing(two_reports, tmp_path, capsys, extra,
                                                          word):
    a, _ = two_reports
    out = tmp_path / "out" / "validation.md"
    reports = [str(tmp_path / "missing.json")] if word == "missing.json" else [str(a), str(a)]
    before = sorted(tmp_path.rglob("*"))
    assert _rc(["validation-page", *reports, *extra, "--out", str(out)]) == 2
    assert word in _one_error_line(capsys.readouterr().err)
    assert sorted(tmp_path.rglob("*")) == before and not out.exists()


def test_cli_out_must_not_be_a_folder(two_reports, tmp_path, capsys):
    a, _ = two_reports
    assert _rc(["validation-page", str(a), "--out", str(tmp_path)]) == 2
    assert "--out" in _one_error_line(capsys.readouterr().err)


# --------------------------------------------------------------------------------------------
# the committed report, classifications and page
# --------------------------------------------------------------------------------------------


def test_the_committed_report_renders_every_case():
    classes = read_classifications(ROOT / "docs" / "validation_classes.json")
    page = render_validation_page([("quick", str(COMMITTED))], classifications=classes)
    for c in json.loads(COMMITTED.read_text())["cases"]:
        assert f"`{c['name']}`" in page, c["name"]


def test_the_committed_page_is_generated_and_the_log_is_kept():
    page = (ROOT / "docs" / "validation.md").read_text()
    assert page.startswith("# Validation results\n")
    assert "generated by `richlazy validation-page`" in page
    log = (ROOT / "docs" / "notes" / "validation_log.md").read_text()
    assert log.splitlines()[3] == "# Validation cases and latest results"
