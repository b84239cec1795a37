"""Replica exchange (parallel tempering; Swendsen & Wang 1986, Phys. Rev. Lett. 57, 2607; Geyer
1991, Computing Science and Statistics 23, 156) over the likelihood weight, laid out in the
ensemble dimension.

The E = R * K rows of ``theta`` are R independent ladders of K replicas; row ``e = r * K + k``
is replica k of ladder r and always samples

    p_k(theta) ∝ exp(-beta_k * loss(theta) - prior(theta)),    beta_1 > ... > beta_K,

(the state's ``beta`` is the (E,) tensor :func:`ladder_betas` builds; replica k = 0 carries the
target ``beta_1``). A swap of the positions of the adjacent replicas (k, k+1) of one ladder is
accepted with probability

    min(1, exp((beta_k - beta_{k+1}) (loss(theta_k) - loss(theta_{k+1})))),

which keeps the product of the K tempered laws invariant (the prior terms cancel). One swap move
proposes all pairs of one parity at once (k even when ``parity == 0``, odd when 1: disjoint
pairs), alternating parity from swap to swap (deterministic even-odd scheme). Rows keep their
temperature, step size and counters; positions move between rows, and the caches (energy and
gradient depend on beta) are recomputed.

Hot replicas (small beta, close to the prior) cross barriers of the loss that the target
replica cannot; swaps carry those crossings down the ladder. The observation of the target law
uses rows k = 0 only (:func:`target_rows`).
"""

from __future__ import annotations

import math
from dataclasses import replace

import torch

from ..checks import check_alloc, check_count, check_device, check_float_dtype, check_int, check_pos_float
from ._hmc import MAX_LEAPFROG, hmc_step
from ._mala import mala_step, ula_move
from ._mh import (
    MCMCState,
    _check_generator,
    _check_potential,
    _check_state,
    _check_target_accept,
    mcmc_refresh,
)

__all__ = [
    "temperature_ladder",
    "ladder_betas",
    "target_rows",
    "replica_exchange_swap",
    "make_replica_exchange_step",
]

_METHODS = ("mala", "hmc", "ula")


def temperature_ladder(beta_target, beta_min, K: int, *, dtype=torch.float64, device="cpu") -> torch.Tensor:
    """Geometric ladder of K likelihood weights from ``beta_target`` down to ``beta_min``:
    ``beta_k = beta_target * (beta_min / beta_target)^(k / (K - 1))``, k = 0..K-1 (K = 1: just
    ``beta_target``). Requires ``0 < beta_min <= beta_target``. Returns a (K,) tensor (a ``K``
    whose weights, built as a list of Python floats, exceed 16 GiB raises ValueError)."""
    beta_target = check_pos_float("beta_target", beta_target)
    beta_min = check_pos_float("beta_min", beta_min)
    K = check_int("K", K, minimum=1)
    check_alloc(f"K={K}", K, itemsize=48, what="the K weights (a list of Python floats, then a tensor)")
    dtype = check_float_dtype(dtype)
    device = check_device(device)
    if beta_min > beta_target:
        raise ValueError(f"beta_min must be <= beta_target (the target is the coldest replica), got "
                         f"beta_min={beta_min} > beta_target={beta_target}")
    if K == 1:
        vals = [beta_target]
    else:
        r = math.log(beta_min / beta_target)
        vals = [beta_target * math.exp(r * k / (K - 1)) for k in range(K)]
        vals[-1] = beta_min
    return torch.tensor(vals, dtype=dtype, device=device)


def ladder_betas(ladder, n_ladders: int) -> torch.Tensor:
    """The (R*K,) per-row weights of R copies of the (K,) ``ladder``: row ``r*K + k`` gets
    ``ladder[k]`` (pass it as ``beta`` to :func:`mala_init` / :func:`hmc_init`). An
    ``n_ladders`` whose (R*K,) tensor exceeds 16 GiB raises ValueError."""
    n_ladders = check_int("n_ladders", n_ladders, minimum=1)
    if not torch.is_tensor(ladder) or ladder.ndim != 1 or ladder.shape[0] < 1:
        raise ValueError(f"ladder must be a 1-D tensor of K >= 1 weights (e.g. temperature_ladder), "
                         f"got {tuple(ladder.shape) if torch.is_tensor(ladder) else type(ladder).__name__}")
    if not ladder.dtype.is_floating_point or not bool((torch.isfinite(ladder) & (ladder > 0)).all()):
        raise ValueError("ladder must hold finite floating-point weights > 0")
    check_alloc(f"n_ladders={n_ladders} with K={ladder.shape[0]}", n_ladders * ladder.shape[0],
                itemsize=ladder.element_size(), what="the (R*K,) per-row weights")
    return ladder.repeat(n_ladders)


