"""Benchmarks for the same-different machinery of seed 003 (ratios measured in one run).

* batched ensemble training (E networks advanced by one ``torch.bmm`` program) vs a Python loop
  over E separately trained networks — identical data, initialisation and number of steps, so
  the work (FLOPs) is the same and only the batching differs;
* the vectorised memorising-prior Bayes classifier vs a loop calling it one test pair at a time.

Library functions return data; :func:`format_bench_equality` renders it.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from richlazy.simulate import (
    init_gamma_mlp,
    resolve_device,
    sd_symbols,
    sd_test_batch,
    sd_train_batch,
    train_gamma_mlp,
)
from richlazy.theory import llr_memorising
from richlazy.theory.checks import check_int

from ._registry import BenchResult, register_benchmark
from ._timing import sync

__all__ = ["bench_equality", "format_bench_equality"]


def bench_equality(*, n_members: int = 16, d: int = 8, width: int = 32, L: int = 8,
                   batch_size: int = 64, steps: int = 300, n_test: int = 256,
                   bayes_pairs: int = 2000, bayes_L: int = 32, bayes_d: int = 32,
                   seed: int = 0, device: str = "auto", num_threads: int | None = 1) -> dict:
    """Time batched vs looped γ-MLP training and vectorised vs looped Bayes classification.

    Training: ``n_members`` small MLPs (width ``width``, input 2d) on SD tasks with L symbols,
    ``steps`` SGD steps of ``batch_size`` each, trained (i) together by
    :func:`~richlazy.simulate.train_gamma_mlp` and (ii) one at a time by the same
    function with E = 1, using the same pre-drawn batches and initial weights (the final
    weights agree to float32 rounding; their max difference is reported). Bayes: the memorising
    log-likelihood ratio for ``bayes_pairs`` test pairs, vectorised vs one pair per call.

    ``num_threads`` sets torch's intra-op threads for the measurement (restored afterwards;
    None leaves them alone): for small MLPs the batched-vs-looped ratio measures per-operation
    overhead, and on a shared 2-core CPU extra threads mostly add contention noise.

    Returns a dict with the wall times (s), the speed-up ratios and the settings.
    """
    n_old = torch.get_num_threads()
    if num_threads is not None:
        torch.set_num_threads(check_int("num_threads", num_threads, minimum=1))
    try:
        return _bench(n_members, d, width, L, batch_size, steps, n_test, bayes_pairs, bayes_L,
                      bayes_d, seed, device)
    finally:
        torch.set_num_threads(n_old)


def _bench(n_members, d, width, L, batch_size, steps, n_test, bayes_pairs, bayes_L, bayes_d,
           seed, device):
    E = check_int("n_members", n_members, minimum=1)
    for name, v, minimum in (("d", d, 1), ("width", width, 1), ("steps", steps, 1),
                             ("n_test", n_test, 1), ("bayes_pairs", bayes_pairs, 1),
                             ("bayes_d", bayes_d, 1), ("L", L, 2), ("batch_size", batch_size, 2),
                             ("bayes_L", bayes_L, 2)):
        check_int(name, v, minimum=minimum)
    dev = resolve_device(device)
    g = torch.Generator(device=dev).manual_seed(seed)
    S = sd_symbols(E, L, d, generator=g, device=dev)
    xt, yt = sd_test_batch(E, n_test, d, generator=g, device=dev)
    batches = [sd_train_batch(S, batch_size, generator=g) for _ in range(steps)]
    W0, a0 = init_gamma_mlp(E, 2 * d, width, generator=g)
    gam = torch.ones(E)

    def run(members):
        it = iter([(bx[members], by[members]) for bx, by in batches])
        return train_gamma_mlp(lambda _g: next(it), xt[members], yt[members], gam[members],
                               d_eff=d, width=width, steps=steps, eval_every=steps,
                               generator=torch.Generator(device=dev).manual_seed(seed + 1),
                               init=(W0[members], a0[members]))

    run(slice(0, min(E, 2)))  # warm-up (allocator, kernels)
    sync(dev)
    t0 = time.perf_counter()
    batched = run(slice(0, E))
    sync(dev)
    t_batched = time.perf_counter() - t0
    t0 = time.perf_counter()
    looped = [run(slice(e, e + 1)) for e in range(E)]
    sync(dev)
    t_loop = time.perf_counter() - t0
    max_diff = max(float((looped[e].dW[0] - batched.dW[e]).abs().max()) for e in range(E))

    rng = np.random.default_rng(seed)
    sym = rng.standard_normal((bayes_L, bayes_d)) / np.sqrt(bayes_d)
    z1 = rng.standard_normal((bayes_pairs, bayes_d)) / np.sqrt(bayes_d)
    z2 = rng.standard_normal((bayes_pairs, bayes_d)) / np.sqrt(bayes_d)
    t0 = time.perf_counter()
    v = llr_memorising(z1, z2, sym, 1.0)
    t_vec = time.perf_counter() - t0
    t0 = time.perf_counter()
    lp = np.array([llr_memorising(z1[i:i + 1], z2[i:i + 1], sym, 1.0)[0]
                   for i in range(bayes_pairs)])
    t_lp = time.perf_counter() - t0
    return {
        "device": str(dev),
        "torch_threads": torch.get_num_threads(),
        "train": {
            "n_members": E, "d": d, "width": width, "L": L, "batch_size": batch_size,
            "steps": steps, "t_batched_s": t_batched, "t_loop_s": t_loop,
            "speedup": t_loop / t_batched, "max_abs_weight_difference": max_diff,
        },
        "bayes": {
            "pairs": bayes_pairs, "L": bayes_L, "d": bayes_d, "t_vectorised_s": t_vec,
            "t_loop_s": t_lp, "speedup": t_lp / t_vec,
            "max_abs_llr_difference": float(np.max(np.abs(v - lp))),
        },
    }


def format_bench_equality(d: dict) -> str:
    """Human-readable summary of :func:`bench_equality`'s dict."""
    t, b = d["train"], d["bayes"]
    return "\n".join([
        f"equality benchmarks on {d['device']} ({d['torch_threads']} torch threads)",
        f"  γ-MLP training, E={t['n_members']} nets (d={t['d']}, m={t['width']}, "
        f"{t['steps']} steps of {t['batch_size']}):",
        f"    batched {t['t_batched_s']:.3f} s   loop {t['t_loop_s']:.3f} s   "
        f"speed-up {t['speedup']:.1f}x   (max |ΔW| batched vs loop {t['max_abs_weight_difference']:.1e})",
        f"  memorising Bayes classifier, {b['pairs']} pairs (L={b['L']}, d={b['d']}):",
        f"    vectorised {b['t_vectorised_s']:.4f} s   loop {b['t_loop_s']:.3f} s   "
        f"speed-up {b['speedup']:.0f}x   (max |ΔΛ| {b['max_abs_llr_difference']:.1e})",
    ])



@register_benchmark('equality', devices=("cpu", "cuda"),
                    description=(
        "batched gamma-MLP ensemble vs a loop; vectorised Bayes classifiers"
    ))
def _run_equality(*, device: str, min_time: float) -> BenchResult:
    res = bench_equality(device=device, num_threads=None)  # run_benchmark(threads=) sets them
    return BenchResult('equality', res, format_bench_equality(res))
