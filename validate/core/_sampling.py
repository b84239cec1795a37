"""Glue between cases and the simulator: run a network-posterior Langevin ensemble with
checkpoints, and turn recorded observables into estimates with their convergence diagnostics.

Mixing of a compared quantity (``compare(..., mixing=...)``) is diagnosed on the per-chain series
(S draws, E chains) whose mean the quantity is: :meth:`RunEstimate.mixing` for one element of a
recorded observable; :func:`linearised_series` for a smooth nonlinear function of observable means
(the delta-method series, whose mean fluctuates like the estimate itself);
:func:`ratio_series` for a ratio of sums (e.g. a mean over the neurons in a code)."""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import torch
from richlazy.simulate import (
    HOMOGENEOUS_ACTIVATIONS,
    LangevinWorkspace,
    NetworkPosterior,
    NetworkSpec,
    gibbs_linear_step,
    gibbs_readout_step,
    hmc_init,
    hmc_step,
    langevin_init,
    langevin_step,
    make_generator,
    mcmc_refresh,
    paper_step_size,
    resolve_device,
    run_chain,
    sample_neuron_codes,
    sample_neuron_scales,
)

from ..stats import Estimate, Mixing, chain_diagnostics, estimate

__all__ = ["SAMPLERS", "sample_posterior", "estimates_from_run", "RunEstimate",
           "linearised_series", "ratio_series"]

