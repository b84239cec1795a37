"""Sampler benchmarks: Langevin steps per second with ratios measured in the same run.

* single large chain at the seed-000 Fig. 2 linear configuration (N = P = 200, N0 = 220, m = 3,
  L = 1): the step time vs a bare-matmul roofline, i.e. the time of exactly the matrix products a
  step needs (same shapes, same dtype, preallocated outputs) with nothing else;
* ensemble (E = 16 chains, N = P = 100, L = 1): the batched step vs a straightforward per-chain
  loop of ``torch.nn.Module`` networks whose gradient comes from ``loss.backward()``.

Both are measured for the dense parametrisation (W^1 acts on all N0 input dimensions) and, as
extra lines, for the input-span projection (``project_inputs=True``), which samples the same
posterior with far fewer FLOPs on the orthogonal toy inputs (so a FLOP roofline does not apply to
it). The per-chain baseline draws its noise in float32 like the sampler, so that the ratio
measures batching and hand-written gradients, not the random number generator.
"""

from __future__ import annotations

import math

import torch
from richlazy.simulate import (
    LangevinWorkspace,
    NetworkPosterior,
    NetworkSpec,
    hmc_init,
    hmc_step,
    langevin_init,
    langevin_step,
    make_generator,
    orthogonal_toy_task,
    philox_normal_,
    resolve_device,
)

from ._registry import BenchResult, register_benchmark
from ._timing import mean_time

__all__ = ["bench_sampler", "format_bench_sampler"]


def _posterior(N, P, N0, E, dev, dtype, seed, project=False):
    task = orthogonal_toy_task(P, N0, seed=seed)
    spec = NetworkSpec(N0=N0, N=N, L=1, m=task.m)
    post = NetworkPosterior(spec, task.X, task.Y, T=0.005, sigma_a2=1.0 / P, device=dev, dtype=dtype,
                            project_inputs=project)
    gen = make_generator(seed, dev)
    state = langevin_init(post.sample_prior(E, generator=gen))
    return post, state, gen


