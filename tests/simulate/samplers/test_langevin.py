"""Langevin sampler, driver, networks and toy task."""

import math

import numpy as np
import pytest
import torch
from richlazy.simulate import (
    NetworkPosterior,
    NetworkSpec,
    SamplerDivergedError,
    langevin_init,
    langevin_step,
    make_generator,
    orthogonal_toy_task,
    paper_step_size,
    resolve_device,
    run_chain,
)
from richlazy.validate.stats import batch_means


class BayesLinReg:
    """Phi(w) = |y - X w|^2 / (2 s2) + |w|^2 / (2 tau2): Gaussian posterior with precision
    Lam = X^T X / s2 + I / tau2 and mean Lam^-1 X^T y / s2."""

    def __init__(self, X, y, s2, tau2):
        self.X, self.y, self.s2, self.tau2 = X, y, s2, tau2

    def grad(self, theta):  # theta (E, d)
        r = theta @ self.X.T - self.y  # (E, n)
        g = r @ self.X / self.s2 + theta / self.tau2
        return g, {"loss": 0.5 * (r * r).sum(1)}

    def moments(self):
        X = self.X.numpy()
        Lam = X.T @ X / self.s2 + np.eye(X.shape[1]) / self.tau2
        mu = np.linalg.solve(Lam, X.T @ self.y.numpy() / self.s2)
        return Lam, mu


def test_ula_recovers_gaussian_posterior_with_exact_discretisation_bias():
    """ULA on a Gaussian target: stationary mean is the posterior mean, stationary covariance
    V diag(1 / (lam (1 - eps lam / 2))) V^T (exact for Euler-Maruyama on a linear drift)."""
    rng = np.random.default_rng(0)
    n, d = 12, 3
    X = torch.tensor(rng.standard_normal((n, d)))
    y = torch.tensor(rng.standard_normal(n))
    pot = BayesLinReg(X, y, s2=0.5, tau2=2.0)
    Lam, mu = pot.moments()
    lam, V = np.linalg.eigh(Lam)
    eps = 0.2 / lam.max()
    S_exact = (V / (lam * (1 - eps * lam / 2))) @ V.T
    S_cont = np.linalg.inv(Lam)
    g = make_generator(1, torch.device("cpu"))
    E = 64
    state = langevin_init(torch.zeros(E, d, dtype=torch.float64))

    def observe(s):
        th = s.theta
        return {"w": th.clone(), "ww": th[:, :, None] * th[:, None, :]}

    run = run_chain(state, lambda s, gg: langevin_step(s, pot, step_size=eps, generator=gg),
                    n_steps=6000, burn_in=500, thin=5, observe=observe, generator=g, progress=False)
    w = run.samples["w"].numpy()
    mean, se = batch_means(w)
    z = (mean - mu) / se
    assert np.all(np.abs(z) < 4.5), z
    ww = run.samples["ww"].numpy() - mu[:, None] * mu[None, :]
    m2, se2 = batch_means(ww)
    z2 = (m2 - S_exact) / se2
    assert np.all(np.abs(z2) < 4.5), z2
    # the discretisation bias is resolved: the largest-eigenvalue direction differs from the
    # continuous-time variance by 11 %, which the sampler sees
    v = V[:, -1]
    var_dir = v @ m2 @ v
    assert abs(var_dir - v @ S_exact @ v) < abs(var_dir - v @ S_cont @ v)


def _linear_run(tmp_path, n_steps, *, crash_at=None, ck=True):
    task = orthogonal_toy_task(12, 16, seed=3)
    spec = NetworkSpec(N0=16, N=10, L=2, m=3, activation="sigmoid_erf")
    post = NetworkPosterior(spec, task.X, task.Y, T=0.1, sigma_a2=0.1)
    g = make_generator(7, torch.device("cpu"))
    state = langevin_init(post.sample_prior(3, generator=g))
    eps = paper_step_size(0.01, 0.1)

    def observe(s):
        if crash_at is not None and s.step >= crash_at:
            raise KeyboardInterrupt  # simulated interruption
        return {"f": post.outputs(s.theta)}

    return run_chain(state, lambda s, gg: langevin_step(s, post, step_size=eps, generator=gg),
                     n_steps=n_steps, burn_in=20, thin=10, observe=observe, generator=g,
                     checkpoint_path=(tmp_path / "ck.pt") if ck else None, checkpoint_every=50,
                     config={"case": "resume-test"}, progress=False)


