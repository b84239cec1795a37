"""Benchmark of the coding-scheme theory solvers (seed 000, van Meegen & Sompolinsky).

Measures, in one run: the numba tilted-integral kernels (psi, psi', psi'' of the sigmoid-erf and
ReLU tilted Gaussians) against the plain ``scipy.integrate.quad`` reference on the same grid of
tilts; the sigmoid toy solver at the Fig. 2/4 configuration (target < 1 s per solve) and at
y- = -1/2; the finite-P sigmoid solve; the ReLU toy solver; the general fluctuation-free sigmoid
solver on a small correlated problem; the middle layer of a deep network
(:func:`richlazy.theory.solve_sigmoid_middle_layer`, a 6-D field integral) against two floors
measured on the same number of single-input averages: a numpy evaluation of those averages (the
straightforward baseline, the solver's own form before its compiled kernel) and scipy's erfc
alone (the transcendental work no implementation avoids); the feature layer of a deep network
(:func:`richlazy.theory.solve_sigmoid_general` on a class-block kernel) from the orthonormal toy
against ``start=`` a nearby solution, as the deep solvers call it. Reports medians and ratios;
never asserts times.
"""

from __future__ import annotations

import time

import numpy as np
from richlazy.theory import (
    solve_relu_toy,
    solve_sigmoid_general,
    solve_sigmoid_middle_layer,
    solve_sigmoid_toy,
    tilted_moments,
    tilted_moments_quad,
    toy_class_targets,
)
from richlazy.theory.checks import check_int, check_pos_float
from scipy import special

from ._registry import BenchResult, register_benchmark
from ._timing import median_time

__all__ = ["bench_coding", "format_bench_coding"]

_RHO = np.array([0.5, 0.25, 0.25])


def _timed(fn, min_time: float, min_repeats: int = 3):
    """Median wall time of fn over repeats until min_time has elapsed (at least min_repeats):
    (median seconds, last result, repeats)."""
    return median_time(fn, min_time=min_time, min_repeats=min_repeats)


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
    out.update(_bench_middle_layer(min_time))
    out.update(_bench_feature_start(min_time))
    return out


def _class_block(labels, diag, B):
    K = np.asarray(B, float)[np.ix_(labels, labels)]
    K[np.diag_indices(labels.size)] = np.asarray(diag, float)[labels]
    return K


def _numpy_tilted_averages(xi, u, s, alpha, eps, logw):
    """The single-input averages of the middle layer's field integral written with numpy arrays
    (points x nodes): log chi and <phi>, <phi^2>, <eps>, <eps^2>, <eps phi> of the density
    ``∝ exp(½ alpha phi^2 + u phi)`` over ``z = xi + s eps`` (sigmoid-erf)."""
    ph = 0.5 * special.erfc(-0.5 * np.sqrt(np.pi) * (xi[:, None] + s * eps))
    e = logw + 0.5 * alpha * ph * ph + u[:, None] * ph
    lchi = special.logsumexp(e, axis=1)
    p = np.exp(e - lchi[:, None])
    return lchi, p @ eps, p @ (eps * eps), np.sum(p * ph, axis=1), np.sum(p * ph * ph, axis=1), \
        np.sum(p * ph * eps, axis=1)


