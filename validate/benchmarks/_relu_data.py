"""Benchmark of the outlier-only ReLU solver on real images (seed 000 Fig. 6 setting).

The same random class triples and training subsets as the sigmoid-data benchmark
(:func:`._sigmoid_data._problems`: scikit-learn's digits, and Fashion-MNIST when installed).
Each problem is solved twice in one run, with and without the dual ascent of
:func:`~richlazy.theory.solve_relu_outliers` (``dual_ascent``), and the two are compared:
certified counts, relative duality gaps and per-solve times. Never asserts times.
"""

from __future__ import annotations

import statistics

from richlazy.theory import solve_relu_outliers
from richlazy.theory.checks import check_int

from ._registry import BenchResult, register_benchmark
from ._sigmoid_data import _sweep

__all__ = ["bench_relu_data", "format_bench_relu_data"]

_VARIANTS = {"KKT multiplier": False, "dual ascent": True}


def bench_relu_data(*, n_subsets: int = 3, P: int = 30, seed: int = 0,
                    datasets=("digits", "fashion_mnist"), maxiter: int = 13) -> dict:
    """Solve each problem with ``dual_ascent=False`` and ``True`` (one restart, ``maxiter``
    stages as in ``coding/real-images``); returns per-dataset lists of dicts (classes, and per
    variant: converged, duality gap, cost, outliers, seconds; with the ascent the result can be
    a cheaper network than the KKT point)."""
    n_subsets = check_int("n_subsets", n_subsets, minimum=1)
    P = check_int("P", P, minimum=6)
    maxiter = check_int("maxiter", maxiter, minimum=1)
    def run(K0, Y, ascent):
        s = solve_relu_outliers(K0, Y, n_restarts=1, maxiter=maxiter, seed=seed,
                                dual_ascent=ascent)
        return dict(converged=bool(s.converged), gap=float(s.duality_gap), cost=float(s.cost),
                    n_outliers=int(s.n_outliers), kkt_residual=float(s.residual))

    res = _sweep(datasets, n_subsets, P, seed, _VARIANTS, run)
    return {"P": P, "n_subsets": n_subsets, "maxiter": maxiter, "datasets": res}


def format_bench_relu_data(r: dict) -> str:
    lines = [f"outlier-only ReLU solver, P = {r['P']}, {r['n_subsets']} random class triples and "
             f"subsets per dataset, maxiter = {r['maxiter']}, one restart (1 thread)"]
    for name, d in r["datasets"].items():
        if "unavailable" in d:
            lines.append(f"  {name}: skipped ({d['unavailable']})")
            continue
        for label in _VARIANTS:
            rr = [row[label] for row in d["rows"]]
            ok = sum(x["converged"] for x in rr)
            gaps = sorted(x["gap"] for x in rr)
            lines.append(f"  {name:14s} {label:15s} certified {ok}/{len(rr)}, median gap "
                         f"{statistics.median(gaps):.1e}, max gap {gaps[-1]:.1e}, median "
                         f"{statistics.median(x['seconds'] for x in rr):.1f} s, max "
                         f"{max(x['seconds'] for x in rr):.1f} s")
    return "\n".join(lines)


@register_benchmark("relu-data", devices=("cpu",),
                    description="outlier-only ReLU solver on random digits / Fashion-MNIST class "
                                "triples (P = 30): certified counts and duality gaps with and "
                                "without the dual ascent")
def _run(*, device: str, min_time: float) -> BenchResult:
    r = bench_relu_data()
    return BenchResult("relu-data", r, format_bench_relu_data(r))
