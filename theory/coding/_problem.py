"""Input checks shared by the coding-scheme solvers of seed 000 (one place for each problem check).

Conventions (every solver of :mod:`richlazy.theory.coding`):

* training inputs are *columns* of X (N0 x P); the solvers take the input kernel
  ``K0 = X^T X / N0`` (P x P, :func:`richlazy.theory.input_kernel`), never X itself;
* targets Y are (P, m): one *row* per training input, ``m`` = number of network outputs;
* toy problems are given per class: ``ratios`` (k,) class fractions rho_c and
  ``class_targets`` (k, m), row c = target vector y_c of class c.

Scalar options are checked with :mod:`richlazy.theory.checks`; this module holds the array checks
that several coding solvers share.
"""

from __future__ import annotations

import numpy as np

from ..checks import as_float_array, as_float_matrix, check_alloc, check_int, check_pos_float

__all__: list[str] = []  # KernelFactor is internal to the coding solvers


def _check_labels(labels, m):
    """Class indices (1-D, integers in 0..m-1) as an int array."""
    lab = np.asarray(labels)
    if lab.ndim != 1 or lab.size == 0:
        raise ValueError(f"labels must be a non-empty 1-D array of class indices, got shape {lab.shape}")
    if not np.issubdtype(lab.dtype, np.integer):
        raise TypeError(f"labels must be integers (class indices 0..{m - 1}), got dtype {lab.dtype}")
    if lab.min() < 0 or lab.max() >= m:
        raise ValueError(f"labels must lie in 0..{m - 1}, got values in [{lab.min()}, {lab.max()}]")
    return lab.astype(int)


def _check_ratios(ratios):
    """rho (k,): class fractions, non-empty, > 0, summing to 1 (to 1e-10)."""
    rho = as_float_array("ratios", ratios, ndim=1)
    if rho.size == 0:
        raise ValueError("ratios must be non-empty (one class fraction per class), got []")
    if np.any(rho <= 0):
        raise ValueError(f"ratios must be > 0 (class fractions rho_c), got {rho.tolist()}")
    if abs(rho.sum() - 1.0) > 1e-10:
        raise ValueError(f"ratios must sum to 1 (class fractions), got sum {rho.sum():.12g}")
    return rho


def _check_toy_problem(ratios, class_targets):
    """(rho (k,), Yc (k, m)): class fractions (> 0, sum 1) and one target row per class; ``ratios``
    may be a :class:`~richlazy.theory.ToyTask` holding both (``class_targets`` then None)."""
    from ._task import ToyTask  # (_task builds on these checks)

    if isinstance(ratios, ToyTask):
        if class_targets is not None:
            raise TypeError("class_targets must be left out when the task is a ToyTask (it holds the "
                            "class targets), got both")
        return ratios.ratios, ratios.class_targets
    if class_targets is None:
        raise TypeError("class_targets is required (row c = target vector of class c) unless the first "
                        "argument is a ToyTask")
    rho = _check_ratios(ratios)
    m = rho.size
    Yc = as_float_matrix("class_targets", class_targets, allow_1d=True)
    if Yc.shape[0] != m:
        raise ValueError(
            f"class_targets must have one row per class, shape ({m}, m_outputs) (row c = target "
            f"vector of class c), got {Yc.shape}"
        )
    return rho, Yc


def _check_gram(K0, *, name: str = "K0", cholesky: bool = True):
    """A symmetric positive-definite input kernel (P, P). Returns (K0, its Cholesky factor L)
    (L is None when ``cholesky`` is False: symmetry and shape only)."""
    K0 = as_float_matrix(name, K0)
    P = K0.shape[0]
    if K0.shape != (P, P):
        raise ValueError(f"{name} must be square (P x P), got shape {K0.shape}")
    if not np.allclose(K0, K0.T, rtol=1e-10, atol=1e-12 * np.max(np.abs(K0))):
        raise ValueError(f"{name} must be symmetric")
    if not cholesky:
        return K0, None
    try:
        L = np.linalg.cholesky(K0)
    except np.linalg.LinAlgError:
        raise ValueError(f"{name} must be positive definite (Cholesky failed)") from None
    return K0, L


