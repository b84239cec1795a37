"""Rich-regime theory of the same-different (SD) task (seed 003, Tong & Pehlevan).

Task (seed 003 §2): symbols s ~ N(0, I/d), inputs z = s + η, x = (z1; z2) ∈ R^{2d}, label 1
("same") iff s1 = s2. Training uses L fixed symbols; test pairs use fresh symbols.

This module holds the pieces of the rich-regime analysis that need no neural network:

* the hand-crafted 4-unit solution (§3.1, Eq. 2, App. B) and its accuracy (2/π) arctan ρ;
* the rich test-accuracy estimate, Eq. (3) and Eq. (C.18), for any readout ratio ρ;
* the max-(average-)margin matrix of Theorem 1 (App. C.1) computed on data, its ideal circulant
  limit and the parallel / antiparallel structure of its extreme eigenvectors;
* the Markov-process picture of rich learning (App. C.2–C.4): the walker simulator of App. C.3,
  the walker drifts (C.9, C.10, C.16, C.17), the self-consistent μ, and the readout-ratio
  heuristic of App. C.4.3.

Provenance tags: [MT] formula printed in the seed and used as printed; [PROSE] stated in words in
the seed; [RECON] reconstructed or corrected here (the docstring says what and why).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from .._results import SolverStatus, Status
from ..checks import as_float_array, as_rng, check_alloc, check_int, renamed_argument

__all__ = [
    "EQ3_READOUT_RATIO",
    "MarkovWalkerResult",
    "MaxMarginSolution",
    "circulant_eigenpairs",
    "eq3_accuracy",
    "handcrafted_accuracy",
    "handcrafted_different_accuracy",
    "handcrafted_solution",
    "ideal_max_margin_matrix",
    "max_margin_matrix",
    "max_margin_solution",
    "readout_drift_ratio",
    "readout_ratio_heuristic",
    "rich_accuracy",
    "rich_different_accuracy",
    "self_consistent_mu",
    "simulate_markov_walkers",
    "walker_drifts",
]

#: Readout magnitude ratio |ā⁻|/|ā⁺| used in Eq. (3): the value ≈ 1.5 measured in App. C.4.3
#: (1.56 ± 0.09) and inserted into Eq. (C.18) in App. C.5. [MT]
EQ3_READOUT_RATIO = 1.5


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------


def _int_array(name, v, minimum):
    arr = np.asarray(v)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        if np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(
            arr == np.round(arr)
        ):
            arr = arr.astype(np.int64)
        else:
            raise TypeError(f"{name} must be an integer or an array of integers, got {v!r}")
    if arr.size == 0:
        raise ValueError(f"{name} must be non-empty, got an empty array")
    if np.any(arr < minimum):
        raise ValueError(f"{name} must be >= {minimum}, got {arr[arr < minimum].flat[0]}")
    return arr


def _pos_array(name, v):
    try:
        arr = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a positive real number or array, got {v!r}") from None
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name} must be finite and > 0, got {v!r}")
    return arr


# --------------------------------------------------------------------------------------------
# hand-crafted solution (§3.1, App. B)
# --------------------------------------------------------------------------------------------


def handcrafted_solution(d: int, rho: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Weights and readouts of the hand-crafted 4-unit SD solution, Eq. (2) of seed 003 [MT].

    w₁⁺ = (1; 1), w₂⁺ = (−1; −1) (parallel, readout a⁺ = +1) and w₁⁻ = (1; −1),
    w₂⁻ = (−1; 1) (antiparallel, readout −a⁻ = −ρ), with 1 = (1, …, 1) ∈ R^d, so that

        f(x) = φ(w₁⁺·x) + φ(w₂⁺·x) − ρ [φ(w₁⁻·x) + φ(w₂⁻·x)],   φ = ReLU.

    Returns ``(W, a)`` with W of shape (4, 2d) (rows w₁⁺, w₂⁺, w₁⁻, w₂⁻) and a = (1, 1, −ρ, −ρ).
    A ``d`` whose arrays exceed 16 GiB raises ValueError.
    """
    d = check_int("d", d, minimum=1)
    check_alloc(f"d={d}", 17 * d, what="the (4, 2d) weights and their pieces")
    rho = float(_pos_array("rho", rho))
    one = np.ones(d)
    W = np.stack(
        [np.r_[one, one], np.r_[-one, -one], np.r_[one, -one], np.r_[-one, one]]
    ).astype(float)
    a = np.array([1.0, 1.0, -rho, -rho])
    return W, a


