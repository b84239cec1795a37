"""Benchmark of the LDT solvers and the symbolic tables (seed 002).

Measures, in one run, the exact two-layer erf energy E(alpha) (numba kernels + Brent) against a
straightforward NumPy implementation of the same equations (dense fixed grid, ``logsumexp``) and
one mpmath evaluation of the log-MGF, the same energy with the exact |w_perp|^2 fluctuations
(``perp="exact"``, a 2-D integral; timed against the eq. (36) default and checked for grid
convergence), and the time to derive all scaling tables with SymPy.
Reports medians and ratios; never asserts times."""

from __future__ import annotations

import math
import time

import numpy as np
from richlazy.theory import (
    ErfModel,
    erf_hermite_coefficient_sq,
    ldt_two_layer_erf,
    log_z1_reference,
    scaling_tables,
)
from richlazy.theory.checks import check_int, check_pos_float
from scipy import optimize
from scipy.special import logsumexp

from ..rendering._tables import render_tables
from ._registry import BenchResult, register_benchmark
from ._timing import median_time

__all__ = ["bench_ldt", "format_bench_ldt", "bench_ldt_sampler", "format_bench_ldt_sampler"]


def _timed(fn, repeats: int) -> tuple[float, object]:
    """Median seconds of ``repeats`` calls and the last result."""
    return median_time(fn, min_repeats=repeats)[:2]


def _numpy_energy(alpha: float, d: int, N: int, n_grid: int = 40001, w_max: float = 4.0) -> float:
    """Reference: the spec's algorithm verbatim — fixed grid |w| <= 4, log-sum-exp, Brent."""
    c2 = erf_hermite_coefficient_sq(3)
    b = 1.0 + 2.0 * (d - 1) / d
    w = np.linspace(-w_max, w_max, n_grid)
    h = w[1] - w[0]
    g = c2 * w**6 / (b + 2 * w * w) ** 3
    base = -0.5 * d * w * w
    lognorm = math.log(h) + 0.5 * math.log(d / (2 * math.pi))

    def lam_and_mean(t):
        tau = t * t / (2.0 * N)
        e = base + tau * g
        lz = logsumexp(e)
        mean = float(np.exp(logsumexp(e, b=g) - lz))
        return N * (lz + lognorm), mean

    def F(logt):
        t = math.exp(logt)
        return t * lam_and_mean(t)[1] - alpha

    lo = math.log(alpha / (c2 / 8))
    hi = lo + math.log(2.0)
    while F(hi) < 0:
        lo, hi = hi, hi + math.log(2.0)
    t = math.exp(optimize.brentq(F, lo, hi, xtol=1e-12))
    return t * alpha - lam_and_mean(t)[0]


