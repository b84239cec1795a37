"""Bayes-optimal classifiers for the noisy same-different task (seed 003 §3.4, App. E).

Data model (seed 003 §2): symbols s ~ N(0, I/d), observations z = s + η with η ~ N(0, σ²/d · I),
and r ~ Bernoulli(1/2) decides s2 = s1 (same, r = 1) or s2 independent (different, r = 0).
The Bayes-optimal classifier (Eq. E.1) answers "same" iff the log-likelihood ratio

    Λ(z1, z2) = log p(z1, z2 | r = 1) − log p(z1, z2 | r = 0) >= 0.

Two priors over the symbols (App. E):

* generalising: s ~ N(0, I/d) (the true population) — closed form in ‖z1‖² + ‖z2‖² and z1·z2;
* memorising:   s uniform over the L training symbols ŝ_1..ŝ_L — mixtures, evaluated here in
  log space (log-sum-exp) and vectorised over test pairs.

Seed defect (spec/PAPERS.md): App. E writes the symbol prior inside the integral as
N(s; 0, σ²/d); the data model — and the printed closed form, which is correct — use N(0, I/d).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import integrate, special, stats

from ..checks import as_float_array, check_int, check_pos_float

__all__ = [
    "BayesAccuracy",
    "bayes_accuracy",
    "bayes_generalising_accuracy",
    "llr_generalising",
    "llr_memorising",
]

_PRIORS = ("generalising", "memorising")


def _sigma2(v):
    try:
        return check_pos_float("sigma2", v)
    except (TypeError, ValueError):
        raise ValueError(
            f"sigma2 must be a finite real number > 0 (the noiseless task is the limit "
            f"sigma2 -> 0), got {v!r}"
        ) from None


def _pairs(z1, z2):
    z1 = as_float_array("z1", z1, finite=False)
    z2 = as_float_array("z2", z2, finite=False)
    if z1.ndim < 1 or z1.shape != z2.shape or z1.shape[-1] < 1:
        raise ValueError(f"z1 and z2 must have the same shape (..., d), got {z1.shape}, {z2.shape}")
    if not (np.all(np.isfinite(z1)) and np.all(np.isfinite(z2))):
        raise ValueError("z1 and z2 must contain only finite values")
    return z1, z2


def llr_generalising(z1, z2, sigma2: float):
    """Log-likelihood ratio Λ under the generalising prior, seed 003 App. E.1 [MT, prior fixed].

    With A = ‖z1‖² + ‖z2‖², B = z1·z2 and s = σ²:

        log p(z|r=1) = d log(d/(2π)) − (d/2) log(s(2+s)) − d[(1+s)A − 2B] / (2s(2+s)),
        log p(z|r=0) = d log(d/(2π(1+s))) − d A / (2(1+s)),

    (the seed's closed forms, which follow from s ~ N(0, I/d)), so

        Λ = (d/2) log((1+s)²/(s(2+s))) − d[(1+s)A − 2B]/(2s(2+s)) + d A/(2(1+s)).

    Vectorised over leading axes of ``z1``, ``z2`` (shape (..., d)).
    """
    z1, z2 = _pairs(z1, z2)
    s = _sigma2(sigma2)
    d = z1.shape[-1]
    A = np.sum(z1 * z1, axis=-1) + np.sum(z2 * z2, axis=-1)
    B = np.sum(z1 * z2, axis=-1)
    const = 0.5 * d * (2.0 * np.log1p(s) - np.log(s) - np.log(2.0 + s))
    return const - d * ((1.0 + s) * A - 2.0 * B) / (2.0 * s * (2.0 + s)) + d * A / (2.0 * (1.0 + s))


def _loo_logsumexp(b):
    """log Σ_{j≠i} exp(b_j) for every i along the last axis (stable, O(L))."""
    L = b.shape[-1]
    imax = np.argmax(b, axis=-1)
    m = np.take_along_axis(b, imax[..., None], axis=-1)
    e = np.exp(b - m)
    tot = e.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore"):
        loo = m + np.log(np.maximum(tot - e, 0.0))
    # the arg-max entry: sum of the others, referenced to the second largest value
    b_wo = b.copy()
    np.put_along_axis(b_wo, imax[..., None], -np.inf, axis=-1)
    if L > 1:
        fix = special.logsumexp(b_wo, axis=-1, keepdims=True)
        np.put_along_axis(loo, imax[..., None], fix, axis=-1)
    return loo


def llr_memorising(z1, z2, symbols, sigma2: float):
    """Log-likelihood ratio Λ under the memorising prior, seed 003 App. E.2 [MT].

        p(z|r=1) = (1/L) Σ_i N(z1; ŝ_i, σ²/d) N(z2; ŝ_i, σ²/d),
        p(z|r=0) = (1/(L(L−1))) Σ_{i≠j} N(z1; ŝ_i, σ²/d) N(z2; ŝ_j, σ²/d).

    With a_i = −d‖z1 − ŝ_i‖²/(2σ²), b_i = −d‖z2 − ŝ_i‖²/(2σ²) (the Gaussian normalisations
    cancel in the ratio):

        Λ = LSE_i(a_i + b_i) − log L − LSE_i(a_i + LSE_{j≠i} b_j) + log(L(L − 1)),

    the leave-one-out LSE computed stably in O(L). ``z1``, ``z2`` (n, d) test pairs,
    ``symbols`` (L, d) the training symbols (L >= 2); vectorised over the n pairs.
    """
    z1, z2 = _pairs(z1, z2)
    s = _sigma2(sigma2)
    S = as_float_array("symbols", symbols)
    d = z1.shape[-1]
    if S.ndim != 2 or S.shape[1] != d or S.shape[0] < 2:
        raise ValueError(f"symbols must have shape (L, {d}) with L >= 2, got {S.shape}")
    L = S.shape[0]
    lead = z1.shape[:-1]
    z1 = z1.reshape(-1, d)
    z2 = z2.reshape(-1, d)
    ss = np.sum(S * S, axis=1)
    c = -d / (2.0 * s)
    a = c * (np.sum(z1 * z1, axis=1)[:, None] - 2.0 * z1 @ S.T + ss[None, :])
    b = c * (np.sum(z2 * z2, axis=1)[:, None] - 2.0 * z2 @ S.T + ss[None, :])
    log_same = special.logsumexp(a + b, axis=1) - np.log(L)
    log_diff = special.logsumexp(a + _loo_logsumexp(b), axis=1) - np.log(L * (L - 1.0))
    return (log_same - log_diff).reshape(lead)


@dataclass(frozen=True)
class BayesAccuracy:
    """Accuracy of a Bayes classifier of the SD task (:func:`bayes_accuracy`,
    :func:`bayes_generalising_accuracy`).

    Attributes
    ----------
    accuracy : float             fraction of pairs classified correctly (balanced pairs for the
                                 exact accuracy).
    accuracy_same : float        accuracy on the same pairs (NaN if there are none).
    accuracy_different : float   accuracy on the different pairs (NaN if there are none).
    n : int or None              number of labelled test pairs; None for the exact (population)
                                 accuracy of :func:`bayes_generalising_accuracy`.
    """

    accuracy: float
    accuracy_same: float
    accuracy_different: float
    n: int | None = None


def bayes_accuracy(z1, z2, y, *, prior: str, sigma2: float, symbols=None) -> BayesAccuracy:
    """Accuracy of the Bayes classifier (Eq. E.1: "same" iff Λ >= 0) on labelled test pairs.

    ``prior`` is "generalising" (:func:`llr_generalising`) or "memorising"
    (:func:`llr_memorising`, needs ``symbols``). Returns a :class:`BayesAccuracy` (``accuracy``,
    ``accuracy_same``, ``accuracy_different`` and ``n``).
    """
    if prior not in _PRIORS:
        raise ValueError(f"prior must be one of {_PRIORS}, got {prior!r}")
    z1, z2 = _pairs(z1, z2)
    y = np.asarray(y)
    if y.shape != z1.shape[:-1] or not np.all((y == 0) | (y == 1)):
        raise ValueError(f"y must be labels in {{0, 1}} of shape {z1.shape[:-1]}, got {y.shape}")
    if prior == "generalising":
        llr = llr_generalising(z1, z2, sigma2)
    else:
        if symbols is None:
            raise ValueError("symbols (the L training symbols) are required for prior='memorising'")
        llr = llr_memorising(z1, z2, symbols, sigma2)
    correct = (llr >= 0) == (y == 1)
    return BayesAccuracy(
        accuracy=float(correct.mean()),
        accuracy_same=float(correct[y == 1].mean()) if np.any(y == 1) else float("nan"),
        accuracy_different=float(correct[y == 0].mean()) if np.any(y == 0) else float("nan"),
        n=int(y.size),
    )


def bayes_generalising_accuracy(d: int, sigma2: float, *, epsabs: float = 1e-11) -> BayesAccuracy:
    """Exact accuracy of the generalising-prior Bayes classifier on balanced pairs [RECON].

    With u = (z1 + z2)/√2, v = (z1 − z2)/√2, U = ‖u‖², V = ‖v‖² and s = σ², the ratio of
    :func:`llr_generalising` is Λ = (d/2)[log((1+s)²/(s(2+s))) + U/((1+s)(2+s)) − V/(s(1+s))].
    Under r = 1, U = (2+s)X/d, V = sY/d; under r = 0, U = (1+s)X/d, V = (1+s)Y/d, with X, Y
    independent χ²_d. Hence P(correct | r) is a one-dimensional integral of the χ²_d CDF against
    the χ²_d density (scipy quad). Returns a :class:`BayesAccuracy` (``accuracy``,
    ``accuracy_same``, ``accuracy_different``; ``n`` None).
    """
    try:
        d = check_int("d", d, minimum=1)
    except (TypeError, ValueError):
        raise ValueError(f"d must be an integer >= 1, got {d!r}") from None
    s = _sigma2(sigma2)
    epsabs = check_pos_float("epsabs", epsabs)
    c0 = np.log((1.0 + s) ** 2 / (s * (2.0 + s)))
    cU = 1.0 / ((1.0 + s) * (2.0 + s))
    cV = 1.0 / (s * (1.0 + s))
    chi = stats.chi2(d)
    lo, hi = chi.ppf(1e-15), chi.isf(1e-15)

    def expect(scale_u, scale_v):
        # E_X[ F_Y( (c0 + cU scale_u X/d) d / (cV scale_v) ) ]
        def g(x):
            t = (c0 + cU * scale_u * x / d) * d / (cV * scale_v)
            return chi.pdf(x) * (chi.cdf(t) if t > 0 else 0.0)

        val, _err = integrate.quad(g, lo, hi, epsabs=epsabs, limit=400,
                                   points=[float(d)])
        return val

    p_same = expect(2.0 + s, s)
    p_diff = 1.0 - expect(1.0 + s, 1.0 + s)
    return BayesAccuracy(accuracy=0.5 * (p_same + p_diff), accuracy_same=p_same, accuracy_different=p_diff)