class KernelFactor:
    """The input kernel K0 (P x P, symmetric positive semi-definite) factored once, the problem
    object every solver that accepts a singular K0 shares (one eigendecomposition per solve).

    ``K0 = V diag(lam) V^T`` (``numpy.linalg.eigh``, eigenvalues ascending); the eigenvalues
    ``lam > rank_rtol * max(lam)`` are kept (``rank`` = r of them). Attributes (fixed at
    construction; the arrays are shared by every user, never modified in place): ``K0``,
    ``eigenvalues`` lam (P,), ``eigenvectors`` V (P, P), ``rank_rtol``, ``rank``, ``P``,
    ``singular``; the range factor ``B = V_r lam_r^(1/2)`` (P, r) with ``K0 = B B^T`` (to the dropped
    eigenvalues), its pseudo-inverse ``Bpinv = lam_r^(-1/2) V_r^T`` (r, P), so that
    preactivations ``z = B u`` in the range have ``u = Bpinv z`` and ``|u|^2 = z^T K0^+ z``, and
    an orthonormal basis ``N`` (P, P - r) of the null space (the discarded eigenvectors)."""

    __slots__ = ("K0", "eigenvalues", "eigenvectors", "rank_rtol", "B", "Bpinv", "N")

    def __init__(self, K0, rank_rtol: float = 1e-10):
        lam, V = np.linalg.eigh(K0)
        keep = lam > rank_rtol * lam[-1]
        s = np.sqrt(lam[keep])
        # the arrays stay writeable (a read-only B would make the numba kernels that take it
        # compile a second signature); shared by every user of the factor: never modify in place
        for name, value in dict(K0=K0, eigenvalues=lam, eigenvectors=V, B=V[:, keep] * s,
                                Bpinv=V[:, keep].T / s[:, None], N=V[:, ~keep],
                                rank_rtol=rank_rtol).items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"KernelFactor is read-only (cannot set {name!r})")

    @property
    def P(self) -> int:
        """Number of training inputs (rows of K0)."""
        return self.K0.shape[0]

    @property
    def rank(self) -> int:
        """Number r of eigenvalues kept (the columns of B)."""
        return self.B.shape[1]

    @property
    def singular(self) -> bool:
        """Whether eigenvalues were dropped (rank < P)."""
        return self.rank < self.P

    def range_factor(self):
        """``(B, Bpinv, N)``, the triple of :func:`_range_factor`."""
        return self.B, self.Bpinv, self.N

    def __repr__(self) -> str:
        return f"KernelFactor(P={self.P}, rank={self.rank}, rank_rtol={self.rank_rtol:g})"


def _range_factor(K0, rank_rtol: float = 1e-10):
    """Factor of a symmetric positive semi-definite kernel on its range (one convention for
    every solver that accepts a singular K0): ``(B, Bpinv, N)`` of :class:`KernelFactor`
    (``K0 = B B^T`` on the range, ``Bpinv`` its pseudo-inverse, N the null-space basis)."""
    return KernelFactor(K0, rank_rtol).range_factor()


def _check_psd_gram(K0, *, name: str = "K0", rank_rtol: float = 1e-10, factor: bool = False):
    """A symmetric positive semi-definite, nonzero input kernel (P, P), possibly singular.
    Eigenvalues down to ``-rank_rtol * max`` count as round-off. Returns (K0, B, Bpinv, N) with
    the range factor of :func:`_range_factor`, or with ``factor=True`` the
    :class:`KernelFactor` of K0 (whose ``K0`` is the checked kernel; one ``eigh`` of K0)."""
    K0 = as_float_matrix(name, K0)
    P = K0.shape[0]
    if K0.shape != (P, P):
        raise ValueError(f"{name} must be square (P x P), got shape {K0.shape}")
    if not np.allclose(K0, K0.T, rtol=1e-10, atol=1e-12 * np.max(np.abs(K0))):
        raise ValueError(f"{name} must be symmetric positive semi-definite (an input kernel "
                         f"X^T X / N0); it is not symmetric (max |{name} - {name}^T| = "
                         f"{np.max(np.abs(K0 - K0.T)):.3g})")
    # eigvalsh (LAPACK without eigenvectors) is the check: its eigenvalues are not bit-equal to
    # eigh's, so the factor below does not replace it (the accepted kernels stay exactly these)
    lam = np.linalg.eigvalsh(K0)
    if not lam[-1] > 0 or lam[0] < -rank_rtol * lam[-1]:
        raise ValueError(f"{name} must be positive semi-definite and nonzero (an input kernel "
                         f"X^T X / N0), got smallest eigenvalue {lam[0]:.6g} (largest "
                         f"{lam[-1]:.6g})")
    kf = KernelFactor(K0, rank_rtol)
    return kf if factor else (K0, *kf.range_factor())


