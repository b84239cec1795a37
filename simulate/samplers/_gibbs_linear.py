"""Exact conditional draws of the hidden layers of a *linear* network: a Gibbs sweep in which
every block is drawn from its exact conditional law (no step size, no accept/reject).

Why. For the linear activation the network output is linear in every weight matrix separately.
Write the weights of layer l as W (N x n_in) with, on the training inputs,

    z^l = W G,                 G = X1 (l = 1: the inputs with 1/sqrt(N0) folded in, or their
                               coordinates R/sqrt(N0) in span(X) with ``project_inputs``),
                               G = z^{l-1} / sqrt(N) (l >= 2),
    F^T = s C^T W G,           C = M^T A,  M = W^L ... W^{l+1} / N^{(L-l)/2}  (C = A for l = L),

(seed 000 §1.1 with phi(z) = z; s the readout scale 1/N or 1/sqrt(N)). Given the other blocks
the potential (seed 000 Methods; notes §1.2)

    Phi_W = (beta/2) ||Y^T - s C^T W G||^2 + ||W||^2 / (2 sigma_w2)

is a Gaussian in W with precision I/sigma_w2 + beta s^2 (C C^T) (x) (G G^T). It is drawn by
"perturb the prior, then correct" (Matheron's rule, as for the readout in ``_gibbs``): draw
W0 ~ N(0, sigma_w2 I) and the data forward, Y0 = s C^T W0 G + e0/sqrt(beta) (m x P), then

    W = W0 + s sigma_w2 C Lam G^T,    Lam = K^{-1}(Y^T - Y0),
    K(Lam) = s^2 sigma_w2 (C^T C) Lam (G^T G) + Lam / beta       (the covariance of Y0).

With C^T C = U_c diag(c) U_c^T (m x m) and G^T G = U_g diag(g) U_g^T (P x P), K is diagonal in
the rotated basis: Lam = U_c [(U_c^T R U_g) / (s^2 sigma_w2 c_k g_j + 1/beta)] U_g^T. Every
denominator is >= 1/beta, so the draw needs no jitter and cannot fail for finite inputs. Cost per
layer: O(N n_in P + N m P) for the products plus an eigendecomposition of G^T G (once per run for
layer 1, whose G is fixed; O(P^3) per sweep for deeper layers).

A sweep draws W^1, ..., W^L in turn (each from its conditional given the current values of all
other blocks: C_l depends only on the layers above l, which the sweep has not touched yet when it
reaches l) and then the readout exactly (:func:`sample_readout`). Every block update leaves the
posterior invariant, so the chain is exact; no block is stiff, so there is no step size at all.
What can still be slow is the joint scale of the blocks (|A| up, |W| down), which a sweep moves
by a finite amount each time.
"""

from __future__ import annotations

import math
from dataclasses import is_dataclass, replace

import torch

from ..checks import check_generator, check_generator_on, check_int
from ..models._network_posterior import NetworkPosterior
from ._gibbs import _beta_column, _check_beta_option, _check_method, sample_readout
from ._scale_move import sample_neuron_scales

__all__ = ["gibbs_linear_step", "sample_linear_layer"]


def _check_linear(posterior):
    if not isinstance(posterior, NetworkPosterior):
        raise TypeError(f"posterior must be a NetworkPosterior, got {type(posterior).__name__}")
    if posterior.spec.activation != "linear":
        raise ValueError("the exact hidden-layer draw needs a linear network (the output is then "
                         "linear in each weight matrix); posterior.spec.activation is "
                         f"{posterior.spec.activation!r}: use gibbs_readout_step with an HMC/MALA "
                         "hidden move instead")


def _eig_gram(G):
    """Eigenvalues (clamped at 0) and eigenvectors of G^T G for G (n_in, P) or (E, n_in, P)."""
    g, U = torch.linalg.eigh(torch.matmul(G.transpose(-1, -2), G))
    return g.clamp_min(0.0), U


def _draw_layer(post, W, C, G, eig_G, b, generator):
    """An exact draw of W (E, N, n_in) given C (E, N, m), inputs G ((n_in, P) or (E, n_in, P)),
    the eigendecomposition of G^T G and the likelihood weight b (E, 1, 1); module doc."""
    E, N, n_in = W.shape
    s, sw2 = post.spec.readout_scale, post.sigma_w2
    g, Ug = eig_G
    W0 = torch.randn((E, N, n_in), generator=generator, device=W.device, dtype=W.dtype)
    W0.mul_(math.sqrt(sw2))
    P = G.shape[-1]
    m = C.shape[-1]
    e0 = torch.randn((E, m, P), generator=generator, device=W.device, dtype=W.dtype)
    Y0 = torch.matmul(torch.matmul(C.transpose(1, 2), W0), G).mul_(s) + e0 * b.rsqrt()
    R = post.Yt - Y0  # (E, m, P)
    c, Uc = torch.linalg.eigh(torch.matmul(C.transpose(1, 2), C))  # (E, m), (E, m, m)
    Rt = torch.matmul(torch.matmul(Uc.transpose(1, 2), R), Ug)
    denom = (s * s * sw2) * c.clamp_min(0.0)[:, :, None] * g.unsqueeze(-2) + 1.0 / b
    Lam = torch.matmul(torch.matmul(Uc, Rt / denom), Ug.transpose(-1, -2))
    return W0 + (s * sw2) * torch.matmul(torch.matmul(C, Lam), G.transpose(-1, -2))


