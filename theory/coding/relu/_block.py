"""Bulk plus outliers of a ReLU feature layer whose prior kernel is class-block (seed 000, notes
§5.2 [RECON], extended here [OURS]).

Source: A. van Meegen & H. Sompolinsky, *Coding schemes in neural networks learning
classification tasks*, Nat. Commun. 16, 3354 (2025) (seed 000), main text "Sparse coding scheme";
the L = 1 equations are the reconstruction of the notes §5.2 (supplement C was not available).

The toy theory (:mod:`._relu_toy`) needs orthonormal inputs (K = I), where the bulk's tilted
integral factorises over inputs. On the orthogonal toy task every kernel of a deeper network is,
by the permutation symmetry within classes, **class-block**:

    K_{mu nu} = s_c delta_{mu nu} + q_{c c'}      (mu in class c, nu in class c'),

s_c > 0 the within-class "private" variance and q (k x k, PSD) the class covariance. Then a
preactivation vector is ``z_mu = g_c + sqrt(s_c) xi_mu`` with class fields g ~ N(0, q) and
i.i.d. xi, and the bulk integral reduces exactly to a k-dimensional one [OURS]:

    Z(h) = int N(z|0,K) exp(sum_mu h_mu relu(z_mu)) dz
         = E_g exp(sum_c n_c psi_s(h_c, g_c, s_c)),
    psi_s(h, g, s) = log E_xi exp(h relu(g + sqrt(s) xi))
                   = log[Phi_N(-g/sqrt s) + exp(h g + h^2 s/2) Phi_N((g + h s)/sqrt s)],

(h_c = t_c . a on class c), done by Gauss-Hermite quadrature over the prior of g. For g = 0 and
s = 1, psi_s is the toy's psi_R. With the readout prior variance sigma_a2 = 1/P_s:

* bulk readout ``a_0 = argmax_a [-P_s |a|^2/2 + log Z(t a)]``, i.e.
  ``P_s a_0 = sum_c n_c t_c M_c`` with ``M_c = <relu(z_mu)>`` (mu in class c) under the tilted law;
* outliers: preactivations constant on classes, ``zbar = sum_c w_c 1_c`` (w in R^k, any sign),
  ``zbar^T K^-1 zbar = w^T G w`` with ``G = (diag(s_c/n_c) + q)^-1`` (K maps the class
  indicators into their span), and ``t^T relu(zbar) = sum_c n_c t_c relu(w_c)``. The readout
  integral is finite iff ``lambda* = max_w |sum_c n_c t_c relu(w_c)|^2 / (P_s w^T G w) <= 1``;
  outliers sit on the maximisers (``lambda* = 1``), with ``abar = t^T relu(zbar) / P_s``;
* output constraint (T = rescaled temperature): ``y_c - T t_c = M_c a_0 + sum_i relu(zbar_ic)
  abar_i``.

These are the KKT conditions of the convex problem ``min_t max_a[-P_s|a|^2/2 + log Z(t a)] -
sum_c n_c t_c . y_c + (T/2) sum_c n_c |t_c|^2`` subject to ``lambda*(t) <= 1``; the outlier
strengths are the multipliers of the active constraints. For s = 1, q = 0, P_s = P and
n_c = rho_c P it is exactly the toy theory (``solve_relu_toy``). Restricting the outliers to
class-constant preactivations is the symmetric ansatz; the exact maximisation over w is
:func:`block_stability_margin`.

The maximum over a is the P_s -> infinity (Laplace) bulk. At finite P_s the N -> infinity
theory keeps the bulk neurons' whole readout law ``p(a) ∝ exp(g(a))`` [OURS]: the bulk value
``max_a g`` becomes ``W(t) = log int exp(g(a)) da`` (still convex in t) and the bulk output
``M_c(t a_0) a_0`` becomes ``E[M_c(t a) a]`` (``bulk="readout_law"``).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy import linalg

from ..._results import SolverStatus, Status, raise_if_failed
from ...checks import (
    as_float_array,
    as_float_matrix,
    as_psd_matrix,
    check_alloc,
    check_int,
    check_nonneg_float,
    check_pos_float,
    renamed_argument,
)
from .._problem import _check_labels
from ._block_bulk import _BlockBulk, _field_range
from ._block_stages import _LAW_SETTLE_SD, _barrier, _kkt_newton, _readout_law_stage, _strengths

__all__ = ["ReLUBlockSolution", "block_stability_margin", "class_block_kernel",
           "solve_relu_block"]



def class_block_kernel(K, labels):
    """Class-block form of a kernel on training inputs (notes §5.2 [OURS]): the counts n_c, the
    private variances ``s_c = mean diag - mean off-diagonal within class c`` and the class
    covariance ``q_{cc'}`` (mean off-diagonal entry of block (c, c'); within class the mean over
    mu != nu). Exact for a class-block K; for a sampled one, the block means. Returns
    (counts (k,) int, s (k,), q (k, k)); every class needs at least two inputs."""
    K = as_psd_matrix("K", K)
    lab = np.asarray(labels)
    if lab.ndim != 1 or lab.size != K.shape[0]:
        raise ValueError(f"labels must have one class index per row of K ({K.shape[0]}), "
                         f"got shape {lab.shape}")
    if not np.issubdtype(lab.dtype, np.integer):
        raise TypeError(f"labels must be integers (class indices 0..k-1), got dtype {lab.dtype}")
    k = int(lab.max()) + 1 if lab.size else 0
    lab = _check_labels(lab, max(k, 1))
    counts = np.bincount(lab, minlength=k)
    if np.any(counts < 2):
        raise ValueError(f"labels: every class needs at least 2 inputs for a class-block kernel, "
                         f"got counts {counts.tolist()}")
    q = np.empty((k, k))
    s = np.empty(k)
    for c in range(k):
        ic = lab == c
        for c2 in range(k):
            blk = K[np.ix_(ic, lab == c2)]
            if c2 == c:
                n = counts[c]
                diag = np.trace(blk) / n
                q[c, c] = (blk.sum() - n * diag) / (n * (n - 1))
                s[c] = diag - q[c, c]
            else:
                q[c, c2] = blk.mean()
    q = 0.5 * (q + q.T)
    if np.any(s <= 0):
        raise ValueError(f"K: the private variances s_c (mean diagonal minus mean within-class "
                         f"off-diagonal) must be > 0, got {s.tolist()}")
    return counts, s, q


def _gram(counts, s, q):
    """``G = (diag(s_c / n_c) + q)^-1``: zbar^T K^-1 zbar = w^T G w for zbar = sum_c w_c 1_c."""
    return np.linalg.inv(np.diag(s / counts) + q)


def _faces(k):
    """(S, F): S the active classes (w > 0), F the classes with w < 0, the rest w = 0."""
    idx = range(k)
    for size in range(1, k + 1):
        for S in itertools.combinations(idx, size):
            rest = [c for c in idx if c not in S]
            for fs in range(len(rest) + 1):
                for F in itertools.combinations(rest, fs):
                    yield list(S), list(F)


def _face_direction(tau, counts, G, S, F):
    """The maximiser of the ratio on face (S, F), or None when it leaves the face: top
    generalised eigenvector of (C_SS, Schur complement of G after minimising over w_F)."""
    b = counts[:, None] * tau
    C = b[S] @ b[S].T
    Gs = G[np.ix_(S, S)]
    if F:
        GFS = G[np.ix_(F, S)]
        Gs = Gs - GFS.T @ np.linalg.solve(G[np.ix_(F, F)], GFS)
    vals, vecs = linalg.eigh(C, Gs)
    v = vecs[:, -1]
    if v.sum() < 0:
        v = -v
    if np.any(v <= 1e-12 * np.max(np.abs(v))):
        return None
    w = np.zeros(len(counts))
    w[S] = v / np.max(v)
    if F:
        wF = -np.linalg.solve(G[np.ix_(F, F)], G[np.ix_(F, S)] @ w[S])
        if np.any(wF >= 0):
            return None
        w[F] = wF
    return w


def _ratio(tau, counts, G, P_s, w):
    num = counts * np.maximum(w, 0.0) @ tau
    return float(num @ num) / (P_s * float(w @ G @ w))


def block_stability_margin(t, counts, s, q, *, sigma_a2):
    """``lambda* = max_w |sum_c n_c t_c relu(w_c)|^2 / (P_s w^T G w)`` over class-constant
    preactivations (P_s = 1/sigma_a2, G = (diag(s/n) + q)^-1; notes §5.2 [OURS], exact): every
    face (classes with w > 0, < 0, = 0) is evaluated through its generalised eigenproblem.
    The readout integral is finite iff lambda* <= 1. Returns (lambda*, maximiser w (k,),
    normalised to max w = 1)."""
    tau = as_float_matrix("t", t)
    k = tau.shape[0]
    counts = as_float_array("counts", counts, ndim=1)
    s = as_float_array("s", s, ndim=1)
    q = as_psd_matrix("q", q)
    for name, v in (("counts", counts), ("s", s)):
        if v.shape != (k,) or np.any(v <= 0):
            raise ValueError(f"{name} must hold {k} positive numbers (one per row of t), got "
                             f"{v.tolist()}")
    if q.shape != (k, k):
        raise ValueError(f"q must be {k} x {k} (one row per row of t), got shape {q.shape}")
    G = _gram(counts, s, q)
    P_s = 1.0 / check_pos_float("sigma_a2", sigma_a2)
    faces = _face_maxima(tau, counts, G, P_s)
    return (faces[0][0], faces[0][1]) if faces else (0.0, np.zeros(k))


def _face_maxima(tau, counts, G, P_s):
    """Every face's maximiser that stays on its face: [(ratio, w, S, F)], largest ratio first."""
    out = []
    for S, F in _faces(len(counts)):
        w = _face_direction(tau, counts, G, S, F)
        if w is not None:
            out.append((_ratio(tau, counts, G, P_s, w), w, S, F))
    out.sort(key=lambda o: -o[0])
    return out