def bench_ldt(*, d: int = 400, N: int | None = None, alpha: float = 1.0, repeats: int = 20) -> dict:
    """Time E(alpha) of the exact LDT at (d, N) [numba] vs a NumPy reference and one mpmath
    log-MGF evaluation vs the numba kernel; time the SymPy derivation of all tables.

    Returns a dict of seconds (medians over ``repeats``), ratios and the energies compared.
    """
    d = check_int("d", d, minimum=2)
    N = d if N is None else check_int("N", N, minimum=1)
    alpha = check_pos_float("alpha", alpha)
    repeats = check_int("repeats", repeats, minimum=1)

    t0 = time.perf_counter()
    first = ldt_two_layer_erf(alpha, d, N)
    first_call = time.perf_counter() - t0
    t_numba, res = _timed(lambda: ldt_two_layer_erf(alpha, d, N), repeats)
    t_numpy, e_numpy = _timed(lambda: _numpy_energy(alpha, d, N), max(1, repeats // 4))

    pr = ErfModel(d, N)
    tau = float(res.tau_star)
    t_kernel, mom = _timed(lambda: pr.moments(tau), repeats)
    t_mp, ref = _timed(lambda: log_z1_reference(tau, d), 1)

    # exact |w_perp|^2 option: first call (JIT / cache load), timing, grid convergence
    t0 = time.perf_counter()
    ex_first = ldt_two_layer_erf(alpha, d, N, perp="exact")
    ex_first_call = time.perf_counter() - t0
    t_exact, ex = _timed(lambda: ldt_two_layer_erf(alpha, d, N, perp="exact"), repeats)
    ex_fine = ldt_two_layer_erf(alpha, d, N, perp="exact", points_per_width=16.0)
    pr_ex = ErfModel(d, N, perp="exact")
    tau_ex = float(ex.tau_star)
    t_kernel_ex, _ = _timed(lambda: pr_ex.moments(tau_ex), repeats)

    t0 = time.perf_counter()
    rows = scaling_tables(cache=False)  # a cold symbolic derivation
    t_tables = time.perf_counter() - t0
    t_render, _ = _timed(lambda: render_tables(rows, "json"), 3)
    return {
        "d": d,
        "N": N,
        "alpha": alpha,
        "energy": float(res.energy),
        "energy_numpy": float(e_numpy),
        "energy_rel_diff": abs(float(res.energy) - e_numpy) / float(res.energy),
        "first_call_s": first_call,
        "energy_numba_s": t_numba,
        "energy_numpy_s": t_numpy,
        "speedup_vs_numpy": t_numpy / t_numba,
        "log_mgf_kernel_s": t_kernel,
        "log_mgf_mpmath_s": t_mp,
        "speedup_vs_mpmath": t_mp / t_kernel,
        "log_mgf_rel_diff": abs(mom[0] - ref[0]) / abs(ref[0]),
        "energy_exact": float(ex.energy),
        "energy_exact_over_frozen": float(ex.energy) / float(res.energy),
        "energy_exact_s": t_exact,
        "exact_first_call_s": ex_first_call,
        "exact_over_frozen_time": t_exact / t_numba,
        "energy_exact_grid_rel_diff": abs(float(ex.energy) - float(ex_fine.energy))
        / float(ex_fine.energy),
        "log_mgf_exact_kernel_s": t_kernel_ex,
        "exact_converged": bool(ex_first.converged and ex.converged),
        "tables_s": t_tables,
        "tables_rows": len(rows),
        "render_json_s": t_render,
        "target_energy_s": 0.05,
        "converged": bool(first.converged),
    }


def format_bench_ldt(d: dict) -> str:
    """Human-readable report of :func:`bench_ldt`."""
    lines = [
        f"LDT benchmark (two-layer erf, He_3 target, d={d['d']}, N={d['N']}, alpha={d['alpha']})",
        f"  E(alpha) numba + Brent   : {1e3 * d['energy_numba_s']:9.3f} ms  "
        f"(target < {1e3 * d['target_energy_s']:.0f} ms; first call incl. JIT/cache load "
        f"{1e3 * d['first_call_s']:.1f} ms)",
        f"  E(alpha) numpy reference : {1e3 * d['energy_numpy_s']:9.3f} ms  "
        f"-> numba speed-up x{d['speedup_vs_numpy']:.1f}  "
        f"(|dE|/E = {d['energy_rel_diff']:.1e})",
        f"  log-MGF numba kernel     : {1e6 * d['log_mgf_kernel_s']:9.1f} us  vs mpmath "
        f"{1e3 * d['log_mgf_mpmath_s']:.1f} ms -> x{d['speedup_vs_mpmath']:.0f}  "
        f"(rel diff {d['log_mgf_rel_diff']:.1e})",
        f"  E(alpha) perp='exact'    : {1e3 * d['energy_exact_s']:9.3f} ms  "
        f"(target < {1e3 * d['target_energy_s']:.0f} ms; x{d['exact_over_frozen_time']:.0f} "
        f"the eq. (36) time; first call {1e3 * d['exact_first_call_s']:.1f} ms; 2-D kernel "
        f"{1e3 * d['log_mgf_exact_kernel_s']:.3f} ms; |dE|/E vs 16 points/width "
        f"{d['energy_exact_grid_rel_diff']:.1e})",
        f"  scaling tables (SymPy)   : {d['tables_s']:9.3f} s for {d['tables_rows']} rows; "
        f"JSON render {1e3 * d['render_json_s']:.2f} ms",
        f"  E = {d['energy']:.6g} (eq. 36), {d['energy_exact']:.6g} (exact |w_perp|^2): "
        f"ratio {d['energy_exact_over_frozen']:.4f}",
    ]
    return "\n".join(lines)


def bench_ldt_sampler(
    *, d: int = 12, N: int = 12, P: int = 240, n_chains: int = 32, n_steps: int = 200,
    device: str = "cpu", dtype: str = "float32",
) -> dict:
    """Throughput of the batched Langevin ensemble used by the ``ldt/*`` cases: chain-steps per
    second of the full step (gradient + noise) vs the two batched matmuls of the gradient alone
    (a roofline for the step)."""
    import torch
    from richlazy.simulate import (
        TwoLayerErfPosterior,
        hermite_target_data,
        langevin_init,
        langevin_step,
        make_generator,
    )

    d = check_int("d", d, minimum=2)
    N = check_int("N", N)
    P = check_int("P", P)
    n_chains = check_int("n_chains", n_chains)
    n_steps = check_int("n_steps", n_steps)
    dev = torch.device(device)
    tdt = torch.float32 if dtype == "float32" else torch.float64
    g = make_generator(0, dev)
    X, y = hermite_target_data(P, d, generator=g, device=dev, dtype=tdt)
    post = TwoLayerErfPosterior(X, y, N=N, kappa=1.0)
    state = langevin_init(post.sample_prior(n_chains, generator=g))
    for _ in range(10):
        state, _ = langevin_step(state, post, step_size=1e-4, generator=g)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    sync()
    t0 = time.perf_counter()
    for _ in range(n_steps):
        state, _ = langevin_step(state, post, step_size=1e-4, generator=g)
    sync()
    t_step = (time.perf_counter() - t0) / n_steps
    W, _ = post.unpack(state.theta)
    R = torch.randn((n_chains, P, N), generator=g, device=dev, dtype=tdt)
    sync()
    t0 = time.perf_counter()
    for _ in range(n_steps):
        H = torch.matmul(W, X.T)
        _ = torch.matmul(R.transpose(1, 2), X)
    sync()
    t_mm = (time.perf_counter() - t0) / n_steps
    del H
    return {
        "d": d, "N": N, "P": P, "n_chains": n_chains, "device": str(dev), "dtype": dtype,
        "step_s": t_step, "chain_steps_per_s": n_chains / t_step, "matmul_s": t_mm,
        "step_over_matmul": t_step / t_mm,
    }


def format_bench_ldt_sampler(r: dict) -> str:
    """Human-readable report of :func:`bench_ldt_sampler`."""
    return (
        f"LDT ensemble sampler ({r['device']}, {r['dtype']}; d={r['d']}, N={r['N']}, P={r['P']}, "
        f"{r['n_chains']} chains): {1e3 * r['step_s']:.2f} ms/step = "
        f"{r['chain_steps_per_s']:.0f} chain-steps/s; the two gradient matmuls alone "
        f"{1e3 * r['matmul_s']:.3f} ms -> step/matmul x{r['step_over_matmul']:.1f}"
    )



@register_benchmark('ldt', devices=("cpu",),
                    description=(
        "exact LDT energy: numba vs NumPy reference, mpmath check, SymPy tables"
    ))
def _run_ldt(*, device: str, min_time: float) -> BenchResult:
    res = bench_ldt()
    return BenchResult('ldt', res, format_bench_ldt(res))


@register_benchmark('ldt-sampler', devices=("cpu", "cuda"),
                    description='two-layer erf posterior sampler throughput')
def _run_ldt_sampler(*, device: str, min_time: float) -> BenchResult:
    res = bench_ldt_sampler(device=device)
    return BenchResult('ldt-sampler', res, format_bench_ldt_sampler(res))
