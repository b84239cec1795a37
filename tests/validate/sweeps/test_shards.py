"""Job-array sweeps: ``richlazy sweep ... --shard I/N`` runs one slice of the tasks into a shared
folder (several at once, from separate processes), the unsharded command merges; a shard
interrupted and rerun finishes its slice without recomputing; bad or conflicting options exit 2
with one line; ``--print-sbatch N`` prints the Slurm array script."""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import subprocess
import sys

import pytest
from import_helpers import ROOT
from richlazy.validate import sweep
from richlazy.validate.cli import main
from richlazy.validate.core import _lock
from richlazy.validate.sweeps._store import read_table_csv

ENV = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
           NUMBA_NUM_THREADS="1")
VOLATILE = ("wall_s", "worker")  # the only columns allowed to differ between runs
# selftest: milliseconds per task; chunks=2 makes every task log two lines in its checkpoint
# folder's chunks.log, so the lines count how often a task was computed
GRID = ["--grid", "n=30..33", "--grid", "chunks=2"]
ARGS = [*GRID, "--seeds", "2", "--quiet"]  # 8 tasks


def _stable(rows):
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in rows]


def _main(argv, capsys):
    """``richlazy ARGV`` in this process: (exit code, stdout, stderr)."""
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse errors
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


def _computed(out):
    """How often each task of the folder was computed: key -> lines of its chunks.log / 2."""
    return {p.parent.name: len(p.read_text().split()) / 2
            for p in (out / "checkpoints").glob("*/chunks.log")}


def _points(out):
    return {p.stem for p in (out / "points").glob("*.json")} if (out / "points").exists() else set()