@dataclass(frozen=True)
class ReLUBlockSolution(SolverStatus):
    """Bulk plus outliers of a ReLU feature layer on a class-block kernel (notes §5.2 [OURS]).

    Attributes (k classes, m outputs, n_o outliers)
    ----------
    t : (k, m)                  conjugate field on class c (row c), as in ``solve_relu_toy``.
    a0 : (m,)                   bulk readout at the maximum of the bulk exponent g (the
                                P -> infinity bulk readout); for ``bulk="readout_law"`` the mean
                                E[a] of the readout law; zeros for ``bulk="none"``.
    bulk_h : (k,)               tilts t_c . a_0.
    bulk_mean_activation : (k,) M_c(t a_0): <relu(z_mu)> of a bulk neuron with readout a_0
                                (``readout_law``: E[M_c(t a)] over the law).
    bulk_readout_covariance : (m, m)  (-Hess g(a_0))^-1, the Laplace width of the bulk readouts
                                (``readout_law``: the law's covariance).
    bulk_output : (k, m)        the bulk's part of the mean output on class c, ``M_c a_0``
                                (``readout_law``: E[M_c(t a) a]; 0 for ``bulk="none"``).
    outlier_class_preactivations : (n_o, k)  sqrt(N)-scaled zbar of each outlier on each class
                                (negative where it is silent; 0 on its boundary).
    outlier_readouts : (n_o, m) sqrt(N)-scaled readouts abar = t^T relu(zbar) / P_s.
    stability_margin : float    lambda* (:func:`block_stability_margin`; 1 with outliers).
    bulk_gap : float            the best other local maximum of g minus g(a_0) (< 0: a_0 is the
                                global maximum; -inf: none found; ``readout_law``, where a_0
                                is the law's mean: minus the global maximum of g instead).
    quadrature_error : float    max change of M_c (``readout_law``: and of the bulk output) with
                                1.5x the Gauss-Hermite nodes.
    residuals : dict            "output", "marginality" (max-abs).
    counts, s, q, class_targets, sigma_a2, T, bulk : the problem.
    """

    t: np.ndarray
    a0: np.ndarray
    bulk_h: np.ndarray
    bulk_mean_activation: np.ndarray
    bulk_readout_covariance: np.ndarray
    bulk_output: np.ndarray
    outlier_class_preactivations: np.ndarray
    outlier_readouts: np.ndarray
    stability_margin: float
    bulk_gap: float
    quadrature_error: float
    residuals: dict
    counts: np.ndarray
    s: np.ndarray
    q: np.ndarray
    class_targets: np.ndarray
    sigma_a2: float
    T: float
    bulk: str

    @property
    def n_outliers(self) -> int:
        return int(self.outlier_readouts.shape[0])

    def bulk_readout_density(self, a, r):
        """Gaussian density of the bulk readout component a^r around a_0^r with the variance
        ``bulk_readout_covariance[r, r]``: the Laplace density (as
        ``ReLUToySolution.bulk_readout_density``), or for ``bulk="readout_law"`` the Gaussian
        with the law's mean and variance."""
        r = check_int("r", r, minimum=0)
        if r >= self.a0.size:
            raise ValueError(f"r must be in 0..{self.a0.size - 1}, got {r}")
        if self.bulk == "none":
            raise ValueError("bulk_readout_density needs a bulk (this solution has bulk='none')")
        a = as_float_array("a", a)
        var = self.bulk_readout_covariance[r, r]
        return (np.exp(-0.5 * (a - self.a0[r]) ** 2 / var) / np.sqrt(2 * np.pi * var))[()]

    def outlier_output(self) -> np.ndarray:
        """(k, m): the outliers' part of the mean output, ``sum_i relu(zbar_ic) abar_i``."""
        return np.maximum(self.outlier_class_preactivations, 0.0).T @ self.outlier_readouts

    def mean_output(self) -> np.ndarray:
        """(k, m): mean training output on class c; equals ``class_targets - T t``."""
        return self.bulk_output + self.outlier_output()