def handcrafted_different_accuracy(rho):
    """P(f(x⁻) < 0) = (2/π) arctan ρ for an unseen *different* pair, seed 003 §3.1 / App. B [MT].

    For x⁻ = (z; z') with independent z, z' ~ N(0, I/d), φ(t) + φ(−t) = |t| gives
    f(x⁻) = |1·z + 1·z'| − ρ |1·z − 1·z'| with the two sums independent N(0, 2): the ratio of
    two i.i.d. half-normals is half-Cauchy, hence (2/π) arctan ρ. Vectorised over ``rho``.
    """
    r = _pos_array("rho", rho)
    return (2.0 / np.pi * np.arctan(r))[()]


def handcrafted_accuracy(rho):
    """Test accuracy 1/2 + (1/π) arctan ρ of the hand-crafted solution on balanced test pairs.

    Same pairs give f = 2|1·z| > 0 (always correct, App. B); different pairs are correct with
    probability (2/π) arctan ρ (:func:`handcrafted_different_accuracy`). Seed 003 §3.1 [MT].
    """
    return (0.5 + 0.5 * handcrafted_different_accuracy(rho))[()]


# --------------------------------------------------------------------------------------------
# rich test accuracy, Eq. (3) / (C.18)
# --------------------------------------------------------------------------------------------


@renamed_argument(L="n_symbols")
def rich_different_accuracy(n_symbols, rho):
    """P(f(x⁻) < 0) for an unseen different pair in the rich regime, Eq. (C.18) of seed 003.

        p = Φ( (ρ − 1) √( 2(L² − L) / ((π − 2)(ρ² + 1)) ) ),

    Φ the standard normal CDF, L the number of training symbols and ρ = |ā⁻|/|ā⁺| the readout
    magnitude ratio. The seed prints the argument as √(2(L²−L)(ρ−1)²/((π−2)(ρ²+1))); that is the
    same for ρ >= 1 (App. C.5 uses ρ ≈ 1.5), while for ρ < 1 the derivation
    (f ≐ c̄⁺ − ρ c̄⁻ with c̄± i.i.d. N((L²−L)σ√(2/π), (L²−L)σ²(1 − 2/π))) gives the signed form
    implemented here [RECON: sign restored]. Vectorised over ``n_symbols`` (L, integers >= 2) and
    ``rho``.
    """
    L = _int_array("n_symbols", n_symbols, 2)
    r = _pos_array("rho", rho)
    n = L.astype(float) ** 2 - L
    arg = (r - 1.0) * np.sqrt(2.0 * n / ((np.pi - 2.0) * (r**2 + 1.0)))
    return special.ndtr(arg)[()]


@renamed_argument(L="n_symbols")
def readout_ratio_heuristic(n_symbols):
    """Readout-drift ratio |Δā⁻|/|Δā⁺| of the heuristic in seed 003 App. C.4.3 [PROSE].

    ≈ 2 for L >= 3 (antiparallel units: active on ~1/4 of different pairs, with twice the drift
    of parallel units; parallel units: active on ~1/2 of same and ~1/4 of different pairs, net
    1/2 − 1/4), and 1 for L = 2 (a single positive coordinate, no penalty from different pairs).
    The seed measures |ā⁻|/|ā⁺| = 1.56 ± 0.09 (L = 32) and 0.99 ± 0.07 (L = 2) in trained MLPs,
    and uses ρ = 1.5 in Eq. (3) (:data:`EQ3_READOUT_RATIO`). ``n_symbols``: L, the number of
    training symbols.
    """
    L = _int_array("n_symbols", n_symbols, 2)
    return np.where(L == 2, 1.0, 2.0)[()]


