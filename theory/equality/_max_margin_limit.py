"""Rich-limit max-margin network for the same-different task (derived here; seed 003 context).

Why this exists. Seed 003 (Tong & Pehlevan) predicts the rich-regime test accuracy with the
heuristic Eq. (3)/(C.18), and analyses max-margin solutions only for quadratic activations with
fixed ±1 readouts (Theorem 1, App. C.1). For two-layer ReLU networks trained by gradient descent
on the logistic loss, Chizat & Bach (2020, cited by the seed) show that the infinite-width
(mean-field) dynamics converge in direction to a max-margin classifier in the variation norm
‖f‖ = ∫ |a| ‖w‖ dμ. This module computes that classifier for the SD task in the seed's d → ∞
limit and its test accuracy, as a second, assumption-light rich-limit prediction to set next to
Eq. (3). It is **derived here, not in the seed** [RECON], and is validated in the tests by an
independent column-generation linear program.

Set-up (d → ∞). Training symbols become orthonormal, so only the coordinates of the first-layer
weights on the L training symbols matter: a unit is w = (w¹; w²) ∈ R^{2L}, and the training pair
(k, l) (symbols z_k, z_l) has pre-activation w¹_k + w²_l. A fresh test pair (z, z') has
coordinates p = (z_k·z)_k and q = (z_k·z')_k, i.i.d. N(0, I_L/d); the output is positively
1-homogeneous in (p, q), so the scale 1/d drops out of every classification. The training set
(L same pairs, L(L−1) different pairs) is invariant under permuting the symbols and swapping
the two halves; the Gaussian initialisation is too, so the mean-field limit is a symmetric
measure, and among max-margin classifiers we take the symmetric one.

Symmetric max-margin. A symmetrised unit enters the margin constraints only through its mean
activations on same and on different training pairs,

    A_s(w) = (1/L) Σ_k φ(w¹_k + w²_k),      A_d(w) = (1/(L(L−1))) Σ_{k≠l} φ(w¹_k + w²_l),

so the problem is the two-constraint linear program over signed readout masses c_j
(Σ_j |c_j| = 1, ‖w_j‖ = 1)

    max t   s.t.   Σ_j c_j A_s(w_j) >= t,   −Σ_j c_j A_d(w_j) >= t.

Its solution (found numerically by column generation for L = 2…10 and then written in closed
form; the tests re-derive it independently) has one orbit of each sign:

* negative readout (mass c⁻): the antiparallel unit w = (v; −v) with equally spaced coordinates
  v ∝ (2k − L − 1)_k, ‖v‖ = 1/√2. Antiparallel units are silent on same pairs (A_s = 0), and
  Σ_{k≠l} φ(v_k − v_l) = Σ_{k<l} |v_k − v_l| is linear in the sorted v, maximal for equal
  spacing: A_d⁻ = √((L + 1)/(6 L (L − 1))).
* positive readout (mass c⁺): the parallel unit w = (v; v) with v_k = ±1/√(2L), k₊ = ⌈L/2⌉
  plus signs: A_s⁺ = 2 k₊/(L√(2L)), A_d⁺ = 2 k₊(k₊ − 1)/(L(L − 1)√(2L)).

Both margin constraints are active, which gives

    c⁺ = A_d⁻/(A_d⁻ + A_s⁺ + A_d⁺),   c⁻ = 1 − c⁺,   t* = A_s⁺ A_d⁻/(A_d⁻ + A_s⁺ + A_d⁺).

The symmetrised network is f(p, q) = c⁺ ⟨φ(v_S·(p + q))⟩_S − c⁻ ⟨φ(v_π·(p − q))⟩_π, averaged over
the C(L, k₊) sign patterns S and the L! orderings π. Same test pairs (q = p) get f >= 0 from
the parallel orbit alone; :func:`sd_max_margin_accuracy` estimates both class accuracies by Monte
Carlo. The parallel/antiparallel structure is the one the seed describes (App. C.4); the
readout-mass ratio c⁻/c⁺ (≈ 2.0–2.5) is the max-margin analogue of its ρ.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from .._results import SolverStatus, Status
from ..checks import as_rng, check_alloc, check_int, renamed_argument

__all__ = ["MaxMarginAccuracy", "SymmetricMaxMargin", "sd_max_margin_accuracy",
           "sd_symmetric_max_margin"]


@dataclass(frozen=True)
class SymmetricMaxMargin(SolverStatus):
    """Closed-form symmetric max-margin network of :func:`sd_symmetric_max_margin`.

    L : int                    number of training symbols.
    margin : float             t*, the normalised margin (Σ|c| = 1, unit-norm first-layer rows).
    k_plus : int               number of + coordinates of the parallel unit, ⌈L/2⌉.
    c_plus, c_minus : float    readout masses of the parallel and antiparallel orbits.
    readout_ratio : float      c_minus / c_plus.
    w_plus, w_minus : (2L,)    representative units (v; v) and (v; −v), ‖w‖ = 1.
    A_s_plus, A_d_plus, A_d_minus : float   mean activations on same / different training pairs.
    converged, status, message, nit, residual : the common result fields of richlazy solvers
                               (:class:`~richlazy.theory.SolverStatus`); a closed form, so always
                               (True, Status.SUCCESS, "closed form", 0, 0.0).
    """

    L: int
    margin: float
    k_plus: int
    c_plus: float
    c_minus: float
    readout_ratio: float
    w_plus: np.ndarray
    w_minus: np.ndarray
    A_s_plus: float
    A_d_plus: float
    A_d_minus: float


@renamed_argument(L="n_symbols")
def sd_symmetric_max_margin(n_symbols: int) -> SymmetricMaxMargin:
    """Symmetric variation-norm max-margin ReLU network on the SD task with L = ``n_symbols`` symbols, d → ∞.

    Closed form (derived here, see the module docstring): antiparallel equally spaced unit with
    A_d⁻ = √((L+1)/(6L(L−1))), parallel ±1/√(2L) unit with k₊ = ⌈L/2⌉,
    A_s⁺ = 2k₊/(L√(2L)), A_d⁺ = 2k₊(k₊−1)/(L(L−1)√(2L)), and
    t* = A_s⁺ A_d⁻/(A_d⁻ + A_s⁺ + A_d⁺), c⁺ = A_d⁻/(A_d⁻ + A_s⁺ + A_d⁺), c⁻ = 1 − c⁺.
    Context: seed 003 Theorem 1 / App. C.1 (max-margin, quadratic activations) and
    App. C.4 (parallel/antiparallel weights); Chizat & Bach (2020) for the max-margin limit.
    An ``L`` whose (L,) and (2L,) arrays exceed 16 GiB raises ValueError.
    """
    L = check_int("n_symbols", n_symbols, minimum=2)
    check_alloc(f"L={L}", 10 * L, what="the (2L,) representative units and their pieces")
    kp = math.ceil(L / 2)
    c = 1.0 / math.sqrt(2 * L)
    A_s = 2.0 * c * kp / L
    A_dp = 2.0 * c * kp * (kp - 1) / (L * (L - 1))
    A_dm = math.sqrt((L + 1) / (6.0 * L * (L - 1)))
    denom = A_dm + A_s + A_dp
    c_plus = A_dm / denom
    v_plus = np.where(np.arange(L) < kp, c, -c)
    s = 2.0 * np.arange(1, L + 1) - L - 1.0
    v_minus = s / (math.sqrt(2.0) * np.linalg.norm(s))
    return SymmetricMaxMargin(
        converged=True, status=Status.SUCCESS, message="closed form", nit=0, residual=0.0,
        L=L, margin=A_s * A_dm / denom, k_plus=kp, c_plus=c_plus, c_minus=1.0 - c_plus,
        readout_ratio=(1.0 - c_plus) / c_plus,
        w_plus=np.concatenate([v_plus, v_plus]), w_minus=np.concatenate([v_minus, -v_minus]),
        A_s_plus=A_s, A_d_plus=A_dp, A_d_minus=A_dm,
    )


@dataclass(frozen=True)
class MaxMarginAccuracy:
    """Monte Carlo test accuracy of the symmetric max-margin network (:func:`sd_max_margin_accuracy`).

    accuracy : float                 (same + different)/2, balanced test classes.
    same, different : float          class-conditional accuracies.
    stderr, stderr_same, stderr_different : float   binomial standard errors.
    n_test : int                     pairs per class.
    orbit_exact : bool               True when the L! orderings were enumerated, False when
                                     ``max_perms`` random orderings stood in for the orbit.
    """

    L: int
    accuracy: float
    same: float
    different: float
    stderr: float
    stderr_same: float
    stderr_different: float
    n_test: int
    orbit_exact: bool


def _orbits(L, rng, max_perms):
    sol = sd_symmetric_max_margin(L)
    v_minus = sol.w_minus[:L]
    perms = itertools.permutations(range(L))
    exact = math.factorial(L) <= max_perms
    if exact:
        minus = np.array([v_minus[list(p)] for p in perms])
    else:
        minus = np.array([v_minus[rng.permutation(L)] for _ in range(max_perms)])
    c = 1.0 / math.sqrt(2 * L)
    plus = np.array([[c if k in S else -c for k in range(L)]
                     for S in itertools.combinations(range(L), sol.k_plus)])
    return sol, plus, minus, exact


@renamed_argument(L="n_symbols")
def sd_max_margin_accuracy(n_symbols: int, *, n_test: int = 20000, seed: int | np.random.Generator = 0,
                           max_perms: int = 5040, chunk: int = 2000) -> MaxMarginAccuracy:
    """Test accuracy of :func:`sd_symmetric_max_margin` on fresh SD pairs (d → ∞), by Monte Carlo.

    L = ``n_symbols`` training symbols. Draws p, q ~ N(0, I_L) (the coordinates of fresh symbols
    on the training symbols, up to the irrelevant scale 1/√d) and classifies with the symmetrised network
    f(p, q) = c⁺⟨φ(v_S·(p+q))⟩_S − c⁻⟨φ(v_π·(p−q))⟩_π: different pairs are correct when f < 0,
    same pairs (q = p) when f > 0. The orbit of the antiparallel unit has L! members; for
    L! > ``max_perms`` a fixed random subset of ``max_perms`` orderings stands in for it
    (``orbit_exact = False``). Deterministic in ``seed`` (an int, or a ``numpy.random.Generator``
    whose stream is used as given). Sizes whose arrays exceed 16 GiB raise ValueError: the
    C(L, ⌈L/2⌉) parallel and min(L!, ``max_perms``) antiparallel orderings (L <= ~30), the
    (``n_test``, L) draws and a ``chunk`` of activations.
    """
    L = check_int("n_symbols", n_symbols, minimum=2)
    n = check_int("n_test", n_test, minimum=1)
    max_perms = check_int("max_perms", max_perms, minimum=1)
    chunk = check_int("chunk", chunk, minimum=1)
    big = 2**64  # stands in for counts far beyond any memory (an L > 70 orbit; L! above it)
    n_orbit = (math.comb(L, math.ceil(L / 2)) if L <= 70 else big) + min(
        max_perms, math.factorial(L) if L <= 25 else big)
    check_alloc(f"L={L} with n_test={n}, max_perms={max_perms} and chunk={chunk}",
                L * n_orbit + 2 * n * L + 3 * min(chunk, n) * n_orbit,
                what="the orbit units, the draws and one chunk of activations")
    rng = as_rng(seed)
    sol, plus, minus, exact = _orbits(L, rng, max_perms)
    P = rng.standard_normal((n, L))
    Q = rng.standard_normal((n, L))
    n_same = n_diff = 0
    for start in range(0, n, chunk):
        p, q = P[start:start + chunk], Q[start:start + chunk]
        f_diff = (sol.c_plus * np.maximum((p + q) @ plus.T, 0.0).mean(1)
                  - sol.c_minus * np.maximum((p - q) @ minus.T, 0.0).mean(1))
        f_same = sol.c_plus * np.maximum((2.0 * p) @ plus.T, 0.0).mean(1)
        n_diff += int(np.count_nonzero(f_diff < 0))
        n_same += int(np.count_nonzero(f_same > 0))
    ps, pd = n_same / n, n_diff / n
    se_s = math.sqrt(ps * (1 - ps) / n)
    se_d = math.sqrt(pd * (1 - pd) / n)
    return MaxMarginAccuracy(L=L, accuracy=0.5 * (ps + pd), same=ps, different=pd,
                             stderr=0.5 * math.sqrt(se_s**2 + se_d**2), stderr_same=se_s,
                             stderr_different=se_d, n_test=n, orbit_exact=exact)
