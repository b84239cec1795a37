"""The runner: thread limits inside a case (torch and BLAS), checkpoints keyed by the case's
configuration and seed, and report files readable by others."""

import json
import os
import stat
from dataclasses import dataclass

import pytest
import torch
from cli_helpers import validate_one
from richlazy.simulate import run_chain
from richlazy.validate import CaseOutcome, compare, register_case, run_suite
from richlazy.validate.core import _registry


@pytest.fixture
def registry(scratch_registry):
    """Register fixture cases into a copy of the registry (removed after the test)."""
    return register_case


def _ok():
    return [compare("x", 1.0, 1.0, kind="abs", tol=0.1)]


# --------------------------------------------------------------------------------------------
# threads
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("threads", [1, 2])
def test_case_runs_with_the_thread_limit_for_torch_and_blas(threads, registry, tmp_path):
    seen = {}

    @registry("coding/zz-threads", description="records its thread pools", suites=("quick",))
    def _case(ctx):
        import numpy as np
        import scipy.linalg
        from threadpoolctl import threadpool_info

        scipy.linalg.cho_factor(np.eye(3))  # touch numpy's and scipy's BLAS
        seen["torch"] = torch.get_num_threads()
        seen["pools"] = {(d["internal_api"], d["filepath"]): d["num_threads"] for d in threadpool_info()}
        return CaseOutcome(quantities=_ok())

    old = torch.get_num_threads()
    rep = run_suite("quick", only="coding/zz-threads", device="cpu", out_dir=tmp_path, threads=threads,
                    progress=False)
    assert rep.passed
    assert seen["torch"] == threads
    apis = {api for api, _ in seen["pools"]}
    assert apis & {"openblas", "mkl", "blis"}, seen["pools"]  # a BLAS was seen and limited
    assert set(seen["pools"].values()) == {threads}, seen["pools"]
    assert torch.get_num_threads() == old


# --------------------------------------------------------------------------------------------
# checkpoints
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Walk:
    theta: torch.Tensor
    step: int = 0


def _walk_step(state, gen):
    noise = torch.randn(state.theta.shape, generator=gen, dtype=state.theta.dtype)
    return _Walk(state.theta + noise, state.step + 1), {}


@pytest.fixture
def chain_case(registry):
    config = {"n_steps": 20}

    @registry("coding/zz-chain", description="a checkpointed random walk", suites=("quick",))
    def _case(ctx):
        run = run_chain(_Walk(torch.zeros(2, 3, dtype=torch.float64)), _walk_step,
                        n_steps=config["n_steps"], generator=ctx.generator(0),
                        checkpoint_path=ctx.checkpoint_dir / "chain.pt", checkpoint_every=5,
                        config=dict(config), progress=False)
        return CaseOutcome(quantities=_ok(), params={"resumed_from": run.resumed_from,
                                                      "final": run.state.theta.sum().item()})

    return config


def _validate(out, seed):
    return validate_one(out, "coding/zz-chain", seed=seed)


def test_another_seed_in_the_same_out_just_works_and_the_same_seed_resumes(chain_case, tmp_path):
    rc0, c0 = _validate(tmp_path, 0)
    assert rc0 == 0 and c0["params"]["resumed_from"] is None
    rc1, c1 = _validate(tmp_path, 1)
    assert rc1 == 0 and c1["error"] is None
    assert c1["params"]["resumed_from"] is None  # seed 1 never continues seed 0's chain
    assert c1["params"]["final"] != c0["params"]["final"]
    rc2, c2 = _validate(tmp_path, 0)  # back to seed 0: resumes its finished checkpoint
    assert rc2 == 0 and c2["params"]["resumed_from"] == 20
    assert c2["params"]["final"] == c0["params"]["final"]
    keys = [json.loads(p.read_text()) for p in (tmp_path / "checkpoints").rglob("key.json")]
    assert sorted(k["seed"] for k in keys) == [0, 1]
    assert all(k["case"] == "coding/zz-chain" and k["suite"] == "quick" and k["device"] == "cpu"
               for k in keys)


def test_a_stale_checkpoint_is_discarded_with_a_note(chain_case, tmp_path):
    rc0, c0 = _validate(tmp_path, 0)
    assert rc0 == 0
    chain_case["n_steps"] = 25  # the case now asks for another run under the same key
    rc1, c1 = _validate(tmp_path, 0)
    assert rc1 == 0 and c1["error"] is None
    assert c1["params"]["resumed_from"] is None  # ran from the start, not from the old chain
    assert "Discarded stale checkpoints" in c1["notes"]
    assert "Discarded stale checkpoints" in (tmp_path / "report.md").read_text()
    rc2, c2 = _validate(tmp_path, 0)  # and the new checkpoint resumes
    assert rc2 == 0 and c2["params"]["resumed_from"] == 25 and not c2["notes"]


