"""The allocation-free ULA step: Philox4x32-10 + Box-Muller noise (known answers, moments, the
transform against libm), the network gradient written into a caller's buffer, the Langevin
workspace (bit-identical steps, no parameter-sized allocation, exact checkpoint/resume)."""

import math

import numpy as np
import pytest
import torch
from richlazy.simulate import (
    ACTIVATIONS,
    LangevinWorkspace,
    NetworkPosterior,
    NetworkSpec,
    activation_pair,
    langevin_init,
    langevin_step,
    make_generator,
    orthogonal_toy_task,
    philox_normal_,
    run_chain,
)
from richlazy.simulate.models._activations import activation_inplace
from richlazy.simulate.samplers._philox import philox4x32, philox_ula_update
from scipy import stats


def test_philox_known_answers():
    """The known-answer vectors of Random123 (Salmon et al. 2011) for Philox4x32-10."""
    cases = [
        ([0, 0, 0, 0], [0, 0], [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
        ([0xFFFFFFFF] * 4, [0xFFFFFFFF] * 2, [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
        ([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0],
         [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]),
    ]
    for ctr, key, want in cases:
        assert philox4x32(ctr, key)[0].tolist() == want
    with pytest.raises(ValueError, match="32-bit words"):
        philox4x32([2**32, 0, 0, 0], [0, 0])


def _words(gen_state):
    """The four words a philox call draws from a generator in this state."""
    g = torch.Generator()
    g.set_state(gen_state)
    return torch.randint(0, 2**32, (4,), generator=g, dtype=torch.int64).tolist()


def test_normals_are_box_muller_of_the_philox_words():
    """Every output is sqrt(-2 ln u1) (cos | sin)(2 pi u2) of its counter's words, evaluated with
    libm here, at the documented position (blocks of 512 counters, word w at 512 w + r)."""
    n = 3 * 2048 + 1001  # three full blocks and a ragged last one
    g = make_generator(11, "cpu")
    k0, k1, c2, c3 = _words(g.get_state())
    out = philox_normal_(torch.empty(n, dtype=torch.float64), g)
    ref = np.empty(n)
    for b in range((n + 2047) // 2048):
        e0 = 2048 * b
        m = min(512, (n - e0 + 3) // 4)
        ctr = np.zeros((m, 4), np.uint64)
        ctr[:, 0] = 512 * b + np.arange(m)
        ctr[:, 2], ctr[:, 3] = c2, c3
        w = philox4x32(ctr, [k0, k1])
        for p in range(2):
            u1 = ((w[:, 2 * p] >> np.uint64(8)) + np.uint64(1)) * 2.0**-24
            u2 = (w[:, 2 * p + 1] >> np.uint64(8)) * 2.0**-24
            r = np.sqrt(-2.0 * np.log(u1))
            for j, z in ((2 * p, r * np.cos(2 * np.pi * u2)), (2 * p + 1, r * np.sin(2 * np.pi * u2))):
                idx = e0 + j * m + np.arange(m)
                keep = idx < n
                ref[idx[keep]] = z[keep]
    np.testing.assert_allclose(out.numpy(), ref, rtol=0, atol=2e-14)


def test_normal_moments_and_distribution():
    """4 * 10^6 draws over 8 calls: mean, variance, skewness, excess kurtosis within 5 standard
    errors of N(0, 1); a KS test; no correlation between neighbouring elements, between the
    four outputs of one counter, or between successive calls."""
    g = make_generator(3, "cpu")
    x = torch.cat([philox_normal_(torch.empty(500_000, dtype=torch.float64), g) for _ in range(8)])
    x = x.numpy()
    n = x.size
    assert abs(x.mean()) < 5 / math.sqrt(n)
    assert abs(x.var() - 1) < 5 * math.sqrt(2 / n)
    assert abs(stats.skew(x)) < 5 * math.sqrt(6 / n)
    assert abs(stats.kurtosis(x)) < 5 * math.sqrt(24 / n)
    assert stats.kstest(x[:1_000_000], "norm").pvalue > 1e-3
    lim = 5 / math.sqrt(n)
    assert abs(np.corrcoef(x[:-1], x[1:])[0, 1]) < lim
    a = x[:500_000]
    for lag in (512, 1024, 1536, 500_000):  # the other words of a counter; the next call
        m = min(a.size, x.size - lag)
        assert abs(np.corrcoef(x[:m], x[lag:lag + m])[0, 1]) < 5 / math.sqrt(m)
    assert np.abs(x).max() <= math.sqrt(2 * 24 * math.log(2)) + 1e-12


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 2047, 2048, 2049, 4097])
def test_every_length_is_filled_and_float32_is_the_rounded_float64(n):
    s = make_generator(5, "cpu").get_state()
    g64, g32 = torch.Generator(), torch.Generator()
    g64.set_state(s)
    g32.set_state(s)
    x64 = philox_normal_(torch.full((n,), float("nan"), dtype=torch.float64), g64)
    x32 = philox_normal_(torch.full((n,), float("nan"), dtype=torch.float32), g32)
    assert bool(torch.isfinite(x64).all())
    assert torch.equal(x32, x64.float())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fused_update_is_theta_minus_drift_plus_the_same_normals(dtype):
    gen = make_generator(0, "cpu")
    theta = torch.randn(3, 1777, generator=gen, dtype=dtype)
    g = torch.randn(3, 1777, generator=gen, dtype=dtype)
    s = gen.get_state()
    out = philox_ula_update(theta, g, torch.empty_like(theta), step_size=0.01, generator=gen)
    ref_gen = torch.Generator()
    ref_gen.set_state(s)
    xi = philox_normal_(torch.empty(theta.numel(), dtype=torch.float64), ref_gen).view(3, 1777)
    ref = theta.double() - 0.01 * g.double() + math.sqrt(0.02) * xi
    tol = 1e-15 if dtype == torch.float64 else 1e-6
    torch.testing.assert_close(out.double(), ref, rtol=tol, atol=tol)
    assert torch.equal(gen.get_state(), ref_gen.get_state())  # the same four words drawn
    with pytest.raises(ValueError, match="share shape and dtype"):
        philox_ula_update(theta, g.double() if dtype == torch.float32 else g.float(), theta,
                          step_size=0.1, generator=gen)
    with pytest.raises(ValueError, match="out must be a float32 or float64 CPU tensor"):
        philox_normal_(torch.empty(4, dtype=torch.float16), gen)


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_inplace_activations_match_the_reference_pair(name):
    z = torch.linspace(-3, 3, 601, dtype=torch.float64)
    phi, dphi = activation_pair(name)
    phi_into, dphi_mul_, scratch = activation_inplace(name)
    tmp = None if scratch is None else torch.empty_like(z, dtype=torch.bool if scratch == "bool" else z.dtype)
    torch.testing.assert_close(phi_into(z, torch.empty_like(z)), phi(z), rtol=1e-15, atol=1e-15)
    g = torch.linspace(1, 2, 601, dtype=torch.float64)
    torch.testing.assert_close(dphi_mul_(g.clone(), z, tmp), g * dphi(z), rtol=1e-14, atol=1e-15)


def _posterior(activation="linear", L=1, dtype=torch.float64, project=False, N=12, P=9, N0=15):
    task = orthogonal_toy_task(P, N0, seed=1)
    spec = NetworkSpec(N0=N0, N=N, L=L, m=task.m, activation=activation)
    return NetworkPosterior(spec, task.X, task.Y, T=0.05, sigma_a2=1.0 / P, dtype=dtype,
                            project_inputs=project)


@pytest.mark.parametrize(("activation", "L", "project"), [
    ("linear", 1, False), ("sigmoid_erf", 2, False), ("relu", 3, True), ("erf", 2, True)])
def test_grad_into_out_equals_autograd(activation, L, project):
    post = _posterior(activation, L, project=project)
    gen = make_generator(2, "cpu")
    theta = post.sample_prior(4, generator=gen)
    beta = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64) * post.beta
    out = torch.full_like(theta, float("nan"))
    g, info = post.grad(theta, beta=beta, out=out)
    assert g is out
    th = theta.clone().requires_grad_(True)
    e = post.energy(th, beta=beta).sum()
    (ref,) = torch.autograd.grad(e, th)
    torch.testing.assert_close(g, ref, rtol=1e-10, atol=1e-10)
    g2, _ = post.grad(theta[:2], beta=beta[:2])  # another ensemble size: its own workspace
    torch.testing.assert_close(g2, ref[:2], rtol=1e-10, atol=1e-10)
    g3, _ = post.grad(theta, beta=beta)  # and back
    assert torch.equal(g3, g)


def test_grad_out_is_checked():
    post = _posterior()
    theta = post.sample_prior(2, generator=make_generator(0, "cpu"))
    with pytest.raises(ValueError, match=r"out must be a tensor of theta's shape \(2, "):
        post.grad(theta, out=torch.empty(3, post.D, dtype=torch.float64))
    with pytest.raises(ValueError, match="out must be a tensor of theta's shape.*float32"):
        post.grad(theta, out=torch.empty(2, post.D, dtype=torch.float32))
    with pytest.raises(ValueError, match="does not share memory with theta"):
        post.grad(theta, out=theta)


@pytest.mark.parametrize("noise_rng", ["philox", "torch"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_workspace_steps_are_bit_identical_and_ping_pong(noise_rng, dtype):
    post = _posterior("sigmoid_erf", 2, dtype=dtype)
    theta0 = post.sample_prior(3, generator=make_generator(4, "cpu"))
    ga, gb = make_generator(9, "cpu"), make_generator(9, "cpu")
    a, b = langevin_init(theta0), langevin_init(theta0)
    ws = LangevinWorkspace()
    prev = None
    for _ in range(6):
        a, ia = langevin_step(a, post, step_size=1e-3, generator=ga, noise_rng=noise_rng,
                              beta=0.5 * post.beta)
        b, ib = langevin_step(b, post, step_size=1e-3, generator=gb, noise_rng=noise_rng,
                              beta=0.5 * post.beta, workspace=ws)
        assert torch.equal(a.theta, b.theta) and torch.equal(ia["loss"], ib["loss"])
        if prev is not None:  # the previous state stays valid for one more step
            assert torch.equal(prev[0].theta, prev[1])
        prev = (b, b.theta.clone())
    assert b.theta.untyped_storage().data_ptr() in {p.untyped_storage().data_ptr() for p in ws.positions}


def test_workspace_step_allocates_nothing_parameter_sized():
    """Bytes allocated per workspace step (torch profiler), at a size where one parameter vector
    is 0.36 MB: a few kB (the (E,) loss, four key words); the plain step allocates several
    parameter vectors."""
    from torch.profiler import ProfilerActivity, profile

    N, P, N0 = 200, 200, 220
    task = orthogonal_toy_task(P, N0, seed=0)
    post = NetworkPosterior(NetworkSpec(N0=N0, N=N, L=1, m=task.m), task.X, task.Y, T=0.005,
                            sigma_a2=1.0 / P)
    gen = make_generator(0, "cpu")
    per_step = {}
    for name, ws in (("plain", None), ("workspace", LangevinWorkspace())):
        s = langevin_init(post.sample_prior(1, generator=gen))
        for _ in range(3):
            s, _ = langevin_step(s, post, step_size=5e-5, generator=gen, workspace=ws)
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            for _ in range(10):
                s, _ = langevin_step(s, post, step_size=5e-5, generator=gen, workspace=ws)
        per_step[name] = sum(e.cpu_memory_usage for e in prof.events() if e.cpu_memory_usage > 0) / 10
    vec = post.D * 8
    assert per_step["workspace"] < 0.05 * vec, per_step
    assert per_step["plain"] > 2 * vec, per_step


def test_checkpoint_resume_with_workspace_and_philox_is_bit_exact(tmp_path):
    post = _posterior("relu", 2)
    theta0 = post.sample_prior(2, generator=make_generator(1, "cpu"))

    def run(n, path, ws):
        return run_chain(langevin_init(theta0.clone()),
                         lambda s, g: langevin_step(s, post, step_size=1e-3, generator=g, workspace=ws),
                         n_steps=n, generator=make_generator(7, "cpu"), burn_in=0, thin=5,
                         observe=lambda s: {"th": s.theta[:, :4]}, checkpoint_path=path,
                         checkpoint_every=20, progress=False)

    full = run(60, None, LangevinWorkspace())
    path = tmp_path / "ck.pt"
    run(40, path, LangevinWorkspace())  # interrupted at 40 (checkpoint written)
    resumed = run(60, path, LangevinWorkspace())
    assert resumed.resumed_from == 40
    assert torch.equal(full.state.theta, resumed.state.theta)
    assert torch.equal(full.samples["th"], resumed.samples["th"])


def test_noise_rng_is_checked():
    post = _posterior()
    s = langevin_init(post.sample_prior(1, generator=make_generator(0, "cpu")))
    g = make_generator(0, "cpu")
    with pytest.raises(ValueError, match="noise_rng must be one of"):
        langevin_step(s, post, step_size=1e-3, generator=g, noise_rng="mt")
    with pytest.raises(TypeError, match="workspace must be a LangevinWorkspace"):
        langevin_step(s, post, step_size=1e-3, generator=g, workspace={})

    class Half:
        def grad(self, theta):
            return theta, {}

    with pytest.raises(ValueError, match="noise_rng='philox' needs a float32 or float64 theta"):
        langevin_step(langevin_init(torch.zeros(1, 3, dtype=torch.bfloat16)), Half(), step_size=0.1,
                      generator=g, noise_rng="philox")
