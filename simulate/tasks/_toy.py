"""Toy classification task of seed 000: orthogonal inputs, classes with fixed ratios, one-hot
targets (seed 000 Methods, "Parameters used in Figures"; notes §8)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import check_alloc, check_int, check_real, check_seed

__all__ = ["ToyTask", "class_correlated_toy_task", "orthogonal_toy_task"]


@dataclass(frozen=True)
class ToyTask:
    """Training set of the toy task (numpy, float64).

    X : (N0, P)   inputs as columns with ``X^T X / N0 = I_P`` (orthogonal, norm sqrt(N0)).
    Y : (P, m)    targets: y_plus for the input's class, y_minus for the others.
    labels : (P,) class of each input; the first ratios[0]*P inputs are class 0, and so on.
    ratios : class fractions; y_plus, y_minus : target values.
    basis : (N0, N0) orthonormal basis whose first P columns span the inputs (the remaining
            columns give test inputs orthogonal to the training set).
    """

    X: np.ndarray
    Y: np.ndarray
    labels: np.ndarray
    ratios: tuple
    y_plus: float
    y_minus: float
    basis: np.ndarray

    @property
    def P(self) -> int:
        return self.X.shape[1]

    @property
    def N0(self) -> int:
        return self.X.shape[0]

    @property
    def m(self) -> int:
        return self.Y.shape[1]

    def class_targets(self) -> np.ndarray:
        """(m, m) matrix whose row c is the target vector y_c of class c."""
        return self.y_minus + (self.y_plus - self.y_minus) * np.eye(self.m)


def _class_counts(P, ratios):
    raw = np.asarray(ratios, dtype=float) * P
    counts = np.floor(raw).astype(int)
    # distribute the remainder to the classes with the largest fractional parts, in order
    rem = P - counts.sum()
    order = np.argsort(-(raw - counts), kind="stable")
    counts[order[:rem]] += 1
    return counts


def orthogonal_toy_task(
    P: int,
    N0: int,
    *,
    ratios=(0.5, 0.25, 0.25),
    y_plus: float = 1.0,
    y_minus: float = 0.0,
    seed: int = 0,
) -> ToyTask:
    """Orthogonal toy task: ``x_mu . x_nu / N0 = delta_mu_nu`` (seed 000, Fig. 2 caption).

    Inputs are ``X = sqrt(N0) Q[:, :P]`` with Q a random orthogonal N0 x N0 matrix (QR of a
    Gaussian matrix drawn with ``numpy.random.default_rng(seed)``). The first ``ratios[0] * P``
    inputs are class 0, the next ``ratios[1] * P`` class 1, etc. (rounded so the counts sum to P).
    Targets are one-hot with values y_plus / y_minus. An ``N0`` whose (N0, N0) matrices exceed
    16 GiB (N0 > ~23000) raises ValueError.
    """
    P = check_int("P", P, minimum=1)
    N0 = check_int("N0", N0)
    seed = check_seed(seed)
    if N0 < P:
        raise ValueError(f"N0 must be >= P for orthogonal inputs, got N0={N0} < P={P}")
    check_alloc(f"N0={N0}", 4 * N0 * N0, what="the (N0, N0) Gaussian matrix and its QR factors")
    try:
        if np.iscomplexobj(ratios):
            raise TypeError
        r = np.asarray(ratios, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"ratios must be a sequence of positive class fractions, got {ratios!r}") from None
    if r.ndim != 1 or r.size < 1 or np.any(r <= 0) or not np.isclose(r.sum(), 1.0):
        raise ValueError(f"ratios must be positive class fractions summing to 1, got {ratios!r}")
    y_plus = check_real("y_plus", y_plus)
    y_minus = check_real("y_minus", y_minus)
    counts = _class_counts(P, r)
    if np.any(counts == 0):
        raise ValueError(f"P={P} is too small for ratios {tuple(r)}: some class would be empty")
    rng = np.random.default_rng(seed)
    Q, R = np.linalg.qr(rng.standard_normal((N0, N0)))
    Q = Q * np.sign(np.diag(R))[None, :]
    X = np.sqrt(N0) * Q[:, :P]
    labels = np.repeat(np.arange(r.size), counts)
    m = r.size
    Y = np.where(np.eye(m, dtype=bool)[labels], float(y_plus), float(y_minus))
    return ToyTask(X, Y, labels, tuple(float(x) for x in r), float(y_plus), float(y_minus), Q)


def class_correlated_toy_task(
    P: int,
    N0: int,
    class_covariance,
    *,
    ratios=(0.5, 0.25, 0.25),
    y_plus: float = 1.0,
    y_minus: float = 0.0,
    seed: int = 0,
) -> ToyTask:
    """The toy task with correlated classes: unit-norm inputs whose kernel is class-block,
    ``x_mu . x_nu / N0 = (1 - q_cc) delta_mu_nu + q_{c c'}`` (mu in class c, nu in class c';
    q = ``class_covariance``, k x k, positive semi-definite, diagonal below 1).

    The orthogonal toy task of seed 000 (Fig. 2) is q = 0. Inputs are ``x_mu = sqrt(N0)
    [sqrt(1 - q_cc) b_mu + sum_j L_{cj} b_{P+j}]`` with b the columns of a random orthogonal
    basis (as in :func:`orthogonal_toy_task`, same ``seed``) and ``q = L L^T``; so N0 >= P + k.
    Classes, targets and ``basis`` as in :func:`orthogonal_toy_task` (``basis`` columns beyond
    P + k give test inputs orthogonal to the training set). ``N0`` is bounded as there."""
    task = orthogonal_toy_task(P, N0, ratios=ratios, y_plus=y_plus, y_minus=y_minus, seed=seed)
    k = task.m
    if np.iscomplexobj(class_covariance):
        raise TypeError("class_covariance must be real, got a complex array")
    try:
        q = np.asarray(class_covariance, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"class_covariance must be a {k} x {k} matrix of numbers, got "
                        f"{type(class_covariance).__name__}") from None
    if q.shape != (k, k) or not np.all(np.isfinite(q)) or not np.allclose(q, q.T):
        raise ValueError(f"class_covariance must be a finite symmetric {k} x {k} matrix, got "
                         f"shape {q.shape}")
    lam, V = np.linalg.eigh(q)
    if lam.min() < -1e-12 * max(1.0, abs(lam).max()) or np.any(np.diag(q) >= 1.0):
        raise ValueError(f"class_covariance must be positive semi-definite with diagonal < 1, got "
                         f"eigenvalues {lam.tolist()} and diagonal {np.diag(q).tolist()}")
    if N0 < task.P + k:
        raise ValueError(f"N0 must be >= P + k = {task.P + k} for class-correlated inputs, got "
                         f"N0={N0}")
    L = V * np.sqrt(np.clip(lam, 0.0, None))
    B = task.basis
    lab = task.labels
    X = np.sqrt(N0) * (B[:, :task.P] * np.sqrt(1.0 - np.diag(q))[lab]
                       + B[:, task.P:task.P + k] @ L[lab].T)
    return ToyTask(X, task.Y, lab, task.ratios, task.y_plus, task.y_minus, B)