def _check_targets(Y, P: int, *, name: str = "Y"):
    """Targets (P, m), one row per training input (a 1-D array is one output, m = 1)."""
    Y = as_float_matrix(name, Y, allow_1d=True)
    if Y.shape[0] != P:
        raise ValueError(f"{name} must have P = {P} rows (one per training input), got shape {Y.shape}")
    return Y


def _check_nodes(name, n, *, minimum):
    """A Gauss-Hermite node count: an int >= ``minimum`` whose rule (computed from an n x n
    companion matrix) fits in 16 GiB (n <= ~26000), else ValueError naming ``name``."""
    n = check_int(name, n, minimum=minimum)
    check_alloc(f"{name}={n}", 3 * n * n, what="the Gauss-Hermite rule's companion matrix")
    return n


def _check_search_starts(name, n, dim, *, copies=1):
    """A number of random starts of a multi-start maximum search: an int >= 0 such that
    ``copies`` x ``n`` starts in ``dim`` dimensions with their Newton work arrays (Hessian,
    gradient, step, trial points) fit in 16 GiB, else ValueError naming ``name``."""
    n = check_int(name, n, minimum=0)
    check_alloc(f"{name}={n}", copies * n * (2 * dim * dim + 10 * dim + 8),
                what=f"the random starts of the maximum search ({copies} x {name} points in "
                     f"{dim} dimensions with their Newton work arrays)")
    return n


def _check_start(name, t0, shape):
    """Optional starting field of a given shape."""
    if t0 is None:
        return None
    t0 = as_float_matrix(name, t0)
    if t0.shape != shape:
        raise ValueError(f"{name} must have shape ({shape[0]}, {shape[1]}), got {t0.shape}")
    return t0


def _check_anneal(anneal):
    """Smoothing parameters beta (> 0), at least one."""
    betas = tuple(check_pos_float("anneal", b) for b in anneal)
    if len(betas) == 0:
        raise ValueError("anneal must contain at least one smoothing parameter")
    return betas


def _row_space_projector(Y):
    """Projector onto the span of the target vectors (rows of Y) in output space."""
    U, s, Vt = np.linalg.svd(Y, full_matrices=False)
    k = int(np.sum(s > 1e-12 * max(s[0], 1e-300)))
    return Vt[:k].T @ Vt[:k]


def _check_representable(K0, Y, cos_tol=1e-10):
    """Interpolation on a singular K0 needs targets that relu features of range vectors can
    produce. Exact obstructions checked here: a zero input (K0_mu,mu = 0) has relu(z)_mu = 0,
    and positively parallel inputs (K0_mu,nu^2 = K0_mu,mu K0_nu,nu, K0_mu,nu > 0; duplicates
    among them) have relu(z)_nu = c relu(z)_mu with c = sqrt(K0_nu,nu / K0_mu,mu) for every z in
    the range of K0; ValueError when the targets violate them."""
    P = K0.shape[0]
    d = np.diag(K0)
    ytol = 1e-8 * max(float(np.max(np.abs(Y))), 1e-300)
    zero = d <= 1e-12 * np.max(d)
    bad = np.flatnonzero(zero & np.any(np.abs(Y) > ytol, axis=1))
    if bad.size:
        raise ValueError(
            f"Y cannot be interpolated on this K0 (T = 0): training input {bad[0]} is zero "
            f"(K0[{bad[0]}, {bad[0]}] = {d[bad[0]]:.3g}), so every network output on it is 0, but "
            f"Y[{bad[0]}] is not; drop that input or pass T > 0 (regression)")
    live = np.flatnonzero(~zero)
    s = np.sqrt(d[live])
    cos = K0[np.ix_(live, live)] / np.outer(s, s)
    iu, ju = np.nonzero(np.triu(cos >= 1.0 - cos_tol, k=1))
    for a, b in zip(live[iu], live[ju], strict=True):
        c = np.sqrt(d[b] / d[a])
        if np.max(np.abs(Y[b] - c * Y[a])) > ytol:
            what = "duplicates" if abs(c - 1.0) <= 1e-8 else f"x_{b} = {c:.6g} x_{a}"
            raise ValueError(
                f"Y cannot be interpolated on this K0 (rank-deficient, P = {P}; T = 0): training "
                f"inputs {a} and {b} are positively parallel ({what}), so every network output "
                f"has f(x_{b}) = {c:.6g} f(x_{a}), but Y[{b}] != {c:.6g} Y[{a}]; merge or drop "
                "the repeated inputs, or pass T > 0 (regression)")
