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

Input-span projection (``project_inputs=True``). Only the part of W^1 inside span(X) enters the
likelihood: with a thin QR decomposition ``X = Q R`` (Q: N0 x P orthonormal columns), write
``W^1 = Wt Q^T + W_perp`` with ``Wt = W^1 Q`` (N x P). The posterior factorises into a posterior
over (Wt, W^2.., A) and the *prior* over W_perp, because the prior is isotropic. The sampler then
evolves Wt only (``z^1 = Wt R / sqrt(N0)`` on the training inputs; R is diagonal for orthogonal
inputs, which removes the large matrix products altogether), and the W_perp contribution to
preactivations on other inputs, ``W_perp x / sqrt(N0)`` - Gaussian with covariance
``sigma_w2 x_perp^T x'_perp / N0``, independent of everything else - is drawn fresh from a
generator whenever such inputs are evaluated. Posterior expectations at equal times are exactly
those of the full parametrisation; only time correlations of W_perp are not represented. The
projection is used when P < N0 and X has full column rank.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ..checks import (
    as_real_tensor,
    check_alloc,
    check_count,
    check_device,
    check_float_dtype,
    check_generator_on,
    check_int,
    check_pos_float,
    check_theta,
)
from ._activations import ACTIVATIONS, activation_pair
from ._posterior_grad import GradWorkspace, grad_into

__all__ = ["NetworkSpec", "NetworkPosterior", "REGIMES", "check_beta"]

REGIMES = ("nonlazy", "lazy")


