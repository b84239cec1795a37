"""One protocol for the coding-scheme solutions that predict on test inputs (seed 000).

:class:`~richlazy.theory.LinearNetworkSolution`, :class:`~richlazy.theory.GPPosterior`,
:class:`~richlazy.theory.SigmoidGeneralSolution` and :class:`~richlazy.theory.ReLUOutlierSolution`
share three methods with the same signatures, so that one theory can be swapped for another in
one line::

    f   = sol.predict(k0, k_test_diag)                              # (Q, m)
    K   = sol.test_kernel(k0_a, k0_b, K0_ab, k_test_diag_a, k_test_diag_b)   # (Qa, Qb)
    eps = sol.generalization_error(k0, k_test_diag, Y_test)         # (m,)

Arguments (inputs are columns of X (N0 x P) and of X_test (N0 x Q); ``m`` = number of outputs):

* ``k0 = input_kernel(X, X_test)``: (P, Q) input kernel between the P training inputs (rows) and
  the Q test inputs (columns), ``X^T X_test / N0``;
* ``k_test_diag``: (Q,) input kernel of each test input with itself, ``|x|^2 / N0``. Needed by the
  nonlinear theories (the NNGP and the sigmoid predictor depend on the norm of x); the linear and
  the ReLU-outlier theories accept and ignore it (pass ``None`` if you do not have it);
* ``K0_ab = input_kernel(X_a, X_b)``: (Qa, Qb) input kernel between two sets of test inputs;
* ``Y_test``: (Q, m) targets of the test inputs, one row per test input.

``generalization_error`` is the per-output ``eps_r = mean_mu [y_mu^r - f_r(x_mu)]^2``; for the GP it
adds the predictive variance ``sigma^2(x_mu)`` (seed 000 supplement D / notes §6.2), which the
non-lazy theories do not have (it vanishes in the non-lazy limit, [MT]).
"""

from __future__ import annotations

import warnings
from typing import Protocol, runtime_checkable

import numpy as np

from ..checks import as_float_array, as_float_matrix

__all__ = ["CodingPredictor"]


@runtime_checkable
class CodingPredictor(Protocol):
    """The test-input methods every predicting coding-scheme solution implements (see module)."""

    def predict(self, k0, k_test_diag=None) -> np.ndarray:
        """Mean predictor (Q, m) on the test inputs."""
        ...

    def test_kernel(self, k0_a, k0_b, K0_ab=None, k_test_diag_a=None,
                    k_test_diag_b=None) -> np.ndarray:
        """Posterior-averaged feature kernel (Qa, Qb) on two sets of test inputs."""
        ...

    def generalization_error(self, k0, k_test_diag=None, Y_test=None) -> np.ndarray:
        """Per-output generalisation error (m,)."""
        ...


def _check_k0(name, k0, P):
    """Train-vs-test input kernel (P, Q): one row per training input."""
    k0 = as_float_matrix(name, k0, allow_1d=True)
    if k0.shape[0] != P:
        raise ValueError(f"{name} must have P = {P} rows (k0(x) = X^T x / N0 as columns, "
                         f"input_kernel(X, X_test)), got shape {k0.shape}")
    return k0


def _check_test_diag(name, kd, Q, *, required_by=None):
    """Test-input diagonal (Q,) or None (an error if ``required_by`` names who needs it)."""
    if kd is None:
        if required_by is not None:
            raise ValueError(f"{name} (the input kernel |x|^2/N0 of each test input, shape ({Q},)) "
                             f"is required by {required_by}")
        return None
    kd = as_float_array(name, kd, ndim=1)
    if kd.size != Q:
        raise ValueError(f"{name} must have length Q = {Q} (K0(x, x) of each test input), "
                         f"got {kd.size}")
    return kd


def _gen_error_args(owner, k0, k_test_diag, Y_test, *, stacklevel=3):
    """(k0, k_test_diag, Y_test) from a call of ``generalization_error``; the old two-argument
    form ``(k0, Y_test)`` is accepted with a DeprecationWarning."""
    if Y_test is None:
        if k_test_diag is None:
            raise TypeError(f"{owner}.generalization_error needs (k0, k_test_diag, Y_test)")
        warnings.warn(
            f"{owner}.generalization_error(k0, Y_test) is deprecated; call "
            f"generalization_error(k0, k_test_diag, Y_test) (k_test_diag may be None here)",
            DeprecationWarning, stacklevel=stacklevel)
        return k0, None, k_test_diag
    return k0, k_test_diag, Y_test


def _mean_squared_error(f, Y_test, extra=None):
    """Per-output ``mean_mu [(y - f)^2 + extra_mu]`` with Y_test checked against f (Q, m)."""
    Y_test = as_float_matrix("Y_test", Y_test, allow_1d=True)
    if Y_test.shape != f.shape:
        raise ValueError(f"Y_test must have shape {f.shape} (Q, m), got {Y_test.shape}")
    err = (Y_test - f) ** 2
    if extra is not None:
        err = err + extra[:, None]
    return np.mean(err, axis=0)
