"""Neural codes (seed 000): which classes activate each neuron, code fractions, persistence.

A neuron's *code* is the binary class pattern of its class-averaged activations, thresholded:
neuron i codes for class c iff ``mean_{mu in c} phi(z_i(x_mu)) > threshold`` (e.g. the sigmoidal
code 1-1-0 is active for classes 0 and 1). Functions take torch tensors or numpy arrays and
return numpy; nothing prints.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from richlazy.theory.checks import as_float_array, check_real

__all__ = [
    "class_mean_activations",
    "neuron_codes",
    "code_label",
    "code_key",
    "CodeFractions",
    "code_fractions",
    "code_persistence",
    "top_k_active",
]


def class_mean_activations(activations, labels, m: int) -> np.ndarray:
    """Class-averaged activations: (..., N, P) with training labels (P,) -> (..., N, m)."""
    a = as_float_array("activations", activations, finite=False)
    labels = np.asarray(labels)
    if a.shape[-1] != labels.shape[0]:
        raise ValueError(
            f"activations must have P = {labels.shape[0]} inputs in the last axis, got {a.shape}"
        )
    onehot = np.eye(m)[labels]
    cnt = onehot.sum(0)
    if np.any(cnt == 0):
        raise ValueError(f"every class 0..{m - 1} needs at least one input")
    return a @ onehot / cnt


def neuron_codes(class_means, *, threshold: float = 0.5) -> np.ndarray:
    """Boolean codes (..., N, m): class c active iff the class mean exceeds ``threshold``."""
    cm = as_float_array("class_means", class_means, finite=False)
    threshold = check_real("threshold", threshold)
    return cm > threshold


def code_label(code) -> str:
    """'1-1-0' style label of one boolean code vector."""
    return "-".join("1" if bool(c) else "0" for c in np.asarray(code).ravel())


def code_key(label: str) -> int:
    """Integer key ``sum_c code_c 2^c`` of a code label '1-1-0' (class 0 = lowest bit), the key
    of the boolean code vector ``(codes * (1 << arange(m))).sum()``."""
    return sum(int(b) << j for j, b in enumerate(label.split("-")))


@dataclass(frozen=True)
class CodeFractions:
    """labels: code strings; fraction: pooled fraction of neurons with each code;
    stderr: binomial standard error sqrt(f (1 - f) / n); n: number of neurons pooled;
    per_chain: (E, n_codes) fractions per chain (for chain-to-chain spread)."""

    labels: list
    fraction: np.ndarray
    stderr: np.ndarray
    n: int
    per_chain: np.ndarray

    def get(self, label: str) -> tuple[float, float]:
        if label in self.labels:
            i = self.labels.index(label)
            return float(self.fraction[i]), float(self.stderr[i])
        return 0.0, float(np.sqrt(1.0 / self.n) / 2)


def code_fractions(codes) -> CodeFractions:
    """Fractions of neurons per code from boolean codes (E, N, m) (or (N, m))."""
    c = as_float_array("codes", codes, finite=False).astype(bool)
    if c.ndim == 2:
        c = c[None]
    if c.ndim != 3:
        raise ValueError(f"codes must have shape (E, N, m) or (N, m), got {c.shape}")
    E, N, m = c.shape
    keys = (c * (1 << np.arange(m))).sum(-1)  # (E, N) integer code
    uniq = np.unique(keys)
    labels = [code_label([(k >> j) & 1 for j in range(m)]) for k in uniq]
    per_chain = np.stack([(keys == k).mean(axis=1) for k in uniq], axis=1)
    n = E * N
    frac = np.array([(keys == k).mean() for k in uniq])
    se = np.sqrt(frac * (1 - frac) / n)
    return CodeFractions(labels, frac, se, n, per_chain)


def code_persistence(codes_t) -> np.ndarray:
    """Fraction of neurons whose code at recorded time s equals their code at time 0:
    codes_t (S, E, N, m) -> (S,) (1 at s = 0). A persistence that stays near 1 over sampling
    time is the signature of broken permutation symmetry (neurons keep their codes)."""
    c = as_float_array("codes_t", codes_t, finite=False).astype(bool)
    if c.ndim != 4:
        raise ValueError(f"codes_t must have shape (S, E, N, m), got {c.shape}")
    same = np.all(c == c[:1], axis=-1)  # (S, E, N)
    return same.mean(axis=(1, 2))


def top_k_active(activations, k: int) -> np.ndarray:
    """Indices (..., k) of the k neurons with the largest mean activation over inputs;
    activations (..., N, P)."""
    a = as_float_array("activations", activations, finite=False)
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= a.shape[-2]:
        raise ValueError(f"k must be an int in 1..N = {a.shape[-2]}, got {k!r}")
    score = a.mean(axis=-1)
    return np.argsort(-score, axis=-1, kind="stable")[..., :k]
