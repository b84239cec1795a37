"""Cost and effect of the exact code moves (``sample_neuron_codes``) on the sigmoid toy of seed 000
(Figs. 2/4: ratios [1/2, 1/4, 1/4], y+ = 1, y- = 1/2, T = 0.002, where codes freeze under the
local samplers).

* Cost. A move's cost depends on P (one P x P update and proposal tables over P coordinates), not
  on N, so it is timed per neuron on a network of a few neurons at each P, 4 chains. A sweep over
  N = P neurons costs that time x N (a product, not a separate measurement); it is compared with
  one Gibbs-HMC transition (exact readout, 10 leapfrog steps) of the N = P network, measured.
* Effect. Two chains quenched at T from the prior hold almost no redundant code 1-1-1, two
  chains brought from T = 0.03 hold too much of it; the gap between the pairs' 1-1-1 fractions
  measures how far the chains are from each other. It is measured before and after about the same
  wall time of Gibbs-HMC with one code sweep per transition, and of Gibbs-HMC alone (counting
  code changes per neuron would mostly count neurons whose class mean sits at the 1/2 threshold).
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import torch
from richlazy.simulate import (
    NetworkPosterior,
    NetworkSpec,
    gibbs_readout_step,
    hmc_init,
    hmc_step,
    make_generator,
    mcmc_refresh,
    orthogonal_toy_task,
    resolve_device,
    sample_neuron_codes,
)

from ..codes import neuron_codes
from ..observables import class_means
from ._registry import BenchResult, register_benchmark

__all__ = ["bench_code_moves", "format_bench_code_moves"]

_T = 0.002
_T_HOT = 0.03
_E = 4


def _toy(N, P, dev):
    task = orthogonal_toy_task(P, P + 20, ratios=(0.5, 0.25, 0.25), y_plus=1.0, y_minus=0.5, seed=0)
    post = NetworkPosterior(NetworkSpec(N0=P + 20, N=N, L=1, m=3, activation="sigmoid_erf"), task.X,
                            task.Y, T=_T, sigma_a2=1.0 / P, device=dev, project_inputs=True)
    return post, task.labels


def _hmc_step(post):
    hidden = ~post.block_mask("A")
    return gibbs_readout_step(post, lambda s, g: hmc_step(s, post, generator=g, n_leapfrog=10,
                                                         mask=hidden, adapt=s.step < 100),
                              refresh=lambda s: mcmc_refresh(s, post))


def _timed(fn, min_time):
    n, t0 = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        t = time.perf_counter() - t0
        if t >= min_time:
            return t / n, n


def _codes(post, theta, labels):
    h = post.phi(post.preactivations(theta)[-1])                       # (E, N, P)
    cm = class_means(h.transpose(1, 2), labels, 3).transpose(1, 2)      # (E, N, m)
    return (neuron_codes(cm.double().cpu().numpy()) * (1 << np.arange(3))).sum(-1)  # (E, N)


def _cost(P, n_probe, min_time, g, dev):
    """Per-neuron time of the move at P (a network of n_probe neurons) and one Gibbs-HMC transition
    of the N = P network, past its step-size adaptation."""
    small, _ = _toy(n_probe, P, dev)
    th = small.sample_prior(_E, generator=g)
    sample_neuron_codes(small, th, generator=g)  # warm-up: first calls of the kernels
    t_sweep, _ = _timed(lambda: sample_neuron_codes(small, th, generator=g), min_time)
    post, _ = _toy(P, P, dev)
    box = [hmc_init(post.sample_prior(_E, generator=g), post, step_size=_T * 0.02,
                    precond=1.0 / post.precision)]
    step = _hmc_step(post)

    def one():
        box[0] = step(box[0], g)[0]
    for _ in range(120):
        one()
    t_hmc, _ = _timed(one, min_time)
    per_neuron = t_sweep / n_probe
    return dict(P=P, neuron_move_ms=per_neuron * 1e3, sweep_s=per_neuron * P, hmc_transition_ms=t_hmc * 1e3,
                sweep_over_hmc=per_neuron * P / t_hmc)


def bench_code_moves(*, sizes=(100, 500), effect_P: int = 100, n_probe: int = 8, quench_steps: int = 300,
                     effect_time: float = 30.0, device: str = "cpu", min_time: float = 1.0,
                     seed: int = 0) -> dict:
    dev = resolve_device(device)
    g = make_generator(seed, dev)
    cost = [_cost(P, n_probe, min_time, g, dev) for P in sizes]
    # effect: a cold pair (quenched from the prior) and a hot pair (from T_hot), then each sampler
    post, labels = _toy(effect_P, effect_P, dev)
    N = effect_P
    beta = torch.tensor([N / _T, N / _T, N / _T_HOT, N / _T_HOT], dtype=post.dtype, device=dev)
    hidden = ~post.block_mask("A")
    warm = gibbs_readout_step(post, lambda s, g: hmc_step(s, post, generator=g, n_leapfrog=10, mask=hidden,
                                                         adapt=True, beta=beta),
                              beta=beta, refresh=lambda s: mcmc_refresh(s, post))
    st = hmc_init(post.sample_prior(_E, generator=g), post, step_size=_T * 0.02, precond=1.0 / post.precision,
                  beta=beta)
    for _ in range(quench_steps):
        st, _ = warm(st, g)
    st = hmc_init(st.theta, post, step_size=float(st.step_size.mean()), precond=1.0 / post.precision)
    step = _hmc_step(post)
    for _ in range(quench_steps // 2):
        st, _ = step(st, g)
    start = st

    def gap(theta):
        f = (_codes(post, theta, labels) == 7).mean(-1)  # 1-1-1 fraction per chain
        return float(f[2:].mean() - f[:2].mean()), f.tolist()

    runs = {}
    for name, with_moves in (("code_moves", True), ("hmc_only", False)):
        st = start
        g0, f0 = gap(st.theta)
        accs, n, t0 = [], 0, time.perf_counter()
        budget = effect_time if with_moves else runs["code_moves"]["seconds"]
        while time.perf_counter() - t0 < budget:
            if with_moves:
                theta, acc = sample_neuron_codes(post, st.theta, generator=g)
                st = mcmc_refresh(replace(st, theta=theta), post)
                accs.append(float(acc.mean()))
            st, _ = step(st, g)
            n += 1
        sec = time.perf_counter() - t0
        g1, f1 = gap(st.theta)
        runs[name] = dict(transitions=n, seconds=sec, gap_before=g0, gap_after=g1, fractions_before=f0,
                          fractions_after=f1, acceptance=float(np.mean(accs)) if accs else None)
    return dict(T=_T, n_chains=_E, cost=cost, effect_P=effect_P, quench_steps=quench_steps, effect=runs,
                device=str(dev))


def format_bench_code_moves(r: dict) -> str:
    lines = [f"Exact code moves on the sigmoid toy (y- = 1/2, T = {r['T']}, {r['n_chains']} chains)"]
    for c in r["cost"]:
        lines.append(f"  P = {c['P']}: {c['neuron_move_ms']:.1f} ms per neuron move; a sweep over N = P "
                     f"neurons = {c['sweep_s']:.2f} s (per-neuron time x N) = {c['sweep_over_hmc']:.0f}x "
                     f"one Gibbs-HMC transition ({c['hmc_transition_ms']:.1f} ms, measured)")
    e, h = r["effect"]["code_moves"], r["effect"]["hmc_only"]
    lines.append(f"  N = P = {r['effect_P']}: gap in the 1-1-1 fraction between 2 chains from T = {_T_HOT} "
                 f"and 2 quenched from the prior: {e['gap_before']:.3f} -> {e['gap_after']:.3f} with code "
                 f"moves ({e['transitions']} transitions, {e['seconds']:.0f} s, move acceptance "
                 f"{e['acceptance']:.2f}); {h['gap_before']:.3f} -> {h['gap_after']:.3f} with Gibbs-HMC "
                 f"alone ({h['transitions']} transitions, {h['seconds']:.0f} s)")
    return "\n".join(lines)


@register_benchmark("code-moves", devices=("cpu", "cuda"),
                    description="exact code moves on the sigmoid toy at T = 0.002: cost per neuron "
                                "at P = 100, 500 against a Gibbs-HMC transition, and the gap between "
                                "hot and cold chains they close against Gibbs-HMC alone")
def _run_code_moves(*, device: str, min_time: float) -> BenchResult:
    res = bench_code_moves(device=device, min_time=min_time, effect_time=30 * min_time)
    return BenchResult("code-moves", res, format_bench_code_moves(res))
