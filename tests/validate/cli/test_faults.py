"""Issue 53: command-line faults found by a bad-input sweep. Every CLI error is one line on
stderr with exit 2 and leaves nothing on disk; reports of runs into one --out are merged; the
--out folder is locked while a run writes it."""

import fcntl
import json
import re
import socket
import time

import pytest
from cli_helpers import one_error_line as _one_error_line
from cli_helpers import run_main as _rc
from import_helpers import ROOT
from richlazy.validate.cli import main
from richlazy.validate.cli._common import usable_cores
from richlazy.validate.cli._main import build_parser
from richlazy.validate.core._compare import compare
from richlazy.validate.core._registry import CaseOutcome, register_case

README = ROOT / "README.md"
DIST_DOC = ROOT / "docs" / "distributed.md"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def two_cases(scratch_registry):
    for name in ("coding/zz-merge-a", "coding/zz-merge-b"):
        @register_case(name, description=f"{name} passes", suites=("quick",))
        def _case(ctx, _name=name):
            return CaseOutcome(quantities=[compare("x", 1.0, 1.0 + ctx.seed * 1e-3, kind="abs",
                                                   tol=0.1)])
    return scratch_registry


def _validate(out, only, *extra):
    return _rc(["validate", "--only", only, "--out", str(out), "--device", "cpu", "--quiet",
                *extra])


def _cases(out):
    return {c["name"]: c for c in json.loads((out / "report.json").read_text())["cases"]}


# --------------------------------------------------------------------------------------------
# report.json keeps the cases of earlier runs; --out is locked
# --------------------------------------------------------------------------------------------


def test_runs_with_different_only_into_one_out_merge_their_cases(tmp_path, two_cases, capsys):
    out = tmp_path / "rep"
    assert _validate(out, "coding/zz-merge-a") == 0
    assert _validate(out, "coding/zz-merge-b", "--seed", "4") == 0
    cases = _cases(out)
    assert list(cases) == ["coding/zz-merge-a", "coding/zz-merge-b"]
    assert cases["coding/zz-merge-a"]["seed"] == 0 and cases["coding/zz-merge-b"]["seed"] == 4
    for c in cases.values():  # when each ran, and for how long
        assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", c["finished"]) and c["seconds"] >= 0
    md = (out / "report.md").read_text()
    assert "coding/zz-merge-a" in md and "coding/zz-merge-b" in md and "2 cases passed" in md
    # a rerun of one case replaces its entry only
    assert _validate(out, "coding/zz-merge-a", "--seed", "7") == 0
    cases = _cases(out)
    assert list(cases) == ["coding/zz-merge-a", "coding/zz-merge-b"]
    assert cases["coding/zz-merge-a"]["seed"] == 7 and cases["coding/zz-merge-b"]["seed"] == 4
    assert cases["coding/zz-merge-a"]["quantities"][0]["simulation"] == pytest.approx(1.007)


def test_a_damaged_report_json_is_noted_kept_aside_and_replaced(tmp_path, two_cases, capsys):
    out = tmp_path / "rep"
    out.mkdir()
    (out / "report.json").write_text('{"cases": [{"name": 3}')  # cut off mid-write
    assert _validate(out, "coding/zz-merge-a") == 0
    assert list(_cases(out)) == ["coding/zz-merge-a"]
    err = capsys.readouterr().err
    assert "richlazy: warning:" in err and "report.json" in err and "Traceback" not in err
    assert (out / "report.json.damaged").read_text() == '{"cases": [{"name": 3}'
    (out / "report.json").write_text('{"cases": [{"name": "coding/zz-merge-b", "quantities": null}]}')
    assert _validate(out, "coding/zz-merge-a") == 0  # a structurally wrong one too
    assert list(_cases(out)) == ["coding/zz-merge-a"]
    assert "richlazy: warning:" in capsys.readouterr().err  # noted again, not once per process


