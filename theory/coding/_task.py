"""The orthogonal toy task of seed 000 as one object: the three ways the coding solvers pose it.

Source: A. van Meegen & H. Sompolinsky, *Coding schemes in neural networks learning
classification tasks*, Nat. Commun. 16, 3354 (2025) (seed 000), the toy task of Figs. 2-5: P
orthonormal inputs in C classes with class fractions rho_c, and one target vector y_c per class.
The P -> infinity solvers (:func:`solve_sigmoid_toy`, :func:`solve_relu_toy`) take it per class
(``ratios, class_targets``); the finite-P solvers on orthonormal inputs (:func:`solve_sigmoid_deep`,
:func:`solve_sigmoid_first_layer`) per input (``labels, Y``); the general-data solvers by its
input kernel (``K0 = sigma I``, ``Y``). :class:`ToyTask` holds the per-class form and converts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import as_float_matrix, check_int
from ._problem import _check_labels, _check_toy_problem

__all__ = ["ToyTask"]


@dataclass(frozen=True)
class ToyTask:
    """The orthogonal toy task per class: ``ratios`` (C,) class fractions rho_c (> 0, summing to
    1) and ``class_targets`` (C, m), row c the target vector y_c of class c (checked; ValueError
    naming the argument).

    Pass it where a toy solver takes ``ratios, class_targets``: ``solve_sigmoid_toy(task)``,
    ``solve_relu_toy(task)``. :meth:`from_labels` builds it from the per-input form ``(labels,
    Y)``; :meth:`labels` and :meth:`targets` give that form back at P inputs (class sizes
    ``rho_c P``, which must be whole numbers).
    """

    ratios: np.ndarray
    class_targets: np.ndarray

    def __post_init__(self):
        rho, Yc = _check_toy_problem(self.ratios, self.class_targets)
        object.__setattr__(self, "ratios", rho)
        object.__setattr__(self, "class_targets", Yc)

    @property
    def n_classes(self) -> int:
        """C, the number of classes."""
        return int(self.ratios.size)

    @classmethod
    def from_labels(cls, labels, Y) -> ToyTask:
        """The task of per-input ``labels`` (P,) (classes 0..C-1, each present) and targets ``Y``
        (P, m): rho_c = n_c / P and y_c the (common) target row of class c. ValueError when a
        class is empty or its rows of Y differ."""
        Y = as_float_matrix("Y", Y, allow_1d=True)
        lab = _check_labels(labels, max(int(np.max(labels)) + 1, 1) if np.size(labels) else 1)
        if lab.size != Y.shape[0]:
            raise ValueError(f"labels must have one entry per row of Y ({Y.shape[0]}), got {lab.size}")
        n = np.bincount(lab)
        if np.any(n == 0):
            raise ValueError(f"labels must use every class 0..{n.size - 1}, got class sizes {n.tolist()}")
        first = np.array([np.flatnonzero(lab == c)[0] for c in range(n.size)])
        Yc = Y[first]
        scale = max(float(np.max(np.abs(Y))), 1e-300)
        if np.max(np.abs(Y - Yc[lab])) > 1e-12 * scale:
            raise ValueError("Y must hold one target row per class (the toy task's targets are the same "
                             "for every input of a class), got rows that differ within a class")
        return cls(n / lab.size, Yc)

    def class_sizes(self, P) -> np.ndarray:
        """n_c = rho_c P (ValueError unless whole numbers, to 1e-9)."""
        P = check_int("P", P, minimum=1)
        n = self.ratios * P
        if np.max(np.abs(n - np.rint(n))) > 1e-9:
            raise ValueError(f"P must make every class size rho_c P a whole number, got P = {P} and sizes "
                             f"{np.round(n, 6).tolist()}")
        return np.rint(n).astype(int)

    def labels(self, P) -> np.ndarray:
        """(P,) class index of each input, classes in order (n_c inputs of class c)."""
        return np.repeat(np.arange(self.n_classes), self.class_sizes(P))

    def targets(self, P) -> np.ndarray:
        """(P, m) targets, row mu = y_{c(mu)} (in the order of :meth:`labels`)."""
        return self.class_targets[self.labels(P)]
