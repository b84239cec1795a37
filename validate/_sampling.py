"""Glue between cases and the simulator: run a network-posterior Langevin ensemble with
checkpoints, and turn recorded observables into estimates."""

from __future__ import annotations

import pathlib
from collections.abc import Callable

import numpy as np
import torch
from richlazy.simulate import (
    NetworkPosterior,
    NetworkSpec,
    langevin_init,
    langevin_step,
    make_generator,
    paper_step_size,
    resolve_device,
    run_chain,
)

from .stats import estimate

__all__ = ["sample_posterior", "estimates_from_run"]


def sample_posterior(
    spec: NetworkSpec,
    X,
    Y,
    *,
    T: float,
    sigma_a2: float,
    dt: float,
    n_chains: int,
    n_steps: int,
    burn_in: int,
    thin: int,
    observe: Callable[[NetworkPosterior, torch.Tensor, torch.Generator], dict],
    seed: int,
    device="auto",
    dtype=torch.float64,
    checkpoint_path: pathlib.Path | None = None,
    checkpoint_every: int = 2000,
    progress: bool = True,
    desc: str = "langevin",
    project_inputs: bool = True,
):
    """Sample the posterior of ``spec`` on (X, Y) with ``n_chains`` independent Langevin chains.

    Paper-time step ``dt`` at rescaled temperature ``T`` (ULA step ``T * dt``); chains start from
    the prior drawn with ``seed``. ``observe(posterior, theta, generator)`` returns a dict of
    tensors per recorded step; ``generator`` is seeded from (seed, step), so observables that
    need fresh randomness (inputs outside span(X) with ``project_inputs``) stay reproducible
    across checkpoint/resume. Returns ``(posterior, ChainRun)``.
    """
    dev = resolve_device(device)
    post = NetworkPosterior(spec, X, Y, T=T, sigma_a2=sigma_a2, device=dev, dtype=dtype,
                            project_inputs=project_inputs)
    gen = make_generator(seed, dev)
    state = langevin_init(post.sample_prior(n_chains, generator=gen))
    eps = paper_step_size(dt, T)

    def step_fn(s, g):
        return langevin_step(s, post, step_size=eps, generator=g)

    config = dict(spec=spec.__dict__, T=T, sigma_a2=sigma_a2, dt=dt, n_chains=n_chains,
                  n_steps=n_steps, burn_in=burn_in, thin=thin, seed=seed, dtype=str(dtype),
                  project_inputs=project_inputs,
                  data=float(np.asarray(X).sum() + np.asarray(Y).sum()))

    def obs(s):
        g = make_generator((seed * 1_000_003 + int(s.step)) % (2**62), dev)
        return observe(post, s.theta, g)

    run = run_chain(
        state, step_fn, n_steps=n_steps, generator=gen, burn_in=burn_in, thin=thin,
        observe=obs, checkpoint_path=checkpoint_path,
        checkpoint_every=checkpoint_every, config=config, progress=progress, desc=desc,
        divergence_hint=f"reduce dt (got {dt}) or T (got {T}), or use float64",
    )
    return post, run


def estimates_from_run(run, *, n_batches: int = 8) -> dict:
    """Batch-means estimates (mean, stderr, ess) of every recorded observable (S, E, ...)."""
    return {k: estimate(v.double().numpy(), n_batches=n_batches) for k, v in run.samples.items()}