class _Sweep:
    """One exact Gibbs sweep over the blocks of a linear network posterior (module doc)."""

    def __init__(self, post):
        _check_linear(post)
        self.post = post
        self.G1 = post._X1  # (n_in, P): layer 1's inputs, 1/sqrt(N0) folded in
        self.eig1 = _eig_gram(self.G1)

    def layers(self, theta, generator, b, only=None):
        """``theta`` with W^l (l in ``only``, default all) redrawn in order 1..L, in place."""
        post = self.post
        L, N = post.spec.L, post.spec.N
        p = post.unflatten(theta)
        bad = ~torch.isfinite(theta.sum(1))
        if bool(bad.any()):  # a diverged chain: draw from zeros, return NaN (see sample_readout)
            theta[bad] = 0.0
        # C_l = M_l^T A for every layer, from the top (layers above l are not redrawn before l)
        C = {L: p["A"]}
        for l in range(L, 1, -1):
            C[l - 1] = torch.matmul(p[f"W{l}"].transpose(1, 2), C[l]) * (1.0 / math.sqrt(N))
        G, eig = self.G1, self.eig1
        for l in range(1, L + 1):
            if l > 1:  # inputs of layer l: z^{l-1} / sqrt(N), with W^{l-1} as just redrawn
                G = torch.matmul(p[f"W{l - 1}"], G) * (1.0 / math.sqrt(N))
                eig = _eig_gram(G)
            if only is None or l in only:
                p[f"W{l}"].copy_(_draw_layer(post, p[f"W{l}"], C[l], G, eig, b, generator))
        if bool(bad.any()):
            theta[bad] = float("nan")
        return theta


def sample_linear_layer(posterior, theta: torch.Tensor, layer: int, *,
                        generator: torch.Generator, beta=None) -> torch.Tensor:
    """A copy of ``theta`` whose hidden layer ``layer`` (1..L) is an exact draw from
    p(W^layer | other blocks, data) of a linear network (module doc: Gaussian with precision
    I/sigma_w2 + beta s^2 (C C^T) (x) (G G^T), drawn by Matheron's rule).

    Parameters
    ----------
    posterior : NetworkPosterior with ``spec.activation == "linear"`` (any L, m, regime; dense or
        projected inputs).
    theta : (E, D) parameters of the posterior's dtype and device; not modified.
    layer : which hidden layer to redraw, 1..L.
    generator : torch.Generator on theta's device type (the only source of randomness).
    beta : None (the posterior's weight N/T or 1/T), a number > 0, or an (E,) tensor.

    A chain with non-finite parameters gets NaN parameters (the driver flags it as diverged).
    """
    _check_linear(posterior)
    check_generator(generator)
    L = posterior.spec.L
    layer = check_int("layer", layer, minimum=1)
    if layer > L:
        raise ValueError(f"layer must be a hidden layer 1..L = 1..{L}, got {layer}")
    theta = posterior._theta(theta)
    check_generator_on(generator, theta.device, what="theta")
    b = _beta_column(beta, posterior.beta, theta.shape[0], theta)
    return _Sweep(posterior).layers(theta.clone(), generator, b, only=(layer,))


def gibbs_linear_step(posterior, *, beta=None, method: str = "auto", scale_moves: bool = True):
    """Exact Gibbs step of a linear network for :func:`richlazy.simulate.run_chain`.

    Returns the pure step ``(state, generator) -> (state, info)``: every hidden layer W^1..W^L is
    redrawn from its exact conditional (:func:`sample_linear_layer`, in order), then the readout
    (:func:`richlazy.simulate.sample_readout`), all from ``generator``; with ``scale_moves`` every
    neuron also moves along the rescaling orbit between the two (:func:`sample_neuron_scales`),
    the direction a blockwise sweep moves along slowly. ``state`` is any dataclass with ``theta``
    and ``step`` (e.g. :func:`richlazy.simulate.langevin_init`), returned with ``theta`` replaced
    and ``step`` advanced by one; ``info`` holds the (E,) ``"scale_acceptance"`` (NaN without
    scale moves). No step size, no discretisation bias: every move is exact (module doc).

    Parameters
    ----------
    posterior : NetworkPosterior with ``spec.activation == "linear"``.
    beta : None (the posterior's weight), a number > 0, an (E,) tensor (a temperature ladder), or
        a callable ``step -> weight`` of the step count before the step (annealing).
    method : the readout draw's form, "auto", "weight" or "function" (see ``sample_readout``).
    scale_moves : also move each neuron along the rescaling orbit (default True).

    Measured on the quick linear toy (``richlazy bench --only sampler-ess``): see
    docs/benchmarks.md for the effective samples per second against ULA and Gibbs-HMC.
    """
    sweep = _Sweep(posterior)
    _check_method(method)
    _check_beta_option(beta)
    if not isinstance(scale_moves, bool):
        raise TypeError(f"scale_moves must be a bool, got {scale_moves!r}")

    def step(state, generator):
        if not is_dataclass(state) or not torch.is_tensor(getattr(state, "theta", None)):
            raise TypeError("state must be a dataclass holding a theta tensor (e.g. langevin_init"
                            f"(theta)), got {type(state).__name__}")
        check_generator(generator)
        theta = posterior._theta(state.theta)
        check_generator_on(generator, theta.device, what="theta")
        bt = beta(int(state.step)) if callable(beta) else beta
        b = _beta_column(bt, posterior.beta, theta.shape[0], theta)
        new = sweep.layers(theta.clone(), generator, b)
        if scale_moves:
            new, acc = sample_neuron_scales(posterior, new, generator=generator)
        else:
            acc = torch.full((theta.shape[0],), float("nan"), dtype=theta.dtype, device=theta.device)
        new = sample_readout(posterior, new, generator=generator, beta=bt, method=method)
        return replace(state, theta=new, step=state.step + 1), {"scale_acceptance": acc}

    return step