def test_an_out_in_use_by_another_run_is_refused_with_one_line(tmp_path, two_cases, capsys):
    out = tmp_path / "rep"
    assert _validate(out, "coding/zz-merge-a") == 0
    before = (out / "report.json").read_text()
    capsys.readouterr()
    with open(out / ".lock", "a+") as fh:  # another run holds the folder
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert _validate(out, "coding/zz-merge-b") == 2
        line = _one_error_line(capsys.readouterr().err)
        assert "--out" in line and str(out) in line and "in use by another richlazy run" in line
        sweep_out = tmp_path / "sw"
        sweep_out.mkdir()
        with open(sweep_out / ".lock", "a+") as fh2:
            fcntl.flock(fh2, fcntl.LOCK_EX | fcntl.LOCK_NB)
            assert _rc(["sweep", "selftest", "--grid", "n=100", "--out", str(sweep_out),
                        "--quiet", "--no-figures"]) == 2
            assert "in use by another richlazy run" in _one_error_line(capsys.readouterr().err)
            assert not (sweep_out / "sweep.json").exists()
    assert (out / "report.json").read_text() == before
    assert _validate(out, "coding/zz-merge-b") == 0  # released: runs


# --------------------------------------------------------------------------------------------
# one line, exit 2, nothing on disk
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cmd", [["validate", "--only", "coding/linear-toy"],
                                 ["sweep", "selftest", "--grid", "n=100", "--no-figures"]])
def test_unreachable_scheduler_is_one_line_exit_2_and_creates_nothing(cmd, tmp_path, capsys):
    out = tmp_path / "r"
    t0 = time.monotonic()
    rc = _rc([*cmd, "--out", str(out), "--scheduler", f"tcp://127.0.0.1:{_closed_port()}",
              "--scheduler-timeout", "1", "--quiet"])
    assert rc == 2 and time.monotonic() - t0 < 20
    line = _one_error_line(capsys.readouterr().err)
    assert "--scheduler" in line and "cannot connect" in line
    assert not out.exists()


@pytest.mark.parametrize("cmd", [["validate", "--only", "coding/linear-toy"],
                                 ["sweep", "selftest", "--grid", "n=100"]])
def test_tls_scheduler_needs_a_security_file(cmd, tmp_path, capsys):
    out = tmp_path / "r"
    base = [*cmd, "--out", str(out), "--scheduler", "tls://127.0.0.1:1"]
    assert _rc(base) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "--scheduler tls://" in line and "--scheduler-security" in line
    bad = {"missing.json": None, "notjson.json": "tls_ca_file: x", "list.json": "[1]",
           "unknown.json": json.dumps({"tls_ca_file": "ca.pem", "password": "x"}),
           "nofile.json": json.dumps({"tls_ca_file": str(tmp_path / "none.pem")}),
           "notstr.json": json.dumps({"tls_ca_file": 3})}
    for name, text in bad.items():
        if text is not None:
            (tmp_path / name).write_text(text)
        assert _rc([*base, "--scheduler-security", str(tmp_path / name)]) == 2, name
        line = _one_error_line(capsys.readouterr().err)
        assert "--scheduler-security" in line and name in line, line
    assert not out.exists()


def test_tls_scheduler_with_a_security_file_is_accepted_and_fails_to_connect_in_one_line(
        tmp_path, capsys):
    for f in ("ca.pem", "cert.pem", "key.pem"):
        (tmp_path / f).write_text("not a certificate\n")
    sec = tmp_path / "security.json"
    sec.write_text(json.dumps({"tls_ca_file": str(tmp_path / "ca.pem"),
                               "tls_client_cert": str(tmp_path / "cert.pem"),
                               "tls_client_key": str(tmp_path / "key.pem")}))
    out = tmp_path / "r"
    rc = _rc(["sweep", "selftest", "--grid", "n=100", "--out", str(out), "--scheduler",
              f"tls://127.0.0.1:{_closed_port()}", "--scheduler-security", str(sec),
              "--scheduler-timeout", "1"])
    assert rc == 2
    assert "--scheduler tls://" in _one_error_line(capsys.readouterr().err)
    assert not out.exists()


