"""The dynamical low-rank measure D_LR = 1 - CKA(T, T_MP) of seed 004 (eq. 4, App. E.1)."""

from __future__ import annotations

import numpy as np

from ._arrays import _block_rows, _fro2, _mean_checked, _moments, _orthonormal_columns, _pair, _ratio, _ret

__all__ = ["dlr"]


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
    constant outputs). ``features`` or ``outputs`` zero everywhere (every member of a stack)
    raise ValueError: zero features have no defined D_LR.
    """
    Phi, F, batched = _pair(features, outputs, "features", "outputs")
    rows = _block_rows(Phi, block_rows)
    if not whiten_outputs:
        m = _moments(Phi, F, rows=rows, name_x="features", name_y="outputs", measure="D_LR")
        c = _ratio(_fro2(m.xy), np.sqrt(_fro2(m.xx) * _fro2(m.yy)))
        return _ret(1.0 - c, batched)
    Fm = np.asarray(F, dtype=np.float64)
    if not np.isfinite(Fm).all():
        raise ValueError("outputs contains NaN or infinite values")
    _mean_checked(Phi, "features", rows, measure="D_LR")
    _mean_checked(Fm, "outputs", rows, measure="D_LR")
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
