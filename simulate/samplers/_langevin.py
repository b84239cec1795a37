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
from ._philox import philox_ula_update

__all__ = ["Potential", "LangevinState", "LangevinWorkspace", "langevin_init", "langevin_step",
           "paper_step_size"]


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


class LangevinWorkspace:
    """Buffers that :func:`langevin_step` reuses from step to step (``workspace=``), so that a
    step allocates nothing of the size of the parameters: the gradient (written by the
    potential's ``grad(theta, out=)`` when its ``grad_accepts_out`` is true), the noise (for
    ``noise_rng="torch"`` only) and two position buffers used in turn.

    The price of reuse: the positions of a state returned by a step are overwritten by the step
    after the next one. Keep a copy (``state.theta.clone()``) of any state you want to hold on
    to; :func:`richlazy.simulate.run_chain` copies what it records and checkpoints. The buffers
    are (re)allocated on the first step and whenever the shape, dtype or device of theta (or
    the noise dtype) changes. One workspace serves one chain of steps at a time."""

    def __init__(self):
        self._key = None
        self.grad = self.noise = None
        self.positions = ()

    def _buffers(self, theta: torch.Tensor, noise_dtype: torch.dtype | None):
        """``(grad, noise, new_positions)`` for a step from ``theta``: the position buffer is
        the one of the two that does not hold ``theta``; no noise buffer (None) when
        ``noise_dtype`` is None (the Philox path draws inside its update)."""
        key = (tuple(theta.shape), theta.dtype, theta.device, noise_dtype)
        if key != self._key:
            self.grad = torch.empty_like(theta, memory_format=torch.contiguous_format)
            self.noise = (None if noise_dtype is None
                          else torch.empty(theta.shape, dtype=noise_dtype, device=theta.device))
            self.positions = (torch.empty_like(self.grad), torch.empty_like(self.grad))
            self._key = key
        ptr = theta.untyped_storage().data_ptr()
        new = self.positions[0]
        if new.untyped_storage().data_ptr() == ptr:
            new = self.positions[1]
        return self.grad, self.noise, new


NOISE_RNGS = ("auto", "philox", "torch")


def langevin_step(state: LangevinState, potential: Potential, *, step_size: float,
                  generator: torch.Generator, noise_dtype: torch.dtype | None = torch.float32,
                  beta: float | None = None, workspace: LangevinWorkspace | None = None,
                  noise_rng: str = "auto"):
    """One ULA step; returns ``(new_state, info)`` and modifies neither ``state`` nor ``potential``.

    ``beta``: optional inverse temperature of the likelihood for this step, passed on as
    ``potential.grad(theta, beta=beta)`` (simulated annealing: the temperature is an argument of
    the step, the potential is never mutated). None: the potential's own weight.

    ``noise_rng``: where the Gaussian noise comes from. "philox": the counter-based
    Philox4x32-10 + Box-Muller kernel of :mod:`._philox` (CPU, float32/float64 theta), which
    draws four 32-bit words per step from ``generator`` as its key, computes the normals in
    double precision and fuses the update ``theta - eps grad + sqrt(2 eps) xi`` into the same
    pass (about 1.4x faster than torch's float32 normals and 11x faster than its float64 ones on one
    core); "torch": ``torch.randn`` from ``generator``; "auto" (default): "philox" for a
    float32/float64 theta on the CPU, "torch" otherwise (e.g. CUDA, where torch's generator is
    itself a Philox).

    ``noise_dtype`` (``noise_rng="torch"`` only): dtype in which the noise is drawn before it
    is cast to the dtype of ``theta`` (None: draw in theta's dtype). The default float32 is a
    deliberate speed choice: torch's float64 normal sampler on the CPU is ~5x slower than its
    float32 one, and a relative precision of 2^-24 per noise draw is far below any statistical
    error of a sampling run. The drift is always computed in theta's dtype.

    ``step_size`` must be a finite number > 0 and ``generator`` a ``torch.Generator`` (the
    noise never comes from torch's global stream).

    ``workspace``: a :class:`LangevinWorkspace` whose buffers the step reuses (no allocation of
    parameter-sized tensors; the returned positions live in the workspace, see its docstring).
    With or without it the step draws the same noise and computes the same numbers: the new
    positions are bit for bit equal.
    """
    step_size = check_pos_float("step_size", step_size)
    check_generator(generator)
    if noise_dtype is not None:
        noise_dtype = check_float_dtype(noise_dtype, name="noise_dtype")
    if workspace is not None and not isinstance(workspace, LangevinWorkspace):
        raise TypeError(f"workspace must be a LangevinWorkspace or None, got {type(workspace).__name__}")
    theta = state.theta
    philox_ok = theta.device.type == "cpu" and theta.dtype in (torch.float32, torch.float64)
    if noise_rng == "auto":
        noise_rng = "philox" if philox_ok else "torch"
    elif noise_rng not in NOISE_RNGS:
        raise ValueError(f"noise_rng must be one of {NOISE_RNGS}, got {noise_rng!r}")
    elif noise_rng == "philox" and not philox_ok:
        raise ValueError(f"noise_rng='philox' needs a float32 or float64 theta on the CPU, got "
                         f"{theta.dtype} on {theta.device}; use noise_rng='torch' or 'auto'")
    # dtype of torch's noise draw; None on the Philox path (it draws inside its fused update)
    nd = None if noise_rng == "philox" else (theta.dtype if noise_dtype is None else noise_dtype)
    kw = {} if beta is None else {"beta": check_pos_float("beta", beta)}
    if workspace is None:
        g, info = potential.grad(theta, **kw)
        new = torch.empty_like(theta, memory_format=torch.contiguous_format)
        noise = None
    else:
        g_buf, noise, new = workspace._buffers(theta, nd)
        if getattr(potential, "grad_accepts_out", False):
            g, info = potential.grad(theta, out=g_buf, **kw)
        else:
            g, info = potential.grad(theta, **kw)
    if noise_rng == "philox":
        philox_ula_update(theta.contiguous(), g.contiguous(), new, step_size=step_size,
                          generator=generator)
    else:
        if noise is None:
            noise = torch.randn(theta.shape, generator=generator, device=theta.device, dtype=nd)
        else:
            torch.randn(theta.shape, generator=generator, device=theta.device, dtype=nd, out=noise)
        torch.add(theta, g, alpha=-step_size, out=new)
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
