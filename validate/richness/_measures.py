"""Richness measures of seed 004 (Nam et al., *Decoupling Dynamical Richness from Representation
Learning*, arXiv 2410.04264) for any network, on numpy arrays or torch tensors.

Notation (paper Sec. 2): a network is a feature map Φ: x -> R^p (post-activations of the
penultimate layer) followed by a linear last layer giving outputs f̂(x) in R^C. From n samples we
hold the feature matrix Φ (n x p) and the output matrix F (n x C). The empirical inner product is
<f|g> = (1/n) Σ_x f(x) g(x) (App. B.1 with q = the empirical distribution).

Measures
--------
* :func:`linear_cka`, :func:`cka` -- centred kernel alignment, eq. (7)/(58), biased (the paper's)
  or debiased (unbiased HSIC U-statistic).
* :func:`dlr` -- D_LR = 1 - CKA(T, T_MP), eq. (4), computed from Φ and F (App. E.1) without ever
  forming an n x n matrix.
* :func:`nystrom_eigen`, :func:`eigen_curves` -- Nyström eigenpairs (Sec. 5.2, eq. 6, Algorithm 1)
  and the visualisation curves Π*(k), Π̂(k), ρ_k/ρ_1 of eq. (5).
* :func:`effective_dimension` -- D_eff, eq. (9) (eq. (8) with ``drop_first=False``).
* Baselines (Sec. 4.1): :func:`s_init`, :func:`parameter_norm_sq`, :func:`nc1`, :func:`nc2_etf`.

Conventions: float64 internally; any input with a ``.detach`` method (a torch tensor) is moved to
numpy with ``x.detach().cpu().numpy()`` (torch is never imported here). Every function taking
(n, p) matrices also takes a stack (E, n, p) of E networks and then returns one value per network;
arrays are processed in row blocks of ``block_rows`` so float32 inputs of benchmark size are never
copied to float64 in full.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "linear_cka",
    "cka",
    "dlr",
    "s_init",
    "NystromEigen",
    "nystrom_eigen",
    "EigenCurves",
    "eigen_curves",
    "effective_dimension",
    "parameter_norm_sq",
    "ClassStatistics",
    "class_statistics",
    "nc1",
    "NC2Result",
    "nc2_etf",
    "RichnessSweep",
]

_BLOCK_BYTES = 1 << 26  # float64 bytes per row block (64 MiB) when block_rows is None


# ----------------------------------------------------------------------------- input handling


def _to_numpy(x, name: str) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    arr = np.asarray(x)
    if arr.dtype.kind not in "fiub":
        raise TypeError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    if arr.dtype.kind != "f":
        arr = arr.astype(np.float64)
    return arr


def _as_stack(x, name: str, *, min_rows: int = 2) -> tuple[np.ndarray, bool]:
    """Return x as (E, n, k) plus whether it came batched; check shape (not finiteness)."""
    arr = _to_numpy(x, name)
    if arr.ndim not in (2, 3):
        raise ValueError(f"{name} must have shape (n, k) or (E, n, k), got an array of shape {arr.shape}")
    batched = arr.ndim == 3
    if not batched:
        arr = arr[None]
    if arr.shape[1] < min_rows:
        raise ValueError(f"{name} needs at least {min_rows} samples (rows), got n={arr.shape[1]}")
    if arr.shape[2] < 1 or arr.shape[0] < 1:
        raise ValueError(f"{name} must have at least one column and one member, got {arr.shape}")
    return arr, batched


def _pair(a, b, name_a, name_b, *, min_rows=2):
    """Two stacks with equal n and broadcastable ensemble axes."""
    A, ba = _as_stack(a, name_a, min_rows=min_rows)
    B, bb = _as_stack(b, name_b, min_rows=min_rows)
    if A.shape[1] != B.shape[1]:
        raise ValueError(
            f"{name_a} and {name_b} must have the same number of samples n, got {A.shape[1]} and {B.shape[1]}"
        )
    if A.shape[0] != B.shape[0] and 1 not in (A.shape[0], B.shape[0]):
        raise ValueError(f"ensemble sizes of {name_a} ({A.shape[0]}) and {name_b} ({B.shape[0]}) differ")
    return A, B, ba or bb


def _block_rows(arr: np.ndarray, block_rows: int | None) -> int:
    if block_rows is None:
        return max(1, _BLOCK_BYTES // (8 * arr.shape[0] * arr.shape[2]))
    if not (isinstance(block_rows, int) and block_rows >= 1):
        raise ValueError(f"block_rows must be a positive int or None, got {block_rows!r}")
    return block_rows


def _mean_checked(arr: np.ndarray, name: str, rows: int) -> np.ndarray:
    """Column means (E, k) in float64, checking finiteness block by block."""
    E, n, k = arr.shape
    total = np.zeros((E, k))
    for s in range(0, n, rows):
        blk = np.asarray(arr[:, s : s + rows], dtype=np.float64)
        if not np.isfinite(blk).all():
            raise ValueError(f"{name} contains NaN or infinite values")
        total += blk.sum(axis=1)
    return total / n


@dataclass(frozen=True)
class _Moments:
    """Centred second moments of a pair (X, Y) accumulated over row blocks."""

    n: int
    mean_x: np.ndarray  # (E, p)
    mean_y: np.ndarray | None  # (E, q)
    xx: np.ndarray | None  # (E, p, p)  Xc^T Xc
    yy: np.ndarray | None  # (E, q, q)
    xy: np.ndarray | None  # (E, p, q)  Xc^T Yc
    dx: np.ndarray | None  # (E, n) squared norms of centred rows of X
    dy: np.ndarray | None


def _moments(X, Y, *, rows, name_x, name_y, want_xx=True, want_yy=True, want_diag=False):
    """Centred moments of X (E, n, p) and, unless Y is None, of Y (E', n, q) and X^T Y."""
    n = X.shape[1]
    mx = _mean_checked(X, name_x, rows)
    my = _mean_checked(Y, name_y, rows) if Y is not None else None
    E = max(X.shape[0], Y.shape[0]) if Y is not None else X.shape[0]
    xx = np.zeros((X.shape[0], X.shape[2], X.shape[2])) if want_xx else None
    yy = np.zeros((Y.shape[0], Y.shape[2], Y.shape[2])) if (want_yy and Y is not None) else None
    xy = np.zeros((E, X.shape[2], Y.shape[2])) if Y is not None else None
    dx = np.zeros((X.shape[0], n)) if want_diag else None
    dy = np.zeros((Y.shape[0], n)) if (want_diag and Y is not None) else None
    for s in range(0, n, rows):
        bx = np.asarray(X[:, s : s + rows], dtype=np.float64) - mx[:, None, :]
        bxt = np.swapaxes(bx, 1, 2)
        if want_xx:
            # 2-d product for a single network lets numpy call BLAS syrk (half the flops).
            xx += (bx[0].T @ bx[0])[None] if bx.shape[0] == 1 else bxt @ bx
        if want_diag:
            dx[:, s : s + rows] = np.einsum("eik,eik->ei", bx, bx)
        if Y is None:
            continue
        by = np.asarray(Y[:, s : s + rows], dtype=np.float64) - my[:, None, :]
        xy += bxt @ by
        if yy is not None:
            yy += np.swapaxes(by, 1, 2) @ by
        if want_diag:
            dy[:, s : s + rows] = np.einsum("eik,eik->ei", by, by)
    return _Moments(n, mx, my, xx, yy, xy, dx, dy)


def _fro2(a: np.ndarray) -> np.ndarray:
    return np.einsum("eij,eij->e", a, a)


def _hsic_unbiased(cross_fro2, d1, d2, n):
    """Unbiased HSIC U-statistic (Song et al. 2012) for linear kernels of centred data.

    With K = Xc Xc^T (zero row sums) and K~ = K minus its diagonal d1:
    tr(K~L~) = ||Xc^T Yc||_F^2 - d1.d2,  1^T K~ 1 = -sum d1,  1^T K~ L~ 1 = d1.d2.
    """
    d12 = (d1 * d2).sum(axis=1)  # broadcasts an ensemble axis of size 1
    s1, s2 = d1.sum(axis=1), d2.sum(axis=1)
    val = cross_fro2 - d12 + s1 * s2 / ((n - 1) * (n - 2)) - 2.0 * d12 / (n - 2)
    return val / (n * (n - 3))


def _ratio(num, den):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _ret(values: np.ndarray, batched: bool):
    return values if batched else float(values[0])


# ----------------------------------------------------------------------------- CKA and D_LR


def linear_cka(X, Y, *, debiased: bool = False, block_rows: int | None = None):
    """Linear CKA between two representations of the same n samples, eq. (7)/(58) of seed 004.

    CKA(A, B) = Tr(c(A) c(B)) / (||c(A)||_F ||c(B)||_F) with A = X X^T, B = Y Y^T, c(A) = H A H,
    H = I - 11^T/n. Computed from the square roots: Tr(c(A)c(B)) = ||Xc^T Yc||_F^2 and
    ||c(A)||_F = ||Xc^T Xc||_F with column-centred Xc, Yc -- O(n p q + n p^2 + n q^2) time and
    O(p^2 + q^2 + p q) extra memory, no n x n matrix. [MT]

    Estimators
    ----------
    ``debiased=False`` (default) is the paper's plug-in (biased HSIC) estimator, in [0, 1]. Use it
    to reproduce the paper's numbers and whenever n is well above the feature dimensions: for
    independent isotropic features it is biased upwards by about sqrt(pq / ((n+p)(n+q))).
    ``debiased=True`` replaces each HSIC by the unbiased U-statistic (Song et al. 2012), which has
    expectation 0 for independent features; it needs n >= 4, may be slightly negative, and is the
    right choice when p or q is comparable to n (e.g. comparing wide layers on few samples).

    Parameters
    ----------
    X : array (n, p) or (E, n, p);  Y : array (n, q) or (E, n, q)
        Rows are samples; a leading axis E holds independent networks (broadcast when one is 1).
    debiased : bool
    block_rows : int, optional
        Rows per block (memory knob). Default: 64 MiB of float64 per block.

    Returns
    -------
    float, or ndarray (E,) for batched input. NaN where either representation is constant.
    """
    A, B, batched = _pair(X, Y, "X", "Y", min_rows=4 if debiased else 2)
    rows = _block_rows(A, block_rows)
    m = _moments(A, B, rows=rows, name_x="X", name_y="Y", want_diag=debiased)
    if debiased:
        hxy = _hsic_unbiased(_fro2(m.xy), m.dx, m.dy, m.n)
        hxx = _hsic_unbiased(_fro2(m.xx), m.dx, m.dx, m.n)
        hyy = _hsic_unbiased(_fro2(m.yy), m.dy, m.dy, m.n)
        return _ret(_ratio(hxy, np.sqrt(np.clip(hxx * hyy, 0.0, None))), batched)
    num = _fro2(m.xy)
    den = np.sqrt(_fro2(m.xx) * _fro2(m.yy))
    return _ret(_ratio(num, den), batched)


def cka(K, L, *, debiased: bool = False):
    """CKA between two n x n Gram (kernel) matrices, eq. (7) of seed 004. [MT]

    For kernels known only as Gram matrices (e.g. an NTK). Cost O(n^2) memory; for feature
    matrices use :func:`linear_cka`, which never forms K. ``debiased`` as in :func:`linear_cka`
    (unbiased HSIC U-statistic of Song et al. 2012 with the diagonals of K and L removed).

    K, L : arrays (n, n) or (E, n, n), symmetric. Returns float or ndarray (E,).
    """
    Ka, Kb = _to_numpy(K, "K"), _to_numpy(L, "L")
    batched = Ka.ndim == 3 or Kb.ndim == 3
    mats = []
    for name, M in (("K", Ka), ("L", Kb)):
        if M.ndim not in (2, 3) or M.shape[-1] != M.shape[-2]:
            raise ValueError(f"{name} must be square (n, n) or (E, n, n), got shape {M.shape}")
        M = np.asarray(M, dtype=np.float64)
        if not np.isfinite(M).all():
            raise ValueError(f"{name} contains NaN or infinite values")
        if not np.allclose(M, np.swapaxes(M, -1, -2), rtol=1e-8, atol=1e-12 * np.abs(M).max()):
            raise ValueError(f"{name} must be symmetric")
        mats.append(M if M.ndim == 3 else M[None])
    Ka, Kb = mats
    n = Ka.shape[-1]
    if Kb.shape[-1] != n:
        raise ValueError(f"K and L must have the same size n, got {n} and {Kb.shape[-1]}")
    if Ka.shape[0] != Kb.shape[0] and 1 not in (Ka.shape[0], Kb.shape[0]):
        raise ValueError(f"ensemble sizes of K ({Ka.shape[0]}) and L ({Kb.shape[0]}) differ")
    Ka, Kb = np.broadcast_arrays(Ka, Kb)
    if n < (4 if debiased else 2):
        raise ValueError(f"K needs n >= {4 if debiased else 2} samples, got n={n}")
    if debiased:

        def hsic(A, B):
            A = A.copy()
            B = B.copy()
            idx = np.arange(n)
            A[:, idx, idx] = 0.0
            B[:, idx, idx] = 0.0
            a1, b1 = A.sum(axis=2), B.sum(axis=2)
            t = np.einsum("eij,eij->e", A, B)
            ab = np.einsum("ei,ei->e", a1, b1)
            val = t + a1.sum(1) * b1.sum(1) / ((n - 1) * (n - 2)) - 2.0 * ab / (n - 2)
            return val / (n * (n - 3))

        num, dA, dB = hsic(Ka, Kb), hsic(Ka, Ka), hsic(Kb, Kb)
        return _ret(_ratio(num, np.sqrt(np.clip(dA * dB, 0.0, None))), batched)

    def centre(A):
        return (
            A
            - A.mean(axis=1, keepdims=True)
            - A.mean(axis=2, keepdims=True)
            + A.mean(axis=(1, 2), keepdims=True)
        )

    cA, cB = centre(Ka), centre(Kb)
    num = np.einsum("eij,eij->e", cA, cB)
    return _ret(_ratio(num, np.sqrt(_fro2(cA) * _fro2(cB))), batched)


def _orthonormal_columns(Yc: np.ndarray, rtol: float) -> list[np.ndarray]:
    """Per member, an orthonormal basis (Euclidean) of the column span of Yc[e] (n, q): the left
    singular vectors with singular value > rtol * largest (none if the matrix is zero)."""
    out = []
    for M in Yc:
        U, s, _ = np.linalg.svd(M, full_matrices=False)
        r = int(np.sum(s > rtol * s[0])) if s.size and s[0] > 0 else 0
        out.append(U[:, :r])
    return out


def dlr(
    features,
    outputs,
    *,
    whiten_outputs: bool = False,
    block_rows: int | None = None,
):
    """Dynamical low-rank measure D_LR = 1 - CKA(T, T_MP), eq. (4) of seed 004. [MT]

    T is represented by A = Φ Φ^T (feature kernel, eq. 1) and T_MP by B (App. E.1), both centred
    as in eq. (7). 0 = richest (features span exactly the learned-function space, isotropically),
    1 = laziest.

    B choice (``whiten_outputs``):
      * False (default, App. E.1, the paper's numbers): B = F F^T from the raw outputs.
      * True (Definition 1 literally): B = orthogonal projector onto the span of the centred
        outputs, i.e. c(P_Ĥ) when Ĥ contains the constant function (App. B.3). The two agree
        when the centred outputs are isotropic (orthogonal columns of equal norm), which is the
        paper's assumption of orthogonal, isotropic targets (Sec. 2).

    Cost: O(n p C) for the alignment, O(n p^2) for ||c(A)||_F (one p x p Gram accumulated over row
    blocks, a BLAS-3 product), O(n C^2) for the outputs; memory O(p^2 + pC + block) -- never an
    n x n matrix, and float32 features are converted block by block.

    Parameters
    ----------
    features : (n, p) or (E, n, p)   penultimate-layer post-activations Φ(x) on n samples.
    outputs : (n, C) or (E, n, C)    network outputs f̂(x) on the same samples.
    whiten_outputs : bool
    block_rows : int, optional   rows per block (memory knob).

    Returns float, or ndarray (E,) for batched input (NaN for a member with constant features or
    constant outputs).
    """
    Phi, F, batched = _pair(features, outputs, "features", "outputs")
    rows = _block_rows(Phi, block_rows)
    if not whiten_outputs:
        m = _moments(Phi, F, rows=rows, name_x="features", name_y="outputs")
        c = _ratio(_fro2(m.xy), np.sqrt(_fro2(m.xx) * _fro2(m.yy)))
        return _ret(1.0 - c, batched)
    Fm = np.asarray(F, dtype=np.float64)
    if not np.isfinite(Fm).all():
        raise ValueError("outputs contains NaN or infinite values")
    Fc = Fm - Fm.mean(axis=1, keepdims=True)
    bases = _orthonormal_columns(Fc, rtol=1e-10)
    vals = np.empty(max(Phi.shape[0], len(bases)))
    for e in range(vals.size):
        Q = bases[e if len(bases) > 1 else 0]
        P = Phi[e if Phi.shape[0] > 1 else 0][None]
        if Q.shape[1] == 0:
            vals[e] = np.nan
            continue
        m = _moments(P, Q[None], rows=rows, name_x="features", name_y="outputs", want_yy=False)
        vals[e] = 1.0 - _ratio(_fro2(m.xy), np.sqrt(_fro2(m.xx) * Q.shape[1]))[0]
    return _ret(vals, batched)


def s_init(features_init, features_learned, *, debiased: bool = False, block_rows=None):
    """Kernel similarity to initialisation S_init = CKA(K_init, K_learned), Sec. 4.1 of seed 004.

    Here K is the last-layer feature kernel Φ Φ^T at initialisation and after training (the
    paper's S_init follows Yang & Hu 2021; for an NTK Gram use :func:`cka`). Smaller = the kernel
    moved more. Same shapes and estimators as :func:`linear_cka`. [MT]
    """
    return linear_cka(features_init, features_learned, debiased=debiased, block_rows=block_rows)


# ----------------------------------------------------------------------------- Nyström & curves


@dataclass(frozen=True)
class NystromEigen:
    """Nyström eigenpairs of the feature kernel operator T (seed 004 Sec. 5.2, eq. 6, Alg. 1).

    eigenvalues : (E, p) ρ_k ≈ s_k, eigenvalues of Σ = Φ^T Φ / n (uncentred, so the constant
        mode is kept: it is ρ_1 in practice, App. D.2), descending, clipped at 0.
    eigenvectors : (E, p, p) u_k in columns.
    rank : (E,) number of eigenvalues above ``rtol * ρ_1`` (the usable eigenfunctions).
    n_samples : n used to build Σ.
    batched : whether the input had an ensemble axis.
    """

    eigenvalues: np.ndarray
    eigenvectors: np.ndarray
    rank: np.ndarray
    n_samples: int
    batched: bool

    def eigenfunctions(self, features, *, member: int = 0) -> np.ndarray:
        """e_k(x) ≈ Φ(x)^T u_k / sqrt(s_k) for k < rank, on the rows of ``features`` (n', p)."""
        Phi = np.asarray(_to_numpy(features, "features"), dtype=np.float64)
        p = self.eigenvalues.shape[1]
        if Phi.ndim != 2 or Phi.shape[1] != p:
            raise ValueError(f"features must have shape (n, {p}), got {Phi.shape}")
        r = int(self.rank[member])
        U = self.eigenvectors[member][:, :r]
        return (Phi @ U) / np.sqrt(self.eigenvalues[member][:r])


def nystrom_eigen(features, *, rtol: float = 1e-10, block_rows: int | None = None) -> NystromEigen:
    """Nyström approximation of the eigenvalues ρ_k and eigenfunctions e_k of T, eq. (6). [MT]

    Σ = (1/n) Φ^T Φ = U S U^T;  ρ_k ≈ s_k;  e_k(x) ≈ Φ(x)^T u_k / sqrt(s_k). Exact when the n
    samples are the whole input distribution; otherwise consistent as n -> inf (App. J). Use
    n > p. O(n p^2 + p^3) time, O(p^2) memory.
    """
    Phi, batched = _as_stack(features, "features")
    if not (isinstance(rtol, float | int) and 0 <= rtol < 1):
        raise ValueError(f"rtol must be in [0, 1), got {rtol!r}")
    rows = _block_rows(Phi, block_rows)
    m = _moments(Phi, None, rows=rows, name_x="features", name_y="")
    sigma = m.xx / m.n + m.mean_x[:, :, None] * m.mean_x[:, None, :]
    s, U = np.linalg.eigh(sigma)
    s, U = s[:, ::-1], U[:, :, ::-1]
    s = np.clip(s, 0.0, None)
    rank = np.sum(s > rtol * np.maximum(s[:, :1], np.finfo(float).tiny), axis=1)
    return NystromEigen(s, U, rank, m.n, batched)


@dataclass(frozen=True)
class EigenCurves:
    """The three visualisation curves of eq. (5), seed 004, for E networks (leading axis).

    k : (p,) 1..p.
    target_power : (E, p) Π*(k) cumulative power of the target space H* in e_1..e_k.
    learned_power : (E, p) Π̂(k) same for the learned-function space Ĥ.
    relative_eigenvalues : (E, p) ρ_k / ρ_1.
    eigenvalues : (E, p) ρ_k.
    d_eff : (E,) effective dimension D_eff, eq. (9).
    target_dim, learned_dim : (E,) numerical dimensions of H* and Ĥ on the evaluation samples.
    rank : (E,) number of usable eigenpairs (eigenvalues above the Nyström cut-off); beyond it
        ρ_k is round-off and the cumulative curves are constant.
    """

    k: np.ndarray
    target_power: np.ndarray
    learned_power: np.ndarray
    relative_eigenvalues: np.ndarray
    eigenvalues: np.ndarray
    d_eff: np.ndarray
    target_dim: np.ndarray
    learned_dim: np.ndarray
    rank: np.ndarray


def _cumulative_power(Phi, eig: NystromEigen, e: int, space: np.ndarray, rows: int):
    """Π(k) = Σ_{j<=k} <e_j|P_H e_j> / dim H on the rows of Phi, with H = col(space)."""
    Q = _orthonormal_columns(space[None], rtol=1e-10)[0]
    p = eig.eigenvalues.shape[1]
    out = np.zeros(p)
    dim = Q.shape[1]
    if dim == 0:
        return out * np.nan, 0
    n = Phi.shape[0]
    QtPhi = np.zeros((dim, p))
    for s in range(0, n, rows):
        QtPhi += Q[s : s + rows].T @ np.asarray(Phi[s : s + rows], dtype=np.float64)
    r = int(eig.rank[e])
    QtE = QtPhi @ eig.eigenvectors[e][:, :r] / np.sqrt(eig.eigenvalues[e][:r])
    # <e_k|P_H e_k> = ||Q^T e_k||^2 / n for the empirical inner product (1/n) Σ_x.
    per_mode = np.einsum("ck,ck->k", QtE, QtE) / n / dim
    out[:r] = np.cumsum(per_mode)
    out[r:] = out[r - 1] if r else 0.0
    return out, dim


def eigen_curves(
    features,
    targets,
    outputs,
    *,
    eig: NystromEigen | None = None,
    block_rows: int | None = None,
) -> EigenCurves:
    """Visualisation curves of seed 004, eq. (5): Π*(k), Π̂(k), ρ_k/ρ_1, plus D_eff (eq. 9).

    Π*(k) = Σ_{j<=k} <e_j|P_{H*} e_j> / dim H*,  Π̂(k) = Σ_{j<=k} <e_j|P_Ĥ e_j> / dim Ĥ. [RECON]:
    the printed eq. (5) squares the inner product and sums e_k over j; we read it as the norm of
    the projection, ||P_H e_j||^2 = <e_j|P_H e_j>, so that Π(p) = 1 when the features span H
    (as Sec. 5.1 states) and Π* reduces to the cumulative power of Canatar & Pehlevan (2022).

    Parameters
    ----------
    features : (n, p) or (E, n, p)  Φ on the evaluation samples (train or test).
    targets : (n, C) or (E, n, C)   target function f* on the same samples (e.g. one-hot labels).
    outputs : (n, C) or (E, n, C)   learned function f̂ on the same samples.
    eig : NystromEigen, optional    eigenpairs fitted on other samples (e.g. the training set);
        default: fitted on ``features`` themselves.
    """
    Phi, batched = _as_stack(features, "features")
    T, _ = _as_stack(targets, "targets")
    F, _ = _as_stack(outputs, "outputs")
    for name, M in (("targets", T), ("outputs", F)):
        if M.shape[1] != Phi.shape[1]:
            raise ValueError(
                f"{name} must have the same number of samples as features ({Phi.shape[1]}), got {M.shape[1]}"
            )
        if M.shape[0] not in (1, Phi.shape[0]):
            raise ValueError(f"{name} ensemble size {M.shape[0]} != features' {Phi.shape[0]}")
        if not np.isfinite(M).all():
            raise ValueError(f"{name} contains NaN or infinite values")
    rows = _block_rows(Phi, block_rows)
    if eig is None:
        eig = nystrom_eigen(Phi, block_rows=block_rows)
    if eig.eigenvalues.shape != (Phi.shape[0], Phi.shape[2]):
        raise ValueError(
            f"eig has eigenvalues of shape {eig.eigenvalues.shape}, expected "
            f"{(Phi.shape[0], Phi.shape[2])} to match features"
        )
    E, p = Phi.shape[0], Phi.shape[2]
    tp, lp = np.zeros((E, p)), np.zeros((E, p))
    tdim, ldim = np.zeros(E, dtype=int), np.zeros(E, dtype=int)
    for e in range(E):
        Te = np.asarray(T[e if T.shape[0] > 1 else 0], dtype=np.float64)
        Fe = np.asarray(F[e if F.shape[0] > 1 else 0], dtype=np.float64)
        tp[e], tdim[e] = _cumulative_power(Phi[e], eig, e, Te, rows)
        lp[e], ldim[e] = _cumulative_power(Phi[e], eig, e, Fe, rows)
    rho = eig.eigenvalues
    rel = _ratio(rho, rho[:, :1])
    return EigenCurves(np.arange(1, p + 1), tp, lp, rel, rho, effective_dimension(rho), tdim, ldim, eig.rank)


def effective_dimension(eigenvalues, *, drop_first: bool = True):
    """Effective dimension from eigenvalues ρ (descending), seed 004 App. B.4. [MT]

    drop_first=True: D_eff = 1 + exp(-Σ_{i>=2} π_i ln π_i), π_i = ρ_i / Σ_{j>=2} ρ_j (eq. 9: the
    first, constant, mode is counted as one dimension). drop_first=False: eq. (8) over all ρ.
    Equals d for d equal non-zero entries. ρ: (p,) or (..., p); tiny negative round-off is clipped.
    """
    rho = np.asarray(_to_numpy(eigenvalues, "eigenvalues"), dtype=np.float64)
    if rho.ndim < 1 or rho.shape[-1] < (2 if drop_first else 1):
        raise ValueError(f"eigenvalues must have at least 2 entries on the last axis, got shape {rho.shape}")
    if not np.isfinite(rho).all():
        raise ValueError("eigenvalues contains NaN or infinite values")
    scale = np.abs(rho).max(axis=-1, keepdims=True)
    if (rho < -1e-8 * scale).any():
        raise ValueError("eigenvalues must be non-negative (a PSD operator's spectrum)")
    rho = np.clip(rho, 0.0, None)
    part = rho[..., 1:] if drop_first else rho
    tot = part.sum(axis=-1, keepdims=True)
    pi = _ratio(part, np.broadcast_to(tot, part.shape))
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.sum(np.where(pi > 0, pi * np.log(np.where(pi > 0, pi, 1.0)), 0.0), axis=-1)
    d = np.exp(ent) + (1.0 if drop_first else 0.0)
    d = np.where(tot[..., 0] > 0, d, np.nan)
    return d if d.ndim else float(d)


# ----------------------------------------------------------------------------- baselines


def parameter_norm_sq(params, *, batched: bool = False):
    """Squared parameter norm ||θ||_F^2 = Σ over all parameter arrays of Σ θ^2 (Sec. 4.1). [MT]

    params : one array/tensor, an iterable of them, or an object with a ``parameters()`` method
        (e.g. a torch module). batched=True: every array has a leading ensemble axis E and the
        result is an ndarray (E,).
    """
    if hasattr(params, "parameters") and callable(params.parameters):
        params = list(params.parameters())
    elif hasattr(params, "detach") or isinstance(params, np.ndarray):
        params = [params]
    elif isinstance(params, Iterable):
        params = list(params)
    else:
        raise TypeError(f"params must be an array, an iterable of arrays or a module, got {type(params)}")
    if not params:
        raise ValueError("params is empty")
    total = None
    for i, p in enumerate(params):
        a = np.asarray(_to_numpy(p, f"params[{i}]"), dtype=np.float64)
        if not np.isfinite(a).all():
            raise ValueError(f"params[{i}] contains NaN or infinite values")
        if batched:
            if a.ndim < 1:
                raise ValueError(f"params[{i}] needs a leading ensemble axis when batched=True")
            v = (a.reshape(a.shape[0], -1) ** 2).sum(axis=1)
        else:
            v = float(np.sum(a**2))
        if total is not None and batched and np.shape(v) != np.shape(total):
            raise ValueError(f"params[{i}] has ensemble size {a.shape[0]}, expected {len(total)}")
        total = v if total is None else total + v
    return total


@dataclass(frozen=True)
class ClassStatistics:
    """Class means and covariances of features, seed 004 eqs. (31)-(34) (App. D.1).

    class_means : (E, C, p) μ_i;  global_mean : (E, p) μ̄ = mean of the class means (eq. 32);
    sigma_w : (E, p, p) Σ_W = Σ_i E_{x in A_i}[(Φ - μ_i)(Φ - μ_i)^T] (eq. 33);
    sigma_b : (E, p, p) Σ_b = (1/C) Σ_i (μ_i - μ̄)(μ_i - μ̄)^T (eq. 34); counts : (C,) or (E, C).
    """

    class_means: np.ndarray
    global_mean: np.ndarray
    sigma_w: np.ndarray
    sigma_b: np.ndarray
    counts: np.ndarray
    batched: bool


def class_statistics(features, labels, *, n_classes: int | None = None) -> ClassStatistics:
    """Compute :class:`ClassStatistics`; labels are ints in [0, n_classes), shape (n,) or (E, n)."""
    Phi, batched = _as_stack(features, "features")
    lab = _to_numpy(labels, "labels")
    if lab.ndim == 1:
        lab = lab[None]
    if lab.ndim != 2 or lab.shape[1] != Phi.shape[1] or lab.shape[0] not in (1, Phi.shape[0]):
        raise ValueError(f"labels must have shape (n,) or (E, n) with n={Phi.shape[1]}, got {lab.shape}")
    if not np.all(np.isfinite(lab)) or not np.all(lab == np.round(lab)) or lab.min() < 0:
        raise ValueError("labels must be non-negative integers")
    lab = lab.astype(np.int64)
    C = int(lab.max()) + 1 if n_classes is None else n_classes
    if not (isinstance(C, int) and C >= 2) or lab.max() >= C:
        raise ValueError(f"n_classes must be an int >= 2 covering all labels, got {n_classes!r}")
    Y = np.zeros(lab.shape + (C,))
    np.put_along_axis(Y, lab[..., None], 1.0, axis=-1)
    counts = Y.sum(axis=1)  # (E', C)
    if (counts == 0).any():
        raise ValueError(f"every class in 0..{C - 1} needs at least one sample")
    X = np.asarray(Phi, dtype=np.float64)
    if not np.isfinite(X).all():
        raise ValueError("features contains NaN or infinite values")
    means = np.swapaxes(Y, 1, 2) @ X / counts[..., None]  # (E, C, p)
    gmean = means.mean(axis=1)
    resid = X - np.take_along_axis(means, np.broadcast_to(lab, X.shape[:2])[..., None], axis=1)
    w = 1.0 / np.take_along_axis(counts, np.broadcast_to(lab, X.shape[:2]), axis=1)
    sigma_w = np.swapaxes(resid * w[..., None], 1, 2) @ resid
    dm = means - gmean[:, None, :]
    sigma_b = np.swapaxes(dm, 1, 2) @ dm / C
    return ClassStatistics(means, gmean, sigma_w, sigma_b, counts if lab.shape[0] > 1 else counts[0], batched)


def nc1(features, labels, *, n_classes: int | None = None, ridge: float = 1e-4, rcond: float = 1e-10):
    """Neural-collapse within-class variability NC1 = Tr(Σ_b^† Σ_W), seed 004 Sec. 4.1 / eq. (26).

    Pseudo-inverse regularisation (stated, as App. H.2 asks):
      * ridge > 0 (default 1e-4, the paper's App. H.2 choice): Σ_b^† := (Σ_b + ridge I)^{-1}.
        ``ridge`` is absolute, so NC1 then depends on the feature scale, and within-class variance
        outside the (C-1)-dim between-class subspace is weighted by 1/ridge.
      * ridge = 0: Moore-Penrose pseudo-inverse keeping eigenvalues > rcond * λ_max(Σ_b);
        scale-free, sees within-class variance only inside the between-class subspace.
    NC1 = 0 under exact collapse (Σ_W = 0; Prop. 1). Σ_W, Σ_b as in :class:`ClassStatistics`.
    Returns float or ndarray (E,).
    """
    if not (isinstance(ridge, float | int) and ridge >= 0 and math.isfinite(ridge)):
        raise ValueError(f"ridge must be a finite number >= 0, got {ridge!r}")
    if not (isinstance(rcond, float | int) and 0 <= rcond < 1):
        raise ValueError(f"rcond must be in [0, 1), got {rcond!r}")
    st = class_statistics(features, labels, n_classes=n_classes)
    lam, V = np.linalg.eigh(st.sigma_b)
    if ridge > 0:
        inv = 1.0 / (np.clip(lam, 0.0, None) + ridge)
    else:
        keep = lam > rcond * np.maximum(lam[:, -1:], np.finfo(float).tiny)
        inv = np.where(keep, 1.0 / np.where(keep, lam, 1.0), 0.0)
    pinv = (V * inv[:, None, :]) @ np.swapaxes(V, 1, 2)
    val = np.einsum("eij,eji->e", pinv, st.sigma_w)
    return _ret(val, st.batched)


@dataclass(frozen=True)
class NC2Result:
    """Simplex-ETF check of class means, seed 004 Prop. 2 / eq. (27).

    gram : (E, C, C) (μ_i - μ̄)^T (μ_j - μ̄); cosines : (E, C, C) normalised gram;
    etf_cosine : -1/(C-1) (target off-diagonal cosine);
    max_cosine_deviation : (E,) max_ij |cos_ij - (C δ_ij - 1)/(C - 1)|;
    norm_cv : (E,) std/mean of ||μ_i - μ̄|| (0 for an equinorm frame);
    etf_distance : (E,) || G/||G||_F - (I - 11^T/C)/||I - 11^T/C||_F ||_F (0 iff G ∝ δ_ij - 1/C).
    """

    gram: np.ndarray
    cosines: np.ndarray
    etf_cosine: float
    max_cosine_deviation: np.ndarray
    norm_cv: np.ndarray
    etf_distance: np.ndarray


def nc2_etf(features, labels, *, n_classes: int | None = None) -> NC2Result:
    """NC2 check: do the centred class means form a simplex ETF, (μ_i-μ̄)^T(μ_j-μ̄) ∝ δ_ij - 1/C?
    (seed 004 Prop. 2, eqs. 27 and 56). [MT]"""
    st = class_statistics(features, labels, n_classes=n_classes)
    dm = st.class_means - st.global_mean[:, None, :]
    G = dm @ np.swapaxes(dm, 1, 2)
    C = G.shape[-1]
    norms = np.sqrt(np.clip(np.einsum("eii->ei", G), 0.0, None))
    cos = _ratio(G, norms[:, :, None] * norms[:, None, :])
    target = (C * np.eye(C) - 1.0) / (C - 1)
    dev = np.nanmax(np.abs(cos - target), axis=(1, 2))
    cv = _ratio(norms.std(axis=1), norms.mean(axis=1))
    ref = np.eye(C) - 1.0 / C
    ref = ref / np.linalg.norm(ref)
    Gn = _ratio(G, np.linalg.norm(G, axis=(1, 2))[:, None, None])
    dist = np.linalg.norm(Gn - ref, axis=(1, 2))
    return NC2Result(G, cos, -1.0 / (C - 1), dev, cv, dist)


# ----------------------------------------------------------------------------- sweeps


@dataclass(frozen=True)
class RichnessSweep:
    """D_LR (or any richness measure) against a knob, with seeds: values (K,), measure (K, S).

    knob : name of the knob (e.g. "alpha (target downscale)", "gamma").
    values : (K,) knob values.  measure : (K, S) one entry per knob value and seed.
    measure_name : label, default "D_LR".
    """

    knob: str
    values: np.ndarray
    measure: np.ndarray
    measure_name: str = "D_LR"

    @property
    def mean(self) -> np.ndarray:
        return self.measure.mean(axis=1)

    @property
    def stderr(self) -> np.ndarray:
        S = self.measure.shape[1]
        if S < 2:
            return np.full(self.measure.shape[0], np.nan)
        return self.measure.std(axis=1, ddof=1) / math.sqrt(S)