@pytest.mark.parametrize("cmd", [["validate", "--only", "coding/linear-toy"], ["sweep", "selftest"]])
@pytest.mark.parametrize("opt", [["--scheduler-timeout", "5"], ["--scheduler-security", "s.json"]])
def test_scheduler_options_need_scheduler(cmd, opt, tmp_path, capsys):
    assert _rc([*cmd, *opt, "--out", str(tmp_path / "r")]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert opt[0] in line and "needs --scheduler" in line
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("bad", ["0", "-3", "nan", "inf", "ten"])
def test_scheduler_timeout_must_be_a_positive_number(bad, capsys):
    assert _rc(["validate", "--only", "coding/linear-toy", "--scheduler", "tcp://127.0.0.1:1",
                "--scheduler-timeout", bad]) == 2
    assert "--scheduler-timeout" in _one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("cmd", [["validate", "--only", "coding/linear-toy"],
                                 ["sweep", "selftest", "--grid", "n=100"]])
def test_seed_is_bounded_to_int64(cmd, tmp_path, capsys):
    out = tmp_path / "r"
    assert build_parser().parse_args([*cmd, "--seed", str(2**63 - 1)]).seed == 2**63 - 1
    for bad in (str(2**63), str(2**64 + 5)):  # refused by the parser, before anything runs
        with pytest.raises(SystemExit):
            build_parser().parse_args([*cmd, "--seed", bad])
        capsys.readouterr()
        assert _rc([*cmd, "--seed", bad, "--out", str(out)]) == 2
        line = _one_error_line(capsys.readouterr().err)
        assert "--seed" in line and str(2**63 - 1) in line and bad in line
    assert not out.exists()


def test_sweep_library_rejects_a_seed_beyond_int64(tmp_path):
    from richlazy.validate import sweep

    with pytest.raises(ValueError, match="seed must be <= 9223372036854775807"):
        sweep("selftest", {"n": [100]}, out=tmp_path / "sw", seed=2**63)
    assert not (tmp_path / "sw").exists()


@pytest.mark.parametrize("cmd", [["validate", "--only", "coding/linear-toy"],
                                 ["sweep", "selftest", "--grid", "n=100"]])
def test_workers_are_bounded_by_the_usable_cores(cmd, tmp_path, capsys):
    limit = 4 * usable_cores()
    assert build_parser().parse_args([*cmd, "--workers", str(limit)]).workers == limit
    with pytest.raises(SystemExit):  # refused by the parser: no worker is ever started
        build_parser().parse_args([*cmd, "--workers", "100000"])
    capsys.readouterr()
    out = tmp_path / "r"
    assert _rc([*cmd, "--workers", "100000", "--out", str(out)]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "--workers" in line and "100000" in line and f"at most {limit}" in line
    assert "--scheduler" in line
    assert not out.exists()


@pytest.mark.parametrize("argv", [["--only", "nonexistent/*"],
                                  ["--scheduler", "http://x:1", "--only", "coding/linear-toy"],
                                  ["--scheduler", "nonsense", "--only", "coding/linear-toy"]])
def test_rejected_validate_arguments_create_no_folder(argv, tmp_path, capsys):
    out = tmp_path / "r"
    assert _rc(["validate", *argv, "--out", str(out), "--device", "cpu"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert argv[0] in line
    assert not out.exists()


def test_rejected_sweep_scheduler_writes_no_sweep_json(tmp_path, capsys):
    out = tmp_path / "r"
    assert _rc(["sweep", "selftest", "--grid", "n=100", "--out", str(out), "--scheduler",
                "nonsense"]) == 2
    assert "--scheduler" in _one_error_line(capsys.readouterr().err)
    assert not out.exists()


def test_sweep_library_with_an_unreachable_scheduler_writes_nothing(tmp_path, monkeypatch):
    from richlazy.validate import sweep
    from richlazy.validate.sweeps import _executors

    monkeypatch.setattr(_executors, "CONNECT_TIMEOUT_S", 1.0)
    with pytest.raises(ValueError, match="cannot connect"):
        sweep("selftest", {"n": [100]}, out=tmp_path / "sw",
              executor=f"tcp://127.0.0.1:{_closed_port()}")
    assert not (tmp_path / "sw").exists()


def test_argparse_errors_are_one_line(capsys):
    assert _rc(["validate", "--frobnicate"]) == 2
    _one_error_line(capsys.readouterr().err)


# --------------------------------------------------------------------------------------------
# richlazy diff of a malformed report
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("doc", [
    {"cases": [{"name": "c/1", "quantities": None}]},
    {"cases": [{"name": "c/1", "quantities": [None]}]},
    {"cases": [{"name": "c/1", "quantities": [{"simulation": 1.0}]}]},
    {"cases": [{"name": "c/1", "quantities": "U"}]},
    {"cases": [None]},
    {"cases": [{"quantities": []}]},
    {"cases": [{"name": ["c"], "quantities": []}]},
    {"cases": None},
    {"cases": {"c/1": {}}},
    [1, 2],
])
def test_diff_of_a_malformed_report_is_one_line_exit_2(doc, tmp_path, capsys):
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"cases": [{"name": "c/1", "quantities": [
        {"name": "U", "simulation": 1.0, "stderr": 0.1}]}]}))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    for argv, which in (([str(bad), str(good)], "REPORT_A"), ([str(good), str(bad)], "REPORT_B")):
        assert _rc(["diff", *argv]) == 2
        line = _one_error_line(capsys.readouterr().err)
        assert which in line and "bad.json" in line


# --------------------------------------------------------------------------------------------
# --help, README and docs tell the new options
# --------------------------------------------------------------------------------------------


def test_help_and_readme_show_the_scheduler_options(capsys):
    readme = README.read_text().split("Command line", 1)[1].split("```", 2)[1]
    for cmd in ("validate", "sweep"):
        with pytest.raises(SystemExit):
            main([cmd, "--help"])
        text = capsys.readouterr().out
        for opt in ("--scheduler-timeout", "--scheduler-security", "--workers", "--seed"):
            assert opt in text, (cmd, opt)
    assert "--scheduler-timeout S" in readme and "--scheduler-security FILE" in readme
    from richlazy.validate.cli import _main

    assert "--scheduler-timeout S" in _main.__doc__ and "--scheduler-security FILE" in _main.__doc__


def test_distributed_doc_says_how_to_secure_a_scheduler():
    text = DIST_DOC.read_text()
    sec = text.split("## Securing a scheduler", 1)[1]
    assert "without authentication" in sec and "--scheduler-security" in sec
    assert "ssh -L 8786:localhost:8786" in sec and "tls_client_key" in sec


def test_the_committed_report_reads_back_exactly():
    from richlazy.validate.rendering._report import _clean, read_report_cases

    path = ROOT / "docs" / "report" / "report.json"
    cases = read_report_cases(path)
    back = [_clean(c.to_dict()) for c in cases]
    written = json.loads(path.read_text())["cases"]
    assert len(back) == len(written) > 0
    for b, w in zip(back, written, strict=True):
        if "finished" not in w:  # written before cases carried it
            assert b.pop("finished") == ""
        for q, wq in zip(b["quantities"], w["quantities"], strict=True):
            if "ergodicity" not in wq:  # written before quantities declared a class
                assert [q.pop(k) for k in ("ergodicity", "ergodicity_reason", "equilibrated",
                                           "equilibration_note")] == [None, "", None, ""]
    assert back == written
