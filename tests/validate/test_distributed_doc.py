"""The loopback recipe of docs/distributed.md works as written: a ``dask scheduler`` and two
``dask worker`` processes on 127.0.0.1, then ``richlazy sweep`` and ``richlazy validate`` with
``--scheduler``. The lines are read from the doc; only the port is swapped for a free one (and
the output folders put in a temporary folder)."""

from __future__ import annotations

import os
import pathlib
import re
import shlex
import shutil
import signal
import socket
import subprocess
import time

import pytest
from richlazy.validate.sweeps._store import read_table_csv

# the recipe needs the optional distributed extra (the plain install must pass without it)
pytest.importorskip("distributed", reason="the distributed extra is not installed")

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "distributed.md"
ENV = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
           NUMBA_NUM_THREADS="1")


def _recipe() -> list[str]:
    text = DOC.read_text()
    section = text.split("## A cluster on one machine", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [ln.strip() for ln in block.splitlines() if ln.strip()]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_workers(addr, n, timeout=90):
    from distributed import Client

    t0 = time.time()
    with Client(addr, timeout="30s") as c:
        while len(c.scheduler_info()["workers"]) < n:
            if time.time() - t0 > timeout:
                raise AssertionError("workers did not connect")
            time.sleep(0.3)


# the `dask` console script comes with the extra; a venv without it on PATH cannot run the recipe
@pytest.mark.slow
@pytest.mark.skipif(shutil.which("dask") is None, reason="the dask command is not installed")
def test_loopback_recipe_as_written(tmp_path):
    lines = _recipe()
    assert [ln.split()[:2] for ln in lines[:3]] == [["dask", "scheduler"], ["dask", "worker"],
                                                     ["dask", "worker"]]
    port = str(_free_port())
    procs = []
    try:
        for ln in lines:
            ln = ln.replace("8786", port)
            background = ln.endswith("&")
            argv = shlex.split(ln.rstrip("&"))
            if background:
                procs.append(subprocess.Popen(argv, cwd=tmp_path, env=ENV,
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
                if argv[1] == "scheduler":
                    time.sleep(2.0)
                continue
            _wait_workers(f"tcp://127.0.0.1:{port}", 2)
            r = subprocess.run(argv, cwd=tmp_path, env=ENV, capture_output=True, text=True,
                               timeout=600)
            assert r.returncode == 0, (ln, r.stdout, r.stderr)
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
    rows = read_table_csv(tmp_path / "sw-loopback" / "table.csv")
    assert len(rows) == 8 and all(r["status"] == "ok" for r in rows)
    assert len({r["worker"] for r in rows}) >= 1
    assert (tmp_path / "report-loopback" / "report.json").exists()
