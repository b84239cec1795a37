"""Benchmark of the coding-scheme theory solvers (seed 000, van Meegen & Sompolinsky).

Measures, in one run: the numba tilted-integral kernels (psi, psi', psi'' of the sigmoid-erf and
ReLU tilted Gaussians) against the plain ``scipy.integrate.quad`` reference on the same grid of
tilts; the sigmoid toy solver at the Fig. 2/4 configuration (target < 1 s per solve) and at
y- = -1/2; the finite-P sigmoid solve; the ReLU toy solver; the general fluctuation-free sigmoid
solver on a small correlated problem. Reports medians and ratios; never asserts times.
"""

from __future__ import annotations

import statistics
import time

import numpy as np
from richlazy.theory import (
    solve_relu_toy,
    solve_sigmoid_general,
    solve_sigmoid_toy,
    tilted_moments,
    tilted_moments_quad,
    toy_class_targets,
)
from richlazy.theory.checks import check_int, check_pos_float

from ._registry import BenchResult, register_benchmark

__all__ = ["bench_coding", "format_bench_coding"]

_RHO = np.array([0.5, 0.25, 0.25])


def _timed(fn, min_time: float, min_repeats: int = 3):
    """Median wall time of fn over repeats until min_time has elapsed (at least min_repeats)."""
    times = []
    out = None
    t_start = time.perf_counter()
    while len(times) < min_repeats or time.perf_counter() - t_start < min_time:
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out, len(times)


def bench_coding(*, min_time: float = 1.0, n_h: int = 40) -> dict:
    """Time the coding-scheme theory (see module docstring). ``min_time`` seconds per timed item
    (at least 3 repeats; the scipy-quad reference is run once); ``n_h`` tilts in [-20, 20].

    Returns a dict of seconds, ratios and accuracy figures."""
    min_time = check_pos_float("min_time", min_time)
    n_h = check_int("n_h", n_h, minimum=2)
    h = np.linspace(-20.0, 20.0, n_h)

    t0 = time.perf_counter()
    tilted_moments(h[:2])
    tilted_moments(h[:2], activation="relu")
    first_call = time.perf_counter() - t0

    out = {"n_h": n_h, "first_call_s": first_call}
    for act in ("sigmoid_erf", "relu"):
        t_nb, mom, _ = _timed(lambda act=act: tilted_moments(h, activation=act), min_time)
        t0 = time.perf_counter()
        ref = tilted_moments_quad(h, activation=act)
        t_q = time.perf_counter() - t0
        err = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) for a, b in
                  zip(mom, ref, strict=True))
        out[f"{act}_numba_s"] = t_nb
        out[f"{act}_quad_s"] = t_q
        out[f"{act}_speedup"] = t_q / t_nb
        out[f"{act}_max_abs_diff"] = err

    targets = toy_class_targets(3, y_minus=0.5)
    solve_sigmoid_toy(_RHO, targets)  # warm-up
    t_fig2, sol, n_fig2 = _timed(lambda: solve_sigmoid_toy(_RHO, targets), min_time)
    out.update(sigmoid_toy_s=t_fig2, sigmoid_toy_repeats=n_fig2,
               sigmoid_toy_converged=bool(sol.converged), sigmoid_toy_codes=sol.code_strings(),
               sigmoid_toy_target_s=1.0)
    tm = toy_class_targets(3, y_minus=-0.5)
    out["sigmoid_toy_yminus_half_s"] = _timed(lambda: solve_sigmoid_toy(_RHO, tm), min_time)[0]
    out["sigmoid_toy_P500_s"] = _timed(lambda: solve_sigmoid_toy(_RHO, targets, P=500),
                                       min_time)[0]
    out["relu_toy_s"] = _timed(lambda: solve_relu_toy(_RHO, tm), min_time)[0]

    rng = np.random.default_rng(0)
    P, N0 = 30, 100
    X = rng.standard_normal((N0, P))
    Y = targets[np.arange(P) % 3]
    K0 = X.T @ X / N0
    t_gen, gen, _ = _timed(lambda: solve_sigmoid_general(K0, Y), min_time, min_repeats=1)
    out.update(general_P30_s=t_gen, general_P30_converged=bool(gen.converged))
    return out


def format_bench_coding(d: dict) -> str:
    """Human-readable report of :func:`bench_coding`."""
    lines = [
        "Coding-scheme theory benchmark (seed 000)",
        f"  numba first call (JIT / cache load)  : {1e3 * d['first_call_s']:9.1f} ms",
    ]
    for act in ("sigmoid_erf", "relu"):
        lines.append(
            f"  tilted moments {act:11s} ({d['n_h']} h): numba {1e6 * d[f'{act}_numba_s']:9.1f} us"
            f" vs scipy quad {1e3 * d[f'{act}_quad_s']:8.1f} ms -> x{d[f'{act}_speedup']:.0f}"
            f" (target >= 20; max |diff| {d[f'{act}_max_abs_diff']:.1e})"
        )
    lines += [
        f"  sigmoid toy, Fig. 2/4 (P = inf)      : {1e3 * d['sigmoid_toy_s']:9.1f} ms per solve "
        f"(target < {1e3 * d['sigmoid_toy_target_s']:.0f} ms; {d['sigmoid_toy_repeats']} repeats; "
        f"codes {', '.join(d['sigmoid_toy_codes'])})",
        f"  sigmoid toy, y- = -1/2               : {1e3 * d['sigmoid_toy_yminus_half_s']:9.1f} ms",
        f"  sigmoid toy, finite P = 500          : {1e3 * d['sigmoid_toy_P500_s']:9.1f} ms",
        f"  ReLU toy, y- = -1/2                  : {1e3 * d['relu_toy_s']:9.1f} ms",
        f"  general sigmoid, P = 30 correlated   : {1e3 * d['general_P30_s']:9.1f} ms "
        f"(converged {d['general_P30_converged']})",
    ]
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    print(format_bench_coding(bench_coding()))



@register_benchmark('coding', devices=("cpu",),
                    description=(
        "coding-scheme theory: tilted integrals (numba vs quadrature), sigmoid and ReLU solves"
    ))
def _run_coding(*, device: str, min_time: float) -> BenchResult:
    res = bench_coding(min_time=min_time)
    return BenchResult('coding', res, format_bench_coding(res))
