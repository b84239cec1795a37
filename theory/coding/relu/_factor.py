"""The factor of the input kernel on which the general-data ReLU theory is posed (seed 000,
notes §5.2 last bullet [RECON]; :mod:`._relu_outliers`).

Source: A. van Meegen & H. Sompolinsky, *Coding schemes in neural networks learning
classification tasks*, Nat. Commun. 16, 3354 (2025) (seed 000), main text "Sparse coding
scheme". Preactivations of training inputs live on the range of ``K0 = X^T X / N0``; with
``K0 = B B^T`` a neuron's preactivations are ``z = B w`` and its prior cost is
``z^T K0^+ z = |w|^2``. Shared by the solver (:mod:`._relu_outliers`), its dual ascent
(:mod:`._relu_dual`), its certificate (:mod:`._relu_certificate`) and the public margin search
(:mod:`._relu_margin`).
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

__all__: list[str] = []


class _Factor:
    """A factor K0 = B B^T of the input kernel with preactivations z = B w, |w|^2 = z^T K0^+ z.

    Positive-definite K0 (rank P): the Cholesky factor (B = L, w = L^-1 z; the problem of a
    positive-definite K0 exactly as before singular kernels were accepted). Singular K0 (rank
    r < P by :func:`._problem._range_factor`, eigenvalues <= 1e-10 x the largest dropped): the
    range factor B (P, r) from the eigendecomposition, w = B^+ z, and N (P, P - r) an
    orthonormal basis of the null space (z N = 0 for every preactivation).

    Built from the :class:`._problem.KernelFactor` of K0 (:meth:`from_kernel`, the range factor
    of its one eigendecomposition) or, equivalently, from ``(K0, B, Bpinv, N)``."""

    @classmethod
    def from_kernel(cls, kf):
        """The factor of the kernel factored by ``kf`` (a :class:`._problem.KernelFactor`)."""
        return cls(kf.K0, kf.B, kf.Bpinv, kf.N)

    def __init__(self, K0, B, Bpinv, Nul):
        P, r = B.shape
        self.chol = None
        if r == P:
            try:
                self.chol = np.linalg.cholesky(K0)
            except np.linalg.LinAlgError:
                self.chol = None
        if self.chol is not None:
            B = self.chol
            Bpinv = linalg.solve_triangular(B, np.eye(P), lower=True)
        self.B, self.Bpinv, self.N = B, Bpinv, Nul
        self.P, self.r = P, r
        self.pinv = Bpinv.T @ Bpinv  # K0^+ (K0^-1 when positive definite)
        self.proj = np.eye(P) - Nul @ Nul.T  # projector onto the range of K0
        # (M, E) of the z-stationarity condition ``z M - h E^T = 0`` (see _kkt_pattern)
        self.M = self.pinv + Nul @ Nul.T
        self.E = self.proj

    @property
    def singular(self) -> bool:
        """Whether K0 is singular (rank r < P: the range factor, not the Cholesky factor)."""
        return self.r < self.P

    def to_w(self, Z):
        """Coordinates w (rows) of preactivation rows Z (k, P) (of their range part)."""
        Z = np.atleast_2d(Z)
        if self.chol is not None:
            return linalg.solve_triangular(self.chol, Z.T, lower=True).T
        return Z @ self.Bpinv.T