def check_beta(beta, n_chains: int, *, dtype: torch.dtype, device, name: str = "beta"):
    """A likelihood weight (inverse temperature) for a potential ``Phi = beta * loss + prior``.

    ``beta`` is either one number for all chains or one value per chain: a finite number > 0
    (numpy scalars and 0-d tensors accepted) is returned as a Python float; a 1-D tensor or
    array of ``n_chains`` finite values > 0 is returned as a tensor of ``dtype`` on ``device``
    (checking its values synchronises a CUDA stream). ``None`` is returned unchanged (the
    potential's own weight)."""
    if beta is None:
        return None
    if isinstance(beta, (torch.Tensor, np.ndarray, list, tuple)) and np.ndim(beta) >= 1:
        b = as_real_tensor(name, beta, dtype=dtype, device=device)
        if b.shape != (n_chains,):
            raise ValueError(f"{name} must be a number or a tensor of shape (E,) = ({n_chains},) "
                             f"(one likelihood weight per chain), got shape {tuple(b.shape)}")
        if not bool((torch.isfinite(b) & (b > 0)).all()):
            raise ValueError(f"{name} must hold finite values > 0 (in {dtype}), got min "
                             f"{float(b.min())}, max {float(b.max())}")
        return b
    return check_pos_float(name, beta)


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
            # numpy integers are accepted and stored as Python ints
            object.__setattr__(self, name, check_int(name, getattr(self, name), minimum=1))
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {ACTIVATIONS}, got {self.activation!r}")
        if self.regime not in REGIMES:
            raise ValueError(f"regime must be one of {REGIMES}, got {self.regime!r}")

    @property
    def readout_scale(self) -> float:
        return 1.0 / self.N if self.regime == "nonlazy" else 1.0 / math.sqrt(self.N)

    def shapes(self, first_in: int | None = None) -> list[tuple[str, tuple[int, int]]]:
        out = [("W1", (self.N, self.N0 if first_in is None else first_in))]
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
    if x.is_complex() or not (x.dtype.is_floating_point or x.dtype in (torch.int32, torch.int64)):
        raise TypeError(f"{name} must hold real numbers, got dtype {x.dtype}")
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
    project_inputs : sample only the part of W^1 inside span(X) (see module doc); then
        ``unflatten(theta)["W1"]`` has shape (E, N, P) and evaluating inputs outside span(X)
        needs a ``generator``. Ignored (``self.projected`` is False) unless P < N0 and X has
        full column rank.
    """

    def __init__(self, spec: NetworkSpec, X, Y, *, T: float, sigma_a2: float, sigma_w2: float = 1.0,
                 device="cpu", dtype=torch.float64, project_inputs: bool = False):
        if not isinstance(spec, NetworkSpec):
            raise TypeError(f"spec must be a NetworkSpec, got {type(spec).__name__}")
        T = check_pos_float("T", T, noun="number")
        sigma_a2 = check_pos_float("sigma_a2", sigma_a2, noun="number")
        sigma_w2 = check_pos_float("sigma_w2", sigma_w2, noun="number")
        if not isinstance(project_inputs, bool):
            raise TypeError(f"project_inputs must be a bool, got {project_inputs!r}")
        self.spec = spec
        self.device = check_device(device)
        self.dtype = dtype = check_float_dtype(dtype)
        self.X = _as_tensor("X", X, self.device, dtype, 2)
        self.Y = _as_tensor("Y", Y, self.device, dtype, 2)
        if self.X.shape[0] != spec.N0:
            raise ValueError(
                f"X must have N0 = {spec.N0} rows (inputs as columns), got shape {tuple(self.X.shape)}"
            )
        P = self.X.shape[1]
        if P < 1:
            raise ValueError("X must hold at least one training input (column), got shape "
                             f"{tuple(self.X.shape)}")
        if self.Y.shape != (P, spec.m):
            raise ValueError(f"Y must have shape (P, m) = {(P, spec.m)}, got {tuple(self.Y.shape)}")
        self.P = P
        self.projected = False
        self._Xdiag = None
        if project_inputs and P < spec.N0:
            Qx, Rx = torch.linalg.qr(self.X)
            d = torch.diagonal(Rx).abs()
            if bool(d.min() > 1e-10 * d.max()):
                self.projected = True
                self._Q = Qx  # (N0, P) orthonormal basis of span(X)
                self._Xin = Rx  # (P, P): coordinates of the training inputs in that basis
                off = Rx - torch.diag(torch.diagonal(Rx))
                # orthogonal up to the QR's rounding (measured: 1.4 eps of the dtype on the toy
                # task); 1e-12 is the float64 threshold, 64 eps float32's (7.6e-6)
                tol = max(1e-12, 64 * torch.finfo(dtype).eps)
                if bool(off.abs().max() <= tol * d.max()):
                    self._Xdiag = torch.diagonal(Rx).clone()  # orthogonal inputs: diagonal
        # the first layer's inputs with 1/sqrt(N0) folded in (training inputs, as the products
        # of the forward and backward passes use them): dense X, or the projected coordinates R
        # (only their diagonal when the inputs are orthogonal)
        c = 1.0 / math.sqrt(spec.N0)
        self._X1_diag = None if self._Xdiag is None else self._Xdiag * c
        self._X1 = (self._Xin if self.projected else self.X) * c
        self._X1T = self._X1.T.contiguous()
        self._workspaces: dict = {}
        self.T = float(T)
        self.sigma_a2 = float(sigma_a2)
        self.sigma_w2 = float(sigma_w2)
        self.beta = (spec.N if spec.regime == "nonlazy" else 1.0) / self.T
        self.Yt = self.Y.T.contiguous()  # (m, P)
        phi, dphi = activation_pair(spec.activation)
        self._phi = phi
        self._dphi = dphi
        offs, o = {}, 0
        for name, (a, b) in spec.shapes(P if self.projected else None):
            offs[name] = (o, a, b)
            o += a * b
        self._offsets = offs
        self.D = o
        prec = torch.empty(o, device=self.device, dtype=dtype)
        for name, (s, a, b) in offs.items():
            prec[s:s + a * b] = 1.0 / (self.sigma_a2 if name == "A" else self.sigma_w2)
        self.precision = prec  # prior precision of each flat coordinate

    # -- parameter layout ----------------------------------------------------------------------

    @property
    def phi(self):
        """The activation phi as a callable on tensors (seed 000 §1.1)."""
        return self._phi

    @property
    def dphi(self):
        """The derivative phi' as a callable on tensors."""
        return self._dphi

    @property
    def input_basis(self) -> torch.Tensor | None:
        """(N0, P) orthonormal basis Q of span(X) when the inputs are projected, else None.

        With projected inputs the first-layer weights act on coordinates in this basis:
        z = W1 (Q^T x) / sqrt(N0) for a test input x with its part orthogonal to span(X) sampled
        from the prior (see :meth:`preactivations`)."""
        return self._Q if self.projected else None

    @property
    def input_coordinates(self) -> torch.Tensor | None:
        """(P, P) coordinates R = Q^T X of the training inputs in :attr:`input_basis` when the
        inputs are projected, else None."""
        return self._Xin if self.projected else None

    @property
    def orthogonal_inputs(self) -> bool:
        """True when the inputs are projected and the training inputs are orthogonal (then
        :attr:`input_coordinates` is diagonal and every first-layer weight drives one training
        preactivation: what :func:`richlazy.simulate.sample_neuron_codes` needs)."""
        return self._X1_diag is not None

    def _theta(self, theta):
        """``theta`` checked to be an (E, D) tensor of the posterior's dtype and device."""
        return check_theta(theta, self.D, dtype=self.dtype, device=self.device)

    def unflatten(self, theta: torch.Tensor) -> dict[str, torch.Tensor]:
        """Views ``{"W1": (E,N,N0), ..., "A": (E,N,m)}`` into the flat (E, D) tensor."""
        check_theta(theta, self.D)
        E = theta.shape[0]
        return {k: theta[:, s:s + a * b].view(E, a, b) for k, (s, a, b) in self._offsets.items()}

    def block_mask(self, *names: str) -> torch.Tensor:
        """(D,) bool tensor, True on the coordinates of the named blocks ("W1", ..., "A"), e.g.
        ``~post.block_mask("A")`` for a hidden-block update (MALA/HMC ``mask=``) beside an exact
        readout draw."""
        if not names:
            raise ValueError(f"names must name at least one block of {list(self._offsets)}")
        mask = torch.zeros(self.D, dtype=torch.bool, device=self.device)
        for n in names:
            if n not in self._offsets:
                raise ValueError(f"names must be blocks of {list(self._offsets)}, got {n!r}")
            s, a, b = self._offsets[n]
            mask[s:s + a * b] = True
        return mask

    def flatten(self, params: dict[str, torch.Tensor]) -> torch.Tensor:
        return torch.cat([params[k].reshape(params[k].shape[0], -1) for k in self._offsets], dim=1)

    def sample_prior(self, n_chains: int, *, generator: torch.Generator) -> torch.Tensor:
        """Draw (n_chains, D) parameters from the Gaussian prior (ValueError for an
        ``n_chains`` whose draws exceed 16 GiB)."""
        n_chains = check_count("n_chains", n_chains, minimum=1)
        check_alloc(f"n_chains={n_chains} with D={self.D}", 2 * n_chains * self.D,
                    itemsize=self.precision.element_size(), what="the (n_chains, D) draws")
        self._check_generator(generator)
        z = torch.randn(n_chains, self.D, generator=generator, device=self.device, dtype=self.dtype)
        return z * self.precision.rsqrt()

    def _check_generator(self, generator):
        check_generator_on(generator, self.device, what="the posterior")

    # -- forward / backward --------------------------------------------------------------------
    def _first_layer(self, W1, X, generator):
        """z^1 on inputs X (N0, Q) for first-layer parameters W1 (E, N, N0 or P)."""
        c = 1.0 / math.sqrt(self.spec.N0)
        if X is None:  # training inputs: the same products as grad
            if self._X1_diag is not None:
                return W1 * self._X1_diag
            return torch.matmul(W1, self._X1)
        if not self.projected:
            return torch.matmul(W1, X) * c
        Xpar = self._Q.T @ X  # (P, Q)
        z = torch.matmul(W1, Xpar) * c
        Xperp = X - self._Q @ Xpar
        scale = float(Xperp.abs().max())
        if scale <= 1e-12 * max(1.0, float(X.abs().max())):
            return z
        if generator is None:
            raise ValueError(
                "inputs outside span(X) need a generator to draw the first-layer weights "
                "orthogonal to the training inputs (project_inputs=True); pass generator="
            )
        C = (Xperp.T @ Xperp) * (self.sigma_w2 / self.spec.N0)  # (Q, Q), same for all neurons
        evals, evecs = torch.linalg.eigh(C)
        root = evecs * evals.clamp_min(0).sqrt()  # C = root root^T
        xi = torch.randn(W1.shape[0], W1.shape[1], C.shape[0], generator=generator,
                         device=W1.device, dtype=W1.dtype)
        return z + xi @ root.T

    def preactivations(self, theta: torch.Tensor, X: torch.Tensor | None = None, *,
                       generator: torch.Generator | None = None) -> list[torch.Tensor]:
        """Preactivations ``[z^1, ..., z^L]``, each (E, N, Q), on inputs X (default: training).

        With ``project_inputs=True``, inputs with components outside span(X) need ``generator``
        (see the module doc)."""
        p = self.unflatten(self._theta(theta))
        if generator is not None:
            self._check_generator(generator)
        if X is not None:
            X = _as_tensor("X", X, self.device, self.dtype, 2)
            if X.shape[0] != self.spec.N0:
                raise ValueError(f"X must have N0 = {self.spec.N0} rows, got shape {tuple(X.shape)}")
        zs = [self._first_layer(p["W1"], X, generator)]
        for l in range(2, self.spec.L + 1):
            zs.append(torch.matmul(p[f"W{l}"], self._phi(zs[-1])) * (1.0 / math.sqrt(self.spec.N)))
        return zs

    def outputs(self, theta: torch.Tensor, X: torch.Tensor | None = None, *,
                generator: torch.Generator | None = None) -> torch.Tensor:
        """Network outputs ``f`` (E, Q, m) on inputs X (default: training inputs)."""
        p = self.unflatten(self._theta(theta))
        h = self._phi(self.preactivations(theta, X, generator=generator)[-1])
        return torch.matmul(h.transpose(1, 2), p["A"]) * self.spec.readout_scale

    #: :meth:`grad` writes into a caller's buffer (``out=``): what the allocation-free samplers
    #: (``langevin_step(..., workspace=)``) look for
    grad_accepts_out = True

    def grad(self, theta: torch.Tensor, *, beta: float | torch.Tensor | None = None,
             out: torch.Tensor | None = None):
        """Gradient of Phi (E, D) and info ``{"loss": (E,)}`` with loss = ½||Y - F||^2, so that
        ``Phi = beta * loss + prior``.

        ``beta``: likelihood weight to use instead of :attr:`beta` (= N/T or 1/T), e.g. the
        weight N/T_s at step s of simulated annealing, as one number > 0 or as an (E,) tensor of
        one weight per chain (replica exchange: every row its own temperature); the prior term
        is unchanged and the posterior object is not modified.

        ``out``: optional (E, D) tensor of the posterior's dtype and device, contiguous and not
        overlapping ``theta``, into which the gradient is written (and returned); None allocates
        it. The intermediates live in a workspace the posterior keeps per ensemble size E (the
        two most recent sizes), so one posterior must not be used from several threads at once.
        Backward pass and what is allocated: :mod:`._posterior_grad`."""
        theta = self._theta(theta)
        E = theta.shape[0]
        beta = self.beta if beta is None else check_beta(beta, E, dtype=self.dtype, device=self.device)
        if out is None:
            out = torch.empty_like(theta)
        else:
            if not torch.is_tensor(out) or out.shape != theta.shape or out.dtype != self.dtype or (
                    out.device != theta.device):
                what = (f"shape {tuple(out.shape)}, {out.dtype} on {out.device}" if torch.is_tensor(out)
                        else type(out).__name__)
                raise ValueError(f"out must be a tensor of theta's shape {tuple(theta.shape)}, "
                                 f"{self.dtype} on {theta.device}, got {what}")
            if not out.is_contiguous() or out.untyped_storage().data_ptr() == (
                    theta.untyped_storage().data_ptr()):
                raise ValueError("out must be a contiguous tensor that does not share memory with theta")
        ws = self._workspaces.get(E)
        if ws is None:
            if len(self._workspaces) >= 2:
                self._workspaces.pop(next(iter(self._workspaces)))
            ws = self._workspaces[E] = GradWorkspace(self.spec, self.P, E, self.dtype, self.device)
        g, loss = grad_into(self, theta, beta, out, ws)
        return g, {"loss": loss}

    def prior_energy(self, theta: torch.Tensor) -> torch.Tensor:
        """The prior part of Phi per chain, ``sum_i theta_i^2 precision_i / 2`` (E,): with the
        ``loss`` that :meth:`grad` returns, ``Phi_beta = beta * loss + prior_energy`` without a
        second forward pass (what the Metropolis-adjusted samplers use)."""
        theta = self._theta(theta)
        return 0.5 * (theta.square() * self.precision).sum(dim=1)

    def energy(self, theta: torch.Tensor, *, beta: float | torch.Tensor | None = None) -> torch.Tensor:
        """Phi(theta) = beta * ½||Y - F||^2 + prior per chain, (E,).

        ``beta``: likelihood weight as in :meth:`grad` (one number > 0 or an (E,) tensor; None:
        :attr:`beta`)."""
        F = self.outputs(self._theta(theta)).transpose(1, 2)
        if beta is None:
            data = 0.5 * self.beta * (F - self.Yt).square().sum(dim=(1, 2))
        else:
            beta = check_beta(beta, theta.shape[0], dtype=self.dtype, device=self.device)
            data = 0.5 * beta * (F - self.Yt).square().sum(dim=(1, 2))
        return data + 0.5 * (theta.square() * self.precision).sum(dim=1)
