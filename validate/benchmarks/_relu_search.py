"""Benchmark of the search for the ReLU dual margin (:func:`richlazy.theory.relu_dual_margin`)
against a straightforward baseline: one scipy L-BFGS-B call per start on the same ratio.

The problem is a real-data multiplier: the first random class triple and training subset of the
sigmoid-data benchmark (:func:`._sigmoid_data._problems`, P = 30) and the KKT multiplier t of
``solve_relu_outliers`` there (one restart, ``maxiter = 13``, no dual ascent: a multiplier
with dual margin above 1, as the solver's searches see it). Both searches start from the same
random preactivations in the range of K0. Printed in one run: the time ratio, the largest
maximum each found, and how many distinct maxima. Never asserts times.
"""

from __future__ import annotations

import time

import numpy as np
from richlazy.simulate import DatasetUnavailableError
from richlazy.theory import relu_dual_margin, solve_relu_outliers
from richlazy.theory.checks import check_int
from scipy.optimize import minimize

from ._registry import BenchResult, register_benchmark
from ._sigmoid_data import _problems

__all__ = ["bench_relu_search", "format_bench_relu_search"]


def _scipy_search(K0, t, Z0, Ps):
    """The baseline: maximise f(w) = |t^T relu(B w)|^2 / (Ps |w|^2) from each start (w = B^+ z,
    B the eigen range factor of K0) with one scipy L-BFGS-B call (analytic gradient, default
    stopping rules). Returns (f at every maximiser, unit maximisers (S, r))."""
    lam, V = np.linalg.eigh(K0)
    keep = lam > 1e-10 * lam[-1]
    B = V[:, keep] * np.sqrt(lam[keep])
    W0 = Z0 @ (V[:, keep] / np.sqrt(lam[keep]))

    def neg_f(w):
        z = B @ w
        v = t.T @ np.maximum(z, 0.0)
        nw = w @ w
        f = v @ v / (Ps * nw)
        g = 2.0 * (B.T @ ((z > 0) * (t @ v))) / (Ps * nw) - 2.0 * f * w / nw
        return -f, -g

    vals, W = np.empty(len(W0)), np.empty_like(W0)
    for i, w0 in enumerate(W0):
        r = minimize(neg_f, w0, jac=True, method="L-BFGS-B")
        vals[i], W[i] = -r.fun, r.x / np.linalg.norm(r.x)
    return vals, W


def _distinct(vals, W, tol=1e-6):
    """Number of maximisers (positive value) farther apart than ``tol``."""
    kept = []
    for i in np.argsort(-vals):
        if vals[i] > 0 and all(np.linalg.norm(W[i] - w) > tol for w in kept):
            kept.append(W[i])
    return len(kept)


def bench_relu_search(*, n_starts: int = 400, P: int = 30, seed: int = 0,
                      datasets=("digits", "fashion_mnist")) -> dict:
    """Per dataset: the multiplier's problem, then both searches from the same ``n_starts``
    random starts (one thread); returns per-dataset dicts (classes, seconds and best margin and
    distinct maxima of each search, ratio) or {"unavailable": why}."""
    n_starts = check_int("n_starts", n_starts, minimum=1)
    P = check_int("P", P, minimum=6)
    relu_dual_margin(np.eye(3), np.ones((3, 1)), n_starts=2)  # compile (numba cache) outside timing
    out = {}
    for name in datasets:
        try:
            classes, K0, Y = _problems(name, 1, P, seed)[0]
        except DatasetUnavailableError as e:
            out[name] = {"unavailable": str(e)}
            continue
        sol = solve_relu_outliers(K0, Y, n_restarts=1, maxiter=13, seed=seed, dual_ascent=False)
        Z0 = np.random.default_rng(seed + 1).standard_normal((n_starts, P)) @ K0
        t0 = time.perf_counter()
        res = relu_dual_margin(K0, sol.t, starts=Z0)
        t_new = time.perf_counter() - t0
        t0 = time.perf_counter()
        vals, W = _scipy_search(K0, sol.t, Z0, 1.0 / sol.sigma_a2)
        t_base = time.perf_counter() - t0
        out[name] = dict(classes=list(classes), n_starts=n_starts, seconds=t_new,
                         baseline_seconds=t_base, ratio=t_base / t_new, margin=res.margin,
                         baseline_margin=float(vals.max()), n_maxima=len(res.maxima),
                         baseline_n_maxima=_distinct(vals, W))
    return {"P": P, "datasets": out}


def format_bench_relu_search(r: dict) -> str:
    lines = [f"ReLU dual-margin search (relu_dual_margin) vs one scipy L-BFGS-B call per start, "
             f"P = {r['P']}, the same starts (1 thread)"]
    for name, d in r["datasets"].items():
        if "unavailable" in d:
            lines.append(f"  {name}: skipped ({d['unavailable']})")
            continue
        lines.append(
            f"  {name:14s} classes {'-'.join(map(str, d['classes']))}, {d['n_starts']} starts: "
            f"{d['seconds']:.2f} s vs {d['baseline_seconds']:.2f} s = {d['ratio']:.1f}x faster; "
            f"largest maximum {d['margin']:.10f} vs {d['baseline_margin']:.10f}; distinct maxima "
            f"{d['n_maxima']} vs {d['baseline_n_maxima']}")
    return "\n".join(lines)


@register_benchmark("relu-search", devices=("cpu",),
                    description="the ReLU dual-margin search (compiled L-BFGS + face polish) vs "
                                "one scipy L-BFGS-B call per start, on real-data multipliers")
def _run(*, device: str, min_time: float) -> BenchResult:
    r = bench_relu_search()
    return BenchResult("relu-search", r, format_bench_relu_search(r))
