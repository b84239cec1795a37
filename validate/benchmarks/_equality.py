"""Benchmarks for the same-different machinery of seed 003 (ratios measured in one run).

* batched ensemble training (E networks advanced by one ``torch.bmm`` program) vs a Python loop
  over E separately trained networks — identical data, initialisation and number of steps, so
  the work (FLOPs) is the same and only the batching differs;
* the vectorised memorising-prior Bayes classifier vs a loop calling it one test pair at a time;
* the structured SD training step (``train_gamma_mlp_sd``) vs the dense step (``train_gamma_mlp``
  with an ``sd_train_batch`` closure) at the Fig. 1c size, per number of symbols L.

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
    train_gamma_mlp_sd,
)
from richlazy.theory import llr_memorising
from richlazy.theory.checks import check_int

from ._registry import BenchResult, register_benchmark
from ._timing import sync

__all__ = ["bench_equality", "bench_equality_structured", "format_bench_equality",
           "format_bench_equality_structured"]


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
                               d_eff=d, width=width, n_steps=steps, eval_every=steps,
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


def bench_equality_structured(*, Ls=(2, 8, 32, 128), d: int = 256, width: int = 1024,
                              batch_size: int = 128, n_test: int = 128, seed: int = 0,
                              device: str = "auto", min_time: float = 1.0,
                              num_threads: int | None = 1) -> dict:
    """Training steps/s of one γ-MLP (E = 1, float32) on the noise-free SD task: the structured
    step of :func:`~richlazy.simulate.train_gamma_mlp_sd` (``method="auto"``, and ``"slots"``
    for reference) vs the dense step of :func:`~richlazy.simulate.train_gamma_mlp` with an
    ``sd_train_batch`` closure, at the seed-003 Fig. 1c size (d = 256, m = 1024, batch 128),
    for each L in ``Ls``, all measured in this run.

    Steps/s come from the difference of a short and a long run (each the minimum of two), so
    the initialisation, the tables and the two evaluations of the ``n_test`` fixed test pairs
    cancel; the long run lasts about ``min_time`` seconds. Agreement of the two steps after the
    same 20 steps: max |ΔW_structured − ΔW_dense| / max |ΔW_dense| in float64 (rounding, ~1e-15)
    and ‖ΔW_structured − ΔW_dense‖ / ‖ΔW_dense‖ in float32 (rounding, plus the occasional unit
    sitting on the ReLU kink within float32 rounding, which goes either way in either step).
    Returns a dict (steps/s, ratios, agreement, settings).
    """
    n_old = torch.get_num_threads()
    if num_threads is not None:
        torch.set_num_threads(check_int("num_threads", num_threads, minimum=1))
    try:
        return _bench_structured(tuple(Ls), d, width, batch_size, n_test, seed, device, min_time)
    finally:
        torch.set_num_threads(n_old)


def _steps_per_second(run, dev, min_time: float) -> float:
    """1 / (seconds per step) of ``run(steps)`` from a short and a long run (fixed costs cancel)."""
    def timed(steps):
        sync(dev)
        t0 = time.perf_counter()
        run(steps)
        sync(dev)
        return time.perf_counter() - t0

    short = 5
    t_short = min(timed(short) for _ in range(2))
    per_step = max((timed(4 * short) - t_short) / (3 * short), 1e-7)
    long = short + max(20, int(min_time / per_step))
    t_long = min(timed(long) for _ in range(2))
    t_short = min(t_short, timed(short))
    return (long - short) / max(t_long - t_short, 1e-9)


def _bench_structured(Ls, d, width, batch_size, n_test, seed, device, min_time):
    for name, v, minimum in (("d", d, 1), ("width", width, 1), ("batch_size", batch_size, 2),
                             ("n_test", n_test, 2)):
        check_int(name, v, minimum=minimum)
    for L in Ls:
        check_int("Ls", L, minimum=2)
    dev = resolve_device(device)
    rows = []
    for L in Ls:
        g = torch.Generator(device=dev).manual_seed(seed)
        S = sd_symbols(1, L, d, generator=g, device=dev)
        xt, yt = sd_test_batch(1, n_test, d, generator=g, device=dev)

        def dense(steps, dtype=torch.float32, S=S, xt=xt, yt=yt):
            return train_gamma_mlp(lambda gg: sd_train_batch(S, batch_size, generator=gg), xt, yt, 1.0,
                                   d_eff=d, width=width, n_steps=steps, eval_every=steps, dtype=dtype,
                                   generator=torch.Generator(device=dev).manual_seed(seed + 1))

        def structured(steps, method="auto", dtype=torch.float32, S=S, xt=xt, yt=yt):
            return train_gamma_mlp_sd(S, xt, yt, 1.0, batch_size=batch_size, width=width, n_steps=steps,
                                      eval_every=steps, method=method, dtype=dtype,
                                      generator=torch.Generator(device=dev).manual_seed(seed + 1))

        r_dense, r_struct = dense(20), structured(20)
        rel32 = float((r_struct.dW - r_dense.dW).norm() / r_dense.dW.norm())
        r64_dense, r64_struct = dense(20, torch.float64), structured(20, dtype=torch.float64)
        rel64 = float((r64_struct.dW - r64_dense.dW).abs().max() / r64_dense.dW.abs().max())
        sps_dense = _steps_per_second(dense, dev, min_time)
        sps_auto = _steps_per_second(structured, dev, min_time)
        sps_slots = (sps_auto if r_struct.method == "slots" else
                     _steps_per_second(lambda n: structured(n, "slots"), dev, min_time))
        rows.append({"L": L, "method": r_struct.method, "dense_steps_per_s": sps_dense,
                     "structured_steps_per_s": sps_auto, "slots_steps_per_s": sps_slots,
                     "ratio": sps_auto / sps_dense, "slots_ratio": sps_slots / sps_dense,
                     "rel_dW_difference_float32": rel32, "max_rel_dW_difference_float64": rel64})
    return {"device": str(dev), "torch_threads": torch.get_num_threads(), "d": d, "width": width,
            "batch_size": batch_size, "n_members": 1, "dtype": "float32", "rows": rows}


def format_bench_equality_structured(d: dict) -> str:
    """Human-readable table of :func:`bench_equality_structured`'s dict."""
    lines = [f"structured SD step vs dense step on {d['device']} ({d['torch_threads']} torch threads), "
             f"one model, d={d['d']}, m={d['width']}, batch {d['batch_size']}, {d['dtype']}",
             "     L  auto step  dense steps/s  structured steps/s  ratio   slots steps/s  ratio"
             "   rel. ΔW difference after 20 steps: float64 (max)  float32 (norm)"]
    for r in d["rows"]:
        lines.append(f"  {r['L']:4d}  {r['method']:>9s}  {r['dense_steps_per_s']:13.1f}  "
                     f"{r['structured_steps_per_s']:18.1f}  {r['ratio']:5.1f}x  "
                     f"{r['slots_steps_per_s']:13.1f}  {r['slots_ratio']:4.1f}x   "
                     f"{r['max_rel_dW_difference_float64']:35.1e}  {r['rel_dW_difference_float32']:13.1e}")
    return "\n".join(lines)


@register_benchmark("equality-structured", devices=("cpu", "cuda"),
                    description="structured vs dense gamma-MLP step on the SD task (Fig. 1c size)")
def _run_equality_structured(*, device: str, min_time: float) -> BenchResult:
    res = bench_equality_structured(device=device, min_time=min_time, num_threads=None)
    return BenchResult("equality-structured", res, format_bench_equality_structured(res))
