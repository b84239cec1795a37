"""Nyström eigenpairs of the feature kernel operator, the eigen-visualisation curves of seed 004
(Sec. 5, eqs. 5-6, Algorithm 1) and the effective dimension (App. B.4, eqs. 8-9)."""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ._arrays import (
    _as_stack,
    _block_rows,
    _mean_checked,
    _moments,
    _orthonormal_columns,
    _ratio,
    _to_numpy,
)

__all__ = ["EigenCurves", "NystromEigen", "effective_dimension", "eigen_curves", "nystrom_eigen"]


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
    if isinstance(rtol, bool) or not (isinstance(rtol, numbers.Real) and 0 <= rtol < 1):
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

    An input that is zero everywhere (every member of a stack) raises ValueError naming it; inside
    a stack, a member with zero targets or outputs has NaN curves, and ``d_eff`` is NaN for a
    member whose spectrum is zero after the first eigenvalue (rank <= 1).
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
        if not M.any():
            raise ValueError(f"{name} is all zero (shape {M.shape if M.shape[0] > 1 else M.shape[1:]}): "
                             f"a zero function spans no space, so its cumulative power is undefined")
    rows = _block_rows(Phi, block_rows)
    _mean_checked(Phi, "features", rows, measure="eigen curves")
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
    d_eff = _effective_dimension(rho, True)
    return EigenCurves(np.arange(1, p + 1), tp, lp, rel, rho, d_eff, tdim, ldim, eig.rank)


def effective_dimension(eigenvalues, *, drop_first: bool = True):
    """Effective dimension from eigenvalues ρ (descending), seed 004 App. B.4. [MT]

    drop_first=True: D_eff = 1 + exp(-Σ_{i>=2} π_i ln π_i), π_i = ρ_i / Σ_{j>=2} ρ_j (eq. 9: the
    first, constant, mode is counted as one dimension). drop_first=False: eq. (8) over all ρ.
    Equals d for d equal non-zero entries. ρ: (p,) or (..., p); tiny negative round-off is clipped.
    Eigenvalues that are all zero (after dropping the first) in every spectrum raise ValueError
    (no defined D_eff); inside a stack of spectra, such a spectrum gives NaN.
    """
    d = _effective_dimension(eigenvalues, drop_first)
    if np.isnan(d).all():
        which = "after the first " if drop_first else ""
        raise ValueError(f"eigenvalues {which}are all zero in every spectrum: a zero spectrum has "
                         f"no defined effective dimension")
    return d


def _effective_dimension(eigenvalues, drop_first: bool):
    """:func:`effective_dimension`, NaN for a spectrum that is zero (after the first)."""
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
