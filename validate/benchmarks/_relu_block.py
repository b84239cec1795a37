"""Benchmark of the class-block ReLU solver :func:`richlazy.theory.solve_relu_block` (seed 000,
bulk + outliers on a class-block kernel [OURS]).

One correlated-class problem (the configuration of ``coding/relu-correlated``: its class
covariance, exact block kernel, P = 100 by default, classes [1/2, 1/4, 1/4], y- = -1/2,
T = 0.01), solved in one run:

* with the Laplace bulk on 16 Gauss-Hermite nodes per class field (the former default, the
  baseline) and on 10 (the default): time ratio and the largest change of t;
* with the bulk's whole readout law (``bulk="readout_law"``, default nodes): its time against
  the Laplace solve it starts from, its quadrature check, and how far its bulk activation is from
  the Laplace one.

Each solve runs once (they take tens of seconds); never asserts times.
"""

from __future__ import annotations

import time

import numpy as np
from richlazy.theory import solve_relu_block, toy_class_targets
from richlazy.theory.checks import check_int

from ..recipes import CLASS_COVARIANCE
from ._registry import BenchResult, register_benchmark

__all__ = ["bench_relu_block", "format_bench_relu_block"]

_Q = np.array(CLASS_COVARIANCE)


def bench_relu_block(*, P: int = 100) -> dict:
    """Solve the problem of the module docstring at ``P`` inputs (divisible by 4) three ways;
    returns seconds, ratios, convergence and the differences named there."""
    P = check_int("P", P, minimum=8)
    if P % 4:
        raise ValueError(f"P must be divisible by 4 (classes of P/2, P/4, P/4 inputs), got {P}")
    lab = np.repeat(np.arange(3), [P // 2, P // 4, P // 4])
    K = (1.0 - _Q[0, 0]) * np.eye(P) + _Q[np.ix_(lab, lab)]
    Y = toy_class_targets(3, y_minus=-0.5)[lab]
    out = {"P": P}
    sols = {}
    for key, kw in (("laplace16", dict(bulk="laplace", quad_nodes=16)),
                    ("laplace10", dict(bulk="laplace")),
                    ("law", dict(bulk="readout_law"))):
        t0 = time.perf_counter()
        sols[key] = solve_relu_block(K, Y, T=0.01, **kw)
        out[f"{key}_s"] = time.perf_counter() - t0
        out[f"{key}_converged"] = bool(sols[key].converged)
    out["nodes_speedup"] = out["laplace16_s"] / out["laplace10_s"]
    out["nodes_max_dt"] = float(np.max(np.abs(sols["laplace16"].t - sols["laplace10"].t)))
    out["law_vs_laplace"] = out["law_s"] / out["laplace10_s"]
    out["law_quadrature_error"] = float(sols["law"].quadrature_error)
    out["law_activation"] = sols["law"].bulk_mean_activation.tolist()
    out["laplace_activation"] = sols["laplace10"].bulk_mean_activation.tolist()
    return out


def format_bench_relu_block(d: dict) -> str:
    """Human-readable report of :func:`bench_relu_block`."""
    def act(v):
        return " / ".join(f"{x:.3f}" for x in v)
    return "\n".join([
        f"class-block ReLU solver, correlated classes, P = {d['P']} (1 thread, one solve each)",
        f"  Laplace bulk, 16 field nodes (former default): {d['laplace16_s']:7.1f} s "
        f"(converged {d['laplace16_converged']})",
        f"  Laplace bulk, 10 field nodes (default)       : {d['laplace10_s']:7.1f} s "
        f"(converged {d['laplace10_converged']}) -> x{d['nodes_speedup']:.1f}, "
        f"max |t change| {d['nodes_max_dt']:.1e}",
        f"  readout law (default nodes)                  : {d['law_s']:7.1f} s "
        f"(converged {d['law_converged']}; x{d['law_vs_laplace']:.1f} the Laplace solve; "
        f"quadrature check {d['law_quadrature_error']:.1e})",
        f"  bulk mean activation: Laplace {act(d['laplace_activation'])}, readout law "
        f"{act(d['law_activation'])}",
    ])


@register_benchmark("relu-block", devices=("cpu",),
                    description="class-block ReLU solver: field-rule nodes, readout law vs Laplace")
def _run_relu_block(*, device: str, min_time: float) -> BenchResult:
    res = bench_relu_block()
    return BenchResult("relu-block", res, format_bench_relu_block(res))