def _bench_middle_layer(min_time: float) -> dict:
    """solve_sigmoid_middle_layer on a 6-D field (20 inputs in classes of 10 / 5 / 5, the size of
    coding/deep-sigmoid-3) against the numpy averages and the erfc floor at as many
    (point, class, node) triples as its two quadrature rules use (the mode search is extra)."""
    labels = np.repeat([0, 1, 2], [10, 5, 5])
    B_t = np.array([[1.0, -0.3, -0.2], [-0.3, 1.2, -0.1], [-0.2, -0.1, 0.9]])
    Kp = _class_block(labels, [0.5, 0.45, 0.48], [[0.3, 0.1, 0.05], [0.1, 0.25, 0.08], [0.05, 0.08, 0.28]])
    Kt = _class_block(labels, [-0.2, 0.3, 0.1] + 0.4 * np.diag(B_t), 0.4 * B_t)
    k, n_nodes = 6, 81
    solve_sigmoid_middle_layer(Kp, Kt, labels, quad_nodes=k)  # warm-up (compiled kernel)
    t_solve, sol, _ = _timed(lambda: solve_sigmoid_middle_layer(Kp, Kt, labels, quad_nodes=k), min_time)
    n_modes, D = sol.modes.shape
    M = n_modes * (k ** D + (k - 1) ** D)  # field points of the two rules
    C = 3
    rng = np.random.default_rng(0)
    xi, u = rng.normal(0.0, 0.5, M), rng.normal(0.0, 2.0, M)
    eps, w = np.polynomial.hermite_e.hermegauss(n_nodes)
    logw = np.log(w / w.sum())

    def numpy_averages():
        for _ in range(C):
            _numpy_tilted_averages(xi, u, 0.3, -1.0, eps, logw)

    def erfc_floor():
        for _ in range(C):
            special.erfc(xi[:, None] + 0.3 * eps)

    t_np = _timed(numpy_averages, min_time, min_repeats=1)[0]
    t_erfc = _timed(erfc_floor, min_time, min_repeats=1)[0]
    return {"middle_s": t_solve, "middle_converged": bool(sol.converged), "middle_modes": int(n_modes),
            "middle_D": int(D), "middle_evaluations": int(M * C * n_nodes), "middle_numpy_s": t_np,
            "middle_erfc_s": t_erfc, "middle_vs_numpy": t_np / t_solve, "middle_vs_erfc": t_solve / t_erfc}


def _bench_feature_start(min_time: float, P: int = 50) -> dict:
    """The feature layer of a deep network as the deep solvers call it at every map evaluation:
    solve_sigmoid_general on a class-block kernel (the size and kernel of coding/deep-sigmoid-3's
    full size, y- = -1/2) from the orthonormal toy against ``start=`` a solution at a kernel 1 %
    away (what the previous evaluation leaves); the difference of the two results is reported."""
    labels = np.repeat([0, 1, 2], [P - 2 * (P // 3), P // 3, P // 3])
    Y = toy_class_targets(3, y_minus=-0.5)[labels]
    B = np.array([[0.30, 0.22, 0.21], [0.22, 0.31, 0.22], [0.21, 0.22, 0.31]])
    d = np.array([0.38, 0.36, 0.36])
    near = solve_sigmoid_general(_class_block(labels, d, B), Y)
    K = _class_block(labels, 1.01 * d, 1.005 * B)
    t_cold, cold, _ = _timed(lambda: solve_sigmoid_general(K, Y), min_time, min_repeats=1)
    t_warm, warm, _ = _timed(lambda: solve_sigmoid_general(K, Y, start=near), min_time)
    return {"feature_P": P, "feature_cold_s": t_cold, "feature_start_s": t_warm,
            "feature_speedup": t_cold / t_warm, "feature_converged": bool(cold.converged and warm.converged),
            "feature_max_abs_diff": float(np.max(np.abs(cold.a_gamma - warm.a_gamma)))
            if cold.a_gamma.shape == warm.a_gamma.shape else float("nan")}


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
        f"  middle layer, 6-D field, P = 20      : {1e3 * d['middle_s']:9.1f} ms per solve "
        f"(field modes: {d['middle_modes']}; converged {d['middle_converged']}; with the code tables)\n"
        f"    its two rules' {d['middle_evaluations'] / 1e6:.1f} M single-input terms: numpy "
        f"{1e3 * d['middle_numpy_s']:.1f} ms (x{d['middle_vs_numpy']:.2f} the whole solve), erfc alone "
        f"{1e3 * d['middle_erfc_s']:.1f} ms (the solve is x{d['middle_vs_erfc']:.2f} that floor)",
        f"  feature layer, class-block P = {d['feature_P']}    : from the toy "
        f"{1e3 * d['feature_cold_s']:.1f} ms, "
        f"start= a solution 1 % away {1e3 * d['feature_start_s']:.1f} ms -> x{d['feature_speedup']:.1f} "
        f"(converged {d['feature_converged']}; max |a_gamma diff| {d['feature_max_abs_diff']:.1e})",
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
