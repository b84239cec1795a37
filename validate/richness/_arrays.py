"""Array plumbing shared by the richness measures: numpy conversion (torch tensors accepted
without importing torch), (E, n, k) stacks, row blocks and blockwise centred second moments.

Conventions: float64 internally; any input with a ``.detach`` method is moved to numpy with
``x.detach().cpu().numpy()``. Every measure taking (n, p) matrices also takes a stack (E, n, p)
of E networks; arrays are processed in row blocks of ``block_rows`` so float32 inputs of
benchmark size are never copied to float64 in full.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

_BLOCK_BYTES = 1 << 26  # float64 bytes per row block (64 MiB) when block_rows is None


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
    if isinstance(block_rows, bool) or not (isinstance(block_rows, numbers.Integral) and block_rows >= 1):
        raise ValueError(f"block_rows must be a positive int or None, got {block_rows!r}")
    return int(block_rows)


def _mean_checked(arr: np.ndarray, name: str, rows: int, *, measure: str | None = None) -> np.ndarray:
    """Column means (E, k) in float64, checking finiteness block by block. With ``measure``
    (e.g. "CKA"), an input that is zero everywhere (every member) raises ValueError."""
    E, n, k = arr.shape
    total = np.zeros((E, k))
    nonzero = False
    for s in range(0, n, rows):
        blk = np.asarray(arr[:, s : s + rows], dtype=np.float64)
        if not np.isfinite(blk).all():
            raise ValueError(f"{name} contains NaN or infinite values")
        nonzero = nonzero or bool(blk.any())
        total += blk.sum(axis=1)
    if measure is not None and not nonzero:
        raise ValueError(f"{name} is all zero (shape {arr.shape if E > 1 else arr.shape[1:]}): "
                         f"zero features have no defined {measure}")
    return total / n


def _check_varies(arr: np.ndarray, name: str, rows: int, *, measure: str) -> None:
    """ValueError when the stack ``arr`` (E, n, k) is constant over the samples in every member
    (all rows equal, e.g. constant features): such an input has no defined ``measure``. A single
    constant member of a stack is left to the measure (a documented NaN)."""
    first = arr[:, :1]
    for s in range(0, arr.shape[1], rows):
        if (arr[:, s : s + rows] != first).any():
            return
    shape = arr.shape if arr.shape[0] > 1 else arr.shape[1:]
    raise ValueError(f"{name} has zero variance over the samples (every row is the same, shape "
                     f"{shape}): constant features have no defined {measure}")


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


def _moments(X, Y, *, rows, name_x, name_y, want_xx=True, want_yy=True, want_diag=False,
             measure: str | None = None):
    """Centred moments of X (E, n, p) and, unless Y is None, of Y (E', n, q) and X^T Y.
    ``measure`` names the measure for the all-zero-input error (None: no such check)."""
    n = X.shape[1]
    mx = _mean_checked(X, name_x, rows, measure=measure)
    my = _mean_checked(Y, name_y, rows, measure=measure) if Y is not None else None
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


def _ratio(num, den):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _ret(values: np.ndarray, batched: bool):
    return values if batched else float(values[0])


def _orthonormal_columns(Yc: np.ndarray, rtol: float) -> list[np.ndarray]:
    """Per member, an orthonormal basis (Euclidean) of the column span of Yc[e] (n, q): the left
    singular vectors with singular value > rtol * largest (none if the matrix is zero)."""
    out = []
    for M in Yc:
        U, s, _ = np.linalg.svd(M, full_matrices=False)
        r = int(np.sum(s > rtol * s[0])) if s.size and s[0] > 0 else 0
        out.append(U[:, :r])
    return out
