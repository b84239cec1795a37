"""Unadjusted Langevin algorithm (Euler-Maruyama) as a pure ``init`` / ``step`` pair.

Target ``p(theta) ∝ exp(-Phi(theta))``; one step with step size ``eps``:

    theta' = theta - eps * grad Phi(theta) + sqrt(2 eps) * xi,    xi ~ N(0, I).

For the network posterior of seed 000 (Methods; notes §1.4), whose paper-time dynamics read
``dTheta/dt = -N grad L + T grad log P0 + sqrt(2T) xi`` after the rescaling T -> T/N, this is the
same chain with ``eps = T * dt``: :func:`paper_step_size` does the conversion.

The step has O(eps) bias in the stationary law (for a Gaussian target with precision lambda the
stationary variance is 1 / (lambda (1 - eps lambda / 2))); the tests check exactly that.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import torch

from ..checks import check_float_dtype, check_generator, check_pos_float

__all__ = ["Potential", "LangevinState", "langevin_init", "langevin_step", "paper_step_size"]


class Potential(Protocol):
    """What the sampler needs: ``grad(theta) -> (grad Phi (E, D), info dict of (E,) tensors)``.

    A potential whose likelihood can be tempered (e.g. :class:`NetworkPosterior`) also accepts
    ``grad(theta, beta=b)``: the gradient with the likelihood weight ``beta`` replaced by ``b``
    (the prior term unchanged); :func:`langevin_step` passes ``beta`` only when it is given."""

    def grad(self, theta: torch.Tensor): ...


@dataclass(frozen=True)
class LangevinState:
    """theta : (E, D) positions of E independent chains;  step : steps taken so far."""

    theta: torch.Tensor
    step: int = 0


def langevin_init(theta: torch.Tensor) -> LangevinState:
    """Initial state from positions (E, D) (e.g. a prior draw): a finite floating-point tensor
    with E >= 1 chains and D >= 1 parameters."""
    if not torch.is_tensor(theta) or theta.ndim != 2:
        shape = tuple(theta.shape) if torch.is_tensor(theta) else type(theta).__name__
        raise ValueError(f"theta must be a 2-D tensor (chains, parameters), got {shape}")
    if theta.shape[0] < 1 or theta.shape[1] < 1:
        raise ValueError(f"theta must have at least one chain and one parameter, got shape "
                         f"{tuple(theta.shape)}")
    if not theta.dtype.is_floating_point:
        raise ValueError(f"theta must be a floating-point tensor (float32 or float64), got {theta.dtype}")
    if not bool(torch.isfinite(theta).all()):
        raise ValueError("theta must be finite (the initial positions contain NaN or inf)")
    return LangevinState(theta=theta, step=0)


def langevin_step(state: LangevinState, potential: Potential, *, step_size: float,
                  generator: torch.Generator, noise_dtype: torch.dtype | None = torch.float32,
                  beta: float | None = None):
    """One ULA step; returns ``(new_state, info)`` and modifies neither ``state`` nor ``potential``.

    ``beta``: optional inverse temperature of the likelihood for this step, passed on as
    ``potential.grad(theta, beta=beta)`` (simulated annealing: the temperature is an argument of
    the step, the potential is never mutated). None: the potential's own weight.

    ``noise_dtype``: dtype in which the Gaussian noise is drawn before it is cast to the dtype
    of ``theta`` (None: draw in theta's dtype). The default float32 is a deliberate speed choice:
    torch's float64 normal sampler on the CPU is ~5x slower than its float32 one, and a relative
    precision of 2^-24 per noise draw is far below any statistical error of a sampling run. The
    drift is always computed in theta's dtype.

    ``step_size`` must be a finite number > 0 and ``generator`` a ``torch.Generator`` (the
    noise never comes from torch's global stream).
    """
    step_size = check_pos_float("step_size", step_size)
    check_generator(generator)
    if noise_dtype is not None:
        noise_dtype = check_float_dtype(noise_dtype, name="noise_dtype")
    if beta is None:
        g, info = potential.grad(state.theta)
    else:
        g, info = potential.grad(state.theta, beta=check_pos_float("beta", beta))
    nd = state.theta.dtype if noise_dtype is None else noise_dtype
    noise = torch.randn(state.theta.shape, generator=generator, device=state.theta.device, dtype=nd)
    new = torch.add(state.theta, g, alpha=-step_size)
    new.add_(noise, alpha=math.sqrt(2.0 * step_size))
    return LangevinState(theta=new, step=state.step + 1), info


def paper_step_size(dt: float, T: float) -> float:
    """ULA step size ``eps = T * dt`` for paper-time step ``dt`` at rescaled temperature ``T``."""
    dt = check_pos_float("dt", dt, noun="number")
    T = check_pos_float("T", T, noun="number")
    eps = T * dt
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"the step size T * dt = {T!r} * {dt!r} must be finite and > 0 (it overflows "
                         "or underflows)")
    return eps