def _bench_single(dev, dtype, min_time):
    N, P, N0, m = 200, 200, 220, 3
    post, state, gen = _posterior(N, P, N0, 1, dev, dtype, 0)
    on_cpu = dev.type == "cpu"
    rngs = ("philox", "torch") if on_cpu else ("torch",)
    t_step = {}
    for rng in rngs:
        holder = [state]
        ws = LangevinWorkspace()

        def step(rng=rng, holder=holder, ws=ws):
            holder[0], _ = langevin_step(holder[0], post, step_size=5e-5, generator=gen,
                                         workspace=ws, noise_rng=rng)

        t_step[rng] = mean_time(step, dev, min_time=min_time)
    # roofline: the same products on preallocated buffers
    g_mm = make_generator(1, dev)  # the values are irrelevant; drawn from an explicit generator

    def mk(*shape):
        return torch.randn(*shape, generator=g_mm, device=dev, dtype=dtype)

    W, X, A = mk(1, N, N0), mk(N0, P), mk(1, N, m)
    Z, H, R = mk(1, N, P), mk(1, N, P), mk(1, m, P)
    oZ, oF, oA, oH, oW = mk(1, N, P), mk(1, m, P), mk(1, N, m), mk(1, N, P), mk(1, N, N0)
    XT = X.T.contiguous()
    At = A.transpose(1, 2).contiguous()
    Rt = R.transpose(1, 2).contiguous()

    def mm():
        torch.matmul(W, X, out=oZ)
        torch.matmul(At, H, out=oF)
        torch.matmul(H, Rt, out=oA)
        torch.matmul(A, R, out=oH)
        torch.matmul(Z, XT, out=oW)

    t_mm = mean_time(mm, dev, min_time=min_time)
    # the noise alone: one normal per parameter, from each generator
    buf = torch.empty(post.D, device=dev, dtype=dtype)
    buf32 = torch.empty(post.D, device=dev, dtype=torch.float32)
    t_noise = {"torch": mean_time(lambda: torch.randn(buf32.shape, generator=gen, out=buf32), dev,
                                  min_time=min_time)}
    if on_cpu:
        t_noise["philox"] = mean_time(lambda: philox_normal_(buf, gen), dev, min_time=min_time)
    flops = 2 * (2 * N * N0 * P + 3 * N * P * m)
    postp, statep, genp = _posterior(N, P, N0, 1, dev, dtype, 0, project=True)
    hp = [statep]
    wsp = LangevinWorkspace()

    def stepp():
        hp[0], _ = langevin_step(hp[0], postp, step_size=5e-5, generator=genp, workspace=wsp)

    t_proj = mean_time(stepp, dev, min_time=min_time)
    # an exact sampler on the same posterior: one HMC transition of n_lf leapfrog steps (n_lf
    # gradients, the momenta, the energy, the accept step) against n_lf rooflines
    n_lf = 10
    hs = [hmc_init(state.theta.clone(), post, step_size=1e-4, precond=1.0 / post.precision)]

    def hmc():
        hs[0], _ = hmc_step(hs[0], post, generator=gen, n_leapfrog=n_lf)

    t_hmc = mean_time(hmc, dev, min_time=min_time)
    main = rngs[0]
    out = dict(config="single chain N=P=200, N0=220, L=1, m=3", dtype=str(dtype).replace("torch.", ""),
               noise_rng=main, steps_per_s=1.0 / t_step[main], step_ms=t_step[main] * 1e3,
               roofline_ms=t_mm * 1e3, gflops_step=flops / t_step[main] / 1e9,
               ratio_to_roofline=t_mm / t_step[main], projected_steps_per_s=1.0 / t_proj,
               noise_ms={k: v * 1e3 for k, v in t_noise.items()},
               step_ms_by_noise={k: v * 1e3 for k, v in t_step.items()},
               ratio_by_noise={k: t_mm / v for k, v in t_step.items()},
               # the best any step with this noise can do: matmuls + the noise draw, nothing else
               noise_bound={k: t_mm / (t_mm + t_noise[k if k in t_noise else "torch"]) for k in t_step},
               hmc_leapfrog=n_lf, hmc_ms=t_hmc * 1e3, hmc_ratio_to_roofline=n_lf * t_mm / t_hmc)
    return out


class _OneNet(torch.nn.Module):
    def __init__(self, W, A):
        super().__init__()
        self.W = torch.nn.Parameter(W.clone())
        self.A = torch.nn.Parameter(A.clone())

    def forward(self, X):
        z = self.W @ X / math.sqrt(X.shape[0])
        return (self.A.T @ z) / self.W.shape[0]  # (m, P), linear activation, 1/N readout


def _bench_ensemble(dev, dtype, min_time):
    N, P, N0, E = 100, 100, 120, 16
    post, state, gen = _posterior(N, P, N0, E, dev, dtype, 1)
    eps = 5e-5
    holder = [state]

    # torch's float32 noise on both sides: the ratio measures batching, not the generator
    def batched():
        holder[0], _ = langevin_step(holder[0], post, step_size=eps, generator=gen, noise_rng="torch")

    t_b = mean_time(batched, dev, min_time=min_time)
    postp, statep, genp = _posterior(N, P, N0, E, dev, dtype, 1, project=True)
    hp = [statep]

    def batched_proj():
        hp[0], _ = langevin_step(hp[0], postp, step_size=eps, generator=genp, noise_rng="torch")

    t_bp = mean_time(batched_proj, dev, min_time=min_time)
    p = post.unflatten(state.theta)
    nets = [_OneNet(p["W1"][e], p["A"][e]) for e in range(E)]
    for n in nets:
        n.to(dev)
    X, Yt = post.X, post.Yt
    beta, sa2 = post.beta, post.sigma_a2
    g2 = make_generator(2, dev)

    def loop():
        for net in nets:
            net.zero_grad(set_to_none=True)
            F = net(X)
            phi = 0.5 * beta * ((F - Yt) ** 2).sum() + (net.A**2).sum() / (2 * sa2) + (net.W**2).sum() / 2
            phi.backward()
            with torch.no_grad():
                for prm in (net.W, net.A):
                    prm.add_(prm.grad, alpha=-eps)
                    prm.add_(torch.randn(prm.shape, generator=g2, device=dev, dtype=torch.float32),
                             alpha=math.sqrt(2 * eps))

    for n in nets:
        n.to(dtype)
    t_l = mean_time(loop, dev, min_time=min_time)
    return dict(config="ensemble E=16, N=P=100, N0=120, L=1, m=3", dtype=str(dtype).replace("torch.", ""),
                steps_per_s=1.0 / t_b, chain_steps_per_s=E / t_b, step_ms=t_b * 1e3,
                loop_ms=t_l * 1e3, speedup_vs_autograd_loop=t_l / t_b,
                projected_step_ms=t_bp * 1e3, projected_speedup_vs_autograd_loop=t_l / t_bp)


