"""Sweeps: grid checks, resume (also after SIGKILL), failing tasks, executors (sequential vs a
Dask LocalCluster, bit-identical), dying workers, Ctrl-C, the CLI."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from richlazy.validate import sweep
from richlazy.validate.sweeps._store import read_table_csv

ENV = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
           NUMBA_NUM_THREADS="1")
VOLATILE = ("wall_s", "worker")  # the only columns allowed to differ between runs


def _stable(rows):
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in rows]


def _cli(*args, **kw):
    return subprocess.run([sys.executable, "-m", "richlazy", *args],
                          capture_output=True, text=True, env=ENV, timeout=kw.pop("timeout", 300),
                          **kw)


# ------------------------------------------------------------------ grids checked before running

@pytest.mark.parametrize("grid, exc, words", [
    ({"nope": [1]}, ValueError, ["'nope'", "mu, sigma"]),
    ({"n": []}, ValueError, ["'n'", "no values"]),
    ({"n": [10, "x"]}, TypeError, ["'n'", "integers", "'x'"]),
    ({"n": [10.5]}, TypeError, ["'n'", "integers"]),
    ({"mu": [float("nan")]}, ValueError, ["'mu'", "finite"]),
    ({"n": [1]}, ValueError, ["'n'", ">= 2"]),
    ({"n": [10, 10]}, ValueError, ["'n'", "repeats"]),
    ({"die": ["sometimes"]}, ValueError, ["'die'", "never"]),
])
def test_bad_grid_rejected_before_anything_runs(tmp_path, grid, exc, words):
    out = tmp_path / "sw"
    with pytest.raises(exc) as info:
        sweep("selftest", grid, out=out)
    for w in words:
        assert w in str(info.value)
    assert not out.exists()  # nothing written


def test_bad_options_named(tmp_path):
    with pytest.raises(ValueError, match="unknown sweep experiment name .nope."):
        sweep("nope", {})
    with pytest.raises(ValueError, match="seeds"):
        sweep("selftest", {}, seeds=0)
    with pytest.raises(ValueError, match="executor"):
        sweep("selftest", {}, executor="threads")
    with pytest.raises(ValueError, match="workers=2 needs executor='dask-local'"):
        sweep("selftest", {}, workers=2)
    with pytest.raises(ValueError, match="device"):
        sweep("selftest", {}, device="tpu")
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ValueError, match="existing file"):
        sweep("selftest", {}, out=f)


# ------------------------------------------------------------------ results and resume

def test_selftest_numbers_and_table(tmp_path):
    res = sweep("selftest", {"mu": [0.0, 2.0], "n": [400]}, seeds=8, out=tmp_path)
    assert res.ok and len(res.rows) == 16 and res.resumed == 0
    z = np.array(res.column("z"))
    # z = (mean - mu)/se is N(0, 1) across the 16 tasks: its mean is within 4/sqrt(16)
    assert abs(z.mean()) < 1.0 and 0.3 < z.std() < 2.0
    for r in res.rows:
        assert abs(r["mean"] - r["mu"]) < 5 * r["mean_se"]
        assert math.isclose(r["mean_se"], 1 / math.sqrt(400), rel_tol=0.25)
    table = read_table_csv(tmp_path / "table.csv")
    assert _stable(table) == _stable(res.rows)  # CSV round-trips every number exactly
    # Parquet comes with the optional distributed extra; without it the CSV checks above still ran
    pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow (distributed extra) not installed")
    pt = pq.read_table(tmp_path / "table.parquet").to_pylist()
    assert [r["z"] for r in pt] == res.column("z")
    assert {"figures/curves_z_mu.png", "figures/curves_mean_mu.png"} <= set(res.files)


def test_rerun_skips_finished_points_and_extends_grid(tmp_path):
    a = sweep("selftest", {"n": [50, 60]}, seeds=2, out=tmp_path, figures=False)
    logs = {p.parent.name: p.read_text() for p in (tmp_path / "checkpoints").glob("*/chunks.log")}
    b = sweep("selftest", {"n": [50, 60, 70]}, seeds=2, out=tmp_path, figures=False)
    assert b.resumed == 4 and len(b.rows) == 6
    assert _stable(b.rows[:4]) == _stable(a.rows)
    for key, text in logs.items():  # finished tasks did not run again
        assert (tmp_path / "checkpoints" / key / "chunks.log").read_text() == text
    with pytest.raises(ValueError, match="holds a sweep of 'selftest'"):
        sweep(lambda ctx, n: {"x": n}, {"n": [1]}, out=tmp_path)


def test_failing_task_recorded_and_sweep_goes_on(tmp_path):
    res = sweep("selftest", {"n": [20, 30], "fail_replicate": [1]}, seeds=3, out=tmp_path,
                figures=False)
    assert [r["status"] for r in res.rows] == ["ok", "failed", "ok"] * 2
    bad = res.rows[1]
    assert "RuntimeError" in bad["error"] and "fails on purpose" in bad["error"]
    assert math.isnan(bad["z"])
    doc = json.loads((tmp_path / "points" / f"{bad['key']}.json").read_text())
    assert "Traceback" in doc["traceback"]
    # a rerun retries the failed tasks only (they fail again here), the others are resumed
    again = sweep("selftest", {"n": [20, 30], "fail_replicate": [1]}, seeds=3, out=tmp_path,
                  figures=False)
    assert again.resumed == 4 and again.n_failed == 2


def test_plain_function_and_seed_streams():
    def fn(ctx, a):
        return {"u": float(ctx.rng().random()), "a2": a * a}

    r1 = sweep(fn, {"a": [1, 2]}, seeds=[0, 5])
    r2 = sweep(fn, {"a": [2, 1]}, seeds=[5, 0])
    by = lambda rows: {(r["a"], r["replicate"]): r["u"] for r in rows}  # noqa: E731
    assert by(r1.rows) == by(r2.rows)  # streams depend on (config, replicate), not on order
    assert len(set(by(r1.rows).values())) == 4
    assert r1.column("a2") == [1, 1, 4, 4]
    with pytest.raises(TypeError, match="'a'.*int, float, str or bool"):
        sweep(fn, {"a": [object()]})


def test_metrics_must_be_numbers():
    res = sweep(lambda ctx, a: {"x": "text"}, {"a": [1]})
    assert res.rows[0]["status"] == "failed" and "metric 'x' must be a number" in res.rows[0]["error"]


def test_metric_names_of_the_table_columns_are_refused():
    """A metric named like one of the table's own columns (e.g. "status") would overwrite it: a
    finished task would read as failed. The task fails with a message naming the metric; a plain
    function's grid key of such a name, and a registered experiment that declares one, are
    refused before anything runs."""
    from richlazy.validate.sweeps._registry import Param, register_sweep

    res = sweep(lambda ctx, a: {"status": 1.0, "x": 2.0}, {"a": [1]})
    row = res.rows[0]
    assert row["status"] == "failed" and "metric 'status' is reserved" in row["error"]
    with pytest.raises(ValueError, match="grid key 'device' is reserved"):
        sweep(lambda ctx, device: {"x": 1.0}, {"device": [1]})  # a plain function's parameter
    for names in ({"metrics": ("x", "worker")}, {"params": {"seed": Param(int, 0, "s")}}):
        kw = {"params": {"a": Param(int, 1, "a")}, "metrics": ("x",)} | names
        with pytest.raises(ValueError, match="reserved for the table's own columns"):
            register_sweep("clash-test", description="d", **kw)


# ------------------------------------------------------------------ interruption

def _wait_for_points(folder, n, proc, timeout=120):
    t0 = time.time()
    while time.time() - t0 < timeout:
        pts = list((folder / "points").glob("*.json")) if (folder / "points").exists() else []
        if len(pts) >= n:
            return
        if proc.poll() is not None:
            raise AssertionError(f"sweep ended early: {proc.stdout.read()} {proc.stderr.read()}")
        time.sleep(0.05)
    raise AssertionError("timed out waiting for finished points")


GRID = ["--grid", "n=30..33", "--grid", "chunks=3", "--grid", "sleep=0.15"]


@pytest.mark.slow
def test_resume_after_sigkill_gives_the_uninterrupted_table(tmp_path):
    ref = sweep("selftest", {"n": [30, 31, 32, 33], "chunks": [3], "sleep": [0.15]}, seeds=2)
    out = tmp_path / "sw"
    cmd = [sys.executable, "-m", "richlazy", "sweep", "selftest", *GRID,
           "--seeds", "2", "--out", str(out), "--quiet", "--no-figures"]
    proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for_points(out, 3, proc)
    time.sleep(0.2)  # inside a later task, after some of its chunks
    proc.kill()
    proc.wait()
    finished = {p.stem for p in (out / "points").glob("*.json")}
    assert 3 <= len(finished) < 8
    partial = [p.parent.name for p in (out / "checkpoints").glob("*/sums.json")
               if p.parent.name not in finished]
    logs_before = {k: (out / "checkpoints" / k / "chunks.log").read_text().split() for k in partial}
    r = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "resumed" in r.stdout
    rows = read_table_csv(out / "table.csv")
    assert _stable(rows) == _stable(ref.rows)
    # an interrupted task resumed from its checkpoint: its chunks were not recomputed
    for k, before in logs_before.items():
        after = (out / "checkpoints" / k / "chunks.log").read_text().split()
        assert after[:len(before)] == before and sorted(set(after)) == ["0", "1", "2"]
        assert len(after) == 3


@pytest.mark.slow
def test_ctrl_c_exits_130_with_a_consistent_table(tmp_path):
    out = tmp_path / "sw"
    proc = subprocess.Popen(
        [sys.executable, "-c",
         "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
         "from richlazy.validate.cli import main; sys.exit(main(sys.argv[1:]))",
         "sweep", "selftest", *GRID, "--seeds", "2", "--out", str(out), "--no-figures"],
        env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for_points(out, 2, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "rerun the same command to resume" in err
    rows = read_table_csv(out / "table.csv")
    keys = {p.stem for p in (out / "points").glob("*.json")}
    assert {r["key"] for r in rows} == keys and all(r["status"] == "ok" for r in rows)


# ------------------------------------------------------------------ CLI

@pytest.mark.slow
def test_cli_sweep_exit_codes_and_ranges(tmp_path):
    r = _cli("sweep", "selftest", "--grid", "n=10..12", "--grid", "fail_replicate=0,-1",
             "--out", str(tmp_path / "a"), "--no-figures")
    assert r.returncode == 1  # a failing task
    assert "3 of 6 tasks ok" in r.stdout
    rows = read_table_csv(tmp_path / "a" / "table.csv")
    assert [x["n"] for x in rows] == [10, 10, 11, 11, 12, 12]
    for args, words in ((["--grid", "m=1"], "unknown grid key 'm'"),
                        (["--grid", "n"], "KEY=V1,V2"),
                        (["--grid", "n=5..2"], "range '5..2' is empty"),
                        (["--grid", "n=3", "--grid", "n=4"], "given twice"),
                        (["--grid", "n=3", "--workers", "2", "--scheduler", "tcp://x:1"],
                         "not allowed with")):
        r = _cli("sweep", "selftest", *args, "--out", str(tmp_path / "b"))
        assert r.returncode == 2 and words in r.stderr, (args, r.stderr)
    assert not (tmp_path / "b").exists()
    r = _cli("sweep", "selftest", "--describe")
    assert r.returncode == 0 and "fail_replicate (int, default -1)" in r.stdout


# ------------------------------------------------------------------ Dask executors

@pytest.fixture(scope="module")
def distributed():
    # the Dask executors are an optional extra; the plain install must pass without them
    return pytest.importorskip("distributed", reason="the distributed extra is not installed")


@pytest.mark.slow
def test_local_cluster_gives_identical_table(tmp_path, distributed):
    grid = {"mu": [0.0, 1.0], "n": [100, 200], "fail_replicate": [2]}
    seq = sweep("selftest", grid, seeds=3, out=tmp_path / "seq", figures=False)
    dsk = sweep("selftest", grid, seeds=3, out=tmp_path / "dask", executor="dask-local",
                workers=2, figures=False)
    assert dsk.executor.startswith("dask-local")
    assert _stable(seq.rows) == _stable(dsk.rows)
    assert len({r["worker"] for r in dsk.rows}) == 2  # both workers ran tasks
    assert (tmp_path / "seq" / "table.csv").read_text().count("\n") == \
        (tmp_path / "dask" / "table.csv").read_text().count("\n")


@pytest.mark.slow
def test_dying_worker_rerun_then_failed(tmp_path, distributed):
    once = sweep("selftest", {"die": ["once"], "n": [10, 20]}, seeds=2, out=tmp_path / "once",
                 executor="dask-local", workers=2, figures=False)
    assert once.ok  # each task's worker died once; the task was rerun on a fresh worker
    ref = sweep("selftest", {"die": ["never"], "n": [10, 20]}, seeds=2)
    assert [r["z"] for r in once.rows] != [] and len(once.rows) == 4
    assert all(math.isfinite(r["z"]) for r in once.rows)
    always = sweep("selftest", {"die": ["always", "never"], "n": [10]}, seeds=1,
                   out=tmp_path / "always", executor="dask-local", workers=2, figures=False)
    st = {r["die"]: r for r in always.rows}
    assert st["never"]["status"] == "ok"
    assert st["always"]["status"] == "failed" and "KilledWorker" in st["always"]["error"]
    assert ref.ok


@pytest.mark.slow
def test_validate_on_local_cluster_matches_sequential(tmp_path, distributed):
    from richlazy.validate import run_suite

    a = run_suite("quick", only="equality/activation-change", out_dir=tmp_path / "a",
                  progress=False)
    b = run_suite("quick", only="equality/activation-change", out_dir=tmp_path / "b",
                  progress=False, executor="dask-local", workers=2)
    qa = [(q.name, q.theory, q.simulation, q.passed) for q in a.cases[0].quantities]
    qb = [(q.name, q.theory, q.simulation, q.passed) for q in b.cases[0].quantities]
    assert qa == qb and a.passed == b.passed
    assert json.loads((tmp_path / "b" / "report.json").read_text())["cases"][0]["name"] == \
        "equality/activation-change"