def test_checkpoint_resume_reproduces_uninterrupted_run_exactly(tmp_path):
    ref = _linear_run(tmp_path / "a", 300, ck=False)
    with pytest.raises(KeyboardInterrupt):
        _linear_run(tmp_path / "b", 300, crash_at=173)
    assert (tmp_path / "b" / "ck.pt").exists()
    assert not list((tmp_path / "b").glob("*.tmp")), "a temp file was left behind"
    resumed = _linear_run(tmp_path / "b", 300)
    assert resumed.resumed_from == 150
    assert torch.equal(resumed.state.theta, ref.state.theta)
    assert torch.equal(resumed.samples["f"], ref.samples["f"])
    assert torch.equal(resumed.sample_steps, ref.sample_steps)


def test_resume_refuses_a_different_configuration(tmp_path):
    _linear_run(tmp_path, 100)
    task = orthogonal_toy_task(12, 16, seed=3)
    post = NetworkPosterior(NetworkSpec(N0=16, N=10, L=1, m=3), task.X, task.Y, T=0.1, sigma_a2=0.1)
    g = make_generator(0, torch.device("cpu"))
    with pytest.raises(ValueError, match="different run configuration"):
        run_chain(langevin_init(post.sample_prior(3, generator=g)),
                  lambda s, gg: langevin_step(s, post, step_size=1e-3, generator=gg),
                  n_steps=10, generator=g, checkpoint_path=tmp_path / "ck.pt", config={"other": 1},
                  progress=False)


def test_divergence_is_detected_with_actionable_message():
    task = orthogonal_toy_task(8, 10, seed=0)
    post = NetworkPosterior(NetworkSpec(N0=10, N=8, m=3), task.X, task.Y, T=0.01, sigma_a2=0.125)
    g = make_generator(0, torch.device("cpu"))
    st = langevin_init(post.sample_prior(2, generator=g))
    with pytest.raises(SamplerDivergedError, match="non-finite.*reduce the step size"):
        run_chain(st, lambda s, gg: langevin_step(s, post, step_size=50.0, generator=gg),
                  n_steps=2000, generator=g, divergence_check_every=10, progress=False)


@pytest.mark.parametrize("activation", ["linear", "sigmoid_erf", "erf", "relu"])
@pytest.mark.parametrize("L", [1, 2, 3])
@pytest.mark.parametrize("regime", ["nonlazy", "lazy"])
def test_manual_gradient_matches_autograd(activation, L, regime):
    task = orthogonal_toy_task(9, 12, seed=1)
    spec = NetworkSpec(N0=12, N=6, L=L, m=3, activation=activation, regime=regime)
    post = NetworkPosterior(spec, task.X, task.Y, T=0.3, sigma_a2=0.2, sigma_w2=1.3)
    th = post.sample_prior(2, generator=make_generator(0, torch.device("cpu"))).requires_grad_(True)
    post.energy(th).sum().backward()
    g, info = post.grad(th.detach())
    assert torch.allclose(g, th.grad, rtol=1e-10, atol=1e-12)
    F = post.outputs(th.detach())
    assert torch.allclose(info["loss"], 0.5 * ((F - post.Y) ** 2).sum((1, 2)))


def test_network_scalings():
    task = orthogonal_toy_task(6, 8, seed=0)
    nl = NetworkPosterior(NetworkSpec(N0=8, N=16, m=3), task.X, task.Y, T=0.5, sigma_a2=0.1)
    lz = NetworkPosterior(NetworkSpec(N0=8, N=16, m=3, regime="lazy"), task.X, task.Y, T=0.5, sigma_a2=0.1)
    assert nl.beta == pytest.approx(16 / 0.5) and lz.beta == pytest.approx(1 / 0.5)
    th = nl.sample_prior(1, generator=make_generator(0, torch.device("cpu")))
    assert torch.allclose(lz.outputs(th), nl.outputs(th) * math.sqrt(16))
    # prior draw has the prior variances
    big = nl.sample_prior(400, generator=make_generator(1, torch.device("cpu")))
    p = nl.unflatten(big)
    assert abs(p["A"].var().item() / 0.1 - 1) < 0.05
    assert abs(p["W1"].var().item() - 1) < 0.02


