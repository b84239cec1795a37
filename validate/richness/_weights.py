"""Richness observables of trained same-different networks (seed 003, Fig. 1a/d, App. C, Fig. F1).

All functions take the parameters of a batched ensemble (tensors or arrays with a leading
ensemble axis E): hidden weights W (E, m, 2d) split as w_i = (v¹_i; v²_i), readouts a (E, m),
initial weights W0 and displacements ΔW = W − W0, and return numpy arrays over E.

* :func:`weight_alignment` — v¹·v²/(‖v¹‖‖v²‖) per unit (Fig. 1a, 1d; Theorem 1 predicts +1 for
  a_i > 0 and −1 for a_i < 0 in the rich regime);
* :func:`alignment_by_readout_sign` — |a|-weighted mean alignment of the positive and of the
  negative readout units;
* :func:`alignment_of_top_units` — mean alignment of the units with the largest |a| of each sign;
* :func:`readout_ratio` — |ā⁻|/|ā⁺| (App. C.4.3: ≈ 1.5 for L >= 3, ≈ 1 for L = 2);
* :func:`relative_activation_change` — ⟨|ΔW·x|⟩/⟨|W0·x|⟩ over units and test inputs (Fig. F1:
  ∝ γ, independent of d with the 1/√d output factor);
* :func:`relative_weight_change` — ‖ΔW‖/‖W0‖ (App. F, Eq. F.3: O(γ)).
"""

from __future__ import annotations

import numbers

import numpy as np
import torch

__all__ = [
    "alignment_by_readout_sign",
    "alignment_of_top_units",
    "readout_ratio",
    "relative_activation_change",
    "relative_weight_change",
    "weight_alignment",
]


def _t(name, x, ndim):
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "iuf":
            raise TypeError(f"{name} must be a real numeric array, got dtype {x.dtype}")
        x = torch.from_numpy(x)
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch tensor or numpy array, got {type(x).__name__}")
    if x.is_complex() or x.dtype == torch.bool:
        raise TypeError(f"{name} must be real, got dtype {x.dtype}")
    if x.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions (ensemble axis first), got shape "
                         f"{tuple(x.shape)}")
    if x.numel() == 0:
        raise ValueError(f"{name} must be non-empty, got shape {tuple(x.shape)}")
    x = x.detach().to("cpu", torch.float64)
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} must contain only finite values (found NaN or inf)")
    return x


def weight_alignment(W):
    """v¹_i·v²_i/(‖v¹_i‖‖v²_i‖) for every hidden unit: array (E, m). W is (E, m, 2d)."""
    W = _t("W", W, 3)
    D = W.shape[-1]
    if D % 2:
        raise ValueError(f"W must have an even input dimension 2d, got {D}")
    v1, v2 = W[..., : D // 2], W[..., D // 2:]
    cos = (v1 * v2).sum(-1) / (v1.norm(dim=-1) * v2.norm(dim=-1))
    return cos.numpy()


def alignment_by_readout_sign(W, a):
    """|a_i|-weighted mean alignment of units with a_i > 0 and with a_i < 0: two arrays (E,).

    Units with large readouts dominate the output, so they are the ones Theorem 1 and the
    Markov picture (App. C.4) speak about; small, barely trained units are down-weighted.
    """
    cos = weight_alignment(W)
    a = _t("a", a, 2).numpy()
    if a.shape != cos.shape:
        raise ValueError(f"a must have shape {cos.shape} to match W, got {a.shape}")
    w = np.abs(a)
    pos, neg = a > 0, a < 0
    with np.errstate(invalid="ignore"):
        mp = (w * cos * pos).sum(1) / (w * pos).sum(1)
        mn = (w * cos * neg).sum(1) / (w * neg).sum(1)
    return mp, mn


def alignment_of_top_units(W, a, *, fraction: float = 0.1):
    """Mean alignment of the ``fraction`` of units with the largest |a_i| among the a_i > 0 units
    and among the a_i < 0 units: two arrays (E,). These dominant units are the longest-trained
    ones, where the long-time limit of App. C.4 (alignment ±1) should show first."""
    if isinstance(fraction, bool) or not (isinstance(fraction, numbers.Real) and 0 < fraction <= 1):
        raise ValueError(f"fraction must be a number in (0, 1], got {fraction!r}")
    cos = weight_alignment(W)
    a = _t("a", a, 2).numpy()
    if a.shape != cos.shape:
        raise ValueError(f"a must have shape {cos.shape} to match W, got {a.shape}")
    out = []
    for sign in (1.0, -1.0):
        vals = []
        for e in range(a.shape[0]):
            sel = np.flatnonzero(sign * a[e] > 0)
            if sel.size == 0:
                vals.append(np.nan)
                continue
            k = max(1, int(round(fraction * sel.size)))
            top = sel[np.argsort(-np.abs(a[e, sel]))[:k]]
            vals.append(cos[e, top].mean())
        out.append(np.asarray(vals))
    return out[0], out[1]


def readout_ratio(a):
    """|ā⁻|/|ā⁺|: mean |a| of the negative readouts over that of the positive ones, (E,)."""
    a = _t("a", a, 2).numpy()
    pos, neg = a > 0, a < 0
    if not (np.all(pos.any(1)) and np.all(neg.any(1))):
        raise ValueError("a must contain positive and negative readouts in every member")
    return (np.abs(a * neg).sum(1) / neg.sum(1)) / ((a * pos).sum(1) / pos.sum(1))


def relative_activation_change(W0, dW, x):
    """⟨|ΔW·x|⟩ / ⟨|W0·x|⟩ over hidden units and inputs x (E, n, D): array (E,) (Fig. F1)."""
    W0 = _t("W0", W0, 3)
    dW = _t("dW", dW, 3)
    x = _t("x", x, 3)
    if dW.shape != W0.shape or x.shape[0] != W0.shape[0] or x.shape[2] != W0.shape[2]:
        raise ValueError(f"shapes must be W0, dW (E, m, D) and x (E, n, D), got {tuple(W0.shape)}, "
                         f"{tuple(dW.shape)}, {tuple(x.shape)}")
    h0 = torch.bmm(x, W0.transpose(1, 2)).abs().mean((1, 2))
    dh = torch.bmm(x, dW.transpose(1, 2)).abs().mean((1, 2))
    return (dh / h0).numpy()


def relative_weight_change(W0, dW):
    """‖ΔW‖_F / ‖W0‖_F per member, (E,) (App. F, Eq. F.3)."""
    W0 = _t("W0", W0, 3)
    dW = _t("dW", dW, 3)
    if dW.shape != W0.shape:
        raise ValueError(f"dW must have the shape of W0 {tuple(W0.shape)}, got {tuple(dW.shape)}")
    return (dW.flatten(1).norm(dim=1) / W0.flatten(1).norm(dim=1)).numpy()
