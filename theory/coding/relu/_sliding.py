"""Sliding neurons of the outlier-only ReLU theory (seed 000, notes §5.2 [RECON]): the
weight-decay regression minimised over a finite set of neurons, the exact KKT point reached from
it, and the compaction of a many-neuron network into a KKT point of few neurons.

Source: A. van Meegen & H. Sompolinsky, *Coding schemes in neural networks learning
classification tasks*, Nat. Commun. 16, 3354 (2025) (seed 000), main text "Sparse coding scheme".
Notation as in :mod:`._relu_outliers`: ``K0 = B B^T`` (B: P x r), a neuron is (a_i, w_i) with
preactivations ``z_i = B w_i`` and cost ``[Ps |a_i|^2 + |w_i|^2]/2``, ``Ps = 1/sigma_a2``.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

from ._kkt import _kkt_residuals, _polish, _prune_merge

# cosine thresholds between the activation patterns relu(z_i) below which the neurons of a
# network are not merged by _compact_points, tried in this order
CLUSTER_COS = (0.99, 0.999, 0.98)
MAX_MERGED = 8  # clusterings into more than MAX_MERGED x (number of outputs) neurons are skipped


def _penalised_objective(x, n, m, B, Ps, Y, lam):
    """Weight-decay regression ``[Ps|A|^2 + |W|^2]/2 + |sum_i relu(B w_i) a_i^T - Y|^2/(2 lam)``
    in x = [A (n m), W (n r)], z_i = B w_i with K0 = B B^T (B: P x r, so that
    |w_i|^2 = z_i^T K0^+ z_i and z_i lies in the range of K0); value, gradient."""
    r = B.shape[1]
    A = x[: n * m].reshape(n, m)
    W = x[n * m:].reshape(n, r)
    Z = W @ B.T
    R = np.maximum(Z, 0.0)
    D = (R.T @ A - Y) / lam  # (P, m) = -t
    val = 0.5 * (Ps * np.sum(A * A) + np.sum(W * W)) + 0.5 * lam * np.sum(D * D)
    gA = Ps * A + R @ D
    gW = W + ((Z > 0) * (A @ D.T)) @ B
    return val, np.concatenate([gA.ravel(), gW.ravel()])


def _penalised_stage(A, W, m, B, Ps, Y, lam):
    """L-BFGS on :func:`_penalised_objective` from (A, W (k, r)); returns (A, W, iterations)."""
    k, r = W.shape
    x = np.concatenate([A.ravel(), W.ravel()])
    res = optimize.minimize(_penalised_objective, x, args=(k, m, B, Ps, Y, lam), jac=True,
                            method="L-BFGS-B", options={"maxiter": 3000,
                                                         "gtol": 1e-12 * max(1.0, lam),
                                                         "ftol": 1e-15})
    return res.x[: k * m].reshape(k, m).copy(), res.x[k * m:].reshape(k, r).copy(), int(res.nit)


def _kkt_point(A, W, lam, fac, Ps, Y, T, tol, Pi):
    """The exact KKT point reached from sliding neurons (A, W) minimised at penalty lam: the
    multiplier estimate ``t = (Y - F)/lam``, negligible neurons pruned and parallel ones merged,
    the least-squares Newton polish (:func:`._relu_kkt._polish`), t projected onto the span of
    the targets (projector ``Pi``). Returns (t, A, Z, W, residuals) with the max-abs KKT
    residuals of :func:`._relu_kkt._kkt_residuals`."""
    Z = W @ fac.B.T
    t = (Y - np.maximum(Z, 0.0).T @ A) / lam
    A, Z = _prune_merge(A, Z, Ps, fac.pinv)
    t, A, Z, _ = _polish(t @ Pi, A, Z, fac, Ps, Y, T, tol)
    t = t @ Pi
    A, Z = _prune_merge(A, Z, Ps, fac.pinv)
    W = fac.to_w(Z)  # coordinates w_i (of the range part)
    if fac.singular:  # z_i exactly in the range of K0 (the polish holds it there to tol)
        Z = W @ fac.B.T
    zero_tol = 1e-9 * max(1.0, float(np.max(np.abs(Z))))
    return t, A, Z, W, _kkt_residuals(t, A, Z, fac, Ps, Y, T, zero_tol)


def _cluster(A, W, fac, cos_min):
    """Groups of neurons whose activation patterns relu(z_i) have cosine > ``cos_min`` with the
    group's leading neuron (the neurons taken by decreasing output weight |a_i| |relu(z_i)|)."""
    R = np.maximum(W @ fac.B.T, 0.0)
    size = np.linalg.norm(R, axis=1)
    weight = np.linalg.norm(A, axis=1) * size
    Rn = R / np.maximum(size, 1e-300)[:, None]
    free = weight > 0
    groups = []
    for i in np.argsort(-weight):
        if not free[i]:
            continue
        g = np.flatnonzero(free & (Rn @ Rn[i] > cos_min))
        free[g] = False
        groups.append(g)
    return groups, weight


