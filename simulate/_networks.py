"""Batched ensembles of fully connected networks and their Bayesian posterior (seed 000, Eq. 1).

E independent networks live in one flat parameter tensor ``theta`` of shape (E, D), so a whole
ensemble (chains, seeds, grid points) is one batched matmul. The network is

    z^1(x) = W^1 x / sqrt(N0),    z^l(x) = W^l phi(z^{l-1}(x)) / sqrt(N)   (l = 2..L)
    f(x)   = s * A^T phi(z^L(x)),  s = 1/N (non-lazy, Eq. 1) or 1/sqrt(N) (lazy)

and the posterior (seed 000 Methods, notes §1.2) is ``p(theta) ∝ exp(-Phi(theta))`` with

    Phi = (beta/2) ||Y - F||^2 + ||A||^2 / (2 sigma_a2) + sum_l ||W^l||^2 / (2 sigma_w2),
    beta = N / T  (non-lazy: the rescaled temperature T -> T/N),   beta = 1 / T  (lazy).

Gradients are written out by hand (batched matmuls), not by autograd; a test checks them against
autograd.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ._activations import ACTIVATIONS, activation_pair

__all__ = ["NetworkSpec", "NetworkPosterior", "REGIMES"]

REGIMES = ("nonlazy", "lazy")


@dataclass(frozen=True)
class NetworkSpec:
    """Architecture of one network of the ensemble.

    N0 : input dimension;  N : width of every hidden layer;  L : number of hidden layers;
    m : number of outputs;  activation : one of ``ACTIVATIONS``;
    regime : "nonlazy" (1/N readout, T -> T/N) or "lazy" (1/sqrt(N) readout, T unscaled).
    """

    N0: int
    N: int
    L: int = 1
    m: int = 1
    activation: str = "linear"
    regime: str = "nonlazy"

    def __post_init__(self):
        for name in ("N0", "N", "L", "m"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"{name} must be an int, got {v!r}")
            if v < 1:
                raise ValueError(f"{name} must be >= 1, got {v}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {ACTIVATIONS}, got {self.activation!r}")
        if self.regime not in REGIMES:
            raise ValueError(f"regime must be one of {REGIMES}, got {self.regime!r}")

    @property
    def readout_scale(self) -> float:
        return 1.0 / self.N if self.regime == "nonlazy" else 1.0 / math.sqrt(self.N)

    def shapes(self) -> list[tuple[str, tuple[int, int]]]:
        out = [("W1", (self.N, self.N0))]
        out += [(f"W{l}", (self.N, self.N)) for l in range(2, self.L + 1)]
        out.append(("A", (self.N, self.m)))
        return out

    @property
    def n_params(self) -> int:
        return sum(a * b for _, (a, b) in self.shapes())


def _as_tensor(name, x, device, dtype, ndim):
    if not torch.is_tensor(x):
        try:
            x = torch.as_tensor(x)
        except (TypeError, ValueError, RuntimeError):
            raise TypeError(f"{name} must be an array or tensor, got {type(x).__name__}") from None
    if x.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {tuple(x.shape)}")
    if not torch.all(torch.isfinite(x)):
        raise ValueError(f"{name} must contain only finite values")
    return x.to(device=device, dtype=dtype)


class NetworkPosterior:
    """Posterior ``exp(-Phi)`` of an ensemble of networks on a training set (see module doc).

    Parameters
    ----------
    spec : NetworkSpec
    X : (N0, P) inputs as columns;  Y : (P, m) targets.
    T : float > 0        temperature (rescaled by N in the non-lazy regime).
    sigma_a2 : float > 0 readout prior variance;  sigma_w2 : hidden prior variance (default 1).
    device, dtype : torch device / dtype of the parameters (X, Y are moved there).
    """

    def __init__(self, spec: NetworkSpec, X, Y, *, T: float, sigma_a2: float, sigma_w2: float = 1.0,
                 device="cpu", dtype=torch.float64):
        if not isinstance(spec, NetworkSpec):
            raise TypeError(f"spec must be a NetworkSpec, got {type(spec).__name__}")
        for name, v in (("T", T), ("sigma_a2", sigma_a2), ("sigma_w2", sigma_w2)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
        self.spec = spec
        self.device = torch.device(device)
        self.dtype = dtype
        self.X = _as_tensor("X", X, self.device, dtype, 2)
        self.Y = _as_tensor("Y", Y, self.device, dtype, 2)
        if self.X.shape[0] != spec.N0:
            raise ValueError(f"X must have N0 = {spec.N0} rows (inputs as columns), got shape {tuple(self.X.shape)}")
        P = self.X.shape[1]
        if self.Y.shape != (P, spec.m):
            raise ValueError(f"Y must have shape (P, m) = {(P, spec.m)}, got {tuple(self.Y.shape)}")
        self.P = P
        self.T = float(T)
        self.sigma_a2 = float(sigma_a2)
        self.sigma_w2 = float(sigma_w2)
        self.beta = (spec.N if spec.regime == "nonlazy" else 1.0) / self.T
        self.Yt = self.Y.T.contiguous()  # (m, P)
        self._phi, self._dphi = activation_pair(spec.activation)
        offs, o = {}, 0
        for name, (a, b) in spec.shapes():
            offs[name] = (o, a, b)
            o += a * b
        self._offsets = offs
        self.D = o
        prec = torch.empty(o, device=self.device, dtype=dtype)
        for name, (s, a, b) in offs.items():
            prec[s:s + a * b] = 1.0 / (self.sigma_a2 if name == "A" else self.sigma_w2)
        self.precision = prec  # prior precision of each flat coordinate

    # -- parameter layout ----------------------------------------------------------------------
    def unflatten(self, theta: torch.Tensor) -> dict[str, torch.Tensor]:
        """Views ``{"W1": (E,N,N0), ..., "A": (E,N,m)}`` into the flat (E, D) tensor."""
        E = theta.shape[0]
        return {k: theta[:, s:s + a * b].view(E, a, b) for k, (s, a, b) in self._offsets.items()}

    def flatten(self, params: dict[str, torch.Tensor]) -> torch.Tensor:
        return torch.cat([params[k].reshape(params[k].shape[0], -1) for k in self._offsets], dim=1)

    def sample_prior(self, n_chains: int, *, generator: torch.Generator) -> torch.Tensor:
        """Draw (n_chains, D) parameters from the Gaussian prior."""
        if isinstance(n_chains, bool) or not isinstance(n_chains, int) or n_chains < 1:
            raise ValueError(f"n_chains must be an int >= 1, got {n_chains!r}")
        z = torch.randn(n_chains, self.D, generator=generator, device=self.device, dtype=self.dtype)
        return z * self.precision.rsqrt()

    # -- forward / backward --------------------------------------------------------------------
    def preactivations(self, theta: torch.Tensor, X: torch.Tensor | None = None) -> list[torch.Tensor]:
        """Preactivations ``[z^1, ..., z^L]``, each (E, N, Q), on inputs X (default: training)."""
        p = self.unflatten(theta)
        X = self.X if X is None else X
        zs = [torch.matmul(p["W1"], X) * (1.0 / math.sqrt(self.spec.N0))]
        for l in range(2, self.spec.L + 1):
            zs.append(torch.matmul(p[f"W{l}"], self._phi(zs[-1])) * (1.0 / math.sqrt(self.spec.N)))
        return zs

    def outputs(self, theta: torch.Tensor, X: torch.Tensor | None = None) -> torch.Tensor:
        """Network outputs ``f`` (E, Q, m) on inputs X (default: training inputs)."""
        p = self.unflatten(theta)
        h = self._phi(self.preactivations(theta, X)[-1])
        return torch.matmul(h.transpose(1, 2), p["A"]) * self.spec.readout_scale

    def grad(self, theta: torch.Tensor):
        """Gradient of Phi (E, D) and info ``{"loss": (E,)}`` with loss = ½||Y - F||^2."""
        spec = self.spec
        p = self.unflatten(theta)
        s = spec.readout_scale
        zs = self.preactivations(theta)
        hs = [self._phi(z) for z in zs]
        hL = hs[-1]
        A = p["A"]
        F = torch.matmul(A.transpose(1, 2), hL) * s  # (E, m, P)
        R = F - self.Yt  # residual
        loss = 0.5 * R.square().sum(dim=(1, 2))
        bR = R * (self.beta * s)
        gA = torch.matmul(hL, bR.transpose(1, 2))  # (E, N, m)
        gH = torch.matmul(A, bR)  # (E, N, P)
        grads = {"A": gA}
        for l in range(spec.L, 0, -1):
            gZ = gH if spec.activation == "linear" else gH * self._dphi(zs[l - 1])
            if l == 1:
                grads["W1"] = torch.matmul(gZ, self.X.T) * (1.0 / math.sqrt(spec.N0))
            else:
                Wl = p[f"W{l}"]
                c = 1.0 / math.sqrt(spec.N)
                grads[f"W{l}"] = torch.matmul(gZ, hs[l - 2].transpose(1, 2)) * c
                gH = torch.matmul(Wl.transpose(1, 2), gZ) * c
        g = self.flatten(grads)
        g.addcmul_(theta, self.precision)
        return g, {"loss": loss}

    def energy(self, theta: torch.Tensor) -> torch.Tensor:
        """Phi(theta) per chain, (E,)."""
        F = self.outputs(theta).transpose(1, 2)
        data = 0.5 * self.beta * (F - self.Yt).square().sum(dim=(1, 2))
        return data + 0.5 * (theta.square() * self.precision).sum(dim=1)
