"""Registry, runner, report files and the CLI (end to end, at a tiny size)."""

import json

import pytest
from cli_helpers import resize_case
from richlazy.validate.cases.coding import _linear as _cases_coding
from richlazy.validate.cli import main
from richlazy.validate.core._compare import compare
from richlazy.validate.core._registry import CaseOutcome, register_case


@pytest.fixture
def tiny_linear(monkeypatch):
    resize_case(monkeypatch, _cases_coding.CASE,
                quick=_cases_coding.LinearToySize(N=16, P=16, N0=24, n_chains=2, T=0.05, dt=0.02,
                                                  n_steps=400, burn_in=100, thin=10, sampler="ula"))


def test_list_shows_cases_with_suite_and_paper(capsys):
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert "coding/linear-toy\tquick,full\tcoding" in lines
    for line in lines:
        name, suites, paper = line.split("\t")
        assert name.split("/")[0] == paper


def test_info(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "torch" in out and "threads" in out and "default device" in out


@pytest.mark.slow
def test_validate_writes_report_and_exit_code_matches(tmp_path, tiny_linear, capsys):
    out = tmp_path / "rep"
    rc = main(["validate", "--only", "coding/*linear*", "--out", str(out), "--device", "cpu",
               "--quiet", "--seed", "3"])
    rep = json.loads((out / "report.json").read_text())
    # exit 1 only for a disagreement or an error; "not mixed" is inconclusive
    assert rc == (0 if rep["ok"] else 1)
    assert rep["ok"] == all(c["verdict"] in ("agrees", "not mixed") for c in rep["cases"])
    assert rep["suite"] == "quick" and rep["seed"] == 3
    (case,) = rep["cases"]
    assert case["name"] == "coding/linear-toy"
    assert case["device"] == "cpu" and case["seed"] == 3 and case["seconds"] > 0
    assert isinstance(case["passed"], bool) and case["error"] is None
    q = case["quantities"][0]
    for key in ("name", "theory", "simulation", "stderr", "tolerance", "passed"):
        assert key in q
    assert "z" in q and "rel_error" in q
    assert case["passed"] == (case["verdict"] == "agrees")
    if case["verdict"] != "not mixed":
        assert case["passed"] == all(x["passed"] for x in case["quantities"])
    for fig in case["figures"]:
        assert (out / fig).stat().st_size > 1000
    md = (out / "report.md").read_text()
    assert "coding/linear-toy" in md and "| quantity | theory |" in md
    assert (out / "checkpoints").exists()
    # rerun resumes from the finished checkpoint and reproduces the numbers exactly
    rc2 = main(["validate", "--only", "coding/*linear*", "--out", str(out), "--device", "cpu",
                "--quiet", "--seed", "3"])
    rep2 = json.loads((out / "report.json").read_text())
    assert rc2 == rc
    assert [x["simulation"] for x in rep2["cases"][0]["quantities"]] == \
        [x["simulation"] for x in case["quantities"]]


def test_failing_and_crashing_cases_give_exit_code_1(tmp_path, scratch_registry, capsys):

    @register_case("coding/zz-fixture-fail", description="always fails", suites=("quick",))
    def _fail(ctx):
        return CaseOutcome(quantities=[compare("x", 1.0, 2.0, kind="rel", tol=0.1)])

    @register_case("coding/zz-fixture-crash", description="raises", suites=("quick",))
    def _crash(ctx):
        raise RuntimeError("boom")

    rc = main(["validate", "--only", "coding/zz-fixture-*", "--out", str(tmp_path), "--quiet"])
    assert rc == 1
    rep = json.loads((tmp_path / "report.json").read_text())
    by = {c["name"]: c for c in rep["cases"]}
    assert not by["coding/zz-fixture-fail"]["passed"]
    assert "boom" in by["coding/zz-fixture-crash"]["error"]
    out = capsys.readouterr().out
    assert "DISAGREES  coding/zz-fixture-fail" in out and "ERROR      coding/zz-fixture-crash" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "--suite", "huge"],
        ["validate", "--only", "nonexistent/*"],
        ["validate", "--seed", "-1"],
        ["validate", "--threads", "0"],
        ["validate", "--device", "tpu"],
        ["bench", "--only", "nothing"],
        ["bench", "--min-time", "0"],
        ["frobnicate"],
    ],
)
def test_bad_arguments_exit_2(argv, tmp_path, capsys):
    if argv[0] == "validate":
        argv = argv + ["--out", str(tmp_path / "r")]
    try:
        rc = main(argv)
    except SystemExit as exc:
        rc = exc.code
    assert rc == 2
    assert "error" in capsys.readouterr().err


def test_register_case_validation():
    with pytest.raises(ValueError, match="'<paper>/<name>'"):
        register_case("physics/x", description="")
    with pytest.raises(ValueError, match="suites must be a non-empty subset"):
        register_case("coding/x", description="", suites=("slow",))
