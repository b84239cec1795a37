"""Exact moves along the rescaling symmetry of positively homogeneous networks (linear, ReLU).

Why. For phi(lam z) = lam phi(z) (lam > 0: the linear and the ReLU activation) the network output
does not change when one neuron's incoming weights are multiplied by lam and its outgoing weights
divided by lam: with neuron i of hidden layer l, w_i = W^l[i, :] (n_in entries) and
o_i = W^{l+1}[:, i] (or the readout row A[i, :] for l = L; k entries),

    (w_i, o_i) -> (lam w_i, o_i / lam)    leaves every output, hence the likelihood, unchanged.

Along this orbit only the Gaussian priors change, and they fix the balance of |w_i| against
|o_i|. Samplers that move the blocks separately (Gibbs: A | W, then W | A) or with a local step
(HMC, ULA) move along the orbit only slowly: it is the slowest direction of the linear network's
posterior, and it carries the readout overlap U = <|a|^2>/N (seed 000 §3.1). For ReLU it is the
outlier magnitudes, which "are free by homogeneity and fixed by the output constraint" (notes §5.2).

The move (a group move, Liu & Sabatti 2000): draw lam from p(lam w_i, o_i / lam) |J(lam)| with
the Haar measure dlam/lam of the multiplicative group; the Jacobian of the map is
lam^{n_in - k}. In t = log lam^2, with b_i = |w_i|^2, a_i = |o_i|^2 and prior variances v_in,
v_out (sigma_w2; sigma_a2 for the readout), the law is log-concave,

    log p(t) = c t - alpha e^t - gamma e^{-t} + const,
    c = (n_in - k)/2,  alpha = b_i/(2 v_in),  gamma = a_i/(2 v_out),

(t = 0 is the current point; a generalized inverse Gaussian in lam^2). It is sampled by one
independence Metropolis-Hastings step with the Laplace approximation N(t*, 1/(alpha e^{t*} +
gamma e^{-t*})) at the mode e^{t*} = (c + sqrt(c^2 + 4 alpha gamma)) / (2 alpha) as proposal,
which leaves the law invariant exactly; acceptance is typically > 0.95 since c is large. The
neurons of one layer have disjoint incoming rows and outgoing columns, so they move at once;
the layers move in turn (1..L).
"""

from __future__ import annotations

import torch

from ..checks import check_generator, check_generator_on
from ..models._network_posterior import NetworkPosterior

__all__ = ["HOMOGENEOUS_ACTIVATIONS", "sample_neuron_scales"]

#: activations with phi(lam z) = lam phi(z) for lam > 0, for which the move is exact
HOMOGENEOUS_ACTIVATIONS = ("linear", "relu")


def _check_homogeneous(posterior):
    if not isinstance(posterior, NetworkPosterior):
        raise TypeError(f"posterior must be a NetworkPosterior, got {type(posterior).__name__}")
    if posterior.spec.activation not in HOMOGENEOUS_ACTIVATIONS:
        raise ValueError("the neuron rescaling move needs a positively homogeneous activation "
                         f"{HOMOGENEOUS_ACTIVATIONS}; posterior.spec.activation is "
                         f"{posterior.spec.activation!r}")


def _log_target(t, c, alpha, gamma):
    return c * t - alpha * torch.exp(t) - gamma * torch.exp(-t)


def _rescale_layer(W_in, W_out, v_in, v_out, generator):
    """One independence-MH draw of lam per neuron; rows of W_in (E, N, n_in) and W_out
    (E, N, k) (views, rescaled in place). Returns the (E, N) acceptance indicators."""
    n_in, k = W_in.shape[2], W_out.shape[2]
    c = 0.5 * (n_in - k)
    tiny = torch.finfo(W_in.dtype).tiny
    alpha = W_in.square().sum(2).clamp_min(tiny) / (2.0 * v_in)
    gamma = W_out.square().sum(2).clamp_min(tiny) / (2.0 * v_out)
    x = (c + torch.sqrt(c * c + 4.0 * alpha * gamma)) / (2.0 * alpha)  # e^{t*} > 0
    t_mode = torch.log(x)
    sd = torch.rsqrt(alpha * x + gamma / x)  # 1/sqrt(-d^2 log p / dt^2) at the mode
    z = torch.randn(t_mode.shape, generator=generator, device=W_in.device, dtype=W_in.dtype)
    u = torch.rand(t_mode.shape, generator=generator, device=W_in.device, dtype=W_in.dtype)
    t_new = t_mode + sd * z
    t_old = torch.zeros_like(t_new)
    z_old = -t_mode / sd
    log_r = (_log_target(t_new, c, alpha, gamma) - _log_target(t_old, c, alpha, gamma)
             + 0.5 * z * z - 0.5 * z_old * z_old)
    accept = torch.log(u) < log_r
    lam = torch.where(accept, torch.exp(0.5 * t_new), torch.ones_like(t_new))
    W_in.mul_(lam[..., None])
    W_out.div_(lam[..., None])
    return accept


def sample_neuron_scales(posterior, theta: torch.Tensor, *, generator: torch.Generator):
    """An exact move of every neuron along the rescaling orbit (module doc).

    Parameters
    ----------
    posterior : NetworkPosterior whose activation is in :data:`HOMOGENEOUS_ACTIVATIONS`
        ("linear" or "relu"); any L, m, regime, likelihood weight (the likelihood is constant on
        the orbit, so the move is the same at every temperature of a ladder).
    theta : (E, D) parameters of the posterior's dtype and device; not modified.
    generator : torch.Generator on theta's device type.

    Returns ``(theta_new, acceptance)``: a copy of ``theta`` after the move and the (E,) fraction
    of neurons (over all layers) whose proposal was accepted. Non-finite chains stay non-finite.
    """
    _check_homogeneous(posterior)
    check_generator(generator)
    theta = posterior._theta(theta)
    check_generator_on(generator, theta.device, what="theta")
    new = theta.clone()
    p = posterior.unflatten(new)
    L = posterior.spec.L
    acc = []
    for l in range(1, L + 1):
        if l == L:
            W_out, v_out = p["A"], posterior.sigma_a2
        else:
            W_out, v_out = p[f"W{l + 1}"].transpose(1, 2), posterior.sigma_w2
        acc.append(_rescale_layer(p[f"W{l}"], W_out, posterior.sigma_w2, v_out, generator))
    return new, torch.cat(acc, dim=1).to(theta.dtype).mean(1)
