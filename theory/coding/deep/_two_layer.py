"""Self-consistent mean-field solution of a two-hidden-layer (L = 2) sigmoidal network on the
orthonormal toy task (seed 000, notes §2.3 (S1)-(S3), §4.5 [RECON]; Fig. 5's configuration).

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

from dataclasses import dataclass

import numpy as np

from ..._progress import as_progress
from ..._results import SolverStatus, Status, raise_if_failed
from ...checks import as_float_matrix
from ..sigmoid import SigmoidGeneralSolution, solve_sigmoid_general
from ._first_layer import (
    SigmoidFirstLayerSolution,
    _block_kernel,
    _class_blocks,
    _first_layer,
    _symmetric_from_upper,
    conjugate_kernel,
    solve_sigmoid_first_layer,
)
from ._fixed_point import _check_newton_options, _check_problem, _newton_fixed_point, _positive_definite

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


class _TwoLayerMap:
    """The map K_1 -> K_1' over the class-block parameters x = (diagonal (C,), upper triangle
    of the off-diagonal block (C(C+1)/2,))."""

    def __init__(self, labels, Y, sigma_w2, seed, feature_options):
        self.labels, self.Y, self.sigma_w2, self.seed = labels, Y, sigma_w2, seed
        self.C = int(labels.max()) + 1
        self.iu = np.triu_indices(self.C)
        self.options = feature_options
        self.n_evals = 0
        self.start = None  # the last converged feature layer: the next solve continues from it

    def kernel(self, x):
        C = self.C
        return _block_kernel(x[:C], _symmetric_from_upper(x[C:], self.iu, C), self.labels)

    def params(self, K):
        d, B = _class_blocks(K, self.labels, self.C)
        return np.concatenate([d, B[self.iu]])

    def __call__(self, x):
        """(F(x), feature solution, K_tilde, first-layer solution); F is NaN where a step failed."""
        self.n_evals += 1
        K = self.kernel(x)
        if not _positive_definite(K):  # a Newton trial point outside the kernels: rejected
            return np.full_like(x, np.nan), None, None, None
        feat = solve_sigmoid_general(K, self.Y, seed=self.seed, start=self.start, **self.options)
        if not feat.converged:
            return np.full_like(x, np.nan), feat, None, None
        self.start = feat
        Kt = conjugate_kernel(feat)
        first = _first_layer(Kt, self.labels, sigma_w2=self.sigma_w2, codes=False)
        if not first.converged:
            return np.full_like(x, np.nan), feat, Kt, first
        return np.concatenate([first.K_diag, first.K_block[self.iu]]), feat, Kt, first


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
    """Self-consistent mean-field posterior of an L = 2 sigmoidal non-lazy network (T = 0,
    sigma_a^2 = 1/P) on orthonormal inputs: the fixed point of (S2)-(S3) of notes §2.3,

        ``K_1 = <phi(z^1) phi(z^1)^T>_1``  under  ``P(z^1) ∝ N(z^1 | 0, sigma_w2 I) exp(½ phi^T K~_1 phi)``,
        ``K~_1 = K_1^{-1} (<z^2 z^2^T>_2 - K_1) K_1^{-1}``,

    with the feature layer (layer 2) given K_1 solved fluctuation-free (notes §4.4; its z|a
    covariances by Laplace in ``<z^2 z^2^T>``) and layer 1 by the exact field integral of
    :func:`solve_sigmoid_first_layer` (finite class sizes). This mixes a P -> infinity feature
    layer (codes as deltas) with a finite-P first layer: the combination the MT describes for
    Fig. 5 (frozen feature codes, switching layer-1 codes). Solved by Newton's method on the
    class-block parameters of K_1 (forward-difference Jacobian of step ``fd_step``, Broyden
    updates, backtracking on the max-abs residual).

    Parameters
    ----------
    labels : (P,) ints 0..C-1
        Class of each training input (C <= 4; inputs orthonormal, |x|^2 = N0).
    Y : (P, m)
        Targets, one row per training input.
    K1_start : (P, P)
        Starting kernel of layer 1 (projected onto the class-block form), e.g. a sampled
        posterior-mean K_1. It selects the fixed point: the map has several. Starts with the
        class structure of a coded layer 1 (within-class above between-class entries) reached
        the same fixed point at Fig. 5's configuration; from a start without class structure,
        or from the prior (NNGP) kernel of layer 1, layer 1 collapses onto a single code and
        the result is not converged (docs/coding_sigmoid.md).
    sigma_w2 : float
        Prior variance of the first-layer preactivations.
    rtol : float
        Stop when ``max|F(K_1) - K_1| <= rtol * max|K_1|``.
    maxiter : int
        Newton iterations; a refresh of the finite-difference Jacobian (when the Broyden model
        goes stale) uses one of them.
    fd_step : float
        Step of the finite-difference Jacobian.
    seed : int
        Seed of the feature-layer solver's search (the same at every evaluation, so the map
        is deterministic; a Generator would change the map between evaluations and is rejected).
    progress : bool or callable
        Report each Newton iterate.
    throw : bool
        Raise :class:`SolverError` instead of returning a non-converged result.
    """
    Y, lab = _check_problem(labels, Y)
    P = Y.shape[0]
    K0 = as_float_matrix("K1_start", K1_start)
    if K0.shape != (P, P):
        raise ValueError(f"K1_start must be a (P, P) = ({P}, {P}) kernel, got shape {K0.shape}")
    sigma_w2, rtol, fd_step, maxiter, seed = _check_newton_options(sigma_w2, rtol, fd_step, maxiter, seed)
    # validates labels (class sizes, number of classes) before any feature solve
    solve_sigmoid_first_layer(np.zeros((P, P)), lab, sigma_w2=sigma_w2)
    report = as_progress(progress, "solve_sigmoid_two_layer")
    F = _TwoLayerMap(lab, Y, sigma_w2, int(seed), {})
    x = F.params(K0)
    if not _positive_definite(F.kernel(x)):
        raise ValueError("K1_start must be positive definite after its projection onto the class-block "
                         "form (diagonal per class, off-diagonal per pair of classes), got class-block "
                         f"values {np.round(x, 4).tolist()}")
    run = _newton_fixed_point(F, x, rtol=rtol, maxiter=maxiter, fd_step=fd_step, report=report,
                              start_name="K1_start", failure=lambda extra: _failure(extra[0], extra[2]))
    x, hist, gain, status, why = run.x, run.history, run.gain, run.status, run.why
    feat, Kt, first = run.extra
    if first is not None:  # the code fractions, which the map's evaluations leave out
        first = _first_layer(Kt, lab, sigma_w2=sigma_w2, codes=True)
    ok = status == Status.SUCCESS
    if ok:
        msg = (f"fixed point of the L = 2 map after {len(hist) - 1} Newton steps ({F.n_evals} evaluations, "
               f"residual {hist[-1]:.1e}, map gain {gain:.1f}); feature layer: {len(feat.P_gamma)} codes; "
               f"layer 1: {int(np.sum(first.code_fractions > 0.01))} codes above 1 %")
    else:
        msg = f"no fixed point found ({status.name}: {why}); residuals {np.round(hist, 5).tolist()}"
    P_nan = np.full((P, P), np.nan)
    res = SigmoidTwoLayerSolution(
        converged=ok, status=status, message=msg, nit=len(hist) - 1, residual=hist[-1],
        K1=F.kernel(x), first_layer=first, feature=feat, K_tilde=Kt if Kt is not None else P_nan,
        map_gain=gain, history=np.array(hist), labels=lab, Y=Y)
    report(msg, force=True)
    raise_if_failed(res, throw)
    return res


def _failure(feat, first):
    if feat is not None and not feat.converged:
        return f"the feature layer did not converge: {feat.message}"
    if first is not None and not first.converged:
        return f"layer 1 did not converge: {first.message}"
    return "the map returned non-finite values (a kernel that is not positive definite)"
