"""Two-layer erf networks on Gaussian inputs with a Hermite target, as batched Langevin
ensembles (seed 002, App. B.3 and App. F: Fig. 2 experiments).

Network ``f(x) = sum_i a_i erf(w_i . x)`` with prior ``w ~ N(0, sigma_w2 I/d)``,
``a ~ N(0, sigma_a2/(chi N))`` (chi = 1 standard, chi = N mean-field) and MSE likelihood at ridge
``kappa``; the posterior potential of one chain is

    Phi(W, a) = (1/(2 kappa)) sum_mu (f(x_mu) - y_mu)^2 + (d/(2 sigma_w2)) |W|^2
                + (chi N/(2 sigma_a2)) |a|^2,

the stationary law of Langevin dynamics at temperature kappa with weight decay (spec 1.2).
For tempering it is written ``Phi = beta * loss + prior`` with ``loss = (1/(2P)) sum_mu (f - y)^2``
(the training MSE/2 that :meth:`TwoLayerErfPosterior.grad` reports) and the likelihood weight
``beta = P / kappa`` (:attr:`TwoLayerErfPosterior.beta`); ``grad`` and ``energy`` accept another
``beta``, one number or one per chain.
``E`` independent chains share one training set and are stored as rows of ``theta``
(columns: W row-major (N*d), then a (N)).  The gradient is written out by hand (two batched
matmuls), no autograd.  The data (Gaussian inputs, Hermite target) come from
:func:`richlazy.simulate.hermite_target_data`.
"""

from __future__ import annotations

import math

import torch

from ..checks import check_alloc, check_generator_on, check_int, check_pos_float, check_theta
from ._network_posterior import check_beta

__all__ = ["TwoLayerErfPosterior"]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


