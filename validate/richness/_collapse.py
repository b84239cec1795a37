"""Neural-collapse baselines of seed 004 (Sec. 4.1, App. D.1): class statistics, NC1 and the
simplex-ETF check NC2."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from richlazy.theory.checks import check_alloc

from ._arrays import _as_stack, _ratio, _ret, _to_numpy

__all__ = ["ClassStatistics", "NC2Result", "class_statistics", "nc1", "nc2_etf"]


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
    """Compute :class:`ClassStatistics`; labels are ints in [0, n_classes), shape (n,) or (E, n).
    An ``n_classes`` whose arrays exceed 16 GiB raises ValueError."""
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
    if isinstance(C, bool) or not (isinstance(C, numbers.Integral) and C >= 2) or lab.max() >= C:
        raise ValueError(f"n_classes must be an int >= 2 covering all labels, got {n_classes!r}")
    check_alloc("n_classes", Phi.shape[0] * C * (lab.shape[1] + 3 * Phi.shape[2]),
                what="the one-hot labels and the (E, C, p) class means")
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


def _separated_members(st: ClassStatistics, measure: str) -> np.ndarray:
    """(E,) bool: members whose class means differ beyond round-off (1e-12 relative to the
    largest class mean). ValueError naming ``features`` when no member's do (e.g. all-zero or
    constant features): zero between-class scatter leaves ``measure`` undefined."""
    dm = np.abs(st.class_means - st.global_mean[:, None, :]).max(axis=(1, 2))
    scale = np.abs(st.class_means).max(axis=(1, 2))
    ok = dm > 1e-12 * scale
    if not ok.any():
        raise ValueError(f"features has identical class means (zero between-class scatter, e.g. "
                         f"all-zero or constant features): {measure} is undefined")
    return ok


def nc1(features, labels, *, n_classes: int | None = None, ridge: float = 1e-4, rcond: float = 1e-10):
    """Neural-collapse within-class variability NC1 = Tr(Σ_b^† Σ_W), seed 004 Sec. 4.1 / eq. (26).

    Pseudo-inverse regularisation (stated, as App. H.2 asks):
      * ridge > 0 (default 1e-4, the paper's App. H.2 choice): Σ_b^† := (Σ_b + ridge I)^{-1}.
        ``ridge`` is absolute, so NC1 then depends on the feature scale, and within-class variance
        outside the (C-1)-dim between-class subspace is weighted by 1/ridge.
      * ridge = 0: Moore-Penrose pseudo-inverse keeping eigenvalues > rcond * λ_max(Σ_b);
        scale-free, sees within-class variance only inside the between-class subspace.
    NC1 = 0 under exact collapse (Σ_W = 0; Prop. 1). Σ_W, Σ_b as in :class:`ClassStatistics`.
    Features with identical class means (Σ_b = 0 up to round-off, e.g. all zero) raise
    ValueError; inside a stack such a member gives NaN. Returns float or ndarray (E,).
    """
    if isinstance(ridge, bool) or not (isinstance(ridge, numbers.Real) and ridge >= 0
                                       and math.isfinite(ridge)):
        raise ValueError(f"ridge must be a finite number >= 0, got {ridge!r}")
    if isinstance(rcond, bool) or not (isinstance(rcond, numbers.Real) and 0 <= rcond < 1):
        raise ValueError(f"rcond must be in [0, 1), got {rcond!r}")
    st = class_statistics(features, labels, n_classes=n_classes)
    separated = _separated_members(st, "NC1")
    lam, V = np.linalg.eigh(st.sigma_b)
    if ridge > 0:
        inv = 1.0 / (np.clip(lam, 0.0, None) + ridge)
    else:
        keep = lam > rcond * np.maximum(lam[:, -1:], np.finfo(float).tiny)
        inv = np.where(keep, 1.0 / np.where(keep, lam, 1.0), 0.0)
    pinv = (V * inv[:, None, :]) @ np.swapaxes(V, 1, 2)
    val = np.einsum("eij,eji->e", pinv, st.sigma_w)
    return _ret(np.where(separated, val, np.nan), st.batched)


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
    (seed 004 Prop. 2, eqs. 27 and 56). [MT] Features with identical class means (e.g. all
    zero) raise ValueError; inside a stack such a member has NaN cosines."""
    st = class_statistics(features, labels, n_classes=n_classes)
    _separated_members(st, "the simplex-ETF check NC2")
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
