"""Lower layers of deep sigmoidal networks (seed 000, notes §2.3 (S2)-(S3), §4.5 [RECON]).

Source: A. van Meegen & H. Sompolinsky, *Coding schemes in neural networks learning
classification tasks*, Nat. Commun. 16, 3354 (2025) (seed 000).

Two pieces of the deep mean-field theory, each usable on its own:

* :func:`conjugate_kernel` -- (S3) for the layer just below the feature layer: the conjugate
  kernel ``K~_{L-1} = K^{-1} (C_L - K) K^{-1}`` from a feature-layer solution on the kernel
  ``K = K_{L-1}``.
* :func:`solve_sigmoid_first_layer` -- (S2) for layer 1 on orthonormal inputs: the single-neuron
  posterior ``∝ N(z | 0, sigma_w2 I) exp(½ phi(z)^T K~ phi(z))`` for a class-block K~, solved
  exactly by a Hubbard-Stratonovich field over classes.

Chained -- a kernel K_1, the feature layer on it, its K~_1, layer 1 under K~_1 -- they give one
pass of the self-consistent map of an L = 2 network; a sampled K_1 that is a fixed point of
that pass is what the theory predicts. A solver that iterates the map to its fixed point is not
here (plain damped iteration does not converge; docs/coding_sigmoid.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from ..._results import SolverStatus, Status, raise_if_failed
from ...checks import as_float_matrix, check_alloc, check_int, check_pos_float, check_real
from ...kernels._gauss import _phi_derivs
from .._problem import _check_labels, _check_nodes
from ..sigmoid import SigmoidGeneralSolution

__all__ = ["SigmoidFirstLayerSolution", "conjugate_kernel", "solve_sigmoid_first_layer"]

#: the field grid covers the box of stationary points plus this margin (whitened units); beyond
#: the box the log-weight falls at least like -d^2/2, so the mass left out is below e^{-32}
_MARGIN = 8.0
_MAX_CLASSES = 4
_MAX_POINTS = 30_000_000
_CHUNK = 400_000
#: the value range of each bounded activation (for the binned class-sum distribution)
_RANGE = {"sigmoid_erf": (0.0, 1.0), "erf": (-1.0, 1.0)}


def conjugate_kernel(solution, *, fluctuations: bool = True) -> np.ndarray:
    """Conjugate kernel of the layer below the feature layer, (S3) of notes §2.3 with
    ``sigma_L = 1``:

        ``K~_{L-1} = K^{-1} (C_L - K) K^{-1}``,  ``C_L = <z^L z^L^T>_L``,  ``K = K_{L-1}``.

    The average over the feature layer's single-neuron posterior is taken from a fluctuation-free
    solution (notes §4.4) on the input kernel ``K = solution.K0``:
    ``C_L = sum_gamma P_gamma [z_gamma z_gamma^T + Sigma_gamma]``, where ``Sigma_gamma =
    (K^{-1} - diag(h_gamma o phi''(z_gamma)))^{-1}`` (``h_gamma = t a_gamma``) is the Laplace
    covariance of ``P(z | a_gamma) ∝ N(z | 0, K) exp(h_gamma^T phi(z))`` around its mode. With
    ``fluctuations=False`` it is left out (``P(z | a_gamma) = delta(z - z_gamma)`` literally);
    then K~ misses the O(1) diagonal part that the z|a fluctuations contribute.

    Parameters
    ----------
    solution : SigmoidGeneralSolution
        A converged result of :func:`solve_sigmoid_general` whose ``K0`` is the kernel K_{L-1}
        of the layer below the feature layer (positive definite).
    fluctuations : bool
        Include the Laplace covariances (default) or not.

    Returns
    -------
    (P, P) symmetric array K~_{L-1}.
    """
    if not isinstance(solution, SigmoidGeneralSolution):
        raise TypeError("solution must be a SigmoidGeneralSolution (from solve_sigmoid_general), "
                        f"got {type(solution).__name__}")
    if not isinstance(fluctuations, bool | np.bool_):
        raise TypeError(f"fluctuations must be a bool, got {type(fluctuations).__name__}")
    if not solution.converged:
        raise ValueError("solution must be converged: K~ is built from its codes; got status "
                         f"{solution.status.name} ({solution.message})")
    K = np.asarray(solution.K0, dtype=float)
    try:
        chol = np.linalg.cholesky(K)
    except np.linalg.LinAlgError:
        lam = np.linalg.eigvalsh(K)
        raise ValueError("solution.K0 (the kernel K_{L-1}) must be positive definite for "
                         f"K~ = K^-1 (C - K) K^-1; its smallest eigenvalue is {lam[0]:.3g}") from None
    eye = np.eye(K.shape[0])
    Kinv = np.linalg.solve(chol.T, np.linalg.solve(chol, eye))
    C = np.zeros_like(K)
    for P_g, z, a in zip(solution.P_gamma, solution.z_gamma, solution.a_gamma, strict=True):
        C += P_g * np.outer(z, z)
        if fluctuations:
            h = solution.t @ a
            d2 = _phi_derivs(z, solution.activation)[2]
            C += P_g * np.linalg.inv(Kinv - np.diag(h * d2))
    Kt = Kinv @ (C - K) @ Kinv
    return 0.5 * (Kt + Kt.T)


@dataclass(frozen=True)
class SigmoidFirstLayerSolution(SolverStatus):
    """Layer 1 of a deep sigmoidal network on orthonormal inputs under a class-block conjugate
    kernel (see :func:`solve_sigmoid_first_layer`). C classes, P training inputs.

    Attributes
    ----------
    K : (P, P)                layer kernel ``K_1 = <phi(z) phi(z)^T>`` (S2), class-block.
    K_diag : (C,)             its diagonal per class, ``<phi(z_mu)^2>``.
    K_block : (C, C)          its off-diagonal per pair of classes, ``<phi(z_mu) phi(z_nu)>``
                              (mu != nu).
    mean_activation : (C,)    ``<phi(z_mu)>`` per class.
    code_fractions : (2^C,)   fraction of neurons in each code; index ``sum_c b_c 2^c`` with
                              ``b_c = 1`` iff the neuron's mean activation over the training
                              inputs of class c exceeds ``threshold``.
    alpha : (C,)              ``d~_c - b~_cc``: the per-input part of the class-block K~.
    B_tilde : (C, C)          class block of K~ (its off-diagonal means).
    block_residual : float    ``|K~ - class-block(K~)|_F / |K~|_F``: what the block form drops.
    field_rank : int          dimension of the Hubbard-Stratonovich field (rank of B_tilde).
    edge_log_weight : float   largest log-weight on the edge of the field grid relative to its
                              maximum (the grid holds the mass when this is very negative).
    labels : (P,)             class of each training input.
    threshold : float         code threshold.
    """

    K: np.ndarray
    K_diag: np.ndarray
    K_block: np.ndarray
    mean_activation: np.ndarray
    code_fractions: np.ndarray
    alpha: np.ndarray
    B_tilde: np.ndarray
    block_residual: float
    field_rank: int
    edge_log_weight: float
    labels: np.ndarray
    threshold: float


def solve_sigmoid_first_layer(
    K_tilde,
    labels,
    *,
    sigma_w2: float = 1.0,
    activation: str = "sigmoid_erf",
    threshold: float | None = None,
    n_nodes: int = 121,
    grid_step: float = 0.6,
    n_bins: int = 512,
    throw: bool = False,
) -> SigmoidFirstLayerSolution:
    """Layer 1 of a deep sigmoidal network on orthonormal inputs (notes §2.2, §4.5 [RECON]):
    the single-neuron posterior

        ``P(z) ∝ N(z | 0, sigma_w2 I_P) exp(½ phi(z)^T K~ phi(z))``

    and its kernel ``K_1 = <phi(z) phi(z)^T>`` ((S2) of notes §2.3) and code fractions.

    Exact for a class-block K~ (diagonal ``d~_c``, off-diagonal ``b~_ac`` for inputs of classes
    a, c); a general K~ is first projected onto that form (``block_residual`` says how much is
    dropped). Then ``phi^T K~ phi = sum_c alpha_c sum_{mu in c} phi_mu^2 + S^T B~ S`` with the
    class sums ``S_c = sum_{mu in c} phi_mu`` and ``alpha_c = d~_c - b~_cc``. For B~ positive
    semi-definite the Hubbard-Stratonovich identity ``exp(½ S^T B~ S) = E_{u ~ N(0, B~)}
    exp(u^T S)`` makes the inputs independent given the field u in R^C:

        ``P(z) = ∫ du w(u) prod_c prod_{mu in c} p_c(z_mu | u_c)``,
        ``p_c(z | u) ∝ N(z | 0, sigma_w2) exp(½ alpha_c phi(z)^2 + u phi(z))``,
        ``w(u) ∝ N(u | 0, B~) prod_c chi_c(u_c)^{n_c}``,  ``chi_c`` the normaliser of ``p_c``,

    exact at finite class sizes n_c. The field integral is a trapezoid rule on a grid in
    whitened coordinates ``u = L w`` (``B~ = L L^T``) over the box that holds every stationary
    point (``w = L^T (n o <phi>)``) plus a margin of 8; the weight's curvature in w is at most
    1, so a step of 0.6 is exact to far below round-off. The code of a neuron (its class means of
    phi thresholded) needs the distribution of the class mean of n_c independent tilted
    activations: an FFT convolution of ``p_c`` binned into ``n_bins`` bins of phi.

    Parameters
    ----------
    K_tilde : (P, P) symmetric array
        The conjugate kernel K~_1 (e.g. from :func:`conjugate_kernel`).
    labels : (P,) ints 0..C-1
        Class of each training input; C <= 4 classes, each with at least 2 inputs.
    sigma_w2 : float
        Prior variance of the first-layer preactivations (sigma_1^2 times the unit input norm).
    activation : "sigmoid_erf" (default, ``phi(z) = ½[1 + erf(sqrt(pi) z / 2)]``) or "erf".
    threshold : float or None
        Code threshold on class-mean activations; None: 1/2 for sigmoid_erf, 0 for erf.
    n_nodes : int
        Gauss-Hermite nodes of the single-input averages.
    grid_step : float
        Step of the field grid in whitened units (<= 1).
    n_bins : int
        Bins of phi for the class-mean distribution.
    Sizes whose arrays (the rule, the binned distributions and their FFT convolutions) would
    exceed 16 GiB raise ValueError naming the argument.
    throw : bool
        Raise :class:`SolverError` instead of returning a non-converged result.

    Returns
    -------
    :class:`SigmoidFirstLayerSolution`. Not converged (status BAD_PROBLEM) when the class block
    B~ has a negative eigenvalue: the field is then imaginary along it, which is not implemented.
    """
    return _first_layer(K_tilde, labels, sigma_w2=sigma_w2, activation=activation, threshold=threshold,
                        n_nodes=n_nodes, grid_step=grid_step, n_bins=n_bins, throw=throw, codes=True)


def _first_layer(K_tilde, labels, *, sigma_w2=1.0, activation="sigmoid_erf", threshold=None, n_nodes=121,
                 grid_step=0.6, n_bins=512, throw=False, codes=True):
    """:func:`solve_sigmoid_first_layer`; with ``codes=False`` without the code fractions (NaN:
    the class-mean distributions are most of the cost, and the deep maps need only K inside
    their Newton iterations)."""
    Kt = as_float_matrix("K_tilde", K_tilde)
    P = Kt.shape[0]
    if Kt.shape != (P, P):
        raise ValueError(f"K_tilde must be square (P x P), got shape {Kt.shape}")
    scale = float(np.max(np.abs(Kt))) or 1.0
    if not np.allclose(Kt, Kt.T, rtol=1e-8, atol=1e-10 * scale):
        raise ValueError("K_tilde must be symmetric (a conjugate kernel)")
    Kt = 0.5 * (Kt + Kt.T)
    lab, n, C, sigma_w2, lo, hi, threshold = _check_layer_args(
        labels, P, "K_tilde", sigma_w2, activation, threshold, _MAX_CLASSES,
        "the field grid has C dimensions")
    n_nodes, n_bins = _check_table_sizes(n_nodes, n_bins, n, rows=3)
    grid_step = check_pos_float("grid_step", grid_step)
    if grid_step > 1.0:
        raise ValueError(f"grid_step must be <= 1 (whitened field units), got {grid_step}")

    d, B = _class_blocks(Kt, lab, C)
    resid = float(np.linalg.norm(Kt - _block_kernel(d, B, lab))
                  / max(np.linalg.norm(Kt), np.finfo(float).tiny))
    alpha = d - np.diag(B)
    lam, V = np.linalg.eigh(B)
    tol = 1e-10 * max(float(np.max(np.abs(lam))), 1e-300)
    common = dict(alpha=alpha, B_tilde=B, block_residual=resid, labels=lab, threshold=float(threshold))
    if lam[0] < -tol:
        nan_c = np.full(C, np.nan)
        res = SigmoidFirstLayerSolution(
            converged=False, status=Status.BAD_PROBLEM, nit=0, residual=float("nan"),
            message=(f"the class block of K_tilde has a negative eigenvalue {lam[0]:.4g} (eigenvalues "
                     f"{np.round(lam, 4).tolist()}): the Hubbard-Stratonovich field would be imaginary "
                     "along it, which is not implemented; only positive semi-definite class blocks "
                     "are solved"),
            K=np.full((P, P), np.nan), K_diag=nan_c, K_block=np.full((C, C), np.nan),
            mean_activation=nan_c, code_fractions=np.full(1 << C, np.nan), field_rank=-1,
            edge_log_weight=float("nan"), **common)
        raise_if_failed(res, throw)
        return res
    keep = lam > tol
    Lf = V[:, keep] * np.sqrt(lam[keep])  # (C, r): u = Lf w, w ~ N(0, I_r)
    tables = _FieldTables(alpha, n, sigma_w2, activation, n_nodes, n_bins, lo, hi, threshold, codes)
    acc, edge = _integrate_field(Lf, n, lo, hi, grid_step, tables)
    K_diag, K_block, mean_act, fractions = acc
    K = _block_kernel(K_diag, K_block, lab)
    norm_err = abs(float(fractions.sum()) - 1.0) if codes else 0.0
    ok = edge < -30.0 and norm_err < 1e-8
    n_codes = f"{int(np.sum(fractions > 1e-3))} codes above 0.1 %" if codes else "code fractions not computed"
    msg = (f"layer 1 solved on a {Lf.shape[1]}-dimensional field grid: mean activations "
           f"{np.round(mean_act, 4).tolist()}, {n_codes}; the "
           f"class-block form drops {resid:.1%} of K_tilde (Frobenius)")
    if not ok:
        msg = (f"the field grid did not hold the weight (edge log-weight {edge:.1f}, code fractions "
               f"sum to 1 {norm_err:+.1e}); lower grid_step or raise n_bins")
    res = SigmoidFirstLayerSolution(
        converged=ok, status=Status.SUCCESS if ok else Status.NUMERICAL_FAILURE, message=msg, nit=1,
        residual=norm_err, K=K, K_diag=K_diag, K_block=K_block, mean_activation=mean_act,
        code_fractions=fractions, field_rank=int(Lf.shape[1]), edge_log_weight=float(edge), **common)
    raise_if_failed(res, throw)
    return res


def _check_layer_args(labels, P, kernel_name, sigma_w2, activation, threshold, max_classes, why):
    """Checks shared by the layer solvers: labels (one per row of the kernel, at most
    ``max_classes`` classes of at least 2 inputs), sigma_w2, the activation and the code
    threshold. Returns (labels, class sizes, C, sigma_w2, range low, range high, threshold)."""
    lab = _check_labels(labels, P)
    if lab.shape != (P,):
        raise ValueError(f"labels must have one entry per row of {kernel_name} ({P}), got shape {lab.shape}")
    n = np.bincount(lab)
    C = n.size
    if C > max_classes:
        raise ValueError(f"labels must hold at most {max_classes} classes ({why}), got {C}")
    if np.any(n < 2):
        raise ValueError(f"labels must give every class 0..{C - 1} at least 2 inputs, got class "
                         f"sizes {n.tolist()}")
    sigma_w2 = check_pos_float("sigma_w2", sigma_w2)
    if activation not in _RANGE:
        raise ValueError(f"activation must be one of {sorted(_RANGE)}, got {activation!r}")
    lo, hi = _RANGE[activation]
    threshold = 0.5 * (lo + hi) if threshold is None else check_real("threshold", threshold)
    if not lo < threshold < hi:
        raise ValueError(f"threshold must lie inside the range ({lo}, {hi}) of {activation}, got {threshold}")
    return lab, n, C, sigma_w2, lo, hi, float(threshold)


def _check_table_sizes(n_nodes, n_bins, n, *, rows):
    """``n_nodes`` (Gauss-Hermite nodes, >= 20) and ``n_bins`` (bins of the activation, >= 32)
    of the layer solvers' tables, checked so that the rule and the FFT convolutions of the
    class-mean distributions (``rows`` field values at a time, length ~2 n_c n_bins for class
    sizes ``n``) fit in 16 GiB; ValueError naming them otherwise."""
    n_nodes = _check_nodes("n_nodes", n_nodes, minimum=20)
    n_bins = check_int("n_bins", n_bins, minimum=32)
    n_max = int(np.max(n))
    check_alloc(f"n_bins={n_bins} with classes of up to {n_max} inputs",
                n_bins * (8 + 6 * rows * n_max),
                what="the binned activation distributions and their FFT convolutions")
    return n_nodes, n_bins


def _block_kernel(d, B, lab):
    """The (P, P) class-block kernel with diagonal ``d[c]`` and off-diagonal ``B[a, c]`` for inputs
    of classes a, c (the inverse of :func:`_class_blocks`)."""
    K = B[np.ix_(lab, lab)]
    K[np.diag_indices(lab.size)] = d[lab]
    return K


def _symmetric_from_upper(upper, iu, C):
    """The symmetric (C, C) matrix whose upper triangle (indices ``iu``) is ``upper``."""
    B = np.zeros((C, C))
    B[iu] = upper
    return B + B.T - np.diag(np.diag(B))


def _class_blocks(K, lab, C):
    """Per-class diagonal means d (C,) and off-diagonal block means B (C, C) of K."""
    d = np.empty(C)
    B = np.empty((C, C))
    for a in range(C):
        ia = lab == a
        d[a] = np.diag(K)[ia].mean()
        for c in range(C):
            blk = K[np.ix_(ia, lab == c)]
            if a == c:
                k = blk.shape[0]
                B[a, c] = (blk.sum() - np.trace(blk)) / (k * (k - 1))
            else:
                B[a, c] = blk.mean()
    return d, 0.5 * (B + B.T)


class _FieldTables:
    """Single-input averages of the tilted densities p_c(z | u) on fine 1-D grids of u, per class:
    log chi_c, <phi>, <phi^2> (Gauss-Hermite) and the probability pi_c(u) that the mean of n_c
    independent phi exceeds the threshold (binned phi, FFT convolution); linearly interpolated.
    With ``codes=False`` pi_c is not tabulated (``at`` returns None for it)."""

    def __init__(self, alpha, n, sigma_w2, activation, n_nodes, n_bins, lo, hi, threshold, codes=True):
        x, w = np.polynomial.hermite_e.hermegauss(n_nodes)
        self.f = _phi_derivs(np.sqrt(sigma_w2) * x, activation)[0]
        self.logw = np.log(w / w.sum())
        self.alpha, self.n = alpha, n
        edges = np.linspace(lo, hi, n_bins + 1)
        z_edges = _phi_inverse(edges, activation) / np.sqrt(sigma_w2)
        self.bin_mass = np.diff(special.ndtr(z_edges))
        self.bin_mid = 0.5 * (edges[1:] + edges[:-1])
        self.lo, self.width, self.n_bins, self.threshold = lo, hi - lo, n_bins, threshold
        self.codes = codes
        self.grids = {}

    def build(self, c, u_lo, u_hi):
        """Tables for class c on [u_lo, u_hi]."""
        u = np.arange(u_lo - 0.01, u_hi + 0.02, 0.005)
        e = self.logw + 0.5 * self.alpha[c] * self.f ** 2 + u[:, None] * self.f
        lchi = special.logsumexp(e, axis=1)
        p = np.exp(e - lchi[:, None])
        m1, m2 = p @ self.f, p @ self.f ** 2
        uc = np.linspace(u[0], u[-1], max(int((u[-1] - u[0]) / 0.05) + 2, 3))
        self.grids[c] = (u, lchi, m1, m2, uc, self._pi(c, uc) if self.codes else None)

    def _pi(self, c, uc):
        """P(mean of n_c independent phi > threshold | u) at the field values uc."""
        n, B = int(self.n[c]), self.n_bins
        logm = (np.log(np.maximum(self.bin_mass, 1e-300)) + 0.5 * self.alpha[c] * self.bin_mid ** 2
                + uc[:, None] * self.bin_mid)
        pm = np.exp(logm - logm.max(axis=1, keepdims=True))
        pm /= pm.sum(axis=1, keepdims=True)
        size = n * (B - 1) + 1
        nfft = 1 << int(np.ceil(np.log2(size)))
        pmf = np.fft.irfft(np.fft.rfft(pm, nfft, axis=1) ** n, nfft, axis=1)[:, :size]
        pmf = np.clip(pmf, 0.0, None)
        J = np.arange(size)
        mean = self.lo + self.width * (J + 0.5 * n) / (n * B)
        return np.clip(pmf[:, mean > self.threshold].sum(axis=1) / pmf.sum(axis=1), 0.0, 1.0)

    def at(self, c, u):
        g = self.grids[c]
        return (np.interp(u, g[0], g[1]), np.interp(u, g[0], g[2]), np.interp(u, g[0], g[3]),
                None if g[5] is None else np.interp(u, g[4], g[5]))


def _phi_inverse(f, activation):
    """z with phi(z) = f (inf at the ends of the range)."""
    with np.errstate(divide="ignore"):
        if activation == "sigmoid_erf":
            return -(2.0 / np.sqrt(np.pi)) * special.erfcinv(2.0 * f)
        return special.erfinv(f)


def _integrate_field(Lf, n, lo, hi, h, tables):
    """Trapezoid rule over the whitened field w (r dims) of the weight
    ``exp(-|w|^2/2 + sum_c n_c log chi_c((Lf w)_c))``; returns the posterior averages
    (K_diag, K_block, mean_activation, code_fractions) and the edge log-weight; the code
    fractions are NaN when the tables hold no class-mean distributions."""
    C, r = Lf.shape
    nL = Lf * n[:, None]
    w_lo = np.minimum(nL * lo, nL * hi).sum(axis=0) - _MARGIN
    w_hi = np.maximum(nL * lo, nL * hi).sum(axis=0) + _MARGIN
    axes = [np.arange(a, b + h, h) for a, b in zip(w_lo, w_hi, strict=True)]
    shape = tuple(len(a) for a in axes)
    total = int(np.prod(shape)) if r else 1
    if total > _MAX_POINTS:
        raise ValueError(f"grid_step={h} gives a field grid of {total} points (more than "
                         f"{_MAX_POINTS}); raise grid_step (<= 1) or use fewer classes")
    u_lo = np.minimum(Lf * w_lo, Lf * w_hi).sum(axis=1)
    u_hi = np.maximum(Lf * w_lo, Lf * w_hi).sum(axis=1)
    for c in range(C):
        tables.build(c, u_lo[c], u_hi[c])
    shift = -np.inf
    acc = None
    edge_max = -np.inf
    for start in range(0, total, _CHUNK):
        idx = np.arange(start, min(start + _CHUNK, total))
        if r:
            sub = np.unravel_index(idx, shape)
            W = np.stack([axes[k][sub[k]] for k in range(r)], axis=1)
            on_edge = np.zeros(idx.size, bool)
            for k in range(r):
                on_edge |= (sub[k] == 0) | (sub[k] == shape[k] - 1)
        else:
            W = np.zeros((1, 0))
            on_edge = np.zeros(1, bool)
        U = W @ Lf.T
        logw = -0.5 * np.sum(W * W, axis=1)
        m1 = np.empty((idx.size, C))
        m2 = np.empty((idx.size, C))
        pi = np.empty((idx.size, C)) if tables.codes else None
        for c in range(C):
            lchi, m1[:, c], m2[:, c], pi_c = tables.at(c, U[:, c])
            if pi is not None:
                pi[:, c] = pi_c
            logw += n[c] * lchi
        if on_edge.any():
            edge_max = max(edge_max, float(logw[on_edge].max()))
        new_shift = max(shift, float(logw.max()))
        wt = np.exp(logw - new_shift)
        codes = wt @ _code_probs(pi) if tables.codes else np.full(1 << C, np.nan)
        parts = [wt @ m2, np.einsum("i,ia,ic->ac", wt, m1, m1), wt @ m1, codes, wt.sum()]
        if acc is None:
            acc = parts
        else:
            s = np.exp(shift - new_shift)
            acc = [x * s + y for x, y in zip(acc, parts, strict=True)]
        shift = new_shift
    Z = acc[4]
    return (acc[0] / Z, acc[1] / Z, acc[2] / Z, acc[3] / Z), edge_max - shift


def _code_probs(pi):
    """(M, 2^C) probabilities of each code key sum_c b_c 2^c from per-class activity probabilities."""
    M, C = pi.shape
    out = np.ones((M, 1 << C))
    for k in range(1 << C):
        for c in range(C):
            out[:, k] *= pi[:, c] if (k >> c) & 1 else 1.0 - pi[:, c]
    return out