class TwoLayerErfPosterior:
    """Posterior potential of E two-layer erf networks (see module docstring).

    Parameters
    ----------
    X : (P, d) tensor and y : (P,) — one training set shared by all chains; or X : (E, P, d)
        and y : (E, P) — one independent training set per chain (E must equal the number of
        chains sampled).
    N : width;  kappa : ridge / temperature;  sigma_w2, sigma_a2 : prior variances;
    chi : mean-field scale (1 standard, N mean-field; the string "mean-field" means N).
    """

    def __init__(self, X, y, *, N: int, kappa: float, sigma_w2: float = 1.0,
                 sigma_a2: float = 1.0, chi=1.0):
        if not (torch.is_tensor(X) and X.ndim in (2, 3)):
            raise ValueError("X must be a tensor of shape (P, d) or (E, P, d)")
        if X.shape[-2] < 1 or X.shape[-1] < 1 or (X.ndim == 3 and X.shape[0] < 1):
            raise ValueError(f"X must hold at least one input of dimension >= 1, got shape {tuple(X.shape)}")
        if not (torch.is_tensor(y) and y.shape == X.shape[:-1]):
            raise ValueError(f"y must be a tensor of shape {tuple(X.shape[:-1])}")
        if X.dtype not in (torch.float32, torch.float64) or y.dtype != X.dtype:
            raise ValueError(f"X and y must be float32 or float64 tensors of one dtype, got {X.dtype} "
                             f"and {y.dtype}")
        if y.device != X.device:
            raise ValueError(f"X and y must live on one device, got {X.device} and {y.device}")
        if not (bool(torch.isfinite(X).all()) and bool(torch.isfinite(y).all())):
            raise ValueError("X and y must be finite (they contain NaN or inf)")
        self.N = check_int("N", N, minimum=1)
        self.kappa = check_pos_float("kappa", kappa)
        self.sigma_w2 = check_pos_float("sigma_w2", sigma_w2)
        self.sigma_a2 = check_pos_float("sigma_a2", sigma_a2)
        if chi == "mean-field":
            chi = float(self.N)
        elif chi == "standard":
            chi = 1.0
        self.chi = check_pos_float("chi", chi)
        self.X = X
        self.y = y
        self.P, self.d = X.shape[-2:]
        self.n_sets = None if X.ndim == 2 else X.shape[0]
        self.dim = self.N * self.d + self.N
        self.prec_w = self.d / self.sigma_w2
        self.prec_a = self.chi * self.N / self.sigma_a2
        self.beta = self.P / self.kappa  # likelihood weight of loss = MSE/2: Phi = beta*loss + prior

    def unpack(self, theta):
        """``theta (E, dim)`` -> ``W (E, N, d)``, ``a (E, N)`` (views)."""
        check_theta(theta, self.dim, dtype=self.X.dtype, device=self.X.device)
        E = theta.shape[0]
        W = theta[:, : self.N * self.d].reshape(E, self.N, self.d)
        a = theta[:, self.N * self.d:]
        return W, a

    def sample_prior(self, n_chains: int, *, generator: torch.Generator):
        """Draw ``n_chains`` parameter vectors from the prior (ValueError for an ``n_chains``
        whose draws exceed 16 GiB)."""
        n_chains = check_int("n_chains", n_chains, minimum=1)
        if self.n_sets is not None and n_chains != self.n_sets:
            raise ValueError(f"n_chains must equal the number of training sets {self.n_sets}, "
                             f"got {n_chains}")
        check_alloc(f"n_chains={n_chains} with dim={self.dim}", n_chains * self.dim,
                    itemsize=self.X.element_size(), what="the (n_chains, dim) draws")
        check_generator_on(generator, self.X.device, what="X")
        th = torch.randn((n_chains, self.dim), generator=generator, device=self.X.device,
                         dtype=self.X.dtype)
        th[:, : self.N * self.d] *= math.sqrt(1.0 / self.prec_w)
        th[:, self.N * self.d:] *= math.sqrt(1.0 / self.prec_a)
        return th

    def outputs(self, theta, X=None):
        """Network outputs ``(E, n)`` at inputs X (default: the training set)."""
        W, a = self.unpack(theta)
        if X is None:
            X = self.X
        else:
            if not (torch.is_tensor(X) and X.ndim in (2, 3) and X.shape[-1] == self.d):
                shape = tuple(X.shape) if torch.is_tensor(X) else type(X).__name__
                raise ValueError(f"X must be a tensor of shape (n, {self.d}) or (E, n, {self.d}), "
                                 f"got {shape}")
            if X.dtype != self.X.dtype or not bool(torch.isfinite(X).all()):
                raise ValueError(f"X must be a finite {self.X.dtype} tensor")
        if X.ndim == 3 and X.shape[0] != theta.shape[0]:
            raise ValueError(f"theta must have one row per input set ({X.shape[0]}), "
                             f"got shape {tuple(theta.shape)}")
        H = torch.matmul(X, W.transpose(1, 2))  # (E, n, N); X (n, d) or (E, n, d)
        return torch.einsum("epn,en->ep", torch.erf(H), a)

    def _unpack_rows(self, theta):
        W, a = self.unpack(theta)
        if self.n_sets is not None and theta.shape[0] != self.n_sets:
            raise ValueError(f"theta must have one row per training set ({self.n_sets}), "
                             f"got shape {tuple(theta.shape)}")
        return W, a

    def _beta(self, beta, theta):
        """None, or ``beta`` checked: a float, or an (E,) tensor shaped (E, 1) for broadcasting."""
        b = check_beta(beta, theta.shape[0], dtype=self.X.dtype, device=self.X.device)
        return b.unsqueeze(1) if torch.is_tensor(b) else b

    def grad(self, theta, *, beta=None):
        """``(grad Phi (E, dim), {"loss": training MSE/2 per chain (E,)})``.

        ``Phi = beta * loss + prior``; ``beta``: likelihood weight instead of :attr:`beta`
        ``= P / kappa``, one number > 0 or an (E,) tensor of one weight per chain."""
        W, a = self._unpack_rows(theta)
        b = None if beta is None else self._beta(beta, theta)
        H = torch.matmul(self.X, W.transpose(1, 2))  # (E, P, N)
        S = torch.erf(H)
        f = torch.einsum("epn,en->ep", S, a)
        if b is None:
            r = (f - self.y) / self.kappa  # (E, P)
        else:
            r = (f - self.y) * (b / self.P)
        g_a = torch.einsum("epn,ep->en", S, r) + self.prec_a * a
        GH = r.unsqueeze(-1) * a.unsqueeze(1) * (_TWO_OVER_SQRT_PI * torch.exp(-H * H))
        g_W = torch.matmul(GH.transpose(1, 2), self.X) + self.prec_w * W
        g = torch.cat([g_W.reshape(theta.shape[0], -1), g_a], dim=1)
        loss = 0.5 * torch.mean((f - self.y) ** 2, dim=1)
        return g, {"loss": loss}

    def energy(self, theta, *, beta=None):
        """``Phi = beta * loss + prior`` per chain (E,), loss = training MSE/2 and ``beta``
        (default :attr:`beta` ``= P / kappa``) as in :meth:`grad`."""
        W, a = self._unpack_rows(theta)
        b = self.beta if beta is None else self._beta(beta, theta)
        f = torch.einsum("epn,en->ep", torch.erf(torch.matmul(self.X, W.transpose(1, 2))), a)
        loss = 0.5 * torch.mean((f - self.y) ** 2, dim=1, keepdim=True)
        prior = 0.5 * self.prec_w * (W * W).sum((1, 2)) + 0.5 * self.prec_a * (a * a).sum(1)
        return (b * loss).squeeze(1) + prior

    def overlaps(self, theta):
        """First-layer overlaps with the teacher ``w_i . e_1`` and squared norms ``|w_i|^2``
        (both (E, N)), and the readout ``a`` (E, N)."""
        W, a = self.unpack(theta)
        return W[:, :, 0], (W * W).sum(-1), a
