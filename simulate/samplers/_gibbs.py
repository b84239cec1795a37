"""Exact conditional draw of the readout and the blocked-Gibbs step built on it.

Why. In both posteriors the network output is *linear* in the readout, ``F = s H^T A`` with the
features ``H = phi(z^L)`` (E, N, P) of the last hidden layer on the training inputs, and the
readout prior is Gaussian. Given the hidden weights the readout is therefore exactly Gaussian.
Completing the square in the potential of seed 000 (Methods, posterior of Eq. 1; notes §1.2),

    Phi_A = (beta/2) ||Y - s H^T A||^2 + ||A||^2 / (2 v),

column by column (output r = 1..m, the columns are independent and share one covariance)

    A[:, r] | hidden ~ N(mu_r, Sigma),   Sigma^{-1} = beta s^2 H H^T + I_N / v,
                                          mu_r = Sigma beta s H Y[:, r].

The same holds for the two-layer erf network of seed 002 (App. B.3; notes curse_of_detail §B.3):
``f = sum_i a_i erf(w_i . x)`` has ``s = 1``, ``beta = 1/kappa``, ``v = sigma_a2/(chi N)`` and
``H = erf(W X^T)`` (one output, m = 1).

ULA treats the readout like any other coordinate. The Hessian of Phi in the readout block is
``Sigma^{-1}``; at the ULA step ``eps = T dt`` (both regimes) its largest eigenvalue times eps is
``dt lambda_max(K_L) + T dt / v`` with the sampled feature kernel ``K_L = H^T H / N``. For a
non-centred activation ``lambda_max(K_L) ~ P <phi>^2`` (the mean component of the features); for
a linear network on orthogonal inputs it is about ``1 + G/U`` (``G = Y^T K0^{-1} Y``, U the
readout covariance; ~46 on the quick linear toy case against ~0.7 for the hidden weights). Along
that stiff collective mode Euler-Maruyama inflates the stationary variance by
``1 / (1 - eps lambda / 2)`` and diverges beyond ``eps lambda = 2``, so the step must stay far
below a limit set by the readout alone. Redrawing A exactly after every hidden update (blocked
Gibbs) removes the readout from the step-size constraint and its discretisation bias altogether;
what remains is the bias of the hidden step, set by the much softer hidden modes.

Two exact, algebraically identical forms (both jitter-free: the prior term makes the matrices
symmetric positive definite with all eigenvalues >= 1 after scaling by v):

* ``"weight"`` (N x N, cheaper when N <= P): ``M = I_N + c H H^T`` with ``c = beta s^2 v``, so
  ``Sigma = v M^{-1}``; with the Cholesky factor ``M = L L^T``,
  ``mu = v beta s M^{-1} H Y`` and ``A = mu + sqrt(v) L^{-T} xi``, ``xi ~ N(0, I)``
  (``Cov(L^{-T} xi) = (L L^T)^{-1} = M^{-1}``).
* ``"function"`` (P x P, cheaper when N > P), "perturb the prior, then correct" (Matheron's rule
  for jointly Gaussian variables; Hoffman & Ribak 1991, Bhattacharya et al. 2016): draw the model
  forward, ``A0 ~ N(0, v I_N)``, ``Y0 = s H^T A0 + e0/sqrt(beta)`` with ``e0 ~ N(0, I_P)``, and
  correct by the regression of A on the data,

      A = A0 + Cov(A, Y0) Var(Y0)^{-1} (Y - Y0),  Cov(A, Y0) = v s H,
      Var(Y0) = s^2 v H^T H + I_P/beta = M'/beta,  M' = I_P + c H^T H.

  For jointly Gaussian (A0, Y0) the residual ``A0 - E[A0 | Y0]`` is independent of Y0 with the
  conditional covariance, so A has exactly the law of A given Y0 = Y: mean
  ``v s beta H M'^{-1} Y`` (= mu by the push-through identity ``H (I + c H^T H)^{-1} =
  (I + c H H^T)^{-1} H``) and covariance ``v (I_N - c H M'^{-1} H^T)`` (= Sigma by Woodbury).

The two forms draw different random numbers, so they give the same *distribution*, not the same
sample; :func:`readout_conditional` gives the mean and covariance by either form.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, is_dataclass, replace

import torch

from ..checks import check_generator, check_generator_on, check_pos_float
from ..models._erf_posterior import TwoLayerErfPosterior
from ..models._network_posterior import NetworkPosterior

__all__ = ["ReadoutConditional", "gibbs_readout_step", "readout_conditional", "sample_readout"]

METHODS = ("auto", "weight", "function")


@dataclass(frozen=True)
class ReadoutConditional:
    """Gaussian law of the readout given the hidden weights, ``A[:, r] ~ N(mean[:, :, r], cov)``.

    mean : (E, N, m) conditional means (one column per output).
    cov : (E, N, N) conditional covariance shared by the m columns, or None when not asked for.
    trace : (E,) ``tr cov`` (always computed; it is all :meth:`second_moment` needs).
    method : the form used, "weight" (N x N) or "function" (P x P).
    """

    mean: torch.Tensor
    cov: torch.Tensor | None
    trace: torch.Tensor
    method: str

    def second_moment(self) -> torch.Tensor:
        """Rao-Blackwellised readout overlap ``E[A^T A / N | hidden]``, (E, m, m).

        The columns are independent with one covariance, so
        ``E[A^T A]_{rq} = mu_r . mu_q + delta_{rq} tr Sigma``. Averaging this over the hidden
        samples estimates the posterior ``(1/N) sum_i a_i a_i^T`` (U of seed 000 for linear
        networks) with a smaller variance than averaging the sampled A."""
        mu = self.mean
        N, m = mu.shape[1], mu.shape[2]
        eye = torch.eye(m, dtype=mu.dtype, device=mu.device)
        return (mu.transpose(1, 2) @ mu + self.trace[:, None, None] * eye) / N


@dataclass(frozen=True)
class _Block:
    """The linear-Gaussian readout problem of one batch: features H (E, N, P), targets Y
    ((P, m) or (E, P, m)), readout scale s, prior variance v, default likelihood weight."""

    H: torch.Tensor
    Y: torch.Tensor
    s: float
    v: float
    beta: float


def _readout_block(posterior, theta) -> _Block:
    if isinstance(posterior, NetworkPosterior):
        # preactivations checks theta's shape, dtype and device against the model
        H = posterior.phi(posterior.preactivations(theta)[-1])
        return _Block(H, posterior.Y, posterior.spec.readout_scale, posterior.sigma_a2,
                      posterior.beta)
    if isinstance(posterior, TwoLayerErfPosterior):
        W, _ = posterior.unpack(theta)  # checks theta (E, dim), dtype and device
        if posterior.n_sets is not None and theta.shape[0] != posterior.n_sets:
            raise ValueError(f"theta must have one row per training set ({posterior.n_sets}) of the "
                             f"per-chain inputs X, got shape {tuple(theta.shape)}")
        H = torch.erf(torch.matmul(posterior.X, W.transpose(1, 2))).transpose(1, 2)  # (E, N, P)
        return _Block(H, posterior.y.unsqueeze(-1), 1.0, 1.0 / posterior.prec_a,
                      1.0 / posterior.kappa)
    raise TypeError("posterior must be a NetworkPosterior or a TwoLayerErfPosterior, got "
                    f"{type(posterior).__name__}")


def _write_readout(posterior, theta, A) -> torch.Tensor:
    """A copy of ``theta`` with its readout block replaced by ``A`` (E, N, m)."""
    new = theta.clone()
    if isinstance(posterior, NetworkPosterior):
        posterior.unflatten(new)["A"].copy_(A)
    else:
        new[:, posterior.N * posterior.d:] = A[..., 0]
    return new


def _beta_column(beta, default: float, E: int, like: torch.Tensor) -> torch.Tensor:
    """The likelihood weight as an (E, 1, 1) tensor of ``like``'s dtype and device.

    A number (or None: ``default``) is broadcast to all chains through the same tensor path as a
    per-chain (E,) ladder, so a constant ladder reproduces the scalar result bit for bit."""
    if beta is None:
        b = torch.full((E,), default, dtype=like.dtype, device=like.device)
    elif (torch.is_tensor(beta) or hasattr(beta, "__array__")) and getattr(beta, "ndim", 0) >= 1:
        if torch.is_tensor(beta):
            if beta.is_complex() or beta.dtype == torch.bool:
                raise TypeError(f"beta must hold real numbers, got dtype {beta.dtype}")
            b = beta.detach()
        else:
            try:
                b = torch.as_tensor(beta, dtype=torch.float64)
            except (TypeError, ValueError, RuntimeError):
                raise TypeError(f"beta must be a number or a real (E,) tensor, got "
                                f"{type(beta).__name__}") from None
        if b.shape != (E,):
            raise ValueError(f"beta must be a number or a tensor of shape (E,) = ({E},) (one "
                             f"likelihood weight per chain), got shape {tuple(b.shape)}")
        b = b.to(dtype=like.dtype, device=like.device)
        if not bool(torch.all(torch.isfinite(b) & (b > 0))):
            raise ValueError(f"beta must be finite and > 0 for every chain, got {b.tolist()!r:.200}")
    else:
        b = torch.full((E,), check_pos_float("beta", beta), dtype=like.dtype, device=like.device)
    return b.view(E, 1, 1)


def _check_beta_option(beta):
    """A step factory's ``beta``: None, a callable, an (E,) tensor/array (checked per step
    against the chains) or a number > 0 (checked now)."""
    if beta is not None and not callable(beta) and not torch.is_tensor(beta) \
            and not hasattr(beta, "__array__"):
        check_pos_float("beta", beta)


def _check_method(method):
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")


def _pick(method, N, P):
    if method == "auto":
        return "weight" if N <= P else "function"
    return method


def _cholesky(M, what: str, theta_dtype):
    L, info = torch.linalg.cholesky_ex(M)
    bad = info != 0
    if bool(bad.any()):
        chains = torch.nonzero(bad).flatten().tolist()
        raise ValueError(
            f"the Cholesky factorisation of the readout conditional ({what}) failed for chain(s) "
            f"{chains[:10]}{' ...' if len(chains) > 10 else ''}: the features are so large that "
            f"I + c H H^T is not numerically positive definite in {theta_dtype}; use "
            "dtype=torch.float64, a higher temperature (smaller beta) or check the hidden weights "
            "for runaway values"
        )
    return L


def _prepare(posterior, theta, beta, method):
    _check_method(method)
    blk = _readout_block(posterior, theta)
    H = blk.H
    E, N, P = H.shape
    b = _beta_column(beta, blk.beta, E, theta)
    # chains whose features are not finite (a diverged chain) get a NaN readout instead of
    # stopping the whole ensemble; the driver's divergence check then flags them. (A sum is
    # non-finite iff a term is, or the sum overflows: both mean a runaway chain; one reduction.)
    bad = ~torch.isfinite(H.sum(dim=(1, 2)))
    if bool(bad.any()):
        H = torch.where(bad[:, None, None], torch.zeros((), dtype=H.dtype, device=H.device), H)
    return blk, H, b, bad, _pick(method, N, P)


def _conditional(blk, H, b, form, *, extra):
    """mean (E, N, m) and Cholesky factor L; ``extra``: None (nothing more, for a draw),
    "trace" (also tr Sigma (E,)) or "cov" (also Sigma (E, N, N) and its trace)."""
    E, N, P = H.shape
    s, v = blk.s, blk.v
    c = b * (s * s * v)  # (E, 1, 1)
    cov = trace = None
    if form == "weight":
        M = torch.matmul(H, H.transpose(1, 2)) * c
        M.diagonal(dim1=1, dim2=2).add_(1.0)
        L = _cholesky(M, "N x N weight form", H.dtype)
        mean = torch.cholesky_solve(torch.matmul(H, blk.Y) * (b * (s * v)), L)
        if extra is not None:
            eye = torch.eye(N, dtype=H.dtype, device=H.device).expand(E, N, N)
            if extra == "cov":
                cov = torch.cholesky_solve(eye, L) * v  # v M^{-1}
                trace = cov.diagonal(dim1=1, dim2=2).sum(-1)
            else:  # tr(v M^{-1}) = v ||L^{-1}||_F^2
                trace = v * torch.linalg.solve_triangular(L, eye, upper=False).square().sum(dim=(1, 2))
        return mean, L, cov, trace
    M = torch.matmul(H.transpose(1, 2), H) * c
    M.diagonal(dim1=1, dim2=2).add_(1.0)
    L = _cholesky(M, "P x P function form", H.dtype)
    Yb = blk.Y if blk.Y.ndim == 3 else blk.Y.expand(E, P, blk.Y.shape[-1])
    mean = torch.matmul(H, torch.cholesky_solve(Yb.contiguous(), L)) * (b * (v * s))
    if extra is not None:
        # Sigma = v (I - c H M'^{-1} H^T) = v (I - c B^T B) with B = L^{-1} H^T (E, P, N)
        B = torch.linalg.solve_triangular(L, H.transpose(1, 2), upper=False)
        trace = v * (N - c[:, 0, 0] * B.square().sum(dim=(1, 2)))
        if extra == "cov":
            cov = -(c * v) * torch.matmul(B.transpose(1, 2), B)
            cov.diagonal(dim1=1, dim2=2).add_(v)
    return mean, L, cov, trace


def readout_conditional(posterior, theta: torch.Tensor, *, beta=None, method: str = "auto",
                        covariance: bool = True) -> ReadoutConditional:
    """Mean and covariance of the readout given the hidden weights in ``theta`` (see module doc).

    Parameters
    ----------
    posterior : NetworkPosterior or TwoLayerErfPosterior.
    theta : (E, D) parameters; only the hidden block is read.
    beta : likelihood weight: None (the posterior's own, N/T or 1/T; 1/kappa for erf), a number
        > 0, or an (E,) tensor with one weight per chain (a temperature ladder).
    method : "auto" (N x N form when N <= P, else P x P), "weight" or "function".
    covariance : also return the (E, N, N) covariance (else only its trace).
    """
    if not isinstance(covariance, bool):
        raise TypeError(f"covariance must be a bool, got {covariance!r}")
    blk, H, b, bad, form = _prepare(posterior, theta, beta, method)
    mean, _, cov, trace = _conditional(blk, H, b, form, extra="cov" if covariance else "trace")
    if bool(bad.any()):
        nan = torch.full((), float("nan"), dtype=mean.dtype, device=mean.device)
        mean = torch.where(bad[:, None, None], nan, mean)
        trace = torch.where(bad, nan, trace)
        if cov is not None:
            cov = torch.where(bad[:, None, None], nan, cov)
    return ReadoutConditional(mean=mean, cov=cov, trace=trace, method=form)


def sample_readout(posterior, theta: torch.Tensor, *, generator: torch.Generator, beta=None,
                   method: str = "auto") -> torch.Tensor:
    """A copy of ``theta`` whose readout block is an exact draw from p(A | hidden, data).

    Parameters
    ----------
    posterior : NetworkPosterior (readout ``A`` (E, N, m), scale s = 1/N non-lazy or 1/sqrt(N)
        lazy, prior variance sigma_a2, default weight N/T or 1/T) or TwoLayerErfPosterior
        (readout ``a`` (E, N), s = 1, prior variance sigma_a2/(chi N), default weight 1/kappa;
        shared X (P, d) or per-chain X (E, P, d)).
    theta : (E, D) parameters of the posterior's dtype and device; not modified.
    generator : torch.Generator on theta's device type (the only source of randomness).
    beta : None (the posterior's weight), a number > 0, or an (E,) tensor of per-chain weights
        (temperature ladder; a constant ladder gives bit-identical draws to the number).
    method : "auto" (N x N Cholesky when N <= P, else the P x P "perturb then correct" form),
        "weight" or "function" (see the module doc; same law, different random numbers).

    A chain whose features are not finite gets a NaN readout (the driver flags it as diverged).
    Raises ValueError naming what to change when a Cholesky factorisation fails.
    """
    check_generator(generator)
    if torch.is_tensor(theta):
        check_generator_on(generator, theta.device, what="theta")
    blk, H, b, bad, form = _prepare(posterior, theta, beta, method)
    E, N, P = H.shape
    m = blk.Y.shape[-1]
    mean, L, _, _ = _conditional(blk, H, b, form, extra=None)
    v, s = blk.v, blk.s
    if form == "weight":
        xi = torch.randn((E, N, m), generator=generator, device=H.device, dtype=H.dtype)
        A = mean + math.sqrt(v) * torch.linalg.solve_triangular(L.transpose(1, 2), xi, upper=True)
    else:
        A0 = torch.randn((E, N, m), generator=generator, device=H.device, dtype=H.dtype) * math.sqrt(v)
        e0 = torch.randn((E, P, m), generator=generator, device=H.device, dtype=H.dtype)
        # Y - Y0 with Y0 = s H^T A0 + e0 / sqrt(beta); mean already holds v s beta H M'^{-1} Y
        R0 = s * torch.matmul(H.transpose(1, 2), A0) + e0 * b.rsqrt()
        A = A0 + mean - torch.matmul(H, torch.cholesky_solve(R0, L)) * (b * (v * s))
    if bool(bad.any()):
        A = torch.where(bad[:, None, None], torch.full((), float("nan"), dtype=A.dtype,
                                                       device=A.device), A)
    return _write_readout(posterior, theta, A)


def gibbs_readout_step(posterior, hidden_step: Callable, *, beta=None, method: str = "auto",
                       refresh: Callable | None = None) -> Callable:
    """Blocked-Gibbs step for :func:`richlazy.simulate.run_chain`: hidden move, then exact readout.

    Returns the pure step ``(state, generator) -> (state, info)``: it calls
    ``hidden_step(state, generator)``, replaces the readout block of the new ``state.theta`` by an
    exact draw of :func:`sample_readout` from the same generator (``dataclasses.replace`` on
    ``theta``, so the state keeps its dataclass type and step count), applies ``refresh`` and
    returns the hidden step's ``info``.

    Correctness. Each block update must leave p(hidden, A) invariant; the readout draw does so
    exactly. The hidden update must leave p(hidden | A) invariant:

    * a ULA step on the full theta (``langevin_step``) qualifies up to its own O(eps) bias: the
      hidden coordinates of the step use the gradient of Phi at the current (hidden, A), which is
      the gradient of the conditional, so the hidden part *is* a ULA step of p(hidden | A); the
      readout it moves is then overwritten. The stiff readout mode no longer limits the step size
      and contributes no discretisation bias;
    * a Metropolis-adjusted step (MALA, HMC) must move only the hidden block (a mask of the
      hidden coordinates): an accept/reject on the joint move would target the joint law with A
      moved by the integrator, not the conditional, and would then be undone by the redraw.

    Parameters
    ----------
    posterior : NetworkPosterior or TwoLayerErfPosterior that the hidden step samples.
    hidden_step : ``(state, generator) -> (state, info)`` advancing ``state.step`` by one.
    beta : likelihood weight of the readout draw: None (the posterior's), a number, an (E,)
        tensor, or a callable ``step -> weight`` of the step count *before* the step (for
        annealing, matching a hidden step that anneals by the same count).
    method : "auto", "weight" or "function" (see :func:`sample_readout`).
    refresh : optional ``state -> state`` applied after the readout draw, e.g. a sampler's
        ``mcmc_refresh`` that recomputes an energy/gradient cached in its state.
    """
    if not isinstance(posterior, (NetworkPosterior, TwoLayerErfPosterior)):
        raise TypeError("posterior must be a NetworkPosterior or a TwoLayerErfPosterior, got "
                        f"{type(posterior).__name__}")
    if not callable(hidden_step):
        raise TypeError("hidden_step must be callable (state, generator) -> (state, info), got "
                        f"{type(hidden_step).__name__}")
    if refresh is not None and not callable(refresh):
        raise TypeError(f"refresh must be callable state -> state or None, got {type(refresh).__name__}")
    _check_method(method)
    _check_beta_option(beta)

    def step(state, generator):
        b = beta(int(state.step)) if callable(beta) else beta
        new, info = hidden_step(state, generator)
        if not is_dataclass(new) or not torch.is_tensor(getattr(new, "theta", None)):
            raise TypeError("hidden_step must return (state, info) with a dataclass state holding "
                            f"a theta tensor, got {type(new).__name__}")
        theta = sample_readout(posterior, new.theta, generator=generator, beta=b, method=method)
        new = replace(new, theta=theta)
        if refresh is not None:
            new = refresh(new)
        return new, info

    return step