SAMPLERS = ("ula", "gibbs-hmc", "gibbs-exact")


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
    sampler: str = "ula",
    n_leapfrog: int = 10,
    adapt_steps: int | None = None,
    scale_moves: bool | None = None,
    code_moves: bool = False,
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

    ``sampler``: "ula" (default: the paper's Langevin dynamics, ULA step ``T * dt``) or
    "gibbs-hmc": blocked Gibbs with the exact Gaussian readout draw
    (:func:`richlazy.simulate.gibbs_readout_step`) and an HMC move of the hidden block
    (``n_leapfrog`` leapfrog steps, diagonal mass = prior precision, step size started at
    ``T * dt`` and adapted by dual averaging to acceptance 0.8 over the first ``adapt_steps``
    steps, default half the burn-in). Exact (no step-size bias); no annealing.
    "gibbs-exact" (linear networks only): every block drawn from its exact Gaussian conditional
    (:func:`richlazy.simulate.gibbs_linear_step`): no step size at all.

    ``scale_moves``: with "gibbs-hmc" or "gibbs-exact", also move every neuron along the
    rescaling symmetry of a positively homogeneous activation (linear, ReLU;
    :func:`richlazy.simulate.sample_neuron_scales`), the direction blockwise moves are slowest
    along. None (default): on exactly when the activation is homogeneous.

    ``code_moves``: with "gibbs-hmc", also one sweep of exact single-neuron code moves per
    transition (:func:`richlazy.simulate.sample_neuron_codes`: each neuron's incoming weights
    proposed from a mixture over codes with the other readouts integrated out), for L = 1
    networks on orthogonal training inputs with ``project_inputs=True`` (the orthogonal toy task),
    where codes otherwise freeze at low T. Default False.

    ``anneal_from``/``anneal_steps``: optional simulated annealing inside the burn-in. The
    rescaled temperature falls geometrically from ``anneal_from`` to ``T`` over the first
    ``anneal_steps`` steps (likelihood weight N/T_s and ULA step T_s * dt at step s) and stays at
    ``T`` afterwards, so every recorded sample is taken at ``T``. It lets neurons pick their codes
    while the barriers between codes are still low (seed 000: feature-layer codes freeze at low
    T, Fig. 5), instead of staying in the metastable codes they fall into from a prior draw.
    The step is pure: the likelihood weight of step s is passed to
    :func:`richlazy.simulate.langevin_step` as ``beta``; ``posterior.beta`` always stays N/T.
    """
    scale_moves, adapt_steps = _check_sampler(
        spec, T=T, burn_in=burn_in, sampler=sampler, anneal_from=anneal_from,
        anneal_steps=anneal_steps, scale_moves=scale_moves, code_moves=code_moves,
        adapt_steps=adapt_steps)
    dev = resolve_device(device)
    post = NetworkPosterior(spec, X, Y, T=T, sigma_a2=sigma_a2, device=dev, dtype=dtype,
                            project_inputs=project_inputs)
    if code_moves and not post.orthogonal_inputs:
        raise ValueError("code_moves needs orthogonal training inputs (X's columns) and "
                         "project_inputs=True; set code_moves=False for these inputs")
    gen = make_generator(seed, dev)
    theta0 = post.sample_prior(n_chains, generator=gen)
    theta0 = theta0 if init is None else init(post, theta0)
    state, step_fn = _sampler_step(post, theta0, sampler=sampler, T=T, dt=dt, anneal_from=anneal_from,
                                   anneal_steps=anneal_steps, n_leapfrog=n_leapfrog,
                                   adapt_steps=adapt_steps, scale_moves=scale_moves,
                                   code_moves=code_moves)
    config = dict(spec=spec.__dict__, T=T, sigma_a2=sigma_a2, dt=dt, n_chains=n_chains,
                  n_steps=n_steps, burn_in=burn_in, thin=thin, seed=seed, dtype=str(dtype),
                  project_inputs=project_inputs,
                  **({} if sampler == "ula" else dict(sampler=sampler, n_leapfrog=n_leapfrog,
                                                      adapt_steps=adapt_steps)),
                  **(dict(scale_moves=True) if scale_moves else {}),
                  **(dict(code_moves=True) if code_moves else {}),
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


def _check_sampler(spec, *, T, burn_in, sampler, anneal_from, anneal_steps, scale_moves, code_moves,
                   adapt_steps):
    """Check the sampler options of :func:`sample_posterior`: ``(scale_moves, adapt_steps)``."""
    if anneal_from is not None:
        if not (np.isfinite(anneal_from) and anneal_from > T):
            raise ValueError(f"anneal_from must be a finite temperature above T = {T}, got {anneal_from}")
        if isinstance(anneal_steps, bool) or not isinstance(anneal_steps, int) or not (
                0 < anneal_steps <= burn_in):
            raise ValueError(f"anneal_steps must be an int in [1, burn_in = {burn_in}] when anneal_from "
                             f"is given, got {anneal_steps!r}")
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    if sampler != "ula" and anneal_from is not None:
        raise ValueError(f"anneal_from needs sampler='ula' (the {sampler!r} sampler has no "
                         f"annealing schedule), got anneal_from={anneal_from!r}")
    if scale_moves is None:
        scale_moves = sampler != "ula" and spec.activation in HOMOGENEOUS_ACTIVATIONS
    if not isinstance(scale_moves, bool):
        raise TypeError(f"scale_moves must be a bool or None, got {scale_moves!r}")
    if scale_moves and (sampler == "ula" or spec.activation not in HOMOGENEOUS_ACTIVATIONS):
        raise ValueError(f"scale_moves needs sampler 'gibbs-hmc' or 'gibbs-exact' and an activation in "
                         f"{HOMOGENEOUS_ACTIVATIONS}, got sampler={sampler!r}, activation="
                         f"{spec.activation!r}")
    if not isinstance(code_moves, bool):
        raise TypeError(f"code_moves must be a bool, got {code_moves!r}")
    if code_moves and (sampler != "gibbs-hmc" or spec.L != 1):
        raise ValueError(f"code_moves needs sampler 'gibbs-hmc' and one hidden layer, got sampler="
                         f"{sampler!r}, L = {spec.L}")
    if sampler == "gibbs-exact" and spec.activation != "linear":
        raise ValueError(f"sampler 'gibbs-exact' needs a linear network (exact conditionals of the "
                         f"hidden layers), got activation {spec.activation!r}; use 'gibbs-hmc'")
    if adapt_steps is None:
        adapt_steps = burn_in // 2
    if isinstance(adapt_steps, bool) or not isinstance(adapt_steps, int) or not (
            0 <= adapt_steps <= burn_in):
        raise ValueError(f"adapt_steps must be an int in [0, burn_in = {burn_in}], got {adapt_steps!r}")
    return scale_moves, adapt_steps


def _sampler_step(post, theta0, *, sampler, T, dt, anneal_from, anneal_steps, n_leapfrog, adapt_steps,
                  scale_moves, code_moves):
    """The initial state at ``theta0`` and the step ``(state, generator) -> (state, info)``."""
    if sampler == "ula":
        return langevin_init(theta0), _ula_step(post, T=T, dt=dt, anneal_from=anneal_from,
                                                anneal_steps=anneal_steps)
    if sampler == "gibbs-exact":
        return langevin_init(theta0), gibbs_linear_step(post, scale_moves=scale_moves)
    state = hmc_init(theta0, post, step_size=paper_step_size(dt, T), precond=1.0 / post.precision)
    return state, _gibbs_hmc_step(post, n_leapfrog=n_leapfrog, adapt_steps=adapt_steps,
                                  scale_moves=scale_moves, code_moves=code_moves)


def _ula_step(post, *, T, dt, anneal_from, anneal_steps):
    """The ULA step (step size ``T * dt``), annealed from ``anneal_from`` when that is given."""
    eps = paper_step_size(dt, T)
    beta_T = post.beta
    ws = LangevinWorkspace()  # ULA steps reuse its buffers (run_chain copies what it keeps)

    def step_fn(s, g):
        # pure: the temperature of step s is an argument of the step, the posterior is not mutated
        if anneal_from is None or s.step >= anneal_steps:
            return langevin_step(s, post, step_size=eps, generator=g, workspace=ws)
        T_s = anneal_from * (T / anneal_from) ** (s.step / anneal_steps)
        return langevin_step(s, post, step_size=paper_step_size(dt, T_s), generator=g,
                             beta=beta_T * T / T_s, workspace=ws)

    return step_fn


def _gibbs_hmc_step(post, *, n_leapfrog, adapt_steps, scale_moves, code_moves):
    """Blocked Gibbs: HMC of the hidden block, scale and code moves, readout draw, refresh."""
    hidden = ~post.block_mask("A")

    def hidden_step(s, g):
        s, info = hmc_step(s, post, generator=g, n_leapfrog=n_leapfrog, mask=hidden,
                           adapt=s.step < adapt_steps)
        if scale_moves:  # the readout draw and refresh below follow, so no cache goes stale
            theta, info["scale_acceptance"] = sample_neuron_scales(post, s.theta, generator=g)
            s = replace(s, theta=theta)
        if code_moves:  # likewise followed by the readout draw and the refresh
            theta, info["code_acceptance"] = sample_neuron_codes(post, s.theta, generator=g)
            s = replace(s, theta=theta)
        return s, info

    return gibbs_readout_step(post, hidden_step, refresh=lambda s: mcmc_refresh(s, post))


@dataclass(frozen=True)
class RunEstimate(Estimate):
    """An :class:`richlazy.validate.stats.Estimate` that keeps its recorded samples (S, E, ...)
    for the convergence diagnostics of single elements (:meth:`mixing`)."""

    samples: object = field(default=None, repr=False, compare=False)

    def series(self, *idx) -> np.ndarray:
        """The per-chain series (S, E) of element ``idx`` of the trailing shape (float64)."""
        if self.samples is None:
            raise ValueError("this estimate kept no samples")
        v = self.samples[(slice(None), slice(None)) + tuple(int(i) for i in idx)]
        if isinstance(v, torch.Tensor):
            v = v.detach().double().cpu().numpy()
        v = np.asarray(v, dtype=float)
        if v.ndim != 2:
            raise ValueError(f"idx must pick one element of the trailing shape "
                             f"{tuple(self.samples.shape[2:])}, got {idx!r}")
        return v

    def mixing(self, *idx) -> Mixing:
        """R-hat and bulk/tail ESS (:func:`richlazy.validate.stats.chain_diagnostics`) of the
        series of element ``idx``."""
        return chain_diagnostics(self.series(*idx), layout="draw_chain")


def estimates_from_run(run, *, n_batches: int = 8) -> dict:
    """Batch-means estimates (mean, stderr, ess) of every recorded observable (S, E, ...), as
    :class:`RunEstimate` records whose ``mixing(*idx)`` diagnoses one element's chains."""
    out = {}
    for k, v in run.samples.items():
        e = estimate(v.double().numpy(), n_batches=n_batches)
        out[k] = RunEstimate(e.mean, e.stderr, e.ess, samples=v)
    return out


def linearised_series(samples, grad) -> np.ndarray:
    """Delta-method series of a smooth function g of the means of ``samples`` (S, E, ...):
    ``sum_k grad_k x_k(s, e)`` with ``grad`` (the trailing shape) the gradient of g at the
    means. Its chain means fluctuate like g of the chain means (to first order), so its R-hat
    and ESS are those of the estimate of g. Returns (S, E)."""
    x = samples.detach().double().cpu().numpy() if isinstance(samples, torch.Tensor) else \
        np.asarray(samples, dtype=float)
    g = np.asarray(grad, dtype=float)
    if x.ndim < 2 or x.shape[2:] != g.shape:
        raise ValueError(f"grad must have the trailing shape {x.shape[2:]} of samples, got {g.shape}")
    return np.tensordot(x, g, axes=g.ndim) if g.ndim else x * g


def ratio_series(num, den) -> np.ndarray:
    """Delta-method series of the ratio estimate ``R = sum num / sum den`` of two per-chain series
    (S, E): ``num - R den`` (e.g. a mean over the neurons currently in a code: num the sum over
    them, den their number). Zero where ``den`` is zero throughout."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    if num.shape != den.shape or num.ndim != 2:
        raise ValueError(f"num and den must be series of the same shape (S, E), got {num.shape} "
                         f"and {den.shape}")
    total = den.sum()
    ratio = num.sum() / total if total else 0.0
    return num - ratio * den