@renamed_argument(L="n_symbols")
def rich_accuracy(n_symbols, rho=None):
    """Rich-regime SD test accuracy 1/2 + p/2, seed 003 App. C.5 (Eq. 3 when ρ = 1.5).

    Same test pairs are classified correctly (parallel units, App. C.5) and different pairs
    with p = :func:`rich_different_accuracy` (Eq. C.18). ``rho`` defaults to the seed's choice:
    1.5 for L >= 3 (:data:`EQ3_READOUT_RATIO`) and 1 for L = 2, which gives exactly 3/4 at
    L = 2 (Eq. 3 text). Vectorised over ``n_symbols`` (L, the number of training symbols) and
    ``rho``. [MT]
    """
    L = _int_array("n_symbols", n_symbols, 2)
    if rho is None:
        rho = np.where(L == 2, 1.0, EQ3_READOUT_RATIO)
    return (0.5 + 0.5 * rich_different_accuracy(L, rho))[()]


@renamed_argument(L="n_symbols")
def eq3_accuracy(n_symbols):
    """Eq. (3) of seed 003 as printed [MT]: 1/2 + Φ(√(2(L² − L)/(13(π − 2))))/2 for L >= 3.

    The 13 is (ρ²+1)/(ρ−1)² at ρ = 3/2. For L = 2 the seed states 3/4 instead; this function
    returns the printed formula only and requires L >= 3 (use :func:`rich_accuracy` for all L).
    ``n_symbols``: L, the number of training symbols.
    """
    L = _int_array("n_symbols", n_symbols, 3)
    n = L.astype(float) ** 2 - L
    return (0.5 + 0.5 * special.ndtr(np.sqrt(2.0 * n / (13.0 * (np.pi - 2.0)))))[()]


# --------------------------------------------------------------------------------------------
# Theorem 1: max-average-margin matrix (App. C.1)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MaxMarginSolution(SolverStatus):
    """Max-average-margin weights of Theorem 1 (quadratic activations, fixed readouts ±1).

    Common result fields (:class:`~richlazy.theory.SolverStatus`): a direct symmetric
    eigendecomposition, so ``converged`` is True, ``status`` SUCCESS, ``nit`` 0 and ``residual``
    the max-abs eigen-equation residual ‖X w − λ w‖_∞ of ``w_plus`` and ``w_minus``.

    matrix : (2d, 2d) array   X = (1/P)[X⁺ᵀX⁺ − X⁻ᵀX⁻] (times 2d when ``normalise``).
    eigenvalues : (2d,) array ascending eigenvalues of ``matrix``.
    w_plus, w_minus : (2d,)   unit top / bottom eigenvectors: the max-margin hidden weights of
                              units with readout +1 / −1.
    alignment_plus, alignment_minus : float   v¹·v²/(‖v¹‖‖v²‖) of the two halves of w_plus /
                              w_minus (Theorem 1 predicts +1 / −1 as P, L → ∞).
    norm_ratio_plus, norm_ratio_minus : float ‖v¹‖/‖v²‖ (Theorem 1: 1).
    circulant_deviation : float  max-abs deviation of the (2d-normalised) matrix from the ideal
                              circulant :func:`ideal_max_margin_matrix` (→ 0 as P, L → ∞).
    """

    matrix: np.ndarray
    eigenvalues: np.ndarray
    w_plus: np.ndarray
    w_minus: np.ndarray
    alignment_plus: float
    alignment_minus: float
    norm_ratio_plus: float
    norm_ratio_minus: float
    circulant_deviation: float


