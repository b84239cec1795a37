"""One divergence policy across simulate: a ``diverged`` flag per ensemble member on every result,
raising only on ``throw=True`` (the sampling driver defaults to raising); the shared checks."""

import pytest
import torch
from richlazy.simulate import (
    DivergedError,
    NetworkPosterior,
    NetworkSpec,
    SamplerDivergedError,
    checks,
    init_mlp_ensemble,
    langevin_init,
    langevin_step,
    make_generator,
    orthogonal_toy_task,
    run_chain,
    sd_symbols,
    sd_test_batch,
    sd_train_batch,
    train_gamma_mlp,
    train_mlp_ensemble,
)
from sim_helpers import seeded_generator as _g


class _PerChainQuadratic:
    """Phi(theta) = sum_d c_e theta_ed^2 / 2 with one curvature c_e per chain: ULA with step
    eps is stable for eps c_e < 2 and blows up otherwise, chain by chain."""

    def __init__(self, c):
        self.c = torch.as_tensor(c, dtype=torch.float64)[:, None]

    def grad(self, theta):
        return self.c * theta, {"loss": 0.5 * (self.c * theta**2).sum(1)}


def _chain(throw, n_steps=400, **kw):
    pot = _PerChainQuadratic([1.0, 5000.0, 1.0])  # eps = 0.01: chain 1 has eps c = 50 > 2
    st = langevin_init(torch.ones(3, 4, dtype=torch.float64))
    return run_chain(st, lambda s, g: langevin_step(s, pot, step_size=0.01, generator=g),
                     n_steps=n_steps, generator=_g(1), divergence_check_every=10, progress=False,
                     throw=throw, **kw)


def test_run_chain_flags_the_diverged_chain_only_when_not_throwing():
    run = _chain(throw=False, observe=lambda s: {"x": s.theta[:, 0]}, burn_in=100, thin=50)
    assert run.diverged.dtype == torch.bool and run.diverged.tolist() == [False, True, False]
    assert run.n_steps == 400  # the run went on
    assert torch.isfinite(run.samples["x"][:, [0, 2]]).all()


def test_run_chain_raises_by_default_and_names_the_chain():
    with pytest.raises(SamplerDivergedError, match=r"non-finite.*chain \[1\]"):
        _chain(throw=True)
    with pytest.raises(DivergedError):  # SamplerDivergedError is a DivergedError
        _chain(throw=True)


def test_run_chain_without_divergence_reports_all_false():
    pot = _PerChainQuadratic([1.0, 2.0])
    run = run_chain(langevin_init(torch.zeros(2, 3, dtype=torch.float64)),
                    lambda s, g: langevin_step(s, pot, step_size=0.01, generator=g),
                    n_steps=50, generator=_g(2), progress=False)
    assert run.diverged.tolist() == [False, False]


def test_run_chain_diverged_flags_survive_checkpoint_resume(tmp_path):
    ck = tmp_path / "ck.pt"
    _chain(throw=False, n_steps=200, checkpoint_path=ck, checkpoint_every=100, config={"t": 1})
    resumed = _chain(throw=False, n_steps=400, checkpoint_path=ck, checkpoint_every=100,
                     config={"t": 1})
    assert resumed.resumed_from == 200
    assert resumed.diverged.tolist() == [False, True, False]


def test_train_mlp_ensemble_throw_raises():
    X = torch.randn((8, 3), generator=_g(18), dtype=torch.float64) * 10
    Y = torch.ones((8, 1), dtype=torch.float64)
    p = init_mlp_ensemble(2, 3, 16, 1, generator=_g(19), dtype=torch.float64)
    lr = torch.tensor([1e4, 1e-3], dtype=torch.float64)
    with pytest.raises(DivergedError, match=r"members? \[0\]"):
        train_mlp_ensemble(p, X, Y, lr=lr, n_steps=200, throw=True)
    ok = train_mlp_ensemble(p, X, Y, lr=1e-3, n_steps=20, throw=True)
    assert ok.diverged.tolist() == [False, False]


def _gamma_setup(bad_member=None, bad_from=3):
    E, d, L = 3, 4, 4
    S = sd_symbols(E, L, d, generator=_g(1))
    xt, yt = sd_test_batch(E, 16, d, generator=_g(2))
    calls = [0]

    def sample(g):
        calls[0] += 1
        x, y = sd_train_batch(S, 8, generator=g)
        if bad_member is not None and calls[0] >= bad_from:
            x = x.clone()
            x[bad_member] = float("nan")
        return x, y

    return sample, xt, yt, d


def test_train_gamma_mlp_flags_a_diverged_member():
    sample, xt, yt, d = _gamma_setup(bad_member=1)
    r = train_gamma_mlp(sample, xt, yt, 1.0, d_eff=d, width=8, n_steps=20, eval_every=5,
                        generator=_g(3))
    assert r.diverged.dtype == torch.bool and r.diverged.tolist() == [False, True, False]
    assert torch.isfinite(r.dW[[0, 2]]).all()
    clean = train_gamma_mlp(*_gamma_setup()[:3], 1.0, d_eff=d, width=8, n_steps=20, eval_every=5,
                            generator=_g(3))
    assert clean.diverged.tolist() == [False, False, False]
    # the healthy members are unaffected by the diverged one
    torch.testing.assert_close(r.dW[[0, 2]], clean.dW[[0, 2]], rtol=0, atol=0)


