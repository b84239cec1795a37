"""Deprecated: the two-hidden-layer (L = 2) sigmoidal network on the orthonormal toy task (seed
000, notes §2.3 (S1)-(S3), §4.5 [RECON]; Fig. 5's configuration) is :func:`solve_sigmoid_deep`
with one starting kernel; :func:`solve_sigmoid_two_layer` is kept for one release as a wrapper
that warns and returns its old result type.

Source: A. van Meegen & H. Sompolinsky, *Coding schemes in neural networks learning
classification tasks*, Nat. Commun. 16, 3354 (2025) (seed 000).

The unknown is the kernel K_1 of layer 1. On orthonormal inputs layer 1's single-neuron
posterior depends on the input only through the class, so a solution's K_1 is class-block: a
diagonal value per class and an off-diagonal value per pair of classes (C + C(C+1)/2 numbers,
9 for three classes). One pass of the map K_1 -> K_1' is

1. the feature layer given K_1: the L = 1 problem with input kernel K_1, fluctuation-free
   (:func:`solve_sigmoid_general`, notes §4.4);
2. its conjugate kernel K~_1 (:func:`conjugate_kernel`, (S3), Laplace covariances);
3. layer 1 under K~_1 (:func:`solve_sigmoid_first_layer`, (S2), exact field integral).

The map has a large gain (its Jacobian's largest singular value is about 30 at Fig. 5's
configuration): a layer-1 neuron's field has one mode per code, and their weights move
exponentially with K~_1. Damped iteration therefore jumps between single-code states; Newton's
method on ``F(K_1) - K_1 = 0`` with a finite-difference Jacobian (Broyden updates between
refreshes) converges in a few steps from a start inside the basin.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..._results import SolverStatus
from ...checks import as_float_matrix
from ..sigmoid import SigmoidGeneralSolution
from ._first_layer import SigmoidFirstLayerSolution, _block_kernel, _class_blocks
from ._fixed_point import _check_problem, _positive_definite
from ._multi_layer import solve_sigmoid_deep

__all__ = ["SigmoidTwoLayerSolution", "solve_sigmoid_two_layer"]


@dataclass(frozen=True)
class SigmoidTwoLayerSolution(SolverStatus):
    """Self-consistent L = 2 sigmoidal network on orthonormal inputs (see
    :func:`solve_sigmoid_two_layer`). P training inputs, C classes.

    Attributes
    ----------
    K1 : (P, P)                 kernel of layer 1 at the fixed point (class-block).
    first_layer : SigmoidFirstLayerSolution   layer 1 under K_tilde (code fractions, kernel);
                                              None if the first evaluation failed before it.
    feature : SigmoidGeneralSolution          the feature layer (layer 2) given K1: its codes
                                              P_gamma, readouts a_gamma, modes z_gamma.
    K_tilde : (P, P)            conjugate kernel of layer 1 from the feature layer.
    map_gain : float            largest singular value of the Jacobian of the map K1 -> K1'
                                (over the class-block parameters) at the last Jacobian refresh;
                                above 1 plain iteration cannot converge.
    history : (nit + 1,)        max-abs residual ``|F(K1) - K1|`` per Newton iterate.
    labels : (P,), Y : (P, m)   the problem.
    """

    K1: np.ndarray
    first_layer: SigmoidFirstLayerSolution
    feature: SigmoidGeneralSolution
    K_tilde: np.ndarray
    map_gain: float
    history: np.ndarray
    labels: np.ndarray
    Y: np.ndarray


def solve_sigmoid_two_layer(
    labels,
    Y,
    *,
    K1_start,
    sigma_w2: float = 1.0,
    rtol: float = 1e-7,
    maxiter: int = 20,
    fd_step: float = 1e-4,
    seed=0,
    progress=False,
    throw: bool = False,
) -> SigmoidTwoLayerSolution:
    """Deprecated (removed in the next release): ``solve_sigmoid_deep(labels, Y, K_start=[K1_start],
    rtol=1e-7, ...)`` solves the same problem with the same iteration and numbers; this wrapper
    warns (DeprecationWarning) and returns the old :class:`SigmoidTwoLayerSolution`
    (``K1 = kernels[0]``, ``K_tilde = K_tildes[0]``).

    The self-consistent mean-field posterior of an L = 2 sigmoidal non-lazy network (T = 0,
    sigma_a^2 = 1/P) on orthonormal inputs, the fixed point of (S2)-(S3) of notes §2.3,

        ``K_1 = <phi(z^1) phi(z^1)^T>_1``  under  ``P(z^1) ∝ N(z^1 | 0, sigma_w2 I) exp(½ phi^T K~_1 phi)``,
        ``K~_1 = K_1^{-1} (<z^2 z^2^T>_2 - K_1) K_1^{-1}``

    (see :func:`solve_sigmoid_deep` for the method and every parameter; ``K1_start`` is its
    single starting kernel, which selects the fixed point: starts with the class structure of a
    coded layer 1 reach the same fixed point at Fig. 5's configuration, while from the prior
    (NNGP) kernel layer 1 collapses onto a single code, docs/coding_sigmoid.md).
    """
    warnings.warn("solve_sigmoid_two_layer is deprecated and will be removed in the next release: use "
                  "solve_sigmoid_deep(labels, Y, K_start=[K1_start], rtol=1e-7) (the same fixed point, "
                  "attributes kernels[0] and K_tildes[0])", DeprecationWarning, stacklevel=2)
    Y, lab = _check_problem(labels, Y)
    P = Y.shape[0]
    K1 = as_float_matrix("K1_start", K1_start)
    if K1.shape != (P, P):
        raise ValueError(f"K1_start must be a (P, P) = ({P}, {P}) kernel, got shape {K1.shape}")
    d, B = _class_blocks(K1, lab, int(lab.max()) + 1)
    if not _positive_definite(_block_kernel(d, B, lab)):
        raise ValueError("K1_start must be positive definite after its projection onto the class-block "
                         "form (diagonal per class, off-diagonal per pair of classes), got diagonals "
                         f"{np.round(d, 4).tolist()} and blocks {np.round(B, 4).tolist()}")
    sol = solve_sigmoid_deep(lab, Y, K_start=[K1], sigma_w2=sigma_w2, rtol=rtol, maxiter=maxiter,
                             fd_step=fd_step, seed=seed, progress=progress, throw=throw)
    return SigmoidTwoLayerSolution(
        converged=sol.converged, status=sol.status, message=sol.message, nit=sol.nit,
        residual=sol.residual, K1=sol.kernels[0], first_layer=sol.first_layer, feature=sol.feature,
        K_tilde=sol.K_tildes[0] if sol.K_tildes else np.full((P, P), np.nan), map_gain=sol.map_gain,
        history=sol.history, labels=sol.labels, Y=sol.Y)
