"""Two-layer erf networks on Gaussian inputs with a Hermite target, as batched Langevin
ensembles (seed 002, App. B.3 and App. F: Fig. 2 experiments).

Network ``f(x) = sum_i a_i erf(w_i . x)`` with prior ``w ~ N(0, sigma_w2 I/d)``,
``a ~ N(0, sigma_a2/(chi N))`` (chi = 1 standard, chi = N mean-field) and MSE likelihood at ridge
``kappa``; the posterior potential of one chain is

    Phi(W, a) = (1/(2 kappa)) sum_mu (f(x_mu) - y_mu)^2 + (d/(2 sigma_w2)) |W|^2
                + (chi N/(2 sigma_a2)) |a|^2,

the stationary law of Langevin dynamics at temperature kappa with weight decay (spec 1.2).
``E`` independent chains share one training set and are stored as rows of ``theta``
(columns: W row-major (N*d), then a (N)).  The gradient is written out by hand (two batched
matmuls), no autograd.
"""

from __future__ import annotations

import math

import torch

__all__ = ["TwoLayerErfPosterior", "hermite_target_data"]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _check_pos(name, v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
    return float(v)


def _check_int(name, v, minimum=1):
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {v!r}")
    return v


def hermite_target_data(P: int, d: int, *, generator: torch.Generator, degree: int = 3,
                        n_sets: int | None = None, device="cpu", dtype=torch.float64):
    """Gaussian inputs ``X ~ N(0, I)`` and targets ``He_degree(x_1)/sqrt(degree!)`` (teacher
    direction ``w* = e_1``).  Shapes ``(P, d)``/``(P,)``, or ``(n_sets, P, d)``/``(n_sets, P)``
    for one independent training set per chain.  Supported degrees: 1, 3, 5."""
    P = _check_int("P", P)
    d = _check_int("d", d, minimum=2)
    if degree not in (1, 3, 5):
        raise ValueError(f"degree must be 1, 3 or 5, got {degree!r}")
    shape = (P, d) if n_sets is None else (_check_int("n_sets", n_sets), P, d)
    X = torch.randn(shape, generator=generator, device=device, dtype=dtype)
    z = X[..., 0]
    if degree == 1:
        y = z
    elif degree == 3:
        y = (z**3 - 3 * z) / math.sqrt(6)
    else:
        y = (z**5 - 10 * z**3 + 15 * z) / math.sqrt(120)
    return X, y


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
        if not (torch.is_tensor(y) and y.shape == X.shape[:-1]):
            raise ValueError(f"y must be a tensor of shape {tuple(X.shape[:-1])}")
        self.N = _check_int("N", N)
        self.kappa = _check_pos("kappa", kappa)
        self.sigma_w2 = _check_pos("sigma_w2", sigma_w2)
        self.sigma_a2 = _check_pos("sigma_a2", sigma_a2)
        if chi == "mean-field":
            chi = float(self.N)
        elif chi == "standard":
            chi = 1.0
        self.chi = _check_pos("chi", chi)
        self.X = X
        self.y = y
        self.P, self.d = X.shape[-2:]
        self.n_sets = None if X.ndim == 2 else X.shape[0]
        self.dim = self.N * self.d + self.N
        self.prec_w = self.d / self.sigma_w2
        self.prec_a = self.chi * self.N / self.sigma_a2

    def unpack(self, theta):
        """``theta (E, dim)`` -> ``W (E, N, d)``, ``a (E, N)`` (views)."""
        E = theta.shape[0]
        W = theta[:, : self.N * self.d].reshape(E, self.N, self.d)
        a = theta[:, self.N * self.d:]
        return W, a

    def sample_prior(self, n_chains: int, *, generator: torch.Generator):
        """Draw ``n_chains`` parameter vectors from the prior."""
        n_chains = _check_int("n_chains", n_chains)
        if self.n_sets is not None and n_chains != self.n_sets:
            raise ValueError(f"n_chains must equal the number of training sets {self.n_sets}, "
                             f"got {n_chains}")
        th = torch.randn((n_chains, self.dim), generator=generator, device=self.X.device,
                         dtype=self.X.dtype)
        th[:, : self.N * self.d] *= math.sqrt(1.0 / self.prec_w)
        th[:, self.N * self.d:] *= math.sqrt(1.0 / self.prec_a)
        return th

    def outputs(self, theta, X=None):
        """Network outputs ``(E, n)`` at inputs X (default: the training set)."""
        X = self.X if X is None else X
        W, a = self.unpack(theta)
        H = torch.matmul(X, W.transpose(1, 2))  # (E, n, N); X (n, d) or (E, n, d)
        return torch.einsum("epn,en->ep", torch.erf(H), a)

    def grad(self, theta):
        """``(grad Phi (E, dim), {"loss": training MSE/2 per chain (E,)})``."""
        W, a = self.unpack(theta)
        H = torch.matmul(self.X, W.transpose(1, 2))  # (E, P, N)
        S = torch.erf(H)
        f = torch.einsum("epn,en->ep", S, a)
        r = (f - self.y) / self.kappa  # (E, P)
        g_a = torch.einsum("epn,ep->en", S, r) + self.prec_a * a
        GH = r.unsqueeze(-1) * a.unsqueeze(1) * (_TWO_OVER_SQRT_PI * torch.exp(-H * H))
        g_W = torch.matmul(GH.transpose(1, 2), self.X) + self.prec_w * W
        g = torch.cat([g_W.reshape(theta.shape[0], -1), g_a], dim=1)
        loss = 0.5 * torch.mean((f - self.y) ** 2, dim=1)
        return g, {"loss": loss}

    def overlaps(self, theta):
        """First-layer overlaps with the teacher ``w_i . e_1`` and squared norms ``|w_i|^2``
        (both (E, N)), and the readout ``a`` (E, N)."""
        W, a = self.unpack(theta)
        return W[:, :, 0], (W * W).sum(-1), a
