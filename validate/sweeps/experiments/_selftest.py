"""``selftest``: a tiny Monte Carlo experiment with a known answer, for checking an executor.

Each task estimates the mean of N(mu, sigma²) from ``n`` draws taken in ``chunks`` chunks; chunk
c uses the task's stream c, and the running sums are checkpointed (atomically) after every chunk,
so an interrupted task resumes where it stopped and still gives the identical result. Metrics:
``mean``, ``mean_se`` and ``z = (mean − mu)/mean_se``, which is N(0, 1) across replicates.

Knobs for exercising the machinery (they do not change the numbers): ``sleep`` seconds per chunk;
``fail_replicate`` makes that replicate raise; ``die`` ends the *process* running the task
("once": only the first time, using a marker in the task's checkpoint folder; "always": every
time) — a dying Dask worker; in the sequential executor it ends the sweep itself, so die needs a
Dask executor and a sweep folder.
"""

from __future__ import annotations

import json
import math
import os
import time

from .._registry import Param, SweepContext, register_sweep


def _load(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


@register_sweep(
    "selftest",
    description="Monte Carlo mean of N(mu, sigma^2) with a known answer (z ~ N(0,1)); checks an "
                "executor, resume after interruption, failing tasks and dying workers",
    params={
        "mu": Param(float, 0.0, "mean of the sampled normal"),
        "sigma": Param(float, 1.0, "standard deviation", minimum=1e-300),
        "n": Param(int, 1000, "draws per chunk", minimum=2),
        "chunks": Param(int, 1, "chunks (a checkpoint after each)", minimum=1),
        "sleep": Param(float, 0.0, "seconds to sleep per chunk", minimum=0.0),
        "fail_replicate": Param(int, -1, "this replicate raises RuntimeError (-1: none)",
                                minimum=-1),
        "die": Param(str, "never", "end the worker process: never, once or always",
                     choices=("never", "once", "always")),
    },
    uses_gpu=False,
    metrics=("mean", "mean_se", "z"),
)
def selftest(ctx: SweepContext, *, mu, sigma, n, chunks, sleep, fail_replicate, die):
    if ctx.replicate == fail_replicate:
        raise RuntimeError(f"selftest: replicate {ctx.replicate} fails on purpose "
                           f"(fail_replicate={fail_replicate})")
    ck = ctx.checkpoint_dir
    if die != "never":
        if ck is None:
            raise ValueError("die needs a sweep folder (out=...) for its marker")
        marker = ck / "died"
        if die == "always" or not marker.exists():
            marker.write_text("1")
            os._exit(17)
    state = (_load(ck / "sums.json") if ck is not None else None) or {"done": 0, "s1": 0.0,
                                                                       "s2": 0.0}
    from richlazy.simulate import atomic_write

    for c in range(state["done"], chunks):
        x = mu + sigma * ctx.rng(c).standard_normal(n)
        state = {"done": c + 1, "s1": state["s1"] + float(x.sum()),
                 "s2": state["s2"] + float((x * x).sum())}
        if sleep:
            time.sleep(sleep)
        if ck is not None:
            atomic_write(ck / "sums.json", lambda fh, s=state: fh.write(json.dumps(s).encode()))
            with open(ck / "chunks.log", "a") as fh:
                fh.write(f"{c}\n")
    N = n * chunks
    mean = state["s1"] / N
    var = max(state["s2"] / N - mean * mean, 0.0) * N / (N - 1)
    se = math.sqrt(var / N)
    return {"mean": mean, "mean_se": se, "z": (mean - mu) / se}