def target_rows(x: torch.Tensor, n_ladders: int) -> torch.Tensor:
    """Rows k = 0 (the target weight) of every ladder of ``x`` (R*K, ...): an (R, ...) view."""
    n_ladders = check_int("n_ladders", n_ladders, minimum=1)
    if not torch.is_tensor(x) or x.ndim < 1 or x.shape[0] % n_ladders:
        raise ValueError(f"x must be a tensor whose first axis (R*K rows) is a multiple of n_ladders "
                         f"= {n_ladders}, got {tuple(x.shape) if torch.is_tensor(x) else type(x).__name__}")
    K = x.shape[0] // n_ladders
    return x[::K]


def _n_temps(state: MCMCState, n_ladders) -> tuple[int, int]:
    R = check_int("n_ladders", n_ladders, minimum=1)
    E = state.theta.shape[0]
    if E % R:
        raise ValueError(f"n_ladders must divide the number of chains E = {E} (E = R * K), got {R}")
    K = E // R
    if K < 2:
        raise ValueError(f"replica exchange needs K >= 2 temperatures per ladder, got E = {E} chains "
                         f"in n_ladders = {R} ladders")
    if not (torch.is_tensor(state.beta) and state.beta.shape == (E,)):
        raise ValueError("state.beta must be an (E,) tensor of per-row weights: initialise with "
                         "beta=ladder_betas(temperature_ladder(...), n_ladders)")
    return R, K


def replica_exchange_swap(state: MCMCState, potential, *, n_ladders: int, generator: torch.Generator,
                          parity: int):
    """One swap move: every adjacent pair (k, k+1) with ``k % 2 == parity`` of every ladder
    proposes to exchange positions (see module doc); returns ``(new_state, info)``.

    state : :class:`MCMCState` whose ``beta`` is the (E,) ladder weights (rows ``r*K + k``).
    potential : the :class:`ExactPotential`; the caches are recomputed at the new positions
        (one grad and one energy evaluation) when at least one swap was accepted.
    n_ladders : R, a divisor of E with K = E / R >= 2.
    generator : draws R*(K-1) uniforms (all pairs, so the stream does not depend on parity).
    parity : 0 or 1.

    info : ``{"swap_accept": (K-1,)}``, the acceptance probability of each adjacent pair averaged
    over the ladders (NaN for the pairs of the other parity, not proposed in this move).
    ``state.step`` is not advanced (the swap is part of a step; see :func:`make_replica_exchange_step`).
    """
    _check_state(state)
    _check_potential(potential)
    _check_generator(generator, state.theta)
    parity = check_int("parity", parity)
    if parity not in (0, 1):
        raise ValueError(f"parity must be 0 or 1, got {parity}")
    R, K = _n_temps(state, n_ladders)
    b = state.beta.view(R, K)
    loss = state.loss.view(R, K)
    log_a = (b[:, :-1] - b[:, 1:]) * (loss[:, :-1] - loss[:, 1:])
    log_a = torch.where(torch.isnan(log_a), torch.full((), -math.inf, dtype=log_a.dtype,
                                                       device=log_a.device), log_a)
    a = torch.exp(torch.clamp(log_a, max=0.0))  # (R, K-1)
    u = torch.rand(a.shape, generator=generator, dtype=a.dtype, device=a.device)
    active = (torch.arange(K - 1, device=a.device) % 2) == parity
    swap = active & (u < a)
    nan = torch.full((), math.nan, dtype=a.dtype, device=a.device)
    info = {"swap_accept": torch.where(active, a.mean(0), nan)}
    if not bool(swap.any()):
        return state, info
    s = swap.to(torch.int64)
    perm = torch.arange(K, device=a.device).expand(R, K).clone()
    perm[:, :-1] += s
    perm[:, 1:] -= s
    perm = (perm + K * torch.arange(R, device=a.device).unsqueeze(1)).reshape(-1)
    new = replace(state, theta=state.theta[perm])
    return mcmc_refresh(new, potential), info