_BULK = ("laplace", "readout_law", "none")
_LAW_MODE_GAP = 20.0  # a second maximum of g within this of the peak invalidates the law's rule
_LAW_QUAD_TOL = 1e-2  # largest accepted change of E[M_c] and E[M_c a] with 1.5x the nodes


class _Problem:
    def __init__(self, counts, s, q, Yc, P_s, T, bulk, nodes):
        self.counts, self.Yc, self.P_s, self.T, self.mode = counts.astype(float), Yc, P_s, T, bulk
        self.k, self.m = Yc.shape
        self.G = _gram(self.counts, s, q)
        self.bulk = None if bulk == "none" else _BlockBulk(counts, s, q, P_s, nodes)
        self.grid = None  # (centre, chol, nodes) of the readout-law rule once it is frozen
        self.law_shift = np.inf  # its centre's last move in sd (set by the readout-law stage)

    def bulk_part(self, tau, local=False):
        """(value, output B (k, m), a_0) of the bulk at t. Before the readout-law rule is frozen
        (and always for ``bulk="laplace"``): a_0 the best maximum found by
        :meth:`_BlockBulk.maxima` (``local``: Newton from the last a_0, for the finite-difference
        probes of the barrier's Hessian), value g(a_0), B = M a_0; None without a maximum. With
        ``self.grid`` set: value W(t), B = E[M a] and a_0 = E[a] on that fixed rule."""
        if self.bulk is None:
            return 0.0, np.zeros((self.k, self.m)), np.zeros(self.m)
        if self.grid is not None:
            law = self.bulk.readout_law(tau, *self.grid)
            return law["W"], law["B"], law["mean"]
        if local and self.bulk.a_prev is not None:  # continuation of the last maximum
            a0 = self.bulk.polish(self.bulk.a_prev, tau)
            if a0 is not None:
                val, _, M = self.bulk.exponent(a0, tau)
                return float(val[0]), M[0][:, None] * a0[None, :], a0
        found = self.bulk.maxima(tau)
        if not found:
            return None
        a0, val, M = found[0]
        return val, M[:, None] * a0[None, :], a0

    def objective(self, tau, local=False):
        """``bulk value - sum_c n_c t_c . y_c + (T/2) sum_c n_c |t_c|^2`` and its gradient
        ``n_c (B_c - y_c + T t_c)`` (k, m); None where the bulk has no maximum."""
        part = self.bulk_part(tau, local)
        if part is None:
            return None
        val, B = part[:2]
        n = self.counts[:, None]
        f = val - np.sum(n * tau * self.Yc) + 0.5 * self.T * np.sum(n * tau**2)
        return f, n * (B - self.Yc + self.T * tau)

    def margin(self, tau):
        """All valid face maximisers (ratio, w, S, F), largest ratio first."""
        return _face_maxima(tau, self.counts, self.G, self.P_s)

    def outlier_terms(self, tau, faces):
        """Per face: w (k,) and the output of unit strength sigma^2 = 1,
        ``relu(w) (t^T n relu(w))^T / P_s`` (k, m); None when a face's maximiser left it."""
        terms = []
        for S, F in faces:
            w = _face_direction(tau, self.counts, self.G, S, F)
            if w is None:
                return None
            rw = np.maximum(w, 0.0)
            terms.append((w, np.outer(rw, (self.counts * rw) @ tau) / self.P_s))
        return terms

    def kkt(self, x, faces, local=False, bulk_output=None):
        """Output constraint and marginality of the faces at x = [t (k m), sigma^2 (faces)];
        ``bulk_output`` (k, m), when given, is used as the bulk's output instead of computing it
        (zeros for the Jacobian of the rest, see :func:`._relu_block_stages._kkt_newton`)."""
        k, m = self.k, self.m
        tau = x[:k * m].reshape(k, m)
        part = self.bulk_part(tau, local) if bulk_output is None else (0.0, bulk_output)
        terms = self.outlier_terms(tau, faces)
        if part is None or terms is None:
            return np.full(k * m + len(faces), np.inf)
        out = self.Yc - self.T * tau - part[1]
        marg = []
        for (w, unit), s2 in zip(terms, x[k * m:], strict=True):
            out = out - s2 * unit
            marg.append(_ratio(tau, self.counts, self.G, self.P_s, w) - 1.0)
        return np.concatenate([out.ravel(), marg])


