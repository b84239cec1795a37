"""Self-consistent mean-field solution of a deep (L >= 2 hidden layers) sigmoidal network on the
orthonormal toy task (seed 000, notes §2.3 (S1)-(S3), §4.5 [RECON]; Fig. 3's configuration at
L = 3).

Source: A. van Meegen & H. Sompolinsky, *Coding schemes in neural networks learning
classification tasks*, Nat. Commun. 16, 3354 (2025) (seed 000).

The unknowns are the kernels K_1 ... K_{L-1} of the hidden layers below the feature layer, each
class-block on orthonormal inputs. One pass of the map (K_1, ..., K_{L-1}) -> (K_1', ...) is

1. the feature layer L given K_{L-1}, fluctuation-free (:func:`solve_sigmoid_general`), and its
   conjugate kernel K~_{L-1} (:func:`conjugate_kernel`, (S3));
2. for l = L-1 down to 2: the middle layer l under the prior N(0, K_{l-1}) and the tilt K~_l
   (:func:`solve_sigmoid_middle_layer`), giving K_l' (S2) and K~_{l-1} (S3);
3. layer 1 under K~_1 (:func:`solve_sigmoid_first_layer`), giving K_1'.

At L = 2 step 2 is empty: the two-hidden-layer network of Fig. 5 (``solve_sigmoid_two_layer``,
deprecated, is this solver at L = 2). The fixed point is found by Newton's method
(:mod:`._fixed_point`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._progress import as_progress
from ..._results import SolverStatus, Status, raise_if_failed
from ...checks import as_float_matrix, check_int
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
from ._middle import _middle_kernels, solve_sigmoid_middle_layer

__all__ = ["SigmoidDeepSolution", "solve_sigmoid_deep"]


@dataclass(frozen=True)
class SigmoidDeepSolution(SolverStatus):
    """Self-consistent deep sigmoidal network on orthonormal inputs (see
    :func:`solve_sigmoid_deep`). P training inputs, C classes, L hidden layers.

    Attributes
    ----------
    L : int                      number of hidden layers (the feature layer is layer L).
    kernels : tuple of (P, P)    K_1 ... K_{L-1} at the fixed point (class-block).
    first_layer : SigmoidFirstLayerSolution         layer 1 under K~_1 (None if the map failed
                                                    before it).
    middle_layers : tuple of SigmoidMiddleLayerSolution   layers 2 ... L-1 (empty at L = 2).
    feature : SigmoidGeneralSolution                the feature layer given K_{L-1}: its codes
                                                    P_gamma, readouts a_gamma, modes z_gamma.
    K_tildes : tuple of (P, P)   conjugate kernels K~_1 ... K~_{L-1} at the fixed point.
    map_gain : float             largest singular value of the map's Jacobian at the last refresh.
    history : (nit + 1,)         max-abs residual ``|F(K) - K|`` per Newton iterate.
    labels : (P,), Y : (P, m)    the problem.
    """

    L: int
    kernels: tuple
    first_layer: SigmoidFirstLayerSolution
    middle_layers: tuple
    feature: SigmoidGeneralSolution
    K_tildes: tuple
    map_gain: float
    history: np.ndarray
    labels: np.ndarray
    Y: np.ndarray


class _DeepMap:
    """The map over the stacked class-block parameters of K_1 ... K_{L-1}. For L > 2 each kernel
    is parametrised by ``log(d_c - b_cc)`` (its within-class variance per class, which is small
    in coded middle layers: a linear parameter would let Newton steps leave the kernels) and the
    class block b (upper triangle). At L = 2 the parameters are K_1's class-block values
    themselves (diagonal d, upper triangle of b), the coordinates in which Fig. 5's fixed point
    was found, and the image is read from layer 1's class blocks directly; a trial point outside
    the kernels is rejected by the positive-definiteness check (F = NaN, Newton backtracks)."""

    def __init__(self, labels, Y, L, sigma_w2, seed, quad_nodes):
        self.labels, self.Y, self.L = labels, Y, L
        self.sigma_w2, self.seed, self.quad_nodes = sigma_w2, seed, quad_nodes
        self.C = int(labels.max()) + 1
        self.iu = np.triu_indices(self.C)
        self.nb = self.C + self.iu[0].size
        self.n_evals = 0
        self.start = None  # the last converged feature layer: the next solve continues from it

    @property
    def linear(self) -> bool:
        """Whether the parameters are the class-block values themselves (L = 2)."""
        return self.L == 2

    def kernels(self, x):
        C, out = self.C, []
        for i in range(self.L - 1):
            p = x[i * self.nb:(i + 1) * self.nb]
            B = _symmetric_from_upper(p[C:], self.iu, C)
            out.append(_block_kernel(p[:C] if self.linear else np.diag(B) + np.exp(p[:C]), B, self.labels))
        return out

    def params(self, Ks):
        out = []
        for K in Ks:
            d, B = _class_blocks(K, self.labels, self.C)
            if self.linear:
                out.append(np.concatenate([d, B[self.iu]]))
                continue
            with np.errstate(invalid="ignore", divide="ignore"):
                out.append(np.concatenate([np.log(d - np.diag(B)), B[self.iu]]))
        return np.concatenate(out)

    def start_params(self, blocks):
        """The parameters of the starting class blocks ``[(d, B)]``: at L = 2 the blocks
        themselves, for L > 2 those of the kernels they build."""
        if self.linear:
            return np.concatenate([np.concatenate([d, B[self.iu]]) for d, B in blocks])
        return self.params([_block_kernel(d, B, self.labels) for d, B in blocks])

    def __call__(self, x, full=False):
        """(F(x), feature, middle layers, first layer, K~s, why); F is NaN where a step failed
        (``why`` says which). ``full``: the middle layers by :func:`solve_sigmoid_middle_layer`
        (quadrature error check, code fractions); otherwise by the quadrature alone, and the
        middle layers are not returned. A layer solver that raises on a trial kernel far from
        the start (a singular factorisation, no mode found) makes F NaN there too, so Newton
        shortens the step instead of stopping."""
        self.n_evals += 1
        try:
            return self._evaluate(x, full)
        except (np.linalg.LinAlgError, RuntimeError, FloatingPointError) as exc:
            return (np.full_like(x, np.nan), None, (), None, (),
                    f"a layer solver failed at a trial kernel ({type(exc).__name__}: {exc})")

    def _evaluate(self, x, full):
        nan = np.full_like(x, np.nan)
        Ks = self.kernels(x)
        if not all(np.all(np.isfinite(K)) and _positive_definite(K) for K in Ks):
            return nan, None, (), None, (), "a trial kernel that is not positive definite"
        feat = solve_sigmoid_general(Ks[-1], self.Y, seed=self.seed, start=self.start)
        if not feat.converged:
            return nan, feat, (), None, (), f"the feature layer did not converge: {feat.message}"
        self.start = feat
        Kt = conjugate_kernel(feat)
        kts, mids, new = [Kt], [], []
        for l in range(self.L - 1, 1, -1):  # layer l has prior kernel K_{l-1} = Ks[l - 2]
            if full:
                mid = solve_sigmoid_middle_layer(Ks[l - 2], Kt, self.labels, quad_nodes=self.quad_nodes,
                                                 seed=self.seed)
                mids.insert(0, mid)
                if not mid.converged:
                    return nan, feat, tuple(mids), None, tuple(kts), f"middle layer {l}: {mid.message}"
                K_l, Kt = mid.K, mid.K_tilde_below
            else:
                out = _middle_kernels(Ks[l - 2], Kt, self.labels, quad_nodes=self.quad_nodes, seed=self.seed)
                if out is None:
                    return nan, feat, (), None, tuple(kts), (f"middle layer {l}: the class block of its "
                                                             "K_tilde has a negative eigenvalue")
                K_l, Kt = out
            new.insert(0, K_l)
            kts.insert(0, Kt)
        first = _first_layer(Kt, self.labels, sigma_w2=self.sigma_w2, codes=full)
        if not first.converged:
            return nan, feat, tuple(mids), first, tuple(kts), f"layer 1: {first.message}"
        if self.linear:  # layer 1's class blocks as computed, not re-averaged from its kernel
            return (np.concatenate([first.K_diag, first.K_block[self.iu]]), feat, tuple(mids), first,
                    tuple(kts), "")
        return self.params([first.K] + new), feat, tuple(mids), first, tuple(kts), ""


def solve_sigmoid_deep(
    labels,
    Y,
    *,
    K_start,
    sigma_w2: float = 1.0,
    rtol: float = 1e-6,
    maxiter: int = 20,
    fd_step: float = 1e-4,
    quad_nodes: int = 6,
    size_path=None,
    seed=0,
    progress=False,
    throw: bool = False,
) -> SigmoidDeepSolution:
    """Self-consistent mean-field posterior of a sigmoidal non-lazy network with L hidden layers
    (T = 0, sigma_a^2 = 1/P, sigma_l = 1 for l >= 2) on orthonormal inputs: the fixed point of
    (S2)-(S3) of notes §2.3 for every layer below the feature layer,

        ``K_l = <phi(z^l) phi(z^l)^T>_l``,  ``P(z^l) ∝ N(z^l | 0, K_{l-1}) exp(½ phi^T K~_l phi)``
        (``K_0 = sigma_w2 I``),
        ``K~_l = K_l^{-1} (<z^{l+1} z^{l+1 T}>_{l+1} - K_l) K_l^{-1}``,

    with the feature layer L given K_{L-1} fluctuation-free (notes §4.4; Laplace covariances in
    ``<z^L z^L^T>``), the middle layers by the mode-wise field integral of
    :func:`solve_sigmoid_middle_layer` and layer 1 by the exact field grid of
    :func:`solve_sigmoid_first_layer` (both at finite class sizes). Newton's method on the
    class-block parameters of all L - 1 kernels (forward-difference Jacobian, Broyden updates,
    backtracking). At L = 2 (Fig. 5's two hidden layers) it mixes a P -> infinity feature layer
    (codes as deltas) with a finite-P first layer, the combination the MT describes for Fig. 5
    (frozen feature codes, switching layer-1 codes); the Newton parameters are then K_1's
    class-block values, for L > 2 log within-class variances and class blocks.

    Parameters
    ----------
    labels : (P,) ints 0..C-1
        Class of each training input (C <= 4 at L = 2, C <= 3 for L > 2, where the middle
        layers' field has 2C dimensions; inputs orthonormal, |x|^2 = N0).
    Y : (P, m)
        Targets, one row per training input.
    K_start : sequence of L - 1 (P, P) arrays
        Starting kernels K_1 ... K_{L-1} (projected onto the class-block form), e.g. sampled
        posterior means. Their number sets L. They select the fixed point (the map has several),
        as for L = 2.
    sigma_w2 : float
        Prior variance of the first-layer preactivations.
    rtol : float
        Stop when ``max|F(K) - K| <= rtol * max|K|`` over all class-block parameters.
    maxiter : int
        Newton iterations; a refresh of the finite-difference Jacobian (when the Broyden model
        goes stale) uses one of them.
    fd_step : float
        Step of the finite-difference Jacobian.
    quad_nodes : int
        Gauss-Hermite nodes per field dimension of the middle layers (see
        :func:`solve_sigmoid_middle_layer`).
    size_path : sequence of ints or None
        Continuation in the number of training inputs: first solve the same task at these
        smaller total sizes P_1 < P_2 < ... < P (class sizes ``n_c P_k / P`` rounded, at least
        2; the same targets per class), the first from the class blocks of ``K_start``, each
        next one (and finally P) from the fixed point before. On the orthonormal toy task the
        map depends on P only through the class sizes, and its stiffness grows with them: at
        Fig. 3's configuration Newton from sampled kernels finds no fixed point at P = 50, but
        the path (20, 30) reaches it (docs/coding_sigmoid.md). Needs targets that are equal
        within each class. A step of the path without a fixed point is reported in the message,
        and the next step starts from the last fixed point found (or from ``K_start``).
    seed : int
        Seed of the feature-layer and middle-layer searches (the same at every evaluation, so the
        map is deterministic).
    progress : bool or callable
        Report each Newton iterate.
    throw : bool
        Raise :class:`SolverError` instead of returning a non-converged result.
    """
    Y, lab = _check_problem(labels, Y)
    P = Y.shape[0]
    if isinstance(K_start, np.ndarray) and K_start.ndim == 2:
        raise TypeError("K_start must be a sequence of L - 1 kernels (K_1, ..., K_{L-1}), got one "
                        "(P, P) array; pass [K1] for L = 2")
    try:
        starts = [as_float_matrix(f"K_start[{i}]", K) for i, K in enumerate(K_start)]
    except TypeError:
        raise TypeError(f"K_start must be a sequence of (P, P) kernels, got {type(K_start).__name__}"
                        ) from None
    if not starts:
        raise ValueError("K_start must hold at least one kernel (L - 1 >= 1), got none")
    for i, K in enumerate(starts):
        if K.shape != (P, P):
            raise ValueError(f"K_start[{i}] must be a (P, P) = ({P}, {P}) kernel, got shape {K.shape}")
    L = len(starts) + 1
    sigma_w2, rtol, fd_step, maxiter, seed = _check_newton_options(sigma_w2, rtol, fd_step, maxiter, seed)
    quad_nodes = check_int("quad_nodes", quad_nodes, minimum=3)
    if L > 2 and int(lab.max()) + 1 > 3:
        raise ValueError(f"labels must hold at most 3 classes for L > 2 (the middle layers' field has "
                         f"2C dimensions), got {int(lab.max()) + 1}")
    # validates labels (class sizes, number of classes) before any feature solve
    solve_sigmoid_first_layer(np.zeros((P, P)), lab, sigma_w2=sigma_w2)
    report = as_progress(progress, "solve_sigmoid_deep")
    F = _DeepMap(lab, Y, L, sigma_w2, int(seed), quad_nodes)
    blocks = []
    for i, K in enumerate(starts):
        d, B = _class_blocks(K, lab, F.C)
        if np.any(d <= np.diag(B)) or not _positive_definite(_block_kernel(d, B, lab)):
            raise ValueError(f"K_start[{i}] must be positive definite after its projection onto the "
                             "class-block form (diagonal per class, off-diagonal per pair of classes), got "
                             f"diagonals {np.round(d, 4).tolist()} and blocks {np.round(B, 4).tolist()}")
        blocks.append((d, B))
    path = _check_size_path(size_path, lab, Y)
    newton = dict(rtol=rtol, maxiter=maxiter, fd_step=fd_step, failure=lambda extra: extra[-1])
    path_notes = []
    for P_k, lab_k, Y_k in path:
        F_k = _DeepMap(lab_k, Y_k, L, sigma_w2, int(seed), quad_nodes)
        report(f"size path: P = {P_k}, class sizes {np.bincount(lab_k).tolist()}", force=True)
        run_k = _newton_fixed_point(F_k, F_k.params([_block_kernel(d, B, lab_k) for d, B in blocks]),
                                    report=report, start_name="K_start or size_path", **newton)
        if run_k.status == Status.SUCCESS:
            blocks = [_class_blocks(K, lab_k, F.C) for K in F_k.kernels(run_k.x)]
            path_notes.append(f"P = {P_k}: {len(run_k.history) - 1} steps")
        else:
            path_notes.append(f"P = {P_k}: no fixed point ({run_k.status.name}: {run_k.why})")
    x = F.start_params(blocks)
    run = _newton_fixed_point(F, x, report=report, **newton,
                              start_name="K_start or size_path" if path else "K_start")
    x, hist, status, why = run.x, run.history, run.status, run.why
    if status == Status.SUCCESS and L > 2:  # the middle layers in full: quadrature check, codes
        fx, *extra = F(x, full=True)
        if not np.all(np.isfinite(fx)):
            status, why = Status.NUMERICAL_FAILURE, extra[-1]
    else:
        extra = run.extra
    feat, mids, first, kts, _why = extra
    if first is not None and np.all(np.isnan(first.code_fractions)):  # left out by the light map
        first = _first_layer(kts[0], lab, sigma_w2=sigma_w2, codes=True)  # (layer 1 alone, not the map)
    ok = status == Status.SUCCESS
    if ok:
        mid_codes = "; ".join(f"layer {l}: {int(np.sum(m.code_fractions > 0.01))} codes above 1 %"
                              for l, m in enumerate(mids, start=2))
        msg = (f"fixed point of the L = {L} map after {len(hist) - 1} Newton steps ({F.n_evals} evaluations, "
               f"residual {hist[-1]:.1e}, map gain {run.gain:.1f}); feature layer: {len(feat.P_gamma)} "
               f"codes; layer 1: {int(np.sum(first.code_fractions > 0.01))} codes above 1 %"
               + (f"; {mid_codes}" if mid_codes else ""))
    else:
        msg = f"no fixed point found ({status.name}: {why}); residuals {np.round(hist, 5).tolist()}"
    if path_notes:
        msg += "; size path: " + ", ".join(path_notes)
    res = SigmoidDeepSolution(
        converged=ok, status=status, message=msg, nit=len(hist) - 1, residual=hist[-1], L=L,
        kernels=tuple(F.kernels(x)), first_layer=first, middle_layers=tuple(mids), feature=feat,
        K_tildes=tuple(kts), map_gain=run.gain, history=np.array(hist), labels=lab, Y=Y)
    report(msg, force=True)
    raise_if_failed(res, throw)
    return res


def _check_size_path(size_path, lab, Y):
    """[(P_k, labels_k, Y_k)] of the smaller problems of ``size_path`` (see
    :func:`solve_sigmoid_deep`), checked; [] for None."""
    if size_path is None:
        return []
    P = lab.size
    try:
        sizes = [check_int("size_path", P_k, minimum=1) for P_k in size_path]
    except TypeError:
        raise TypeError(f"size_path must be a sequence of ints or None, got {size_path!r}") from None
    if not sizes or any(b <= a for a, b in zip(sizes, sizes[1:], strict=False)) or sizes[-1] >= P:
        raise ValueError(f"size_path must be increasing sizes below P = {P}, got {list(size_path)!r}")
    C = int(lab.max()) + 1
    first = np.array([np.flatnonzero(lab == c)[0] for c in range(C)])
    scale = max(float(np.max(np.abs(Y))), 1e-300)
    if np.max(np.abs(Y - Y[first][lab])) > 1e-12 * scale:
        raise ValueError("size_path needs targets Y that are the same for every input of a class (the "
                         "orthonormal toy task), got rows that differ within a class")
    n = np.bincount(lab, minlength=C)
    out = []
    for P_k in sizes:
        n_k = np.maximum(2, np.rint(n * P_k / P).astype(int))
        lab_k = np.repeat(np.arange(C), n_k)
        out.append((int(n_k.sum()), lab_k, Y[first][lab_k]))
    return out