def make_replica_exchange_step(potential, *, n_ladders: int, method: str = "mala",
                               n_leapfrog: int | None = None, adapt_steps: int = 0,
                               target_accept: float | None = None, swap_every: int = 1, mask=None,
                               pool_adaptation: bool = True):
    """A step function ``(state, generator) -> (state, info)`` for :func:`run_chain`: one
    within-temperature transition of every row at its own weight ``state.beta`` (``method``
    "mala" (:func:`mala_step`), "hmc" (:func:`hmc_step`, needs ``n_leapfrog`` <= 10_000) or "ula" (the
    unadjusted preconditioned Langevin move, biased at O(eps))), then, every ``swap_every`` steps,
    a :func:`replica_exchange_swap` with parity alternating from swap to swap.

    adapt_steps : the step sizes adapt (dual averaging, per row) while ``state.step <
        adapt_steps`` and are fixed to their averages after (not for "ula").
    target_accept : adaptation target (default 0.574 for MALA, 0.8 for HMC).
    pool_adaptation : adapt one step size per temperature on the acceptance averaged over the R
        ladders (default; start all rows of a temperature with one step size), rather than one
        per row.
    mask : optional (D,) bool block of moving coordinates (passed to the transition).

    info : the transition's (``loss``, and for MALA/HMC ``accept_prob``, ``accepted``,
    ``adapting``) plus ``swap_accept`` (K-1,) (NaN for pairs not proposed at this step);
    :func:`run_chain` keeps running means of ``accept_prob`` and ``swap_accept``.
    Start from ``mala_init(theta, potential, step_size=..., beta=ladder_betas(ladder, R))``.
    """
    _check_potential(potential)
    n_ladders = check_int("n_ladders", n_ladders, minimum=1)
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    if method == "hmc":
        if n_leapfrog is None:
            raise ValueError("n_leapfrog must be given (an int >= 1) for method='hmc'")
        n_leapfrog = check_count("n_leapfrog", n_leapfrog, minimum=1, maximum=MAX_LEAPFROG)
    elif n_leapfrog is not None:
        raise ValueError(f"n_leapfrog is only used by method='hmc', got n_leapfrog={n_leapfrog!r} with "
                         f"method={method!r}")
    adapt_steps = check_count("adapt_steps", adapt_steps, minimum=0)
    if method == "ula" and adapt_steps:
        raise ValueError(f"adapt_steps must be 0 for method='ula' (no acceptance to adapt to), got "
                         f"{adapt_steps}")
    swap_every = check_count("swap_every", swap_every, minimum=1)
    if not isinstance(pool_adaptation, bool):
        raise TypeError(f"pool_adaptation must be a bool, got {pool_adaptation!r}")
    if target_accept is None:
        target_accept = 0.8 if method == "hmc" else 0.574
    target_accept = _check_target_accept(target_accept)
    kw = {} if mask is None else {"mask": mask}
    groups = {}

    def step(state, generator):
        adapt = state.step < adapt_steps
        ag = None
        if adapt and pool_adaptation:
            R, K = _n_temps(state, n_ladders)
            key = (R * K, str(state.theta.device))
            if key not in groups:
                groups[key] = torch.arange(R * K, device=state.theta.device) % K
            ag = groups[key]
        if method == "mala":
            state, info = mala_step(state, potential, generator=generator, adapt=adapt,
                                    target_accept=target_accept, adapt_groups=ag, **kw)
        elif method == "hmc":
            state, info = hmc_step(state, potential, generator=generator, n_leapfrog=n_leapfrog,
                                   adapt=adapt, target_accept=target_accept, adapt_groups=ag, **kw)
        else:
            state, info = ula_move(state, potential, generator=generator, **kw)
        k = state.step
        if k % swap_every == 0:
            state, sinfo = replica_exchange_swap(state, potential, n_ladders=n_ladders,
                                                 generator=generator, parity=(k // swap_every) % 2)
        else:
            R, K = _n_temps(state, n_ladders)
            sinfo = {"swap_accept": torch.full((K - 1,), math.nan, dtype=state.theta.dtype,
                                               device=state.theta.device)}
        info = dict(info, **sinfo)
        info["loss"] = state.loss
        return state, info

    return step
