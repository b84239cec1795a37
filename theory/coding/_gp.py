"""GP / lazy baseline: NNGP posterior predictor, its variance and generalisation error.

Source: seed 000 supplement D as summarised in our notes ``spec/coding_schemes.md`` §6 ([RECON],
standard NNGP; the paper's exact normalisation of the GP triangles in Fig. 6d is not known, so
``sigma_a2`` is an explicit parameter, default 1 = unscaled lazy prior).

For a network of depth L with hidden prior variances ``sigma_w2`` and readout prior variance
``sigma_a2``, the NNGP kernel is ``K_GP = sigma_a2 * K_L``, where ``K_1 = E[phi(u) phi(v)]`` with
(u, v) ~ N(0, sigma_w2 * K0 block) and ``K_{l+1} = E[phi(u) phi(v)]`` with covariance
``sigma_w2 * K_l``. At T -> 0 the GP posterior on test inputs is

    f_r(x)     = k_GP(x)^T K_GP^{-1} Y[:, r]                 (independent of sigma_a2)
    sigma^2(x) = K_GP(x, x) - k_GP(x)^T K_GP^{-1} k_GP(x)     (the same for every output r)
    eps_r      = mean_mu { [y_mu^r - f_r(x_mu)]^2 + sigma^2(x_mu) }.

Inputs are columns of X (N0 x P) and enter through input kernels (``input_kernel``): K0 (P, P),
the train-vs-test kernel k0 (P, Q) and the test diagonal (Q,); Y is (P, m), one row per training
input, m = number of outputs. :class:`GPPosterior` implements the coding-solution protocol
(:mod:`._protocol`), so it can replace a non-lazy solution in one line (``solve_nngp(K0, Y)``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from .._results import Status
from ..checks import (
    as_float_array,
    as_float_matrix,
    as_psd_matrix,
    check_int,
    check_nonneg_float,
    check_pos_float,
)
from ._problem import _check_targets
from ._protocol import _check_k0, _check_test_diag, _gen_error_args, _mean_squared_error

__all__ = ["GPPosterior", "nngp_posterior", "solve_nngp"]


@dataclass(frozen=True)
class GPPosterior:
    """NNGP posterior at T -> 0 (plus optional observation noise).

    mean : (Q, m)  posterior mean predictor on the test inputs given at construction.
    variance : (Q,)  posterior predictive variance of each output there (no noise term).
    K_train : (P, P), k_cross : (P, Q), k_test_diag : (Q,)  the NNGP kernel blocks used.
    sigma_a2, sigma_w2, depth, activation, noise : the parameters.
    K0 : (P, P), Y : (P, m)  the training input kernel and targets (for new test inputs).
    converged, status, message, nit, residual : the common result fields (read-only; a closed
    form, so always SUCCESS).

    Implements the coding-solution protocol (:mod:`._protocol`): ``predict(k0, k_test_diag)``,
    ``test_kernel(...)`` and ``generalization_error(k0, k_test_diag, Y_test)`` on any test inputs
    (``k_test_diag`` is required: the NNGP kernel of a test input depends on its norm).
    """

    mean: np.ndarray
    variance: np.ndarray
    K_train: np.ndarray
    k_cross: np.ndarray
    k_test_diag: np.ndarray
    sigma_a2: float
    sigma_w2: float
    depth: int
    activation: str
    noise: float
    K0: np.ndarray | None = field(default=None, repr=False)
    Y: np.ndarray | None = field(default=None, repr=False)

    # -- the common result fields (a closed form: always converged) ----------------------------
    @property
    def converged(self) -> bool:
        return True

    @property
    def status(self) -> Status:
        return Status.SUCCESS

    @property
    def message(self) -> str:
        return "closed form (NNGP posterior, Cholesky solve)"

    @property
    def nit(self) -> int:
        return 0

    @property
    def residual(self) -> float:
        return 0.0

    # -- test inputs (coding-solution protocol) --------------------------------------------------
    def _posterior(self, k0, k_test_diag):
        if self.K0 is None or self.Y is None:
            raise ValueError("this GPPosterior was built without K0 and Y; create it with "
                             "nngp_posterior or solve_nngp to evaluate it on new test inputs")
        k0 = _check_k0("k0", k0, self.K0.shape[0])
        kd = _check_test_diag("k_test_diag", k_test_diag, k0.shape[1], required_by="the NNGP")
        _check_cross_kernel("k0", k0, ("diag(K0)", np.diag(self.K0)), ("k_test_diag", kd))
        return _gp_mean_variance(self.K0, self.K_train, self.Y, k0, kd, self.activation,
                                 self.depth, self.sigma_a2, self.sigma_w2)[:2]

    def predict(self, k0, k_test_diag=None) -> np.ndarray:
        """Posterior mean ``f_r(x) = k_GP(x)^T K_GP^{-1} Y[:, r]`` (Q, m) on test inputs with input
        kernels ``k0`` (P, Q) and ``k_test_diag`` (Q,) (notes §6.2)."""
        return self._posterior(k0, k_test_diag)[0]

    def predictive_variance(self, k0, k_test_diag=None) -> np.ndarray:
        """Posterior variance ``sigma^2(x) = K_GP(x, x) - k_GP^T K_GP^{-1} k_GP`` (Q,)."""
        return self._posterior(k0, k_test_diag)[1]

    def test_kernel(self, k0_a, k0_b, K0_ab=None, k_test_diag_a=None,
                    k_test_diag_b=None) -> np.ndarray:
        """Feature kernel of the last hidden layer on test inputs (Qa, Qb): in the lazy
        (GP) limit it is the prior NNGP kernel K_L(x1, x2) (notes §6.2), unchanged by learning
        and without the readout factor sigma_a2. Needs ``K0_ab`` (Qa, Qb) and both diagonals;
        ``k0_a``, ``k0_b`` are only checked (the prior kernel does not involve training data)."""
        P = None if self.K0 is None else self.K0.shape[0]
        if P is not None:
            k0_a = _check_k0("k0_a", k0_a, P)
            k0_b = _check_k0("k0_b", k0_b, P)
        if K0_ab is None:
            raise ValueError("K0_ab (the input kernel between the two sets of test inputs) is "
                             "required by GPPosterior.test_kernel")
        K0_ab = as_float_matrix("K0_ab", K0_ab)
        da = _check_test_diag("k_test_diag_a", k_test_diag_a, K0_ab.shape[0], required_by="the NNGP")
        db = _check_test_diag("k_test_diag_b", k_test_diag_b, K0_ab.shape[1], required_by="the NNGP")
        _check_cross_kernel("K0_ab", K0_ab, ("k_test_diag_a", da), ("k_test_diag_b", db))
        return _propagate(da, K0_ab, db, self.activation, self.depth, self.sigma_w2)[0]

    def _resolve(self, method, k0, k_test_diag, Y_test):
        if k_test_diag is None and Y_test is None:  # old form (Y_test) on the stored test inputs
            warnings.warn(f"GPPosterior.{method}(Y_test) is deprecated; call {method}(k0, "
                          f"k_test_diag, Y_test)", DeprecationWarning, stacklevel=3)
            return self.mean, self.variance, k0
        k0, k_test_diag, Y_test = _gen_error_args("GPPosterior", k0, k_test_diag, Y_test,
                                                  stacklevel=4)
        mean, var = self._posterior(k0, k_test_diag)
        return mean, var, Y_test

    def generalization_error(self, k0, k_test_diag=None, Y_test=None) -> np.ndarray:
        """Per-output ``eps_r = mean_mu ([y - f_r]^2 + sigma^2(x_mu))`` (notes §6.2); ``Y_test``
        (Q, m). The old form ``(Y_test)`` (test inputs of the construction) warns."""
        mean, var, Y_test = self._resolve("generalization_error", k0, k_test_diag, Y_test)
        return _mean_squared_error(mean, Y_test, var)

    def bias_error(self, k0, k_test_diag=None, Y_test=None) -> np.ndarray:
        """Per-output squared bias ``mean_mu [y - f_r]^2`` (the error without the variance)."""
        mean, _, Y_test = self._resolve("bias_error", k0, k_test_diag, Y_test)
        return _mean_squared_error(mean, Y_test)


def _propagate(kaa, kab, kbb, activation, depth, sigma_w2):
    from ..kernels._nngp import nngp_expectation

    Kab, ka, kb = kab, kaa, kbb
    for _ in range(depth):
        Kab = nngp_expectation(sigma_w2 * ka[:, None], sigma_w2 * Kab, sigma_w2 * kb[None, :], activation)
        ka_new = nngp_expectation(sigma_w2 * ka, sigma_w2 * ka, sigma_w2 * ka, activation)
        kb_new = nngp_expectation(sigma_w2 * kb, sigma_w2 * kb, sigma_w2 * kb, activation)
        ka, kb = ka_new, kb_new
    return Kab, ka, kb


def nngp_posterior(
    K0,
    k0_cross,
    k0_test_diag,
    Y,
    *,
    activation: str = "linear",
    depth: int = 1,
    sigma_a2: float = 1.0,
    sigma_w2: float = 1.0,
    noise: float = 0.0,
) -> GPPosterior:
    """NNGP (lazy, infinite-width) posterior predictor (notes §6.2; seed 000 supp. D [RECON]).

    Parameters
    ----------
    K0 : (P, P)       input kernel on training inputs, X^T X / N0 (inputs as columns of X).
    k0_cross : (P, Q) input kernel between training and test inputs, X^T X* / N0.
    k0_test_diag : (Q,) input kernel of each test input with itself, |x*|^2 / N0.
    Y : (P, m)        training targets, one row per training input, m = number of outputs.
    activation : str  one of the closed-form activations of :mod:`richlazy.theory` kernels
                      ("linear", "sigmoid_erf", "erf", "relu").
    depth : int       number of hidden layers L.
    sigma_a2 : float  readout prior variance (scales the variance, not the mean).
    sigma_w2 : float  hidden-layer prior variance.
    noise : float     observation-noise variance added to K_GP's diagonal (0 = interpolation).
    """
    K0 = as_psd_matrix("K0", K0)
    P = K0.shape[0]
    k0_cross = as_float_matrix("k0_cross", k0_cross, allow_1d=True)
    if k0_cross.shape[0] != P:
        raise ValueError(f"k0_cross must have P = {P} rows, got shape {k0_cross.shape}")
    Q = k0_cross.shape[1]
    k0_test_diag = as_float_array("k0_test_diag", k0_test_diag, ndim=1)
    if k0_test_diag.shape != (Q,):
        raise ValueError(f"k0_test_diag must have shape ({Q},), got {k0_test_diag.shape}")
    _check_cross_kernel("k0_cross", k0_cross, ("diag(K0)", np.diag(K0)),
                        ("k0_test_diag", k0_test_diag))
    Y = _check_targets(Y, P)
    depth = check_int("depth", depth, minimum=1)
    sigma_a2 = check_pos_float("sigma_a2", sigma_a2)
    sigma_w2 = check_pos_float("sigma_w2", sigma_w2)
    noise = check_nonneg_float("noise", noise)
    _check_activation_name(activation)

    Kgp = sigma_a2 * _propagate(np.diag(K0).copy(), K0, np.diag(K0).copy(), activation, depth,
                                sigma_w2)[0] + noise * np.eye(P)
    mean, var, kgp, dgp = _gp_mean_variance(K0, Kgp, Y, k0_cross, k0_test_diag, activation, depth,
                                            sigma_a2, sigma_w2)
    return GPPosterior(mean, var, Kgp, kgp, dgp, sigma_a2, sigma_w2, depth, activation, noise,
                       K0=K0, Y=Y)


def _check_activation_name(activation):
    if not isinstance(activation, str):
        raise TypeError(f"activation must be a str, got {type(activation).__name__}")
    from ..kernels._gauss import _check_activation

    _check_activation(activation, allow_callable=False)


def _check_cross_kernel(name, cross, diag_a, diag_b, *, rtol=1e-10):
    """A cross kernel (Qa, Qb) between inputs with self-kernels ``diag_a`` (Qa,) and ``diag_b``
    (Qb,): the diagonals are >= 0 and ``|cross_ij| <= sqrt(a_i b_j)`` (Cauchy-Schwarz), so that
    every 2 x 2 block is a covariance. ``diag_a``/``diag_b`` are (name, values) pairs."""
    for dname, d in (diag_a, diag_b):
        if np.any(d < 0):
            i = int(np.argmin(d))
            raise ValueError(f"{dname} must be >= 0 (squared input norms / N0), got {d[i]:.6g} at "
                             f"index {i}")
    bound = np.sqrt(np.outer(diag_a[1], diag_b[1]))
    excess = np.abs(cross) - bound * (1 + rtol) - 1e-300
    if np.any(excess > 0):
        i, j = np.unravel_index(int(np.argmax(excess)), excess.shape)
        raise ValueError(
            f"{name} is inconsistent with {diag_a[0]} and {diag_b[0]}: |{name}[{i}, {j}]| = "
            f"{abs(cross[i, j]):.6g} exceeds sqrt({diag_a[0]}[{i}] * {diag_b[0]}[{j}]) = "
            f"{bound[i, j]:.6g} (an input kernel satisfies Cauchy-Schwarz)")


def _gp_mean_variance(K0, Kgp, Y, k0_cross, k0_test_diag, activation, depth, sigma_a2, sigma_w2):
    """GP mean (Q, m), variance (Q,), cross kernel k_GP (P, Q) and test diagonal (Q,)."""
    kx, _, dte = _propagate(np.diag(K0).copy(), k0_cross, k0_test_diag, activation, depth, sigma_w2)
    kgp = sigma_a2 * kx
    dgp = sigma_a2 * dte
    try:
        c = np.linalg.cholesky(Kgp)
        # a pivot at round-off level: numerically singular although the factorisation passed
        if np.min(np.diag(c)) ** 2 <= 1e-10 * np.max(np.diag(Kgp)):
            raise np.linalg.LinAlgError
        A = np.linalg.solve(c, kgp)  # c^-1 k
        B = np.linalg.solve(c, Y)
    except np.linalg.LinAlgError:
        # singular NNGP kernel (duplicate or linearly dependent inputs with a linear kernel):
        # the noise-free posterior lives on its range, K^+ in place of K^-1
        lam, V = np.linalg.eigh(Kgp)
        keep = lam > 1e-10 * lam[-1]
        W = V[:, keep] / np.sqrt(lam[keep])  # K^+ = W W^T
        Yr = V[:, keep] @ (V[:, keep].T @ Y)
        if np.max(np.abs(Y - Yr)) > 1e-8 * max(1.0, float(np.max(np.abs(Y)))):
            raise ValueError(
                f"the NNGP kernel on the training inputs is singular (rank {int(keep.sum())} of "
                f"{Kgp.shape[0]}) and Y is not in its range (duplicate or dependent inputs with "
                "different targets); pass noise > 0") from None
        A = W.T @ kgp
        B = W.T @ Y
    mean = A.T @ B
    var = np.maximum(dgp - np.sum(A * A, axis=0), 0.0)
    return mean, var, kgp, dgp


def solve_nngp(
    K0,
    Y,
    *,
    activation: str = "linear",
    depth: int = 1,
    sigma_a2: float = 1.0,
    sigma_w2: float = 1.0,
    noise: float = 0.0,
) -> GPPosterior:
    """NNGP (lazy) posterior from the training data only, to be evaluated on test inputs later
    with the coding-solution protocol (``predict(k0, k_test_diag)``, ...): the GP counterpart of
    ``solve_linear_network(K0, Y)`` (notes §6.2; seed 000 supp. D [RECON]).

    Same parameters as :func:`nngp_posterior` (K0 (P, P) input kernel of the training inputs,
    columns of X; Y (P, m), one row per training input). Its ``mean``/``variance`` fields are
    those on the training inputs themselves (mean = Y, variance = 0 at noise = 0).
    """
    K0 = as_float_matrix("K0", K0)
    return nngp_posterior(K0, K0, np.diag(K0).copy(), Y, activation=activation, depth=depth,
                          sigma_a2=sigma_a2, sigma_w2=sigma_w2, noise=noise)