def test_orthogonal_toy_task():
    t = orthogonal_toy_task(40, 50, ratios=(0.5, 0.25, 0.25), y_plus=1.0, y_minus=-0.5, seed=2)
    assert np.allclose(t.X.T @ t.X / 50, np.eye(40), atol=1e-12)
    assert np.bincount(t.labels).tolist() == [20, 10, 10]
    assert np.allclose(t.Y[t.labels == 1], [-0.5, 1.0, -0.5])
    assert np.allclose(t.basis.T @ t.basis, np.eye(50), atol=1e-12)
    t2 = orthogonal_toy_task(40, 50, seed=2)
    assert np.array_equal(t.X, t2.X)  # deterministic from the seed
    # 7 * [1/2, 1/4, 1/4] = [3.5, 1.75, 1.75]: floors [3, 1, 1], the two left over go to the
    # largest fractional parts (classes 1 and 2)
    assert np.bincount(orthogonal_toy_task(7, 7, seed=0).labels).tolist() == [3, 2, 2]


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: orthogonal_toy_task(10, 5), ValueError, "N0 must be >= P"),
        (lambda: orthogonal_toy_task(10, 12, ratios=(0.5, 0.6)), ValueError, "ratios must be positive"),
        (lambda: orthogonal_toy_task(2, 12), ValueError, "too small for ratios"),
        (lambda: orthogonal_toy_task(2.5, 12), TypeError, "P must be an integer"),
        (lambda: NetworkSpec(N0=3, N=4, activation="tanh"), ValueError, "activation must be one of"),
        (lambda: NetworkSpec(N0=3, N=4, regime="mean-field"), ValueError, "regime must be one of"),
        (lambda: NetworkSpec(N0=3, N=0), ValueError, "N must be >= 1"),
        (lambda: NetworkPosterior(NetworkSpec(N0=3, N=4), np.ones((4, 2)), np.ones((2, 1)), T=1.0,
                                  sigma_a2=1.0), ValueError, "X must have N0 = 3 rows"),
        (lambda: NetworkPosterior(NetworkSpec(N0=3, N=4), np.ones((3, 2)), np.ones((3, 1)), T=1.0,
                                  sigma_a2=1.0), ValueError, r"Y must have shape \(P, m\)"),
        (lambda: NetworkPosterior(NetworkSpec(N0=3, N=4), np.ones((3, 2)), np.ones((2, 1)), T=0.0,
                                  sigma_a2=1.0), ValueError, "T must be a finite number > 0"),
        (lambda: NetworkPosterior(NetworkSpec(N0=3, N=4), np.full((3, 2), np.nan), np.ones((2, 1)),
                                  T=1.0, sigma_a2=1.0), ValueError, "X must contain only finite"),
        (lambda: paper_step_size(-1.0, 0.1), ValueError, "dt must be a finite number > 0"),
        (lambda: make_generator(-1, torch.device("cpu")), ValueError, "seed must be a non-negative int"),
        (lambda: resolve_device("tpu"), ValueError, "device must be 'auto', 'cpu' or 'cuda"),
        (lambda: langevin_init(torch.zeros(3)), ValueError, "theta must be a 2-D tensor"),
    ],
)
def test_input_validation(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA error path")
def test_cuda_requested_without_cuda():
    with pytest.raises(ValueError, match="CUDA is not available"):
        resolve_device("cuda")
    assert resolve_device("auto").type == "cpu"


def test_run_chain_validation():
    g = make_generator(0, torch.device("cpu"))
    st = langevin_init(torch.zeros(1, 1))
    with pytest.raises(ValueError, match="n_steps must be an int >= 1"):
        run_chain(st, lambda s, gg: (s, {}), n_steps=0, generator=g, progress=False)
    with pytest.raises(ValueError, match=r"burn_in \(5\) must be smaller than n_steps \(5\)"):
        run_chain(st, lambda s, gg: (s, {}), n_steps=5, burn_in=5, generator=g,
                  observe=lambda s: {}, progress=False)
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        run_chain(st, lambda s, gg: (s, {}), n_steps=5, generator=0, progress=False)


def test_input_span_projection_is_the_same_network():
    """W^1 = Wt Q^T + W_perp: the projected network with Wt = W Q has the same outputs on the
    training inputs and on inputs inside span(X), for orthogonal and generic inputs."""
    rng = np.random.default_rng(0)
    task = orthogonal_toy_task(9, 14, seed=1)
    for X in (task.X, rng.standard_normal((14, 9))):
        kw = dict(T=0.3, sigma_a2=0.2)
        spec = NetworkSpec(N0=14, N=6, L=2, m=3, activation="relu")
        full = NetworkPosterior(spec, X, task.Y, **kw)
        proj = NetworkPosterior(spec, X, task.Y, project_inputs=True, **kw)
        assert proj.projected and proj.D == full.D - 6 * (14 - 9)
        th = full.sample_prior(2, generator=make_generator(3, torch.device("cpu")))
        p = full.unflatten(th)
        thp = proj.flatten({"W1": p["W1"] @ proj._Q, "W2": p["W2"], "A": p["A"]})
        assert torch.allclose(full.outputs(th), proj.outputs(thp))
        Xin = torch.as_tensor(X[:, :3] @ rng.standard_normal((3, 4)))
        assert torch.allclose(full.outputs(th, Xin), proj.outputs(thp, Xin))
        g1, _ = full.grad(th)
        g2, _ = proj.grad(thp)
        gp = full.unflatten(g1)
        # gradient of the likelihood part in the span equals the projected one (prior parts differ
        # only by the W_perp component)
        assert torch.allclose((gp["W1"] - p["W1"]) @ proj._Q, proj.unflatten(g2)["W1"] - p["W1"] @ proj._Q)


def test_projection_draws_orthogonal_part_from_the_prior():
    """Outside span(X) the first-layer preactivation is the prior's: z = W_perp x / sqrt(N0) with
    variance sigma_w2 |x_perp|^2 / N0, independent of theta."""
    task = orthogonal_toy_task(5, 12, seed=2)
    post = NetworkPosterior(NetworkSpec(N0=12, N=400, m=3), task.X, task.Y, T=0.1, sigma_a2=0.2,
                            sigma_w2=1.7, project_inputs=True)
    x = torch.as_tensor(np.sqrt(12) * task.basis[:, 7:9])  # orthogonal to the training inputs
    th = torch.zeros(3, post.D, dtype=torch.float64)
    with pytest.raises(ValueError, match="need a generator"):
        post.preactivations(th, x)
    z = post.preactivations(th, x, generator=make_generator(0, torch.device("cpu")))[0]
    v = z.var(dim=1).mean(0)  # expected 1.7 * |x|^2 / N0 = 1.7 for both inputs
    c = (z[..., 0] * z[..., 1]).mean()  # the two inputs are orthogonal: covariance 0
    assert torch.allclose(v, torch.full((2,), 1.7, dtype=torch.float64), rtol=0.1)
    assert abs(float(c)) < 0.15


def test_projection_falls_back_when_inputs_span_the_input_space():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((6, 8))  # P > N0: span(X) is the whole input space
    post = NetworkPosterior(NetworkSpec(N0=6, N=4, m=1), X, np.ones((8, 1)), T=1.0, sigma_a2=1.0,
                            project_inputs=True)
    assert not post.projected


def test_same_device_treats_unindexed_cuda_as_the_current_device(monkeypatch):
    # A torch.Generator(device="cuda") reports device "cuda" (no index) while the tensors it draws
    # live on "cuda:0"; comparing the two with != rejected every CUDA run of the equality cases
    # (found on an H200, 2026-11-28). CI has no GPU, so the current device is patched here.
    from richlazy.simulate.checks import same_device

    monkeypatch.setattr(torch.cuda, "current_device", lambda: 1)
    assert same_device("cuda", "cuda:1") and same_device(torch.device("cuda:1"), "cuda")
    assert same_device("cuda", "cuda")
    assert not same_device("cuda", "cuda:0") and not same_device("cuda:0", "cuda:1")
    assert same_device("cpu", torch.device("cpu")) and not same_device("cpu", "cuda")


# -- damaged or planted checkpoints (issue 53) ---------------------------------------------------


def _interrupted(tmp_path):
    """A fresh reference run and a run of the same chain interrupted after its step-150
    checkpoint (``tmp_path / "b" / "ck.pt"``)."""
    ref = _linear_run(tmp_path / "a", 300, ck=False)
    with pytest.raises(KeyboardInterrupt):
        _linear_run(tmp_path / "b", 300, crash_at=173)
    return ref, tmp_path / "b" / "ck.pt"


def _assert_recomputed(run, ref, path, reason):
    """``run`` discarded ``path`` (for ``reason``) and equals the fresh reference bit for bit."""
    assert run.resumed_from is None
    assert run.discarded_checkpoint is not None
    assert path.name in run.discarded_checkpoint and reason in run.discarded_checkpoint
    assert torch.equal(run.state.theta, ref.state.theta)
    assert torch.equal(run.samples["f"], ref.samples["f"])
    assert torch.equal(run.sample_steps, ref.sample_steps)
    assert path.exists() and (path.parent / (path.name + ".discarded")).exists()


@pytest.mark.parametrize("damage", ["flipped", "truncated", "empty", "plain-torch-save"])
def test_a_damaged_checkpoint_is_discarded_and_the_chain_recomputes_exactly(tmp_path, damage):
    from richlazy.simulate import CheckpointDiscardedWarning

    ref, path = _interrupted(tmp_path)
    data = path.read_bytes()
    if damage == "flipped":  # bytes flipped in the middle of the payload
        mid = len(data) // 2
        data = data[:mid] + bytes(b ^ 0xFF for b in data[mid:mid + 16]) + data[mid + 16:]
    elif damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "empty":
        data = b""
    else:  # an unverifiable file: a bare torch.save with no checksum
        import io
        buf = io.BytesIO()
        torch.save({"config_hash": "x"}, buf)
        data = buf.getvalue()
    path.write_bytes(data)
    with pytest.warns(CheckpointDiscardedWarning, match="ck.pt"):
        run = _linear_run(tmp_path / "b", 300)
    reason = {"flipped": "checksum", "truncated": "checksum", "empty": "header",
              "plain-torch-save": "header"}[damage]
    _assert_recomputed(run, ref, path, reason)
    resumed = _linear_run(tmp_path / "b", 300)  # the new checkpoint is good
    assert resumed.resumed_from == 300 and resumed.discarded_checkpoint is None


def test_a_planted_checkpoint_never_runs_code(tmp_path):
    """A checkpoint whose unpickling would call a function (here ``Path.touch`` of a marker) is
    refused by the weights-only unpickler even when its checksum is right, and discarded."""
    import pathlib

    from richlazy.simulate import CheckpointDiscardedWarning
    from richlazy.simulate.samplers._driver import _write_checkpoint

    marker = tmp_path / "code-ran"

    class Evil:
        def __reduce__(self):
            return (pathlib.Path.touch, (marker,))

    ref, path = _interrupted(tmp_path)
    for write in (_write_checkpoint, lambda obj, p: torch.save(obj, p)):  # checksummed, bare
        write({"config_hash": "x", "state": Evil()}, path)
        with pytest.warns(CheckpointDiscardedWarning, match="ck.pt"):
            run = _linear_run(tmp_path / "b", 300)
        assert not marker.exists(), "loading the checkpoint ran code"
        _assert_recomputed(run, ref, path, "")


@pytest.mark.parametrize("field", ["generator", "records", "state", "theta", "sample_steps", "dict"])
def test_a_checkpoint_with_missing_or_ill_typed_fields_is_discarded(tmp_path, field):
    from richlazy.simulate import CheckpointDiscardedWarning
    from richlazy.simulate.samplers._driver import _read_checkpoint, _write_checkpoint

    ref, path = _interrupted(tmp_path)
    ck, reason = _read_checkpoint(path)
    assert reason is None and ck["state"]["step"] == 150
    if field == "theta":
        ck["state"]["theta"] = ck["state"]["theta"][:, :2]
    elif field == "sample_steps":
        ck["sample_steps"] = ["a"] * len(ck["sample_steps"])
    elif field == "dict":
        ck = [1, 2]
    else:
        del ck[field]
    _write_checkpoint(ck, path)
    with pytest.warns(CheckpointDiscardedWarning, match="ck.pt"):
        run = _linear_run(tmp_path / "b", 300)
    _assert_recomputed(run, ref, path, "")
