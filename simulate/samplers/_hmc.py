"""Hamiltonian Monte Carlo (HMC; Duane et al. 1987, as reviewed by Neal 2011, "MCMC using
Hamiltonian dynamics", Handbook of MCMC ch. 5) with a diagonal mass matrix, as a pure ``init`` /
``step`` pair over E independent chains (rows).

With inverse mass ``M = diag(precond)`` (the same preconditioner as MALA) and momenta
``p ~ N(0, M^-1)``, the Hamiltonian is ``H(theta, p) = Phi(theta) + p^T M p / 2``. One transition
draws fresh momenta, runs ``n_leapfrog`` leapfrog steps of size ``eps`` (per chain),

    p <- p - (eps/2) grad Phi(theta);   theta <- theta + eps M p;   p <- p - (eps/2) grad Phi(theta),

(consecutive half kicks merged), and accepts the end point with probability
``min(1, exp(H(theta, p) - H(theta', p')))`` per chain. Leapfrog is volume preserving and
reversible, so the chain leaves ``exp(-Phi)`` exactly invariant. One leapfrog step of HMC is MALA
with ``eps_MALA = eps^2 / 2``. The default adaptation target is 0.8.

``mask`` (D,) bool: momenta of unselected coordinates are zero and those coordinates are copied
bit for bit; the kinetic energy runs over the selected block, so the step leaves the conditional
of the block given the others invariant.

Cost per transition: ``n_leapfrog`` gradient evaluations and one energy evaluation. When the
moving coordinates form one contiguous block (no mask, or the hidden weights of a network
posterior beside an exact readout draw) the trajectory updates a copy of theta in place through a
view of that block and writes the gradients into two buffers, so a leapfrog step costs a gradient
and two fused elementwise passes over the block.
"""

from __future__ import annotations

import torch

from ..checks import check_count
from ._mh import (
    MCMCState,
    energy_given_loss,
    evaluate_grad,
    masked_sum,
    mcmc_init,
    metropolis,
    prepare,
    standard_normals,
)

__all__ = ["hmc_init", "hmc_step"]


def hmc_init(theta: torch.Tensor, potential, *, step_size, precond=None, beta=None) -> MCMCState:
    """Initial HMC state of E chains (rows of ``theta`` (E, D)); evaluates the potential once.

    step_size : leapfrog step ``eps`` > 0, one number or an (E,) tensor (per chain).
    precond : (D,) positive inverse mass ``M`` (default ones); for a network posterior
        ``1 / posterior.precision`` (prior variances: a unit-scale problem in prior units).
    beta : likelihood weight (None: the potential's own; a number > 0; or an (E,) tensor).
    """
    return mcmc_init(theta, potential, step_size=step_size, precond=precond, beta=beta)


MAX_LEAPFROG = 10_000  # leapfrog steps per HMC transition (each costs one gradient evaluation)


def hmc_step(state: MCMCState, potential, *, generator: torch.Generator, n_leapfrog: int,
             adapt: bool = False, target_accept: float = 0.8, beta=None, mask=None,
             adapt_groups=None):
    """One HMC transition of every chain; returns ``(new_state, info)`` and modifies neither
    ``state`` nor ``potential``.

    generator : torch.Generator on theta's device: the momenta are normals of the moving block
        (on the CPU from the Philox kernel keyed by four words of ``generator``, elsewhere
        ``torch.randn``; :func:`standard_normals`), then E uniforms for the accept step.
    n_leapfrog : leapfrog steps per transition (int, 1 <= n_leapfrog <= ``MAX_LEAPFROG`` =
        10_000); the trajectory length is ``n_leapfrog * step_size``.
    adapt, target_accept, beta, mask, adapt_groups : as in :func:`mala_step` (dual averaging of
        the leapfrog step size; per-step likelihood weight; block update; pooled adaptation).

    info : ``{"loss": (E,) at the new positions, "accept_prob": (E,), "accepted": (E,) bool,
    "adapting": adapt}``.
    """
    n_leapfrog = check_count("n_leapfrog", n_leapfrog, minimum=1, maximum=MAX_LEAPFROG)
    state, mask, target_accept, groups = prepare(
        state, potential, generator=generator, adapt=adapt, target_accept=target_accept, beta=beta,
        mask=mask, adapt_groups=adapt_groups)
    block = _contiguous_block(mask, state.theta.shape[1])
    if block is None:
        trajectory = _leapfrog_masked(state, potential, generator, n_leapfrog, mask)
    else:
        trajectory = _leapfrog_block(state, potential, generator, n_leapfrog, *block)
    q, e1, g, loss, k0, k1 = trajectory
    log_ratio = (state.energy + k0) - (e1 + k1)
    return metropolis(state, (q, e1, g, loss), log_ratio, generator, adapt=adapt,
                      target_accept=target_accept, adapt_groups=groups)