@pytest.mark.parametrize("damage", ["truncated", "flipped"])
def test_a_damaged_checkpoint_is_discarded_recomputed_and_noted(chain_case, tmp_path, damage):
    rc0, c0 = _validate(tmp_path, 0)
    assert rc0 == 0
    (ck,) = (tmp_path / "checkpoints").rglob("chain.pt")
    data = ck.read_bytes()
    mid = len(data) // 2
    ck.write_bytes(data[:mid] if damage == "truncated" else
                   data[:mid] + bytes(b ^ 0xFF for b in data[mid:mid + 16]) + data[mid + 16:])
    rc1, c1 = _validate(tmp_path, 0)
    assert rc1 == 0 and c1["error"] is None
    assert c1["params"]["resumed_from"] is None  # recomputed from the start ...
    assert c1["params"]["final"] == c0["params"]["final"]  # ... to the same chain
    assert "Discarded checkpoint chain.pt" in c1["notes"] and "checksum" in c1["notes"]
    assert "Discarded checkpoint chain.pt" in (tmp_path / "report.md").read_text()
    rc2, c2 = _validate(tmp_path, 0)  # the recomputed checkpoint resumes, without a note
    assert rc2 == 0 and c2["params"]["resumed_from"] == 20 and not c2["notes"]


def test_prepare_out_dir_removes_orphaned_temp_files(tmp_path):
    import time

    from richlazy.validate.core._runner import prepare_out_dir

    folder = tmp_path / "checkpoints" / "case"
    folder.mkdir(parents=True)
    orphan = folder / "chain.pt.q1w2e3r4.tmp"  # an hour-old temp file of an interrupted write
    orphan.write_bytes(b"half")
    os.utime(orphan, (time.time() - 3600, time.time() - 3600))
    fresh = folder / "key.json.a1b2c3d4.tmp"  # could be a concurrent writer's: kept
    fresh.write_bytes(b"half")
    prepare_out_dir(tmp_path)
    assert not orphan.exists() and fresh.exists()


def test_checkpoint_key_changes_with_seed_suite_and_device():
    from richlazy.validate.core._runner import checkpoint_key

    spec = _registry.all_cases()["coding/linear-toy"]
    k = checkpoint_key(spec, suite="quick", seed=0, device="cpu")
    assert k["case"] == "coding/linear-toy" and k["richlazy_version"] and k["case_source_sha256"]
    for other in (dict(suite="full", seed=0, device="cpu"), dict(suite="quick", seed=1, device="cpu"),
                  dict(suite="quick", seed=0, device="cuda:0")):
        assert checkpoint_key(spec, **other) != k


# --------------------------------------------------------------------------------------------
# report files
# --------------------------------------------------------------------------------------------


def test_report_files_are_readable_by_others(registry, tmp_path):
    @registry("coding/zz-mode", description="passes", suites=("quick",))
    def _case(ctx):
        return CaseOutcome(quantities=_ok())

    old = os.umask(0o022)
    try:
        run_suite("quick", only="coding/zz-mode", device="cpu", out_dir=tmp_path, progress=False)
    finally:
        os.umask(old)
    for name in ("report.json", "report.md"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644, name


@pytest.mark.parametrize("kw, exc, match", [
    (dict(only=3), TypeError, "only must be a glob string or None, got int"),
    (dict(progress="yes"), TypeError, "progress must be a bool"),
    (dict(seed=-1), ValueError, "seed"),
    (dict(threads=0), ValueError, "threads"),
    (dict(suite="huge"), ValueError, "suite must be one of"),
])
def test_run_suite_argument_errors_name_the_argument(kw, exc, match, tmp_path):
    args = dict(suite="quick", only="coding/linear-toy", device="cpu", out_dir=tmp_path / "r",
                progress=False) | kw
    with pytest.raises(exc, match=match):
        run_suite(**args)
    assert not (tmp_path / "r").exists()


# --------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------


def test_save_figure_writes_atomically(tmp_path, monkeypatch):
    from matplotlib.figure import Figure
    from richlazy.validate.rendering._figures import new_figure, save_figure

    fig, ax = new_figure()
    ax.plot([0, 1], [1, 0])
    path = save_figure(fig, tmp_path / "a.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert save_figure(new_figure()[0], tmp_path / "a.svg").read_text().lstrip().startswith("<?xml")
    old = path.read_bytes()

    def interrupted(self, fname, **kw):  # writes half a file, then fails
        if isinstance(fname, (str, os.PathLike)):
            with open(fname, "wb") as fh:
                fh.write(b"half")
        else:
            fname.write(b"half")
        raise RuntimeError("interrupted")

    monkeypatch.setattr(Figure, "savefig", interrupted)
    with pytest.raises(RuntimeError, match="interrupted"):
        save_figure(new_figure()[0], path)
    assert path.read_bytes() == old  # the old figure is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.png", "a.svg"]
