"""The gradient of the network posterior without per-call allocation of large tensors.

``grad Phi`` of :class:`NetworkPosterior` (module doc of ``_network_posterior``) by hand-written
batched matmuls, every intermediate (preactivations, activations, residual, back-propagated
fields) in a :class:`GradWorkspace` that is allocated once per ensemble size and reused, and the
result written straight into the blocks of the flat output ``out`` (E, D) through views, so no
per-block gradient is concatenated. The 1/sqrt(N0) of the first layer is folded into the stored
inputs, so the first layer costs exactly its two matrix products.

Backward pass (L hidden layers, s the readout scale, R = s A^T phi(z^L) - Y^T the residual):

    grad_A = phi(z^L) (beta s R)^T,   delta^L = A (beta s R),
    grad_{W^l} = (delta^l * phi'(z^l)) phi(z^{l-1})^T / sqrt(N)       (l >= 2; l = 1: X^T / sqrt(N0)),
    delta^{l-1} = W^l^T (delta^l * phi'(z^l)) / sqrt(N),

plus the prior term ``theta * precision``.

What is allocated per call: the (E,) loss and, for a tensor ``beta``, an (E,) product; nothing of
the size of the parameters or the activations (tests/simulate/samplers/test_philox.py measures a
whole Langevin step with the torch profiler).
"""

from __future__ import annotations

import math

import torch

from ._activations import activation_inplace

__all__ = ["GradWorkspace", "grad_into"]


class GradWorkspace:
    """Intermediates of one gradient evaluation for E chains of a posterior (reused per call).

    z[l], h[l] : (E, N, P) preactivations and activations of layer l + 1 (for the linear
    activation h[l] is z[l]); F : (E, m, P) outputs, then residual; dH : two (E, N, P) buffers
    for the back-propagated field (alternating, so a product never writes into its operand);
    tmp : (E, N, P) scratch of phi' (float or bool, None for the linear activation)."""

    def __init__(self, spec, P: int, E: int, dtype, device):
        N, m, L = spec.N, spec.m, spec.L

        def buf(*shape, dt=dtype):
            return torch.empty(shape, dtype=dt, device=device)

        _, _, scratch = activation_inplace(spec.activation)
        self.z = [buf(E, N, P) for _ in range(L)]
        self.h = [z if scratch is None else buf(E, N, P) for z in self.z]
        self.F = buf(E, m, P)
        self.dH = [buf(E, N, P), buf(E, N, P)]
        self.tmp = None if scratch is None else buf(E, N, P, dt=torch.bool if scratch == "bool" else dtype)


def grad_into(post, theta: torch.Tensor, beta, out: torch.Tensor, ws: GradWorkspace):
    """Write grad Phi at ``theta`` (E, D) into ``out`` (E, D) and return ``(out, loss)``.

    ``post`` is the :class:`NetworkPosterior` (its scaled inputs ``_X1``/``_X1T``, targets,
    precision); ``beta`` a float or an (E,) tensor (already checked); ``ws`` its workspace for E
    chains. ``out`` must not share memory with ``theta``."""
    spec = post.spec
    phi_into, dphi_mul_, _ = activation_inplace(spec.activation)
    p = post.unflatten(theta)
    go = post.unflatten(out)
    L = spec.L
    cN = 1.0 / math.sqrt(spec.N)
    # forward
    z1 = ws.z[0]
    if post._X1_diag is not None:
        torch.mul(p["W1"], post._X1_diag, out=z1)
    else:
        torch.matmul(p["W1"], post._X1, out=z1)
    h = phi_into(z1, ws.h[0])
    for l in range(2, L + 1):
        z = torch.matmul(p[f"W{l}"], h, out=ws.z[l - 1]).mul_(cN)
        h = phi_into(z, ws.h[l - 1])
    A = p["A"]
    s = spec.readout_scale
    R = torch.matmul(A.transpose(1, 2), h, out=ws.F).mul_(s).sub_(post.Yt)  # (E, m, P)
    Rf = R.flatten(1)
    loss = torch.linalg.vecdot(Rf, Rf).mul_(0.5)
    if torch.is_tensor(beta):
        R.mul_((beta * s).view(-1, 1, 1))
    else:
        R.mul_(beta * s)
    # backward
    torch.matmul(h, R.transpose(1, 2), out=go["A"])
    k = 0
    dH = torch.matmul(A, R, out=ws.dH[k])
    for l in range(L, 0, -1):
        dZ = dphi_mul_(dH, ws.z[l - 1], ws.tmp)
        if l == 1:
            if post._X1_diag is not None:
                torch.mul(dZ, post._X1_diag, out=go["W1"])
            else:
                # batched product with the inputs broadcast over chains: the out block of each
                # chain is contiguous but the chains are D apart, which matmul's folded 2-D path
                # cannot write into
                X1T = post._X1T
                torch.bmm(dZ, X1T.expand(dZ.shape[0], *X1T.shape), out=go["W1"])
        else:
            torch.matmul(dZ, ws.h[l - 2].transpose(1, 2), out=go[f"W{l}"]).mul_(cN)
            k = 1 - k
            dH = torch.matmul(p[f"W{l}"].transpose(1, 2), dZ, out=ws.dH[k]).mul_(cN)
    out.addcmul_(theta, post.precision)
    return out, loss