def _contiguous_block(mask, D: int):
    """``(a, b)`` when ``mask`` (checked, or None for all D coordinates) selects exactly the
    columns a:b, else None."""
    if mask is None:
        return 0, D
    idx = torch.nonzero(mask).flatten()
    a, b = int(idx[0]), int(idx[-1]) + 1
    return (a, b) if b - a == idx.numel() else None


def _leapfrog_block(state, potential, generator, n_leapfrog, a, b):
    """The trajectory when the moving coordinates are the columns a:b (no mask, or a mask that
    selects one contiguous block, e.g. the hidden weights beside an exact readout draw): momenta
    of the block only, in-place updates of a copy of theta through a view, gradients written into
    two buffers used in turn (``potential.grad(..., out=)`` when the potential offers it).
    Returns ``(q, Phi(q), grad, loss, K0, K1)``."""
    th0 = state.theta
    M = state.precond[a:b]
    eps = state.step_size.unsqueeze(1)
    p = standard_normals((th0.shape[0], b - a), th0.dtype, th0.device, generator)
    p.mul_(M.rsqrt())
    k0 = 0.5 * (p * p * M).sum(1)
    q = th0.clone()
    qb = q[:, a:b]
    eps_m = eps * M
    p.addcmul_(eps, state.grad[:, a:b], value=-0.5)
    if getattr(potential, "grad_accepts_out", False):
        bufs = (torch.empty_like(th0), torch.empty_like(th0))
    else:
        bufs = (None, None)
    for i in range(n_leapfrog):
        qb.addcmul_(eps_m, p)
        g, loss = evaluate_grad(potential, q, state.beta, out=bufs[i % 2])
        p.addcmul_(eps, g[:, a:b], value=-1.0 if i < n_leapfrog - 1 else -0.5)
    e1 = energy_given_loss(potential, q, loss, state.beta)
    k1 = 0.5 * (p * p * M).sum(1)
    return q, e1, g, loss, k0, k1


def _leapfrog_masked(state, potential, generator, n_leapfrog, mask):
    """The trajectory for a general mask (coordinates outside it copied bit for bit)."""
    th0 = state.theta
    M = state.precond
    eps = state.step_size.unsqueeze(1)
    zero = torch.zeros((), dtype=th0.dtype, device=th0.device)

    def kick_force(g):
        return torch.where(mask, g, zero)

    p = standard_normals(th0.shape, th0.dtype, th0.device, generator) * M.rsqrt()
    p = torch.where(mask, p, zero)
    k0 = 0.5 * masked_sum(M * p * p, mask)
    q = th0
    p = p - 0.5 * eps * kick_force(state.grad)
    for i in range(n_leapfrog):
        q = torch.where(mask, q + eps * M * p, th0)
        g, loss = evaluate_grad(potential, q, state.beta)
        if i < n_leapfrog - 1:
            p = p - eps * kick_force(g)
    p = p - 0.5 * eps * kick_force(g)
    e1 = energy_given_loss(potential, q, loss, state.beta)
    k1 = 0.5 * masked_sum(M * p * p, mask)
    return q, e1, g, loss, k0, k1
