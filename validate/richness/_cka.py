"""Centred kernel alignment (seed 004, eq. 7/58) between feature matrices or Gram matrices, and
the kernel similarity to initialisation S_init (Sec. 4.1)."""

from __future__ import annotations

import numpy as np
from richlazy.theory.checks import as_psd_matrix

from ._arrays import _block_rows, _check_varies, _fro2, _moments, _pair, _ratio, _ret, _to_numpy

__all__ = ["cka", "linear_cka", "s_init"]


def _hsic_unbiased(cross_fro2, d1, d2, n):
    """Unbiased HSIC U-statistic (Song et al. 2012) for linear kernels of centred data.

    With K = Xc Xc^T (zero row sums) and K~ = K minus its diagonal d1:
    tr(K~L~) = ||Xc^T Yc||_F^2 - d1.d2,  1^T K~ 1 = -sum d1,  1^T K~ L~ 1 = d1.d2.
    """
    d12 = (d1 * d2).sum(axis=1)  # broadcasts an ensemble axis of size 1
    s1, s2 = d1.sum(axis=1), d2.sum(axis=1)
    val = cross_fro2 - d12 + s1 * s2 / ((n - 1) * (n - 2)) - 2.0 * d12 / (n - 2)
    return val / (n * (n - 3))


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
    float, or ndarray (E,) for batched input. An input that is zero everywhere or constant over
    the samples (every member of a stack) raises ValueError: such features have no defined CKA;
    inside a stack, a member whose features do not vary gives NaN.
    """
    return _linear_cka(X, Y, debiased=debiased, block_rows=block_rows, names=("X", "Y"))


def _linear_cka(X, Y, *, debiased: bool, block_rows, names: tuple[str, str]):
    """:func:`linear_cka`; error messages name the caller's arguments ``names``."""
    A, B, batched = _pair(X, Y, names[0], names[1], min_rows=4 if debiased else 2)
    rows = _block_rows(A, block_rows)
    m = _moments(A, B, rows=rows, name_x=names[0], name_y=names[1], want_diag=debiased, measure="CKA")
    _check_varies(A, names[0], rows, measure="CKA")
    _check_varies(B, names[1], rows, measure="CKA")
    if debiased:
        hxy = _hsic_unbiased(_fro2(m.xy), m.dx, m.dy, m.n)
        hxx = _hsic_unbiased(_fro2(m.xx), m.dx, m.dx, m.n)
        hyy = _hsic_unbiased(_fro2(m.yy), m.dy, m.dy, m.n)
        return _ret(_ratio(hxy, np.sqrt(np.clip(hxx * hyy, 0.0, None))), batched)
    num = _fro2(m.xy)
    den = np.sqrt(_fro2(m.xx) * _fro2(m.yy))
    return _ret(_ratio(num, den), batched)


def _check_kernel_stack(name: str, M: np.ndarray) -> None:
    """Each member of the stack M (E, n, n) must be a non-zero positive semi-definite kernel, and
    not every member may be constant (zero after centring)."""
    for e, Me in enumerate(M):
        which = f"{name}[{e}]" if M.shape[0] > 1 else name
        if not np.any(Me):
            raise ValueError(f"{which} is all zero: a zero kernel has no defined CKA")
        as_psd_matrix(which, Me)
    if (M == M[:, :1, :1]).all():
        raise ValueError(f"{name} is constant (every entry {float(M[0, 0, 0]):.6g}, zero after "
                         "centring: the kernel of constant features) and has no defined CKA")


def cka(K, L, *, debiased: bool = False):
    """CKA between two n x n Gram (kernel) matrices, eq. (7) of seed 004. [MT]

    For kernels known only as Gram matrices (e.g. an NTK). Cost O(n^2) memory; for feature
    matrices use :func:`linear_cka`, which never forms K. ``debiased`` as in :func:`linear_cka`
    (unbiased HSIC U-statistic of Song et al. 2012 with the diagonals of K and L removed).

    K, L : arrays (n, n) or (E, n, n), symmetric positive semi-definite (ValueError with the
    smallest eigenvalue otherwise), not identically zero and not constant (zero after centring;
    ValueError). Returns float or ndarray (E,); inside a stack, NaN for a member whose kernel is
    constant.
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
        M = M if M.ndim == 3 else M[None]
        _check_kernel_stack(name, M)
        mats.append(M)
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


def s_init(features_init, features_learned, *, debiased: bool = False, block_rows=None):
    """Kernel similarity to initialisation S_init = CKA(K_init, K_learned), Sec. 4.1 of seed 004.

    Here K is the last-layer feature kernel Φ Φ^T at initialisation and after training (the
    paper's S_init follows Yang & Hu 2021; for an NTK Gram use :func:`cka`). Smaller = the kernel
    moved more. Same shapes and estimators as :func:`linear_cka`. [MT]
    """
    return _linear_cka(features_init, features_learned, debiased=debiased, block_rows=block_rows,
                       names=("features_init", "features_learned"))
