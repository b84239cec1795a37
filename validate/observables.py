"""Observables of sampled network ensembles (torch in, torch out; no printing).

Every function takes a :class:`richlazy.simulate.NetworkPosterior` and a parameter tensor
``theta`` of shape (E, D) (E chains / networks) and returns per-network values with a leading E
axis. Record them with :func:`richlazy.simulate.run_chain` (``observe=``) and turn the recorded
(S, E, ...) arrays into means with autocorrelation-aware standard errors with
:func:`richlazy.validate.stats.estimate`.
"""

from __future__ import annotations

import torch

__all__ = ["readout_second_moment", "layer_kernels", "class_block_means", "class_means", "readouts"]


def readouts(post, theta) -> torch.Tensor:
    """Readout weights A, (E, N, m): one m-vector a_i per neuron."""
    return post.unflatten(theta)["A"]


def readout_second_moment(post, theta) -> torch.Tensor:
    """``(1/N) sum_i a_i a_i^T``, (E, m, m); its posterior mean is U for linear networks
    (seed 000: a_i ~ N(0, U))."""
    A = readouts(post, theta)
    return A.transpose(1, 2) @ A / A.shape[1]


def layer_kernels(post, theta, X=None, *, generator=None, layers=None) -> list[torch.Tensor]:
    """Kernels ``K_l(x, x') = (1/N) sum_i phi(z_i^l(x)) phi(z_i^l(x'))`` (seed 000, Eq. 2) for
    l = 1..L (or the given ``layers``), each (E, Q, Q) on inputs X (default: training inputs)."""
    zs = post.preactivations(theta, X, generator=generator)
    phi = post.phi
    L = len(zs)
    layers = range(1, L + 1) if layers is None else layers
    out = []
    for ell in layers:
        if not 1 <= ell <= L:
            raise ValueError(f"layers must be in 1..L = {L}, got {ell}")
        h = phi(zs[ell - 1])
        out.append(h.transpose(1, 2) @ h / h.shape[1])
    return out


def class_block_means(M: torch.Tensor, labels, m: int):
    """Class-block means of (..., P, P) matrices: the mean diagonal element per class (..., m)
    and the mean off-diagonal element within / between classes (..., m, m)."""
    onehot = torch.nn.functional.one_hot(torch.as_tensor(labels, device=M.device), m).to(M.dtype)
    cnt = onehot.sum(0)
    if bool((cnt < 2).any()):
        raise ValueError("every class needs at least 2 inputs for off-diagonal block means")
    diag = torch.diagonal(M, dim1=-2, dim2=-1)
    dsum = diag @ onehot
    tot = onehot.T @ M @ onehot - torch.diag_embed(dsum)
    pairs = torch.outer(cnt, cnt) - torch.diag(cnt)
    return dsum / cnt, tot / pairs


def class_means(F: torch.Tensor, labels, m: int) -> torch.Tensor:
    """Class-averaged rows of (..., P, k) arrays (e.g. outputs): (..., m, k)."""
    onehot = torch.nn.functional.one_hot(torch.as_tensor(labels, device=F.device), m).to(F.dtype)
    return (onehot.T @ F) / onehot.sum(0)[:, None]
