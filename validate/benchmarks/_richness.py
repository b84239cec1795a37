"""Benchmark: D_LR from feature/output matrices vs the naive n x n Gram implementation.

Seed 004, App. E.1: D_LR = 1 - CKA(ΦΦ^T, FF^T) needs only the n x p feature matrix Φ and the
n x C output matrix F. :func:`bench_dlr` times the blocked implementation
(:func:`richlazy.validate.dlr`) at the requested size and, in the same run, both the
blocked and a naive implementation (forms the two n x n Gram matrices, centres them with H, takes
the Frobenius inner product) at a size ``naive_n`` where the naive one fits in memory. Memory is
measured with :mod:`tracemalloc` (numpy registers its array buffers with it), i.e. the peak of
memory allocated *by the measured call* on top of its inputs; BLAS scratch space is not counted.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

from ..richness import dlr
from ._registry import BenchResult, register_benchmark

__all__ = ["bench_dlr", "format_bench_dlr"]


def _synthetic(n: int, p: int, C: int, seed: int, *, rows: int = 4096):
    """Features (n, p) float32 with a low-rank signal plus noise and non-zero mean (ReLU-like),
    generated in row blocks; outputs (n, C) float64 = a linear readout plus noise."""
    rng = np.random.default_rng(seed)
    k = min(C, p)
    mix = rng.standard_normal((k, p)).astype(np.float32)
    readout = rng.standard_normal((p, C)) / np.sqrt(p)
    Phi = np.empty((n, p), dtype=np.float32)
    F = np.empty((n, C))
    for s in range(0, n, rows):
        m = min(rows, n - s)
        z = rng.standard_normal((m, k), dtype=np.float32)
        blk = z @ mix + rng.standard_normal((m, p), dtype=np.float32)
        np.maximum(blk, 0.0, out=blk)
        Phi[s : s + m] = blk
        F[s : s + m] = blk @ readout + 0.1 * rng.standard_normal((m, C))
    return Phi, F


def _dlr_naive(Phi: np.ndarray, F: np.ndarray) -> float:
    """Textbook D_LR: explicit n x n Grams A = ΦΦ^T, B = FF^T, c(A) = HAH, eq. (7)."""
    X = np.asarray(Phi, dtype=np.float64)
    A = X @ X.T
    B = F @ F.T

    def centre(M):
        M -= M.mean(axis=0, keepdims=True)
        M -= M.mean(axis=1, keepdims=True)
        return M

    A, B = centre(A), centre(B)
    return 1.0 - float(np.vdot(A, B) / np.sqrt(np.vdot(A, A) * np.vdot(B, B)))


def _measure(fn, *args):
    tracemalloc.start()
    tracemalloc.reset_peak()
    t0 = time.perf_counter()
    value = fn(*args)
    dt = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return value, dt, peak


def bench_dlr(*, n: int = 50_000, p: int = 4096, C: int = 100, naive_n: int = 10_000, seed: int = 0) -> dict:
    """Time and peak memory of D_LR at (n, p, C), and blocked vs naive at naive_n, in one run.

    Features are synthetic float32 (n x p) and outputs float64 (n x C), generated in blocks; their
    own sizes are reported (``input_bytes``). Returns a dict with: sizes; ``input_bytes``;
    ``fast``: {time_s, peak_bytes, value} at n; ``fast_small`` and ``naive_small`` at naive_n;
    ``agreement`` |D_LR fast - naive| at naive_n; ratios ``time_ratio_naive_over_fast`` and
    ``memory_ratio_naive_over_fast`` (both at naive_n); ``naive_full_gram_bytes`` the memory the
    naive method would need at n for its two float64 n x n Grams and
    ``naive_full_time_extrapolated_s`` its time scaled by (n / naive_n)^2 (arithmetic, not
    measured); ``memory_method``.

    The blocked method costs O(n p^2) (the p x p feature Gram) + O(n p C); the naive one
    O(n^2 p) time and O(n^2) memory, so the time ratio grows like n / p and the memory ratio like
    n^2 / (p^2 + block): choose naive_n > p to see the regime of interest.
    """
    for name, v in (("n", n), ("p", p), ("C", C), ("naive_n", naive_n)):
        if not (isinstance(v, int) and v >= 2):
            raise ValueError(f"{name} must be an int >= 2, got {v!r}")
    if naive_n > n:
        raise ValueError(f"naive_n must be <= n, got naive_n={naive_n}, n={n}")
    t0 = time.perf_counter()
    Phi, F = _synthetic(n, p, C, seed)
    t_gen = time.perf_counter() - t0

    v_fast, t_fast, m_fast = _measure(dlr, Phi, F)
    small_phi, small_f = Phi[:naive_n], F[:naive_n]
    v_fs, t_fs, m_fs = _measure(dlr, small_phi, small_f)
    v_nv, t_nv, m_nv = _measure(_dlr_naive, small_phi, small_f)
    return {
        "n": n,
        "p": p,
        "C": C,
        "naive_n": naive_n,
        "seed": seed,
        "generate_s": t_gen,
        "input_bytes": int(Phi.nbytes + F.nbytes),
        "fast": {"time_s": t_fast, "peak_bytes": int(m_fast), "value": float(v_fast)},
        "fast_small": {"time_s": t_fs, "peak_bytes": int(m_fs), "value": float(v_fs)},
        "naive_small": {"time_s": t_nv, "peak_bytes": int(m_nv), "value": float(v_nv)},
        "agreement": abs(float(v_fs) - float(v_nv)),
        "time_ratio_naive_over_fast": t_nv / t_fs,
        "memory_ratio_naive_over_fast": m_nv / max(m_fs, 1),
        "naive_full_gram_bytes": int(2 * 8 * n * n),
        "naive_full_time_extrapolated_s": t_nv * (n / naive_n) ** 2,
        "memory_method": "tracemalloc peak of the call (numpy buffers; BLAS scratch excluded)",
    }


def _mib(b: float) -> str:
    return f"{b / 2**20:,.1f} MiB"


def format_bench_dlr(result: dict) -> str:
    """Human-readable summary of :func:`bench_dlr`'s dict."""
    r = result
    lines = [
        f"D_LR benchmark (seed 004 App. E.1): n={r['n']}, p={r['p']}, C={r['C']}",
        f"  inputs: {_mib(r['input_bytes'])} (features float32, outputs float64); "
        f"generated in {r['generate_s']:.1f} s",
        f"  blocked D_LR at n={r['n']}: {r['fast']['time_s']:.2f} s, "
        f"peak extra memory {_mib(r['fast']['peak_bytes'])}, D_LR={r['fast']['value']:.6f}",
        f"  naive at n={r['n']} (not run): two n x n Grams = {_mib(r['naive_full_gram_bytes'])}, "
        f"time ~{r['naive_full_time_extrapolated_s']:.0f} s if scaled by n^2 from naive_n",
        f"  at naive_n={r['naive_n']}: blocked {r['fast_small']['time_s']:.3f} s / "
        f"{_mib(r['fast_small']['peak_bytes'])}; naive {r['naive_small']['time_s']:.3f} s / "
        f"{_mib(r['naive_small']['peak_bytes'])}",
        f"  ratios naive/blocked at naive_n: time {r['time_ratio_naive_over_fast']:.1f}x, "
        f"memory {r['memory_ratio_naive_over_fast']:.1f}x; |difference| = {r['agreement']:.2e}",
        f"  memory method: {r['memory_method']}",
    ]
    return "\n".join(lines)



@register_benchmark('richness', devices=("cpu",),
                    description='D_LR at scale: blocked vs naive, time and peak memory')
def _run_richness(*, device: str, min_time: float) -> BenchResult:
    res = bench_dlr()
    return BenchResult('richness', res, format_bench_dlr(res))
