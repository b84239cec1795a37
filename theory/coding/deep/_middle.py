"""Middle layers of deep sigmoidal networks on orthonormal inputs (seed 000, notes §2.3 (S2)-(S3),
§4.5 [RECON]): a layer whose prior kernel is the class-block kernel of the layer below.

Source: A. van Meegen & H. Sompolinsky, *Coding schemes in neural networks learning
classification tasks*, Nat. Commun. 16, 3354 (2025) (seed 000).

For L >= 3 a layer 1 < l < L has the single-neuron posterior ``∝ N(z | 0, sigma_w2 K_{l-1})
exp(½ phi(z)^T K~_l phi(z))``. On the orthonormal toy task both kernels are class-block. The
prior then splits every preactivation into a shared class shift and an independent part,
``z_mu = xi_c + s_c eps_mu`` (``xi ~ N(0, sigma_w2 B)``, ``s_c^2 = sigma_w2 (d_c - B_cc)``), and
the Hubbard-Stratonovich field ``u ~ N(0, B~)`` decouples the class sums of the tilt, as in
layer 1 (:func:`solve_sigmoid_first_layer`). Given (xi, u) the inputs are independent, so the
posterior is a mixture over a field x = (xi, u) of dimension at most 2C whose log-weight is

    ``F(x) = -|x|^2/2 + sum_c n_c l_c(xi_c, u_c)``   (whitened x),
    ``l_c(xi, u) = log ∫ Deps exp(½ alpha_c phi(xi + s_c eps)^2 + u phi(xi + s_c eps))``.

F is O(P) and multimodal (one mode per code). The grid of layer 1 does not reach 2C = 6
dimensions, so the field integral is done mode by mode: every local maximum of F is found by
Newton ascent from many starts, F is integrated around each mode by a Gauss-Hermite product rule
in the mode's Laplace coordinates, and a partition of unity (each point shared between modes in
proportion to their Laplace Gaussians) makes the sum over modes an exact identity rather than a
sum of overlapping Laplace terms. The rule is run with ``quad_nodes`` and ``quad_nodes - 1``
nodes per dimension; their difference is reported as the quadrature error.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy import interpolate, special

from ..._numerics import _ascend_to_maxima
from ..._results import SolverStatus, Status, raise_if_failed
from ...checks import as_float_matrix, as_rng, check_alloc, check_int
from ...kernels._gauss import _product_rule
from .._problem import _check_search_starts
from ._field_kernels import tilted_field_moments
from ._first_layer import (
    _RANGE,
    _block_kernel,
    _check_layer_args,
    _check_table_sizes,
    _class_blocks,
    _code_probs,
    _phi_inverse,
)

__all__ = ["SigmoidMiddleLayerSolution", "solve_sigmoid_middle_layer"]

_MAX_CLASSES = 3
#: largest quadrature error (max-abs over K and the scaled <z z^T>) of a converged solve. The
#: estimate compares the rules with k and k - 1 nodes, so it bounds the k rule's error loosely:
#: measured at the sampled kernels of Fig. 3's configuration (N = P = 50, 6 modes), the estimate
#: at k = 6 is 1.3e-3 while the change to k = 8 is 5e-5 (K) and 2.4e-4 (<z z^T>), against the
#: 0.4 %-and-up relative tolerances the deep-network cases compare kernels with.
_QUAD_TOL = 3e-3


@dataclass(frozen=True)
class SigmoidMiddleLayerSolution(SolverStatus):
    """A middle layer of a deep sigmoidal network on orthonormal inputs (see
    :func:`solve_sigmoid_middle_layer`). C classes, P training inputs.

    Attributes
    ----------
    K : (P, P)                layer kernel ``K_l = <phi(z) phi(z)^T>`` (S2), class-block.
    K_diag : (C,), K_block : (C, C)   its diagonal per class and off-diagonal per pair of classes.
    Czz : (P, P)              second moment ``<z z^T>`` of the preactivations, class-block.
    K_tilde_below : (P, P)    conjugate kernel of the layer below, (S3):
                              ``K_{l-1}^{-1} (Czz / sigma_w2 - K_{l-1}) K_{l-1}^{-1}``.
    mean_activation : (C,)    ``<phi(z_mu)>`` per class.
    code_fractions : (2^C,)   fraction of neurons per code (key ``sum_c b_c 2^c``, ``b_c = 1`` iff
                              the class-mean activation exceeds ``threshold``).
    modes : (n_modes, D)      local maxima of the field log-weight (whitened field coordinates).
    mode_weights : (n_modes,) posterior mass of each mode (partition of unity), summing to 1.
    quad_error : float        max-abs change of K and of Czz / max|Czz| between the rules with
                              ``quad_nodes`` and ``quad_nodes - 1`` nodes per dimension.
    code_quad_error : float   the same for the code fractions (their integrand is a step in the
                              field at small class sizes, so they converge more slowly).
    alpha : (C,), B_tilde : (C, C)   per-input part and class block of K~ (the tilt).
    B_prior : (C, C), s2 : (C,)      class block of the prior kernel (shift covariance, times
                                     sigma_w2) and the independent per-input variances.
    block_residual : float    ``|K~ - class-block(K~)|_F / |K~|_F`` (what the block form drops).
    labels : (P,)             class of each training input.
    threshold : float         code threshold.
    """

    K: np.ndarray
    K_diag: np.ndarray
    K_block: np.ndarray
    Czz: np.ndarray
    K_tilde_below: np.ndarray
    mean_activation: np.ndarray
    code_fractions: np.ndarray
    modes: np.ndarray
    mode_weights: np.ndarray
    quad_error: float
    code_quad_error: float
    alpha: np.ndarray
    B_tilde: np.ndarray
    B_prior: np.ndarray
    s2: np.ndarray
    block_residual: float
    labels: np.ndarray
    threshold: float


def solve_sigmoid_middle_layer(
    K_prev,
    K_tilde,
    labels,
    *,
    sigma_w2: float = 1.0,
    activation: str = "sigmoid_erf",
    threshold: float | None = None,
    n_nodes: int = 81,
    quad_nodes: int = 6,
    n_starts: int = 64,
    n_bins: int = 256,
    seed=0,
    throw: bool = False,
) -> SigmoidMiddleLayerSolution:
    """A middle layer l (1 < l < L) of a deep sigmoidal network on orthonormal inputs (notes §2.2,
    §2.3 (S2)-(S3), §4.5 [RECON]): the single-neuron posterior

        ``P(z) ∝ N(z | 0, sigma_w2 K_{l-1}) exp(½ phi(z)^T K~_l phi(z))``,

    its kernel ``K_l = <phi phi^T>`` (S2), its second moment ``<z z^T>`` and the conjugate kernel
    of the layer below (S3), ``K~_{l-1} = K_{l-1}^{-1} (<z z^T> / sigma_w2 - K_{l-1})
    K_{l-1}^{-1}``, and the code fractions.

    Both kernels are projected onto the class-block form (diagonal per class, off-diagonal per pair
    of classes). Then ``z_mu = xi_c + s_c eps_mu`` with a class shift ``xi ~ N(0, sigma_w2 B)`` and
    ``s_c^2 = sigma_w2 (d_c - B_cc)``, and ``exp(½ S^T B~ S) = E_{u ~ N(0, B~)} exp(u^T S)`` over the
    class sums ``S_c = sum_{mu in c} phi(z_mu)``; given (xi, u) the inputs are independent with the
    tilted densities ``∝ N(z | xi_c, s_c^2) exp(½ alpha_c phi(z)^2 + u_c phi(z))``
    (``alpha_c = d~_c - b~_cc``), exact at finite class sizes. The remaining field integral over
    (xi, u) (at most 2C dimensions) is done mode by mode (module docstring): every local maximum by
    Newton ascent from the code patterns and ``n_starts`` random starts, then a Gauss-Hermite
    product rule of ``quad_nodes`` nodes per dimension around each mode with a partition of unity.
    With a diagonal prior kernel (no shift) this is the problem of layer 1, which
    :func:`solve_sigmoid_first_layer` solves on a grid (the tests compare the two).

    Parameters
    ----------
    K_prev : (P, P) positive definite
        Kernel of the layer below, ``K_{l-1}`` (e.g. layer 1's ``K``).
    K_tilde : (P, P) symmetric
        Conjugate kernel ``K~_l`` of this layer (e.g. :func:`conjugate_kernel` of the feature
        layer solved on ``K_l``).
    labels : (P,) ints 0..C-1
        Class of each training input; C <= 3 classes, each with at least 2 inputs.
    sigma_w2 : float
        Prior variance scale of the preactivations (sigma_l^2).
    activation : "sigmoid_erf" (default) or "erf".
    threshold : float or None
        Code threshold on class-mean activations; None: the middle of the activation's range.
    n_nodes : int
        Gauss-Hermite nodes of the single-input averages.
    quad_nodes : int
        Gauss-Hermite nodes per field dimension around each mode (>= 3).
    n_starts : int
        Random starts of the mode search (besides the 2^C code patterns).
    n_bins : int
        Bins of phi for the class-mean distribution (code fractions).
    Sizes whose arrays (the rule, the starts with their Newton work arrays, the binned
    distributions and their FFT convolutions, the product rule around a mode) would exceed
    16 GiB raise ValueError naming the argument.
    seed : int or numpy Generator
        Seed of the random starts.
    throw : bool
        Raise :class:`SolverError` instead of returning a non-converged result.

    Returns
    -------
    :class:`SigmoidMiddleLayerSolution`; BAD_PROBLEM (not converged) when the class block of
    K_tilde has a negative eigenvalue (imaginary field, not implemented); NUMERICAL_FAILURE when the
    quadrature error of K or <z z^T> exceeds 3e-3 (raise ``quad_nodes``).
    """
    Kp = as_float_matrix("K_prev", K_prev)
    P = Kp.shape[0]
    if Kp.shape != (P, P):
        raise ValueError(f"K_prev must be square (P x P), got shape {Kp.shape}")
    Kt = as_float_matrix("K_tilde", K_tilde)
    if Kt.shape != (P, P):
        raise ValueError(f"K_tilde must be ({P}, {P}) like K_prev, got shape {Kt.shape}")
    for name, M in (("K_prev", Kp), ("K_tilde", Kt)):
        scale = float(np.max(np.abs(M))) or 1.0
        if not np.allclose(M, M.T, rtol=1e-8, atol=1e-10 * scale):
            raise ValueError(f"{name} must be symmetric")
    lab, n, C, sigma_w2, lo, hi, threshold = _check_layer_args(
        labels, P, "K_prev", sigma_w2, activation, threshold, _MAX_CLASSES, "the field has 2C dimensions")
    quad_nodes = check_int("quad_nodes", quad_nodes, minimum=3)
    n_starts = _check_search_starts("n_starts", n_starts, 2 * C)
    n_nodes, n_bins = _check_table_sizes(n_nodes, n_bins, n, rows=81)
    rng = as_rng(seed)

    setup = _Setup(Kp, Kt, lab, sigma_w2, activation, n_nodes)
    common = dict(setup.common, threshold=float(threshold))
    if setup.bad:
        res = _failed(P, C, Status.BAD_PROBLEM, setup.bad + ": the Hubbard-Stratonovich field would be "
                      "imaginary along it, which is not implemented", common)
        raise_if_failed(res, throw)
        return res
    field = setup.field
    # the product rule around each mode: quad_nodes^D points, each with its D coordinates, the
    # moments (4 C) and work arrays (bounded before the mode search; D <= 2C is known only now)
    check_alloc(f"quad_nodes={quad_nodes} on the {field.D}-dimensional field",
                min(quad_nodes ** field.D, 2**64) * (3 * field.D + 8 * C + 8) + 3 * quad_nodes**2,
                what="the Gauss-Hermite product rule around one mode and its moments")
    modes, F_modes, hess = field.modes(_starts(field, lo, hi, n_starts, rng))
    quads = [_mode_quadrature(field, modes, F_modes, hess, k) for k in (quad_nodes, quad_nodes - 1)]
    pi_tab = _CodeTables(field, quads[0][0], lo, hi, threshold, n_bins)
    out = [_averages(field, X, logw, mom, pi_tab, lab, len(modes)) for X, logw, mom in quads]
    (K, Czz, mean_act, codes, mode_w), (K2, Czz2, _, codes2, _) = out
    c_scale = max(float(np.max(np.abs(Czz))), 1e-300)
    qerr = float(max(np.max(np.abs(K - K2)), np.max(np.abs(Czz - Czz2)) / c_scale))
    code_err = float(np.max(np.abs(codes - codes2)))
    ok = qerr <= _QUAD_TOL
    K_diag, K_block = _class_blocks(K, lab, C)
    msg = (f"middle layer solved on a {field.D}-dimensional field with {len(modes)} modes: mean "
           f"activations {np.round(mean_act, 4).tolist()}, {int(np.sum(codes > 1e-3))} codes above "
           f"0.1 %, quadrature error {qerr:.1e} (code fractions {code_err:.1e})")
    if not ok:
        msg = (f"the mode quadrature did not converge (error {qerr:.1e} between {quad_nodes} and "
               f"{quad_nodes - 1} nodes per dimension, more than {_QUAD_TOL:g}); raise quad_nodes")
    res = SigmoidMiddleLayerSolution(
        converged=ok, status=Status.SUCCESS if ok else Status.NUMERICAL_FAILURE, message=msg, nit=1,
        residual=qerr, K=K, K_diag=K_diag, K_block=K_block, Czz=Czz,
        K_tilde_below=setup.conjugate_below(Czz), mean_activation=mean_act, code_fractions=codes,
        modes=modes, mode_weights=mode_w, quad_error=qerr, code_quad_error=code_err, **common)
    raise_if_failed(res, throw)
    return res


def _middle_kernels(Kp, Kt, lab, *, quad_nodes, seed, sigma_w2=1.0, activation="sigmoid_erf",
                    n_nodes=81, n_starts=64):
    """The part of :func:`solve_sigmoid_middle_layer` a fixed-point map needs at every evaluation:
    (K, K~ of the layer below) from the ``quad_nodes`` rule alone (no error check, no code
    fractions), or None where the class block of the tilt is indefinite. Inputs as validated by
    the public function (the deep map builds them)."""
    setup = _Setup(Kp, Kt, lab, sigma_w2, activation, n_nodes)
    if setup.bad:
        return None
    lo, hi = _RANGE[activation]
    field = setup.field
    modes, F_modes, hess = field.modes(_starts(field, lo, hi, n_starts, as_rng(seed)))
    X, logw, mom = _mode_quadrature(field, modes, F_modes, hess, quad_nodes)
    K, Czz = _kernels(_normalised(logw), mom, lab)
    return K, setup.conjugate_below(Czz)


class _Setup:
    """Class-block forms of the prior kernel and the tilt, their field factors, and the field."""

    def __init__(self, Kp, Kt, lab, sigma_w2, activation, n_nodes):
        C = int(lab.max()) + 1
        n = np.bincount(lab, minlength=C)
        d_p, B_p = _class_blocks(0.5 * (Kp + Kp.T), lab, C)
        s2 = sigma_w2 * (d_p - np.diag(B_p))
        if np.any(s2 <= 0):
            raise ValueError("K_prev must have per-class diagonals above its within-class off-diagonals (a "
                             "positive definite class-block kernel), got d - b_cc = "
                             f"{np.round(s2 / sigma_w2, 6).tolist()}")
        self.Kp_blk = _block_kernel(d_p, B_p, lab)
        try:
            self.chol = np.linalg.cholesky(self.Kp_blk)
        except np.linalg.LinAlgError:
            raise ValueError("K_prev must be positive definite after its projection onto the class-block "
                             "form") from None
        self.sigma_w2 = sigma_w2
        d_t, B_t = _class_blocks(0.5 * (Kt + Kt.T), lab, C)
        resid = float(np.linalg.norm(Kt - _block_kernel(d_t, B_t, lab))
                      / max(np.linalg.norm(Kt), np.finfo(float).tiny))
        alpha = d_t - np.diag(B_t)
        self.common = dict(alpha=alpha, B_tilde=B_t, B_prior=sigma_w2 * B_p, s2=s2, block_residual=resid,
                           labels=lab)
        L_xi, bad_xi = _factor("K_prev's class block", sigma_w2 * B_p)
        L_u, bad_u = _factor("the class block of K_tilde", B_t)
        self.bad = bad_xi or bad_u
        self.field = None if self.bad else _Field(L_xi, L_u, n, np.sqrt(s2), alpha, activation, n_nodes)

    def conjugate_below(self, Czz):
        """(S3): K_{l-1}^{-1} (Czz / sigma_w2 - K_{l-1}) K_{l-1}^{-1}, symmetrised."""
        eye = np.eye(self.Kp_blk.shape[0])
        Kinv = np.linalg.solve(self.chol.T, np.linalg.solve(self.chol, eye))
        Kt = Kinv @ (Czz / self.sigma_w2 - self.Kp_blk) @ Kinv
        return 0.5 * (Kt + Kt.T)


def _factor(name, B):
    """(C, r) factor F with F F^T = B over the positive eigenvalues, or a message if B has a
    negative one."""
    lam, V = np.linalg.eigh(B)
    tol = 1e-10 * max(float(np.max(np.abs(lam))), 1e-300)
    if lam[0] < -tol:
        return None, f"{name} has a negative eigenvalue {lam[0]:.4g}"
    keep = lam > tol
    return V[:, keep] * np.sqrt(lam[keep]), ""


def _failed(P, C, status, message, common):
    nan_c = np.full(C, np.nan)
    return SigmoidMiddleLayerSolution(
        converged=False, status=status, message=message, nit=0, residual=float("nan"),
        K=np.full((P, P), np.nan), K_diag=nan_c, K_block=np.full((C, C), np.nan),
        Czz=np.full((P, P), np.nan), K_tilde_below=np.full((P, P), np.nan), mean_activation=nan_c,
        code_fractions=np.full(1 << C, np.nan), modes=np.zeros((0, 0)), mode_weights=np.zeros(0),
        quad_error=float("nan"), code_quad_error=float("nan"), **common)


class _Field:
    """The field log-weight F(x), x = (v, w) whitened, xi = L_xi v, u = L_u w, and the per-class
    tilted single-input moments behind it (Gauss-Hermite over eps)."""

    def __init__(self, L_xi, L_u, n, s, alpha, activation, n_nodes):
        self.L_xi, self.L_u, self.n, self.s, self.alpha = L_xi, L_u, n, s, alpha
        self.activation = activation
        self.C = n.size
        self.r_xi, self.r_u = L_xi.shape[1], L_u.shape[1]
        self.D = self.r_xi + self.r_u
        eps, w = np.polynomial.hermite_e.hermegauss(n_nodes)
        self.eps, self.logw = eps, np.log(w / w.sum())

    def split(self, X):
        return X[:, :self.r_xi] @ self.L_xi.T, X[:, self.r_xi:] @ self.L_u.T  # (M, C) each

    def moments(self, c, xi, u, order):
        """Per point (xi, u) of class c: log chi, <phi>, <phi^2>, <z>, <z^2>; with order 2 also
        d/dxi, d/du and the 2x2 Hessian of log chi (one compiled pass per point,
        :func:`._field_kernels.tilted_field_moments`)."""
        s = self.s[c]
        lchi, m_ph, m_ph2, m_e, m_e2, m_eph = tilted_field_moments(
            xi, u, s, self.alpha[c], self.eps, self.logw, self.activation).T
        out = [lchi, m_ph, m_ph2, xi + s * m_e, xi * xi + 2 * s * xi * m_e + s * s * m_e2]
        if order == 2:
            g = np.stack([m_e / s, m_ph], axis=1)
            h = np.empty((xi.size, 2, 2))
            h[:, 0, 0] = (m_e2 - m_e * m_e - 1.0) / (s * s)
            h[:, 0, 1] = h[:, 1, 0] = (m_eph - m_e * m_ph) / s
            h[:, 1, 1] = m_ph2 - m_ph * m_ph
            out += [g, h]
        return out

    def tilted(self, X):
        """F at the rows of X and the per-class moments (<phi>, <phi^2>, <z>, <z^2>), each (M, C)."""
        XI, U = self.split(X)
        F = -0.5 * np.sum(X * X, axis=1)
        mom = np.empty((4, X.shape[0], self.C))
        for c in range(self.C):
            lchi, *rest = self.moments(c, XI[:, c], U[:, c], 0)
            F += self.n[c] * lchi
            mom[:, :, c] = rest
        return F, mom

    def evaluate(self, X, order=2):
        """(F, None, grad, hess) at the rows of X (order 2) or (F, None) (order 0)."""
        XI, U = self.split(X)
        F = -0.5 * np.sum(X * X, axis=1)
        grad = -X.copy() if order == 2 else None
        hess = -np.broadcast_to(np.eye(self.D), (X.shape[0], self.D, self.D)).copy() if order == 2 else None
        for c in range(self.C):
            mom = self.moments(c, XI[:, c], U[:, c], order)
            F += self.n[c] * mom[0]
            if order == 2:
                J = np.zeros((2, self.D))
                J[0, :self.r_xi] = self.L_xi[c]
                J[1, self.r_xi:] = self.L_u[c]
                grad += self.n[c] * mom[5] @ J
                hess += self.n[c] * np.einsum("ia,kij,jb->kab", J, mom[6], J)
        return (F, None, grad, hess) if order == 2 else (F, None)

    def modes(self, starts):
        """Distinct local maxima (X, F, Hessians) of F, in decreasing F."""
        X, F = _ascend_to_maxima(self.evaluate, starts, tol=1e-10, maxiter=200, dedup=1e-5)
        if X.shape[0] == 0:
            raise RuntimeError("the field log-weight has no local maximum from any start")
        return X, F, self.evaluate(X, 2)[3]


def _starts(field, lo, hi, n_random, rng):
    """Starts of the mode search: the stationary-point map from the 2^C code patterns (class
    activations near the ends of the range) and from random class activations and shifts."""
    C, n = field.C, field.n
    span = hi - lo
    pats = np.array(list(itertools.product((0.15, 0.85), repeat=C))) * span + lo
    rand_f = lo + span * rng.random((n_random, C))
    acts = np.vstack([pats, rand_f, np.full((1, C), lo + 0.5 * span)])
    e = np.vstack([np.zeros((pats.shape[0], C)), rng.standard_normal((n_random, C)), np.zeros((1, C))])
    V = (n * e / field.s) @ field.L_xi
    W = (n * acts) @ field.L_u
    return np.hstack([V, W])


def _mode_quadrature(field, modes, F_modes, hess, k):
    """Points X (M, D), log-weights (M,) and moments (4, M, C) (see ``_Field.tilted``) of the
    Gauss-Hermite product rule of k nodes per dimension around every mode, with the partition of
    unity: a point of mode j's rule carries
    ``q_j(x) = softmax_i[F_i - ½ (x - x_i)^T A_i (x - x_i)]_j``, ``A_i = -H_i``; the log-weight is
    ``log(rule weight) + F(x) + |g|^2/2 + log |R_j| + log q_j(x)`` for x = x_j + R_j g,
    ``R_j R_j^T = A_j^{-1}``."""
    G, LW = _product_rule(k, field.D)
    A = -hess
    Xs, logws, moms = [], [], []
    for j in range(modes.shape[0]):
        R = np.linalg.cholesky(np.linalg.inv(A[j]))
        X = modes[j] + G @ R.T
        F, mom = field.tilted(X)
        moms.append(mom)
        logq = np.stack([F_modes[i] - 0.5 * np.einsum("ka,ab,kb->k", X - modes[i], A[i], X - modes[i])
                         for i in range(modes.shape[0])], axis=1)
        logq = logq[:, j] - special.logsumexp(logq, axis=1)
        Xs.append(X)
        logws.append(LW + F + 0.5 * np.sum(G * G, axis=1) + np.sum(np.log(np.diag(R))) + logq)
    return np.vstack(Xs), np.concatenate(logws), np.concatenate(moms, axis=1)


def _averages(field, X, logw, mom, pi_tab, lab, n_modes):
    """Posterior averages from the weighted field points: the class-block K and <z z^T>, the mean
    activations, the code fractions and the mass per mode."""
    C = field.C
    wt = _normalised(logw)
    XI, U = field.split(X)
    K, Czz = _kernels(wt, mom, lab)
    pi = np.stack([pi_tab.at(c, XI[:, c], U[:, c]) for c in range(C)], axis=1)
    codes = wt @ _code_probs(pi)
    mode_w = wt.reshape(n_modes, -1).sum(axis=1)
    return K, Czz, wt @ mom[0], codes, mode_w


def _normalised(logw):
    wt = np.exp(logw - logw.max())
    return wt / wt.sum()


def _kernels(wt, mom, lab):
    """The class-block K = <phi phi^T> and <z z^T> from normalised weights and the per-point
    class moments (<phi>, <phi^2>, <z>, <z^2>) (inputs independent given the field point)."""
    m1, m2, z1, z2 = mom
    K = _block_kernel(wt @ m2, np.einsum("i,ia,ic->ac", wt, m1, m1), lab)
    Czz = _block_kernel(wt @ z2, np.einsum("i,ia,ic->ac", wt, z1, z1), lab)
    return K, Czz


class _CodeTables:
    """P(class mean of n_c independent tilted phi > threshold | xi_c, u_c) on a (xi, u) grid per
    class (binned phi, FFT convolution of the n_c-fold sum), interpolated bilinearly."""

    def __init__(self, field, X, lo, hi, threshold, n_bins, n_grid=81):
        XI, U = field.split(X)
        edges = np.linspace(lo, hi, n_bins + 1)
        z_edges = _phi_inverse(edges, field.activation)
        mid = 0.5 * (edges[1:] + edges[:-1])
        self.interp = []
        for c in range(field.C):
            xg = _axis(XI[:, c], n_grid)
            ug = _axis(U[:, c], n_grid)
            nc = int(field.n[c])
            size = nc * (n_bins - 1) + 1
            nfft = 1 << int(np.ceil(np.log2(size)))
            J = np.arange(size)
            above = lo + (hi - lo) * (J + 0.5 * nc) / (nc * n_bins) > threshold
            tab = np.empty((xg.size, ug.size))
            for i, xi in enumerate(xg):
                mass = np.diff(special.ndtr((z_edges - xi) / field.s[c]))
                logm = (np.log(np.maximum(mass, 1e-300)) + 0.5 * field.alpha[c] * mid ** 2
                        + ug[:, None] * mid)
                pm = np.exp(logm - logm.max(axis=1, keepdims=True))
                pm /= pm.sum(axis=1, keepdims=True)
                pmf = np.fft.irfft(np.fft.rfft(pm, nfft, axis=1) ** nc, nfft, axis=1)[:, :size]
                pmf = np.clip(pmf, 0.0, None)
                tab[i] = np.clip(pmf[:, above].sum(axis=1) / pmf.sum(axis=1), 0.0, 1.0)
            self.interp.append(interpolate.RegularGridInterpolator((xg, ug), tab, bounds_error=False,
                                                                   fill_value=None))

    def at(self, c, xi, u):
        return np.clip(self.interp[c](np.stack([xi, u], axis=1)), 0.0, 1.0)


def _axis(vals, n_grid):
    a, b = float(vals.min()), float(vals.max())
    if b - a < 1e-12:
        a, b = a - 1e-6, b + 1e-6
    return np.linspace(a, b, n_grid)