def test_train_gamma_mlp_throw_raises():
    sample, xt, yt, d = _gamma_setup(bad_member=2)
    with pytest.raises(DivergedError, match=r"member \[2\]"):
        train_gamma_mlp(sample, xt, yt, 1.0, d_eff=d, width=8, n_steps=20, eval_every=5,
                        generator=_g(3), throw=True)


def test_langevin_step_beta_is_pure_and_equals_a_posterior_at_that_temperature():
    task = orthogonal_toy_task(6, 8, seed=0)
    spec = NetworkSpec(N0=8, N=5, m=3)
    post = NetworkPosterior(spec, task.X, task.Y, T=0.1, sigma_a2=0.2)
    hot = NetworkPosterior(spec, task.X, task.Y, T=0.4, sigma_a2=0.2)
    th = post.sample_prior(2, generator=make_generator(0, torch.device("cpu")))
    beta0 = post.beta
    a, _ = langevin_step(langevin_init(th), post, step_size=1e-3, generator=_g(5), beta=hot.beta)
    b, _ = langevin_step(langevin_init(th), hot, step_size=1e-3, generator=_g(5))
    assert torch.equal(a.theta, b.theta)
    assert post.beta == beta0  # not mutated
    with pytest.raises(ValueError, match="beta must be"):
        langevin_step(langevin_init(th), post, step_size=1e-3, generator=_g(5), beta=-1.0)


def test_checks_count_and_generator():
    assert checks.check_count("n", 3, minimum=1) == 3
    for bad in (0, 2.0, True, None):
        with pytest.raises(ValueError, match="n must be an int >= 1"):
            checks.check_count("n", bad, minimum=1)
    g = _g()
    assert checks.check_generator(g) is g
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        checks.check_generator(None)
    with pytest.raises(ValueError, match="x must be a finite real number > 0"):
        checks.check_pos_float("x", 0.0)
    with pytest.raises(ValueError, match="x must be a finite real number >= 0"):
        checks.check_nonneg_float("x", -1)
    assert checks.as_generator(5, "cpu").initial_seed() == 5
    with pytest.raises(TypeError, match="seed must be a non-negative int"):
        checks.as_generator(None, "cpu")


def test_atomic_write_is_readable_by_others_and_leaves_no_temp_on_failure(tmp_path):
    import os
    import stat

    from richlazy.simulate import atomic_write

    p = atomic_write(tmp_path / "a.txt", lambda fh: fh.write(b"hello"))
    assert p.read_bytes() == b"hello"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(p.stat().st_mode) == 0o644 & ~umask

    def boom(fh):
        fh.write(b"partial")
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        atomic_write(tmp_path / "a.txt", boom)
    assert p.read_bytes() == b"hello"  # the old file is untouched
    assert sorted(x.name for x in tmp_path.iterdir()) == ["a.txt"]


# -- orphaned temporary files of atomic_write (issue 53) ------------------------------------------


def _orphan_of_a_killed_writer(folder):
    """The temporary file of an ``atomic_write`` whose process was killed (SIGKILL) mid-write."""
    import os
    import signal
    import subprocess
    import sys

    code = ("import sys, time; from richlazy.simulate import atomic_write; "
            "atomic_write(sys.argv[1], lambda fh: (fh.write(b'half'), fh.flush(), "
            "print('writing', flush=True), time.sleep(60)))")
    proc = subprocess.Popen([sys.executable, "-c", code, str(folder / "out.json")],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    (tmp,) = [p for p in folder.iterdir() if p.name.startswith("out.json.")]
    return tmp


def test_orphaned_temp_files_are_removed_but_not_those_of_a_live_writer(tmp_path):
    import os
    import threading
    import time

    from richlazy.simulate import atomic_write, clean_orphaned_temp_files

    sub = tmp_path / "checkpoints" / "case"
    sub.mkdir(parents=True)
    dead = _orphan_of_a_killed_writer(sub)  # two minutes old, and its writer is gone
    os.utime(dead, (time.time() - 120, time.time() - 120))
    just_killed = _orphan_of_a_killed_writer(sub / "x")  # gone too, but written a moment ago
    old = sub / "chain.pt.k3j_x9a2.tmp"  # an older version's name, an hour old
    old.write_bytes(b"x")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    young_legacy = sub / "chain.pt.ab12cd34.tmp"  # same name, recent: could be a writer
    young_legacy.write_bytes(b"x")
    mine = [tmp_path / "notes.tmp", tmp_path / "data.tmp.txt"]  # not ours
    for p in mine:
        p.write_bytes(b"keep")
        os.utime(p, (time.time() - 3600, time.time() - 3600))

    started, release = threading.Event(), threading.Event()

    def slow(fh):
        fh.write(b"live")
        started.set()
        release.wait(30)

    writer = threading.Thread(target=atomic_write, args=(sub / "live.json", slow))
    writer.start()
    assert started.wait(30)
    (live_tmp,) = [p for p in sub.iterdir() if p.name.startswith("live.json.")]
    removed = clean_orphaned_temp_files(tmp_path)
    release.set()
    writer.join(30)
    assert sorted(p.name for p in removed) == sorted([dead.name, old.name])
    assert not dead.exists() and not old.exists()
    assert young_legacy.exists() and just_killed.exists() and all(p.exists() for p in mine)
    assert (sub / "live.json").read_bytes() == b"live" and not live_tmp.exists()
    assert clean_orphaned_temp_files(tmp_path / "missing") == []
    with pytest.raises(ValueError, match="min_age_s"):
        clean_orphaned_temp_files(tmp_path, min_age_s=-1.0)