def _class_targets(Y):
    """(labels, Yc): class of input mu = argmax_r Y[mu, r], one target row per class."""
    labels = np.argmax(Y, axis=1)
    k = Y.shape[1]
    if np.unique(labels).size != k:
        raise ValueError(f"Y: every one of the {k} outputs must be the largest target of some "
                         f"input (one class per output), got classes {np.unique(labels).tolist()}")
    Yc = np.stack([Y[labels == c].mean(axis=0) for c in range(k)])
    if max(np.max(np.abs(Y[labels == c] - Yc[c])) for c in range(k)) > 1e-12:
        raise ValueError("Y: the targets must be the same for every input of a class (one "
                         "target row per class)")
    return labels, Yc


@renamed_argument(K="K0")
def solve_relu_block(
    K0,
    Y,
    *,
    sigma_a2: float | None = None,
    T: float = 0.0,
    bulk: str = "laplace",
    atol: float = 1e-9,
    maxiter: int = 100,
    mu_schedule=(1e-1, 1e-2, 1e-3, 1e-4, 1e-6),
    quad_nodes: int = 10,
    readout_nodes: int = 7,
    throw: bool = False,
) -> ReLUBlockSolution:
    """Bulk plus outliers of a ReLU feature layer on a class-block kernel (notes §5.2 [RECON],
    class-block extension [OURS]; the equations are in the module docstring).

    Parameters
    ----------
    K0 : (P, P)      prior kernel of the feature layer's preactivations (the input kernel for
                     L = 1, the layer below's kernel otherwise), reduced to its class-block form by
                     :func:`class_block_kernel` (exact on the orthogonal toy task by symmetry;
                     block means for a sampled kernel).
    Y : (P, m)       targets, one class per output: the class of input mu is argmax_r Y[mu, r],
                     and the targets are the same within a class.
    sigma_a2         readout prior variance 1/P_s (default 1/P, the L = 1 scaling).
    T                rescaled temperature (output constraint ``y_c - T t_c``).
    bulk             "laplace" (default): every bulk neuron at the maximum a_0 of the bulk
                     exponent (the notes' bulk, exact as P_s -> infinity; with K = I, P_s = P and
                     n_c = rho_c P this is ``solve_relu_toy``); "readout_law": the bulk
                     neurons' whole readout law ``p(a) ∝ exp(g(a))`` at finite P_s [OURS] (the
                     bulk value is ``log int exp(g(a)) da``, its output ``E[M_c(t a) a]``; a_0,
                     ``bulk_mean_activation`` and ``bulk_readout_covariance`` are the law's mean,
                     E[M_c] and covariance; it tends to "laplace" as P_s -> infinity);
                     "none": outliers only.
    atol, maxiter    max-abs KKT residual accepted; Newton steps per barrier weight.
    mu_schedule      barrier weights of the interior-point stage (as in ``solve_relu_toy``).
    quad_nodes       Gauss-Hermite nodes per class field (``quad_nodes^rank(q)`` points);
                     ``quadrature_error`` reports the change of M_c (and, for "readout_law",
                     of the bulk output) with 1.5x as many nodes in every rule.
    readout_nodes    Gauss-Hermite nodes per output of the rule over the readout a
                     (``bulk="readout_law"`` only; ``readout_nodes^m`` points).
                     Rules (with their 1.5x finer checks) that would exceed 16 GiB raise
                     ValueError naming quad_nodes / readout_nodes.

    Algorithm: a log-barrier interior point on the convex problem over t with one barrier term
    per single-class outlier constraint (as ``solve_relu_toy``; damped Newton per barrier
    weight), the bulk maximum by a multi-start batched Newton ascent with the analytic Hessian
    of the bulk exponent; the faces of the exact margin
    (:func:`block_stability_margin`) within 1e-3 of marginal carry outliers, their strengths from
    the output constraint (non-negative least squares); then Newton on the KKT system (output
    constraint, marginality of the active faces). Checked: lambda* <= 1 + 1e-8 (so an optimum
    that needs multi-class outliers, e.g. at y- = +1/2, is reported unconverged), a_0 the global
    maximum found, strengths >= 0, residual <= atol. For ``bulk="readout_law"`` the Laplace
    point is the start of a second stage: Newton on the KKT system with the bulk's whole readout
    law on a Gauss-Hermite rule centred on the law, re-centred on its mean and covariance until
    they settle; checked in addition: no second maximum of g within 20 of the best (a rule around
    one mode would miss it).
    """
    K = as_psd_matrix("K0", K0)
    Y = as_float_matrix("Y", Y)
    if Y.shape[0] != K.shape[0]:
        raise ValueError(f"Y must have one row per training input ({K.shape[0]}), got shape "
                         f"{Y.shape}")
    if not isinstance(bulk, str) or bulk not in _BULK:
        raise ValueError(f"bulk must be one of {list(_BULK)}, got {bulk!r}")
    labels, Yc = _class_targets(Y)
    counts, s, q = class_block_kernel(K, labels)
    P_s = float(K.shape[0]) if sigma_a2 is None else 1.0 / check_pos_float("sigma_a2", sigma_a2)
    T = check_nonneg_float("T", T)
    atol = check_pos_float("atol", atol)
    maxiter = check_int("maxiter", maxiter, minimum=1)
    quad_nodes = check_int("quad_nodes", quad_nodes, minimum=2)
    readout_nodes = check_int("readout_nodes", readout_nodes, minimum=2)
    mus = tuple(check_pos_float("mu_schedule", v) for v in mu_schedule)
    if not mus:
        raise ValueError("mu_schedule must contain at least one barrier weight")
    k, m = Yc.shape
    if bulk != "none":  # the product rules (the finer check rule has ceil(1.5 n) nodes per axis)
        r = int(np.sum(_field_range(np.linalg.eigvalsh(q), s)))
        n_q = math.ceil(1.5 * quad_nodes)
        check_alloc(f"quad_nodes={quad_nodes} on {r} class-field dimensions",
                    min(n_q**r, 2**64) * (r + 2 * k + 4) + 3 * n_q**2,
                    what="the Gauss-Hermite product rule over the class fields")
        if bulk == "readout_law":
            n_a = math.ceil(1.5 * readout_nodes)
            check_alloc(f"readout_nodes={readout_nodes} with m={m} outputs",
                        min(n_a**m, 2**64) * (4 * m + 4 * k + 4) + 3 * n_a**2,
                        what="the Gauss-Hermite product rule over the readout")
    prob = _Problem(counts, s, q, Yc, P_s, T, bulk, quad_nodes)

    tau = np.zeros((k, m))  # feasible start (lambda* = 0; the bulk maximum is a = 0)
    tau, nit = _barrier(prob, tau, mus, maxiter)
    part = prob.bulk_part(tau)
    B = part[1] if part is not None else np.zeros((k, m))
    active = [(S, F) for r_, _w, S, F in prob.margin(tau) if r_ >= 1.0 - 1e-3]
    sig2 = _strengths(prob, tau, B, active)
    active = [f for f, v in zip(active, sig2, strict=True) if v > 1e-12]
    x0 = np.concatenate([tau.ravel(), sig2[sig2 > 1e-12]])
    x, nfev = _kkt_newton(prob, x0, active, atol)
    nit += nfev
    if bulk == "readout_law":
        x, nfev = _readout_law_stage(prob, x, active, atol, readout_nodes)
        nit += nfev
    F = prob.kkt(x, active)
    tau, sig2 = x[:k * m].reshape(k, m), x[k * m:]
    return _finish(prob, tau, sig2, active, F, nit, atol, throw,
                   dict(counts=counts, s=s, q=q, nodes=quad_nodes))


