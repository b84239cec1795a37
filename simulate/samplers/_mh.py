"""Shared plumbing of the Metropolis-adjusted samplers (MALA, HMC): the state with its cached
energy and gradient, the per-chain accept/reject step and dual-averaging step-size adaptation.

E independent chains are the rows of ``theta`` (E, D); every accept/reject decision, every step
size and every adaptation statistic is per chain (row).

Target ``p(theta) ∝ exp(-Phi_beta(theta))`` with ``Phi_beta = beta * loss + prior``; ``beta`` is
the likelihood weight (inverse temperature), one number or one value per chain (an (E,) tensor,
as replica exchange needs). The state caches ``Phi``, ``grad Phi`` and ``loss`` at the current
positions (each transition evaluates the potential once, at the proposal); whoever changes
``theta`` from outside (a Gibbs block draw, a replica swap) calls :func:`mcmc_refresh`.

Metropolis-Hastings (Metropolis et al. 1953; Hastings 1970): a proposal ``theta'`` drawn from
``q(theta' | theta)`` is accepted with probability

    a = min(1, exp(-Phi(theta') + Phi(theta)) q(theta | theta') / q(theta' | theta)),

a NaN or non-finite proposal (energy, gradient or position) is rejected (a = 0), so an
exploding proposal never enters the chain; it shows up as a low acceptance instead.

Step-size adaptation: dual averaging of Hoffman & Gelman (2014, J. Mach. Learn. Res. 15, 1593,
Algorithm 5), per chain, toward the target acceptance ``delta``: at adaptation iteration m,

    Hbar_m = (1 - 1/(m + t0)) Hbar_{m-1} + (delta - a_m) / (m + t0),
    log eps_m = mu - sqrt(m) / gamma * Hbar_m,
    log epsbar_m = m^-kappa log eps_m + (1 - m^-kappa) log epsbar_{m-1},

with mu = log(10 eps_0) (eps_0: the step size when adaptation starts), gamma = 0.05, t0 = 10,
kappa = 0.75. ``a_m`` is each chain's own acceptance probability, or, with ``adapt_groups`` (an
(E,) int tensor of group labels), the mean over the chains of its group: chains of a group (that
start with one step size) then share one step size whose noise is reduced by the group size, which
avoids the occasional per-chain outlier of single-chain adaptation (e.g. pool the replicas of one
temperature across ladders). The frozen ``epsbar`` is a geometric average of the fluctuating
``eps_m``, smaller than a typical one: the acceptance after warm-up tends to lie somewhat above
the target (notably for HMC). All statistics live in the state (the step stays pure).
Adaptation is for warm-up only: the first step called with ``adapt=False`` after adaptive steps
(or an explicit :func:`mcmc_end_adaptation`) fixes each chain's step size to its averaged
``epsbar``; a later ``adapt=True`` starts a new adaptation window from there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
import torch

from ..checks import as_real_tensor, check_generator_on, check_pos_float, check_real
from ..models._network_posterior import check_beta
from ._philox import philox_normal_

__all__ = [
    "ExactPotential",
    "MCMCState",
    "mcmc_init",
    "mcmc_refresh",
    "mcmc_end_adaptation",
]

# dual-averaging constants (Hoffman & Gelman 2014, Sec. 3.2.1)
DA_GAMMA = 0.05
DA_T0 = 10.0
DA_KAPPA = 0.75


class ExactPotential(Protocol):
    """What the Metropolis-adjusted samplers need from a potential
    ``Phi_beta(theta) = beta * loss(theta) + prior(theta)``:

    * ``grad(theta, beta=None) -> (grad Phi_beta (E, D), info)`` with ``info["loss"]`` (E,);
    * ``energy(theta, beta=None) -> Phi_beta (E,)``.

    ``beta`` is None (the potential's own weight), a number > 0 or an (E,) tensor of one weight
    per chain; the prior term does not depend on it. :class:`NetworkPosterior` and
    :class:`TwoLayerErfPosterior` implement it."""

    def grad(self, theta: torch.Tensor, beta=None): ...

    def energy(self, theta: torch.Tensor, beta=None): ...


@dataclass(frozen=True)
class MCMCState:
    """State of E Metropolis-adjusted chains (MALA or HMC); every tensor lives on theta's device.

    theta : (E, D) positions;  step : transitions taken so far.
    step_size : (E,) per-chain step size (MALA: ``eps`` of the Langevin proposal; HMC: the
        leapfrog step).
    precond : (D,) diagonal preconditioner ``M`` (MALA: proposal covariance ``2 eps M``; HMC:
        inverse mass, momenta ~ N(0, M^-1)).
    beta : likelihood weight the caches were computed with: None (the potential's own), a float,
        or an (E,) tensor (one per chain).
    energy : (E,) ``Phi_beta(theta)``;  grad : (E, D) ``grad Phi_beta(theta)``;  loss : (E,).
    n_accept : (E,) int64 accepted proposals so far.
    n_adapt : adaptation iterations of the current window (0: not adapting).
    da_mu, da_hbar, da_log_eps_bar : (E,) dual-averaging statistics (mu, Hbar_m, log epsbar_m).
    """

    theta: torch.Tensor
    step: int
    step_size: torch.Tensor
    precond: torch.Tensor
    beta: object
    energy: torch.Tensor
    grad: torch.Tensor
    loss: torch.Tensor
    n_accept: torch.Tensor
    n_adapt: int
    da_mu: torch.Tensor
    da_hbar: torch.Tensor
    da_log_eps_bar: torch.Tensor


# -- checks ------------------------------------------------------------------------------------

def _check_positions(theta) -> torch.Tensor:
    if not torch.is_tensor(theta):
        raise TypeError(f"theta must be a torch.Tensor of shape (E, D) (chains, parameters), got "
                        f"{type(theta).__name__}")
    if theta.ndim != 2 or theta.shape[0] < 1 or theta.shape[1] < 1:
        raise ValueError(f"theta must have shape (E, D) with E >= 1 chains and D >= 1 parameters, "
                         f"got {tuple(theta.shape)}")
    if theta.dtype not in (torch.float32, torch.float64):
        raise ValueError(f"theta must be a float32 or float64 tensor, got {theta.dtype}")
    if not bool(torch.isfinite(theta).all()):
        raise ValueError("theta must be finite (the initial positions contain NaN or inf)")
    return theta


def _check_potential(potential):
    for m in ("grad", "energy"):
        if not callable(getattr(potential, m, None)):
            raise TypeError(f"potential must have methods grad(theta, beta=None) and energy(theta, "
                            f"beta=None) (see ExactPotential); {type(potential).__name__} has no "
                            f"callable {m!r}")
    return potential


def _per_chain_positive(name, v, E, theta) -> torch.Tensor:
    """A number > 0 or an (E,) array of values > 0 as an (E,) tensor like theta."""
    if isinstance(v, (torch.Tensor, np.ndarray, list, tuple)) and np.ndim(v) >= 1:
        t = as_real_tensor(name, v, dtype=theta.dtype, device=theta.device)
        if t.shape != (E,):
            raise ValueError(f"{name} must be a number or a tensor of shape (E,) = ({E},), got shape "
                             f"{tuple(t.shape)}")
        if not bool((torch.isfinite(t) & (t > 0)).all()):
            raise ValueError(f"{name} must hold finite values > 0, got min {float(t.min())}")
        return t.clone()
    v = check_pos_float(name, v)
    return torch.full((E,), v, dtype=theta.dtype, device=theta.device)


def _check_precond(precond, theta) -> torch.Tensor:
    D = theta.shape[1]
    if precond is None:
        return torch.ones(D, dtype=theta.dtype, device=theta.device)
    p = as_real_tensor("precond", precond, dtype=theta.dtype, device=theta.device)
    if p.shape != (D,):
        raise ValueError(f"precond must be a tensor of shape (D,) = ({D},) (one variance per "
                         f"coordinate), got shape {tuple(p.shape)}")
    if not bool((torch.isfinite(p) & (p > 0)).all()):
        raise ValueError(f"precond must hold finite values > 0 (variances), got min {float(p.min())}")
    return p.clone()


def _check_state(state):
    if not isinstance(state, MCMCState):
        raise TypeError(f"state must be an MCMCState (from mala_init or hmc_init), got "
                        f"{type(state).__name__}")
    return state


def _check_mask(mask, theta):
    if mask is None:
        return None
    D = theta.shape[1]
    if not torch.is_tensor(mask) or mask.dtype != torch.bool:
        what = f"{mask.dtype} tensor" if torch.is_tensor(mask) else type(mask).__name__
        raise TypeError(f"mask must be None or a bool tensor of shape (D,) = ({D},), got {what}")
    if mask.shape != (D,):
        raise ValueError(f"mask must have shape (D,) = ({D},), got {tuple(mask.shape)}")
    mask = mask.to(theta.device)
    if not bool(mask.any()):
        raise ValueError("mask selects no coordinate: at least one entry must be True")
    return mask


def _check_target_accept(target_accept) -> float:
    t = check_real("target_accept", target_accept)
    if not 0.0 < t < 1.0:
        raise ValueError(f"target_accept must be in (0, 1), got {t}")
    return t


def _check_groups(adapt_groups, theta):
    if adapt_groups is None:
        return None
    E = theta.shape[0]
    if not torch.is_tensor(adapt_groups) or adapt_groups.dtype not in (torch.int32, torch.int64):
        what = (f"{adapt_groups.dtype} tensor" if torch.is_tensor(adapt_groups)
                else type(adapt_groups).__name__)
        raise TypeError(f"adapt_groups must be None or an int64 tensor of shape (E,) = ({E},) (group "
                        f"labels >= 0), got {what}")
    if adapt_groups.shape != (E,):
        raise ValueError(f"adapt_groups must have shape (E,) = ({E},), got {tuple(adapt_groups.shape)}")
    if bool((adapt_groups < 0).any()):
        raise ValueError("adapt_groups must hold group labels >= 0")
    return adapt_groups.to(device=theta.device, dtype=torch.int64)


def _check_generator(generator, theta):
    return check_generator_on(generator, theta.device, what="theta")


def _normalize_beta(beta, theta):
    return check_beta(beta, theta.shape[0], dtype=theta.dtype, device=theta.device)


def _same_beta(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if torch.is_tensor(a) != torch.is_tensor(b):
        return False
    if torch.is_tensor(a):
        return bool(torch.equal(a, b))
    return a == b


# -- potential evaluation ----------------------------------------------------------------------

def evaluate_grad(potential, theta, beta, out=None):
    """``(grad Phi_beta, loss)`` at ``theta`` (``beta`` None: not passed, so potentials without
    tempering work), shapes checked. ``out``: a buffer the gradient is written into when the
    potential accepts one (``grad_accepts_out``), else ignored."""
    kw = {} if beta is None else {"beta": beta}
    if out is not None and getattr(potential, "grad_accepts_out", False):
        kw["out"] = out
    g, info = potential.grad(theta, **kw)
    loss = info.get("loss") if isinstance(info, dict) else None
    if not (torch.is_tensor(g) and g.shape == theta.shape):
        raise ValueError(f"potential.grad must return a gradient of shape {tuple(theta.shape)}, got "
                         f"{tuple(g.shape) if torch.is_tensor(g) else type(g).__name__}")
    if not (torch.is_tensor(loss) and loss.shape == theta.shape[:1]):
        raise ValueError(f"potential.grad must return info['loss'] of shape ({theta.shape[0]},) "
                         "(Phi = beta * loss + prior)")
    return g, loss


def evaluate_energy(potential, theta, beta):
    """``Phi_beta`` (E,) at ``theta``, shape checked."""
    e = potential.energy(theta) if beta is None else potential.energy(theta, beta=beta)
    if not (torch.is_tensor(e) and e.shape == theta.shape[:1]):
        raise ValueError(f"potential.energy must return a tensor of shape ({theta.shape[0]},), got "
                         f"{tuple(e.shape) if torch.is_tensor(e) else type(e).__name__}")
    return e


def energy_given_loss(potential, theta, loss, beta):
    """``Phi_beta`` at ``theta`` when ``loss`` there is known: ``beta * loss + prior`` through the
    potential's ``prior_energy`` (no second forward pass) when it has one and its own weight
    ``potential.beta``, else :func:`evaluate_energy`."""
    prior = getattr(potential, "prior_energy", None)
    own = getattr(potential, "beta", None)
    if prior is None or (beta is None and own is None):
        return evaluate_energy(potential, theta, beta)
    return (own if beta is None else beta) * loss + prior(theta)


def evaluate(potential, theta, beta):
    """``(Phi, grad Phi, loss)`` at ``theta`` with likelihood weight ``beta``."""
    g, loss = evaluate_grad(potential, theta, beta)
    return energy_given_loss(potential, theta, loss, beta), g, loss


# -- public state functions --------------------------------------------------------------------

def mcmc_init(theta, potential, *, step_size, precond=None, beta=None) -> MCMCState:
    """Initial :class:`MCMCState` (shared by :func:`mala_init` and :func:`hmc_init`).

    theta : (E, D) finite float32/float64 positions (e.g. a prior draw); its device and dtype are
        those of the run.
    potential : an :class:`ExactPotential`; evaluated once here to fill the caches.
    step_size : number > 0 or (E,) tensor of per-chain step sizes.
    precond : (D,) positive diagonal preconditioner (variances; default ones). For a network
        posterior pass ``1 / posterior.precision`` (the prior variance of each coordinate).
    beta : likelihood weight (None: the potential's own; a number > 0; or an (E,) tensor).
    """
    theta = _check_positions(theta)
    _check_potential(potential)
    E = theta.shape[0]
    eps = _per_chain_positive("step_size", step_size, E, theta)
    M = _check_precond(precond, theta)
    b = _normalize_beta(beta, theta)
    e, g, loss = evaluate(potential, theta, b)
    bad = ~(torch.isfinite(e) & torch.isfinite(g).all(1) & torch.isfinite(loss))
    if bool(bad.any()):
        idx = torch.nonzero(bad.cpu()).flatten().tolist()
        raise ValueError(f"the potential is not finite at the initial positions theta (chains "
                         f"{idx[:8]}); start from finite-energy positions, e.g. a prior draw")
    zeros = torch.zeros(E, dtype=theta.dtype, device=theta.device)
    return MCMCState(theta=theta, step=0, step_size=eps, precond=M, beta=b, energy=e, grad=g,
                     loss=loss, n_accept=torch.zeros(E, dtype=torch.int64, device=theta.device),
                     n_adapt=0, da_mu=zeros, da_hbar=zeros.clone(), da_log_eps_bar=zeros.clone())


def mcmc_refresh(state: MCMCState, potential, *, beta=None) -> MCMCState:
    """Recompute the cached energy, gradient and loss at ``state.theta`` (after ``theta`` was
    changed from outside: a Gibbs block draw, a replica swap), at likelihood weight ``beta``
    (None: keep ``state.beta``; otherwise it becomes the state's weight). One call to
    ``potential.grad`` and one to ``potential.energy``; step counters are unchanged."""
    _check_state(state)
    _check_potential(potential)
    theta = _check_positions(state.theta)
    b = state.beta if beta is None else _normalize_beta(beta, theta)
    e, g, loss = evaluate(potential, theta, b)
    return replace(state, beta=b, energy=e, grad=g, loss=loss)


def mcmc_end_adaptation(state: MCMCState) -> MCMCState:
    """End a dual-averaging window: every chain's step size becomes its averaged
    ``epsbar = exp(log epsbar_m)`` and the statistics are reset. A state that is not adapting
    is returned unchanged. The steps call this themselves on the first ``adapt=False`` step."""
    _check_state(state)
    if state.n_adapt == 0:
        return state
    z = torch.zeros_like(state.da_hbar)
    return replace(state, step_size=torch.exp(state.da_log_eps_bar), n_adapt=0, da_mu=z,
                   da_hbar=z.clone(), da_log_eps_bar=z.clone())


# -- shared transition pieces ------------------------------------------------------------------

def prepare(state, potential, *, generator, adapt, target_accept, beta, mask, adapt_groups=None):
    """Checks shared by the steps; returns ``(state, mask, target_accept, adapt_groups)`` with the
    caches at the requested ``beta`` (refreshed when it differs from ``state.beta``) and the
    adaptation window closed when ``adapt`` is False."""
    _check_state(state)
    _check_potential(potential)
    _check_generator(generator, state.theta)
    if not isinstance(adapt, bool):
        raise TypeError(f"adapt must be a bool, got {adapt!r}")
    target_accept = _check_target_accept(target_accept)
    mask = _check_mask(mask, state.theta)
    adapt_groups = _check_groups(adapt_groups, state.theta)
    if beta is not None:
        b = _normalize_beta(beta, state.theta)
        if not _same_beta(b, state.beta):
            state = mcmc_refresh(state, potential, beta=b)
    if not adapt:
        state = mcmc_end_adaptation(state)
    return state, mask, target_accept, adapt_groups


def standard_normals(shape, dtype, device, generator) -> torch.Tensor:
    """A new tensor of standard normals: on the CPU (float32/float64) from the Philox kernel
    (:func:`richlazy.simulate.philox_normal_`, four words of ``generator`` as its key; several
    times faster than ``torch.randn`` in float64), elsewhere ``torch.randn``."""
    if torch.device(device).type == "cpu" and dtype in (torch.float32, torch.float64):
        return philox_normal_(torch.empty(shape, dtype=dtype, device=device), generator)
    return torch.randn(shape, generator=generator, dtype=dtype, device=device)


def masked_sum(x, mask):
    """Row sums of x (E, D) over the coordinates selected by mask (all when None)."""
    if mask is None:
        return x.sum(1)
    return torch.where(mask, x, torch.zeros((), dtype=x.dtype, device=x.device)).sum(1)


def _dual_averaging(state, accept_prob, target_accept, groups):
    if groups is not None:  # group means of the acceptance probability
        n = int(groups.max()) + 1
        tot = torch.zeros(n, dtype=accept_prob.dtype, device=accept_prob.device)
        cnt = torch.zeros_like(tot)
        tot.index_add_(0, groups, accept_prob)
        cnt.index_add_(0, groups, torch.ones_like(accept_prob))
        accept_prob = (tot / cnt)[groups]
    m = state.n_adapt + 1
    if m == 1:
        mu = torch.log(10.0 * state.step_size)
        hbar = torch.zeros_like(mu)
        lebar = torch.zeros_like(mu)
    else:
        mu, hbar, lebar = state.da_mu, state.da_hbar, state.da_log_eps_bar
    w = 1.0 / (m + DA_T0)
    hbar = (1.0 - w) * hbar + w * (target_accept - accept_prob)
    log_eps = mu - (math.sqrt(m) / DA_GAMMA) * hbar
    eta = m ** (-DA_KAPPA)
    lebar = eta * log_eps + (1.0 - eta) * lebar
    return dict(step_size=torch.exp(log_eps), n_adapt=m, da_mu=mu, da_hbar=hbar, da_log_eps_bar=lebar)


def metropolis(state, proposal, log_ratio, generator, *, adapt, target_accept, adapt_groups=None):
    """Per-chain accept/reject of ``proposal = (theta', Phi', grad', loss')`` with log acceptance
    ratio ``log_ratio`` (E,), then (``adapt``) one dual-averaging update (per chain, or pooled
    over ``adapt_groups``); returns ``(new_state, info)`` with the step counter advanced."""
    th1, e1, g1, l1 = proposal
    ok = torch.isfinite(e1) & torch.isfinite(g1).all(1) & torch.isfinite(th1).all(1)
    ok &= torch.isfinite(l1) & ~torch.isnan(log_ratio)
    neg_inf = torch.full((), -math.inf, dtype=log_ratio.dtype, device=log_ratio.device)
    log_ratio = torch.where(ok, log_ratio, neg_inf)
    accept_prob = torch.exp(torch.clamp(log_ratio, max=0.0))
    u = torch.rand(accept_prob.shape, generator=generator, dtype=accept_prob.dtype,
                   device=accept_prob.device)
    acc = u < accept_prob
    acc_r = acc.unsqueeze(1)
    new = dict(
        theta=torch.where(acc_r, th1, state.theta),
        step=state.step + 1,
        energy=torch.where(acc, e1, state.energy),
        grad=torch.where(acc_r, g1, state.grad),
        loss=torch.where(acc, l1, state.loss),
        n_accept=state.n_accept + acc.to(torch.int64),
    )
    if adapt:
        new.update(_dual_averaging(state, accept_prob, target_accept, adapt_groups))
    out = replace(state, **new)
    return out, {"loss": out.loss, "accept_prob": accept_prob, "accepted": acc, "adapting": adapt}

