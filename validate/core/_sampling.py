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

from ..stats import estimate

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
    anneal_from: float | None = None,
    anneal_steps: int = 0,
    init: Callable[[NetworkPosterior, torch.Tensor], torch.Tensor] | None = None,
    init_label: str | None = None,
    throw: bool = True,
):
    """Sample the posterior of ``spec`` on (X, Y) with ``n_chains`` independent Langevin chains.

    Paper-time step ``dt`` at rescaled temperature ``T`` (ULA step ``T * dt``); chains start from
    the prior drawn with ``seed``. ``observe(posterior, theta, generator)`` returns a dict of
    tensors per recorded step; ``generator`` is seeded from (seed, step), so observables that
    need fresh randomness (inputs outside span(X) with ``project_inputs``) stay reproducible
    across checkpoint/resume. Returns ``(posterior, ChainRun)``.

    ``init(posterior, theta_prior) -> theta0``: optional map from the prior draw to the initial
    positions (e.g. seeded outlier neurons); ``init_label`` names it in the checkpoint config.

    ``throw``: raise :class:`richlazy.simulate.SamplerDivergedError` when a chain diverges
    (default); with False the run goes on and ``run.diverged`` flags the diverged chains.

    ``anneal_from``/``anneal_steps``: optional simulated annealing inside the burn-in. The
    rescaled temperature falls geometrically from ``anneal_from`` to ``T`` over the first
    ``anneal_steps`` steps (likelihood weight N/T_s and ULA step T_s * dt at step s) and stays at
    ``T`` afterwards, so every recorded sample is taken at ``T``. It lets neurons pick their codes
    while the barriers between codes are still low (seed 000: feature-layer codes freeze at low
    T, Fig. 5), instead of staying in the metastable codes they fall into from a prior draw.
    The step is pure: the likelihood weight of step s is passed to
    :func:`richlazy.simulate.langevin_step` as ``beta``; ``posterior.beta`` always stays N/T.
    """
    if anneal_from is not None:
        if not (np.isfinite(anneal_from) and anneal_from > T):
            raise ValueError(f"anneal_from must be a finite temperature above T = {T}, got {anneal_from}")
        if isinstance(anneal_steps, bool) or not isinstance(anneal_steps, int) or not (
                0 < anneal_steps <= burn_in):
            raise ValueError(f"anneal_steps must be an int in [1, burn_in = {burn_in}] when anneal_from "
                             f"is given, got {anneal_steps!r}")
    dev = resolve_device(device)
    post = NetworkPosterior(spec, X, Y, T=T, sigma_a2=sigma_a2, device=dev, dtype=dtype,
                            project_inputs=project_inputs)
    gen = make_generator(seed, dev)
    theta0 = post.sample_prior(n_chains, generator=gen)
    state = langevin_init(theta0 if init is None else init(post, theta0))
    eps = paper_step_size(dt, T)
    beta_T = post.beta

    def step_fn(s, g):
        # pure: the temperature of step s is an argument of the step, the posterior is not mutated
        if anneal_from is None or s.step >= anneal_steps:
            return langevin_step(s, post, step_size=eps, generator=g)
        T_s = anneal_from * (T / anneal_from) ** (s.step / anneal_steps)
        return langevin_step(s, post, step_size=paper_step_size(dt, T_s), generator=g,
                             beta=beta_T * T / T_s)

    config = dict(spec=spec.__dict__, T=T, sigma_a2=sigma_a2, dt=dt, n_chains=n_chains,
                  n_steps=n_steps, burn_in=burn_in, thin=thin, seed=seed, dtype=str(dtype),
                  project_inputs=project_inputs,
                  **({} if anneal_from is None else dict(anneal_from=anneal_from, anneal_steps=anneal_steps)),
                  **({} if init is None else dict(init=init_label or getattr(init, "__name__", "custom"))),
                  data=float(np.asarray(X).sum() + np.asarray(Y).sum()))

    def obs(s):
        g = make_generator((seed * 1_000_003 + int(s.step)) % (2**62), dev)
        return observe(post, s.theta, g)

    run = run_chain(
        state, step_fn, n_steps=n_steps, generator=gen, burn_in=burn_in, thin=thin,
        observe=obs, checkpoint_path=checkpoint_path,
        checkpoint_every=checkpoint_every, config=config, progress=progress, desc=desc,
        divergence_hint=f"reduce dt (got {dt}) or T (got {T}), or use float64", throw=throw,
    )
    return post, run


def estimates_from_run(run, *, n_batches: int = 8) -> dict:
    """Batch-means estimates (mean, stderr, ess) of every recorded observable (S, E, ...)."""
    return {k: estimate(v.double().numpy(), n_batches=n_batches) for k, v in run.samples.items()}