def _finish(prob, tau, sig2, active, F, nit, atol, throw, pb):
    k, m = prob.k, prob.m
    law_mode = prob.mode == "readout_law"
    law = prob.bulk.readout_law(tau, *prob.grid) if law_mode and prob.grid is not None else None
    part = (law["W"], law["B"], law["mean"]) if law is not None else prob.bulk_part(tau)
    a0, B = np.zeros(m), np.zeros((k, m))
    M, cov = np.zeros(k), np.zeros((m, m))
    bulk_gap, quad_err = -np.inf, 0.0
    if part is not None and prob.bulk is not None:
        _, B, a0 = part
        found = prob.bulk.maxima(tau, extra=(a0,))
        a_max = found[0][0] if (law_mode and found) else a0  # the law's mode / Laplace a_0
        g0 = float(prob.bulk.exponent(a_max, tau)[0][0])
        others = [f[1] for f in found if np.max(np.abs(f[0] - a_max)) > 1e-6]
        bulk_gap = float(max(others) - g0) if others else -np.inf
        fine = _BlockBulk(pb["counts"], pb["s"], pb["q"], prob.P_s, int(np.ceil(1.5 * pb["nodes"])))
        fine.shifts = prob.bulk.shifts
        if law is not None:
            M, cov = law["M"], law["cov"]
            centre, chol, n_a = prob.grid
            law_fine = fine.readout_law(tau, centre, chol, int(np.ceil(1.5 * n_a)))
            quad_err = float(max(np.max(np.abs(law_fine["M"] - M)),
                                 np.max(np.abs(law_fine["B"] - B))))
        else:
            M = prob.bulk.exponent(a0, tau)[2][0]
            cov = np.linalg.inv(-prob.bulk.hessian(a0, tau))
            quad_err = float(np.max(np.abs(fine.log_z(tau @ a0)[1][0] - M)))
    lam, _ = block_stability_margin(tau, pb["counts"], pb["s"], pb["q"], sigma_a2=1 / prob.P_s)
    terms = prob.outlier_terms(tau, active) or []
    W = np.array([w for w, _ in terms]).reshape(-1, k)
    zbar = np.sqrt(np.maximum(sig2, 0.0))[:, None] * W
    abar = (prob.counts * np.maximum(zbar, 0.0)) @ tau / prob.P_s
    resid = {"output": float(np.max(np.abs(F[:k * m]))),
             "marginality": float(np.max(np.abs(F[k * m:]), initial=0.0))}
    r = max(resid.values())
    problems = []
    if part is None:
        problems.append("the bulk exponent has no maximum at the final t")
    if not np.isfinite(r) or r > atol:
        problems.append(f"KKT residual {r:.2e} > atol {atol:.1e} (raise maxiter, or quad_nodes "
                        f"if the quadrature error {quad_err:.1e} is comparable)")
    if np.any(sig2 < -1e-12):
        problems.append(f"negative outlier strength {sig2.min():.3g}")
    if lam > 1.0 + 1e-8:
        problems.append(f"readout integral unstable (lambda* = {lam:.8f} > 1)")
    if law_mode and part is not None and prob.grid is None:
        problems.append("the readout-law stage did not start: the bulk exponent's Hessian at a_0 "
                        "is not negative definite (use bulk='laplace')")
    if law_mode and prob.grid is not None and prob.law_shift >= _LAW_SETTLE_SD:
        problems.append(f"the readout law's rule did not settle: its centre moved "
                        f"{prob.law_shift:.1e} standard deviations in the last re-centring "
                        f"(raise readout_nodes, or use bulk='laplace')")
    if law_mode and prob.grid is not None and quad_err > _LAW_QUAD_TOL:
        problems.append(f"bulk quadrature error {quad_err:.1e} > {_LAW_QUAD_TOL:g}: the readout "
                        f"law is not resolved (at small P_s = 1/sigma_a2 its tail reaches out to "
                        f"the outliers); raise readout_nodes (now {prob.grid[2]}), or use "
                        f"bulk='laplace'")
    if law_mode and bulk_gap > -_LAW_MODE_GAP:
        problems.append(f"the bulk readout law has a second mode (local maximum of g "
                        f"{-bulk_gap:.3g} below the peak, < {_LAW_MODE_GAP:g}), which a rule "
                        f"around one mode misses (use bulk='laplace')")
    elif bulk_gap > 1e-9:
        problems.append(f"a_0 is not the global maximum of the bulk exponent (gap "
                        f"{bulk_gap:.3g})")
    ok = not problems
    msg = (f"converged: {len(active)} outliers (active classes {[S for S, _ in active]}), KKT "
           f"residual {r:.1e}, lambda* = {lam:.10f}, bulk quadrature error {quad_err:.1e}"
           if ok else "; ".join(problems))
    out = ReLUBlockSolution(
        converged=ok, status=Status.SUCCESS if ok else Status.NUMERICAL_FAILURE, message=msg,
        nit=nit, residual=r, t=tau, a0=a0, bulk_h=tau @ a0, bulk_mean_activation=M,
        bulk_readout_covariance=cov, bulk_output=B, outlier_class_preactivations=zbar,
        outlier_readouts=abar, stability_margin=float(lam), bulk_gap=bulk_gap,
        quadrature_error=quad_err, residuals=resid, counts=pb["counts"], s=pb["s"], q=pb["q"],
        class_targets=prob.Yc, sigma_a2=1.0 / prob.P_s, T=prob.T, bulk=prob.mode,
    )
    raise_if_failed(out, throw)
    return out
