"""Benchmark of the general-data sigmoid solver on real images (seed 000 Fig. 6 setting).

For ``n_subsets`` random class triples and training subsets of size P (scikit-learn's digits,
and Fashion-MNIST when installed), each image centred and scaled as in ``coding/real-images``,
the certified bundle strategy of :func:`~richlazy.theory.solve_sigmoid_general` is compared in
one run with the continuation strategy (the former default) on the same problems: success
counts, relative duality gaps and per-solve times. Never asserts times.
"""

from __future__ import annotations

import statistics
import time

import numpy as np
from richlazy.simulate import DatasetUnavailableError
from richlazy.theory import solve_sigmoid_general
from richlazy.theory.checks import check_int

from ..recipes import random_class_triple
from ._registry import BenchResult, register_benchmark

__all__ = ["bench_sigmoid_data", "format_bench_sigmoid_data"]


def _problems(dataset, n_subsets, P, seed):
    """(classes, K0, Y) for n_subsets random class triples / training subsets."""
    rng = np.random.default_rng(seed)
    return [random_class_triple(dataset, P, rng) for _ in range(n_subsets)]


_STRATEGIES = ("bundle", "continuation")


def bench_sigmoid_data(*, n_subsets: int = 3, P: int = 30, seed: int = 0,
                       datasets=("digits", "fashion_mnist"), strategies=_STRATEGIES) -> dict:
    """Solve each problem with each of ``strategies`` (default "bundle" and "continuation");
    returns per-dataset lists of dicts (classes, converged, relative gap, codes, iterations,
    seconds) per strategy."""
    n_subsets = check_int("n_subsets", n_subsets, minimum=1)
    P = check_int("P", P, minimum=6)
    strategies = tuple(strategies)
    if not strategies or any(s not in _STRATEGIES for s in strategies):
        raise ValueError(f"strategies must be a non-empty subset of {_STRATEGIES}, got "
                         f"{strategies!r}")
    def run(K0, Y, strategy):
        s = solve_sigmoid_general(K0, Y, strategy=strategy, seed=seed)
        return dict(converged=bool(s.converged), n_codes=int(s.n_codes), nit=int(s.nit),
                    rel_gap=s.relative_gap if s.converged else float("nan"))

    res = _sweep(datasets, n_subsets, P, seed, {k: k for k in strategies}, run)
    return {"P": P, "n_subsets": n_subsets, "strategies": list(strategies), "datasets": res}


def _sweep(datasets, n_subsets, P, seed, variants, run):
    """For each dataset and problem of :func:`_problems`: ``run(K0, Y, option)`` for each
    ``label: option`` of ``variants``, timed. Returns {dataset: {"rows": [{"classes", label:
    dict incl. "seconds"}]}} or {dataset: {"unavailable": why}}."""
    res = {}
    for name in datasets:
        try:
            probs = _problems(name, n_subsets, P, seed)
        except DatasetUnavailableError as e:
            res[name] = {"unavailable": str(e)}
            continue
        rows = []
        for classes, K0, Y in probs:
            row = {"classes": list(classes)}
            for label, option in variants.items():
                t0 = time.perf_counter()
                out = run(K0, Y, option)
                row[label] = dict(out, seconds=time.perf_counter() - t0)
            rows.append(row)
        res[name] = {"rows": rows}
    return res


def format_bench_sigmoid_data(r: dict) -> str:
    lines = [f"general-data sigmoid solver, P = {r['P']}, {r['n_subsets']} random class triples "
             "and subsets per dataset (1 thread)"]
    for name, d in r["datasets"].items():
        if "unavailable" in d:
            lines.append(f"  {name}: skipped ({d['unavailable']})")
            continue
        for strategy in r.get("strategies", _STRATEGIES):
            rr = [row[strategy] for row in d["rows"]]
            ok = sum(x["converged"] for x in rr)
            med = statistics.median(x["seconds"] for x in rr)
            gaps = [x["rel_gap"] for x in rr if x["converged"]]
            gap = f", max relative duality gap {max(gaps):.1e}" if gaps else ""
            lines.append(f"  {name:14s} {strategy:12s} converged {ok}/{len(rr)}, median "
                         f"{med:.1f} s, max {max(x['seconds'] for x in rr):.1f} s{gap}")
    return "\n".join(lines)


@register_benchmark("sigmoid-data", devices=("cpu",),
                    description="general-data sigmoid solver on random digits / Fashion-MNIST "
                                "class triples (P = 30): certified bundle vs continuation")
def _run(*, device: str, min_time: float) -> BenchResult:
    r = bench_sigmoid_data()
    return BenchResult("sigmoid-data", r, format_bench_sigmoid_data(r))
