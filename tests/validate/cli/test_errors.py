"""Command-line errors: bad paths and devices exit 2 with one line naming the option; Ctrl-C exits
130 with one line saying how to resume; a theory-only command imports neither torch nor matplotlib.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
import torch
from cli_helpers import one_error_line as _one_error_line
from cli_helpers import run_main as _rc
from richlazy.validate.benchmarks import _registry as _bench_registry

NO_CUDA = not torch.cuda.is_available()






# --------------------------------------------------------------------------------------------
# --out
# --------------------------------------------------------------------------------------------


def test_out_is_an_existing_file_exit_2(tmp_path, capsys):
    f = tmp_path / "afile"
    f.write_text("x")
    rc = _rc(["validate", "--only", "coding/linear-toy", "--out", str(f), "--device", "cpu",
                    "--quiet"])
    assert rc == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "--out" in line and "existing file" in line and str(f) in line
    assert f.read_text() == "x"


def test_out_below_a_file_exit_2(tmp_path, capsys):
    f = tmp_path / "afile"
    f.write_text("x")
    rc = _rc(["validate", "--only", "coding/linear-toy", "--out", str(f / "sub"), "--device",
                    "cpu", "--quiet"])
    assert rc == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "--out" in line and "not a writable folder" in line


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root can write into a read-only folder")
def test_out_unwritable_folder_exit_2(tmp_path, capsys):
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o500)
    try:
        rc = _rc(["validate", "--only", "coding/linear-toy", "--out", str(d), "--device", "cpu",
                        "--quiet"])
    finally:
        d.chmod(0o700)
    assert rc == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "--out" in line and "not a writable folder" in line


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux procfs")
def test_out_in_a_folder_nobody_can_write_exit_2(capsys):
    # procfs refuses new folders even for root, so this case also runs where the test above skips
    rc = _rc(["validate", "--only", "coding/linear-toy", "--out", "/proc/self/richlazy-out",
                    "--device", "cpu", "--quiet"])
    assert rc == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "--out" in line and "not a writable folder" in line


def test_run_suite_names_out_dir(tmp_path):
    from richlazy.validate import run_suite

    f = tmp_path / "afile"
    f.write_text("x")
    with pytest.raises(ValueError, match="out_dir .* existing file"):
        run_suite("quick", only="coding/linear-toy", device="cpu", out_dir=f, progress=False)


# --------------------------------------------------------------------------------------------
# --device
# --------------------------------------------------------------------------------------------


@pytest.mark.skipif(not NO_CUDA, reason="needs a machine without CUDA")
@pytest.mark.parametrize("argv", [
    ["validate", "--device", "cuda", "--only", "coding/linear-toy", "--quiet"],
    ["bench", "--device", "cuda", "--only", "sampler"],
    ["bench", "--device", "cuda", "--only", "coding"],
    ["bench", "--device", "cuda"],
])
def test_cuda_without_cuda_exit_2(argv, tmp_path, capsys):
    if argv[0] == "validate":
        argv = argv + ["--out", str(tmp_path / "r")]
    assert _rc(argv) == 2
    captured = capsys.readouterr()
    line = _one_error_line(captured.err)
    assert "--device cuda" in line and "CUDA is not available" in line
    assert captured.out == ""  # nothing ran
    assert not (tmp_path / "r").exists()


@pytest.fixture
def fake_benchmarks():
    """A registry of fast stand-ins with the real names and devices; records every call."""
    real = _bench_registry.benchmarks()
    calls = []

    def make(name):
        def fn(*, device, min_time):
            from threadpoolctl import threadpool_info

            calls.append(dict(name=name, device=device, min_time=min_time,
                              torch_threads=torch.get_num_threads(),
                              pools={d["num_threads"] for d in threadpool_info()}))
            return _bench_registry.BenchResult(name, {}, f"fake {name} on {device}")

        return fn

    with _bench_registry._BENCHMARKS.scratch(empty=True):
        for name, spec in real.items():
            _bench_registry.register_benchmark(name, description=spec.description,
                                               devices=spec.devices)(make(name))
        yield real, calls


def test_bench_cuda_for_a_cpu_only_benchmark_is_refused_before_anything_runs(
        fake_benchmarks, monkeypatch, capsys):
    real, calls = fake_benchmarks
    assert real["coding"].devices == ("cpu",) and "cuda" in real["sampler"].devices
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # pretend: a CUDA machine
    assert _rc(["bench", "--device", "cuda", "--only", "sampler,coding"]) == 2
    captured = capsys.readouterr()
    line = _one_error_line(captured.err)
    assert "--device cuda" in line and "'coding' runs on cpu only" in line
    assert calls == [] and captured.out == ""  # no silent CPU run, and the sampler did not start


def test_bench_without_options_runs_every_benchmark_on_one_thread(fake_benchmarks, capsys):
    real, calls = fake_benchmarks
    old = torch.get_num_threads()
    assert _rc(["bench", "--min-time", "0.01"]) == 0
    assert [c["name"] for c in calls] == list(real)  # ldt-sampler no longer stops the run
    assert "equality" in [c["name"] for c in calls]
    for c in calls:
        assert c["device"] in ("cpu", "cuda", "cuda:0") and c["min_time"] == 0.01
        assert c["torch_threads"] == 1 and c["pools"] == {1}
    assert torch.get_num_threads() == old
    out = capsys.readouterr().out
    assert all(f"fake {n} on" in out for n in real)


def test_bench_threads_option(fake_benchmarks):
    real, calls = fake_benchmarks
    assert _rc(["bench", "--only", "ldt", "--threads", "2", "--min-time", "0.01"]) == 0
    (c,) = calls
    assert c["torch_threads"] == 2 and c["pools"] == {2}


def test_bench_real_ldt_sampler_with_default_device(capsys):
    # the smallest real benchmark on the path that crashed at torch.device("auto")
    assert _rc(["bench", "--only", "ldt-sampler", "--min-time", "0.01"]) == 0
    assert "chain-steps/s" in capsys.readouterr().out


def test_run_benchmark_rejects_bad_threads():
    with pytest.raises(ValueError, match="threads"):
        _bench_registry.run_benchmark("ldt", threads=0)


# --------------------------------------------------------------------------------------------
# Ctrl-C
# --------------------------------------------------------------------------------------------

_CTRL_C_SCRIPT = textwrap.dedent('''
    import pathlib, signal, sys, time
    from richlazy.validate import CaseOutcome, compare, register_case
    from richlazy.validate.cli import main

    # what a terminal gives the process: CI may start the tests as a background job, whose children
    # inherit SIGINT ignored, and Python keeps an ignored SIGINT ignored
    signal.signal(signal.SIGINT, signal.default_int_handler)

    mode, marker = sys.argv[1], pathlib.Path(sys.argv[2])

    @register_case("coding/zz-ctrlc-a", description="passes", suites=("quick",))
    def _a(ctx):
        return CaseOutcome(quantities=[compare("x", 1.0, 1.0, kind="abs", tol=0.1)])

    @register_case("coding/zz-ctrlc-b", description="interrupted", suites=("quick",))
    def _b(ctx):
        if mode == "raise":
            raise KeyboardInterrupt
        marker.write_text("running")
        for _ in range(600):
            time.sleep(0.1)
        return CaseOutcome(quantities=[])

    sys.exit(main(["validate", "--only", "coding/zz-ctrlc-*", "--out", sys.argv[3], "--device", "cpu",
                   "--quiet"]))
''')


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["raise", "sigint"])
def test_ctrl_c_exits_130_with_one_line(mode, tmp_path):
    script = tmp_path / "ctrlc.py"
    script.write_text(_CTRL_C_SCRIPT)
    marker = tmp_path / "marker"
    out = tmp_path / "rep"
    proc = subprocess.Popen([sys.executable, str(script), mode, str(marker), str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if mode == "sigint":
        for _ in range(1200):  # wait (up to 2 min) until the second case is running
            if marker.exists() or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert marker.exists(), proc.communicate()
        proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert stderr.strip().splitlines() == ["richlazy: interrupted — rerun the same command to resume"]
    assert "AGREES     coding/zz-ctrlc-a" in stdout
    rep = json.loads((out / "report.json").read_text())  # consistent: the finished case only
    assert [c["name"] for c in rep["cases"]] == ["coding/zz-ctrlc-a"] and rep["passed"]
    assert "coding/zz-ctrlc-a" in (out / "report.md").read_text()
    assert not list(out.glob("*.tmp"))


# --------------------------------------------------------------------------------------------
# imports
# --------------------------------------------------------------------------------------------


def _modules_after(code: str) -> set:
    full = f"import sys\n{code}\nprint('\\n'.join(sorted(sys.modules)))"
    res = subprocess.run([sys.executable, "-c", full], check=True, capture_output=True, text=True)
    return set(res.stdout.split())


@pytest.mark.slow
def test_tables_imports_neither_torch_nor_matplotlib():
    mods = _modules_after("import io, contextlib\n"
                          "from richlazy.validate.cli import main\n"
                          "with contextlib.redirect_stdout(io.StringIO()):\n"
                          "    assert main(['tables']) == 0\n")
    assert "torch" not in mods and "matplotlib" not in mods
    assert "richlazy.theory" in mods


@pytest.mark.slow
def test_tables_entry_point_imports_no_torch():
    code = ("import runpy, sys, io, contextlib\n"
            "sys.argv = ['richlazy', 'tables', '--format', 'csv']\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n"
            "        runpy.run_module('richlazy', run_name='__main__')\n"
            "    except SystemExit as e:\n"
            "        assert e.code == 0, e.code\n")
    mods = _modules_after(code)
    assert "torch" not in mods and "matplotlib" not in mods


def test_validate_package_is_lazy_and_complete():
    mods = _modules_after("import richlazy.validate")
    assert "torch" not in mods and "matplotlib" not in mods
    import richlazy.validate as v

    assert set(v._LAZY) == set(v.__all__)
    for name in v.__all__:
        assert getattr(v, name) is not None, name
    assert set(v.__all__) <= set(dir(v))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        v.nope  # noqa: B018


def test_workers_auto_is_one_worker_per_usable_core_and_bad_counts_exit_2(capsys):
    from richlazy.validate.cli._common import usable_cores
    from richlazy.validate.cli._main import build_parser

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert usable_cores() == cores
    for cmd in (["validate"], ["sweep", "selftest"]):
        assert build_parser().parse_args([*cmd, "--workers", "auto"]).workers == cores
        assert build_parser().parse_args([*cmd, "--workers", "3"]).workers == 3
    for bad in ("0", "two", "-1"):
        assert _rc(["validate", "--workers", bad, "--out", "unused"]) == 2
        line = capsys.readouterr().err.strip().splitlines()[-1]
        assert "--workers" in line and "positive integer or 'auto'" in line and repr(bad) in line, line
    assert not os.path.exists("unused")