def _check_pairs(x, y):
    x = as_float_array("x", x, finite=False)
    if x.ndim != 2 or x.shape[1] < 2 or x.shape[1] % 2:
        raise ValueError(f"x must have shape (P, 2d) with an even number of columns, got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("x must contain only finite values")
    y = np.asarray(y)
    if y.shape != (x.shape[0],):
        raise ValueError(f"y must have shape ({x.shape[0]},) to match x, got {y.shape}")
    if not np.all((y == 0) | (y == 1)):
        raise ValueError("y must contain only labels 0 (different) and 1 (same)")
    if not (np.any(y == 1) and np.any(y == 0)):
        raise ValueError("y must contain both classes (same = 1 and different = 0)")
    return x, y.astype(bool)


def max_margin_matrix(x, y, *, normalise: bool = True) -> np.ndarray:
    """The matrix X = (1/P)[X⁺ᵀX⁺ − X⁻ᵀX⁻] of the proof of Theorem 1, seed 003 App. C.1 [MT].

    ``x`` (P, 2d) stacks the training inputs (z1; z2), ``y`` their labels (1 same, 0 different);
    X⁺ / X⁻ are the rows with y = 1 / y = 0 and P the total number of rows. The max-average
    margin of units with fixed readout +1 (−1) and ‖w‖ = 1 is the top (bottom) eigenvector of X.
    With ``normalise`` the matrix is multiplied by 2d, as in the seed ("we multiply X by 2d"),
    so that its ideal limit has ones on the quadrant diagonals.
    """
    x, same = _check_pairs(x, y)
    P, D = x.shape
    Xp, Xm = x[same], x[~same]
    M = (Xp.T @ Xp - Xm.T @ Xm) / P
    return M * D if normalise else M


def ideal_max_margin_matrix(d: int, *, normalise: bool = True) -> np.ndarray:
    """Limit P, L → ∞ of :func:`max_margin_matrix` for balanced classes (seed 003 App. C.1) [MT].

    The circulant 2d × 2d matrix whose only non-zero entries are X[i, i+d] = X[i+d, i] = 1/(2d)
    (the diagonals of the off-diagonal quadrants), or 1 when ``normalise``.
    """
    d = check_int("d", d, minimum=1)
    val = 1.0 if normalise else 1.0 / (2 * d)
    M = np.zeros((2 * d, 2 * d))
    idx = np.arange(d)
    M[idx, idx + d] = val
    M[idx + d, idx] = val
    return M


def circulant_eigenpairs(d: int) -> tuple[np.ndarray, np.ndarray]:
    """Fourier eigenpairs of the normalised ideal circulant matrix, seed 003 App. C.1 [MT].

    u_ℓ = (1, r^ℓ, r^{2ℓ}, …, r^{(2d−1)ℓ})/√(2d) with r = e^{iπ/d}, and λ_ℓ = r^{dℓ} = e^{iπℓ}
    = (−1)^ℓ, ℓ = 0, …, 2d − 1. Returns ``(lam, U)``: lam (2d,) real, U (2d, 2d) complex with
    u_ℓ in column ℓ. A ``d`` whose (2d, 2d) arrays exceed 16 GiB (d > ~20000) raises ValueError.
    """
    d = check_int("d", d, minimum=1)
    check_alloc(f"d={d}", 5 * (2 * d) ** 2, what="the complex (2d, 2d) eigenvectors and their work arrays")
    ell = np.arange(2 * d)
    k = np.arange(2 * d)
    U = np.exp(1j * np.pi * np.outer(k, ell) / d) / np.sqrt(2 * d)
    lam = np.real(np.exp(1j * np.pi * ell))
    return np.round(lam), U


def _halves(w):
    D = w.shape[-1] // 2
    v1, v2 = w[..., :D], w[..., D:]
    n1, n2 = np.linalg.norm(v1, axis=-1), np.linalg.norm(v2, axis=-1)
    cos = np.sum(v1 * v2, axis=-1) / (n1 * n2)
    return cos, n1 / n2


def max_margin_solution(x, y, *, normalise: bool = True) -> MaxMarginSolution:
    """Theorem 1 of seed 003 as a computation on data (App. C.1) [MT].

    Builds X = :func:`max_margin_matrix`, diagonalises it (symmetric) and returns the top /
    bottom eigenvectors — the max-average-margin weights of units with readout +1 / −1 under
    ‖w‖ = 1 and quadratic activations — with the alignment v¹·v²/(‖v¹‖‖v²‖) and norm ratio
    ‖v¹‖/‖v²‖ of their halves (Theorem 1: +1 / −1 and 1 as P, L → ∞), plus the deviation of X
    from the ideal circulant limit.
    """
    M = max_margin_matrix(x, y, normalise=normalise)
    lam, V = np.linalg.eigh(M)
    w_plus, w_minus = V[:, -1], V[:, 0]
    a_p, r_p = _halves(w_plus)
    a_m, r_m = _halves(w_minus)
    d = M.shape[0] // 2
    ideal = ideal_max_margin_matrix(d, normalise=normalise)
    resid = max(float(np.max(np.abs(M @ w_plus - lam[-1] * w_plus))),
                float(np.max(np.abs(M @ w_minus - lam[0] * w_minus))))
    return MaxMarginSolution(
        converged=True,
        status=Status.SUCCESS,
        message="symmetric eigendecomposition of the max-margin matrix",
        nit=0,
        residual=resid,
        matrix=M,
        eigenvalues=lam,
        w_plus=w_plus,
        w_minus=w_minus,
        alignment_plus=float(a_p),
        alignment_minus=float(a_m),
        norm_ratio_plus=float(r_p),
        norm_ratio_minus=float(r_m),
        circulant_deviation=float(np.max(np.abs(M - ideal))),
    )


# --------------------------------------------------------------------------------------------
# Markov-process picture of rich dynamics (App. C.2 – C.4)
# --------------------------------------------------------------------------------------------


def walker_drifts(n_plus, n, mu, *, readout_sign: int):
    """Expected drifts (Δs⁺, Δs⁻) of positive / negative walkers, seed 003 App. C.4 [MT].

    Units with readout a > 0 ("same" units, Eqs. C.9, C.10):
        Δs⁺ = 2 n⁺ n⁻ (1 − μ) / (3 n (n − 1)),   Δs⁻ = −2 n⁻ n⁺ μ / (3 n (n − 1));
    units with a < 0 ("different" units, Eqs. C.16, C.17):
        Δs⁺ = 2 n⁺ (μ − 1) / (3 n),              Δs⁻ = 2 n⁻ μ / (3 n),
    with n = L walkers (one per training symbol), n⁺ of them at positive position s_u =
    ω¹_u + ω²_u, n⁻ = n − n⁺, and μ the mean probability that a mixed pair triggers an update.
    """
    if readout_sign not in (1, -1):
        raise ValueError(f"readout_sign must be +1 or -1, got {readout_sign!r}")
    n = _int_array("n", n, 2).astype(float)
    n_plus = as_float_array("n_plus", n_plus)
    mu = as_float_array("mu", mu)
    if np.any(n_plus < 0) or np.any(n_plus > n):
        raise ValueError(f"n_plus must satisfy 0 <= n_plus <= n, got n_plus={n_plus!r}, n={n!r}")
    if np.any(mu < 0) or np.any(mu > 1):
        raise ValueError(f"mu is a probability and must lie in [0, 1], got {mu!r}")
    n_minus = n - n_plus
    if readout_sign == 1:
        dp = 2.0 * n_plus * n_minus * (1.0 - mu) / (3.0 * n * (n - 1.0))
        dm = -2.0 * n_minus * n_plus * mu / (3.0 * n * (n - 1.0))
    else:
        dp = 2.0 * n_plus * (mu - 1.0) / (3.0 * n)
        dm = 2.0 * n_minus * mu / (3.0 * n)
    return dp[()], dm[()]


def self_consistent_mu(n_plus, n, *, readout_sign: int):
    """μ solving the self-consistency |Δs⁺| = |Δs⁻| of seed 003 App. C.4 [MT].

    Same units (a > 0, C.9 = −C.10): (1 − μ) = μ, so μ = 1/2 for any 0 < n⁺ < n.
    Different units (a < 0, C.16 = −C.17): n⁺(1 − μ) = n⁻ μ, so μ = n⁺/n (→ 1/2 as n⁺ ≈ n⁻).
    """
    n = _int_array("n", n, 2).astype(float)
    n_plus = as_float_array("n_plus", n_plus)
    if readout_sign not in (1, -1):
        raise ValueError(f"readout_sign must be +1 or -1, got {readout_sign!r}")
    if np.any(n_plus <= 0) or np.any(n_plus >= n):
        raise ValueError(
            f"n_plus must satisfy 0 < n_plus < n for a non-trivial balance, got {n_plus!r}"
        )
    if readout_sign == 1:
        return np.broadcast_to(0.5, np.broadcast(n_plus, n).shape).copy()[()]
    return (n_plus / n)[()]


@dataclass(frozen=True)
class MarkovWalkerResult(SolverStatus):
    """State and statistics of the App. C.3 Markov process, one row per independent unit.

    Common result fields (:class:`~richlazy.theory.SolverStatus`): a simulation of a fixed
    number of batches, so ``converged`` is True, ``status`` SUCCESS, ``nit`` = ``steps`` and
    ``residual`` NaN (no equations are solved).

    omega1, omega2 : (n_units, L) int arrays   coordinates ω¹_k, ω²_k of v¹, v² in the basis of
                     the training symbols (z_k·z_l = δ_kl as d → ∞).
    readout_sign : int                         sign of the (fixed) readout a of these units.
    alignment : (n_units,) array               v¹·v²/(‖v¹‖‖v²‖) = ω¹·ω²/(‖ω¹‖‖ω²‖).
    norm_ratio : (n_units,) array              ‖ω¹‖/‖ω²‖.
    mu : float                                 measured μ over the second half of the run: for
                     a > 0 the fraction of *mixed* different pairs (one walker s > 0, the other
                     s < 0) that trigger an update; for a < 0 the fraction of different pairs
                     that trigger an update (App. C.4.1 / C.4.2).
    mu_std : float                             standard deviation of the per-unit μ estimates.
    n_plus_fraction : float                    mean over units of n⁺/L at the end.
    steps, batch_size : int                    batches simulated (the ``n_steps`` of the call) and
                     samples per batch.
    """

    omega1: np.ndarray
    omega2: np.ndarray
    readout_sign: int
    alignment: np.ndarray
    norm_ratio: np.ndarray
    mu: float
    mu_std: float
    n_plus_fraction: float
    steps: int
    batch_size: int


@renamed_argument(L="n_symbols", steps="n_steps")
def simulate_markov_walkers(
    n_symbols: int,
    *,
    readout_sign: int,
    n_units: int = 100,
    batch_size: int = 512,
    n_steps: int = 200,
    seed: int | np.random.Generator = 0,
) -> MarkovWalkerResult:
    """Simulate the Markov process of seed 003 App. C.3 for ``n_units`` independent units [MT],
    with L = ``n_symbols`` training symbols.

    Step 1: ω¹_k = ω²_k = 0. Step 2: draw u uniform in [L]; with probability 1/2 v = u (same),
    else v uniform in [L] \\ {u}. Step 3: ρ = ω¹_u + ω²_v; proceed to the update if ρ > 0, or
    with probability 1/2 if ρ = 0. Step 4: ξ = +1 if the pair matches the readout (a > 0 and
    u = v, or a < 0 and u ≠ v), else ξ = −1; accumulate b¹_u += ξ, b²_v += ξ (the update
    Δw = ξ x of Eq. C.4 with x = (z_u; z_v)). Step 5: after ``batch_size`` samples add b to ω;
    ``n_steps`` such batches.
    All ρ in one batch use the ω of the start of the batch (as in the seed). Vectorised over
    units; ``seed`` is an int or a ``numpy.random.Generator`` (used as given). Sizes whose
    arrays (``n_units`` × (L + batch_size)) exceed 16 GiB raise ValueError.
    """
    L = check_int("n_symbols", n_symbols, minimum=2)
    if readout_sign not in (1, -1):
        raise ValueError(f"readout_sign must be +1 or -1, got {readout_sign!r}")
    n_units = check_int("n_units", n_units, minimum=1)
    N = check_int("batch_size", batch_size, minimum=1)
    check_alloc(f"n_units={n_units} with L={L} and batch_size={N}", n_units * (8 * L + 14 * N),
                what="the walker states and one batch's draws")
    steps = check_int("n_steps", n_steps, minimum=1)
    rng = as_rng(seed)
    w1 = np.zeros((n_units, L), dtype=np.int64)
    w2 = np.zeros((n_units, L), dtype=np.int64)
    rows = np.arange(n_units)[:, None]
    offs = (np.arange(n_units) * L)[:, None]
    mixed_tot = np.zeros(n_units)
    mixed_act = np.zeros(n_units)
    start_stats = steps // 2
    for t in range(steps):
        u = rng.integers(0, L, size=(n_units, N))
        same = rng.random((n_units, N)) < 0.5
        v = (u + 1 + rng.integers(0, L - 1, size=(n_units, N))) % L
        v = np.where(same, u, v)
        rho = w1[rows, u] + w2[rows, v]
        coin = rng.random((n_units, N)) < 0.5
        active = (rho > 0) | ((rho == 0) & coin)
        match = same if readout_sign == 1 else ~same
        xi = np.where(match, 1, -1) * active
        b1 = np.bincount((offs + u).ravel(), weights=xi.ravel(), minlength=n_units * L)
        b2 = np.bincount((offs + v).ravel(), weights=xi.ravel(), minlength=n_units * L)
        if t >= start_stats:
            diff = ~same
            if readout_sign == 1:
                s = w1 + w2
                su, sv = s[rows, u], s[rows, v]
                sel = diff & (((su > 0) & (sv < 0)) | ((su < 0) & (sv > 0)))
            else:
                sel = diff
            mixed_tot += sel.sum(axis=1)
            mixed_act += (sel & active).sum(axis=1)
        w1 += b1.reshape(n_units, L).astype(np.int64)
        w2 += b2.reshape(n_units, L).astype(np.int64)
    n1 = np.linalg.norm(w1, axis=1)
    n2 = np.linalg.norm(w2, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        align = np.sum(w1 * w2, axis=1) / (n1 * n2)
        ratio = n1 / n2
        mu_units = mixed_act / mixed_tot
    ok = np.isfinite(mu_units)
    mu = float(mixed_act[ok].sum() / mixed_tot[ok].sum()) if ok.any() else float("nan")
    mu_std = float(np.std(mu_units[ok])) if ok.sum() > 1 else float("nan")
    n_plus = float(np.mean(np.sum((w1 + w2) > 0, axis=1) / L))
    return MarkovWalkerResult(
        converged=True,
        status=Status.SUCCESS,
        message=f"simulated {steps} batches of {N} samples for {n_units} units",
        nit=steps,
        residual=float("nan"),
        omega1=w1,
        omega2=w2,
        readout_sign=readout_sign,
        alignment=align,
        norm_ratio=ratio,
        mu=mu,
        mu_std=mu_std,
        n_plus_fraction=n_plus,
        steps=steps,
        batch_size=N,
    )


def readout_drift_ratio(omega1_plus, omega2_plus, omega1_minus, omega2_minus) -> float:
    """|Δā⁻|/|Δā⁺| from walker states, the readout update of seed 003 App. C.4.3 [RECON].

    For each unit the expected readout drift over the balanced training distribution is
    Δa ∝ Σ_{u,v} p(u, v) S(u, v) φ(ω¹_u + ω²_v) (S = +1 same, −1 different; p = 1/(2L) per same
    pair, 1/(2L(L−1)) per ordered different pair), assuming |∂L/∂f| is the same for every
    example (as the seed does). Each unit's ω is first normalised to unit length (the seed's
    "magnitude of all coordinates roughly equal"), so units that grew at different speeds are
    compared on the same footing. Returns mean |Δa| over the a < 0 units divided by the mean
    over the a > 0 units (the seed's heuristic gives ≈ 2 for L >= 3, 1 for L = 2).
    """

    def drift(o1, o2, name1, name2):
        o1 = as_float_array(name1, o1)
        o2 = as_float_array(name2, o2)
        if o1.ndim != 2 or o1.shape != o2.shape or o1.shape[1] < 2 or o1.shape[0] < 1:
            raise ValueError(
                f"the walker coordinates must be two non-empty (n_units, L) arrays of the same shape "
                f"with L >= 2, got {name1} {o1.shape} and {name2} {o2.shape}"
            )
        L = o1.shape[1]
        norm = np.sqrt(np.sum(o1**2 + o2**2, axis=1, keepdims=True))
        norm[norm == 0] = 1.0
        o1, o2 = o1 / norm, o2 / norm
        pre = np.maximum(o1[:, :, None] + o2[:, None, :], 0.0)  # (n, u, v)
        eye = np.eye(L, dtype=bool)
        same = pre[:, eye].sum(axis=1) / (2 * L)
        diff = pre[:, ~eye].sum(axis=1) / (2 * L * (L - 1))
        return same - diff

    dp = drift(omega1_plus, omega2_plus, "omega1_plus", "omega2_plus")
    dm = drift(omega1_minus, omega2_minus, "omega1_minus", "omega2_minus")
    return float(np.mean(np.abs(dm)) / np.mean(np.abs(dp)))