def bench_sampler(*, device="auto", dtypes=("float64", "float32"), min_time: float = 1.0) -> dict:
    """Run both sampler benchmarks; returns a dict with one entry per (benchmark, dtype)."""
    dev = resolve_device(device)
    out = {"device": str(dev), "threads": torch.get_num_threads(), "single": [], "ensemble": []}
    for name in dtypes:
        dt = {"float64": torch.float64, "float32": torch.float32}[name]
        with torch.inference_mode():
            out["single"].append(_bench_single(dev, dt, min_time))
        out["ensemble"].append(_bench_ensemble(dev, dt, min_time))
    return out


def format_bench_sampler(res: dict) -> str:
    lines = [f"Langevin sampler benchmark (device {res['device']}, {res['threads']} threads)"]
    for r in res["single"]:
        lines.append(
            f"  {r['config']} [{r['dtype']}], workspace step, {r['noise_rng']} noise: "
            f"{r['steps_per_s']:.0f} steps/s ({r['step_ms']:.3f} ms/step, {r['gflops_step']:.1f} GFLOP/s); "
            f"bare-matmul roofline {r['roofline_ms']:.3f} ms -> ratio to roofline "
            f"{r['ratio_to_roofline']:.2f} (target >= 0.85); with input-span projection "
            f"{r['projected_steps_per_s']:.0f} steps/s"
        )
        lines.append(
            f"    HMC transition ({r['hmc_leapfrog']} leapfrog steps): {r['hmc_ms']:.3f} ms -> "
            f"{r['hmc_ratio_to_roofline']:.2f} of {r['hmc_leapfrog']} rooflines (per gradient)"
        )
        for k, v in r["step_ms_by_noise"].items():
            lines.append(
                f"    noise {k}: step {v:.3f} ms, ratio {r['ratio_by_noise'][k]:.2f}; the noise alone "
                f"{r['noise_ms'][k]:.3f} ms ({'Philox kernel' if k == 'philox' else 'torch.randn, float32'}),"
                f" so matmuls + noise bound the ratio at {r['noise_bound'][k]:.2f}"
            )
    for r in res["ensemble"]:
        lines.append(
            f"  {r['config']} [{r['dtype']}]: {r['steps_per_s']:.0f} ensemble steps/s "
            f"({r['chain_steps_per_s']:.0f} chain-steps/s); per-chain autograd loop "
            f"{r['loop_ms']:.2f} ms vs batched {r['step_ms']:.3f} ms -> speedup "
            f"{r['speedup_vs_autograd_loop']:.1f}x (target >= 3x); with input-span projection "
            f"{r['projected_step_ms']:.3f} ms -> {r['projected_speedup_vs_autograd_loop']:.1f}x"
        )
    return "\n".join(lines)



@register_benchmark('sampler', devices=("cpu", "cuda"),
                    description=(
        "Langevin step vs a bare-matmul roofline; batched ensemble vs a loop of single nets"
    ))
def _run_sampler(*, device: str, min_time: float) -> BenchResult:
    res = bench_sampler(device=device, min_time=min_time)
    return BenchResult('sampler', res, format_bench_sampler(res))