def _merge_groups(A, W, groups, weight, Ps):
    """One balanced neuron per group: the direction is the output-weighted mean of the members'
    unit directions w_i/|w_i|, the readout carries the members' sum ``c = sum_i a_i |w_i|``
    (relu is positively homogeneous), balanced as ``a = c/s``, ``w = s d`` with
    ``s^2 = sqrt(Ps) |c|`` (the cheapest split of the product, notes §5.2)."""
    norms = np.linalg.norm(W, axis=1)
    A_new, W_new = [], []
    for g in groups:
        d = (weight[g, None] * W[g] / norms[g, None]).sum(axis=0)
        d /= np.linalg.norm(d)
        c = (A[g] * norms[g, None]).sum(axis=0)
        s = np.sqrt(np.sqrt(Ps) * np.linalg.norm(c))
        if s > 0:
            A_new.append(c / s)
            W_new.append(s * d)
    return np.array(A_new), np.array(W_new)


def _compact_points(A, Z, fac, Ps, Y, T, tol, lam_end, Pi):
    """Exact KKT points of few neurons reached from a network of many (A, Z), e.g. the group-lasso
    network over the directions of the dual ascent, whose neurons cluster around a few
    directions. For each threshold of :data:`CLUSTER_COS` (and a clustering not tried before,
    into at most :data:`MAX_MERGED` neurons per output: the exact KKT solve of more is slow and
    rarely succeeded) the clusters are merged into one neuron each (:func:`_merge_groups`), the merged neurons
    slide (the penalised regression at penalty 1e-3 then ``lam_end``, or at ``lam_end`` alone)
    and the KKT system is solved exactly (:func:`_kkt_point`). Yields (t, A, Z, cost,
    residuals) for each point whose max-abs KKT residual is <= 10 max(tol, 1e-8); the caller
    judges them (cost, dual margin) and may stop early."""
    m = Y.shape[1]
    W = fac.to_w(Z)
    seen = set()
    schedules = [[lam_end]]
    if lam_end < 1e-3:
        schedules.insert(0, [1e-3, lam_end])
    for cos_min in CLUSTER_COS:
        groups, weight = _cluster(A, W, fac, cos_min)
        key = tuple(sorted(tuple(int(i) for i in g) for g in groups))
        if key in seen or len(groups) > MAX_MERGED * m:
            continue
        seen.add(key)
        A0, W0 = _merge_groups(A, W, groups, weight, Ps)
        for lams in schedules:
            A1, W1 = A0, W0
            for lam in lams:
                A1, W1, _ = _penalised_stage(A1, W1, m, fac.B, Ps, Y, lam)
            t, A1, Z1, W1, res = _kkt_point(A1, W1, lams[-1], fac, Ps, Y, T, tol, Pi)
            if max(res.values()) <= 10 * max(tol, 1e-8):
                cost = 0.5 * (Ps * float(np.sum(A1 * A1)) + float(np.sum(W1 * W1)))
                if T > 0:
                    err = np.maximum(Z1, 0.0).T @ A1 - Y
                    cost += 0.5 * float(np.sum(err * err)) / T
                yield t, A1, Z1, cost, res
