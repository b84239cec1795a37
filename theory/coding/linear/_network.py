"""Non-lazy (1/N readout) deep linear Bayesian networks: readout covariance U, kernels, predictor.

Source: A. van Meegen & H. Sompolinsky, *Coding schemes in neural networks learning
classification tasks*, Nat. Commun. 16, 3354 (2025) (seed 000), main text "Linear networks" and
supplement A; our notes ``spec/coding_schemes.md`` §3 and §11. Notation:

* inputs X (N0 x P, columns are inputs), targets Y (P x m, one row per input, m = number of
  outputs), input kernel K0 = X^T X / N0;
* readout prior variance ``sigma_a2`` (paper default P^(-1/L)), hidden prior variances 1;
* ``T`` is the rescaled temperature (T -> T/N in the paper); the theory is T -> 0 unless stated.

Every formula is in the docstring of the function that implements it, with its provenance:
[MT] printed in the main text; [RECON] reconstructed in our notes (checked by residuals / the
sampler); [OURS] derived here from the saddle-point equations (S1)-(S3) of the notes §2.3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from ..._results import SolverStatus, Status, raise_if_failed
from ...checks import (
    as_float_matrix,
    as_psd_matrix,
    check_depth,
    check_int,
    check_nonneg_float,
    check_pos_float,
    check_symmetric,
)
from .._problem import _check_gram, _check_targets
from .._protocol import _check_k0, _check_test_diag, _gen_error_args, _mean_squared_error

__all__ = [
    "input_kernel",
    "default_sigma_a2",
    "solve_U",
    "LinearNetworkSolution",
    "solve_linear_network",
    "LinearSaddleResiduals",
    "linear_saddle_residuals",
]


def input_kernel(X, X2=None):
    """Input kernel ``K0 = X^T X2 / N0`` (seed 000, Eq. for K0 below Eq. 3; [MT]).

    Parameters
    ----------
    X : array (N0, P)
        Inputs as columns.
    X2 : array (N0, Q), optional
        Second set of inputs; defaults to X.

    Inputs so large that ``X^T X2`` overflows are rescaled (by powers of two, exactly); a
    kernel that is itself beyond float64 raises ValueError naming X.
    """
    X = as_float_matrix("X", X)
    X2 = X if X2 is None else as_float_matrix("X2", X2)
    if X2.shape[0] != X.shape[0]:
        raise ValueError(
            f"X2 must have the same input dimension N0 = {X.shape[0]} as X (rows), "
            f"got X2 with shape {X2.shape}"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        K = X.T @ X2 / X.shape[0]
        if not np.all(np.isfinite(K)):
            K = _scaled_gram(X, X2)
    if not np.all(np.isfinite(K)):
        raise ValueError(f"X (with X2) gives an input kernel X^T X2 / N0 beyond float64 (max "
                         f"{np.finfo(float).max:.3g}); largest |X| entry is {np.max(np.abs(X)):.3g}")
    return K


def _scaled_gram(X, X2):
    """``X^T X2 / N0`` with X and X2 first scaled to entries <= 1 by powers of two (exact)."""
    ex = np.frexp(max(float(np.max(np.abs(X))), np.finfo(float).tiny))[1]
    ex2 = np.frexp(max(float(np.max(np.abs(X2))), np.finfo(float).tiny))[1]
    K = np.ldexp(X, -ex).T @ np.ldexp(X2, -ex2) / X.shape[0]
    return np.ldexp(K, ex + ex2)


def default_sigma_a2(P: int, L: int = 1, activation: str = "linear") -> float:
    """The paper's readout prior variance (seed 000 Methods / main text; [MT]).

    ``sigma_a2 = P^(-1/L)`` for linear and ReLU networks, ``sigma_a2 = 1/P`` for the sigmoid-erf
    network at any depth; this keeps the posterior readout norm per neuron O(1).
    """
    P = check_int("P", P, minimum=1)
    L = check_int("L", L, minimum=1)
    if activation in ("linear", "relu"):
        return float(P) ** (-1.0 / L)
    if activation in ("sigmoid_erf", "erf"):
        return 1.0 / P
    raise ValueError(
        f"activation must be one of 'linear', 'relu', 'sigmoid_erf', 'erf', got {activation!r}"
    )


def _largest_root(g: float, sigma_a2: float, L: int, exact: bool) -> float:
    """Largest positive root u of ``u^(L+1) - sigma_a2 u^L - sigma_a2^L g = 0`` (g >= 0).

    Solved in logs, so no power of u or sigma_a2 is formed (nothing overflows at any depth):
    with ``u = s (1 + delta)`` and ``r = g / s`` the equation is
    ``L log1p(delta) + log(delta) = log(r)``, increasing in ``lam = log(delta)``. Leading order:
    ``u = (s^L g)^(1/(L+1)) = s r^(1/(L+1))``.
    """
    s = sigma_a2
    if g <= 0.0:
        return s if exact else 0.0
    log_r = math.log(g) - math.log(s)
    lam_hi = log_r / (L + 1)  # delta = r^(1/(L+1)): the old bracket end u = s + c
    if not exact:
        return s * math.exp(lam_hi)

    # H(lam_hi) >= 0 since log1p(x) >= log(x); H(lam_lo) < 0 since log1p(x) <= x, L e^lam_lo < 1.
    def h(lam):
        return L * math.log1p(math.exp(lam)) + lam - log_r

    lam_lo = min(log_r, -math.log(L)) - 1.0
    lam = optimize.brentq(h, lam_lo, lam_hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=200)
    return s * (1.0 + math.exp(lam))


def solve_U(G, *, sigma_a2: float, L: int = 1, exact: bool = True, rank_rtol: float = 1e-10):
    """Readout posterior covariance U of the deep linear non-lazy network at T = 0.

    Solves, in the eigenbasis ``G = V diag(g) V^T`` of ``G = Y^T K0^{-1} Y`` (m x m),

    * exact (finite sigma_a, [RECON] notes §3.1):  ``U^(L+1) - sigma_a2 U^L = sigma_a2^L G``,
      taking for each eigenvalue the largest positive root u_k; in the null space of G
      (rank-deficient Y) the root is u = sigma_a2 (the prior);
    * leading order in large P ([MT] with the corrected exponent, notes §3.1):
      ``U^(L+1) = sigma_a2^L G``, i.e. ``u_k = (sigma_a2^L g_k)^(1/(L+1))`` (0 in the null space).

    The main text prints ``U^(L+1) = sigma_a2 Y^T K0^{-1} Y``; for L > 1 that lost an exponent
    (see ``spec/PAPERS.md``); both agree for L = 1.

    Returns
    -------
    U : (m, m) array
    u : (m,) eigenvalues of U;  V : (m, m) eigenvectors (columns);  null : (m,) bool mask of
    directions outside range(Y^T) (eigenvalues of G below ``rank_rtol * max(g)``).

    ``G`` must be symmetric (relative 1e-10) and positive semi-definite; ``L`` is at most
    ``MAX_DEPTH`` = 1000. The roots are computed in logs (no overflow at any sigma_a2).
    """
    G = check_symmetric("G", as_float_matrix("G", G), what="G = Y^T K0^{-1} Y")
    sigma_a2 = check_pos_float("sigma_a2", sigma_a2)
    L = check_depth("L", L)
    rank_rtol = check_nonneg_float("rank_rtol", rank_rtol)
    g, V = np.linalg.eigh(G)
    scale = max(float(np.max(np.abs(g))), 0.0)
    if np.min(g) < -1e-8 * max(scale, 1.0):
        raise ValueError(f"G must be positive semi-definite, smallest eigenvalue is {np.min(g):.3g}")
    null = g <= rank_rtol * scale if scale > 0 else np.ones_like(g, dtype=bool)
    g = np.where(null, 0.0, g)
    u = np.array([_largest_root(gk, sigma_a2, L, exact) for gk in g])
    U = (V * u) @ V.T
    return U, u, V, null


@dataclass(frozen=True)
class LinearNetworkSolution(SolverStatus):
    """Mean-field posterior of a deep linear non-lazy network (seed 000 §"Linear networks").

    Attributes
    ----------
    U : (m, m)        readout covariance: each neuron's readout a_i ~ N(0, U) [MT].
    u, V              eigen-decomposition of U (U = V diag(u) V^T).
    range_mask : (m,) True for directions in range(Y^T) (where the learned structure lives).
    t : (P, m)        conjugate (Hubbard-Stratonovich) field; t = K_{L-1}^{-1} Y U^{-1} at T = 0.
    kernels : tuple   K_1 ... K_L on the training inputs (P x P each); K_L is the feature kernel.
    C : tuple         m x m matrices C_l with K_l = K0 + Y C_l Y^T.
    K0, Y             the problem data; sigma_a2, L, T the parameters; ``exact`` the U equation.
    mean_output : (P, m)  posterior-mean training output; equals Y at T = 0, Y - T t at T > 0.

    Implements the coding-solution protocol (:mod:`._protocol`): ``predict``, ``test_kernel``,
    ``generalization_error`` with the same signatures as the GP, sigmoid and ReLU solutions.
    """

    U: np.ndarray
    u: np.ndarray
    V: np.ndarray
    range_mask: np.ndarray
    t: np.ndarray
    kernels: tuple
    C: tuple
    K0: np.ndarray
    Y: np.ndarray
    sigma_a2: float
    L: int
    T: float
    exact: bool
    mean_output: np.ndarray

    # -- helpers on range(Y^T) ---------------------------------------------------------------
    def U_power(self, k: float) -> np.ndarray:
        """``U^k`` restricted to range(Y^T) (pseudo-inverse for k < 0; notes §3.1)."""
        u = np.where(self.range_mask, self.u, 0.0)
        with np.errstate(divide="ignore"):
            uk = np.where(self.range_mask, np.abs(u) ** k if k != 0 else 1.0, 0.0)
        return (self.V * uk) @ self.V.T

    def conditional_mean(self, a) -> np.ndarray:
        """Posterior mean of the feature-layer preactivations given the readout,
        ``E[z^L | a] = Y U^{-1} a`` ([MT]; analog code). ``a`` is (m,) or (n, m) -> (P,) / (n, P).
        At T > 0 (L = 1) this is ``K0 t a`` = ``(Y - T t) U^{-1} a`` ([OURS])."""
        a = np.asarray(a, dtype=float)
        m = self.Y.shape[1]
        if a.shape[-1] != m:
            raise ValueError(f"a must have last dimension m = {m}, got shape {a.shape}")
        B = self._slope()
        return a @ B.T

    def _slope(self) -> np.ndarray:
        if self.T > 0:
            return self.K0 @ self.t if self.L == 1 else self.kernels[-2] @ self.t
        return self.Y @ self.U_power(-1.0)

    # -- test inputs ---------------------------------------------------------------------------
    def predict(self, k0, k_test_diag=None) -> np.ndarray:
        """Mean predictor ``f(x) = Y^T K0^{-1} k0(x)`` ([MT], = GP mean predictor).

        ``k0`` is (P, Q): columns ``k0(x) = X^T x / N0`` (``input_kernel(X, X_test)``). Returns
        (Q, m). At T > 0 (L = 1): ``f(x) = (K0 t U)^T K0^{-1} k0 = U t^T k0`` ([OURS]).
        ``k_test_diag`` (Q,) is accepted for the common protocol and not used.
        """
        k0 = self._check_k0("k0", k0)
        _check_test_diag("k_test_diag", k_test_diag, k0.shape[1])
        if self.T > 0:
            return (k0.T @ self.t) @ self.U
        return np.linalg.solve(self.K0, k0).T @ self.Y

    def test_kernel(self, k0_a, k0_b, K0_ab=None, k_test_diag_a=None, k_test_diag_b=None, *,
                    layer: int | None = None) -> np.ndarray:
        """Posterior-averaged kernel of layer l (default L) on test inputs ([MT], supp. A.2):

        ``K_l(x1, x2) = K0(x1, x2) + f(x1)^T C_l f(x2)`` with ``f = Y^T K0^{-1} k0``, written as
        ``K0(x1, x2) + k0(x1)^T K0^{-1} (K_l - K0) K0^{-1} k0(x2)`` (identical because
        ``K_l - K0 = Y C_l Y^T``). The second form also holds at T > 0 (L = 1), where the
        test preactivation given the training ones is Gaussian with mean k0^T K0^{-1} z [OURS].
        ``k0_a`` (P, Qa), ``k0_b`` (P, Qb) and ``K0_ab`` (Qa, Qb, required) are input kernels;
        the test diagonals are accepted for the common protocol and not used.
        """
        layer = self.L if layer is None else check_int("layer", layer, minimum=1)
        if layer > self.L:
            raise ValueError(f"layer must be in 1..L = {self.L}, got {layer}")
        k0_a = self._check_k0("k0_a", k0_a)
        k0_b = self._check_k0("k0_b", k0_b)
        if K0_ab is None:
            raise ValueError("K0_ab (the input kernel between the two sets of test inputs) is "
                             "required by LinearNetworkSolution.test_kernel")
        K0_ab = as_float_matrix("K0_ab", K0_ab)
        if K0_ab.shape != (k0_a.shape[1], k0_b.shape[1]):
            raise ValueError(
                f"K0_ab must have shape {(k0_a.shape[1], k0_b.shape[1])}, got {K0_ab.shape}"
            )
        _check_test_diag("k_test_diag_a", k_test_diag_a, k0_a.shape[1])
        _check_test_diag("k_test_diag_b", k_test_diag_b, k0_b.shape[1])
        ra = np.linalg.solve(self.K0, k0_a)
        rb = np.linalg.solve(self.K0, k0_b)
        return K0_ab + ra.T @ (self.kernels[layer - 1] - self.K0) @ rb

    def generalization_error(self, k0, k_test_diag=None, Y_test=None) -> np.ndarray:
        """Per-output generalisation error ``eps_r = mean_mu [y_mu^r - f_r(x_mu)]^2`` ([MT]):
        the predictor variance vanishes in the non-lazy limit, so there is no variance term.
        ``Y_test`` (Q, m), one row per test input. The old form ``(k0, Y_test)`` warns."""
        k0, k_test_diag, Y_test = _gen_error_args("LinearNetworkSolution", k0, k_test_diag, Y_test)
        return _mean_squared_error(self.predict(k0, k_test_diag), Y_test)

    def _check_k0(self, name, k0):
        return _check_k0(name, k0, self.K0.shape[0])


def _kernel_coeffs(u, V, mask, sigma_a2, L, exact):
    """m x m matrices C_l, l = 1..L, with K_l = K0 + Y C_l Y^T (notes §3.3, §11).

    exact:   C_l = (sigma_a2^(L-l) U^l - sigma_a2^L) U^-L (U - sigma_a2)^-1   [RECON]
    leading: C_l = sigma_a2^(L-l) U^-(L-l+1)                                   [MT]
    restricted to range(Y^T). Evaluated with x = u / sigma_a2 (>= 1 when exact), as
    ``(x^(l-L) - x^-L) / (sigma_a2 (x - 1))`` and ``x^-(L-l+1) / sigma_a2``, so that no power
    of sigma_a2 is formed; a coefficient beyond float64 raises ValueError.
    """
    s = sigma_a2
    x = u[mask] / s
    Cs = []
    with np.errstate(over="ignore", under="ignore"):
        for ell in range(1, L + 1):
            c = np.zeros_like(u)
            if exact:
                c[mask] = (x ** float(ell - L) - x ** float(-L)) / (s * (x - 1.0))
            else:
                c[mask] = x ** float(-(L - ell + 1)) / s
            if not np.all(np.isfinite(c)):
                raise ValueError(f"the layer kernels overflow float64 at L = {L}, sigma_a2 = {s:.6g} "
                                 f"(readout eigenvalues down to {float(np.min(u[mask])):.3g}); "
                                 f"use a smaller L or a larger sigma_a2")
            Cs.append((V * c) @ V.T)
    return tuple(Cs)


def solve_linear_network(
    K0,
    Y,
    *,
    L: int = 1,
    sigma_a2: float | None = None,
    T: float = 0.0,
    exact: bool = True,
    rtol: float = 1e-12,
    maxiter: int = 200,
    throw: bool = False,
) -> LinearNetworkSolution:
    """Mean-field posterior of a deep linear non-lazy network (seed 000 §Linear networks).

    T = 0 (any depth L), closed form:

    * U from ``U^(L+1) - sigma_a2 U^L = sigma_a2^L G``, ``G = Y^T K0^{-1} Y`` (see :func:`solve_U`);
    * ``a ~ N(0, U)``; ``z^L | a ~ N(Y U^{-1} a, K_{L-1})``; ``z^l ~ N(0, K_l)`` for l < L [MT];
    * ``K_l = K0 + Y C_l Y^T`` with ``C_l -> sigma_a2^(L-l) U^-(L-l+1)`` at leading order [MT];
    * ``t = K_{L-1}^{-1} Y U^{-1}`` [RECON].

    T > 0 (L = 1 only) [OURS, from the saddle point (S1) of the notes §2.3 with the T term kept]:
    integrating z ~ N(0, K0) and a ~ N(0, sigma_a2 I) against exp(a^T t^T z) gives
    ``U = (I/sigma_a2 - t^T K0 t)^{-1}`` and the output constraint ``K0 t U = Y - T t``.
    We eliminate t (for given U the output constraint is a Sylvester equation, solved in the
    eigenbases of K0 and U) and solve the m x m equation ``U (I/sigma_a2 - t(U)^T K0 t(U)) = I``
    with MINPACK's hybrid Powell method (``scipy.optimize.root(method="hybr")``, finite-difference
    Jacobian) from the T = 0 solution. Convergence is judged by the saddle-point residual
    (< 1e-8). The mean training output is then ``Y - T t`` and the kernel
    ``K_1 = K0 + K0 t U t^T K0``.

    Parameters
    ----------
    K0 : (P, P) array      input kernel X^T X / N0 (inputs as columns of X; symmetric positive
                           definite).
    Y : (P, m) array       targets, one row per training input, m = number of outputs (rank
                           deficiency allowed).
    L : int                depth (number of hidden layers), 1 <= L <= 1000 (``MAX_DEPTH``; one
                           P x P kernel is kept per layer).
    sigma_a2 : float       readout prior variance; default ``P^(-1/L)`` (paper's scaling).
    T : float >= 0         rescaled temperature (only L = 1 supports T > 0).
    exact : bool           finite-sigma_a U equation (True) or leading order (False); T = 0 only.
    rtol : float > 0       relative step tolerance of hybr (``xtol``), T > 0 only.
    maxiter : int >= 1     iteration budget for T > 0. One iteration is ``m^2 + 1`` evaluations
                           of the m x m residual (the cost of one finite-difference Jacobian and
                           a step), so hybr gets ``maxfev = maxiter (m^2 + 1)``; ``nit`` reports
                           the evaluations used in these units (rounded up; hybr completes
                           a Jacobian it has started, so it may exceed maxiter by one).
                           Running out gives ``Status.MAX_ITERATIONS``; any other failure
                           ``NUMERICAL_FAILURE``. ``maxiter (m^2 + 1)`` must fit MINPACK's
                           C int (<= 2**31 - 1), else ValueError.
    throw : bool           raise :class:`SolverError` when not converged.

    Raises TypeError for complex or non-numeric K0/Y and non-integer L/maxiter; ValueError for
    non-finite, non-symmetric or non-positive-definite K0, wrong shapes, and out-of-range
    options.
    """
    K0, _ = _check_gram(K0, cholesky=False)
    P = K0.shape[0]
    Y = _check_targets(Y, P)
    L = check_depth("L", L)
    sigma_a2 = default_sigma_a2(P, L) if sigma_a2 is None else check_pos_float("sigma_a2", sigma_a2)
    T = check_nonneg_float("T", T)
    if T > 0 and L != 1:
        raise ValueError(f"T > 0 is implemented for L = 1 only, got L = {L} with T = {T}")
    if T > 0 and not exact:
        raise ValueError("exact=False (leading order) is a T = 0 approximation; use T = 0")
    rtol = check_pos_float("rtol", rtol)
    maxiter = check_int("maxiter", maxiter, minimum=1)
    m = Y.shape[1]
    if maxiter * (m * m + 1) > _MAX_FEV:
        raise ValueError(f"maxiter must be <= {_MAX_FEV // (m * m + 1)} for m={m} outputs (hybr's "
                         f"budget maxiter*(m^2+1) is a C int, <= {_MAX_FEV}), got {maxiter}")
    _check_gram(K0)  # positive definite (after the cheap checks, as before)
    K0inv_Y = np.linalg.solve(K0, Y)
    G = Y.T @ K0inv_Y
    G = 0.5 * (G + G.T)  # symmetric up to round-off; solve_U requires it
    U, u, V, null = solve_U(G, sigma_a2=sigma_a2, L=L, exact=exact)
    mask = ~null
    Cs = _kernel_coeffs(u, V, mask, sigma_a2, L, exact)
    kernels = tuple(K0 + Y @ C @ Y.T for C in Cs)
    Uinv_r = (V * np.where(mask, 1.0 / np.where(mask, u, 1.0), 0.0)) @ V.T
    K_below = K0 if L == 1 else kernels[L - 2]
    t = np.linalg.solve(K_below, Y @ Uinv_r)
    if T == 0.0:
        res = linear_saddle_residuals(K0, Y, t=t, U=U, kernels=kernels, sigma_a2=sigma_a2, T=0.0)
        resid = res.largest
        sol = LinearNetworkSolution(
            converged=True, status=Status.SUCCESS,
            message="closed form" if exact else (
                "leading-order closed form; residual is the distance to the exact saddle point "
                "(O(sigma_a2 / U), not a convergence failure)"),
            nit=0, residual=resid,
            U=U, u=u, V=V, range_mask=mask, t=t, kernels=kernels, C=Cs, K0=K0, Y=Y,
            sigma_a2=sigma_a2, L=L, T=0.0, exact=exact, mean_output=Y.copy(),
        )
        return sol
    return _solve_finite_T(K0, Y, t, sigma_a2, T, rtol, maxiter, throw)


_MAX_FEV = 2**31 - 1  # MINPACK's maxfev is a C int


def _solve_finite_T(K0, Y, t0, sigma_a2, T, rtol, maxiter, throw):
    """L = 1, T > 0: solve K0 t U(t) + T t - Y = 0 with U(t) = (I/sigma_a2 - t^T K0 t)^-1."""
    P, m = Y.shape
    lam, Q = np.linalg.eigh(K0)
    Yq = Q.T @ Y

    # Fixed point in U (m x m): given U, t solves the Sylvester equation K0 t U + T t = Y.
    def t_of_U(U):
        mu, W = np.linalg.eigh(0.5 * (U + U.T))
        tq = (Yq @ W) / (lam[:, None] * mu[None, :] + T)
        return Q @ tq @ W.T

    def F(x):
        U = x.reshape(m, m)
        U = 0.5 * (U + U.T)
        t = t_of_U(U)
        M = np.eye(m) / sigma_a2 - t.T @ K0 @ t
        return (U @ M - np.eye(m)).ravel()

    # initial guess: T = 0 solution U0 = (I/s - t0^T K0 t0)^-1 (restricted where degenerate)
    M0 = np.eye(m) / sigma_a2 - t0.T @ K0 @ t0
    U0 = np.linalg.inv(M0)
    per_iter = m * m + 1  # one finite-difference Jacobian and one step
    sol = optimize.root(F, U0.ravel(), method="hybr", options={"xtol": rtol, "maxfev": maxiter * per_iter})
    U = 0.5 * (sol.x.reshape(m, m) + sol.x.reshape(m, m).T)
    t = t_of_U(U)
    u, V = np.linalg.eigh(U)
    # Convergence is judged by the saddle-point residual itself: hybr's own flag also reports
    # "no progress" when it already sits at the solution within round-off.
    ok = bool(np.all(u > 0))
    mask = np.ones(m, dtype=bool)
    K1 = K0 + K0 @ t @ U @ t.T @ K0
    mean_out = Y - T * t
    res = linear_saddle_residuals(K0, Y, t=t, U=U, kernels=(K1,), sigma_a2=sigma_a2, T=T)
    resid = res.largest
    ok = ok and resid < 1e-8
    # hybr's status 2: "the number of calls to function has reached maxfev" (the budget ran out)
    out_of_budget = getattr(sol, "status", None) == 2 or sol.nfev >= maxiter * per_iter
    if ok:
        status = Status.SUCCESS
        msg = f"converged (hybr, nfev={sol.nfev}, saddle-point residual {resid:.1e})"
    elif out_of_budget:
        status = Status.MAX_ITERATIONS
        msg = (f"finite-T linear solve ran out of maxiter={maxiter} iterations (hybr nfev="
               f"{sol.nfev}; saddle-point residual {resid:.1e}); raise maxiter")
    else:
        status = Status.NUMERICAL_FAILURE
        msg = (f"finite-T linear solve did not converge (saddle-point residual {resid:.1e}; hybr: "
               f"{sol.message}); try a smaller T (got T={T}) or a larger sigma_a2")
    out = LinearNetworkSolution(
        converged=ok, status=status, message=msg,
        nit=-(-int(sol.nfev) // per_iter), residual=resid,
        U=U, u=u, V=V, range_mask=mask, t=t, kernels=(K1,),
        C=(np.linalg.pinv(Y) @ (K1 - K0) @ np.linalg.pinv(Y).T,),
        K0=K0, Y=Y, sigma_a2=sigma_a2, L=1, T=T, exact=True, mean_output=mean_out,
    )
    raise_if_failed(out, throw)
    return out


@dataclass(frozen=True)
class LinearSaddleResiduals:
    """Max-abs residuals of the linear-network saddle-point equations (see
    :func:`linear_saddle_residuals`), each relative to the size of its terms.

    Attributes
    ----------
    readout : float                 the readout equation ``U (I/sigma_a2 - t^T K_{L-1} t) = I`` (on
                                    the range of Y^T).
    output : float                  (S1), the output constraint ``K_{L-1} t U = Y - T t``.
    feature_kernel : float          ``K_L = K_{L-1} + K_{L-1} t U t^T K_{L-1}``.
    lower_layers : tuple of float   (S2)+(S3) for the layers l = 1 ... L-1 (empty for L = 1).
    """

    readout: float
    output: float
    feature_kernel: float
    lower_layers: tuple

    @property
    def largest(self) -> float:
        """The largest of all the residuals."""
        return max((self.readout, self.output, self.feature_kernel, *self.lower_layers))


def linear_saddle_residuals(K0, Y, *, t, U, kernels, sigma_a2, T=0.0) -> LinearSaddleResiduals:
    """Max-abs residuals of the linear-network saddle-point equations (notes §2.3, (S1)-(S3)).

    With ``K_0 = K0`` and hidden prior variances 1, for a linear network of depth L:

    * readout:  ``U (I/sigma_a2 - t^T K_{L-1} t) = I``  (Gaussian integral over z^L, a)
    * (S1) output constraint: ``K_{L-1} t U = Y - T t``
    * feature kernel:  ``K_L = K_{L-1} + K_{L-1} t U t^T K_{L-1}``  (= <z^L z^L^T>)
    * (S2)+(S3) lower layers l < L: ``K_l^{-1} = K_{l-1}^{-1} - Kt_l`` with the conjugate kernel
      ``Kt_l = K_l^{-1} (C_{l+1} - K_l) K_l^{-1}``, C_{l+1} = <z^{l+1} z^{l+1 T}> (= K_{l+1}).

    Returns a :class:`LinearSaddleResiduals`, each relative to the size of its terms. Used as the
    "residual of the U equation" check of the closed forms.
    """
    K0 = as_psd_matrix("K0", K0)
    Y = as_float_matrix("Y", Y, allow_1d=True)
    if Y.shape[0] != K0.shape[0]:
        raise ValueError(f"Y must have P = {K0.shape[0]} rows (one per input of K0), got shape {Y.shape}")
    t = as_float_matrix("t", t, allow_1d=True)
    if t.shape != Y.shape:
        raise ValueError(f"t must have the shape of Y {Y.shape}, got {t.shape}")
    m = Y.shape[1]
    U = as_psd_matrix("U", U)
    if U.shape != (m, m):
        raise ValueError(f"U must be ({m}, {m}) (one row per output), got shape {U.shape}")
    kernels = tuple(as_psd_matrix(f"kernels[{i}]", k) for i, k in enumerate(kernels))
    if not kernels or any(k.shape != K0.shape for k in kernels):
        raise ValueError(f"kernels must be L >= 1 kernels of the shape of K0 {K0.shape}")
    sigma_a2 = check_pos_float("sigma_a2", sigma_a2)
    T = check_nonneg_float("T", T)
    L = len(kernels)
    Ks = (K0,) + kernels
    Kb = Ks[L - 1]
    M = np.eye(m) / sigma_a2 - t.T @ Kb @ t
    # readout equation on range(Y^T) only (U is the prior sigma_a2 elsewhere at T=0)
    Pr = np.linalg.pinv(Y) @ Y
    readout = float(np.max(np.abs(Pr @ (U @ M - np.eye(m)) @ Pr)))
    output = float(np.max(np.abs(Kb @ t @ U - (Y - T * t))) / max(1.0, np.max(np.abs(Y))))
    CL = Kb + Kb @ t @ U @ t.T @ Kb
    feature_kernel = float(np.max(np.abs(CL - Ks[L])) / np.max(np.abs(Ks[L])))
    lower = []
    for ell in range(1, L):
        Kl = Ks[ell]
        Klinv = np.linalg.inv(Kl)
        Kt = Klinv @ (Ks[ell + 1] - Kl) @ Klinv
        lhs = Klinv
        rhs = np.linalg.inv(Ks[ell - 1]) - Kt
        lower.append(float(np.max(np.abs(lhs - rhs)) / np.max(np.abs(lhs))))
    return LinearSaddleResiduals(readout=readout, output=output, feature_kernel=feature_kernel,
                                 lower_layers=tuple(lower))
