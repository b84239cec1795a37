"""Metropolis-adjusted Langevin algorithm (MALA; Roberts & Tweedie 1996, Bernoulli 2, 341) with a
diagonal preconditioner, as a pure ``init`` / ``step`` pair over E independent chains (rows).

Target ``p(theta) ∝ exp(-Phi(theta))``. With per-chain step size ``eps`` and preconditioner
``M = diag(precond)`` the proposal is the Euler-Maruyama step of preconditioned Langevin dynamics,

    theta' = theta - eps M grad Phi(theta) + sqrt(2 eps M) xi,     xi ~ N(0, I),

i.e. ``q(theta' | theta) = N(theta'; theta - eps M grad Phi(theta), 2 eps M)``, and it is
accepted with the exact Metropolis-Hastings probability

    a = min(1, exp(Phi(theta) - Phi(theta') + log q(theta | theta') - log q(theta' | theta))),
    log q(theta' | theta) = -|xi|^2 / 2 + c,
    log q(theta | theta') = -sum_i (theta_i - theta'_i + eps M_i d_i Phi(theta'))^2 / (4 eps M_i) + c,

so the chain leaves ``exp(-Phi)`` exactly invariant, unlike the unadjusted step
(:func:`langevin_step`), whose stationary law has an O(eps) bias. Without the accept/reject the
step is the (preconditioned) unadjusted Langevin algorithm. The optimal acceptance in high
dimension is about 0.574 (Roberts & Rosenthal 1998), the default adaptation target.

``mask`` (D,) bool: only the selected coordinates move (the others are copied bit for bit), and
the proposal density runs over the selected block only; the step then leaves the conditional of
that block given the others invariant (a Metropolis-within-Gibbs block update).
"""

from __future__ import annotations

from dataclasses import replace

import torch

from ._mh import (
    MCMCState,
    evaluate,
    masked_sum,
    mcmc_init,
    metropolis,
    prepare,
)

__all__ = ["mala_init", "mala_step"]


def mala_init(theta: torch.Tensor, potential, *, step_size, precond=None, beta=None) -> MCMCState:
    """Initial MALA state of E chains (rows of ``theta`` (E, D)); evaluates the potential once.

    step_size : ``eps`` > 0, one number or an (E,) tensor (per chain).
    precond : (D,) positive diagonal preconditioner ``M`` (variances; default ones); for a network
        posterior ``1 / posterior.precision`` (the prior variance of each coordinate).
    beta : likelihood weight of ``Phi = beta * loss + prior`` (None: the potential's own; a number
        > 0; or an (E,) tensor, one per chain). See :func:`mcmc_init`.
    """
    return mcmc_init(theta, potential, step_size=step_size, precond=precond, beta=beta)


def _langevin_proposal(state: MCMCState, generator, mask):
    """``(theta', xi)``: the preconditioned Euler-Maruyama move from ``state.theta``."""
    th = state.theta
    eps = state.step_size.unsqueeze(1)
    xi = torch.randn(th.shape, generator=generator, dtype=th.dtype, device=th.device)
    prop = th - eps * state.precond * state.grad + torch.sqrt(2.0 * eps * state.precond) * xi
    if mask is not None:
        prop = torch.where(mask, prop, th)
    return prop, xi


def mala_step(state: MCMCState, potential, *, generator: torch.Generator, adapt: bool = False,
              target_accept: float = 0.574, beta=None, mask=None, adapt_groups=None):
    """One MALA transition of every chain; returns ``(new_state, info)`` and modifies neither
    ``state`` nor ``potential``. Costs one ``potential.grad`` and one ``potential.energy``.

    generator : torch.Generator on theta's device (draws E*D normals and E uniforms).
    adapt : update each chain's step size by dual averaging toward ``target_accept`` (warm-up
        only; the first step with ``adapt=False`` fixes the averaged step sizes, see
        :mod:`~richlazy.simulate.samplers._mh`).
    target_accept : in (0, 1).
    adapt_groups : None (every chain adapts its own step size) or an (E,) int tensor of group
        labels: chains of one group adapt on their mean acceptance (one shared step size when
        they start from one).
    beta : likelihood weight for this step (None: ``state.beta``); a different value than the
        state's refreshes the caches first (one extra evaluation).
    mask : None or (D,) bool tensor; only the selected coordinates move (block update).

    info : ``{"loss": (E,) at the new positions, "accept_prob": (E,), "accepted": (E,) bool,
    "adapting": adapt}``.
    """
    state, mask, target_accept, groups = prepare(
        state, potential, generator=generator, adapt=adapt, target_accept=target_accept, beta=beta,
        mask=mask, adapt_groups=adapt_groups)
    prop, xi = _langevin_proposal(state, generator, mask)
    e1, g1, l1 = evaluate(potential, prop, state.beta)
    eps_m = state.step_size.unsqueeze(1) * state.precond
    rev = state.theta - prop + eps_m * g1
    log_fwd = -0.5 * masked_sum(xi * xi, mask)
    log_rev = -masked_sum(rev * rev / (4.0 * eps_m), mask)
    log_ratio = state.energy - e1 + log_rev - log_fwd
    return metropolis(state, (prop, e1, g1, l1), log_ratio, generator, adapt=adapt,
                      target_accept=target_accept, adapt_groups=groups)


def ula_move(state: MCMCState, potential, *, generator: torch.Generator, mask=None):
    """The MALA proposal accepted unconditionally: one step of the preconditioned unadjusted
    Langevin algorithm on an :class:`MCMCState` (for replica exchange with ULA; the stationary
    law has the O(eps) bias of :func:`langevin_step`). info: ``{"loss": (E,)}``."""
    state, mask, _, _ = prepare(state, potential, generator=generator, adapt=False,
                             target_accept=0.5, beta=None, mask=mask)
    prop, _ = _langevin_proposal(state, generator, mask)
    e1, g1, l1 = evaluate(potential, prop, state.beta)
    out = replace(state, theta=prop, step=state.step + 1, energy=e1, grad=g1, loss=l1)
    return out, {"loss": l1}

