"""Glue between cases and population annealing: anneal a network posterior from its prior with
the blocked-Gibbs kernel, and turn a population average into a frozen quantity's estimate with
its equilibration verdict.

Frozen quantities (``compare(..., ergodicity="frozen")``) depend on which metastable state a
network sits in, so chains cannot estimate them; a population annealed from the prior weighs the
states (:func:`richlazy.simulate.population_annealing`). Its diagnostics are fixed before the run
(:func:`richlazy.simulate.annealing_diagnostics`: weight ESS at every stage, effective ancestral
families, agreement between independent populations, spread of their log evidences) and become
the quantity's :class:`~richlazy.validate.core._compare.Equilibration`.
"""

from __future__ import annotations

import pathlib
from dataclasses import replace

import torch
from richlazy.simulate import (
    NetworkPosterior,
    NetworkSpec,
    annealed_mean,
    annealing_diagnostics,
    hmc_step,
    make_generator,
    mcmc_refresh,
    population_annealing,
    resolve_device,
    sample_readout,
)

from ._compare import Equilibration

__all__ = ["anneal_posterior", "frozen_estimate"]


def _gibbs_kernel(post: NetworkPosterior, n_leapfrog: int):
    """The transition of every row at its own weight ``state.beta``: an HMC move of the hidden
    block (mass = prior precision), then the exact Gaussian readout draw at the same weight, then
    the cached energy and gradient recomputed. Each part leaves the row's tempered law invariant."""
    hidden = ~post.block_mask("A")

    def kernel(state, generator):
        state, info = hmc_step(state, post, generator=generator, n_leapfrog=n_leapfrog, mask=hidden)
        theta = sample_readout(post, state.theta, generator=generator, beta=state.beta)
        return mcmc_refresh(replace(state, theta=theta), post), info

    return kernel


def anneal_posterior(spec: NetworkSpec, X, Y, *, T: float, sigma_a2: float, n_populations: int,
                     population_size: int, seed: int, ess_min: float = 0.5, n_moves: int = 5,
                     n_leapfrog: int = 10, step_size: float = 0.05, max_stages: int = 2000,
                     device="auto", dtype=torch.float64, checkpoint_path: pathlib.Path | None = None,
                     progress: bool = True, desc: str = "annealing"):
    """Population annealing of the posterior of ``spec`` on (X, Y) at rescaled temperature ``T``
    from its prior (likelihood weight 0 -> ``posterior.beta`` = N/T or 1/T): ``n_populations``
    independent populations of ``population_size`` networks drawn from the prior with ``seed``,
    moved by the blocked-Gibbs kernel (hidden HMC with ``n_leapfrog`` steps + exact readout draw)
    ``n_moves`` times per stage; stages keep the weight ESS at ``ess_min`` of a population.
    Checkpointed after every stage at ``checkpoint_path`` (resumes). Returns
    ``(posterior, AnnealingRun)``."""
    dev = resolve_device(device)
    post = NetworkPosterior(spec, X, Y, T=T, sigma_a2=sigma_a2, device=dev, dtype=dtype,
                            project_inputs=True)
    gen = make_generator(seed, dev)
    theta0 = post.sample_prior(n_populations * population_size, generator=gen)
    run = population_annealing(
        theta0, post, generator=gen, beta_target=post.beta, n_populations=n_populations,
        ess_min=ess_min, n_moves=n_moves, step_size=step_size, precond=1.0 / post.precision,
        kernel=_gibbs_kernel(post, n_leapfrog), kernel_label=f"gibbs-hmc({n_leapfrog})",
        max_stages=max_stages, checkpoint_path=checkpoint_path, progress=progress, desc=desc)
    return post, run


def frozen_estimate(run, values):
    """``(mean, se, equilibration)`` of ``E_target[f]`` from ``values`` (E, ...) = f at the final
    members of ``run``: the mean over populations and its standard error from their spread
    (:func:`richlazy.simulate.annealed_mean`, float64 numpy arrays of shape ``...``), and an
    :class:`Equilibration` from :func:`richlazy.simulate.annealing_diagnostics` with its default
    thresholds, naming every failed diagnostic and the measured numbers."""
    est = annealed_mean(run, values)
    diag = annealing_diagnostics(run, values)
    z = "n/a" if diag.max_z is None else f"{diag.max_z:.3g}"
    spread = "n/a" if diag.logz_spread is None else f"{diag.logz_spread:.3g}"
    numbers = (f"{run.n_populations} populations x {run.families.numel() // run.n_populations} "
               f"networks, {run.n_stages} stages: min weight ESS {diag.min_ess_fraction:.3g} R, "
               f"effective families {diag.min_family_count:.3g}, max pairwise z {z}, log-evidence "
               f"spread {spread} nats")
    text = (f"population annealing: {numbers}" if diag.equilibrated else
            f"population annealing failed {', '.join(diag.failed)}: {diag.message} ({numbers})")
    return est.mean.numpy(), est.se.numpy(), Equilibration(bool(diag.equilibrated), text)