@pytest.mark.slow
def test_three_concurrent_shards_then_merge_equal_the_unsharded_table(tmp_path, capsys):
    out = tmp_path / "sharded"
    procs = [subprocess.Popen([sys.executable, "-m", "richlazy", "sweep", "selftest", *ARGS,
                               "--grid", "sleep=0.05", "--out", str(out), "--shard", f"{i}/3"],
                              env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(3)]
    for i, p in enumerate(procs):
        o, e = p.communicate(timeout=300)
        assert p.returncode == 0, e
        assert f"shard {i}/3: {3 if i < 2 else 2} of {3 if i < 2 else 2} tasks ok" in o
    assert len(_points(out)) == 8
    assert not (out / "table.csv").exists() and not (out / "figures").exists()  # no merging
    rc, o, e = _main(["sweep", "selftest", *ARGS, "--grid", "sleep=0.05", "--out", str(out)],
                     capsys)
    assert rc == 0, e
    assert "8 of 8 tasks ok (8 resumed" in o  # the merge computed nothing
    assert list((out / "figures").glob("*.png"))
    assert set(_computed(out).values()) == {1.0}  # every task computed exactly once
    ref = tmp_path / "whole"
    rc, _, e = _main(["sweep", "selftest", *ARGS, "--grid", "sleep=0.05", "--out", str(ref),
                      "--no-figures"], capsys)
    assert rc == 0, e
    rows = read_table_csv(out / "table.csv")
    assert len(rows) == 8 and _stable(rows) == _stable(read_table_csv(ref / "table.csv"))
    assert "shards" not in json.loads((out / "sweep.json").read_text())  # the merge cleared it


def test_interrupted_shard_rerun_finishes_its_slice_without_recomputing(tmp_path, capsys):
    out = tmp_path / "sw"
    grid = {"n": [30, 31, 32], "chunks": [2]}
    ref = sweep("selftest", grid, seeds=2, figures=False)  # 6 tasks; shard 1/2 has tasks 1, 3, 5

    def stop_after_first(row):
        raise KeyboardInterrupt  # as Ctrl-C (or a kill) right after the first point file

    with pytest.raises(KeyboardInterrupt):
        sweep("selftest", grid, seeds=2, out=out, shard=(1, 2), on_point_end=stop_after_first)
    first = _points(out)
    assert len(first) == 1 and not (out / "table.csv").exists()
    rc, o, e = _main(["sweep", "selftest", "--grid", "n=30..32", "--grid", "chunks=2",
                      "--seeds", "2", "--out", str(out), "--shard", "1/2", "--quiet"], capsys)
    assert rc == 0, e
    assert "shard 1/2: 3 of 3 tasks ok (1 resumed)" in o
    slice_keys = {ref.rows[k]["key"] for k in (1, 3, 5)}
    assert _points(out) == slice_keys  # its slice, and only its slice
    assert _computed(out) == dict.fromkeys(slice_keys, 1.0)  # the first point was not recomputed
    assert not (out / "table.csv").exists()


@pytest.mark.parametrize("value", ["3/3", "-1/3", "1", "a/3", "0/0", "1/x", "0/3/1", "", "1/-2"])
def test_bad_shard_values_exit_2_with_one_line_and_write_nothing(tmp_path, capsys, value):
    out = tmp_path / "sw"
    rc, o, e = _main(["sweep", "selftest", *GRID, "--out", str(out), f"--shard={value}"], capsys)
    assert rc == 2 and o == ""
    assert len(e.strip().splitlines()) == 1 and "--shard" in e and "I/N" in e, e
    assert not out.exists()


@pytest.mark.parametrize("extra, words", [
    (["--shard", "0/2", "--workers", "2"], "not allowed with"),
    (["--shard", "0/2", "--scheduler", "tcp://127.0.0.1:1"], "not allowed with"),
    (["--print-sbatch", "2", "--shard", "0/2"], "not allowed with"),
    (["--print-sbatch", "2", "--workers", "2"], "not allowed with"),
    (["--print-sbatch", "0"], "--print-sbatch"),
    (["--print-sbatch", "9"], "only 8 tasks"),
    (["--shard", "0/2", "--grid", "nope=1"], "unknown grid key 'nope'"),
])
def test_conflicting_options_exit_2_with_one_line_and_write_nothing(tmp_path, capsys, extra,
                                                                    words):
    out = tmp_path / "sw"
    rc, o, e = _main(["sweep", "selftest", *ARGS, "--out", str(out), *extra], capsys)
    assert rc == 2 and o == ""
    assert len(e.strip().splitlines()) == 1 and words in e, e
    assert not out.exists()


def test_shard_argument_of_the_library_function():
    for bad, exc in (((3, 3), ValueError), ((0, 0), ValueError), ((-1, 2), ValueError),
                     ("0/3", TypeError), ((0,), TypeError), ((0.0, 2), TypeError)):
        with pytest.raises(exc, match="shard"):
            sweep("selftest", {"n": [30]}, shard=bad)
    res = sweep("selftest", {"n": [30, 31, 32]}, shard=(1, 2))  # no folder: just the slice
    assert [r["n"] for r in res.rows] == [31] and res.shard == (1, 2) and res.files == []


def _hold(path, op):
    """Hold ``flock(op)`` on ``path`` through a file of our own (as another process would: the
    in-process reentrancy of richlazy's locks does not see it)."""
    fh = open(path, "a+")
    fcntl.flock(fh, op | fcntl.LOCK_NB)
    return fh


def test_shards_refused_beside_an_unsharded_run_another_split_or_themselves(tmp_path, capsys,
                                                                            monkeypatch):
    monkeypatch.setattr(_lock, "SHARD_LOCK_TRIES", 1)  # "already running" without the retries
    out = tmp_path / "sw"
    out.mkdir()
    cmd = ["sweep", "selftest", *ARGS, "--no-figures", "--out", str(out)]

    def refused(extra, words):
        before = _points(out)
        rc, o, e = _main(cmd + extra, capsys)
        assert rc == 2 and len(e.strip().splitlines()) == 1 and words in e, (extra, e)
        assert _points(out) == before  # nothing run

    with _lock.out_lock(out):  # an unsharded run holds the folder
        refused(["--shard", "0/3"], "in use by an unsharded richlazy run")
    # shard 0/3 runs in another process: .lock shared, its own lock exclusive
    common = _hold(out / ".lock", fcntl.LOCK_SH)
    own = _hold(out / _lock.shard_lock_name(0, 3), fcntl.LOCK_EX)
    try:
        refused([], "sharded runs --shard 0/3")  # no unsharded run beside shards
        refused(["--shard", "1/2"], "shards of another split running (--shard 0/3)")
        refused(["--shard", "0/3"], "shard 0/3 is already running")
        rc, o, e = _main(cmd + ["--shard", "1/3"], capsys)  # a shard of the same split runs
        assert rc == 0 and "shard 1/3: 3 of 3 tasks ok" in o, e
    finally:
        own.close()
        common.close()
    # no shard runs now, but the folder holds a split into 3 (sweep.json)
    refused(["--shard", "0/2"], "holds shards of a split into 3")
    rc, o, e = _main(cmd, capsys)  # the unsharded run merges (and clears the record)
    assert rc == 0 and "8 of 8 tasks ok (3 resumed" in o, e
    rc, o, e = _main(cmd + ["--shard", "0/2"], capsys)
    assert rc == 0 and "shard 0/2: 4 of 4 tasks ok (4 resumed)" in o, e


def test_print_sbatch_prints_the_array_script_and_its_commands_work(tmp_path, capsys,
                                                                   monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["sweep", "selftest", *GRID, "--seeds", "2", "--seed", "7", "--out", "my sweep"]
    rc, script, e = _main([*args, "--print-sbatch", "3"], capsys)
    assert rc == 0 and e == ""
    assert list(tmp_path.iterdir()) == []  # nothing written
    base = shlex.join(["richlazy", "sweep", "selftest", *GRID, "--seeds", "2", "--seed", "7",
                       "--out", "my sweep"])
    lines = script.splitlines()
    assert lines[0] == "#!/bin/bash"
    for want in ("#SBATCH --array=0-2", "#SBATCH --cpus-per-task=1",
                 "#SBATCH --job-name=richlazy-selftest",
                 f"{base} --shard ${{SLURM_ARRAY_TASK_ID}}/3"):
        assert want in lines, (want, script)
    assert "'my sweep'" in base
    merge = [ln for ln in lines if ln.startswith("#") and base in ln]
    assert len(merge) == 1 and merge[0].split(base)[1] == ""  # the merge command, commented
    # what Slurm would run: each array task's line, then the merge line
    for i in range(3):
        argv = shlex.split(lines[-1].replace("${SLURM_ARRAY_TASK_ID}", str(i)))
        rc, o, e = _main([*argv[1:], "--quiet"], capsys)
        assert rc == 0 and f"shard {i}/3" in o, e
    rc, o, e = _main([*shlex.split(base)[1:], "--no-figures", "--quiet"], capsys)
    assert rc == 0 and "8 of 8 tasks ok (8 resumed" in o, e
    ref = sweep("selftest", {"n": [30, 31, 32, 33], "chunks": [2]}, seeds=2, seed=7)
    assert _stable(read_table_csv(tmp_path / "my sweep" / "table.csv")) == _stable(ref.rows)


def test_the_documented_script_is_what_print_sbatch_prints(capsys):
    import re

    doc = (ROOT / "docs" / "distributed.md").read_text()
    sec = doc.split("## Job arrays (Slurm)", 1)[1]
    command = re.search(r"```bash\n(.*?)```", sec, re.S).group(1)
    script = re.search(r"```text\n(.*?)```", sec, re.S).group(1)
    first = " ".join(command.split(">", 1)[0].replace("\\\n", " ").split())
    rc, out, err = _main(shlex.split(first)[1:], capsys)
    assert rc == 0 and out == script, err
