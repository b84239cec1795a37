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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import (
    as_float_array,
    as_float_matrix,
    check_int,
    check_nonneg_float,
    check_pos_float,
)

__all__ = ["GPPosterior", "nngp_posterior"]


@dataclass(frozen=True)
class GPPosterior:
    """NNGP posterior at T -> 0 (plus optional observation noise).

    mean : (Q, m)  posterior mean predictor on the test inputs.
    variance : (Q,)  posterior predictive variance of each output (no noise term).
    K_train : (P, P), k_cross : (P, Q), k_test_diag : (Q,)  the NNGP kernel blocks used.
    sigma_a2, sigma_w2, depth, activation, noise : the parameters.
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

    def generalization_error(self, Y_test) -> np.ndarray:
        """Per-output ``eps_r = mean_mu ([y - f_r]^2 + sigma^2(x_mu))`` (notes §6.2)."""
        Y_test = as_float_matrix("Y_test", Y_test, allow_1d=True)
        if Y_test.shape != self.mean.shape:
            raise ValueError(f"Y_test must have shape {self.mean.shape} (Q, m), got {Y_test.shape}")
        return np.mean((Y_test - self.mean) ** 2 + self.variance[:, None], axis=0)

    def bias_error(self, Y_test) -> np.ndarray:
        """Per-output squared bias ``mean_mu [y - f_r]^2`` (the error without the variance)."""
        Y_test = as_float_matrix("Y_test", Y_test, allow_1d=True)
        if Y_test.shape != self.mean.shape:
            raise ValueError(f"Y_test must have shape {self.mean.shape} (Q, m), got {Y_test.shape}")
        return np.mean((Y_test - self.mean) ** 2, axis=0)


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
    K0 : (P, P)       input kernel on training inputs, X^T X / N0.
    k0_cross : (P, Q) input kernel between training and test inputs, X^T X* / N0.
    k0_test_diag : (Q,) input kernel of each test input with itself, |x*|^2 / N0.
    Y : (P, m)        training targets.
    activation : str  one of the closed-form activations of :mod:`richlazy.theory` kernels
                      ("linear", "sigmoid_erf", "erf", "relu").
    depth : int       number of hidden layers L.
    sigma_a2 : float  readout prior variance (scales the variance, not the mean).
    sigma_w2 : float  hidden-layer prior variance.
    noise : float     observation-noise variance added to K_GP's diagonal (0 = interpolation).
    """
    K0 = as_float_matrix("K0", K0)
    P = K0.shape[0]
    if K0.shape != (P, P):
        raise ValueError(f"K0 must be square (P x P), got shape {K0.shape}")
    k0_cross = as_float_matrix("k0_cross", k0_cross, allow_1d=True)
    if k0_cross.shape[0] != P:
        raise ValueError(f"k0_cross must have P = {P} rows, got shape {k0_cross.shape}")
    Q = k0_cross.shape[1]
    k0_test_diag = as_float_array("k0_test_diag", k0_test_diag, ndim=1)
    if k0_test_diag.shape != (Q,):
        raise ValueError(f"k0_test_diag must have shape ({Q},), got {k0_test_diag.shape}")
    Y = as_float_matrix("Y", Y, allow_1d=True)
    if Y.shape[0] != P:
        raise ValueError(f"Y must have P = {P} rows, got shape {Y.shape}")
    depth = check_int("depth", depth, minimum=1)
    sigma_a2 = check_pos_float("sigma_a2", sigma_a2)
    sigma_w2 = check_pos_float("sigma_w2", sigma_w2)
    noise = check_nonneg_float("noise", noise)
    if not isinstance(activation, str):
        raise TypeError(f"activation must be a str, got {type(activation).__name__}")

    d = np.diag(K0).copy()
    Ktr, dtr, _ = _propagate(d, K0, d, activation, depth, sigma_w2)
    kx, _, dte = _propagate(d, k0_cross, k0_test_diag, activation, depth, sigma_w2)
    Kgp = sigma_a2 * Ktr + noise * np.eye(P)
    kgp = sigma_a2 * kx
    dgp = sigma_a2 * dte
    try:
        c = np.linalg.cholesky(Kgp)
    except np.linalg.LinAlgError:
        raise ValueError(
            "the NNGP kernel on the training inputs is singular; pass noise > 0 or remove "
            "duplicate training inputs"
        ) from None
    A = np.linalg.solve(c, kgp)  # c^-1 k
    B = np.linalg.solve(c, Y)
    mean = A.T @ B
    var = np.maximum(dgp - np.sum(A * A, axis=0), 0.0)
    return GPPosterior(mean, var, Kgp, kgp, dgp, sigma_a2, sigma_w2, depth, activation, noise)
