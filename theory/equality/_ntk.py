"""Lazy-regime theory of the same-different (SD) task: ReLU NTK / NNGP, Theorem 2, kernel regression.

Seed 003 (Tong & Pehlevan) App. D treats the lazy limit γ → 0 of the centred two-layer ReLU MLP
f(x) = (1/(γ√d)) Σ_i a_i φ(w_i·x) as a kernel machine with the infinite-width NTK. With the
initialisation of the seed (w_i ~ N(0, I/m), a_i ~ N(0, 1/m)) the tangent kernel
Σ_i [∂f/∂a_i ∂f/∂a_i + ∇_{w_i} f·∇_{w_i} f] converges, up to the factor 1/(γ²d), to

    Θ(x, x') = ‖x‖‖x'‖ K(u),   K(u) = u (1 − θ/π) + √(1 − u²)/(2π),   u = cos θ = x·x'/(‖x‖‖x'‖),

which on the unit sphere is exactly the K(u) printed in App. D (the two-layer ReLU NTK; see
spec/PAPERS.md). Its readout part alone is the NNGP kernel
Σ(x, x') = ‖x‖‖x'‖ (sin θ + (π − θ) cos θ)/(2π) (arc-cosine kernel of degree 1, Cho & Saul 2009).

Contents: the two Gram matrices (local closed forms; checked against
:mod:`richlazy.theory.kernels._nngp` and Monte Carlo in the tests), the SD training / test pairs in
numpy, the ridge(less) kernel-regression predictor and its accuracy vs (L, d), and the explicit
Hoeffding bound behind Theorem 2, O(exp(−L/d²)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import integrate, linalg, special

from ..checks import (
    as_float_array,
    as_float_matrix,
    as_rng,
    check_alloc,
    check_int,
    check_nonneg_float,
    check_pos_float,
    renamed_argument,
    renamed_option,
)

__all__ = [
    "KernelAccuracy",
    "Theorem2Bound",
    "kernel_gradient_descent",
    "kernel_regression_predict",
    "relu_nngp_gram",
    "relu_ntk_gram",
    "sd_kernel_accuracy",
    "sd_kernel_accuracy_grid",
    "sd_test_pairs",
    "sd_training_pairs",
    "sphere_cosine_mean",
    "theorem2_bound",
]

_KERNELS = ("ntk", "nngp")


def _points(name, X, D=None):
    """``X`` as a finite non-empty (points × features) float matrix, with ``D`` columns if given."""
    X = as_float_matrix(name, X)
    if D is not None and X.shape[1] != D:
        raise ValueError(f"{name} must have {D} columns to match the other points, got {X.shape[1]}")
    return X


def _cosines(X1, X2):
    n1 = np.linalg.norm(X1, axis=1)
    n2 = np.linalg.norm(X2, axis=1)
    if np.any(n1 == 0) or np.any(n2 == 0):
        raise ValueError("kernel inputs must be non-zero vectors (the ReLU kernels use x/‖x‖)")
    u = np.clip((X1 @ X2.T) / np.outer(n1, n2), -1.0, 1.0)
    return u, np.outer(n1, n2)


def relu_nngp_gram(X1, X2=None):
    """NNGP Gram matrix of a bias-free ReLU layer with unit-variance weights [MT, Cho & Saul 2009].

    Σ(x, x') = E_{w~N(0,I)}[φ(w·x) φ(w·x')] = ‖x‖‖x'‖ (sin θ + (π − θ) cos θ)/(2π).
    This is the readout part of the kernel in seed 003 App. D (the kernel of the frozen-feature,
    readout-only model). ``X1`` (n1, D), ``X2`` (n2, D) (defaults to ``X1``).
    """
    X1 = _points("X1", X1)
    X2 = X1 if X2 is None else _points("X2", X2, X1.shape[1])
    u, nn = _cosines(X1, X2)
    th = np.arccos(u)
    return nn * (np.sqrt(1.0 - u * u) + (np.pi - th) * u) / (2.0 * np.pi)


def relu_ntk_gram(X1, X2=None):
    """Two-layer ReLU NTK Gram matrix, Θ(x, x') = ‖x‖‖x'‖ K(u), seed 003 App. D [MT].

    K(u) = u (1 − arccos(u)/π) + √(1 − u²)/(2π): the NNGP part (readout gradients,
    :func:`relu_nngp_gram`) plus x·x' (π − θ)/(2π) (first-layer gradients). It is the limit
    m → ∞ of Σ_i [φ(w_i·x)φ(w_i·x') + a_i² φ'(w_i·x)φ'(w_i·x') x·x'] for w_i ~ N(0, I/m),
    a_i ~ N(0, 1/m) — the tangent kernel of the seed's MLP up to its factor 1/(γ²d).
    """
    X1 = _points("X1", X1)
    X2 = X1 if X2 is None else _points("X2", X2, X1.shape[1])
    u, nn = _cosines(X1, X2)
    th = np.arccos(u)
    return nn * (u * (1.0 - th / np.pi) + np.sqrt(1.0 - u * u) / (2.0 * np.pi))


def _gram(kernel, X1, X2=None):
    if kernel not in _KERNELS:
        raise ValueError(f"kernel must be one of {_KERNELS}, got {kernel!r}")
    return relu_ntk_gram(X1, X2) if kernel == "ntk" else relu_nngp_gram(X1, X2)


# --------------------------------------------------------------------------------------------
# SD data in numpy (the theory side must not import the torch simulator)
# --------------------------------------------------------------------------------------------


def sd_training_pairs(symbols, *, sigma2: float = 0.0, seed: int | np.random.Generator | None = None,
                      rng=None):
    """All distinct training inputs of the SD task built from L symbols (seed 003 §2, App. G.2).

    Returns ``(x, y, p)``: x (L², 2d) with the L same pairs (s_k; s_k) first and then the
    L(L − 1) ordered different pairs (s_u; s_v), u ≠ v; y their labels (1 same, 0 different);
    p the probability of each pair under the balanced training distribution (1/(2L) per same
    pair, 1/(2L(L − 1)) per different pair). With ``sigma2 > 0`` one noise draw
    N(0, σ²/d) is added to every component (``seed``, an int or a ``numpy.random.Generator``,
    then required). ``rng`` is the deprecated spelling of ``seed``.
    """
    seed = renamed_option("seed", seed, "rng", rng)
    S = _points("symbols", symbols)
    L, d = S.shape
    if L < 2:
        raise ValueError(f"symbols must hold at least 2 symbols (rows), got {L}")
    sigma2 = check_nonneg_float("sigma2", sigma2)
    iu, iv = np.meshgrid(np.arange(L), np.arange(L), indexing="ij")
    diff = iu != iv
    u = np.r_[np.arange(L), iu[diff]]
    v = np.r_[np.arange(L), iv[diff]]
    x = np.concatenate([S[u], S[v]], axis=1)
    if sigma2 > 0:
        if seed is None:
            raise ValueError("seed must be given (an int or a numpy.random.Generator) when sigma2 > 0")
        x = x + as_rng(seed).standard_normal(x.shape) * np.sqrt(sigma2 / d)
    y = np.r_[np.ones(L), np.zeros(L * (L - 1))]
    p = np.r_[np.full(L, 1.0 / (2 * L)), np.full(L * (L - 1), 1.0 / (2 * L * (L - 1)))]
    return x, y, p


def sd_test_pairs(n: int, d: int, *, sigma2: float = 0.0,
                  seed: int | np.random.Generator | None = None, rng=None):
    """Balanced SD test pairs with fresh symbols (seed 003 §2): n//2 same then n − n//2 different.

    Symbols s ~ N(0, I/d), z = s + η with η ~ N(0, σ²/d). Returns ``(x, y)``, x (n, 2d).
    Sizes whose arrays exceed 16 GiB (``n d > 2^28``) raise ValueError.
    ``seed`` (required) is an int or a ``numpy.random.Generator`` (its stream advances);
    ``rng`` is its deprecated spelling.
    """
    seed = renamed_option("seed", seed, "rng", rng)
    if seed is None:
        raise TypeError("sd_test_pairs() needs seed= (an int or a numpy.random.Generator)")
    rng = as_rng(seed)
    n = check_int("n", n, minimum=2)
    d = check_int("d", d, minimum=1)
    check_alloc(f"n={n} with d={d}", 8 * n * d, what="the (n, 2d) pairs and their draws")
    sigma2 = check_nonneg_float("sigma2", sigma2)
    ns = n // 2
    s1 = rng.standard_normal((n, d)) / np.sqrt(d)
    s2 = rng.standard_normal((n, d)) / np.sqrt(d)
    s2[:ns] = s1[:ns]
    x = np.concatenate([s1, s2], axis=1)
    if sigma2 > 0:
        x = x + rng.standard_normal(x.shape) * np.sqrt(sigma2 / d)
    y = np.r_[np.ones(ns), np.zeros(n - ns)]
    return x, y


# --------------------------------------------------------------------------------------------
# kernel regression predictor
# --------------------------------------------------------------------------------------------


def kernel_regression_predict(train_x, train_y, test_x, *, kernel: str = "ntk",
                              ridge: float = 0.0, weights=None):
    """Kernel (ridge) regression predictor with ±1 targets, the lazy (γ → 0) model of App. D.

    f(x) = k(x)ᵀ (K + λ W⁻¹)⁻¹ (2y − 1), with K the NTK (:func:`relu_ntk_gram`) or NNGP
    (:func:`relu_nngp_gram`) Gram matrix of the training points, λ = ``ridge`` and W = n·diag(p)
    the (optional) sample weights ``weights`` = p (uniform when None). For λ = 0 this is the
    minimum-RKHS-norm interpolant — the infinite-width lazy network trained to zero squared loss
    — and the weights are irrelevant. The prediction is "same" iff f(x) > 0. [RECON: the seed
    bounds this predictor (Theorem 2) but does not compute it; squared loss, not the BCE used
    for the networks.]
    """
    Xtr = _points("train_x", train_x)
    Xte = _points("test_x", test_x, Xtr.shape[1])
    y = as_float_array("train_y", train_y)
    if y.shape != (Xtr.shape[0],) or not np.all((y == 0) | (y == 1)):
        raise ValueError(f"train_y must be {Xtr.shape[0]} labels in {{0, 1}}, got shape {y.shape}")
    ridge = check_nonneg_float("ridge", ridge)
    K = _gram(kernel, Xtr)
    if ridge > 0:
        if weights is None:
            K[np.diag_indices_from(K)] += ridge
        else:
            w = np.asarray(weights, dtype=float)
            if w.shape != y.shape or np.any(w <= 0):
                raise ValueError(f"weights must be {y.size} positive numbers, got shape {w.shape}")
            K[np.diag_indices_from(K)] += ridge / (w * w.size / w.sum())
    coef = linalg.solve(K, 2.0 * y - 1.0, assume_a="pos")
    return _gram(kernel, Xte, Xtr) @ coef


@renamed_argument(steps="n_steps")
def kernel_gradient_descent(train_x, train_y, test_x, *, p=None, kernel: str = "ntk",
                            lr: float = 0.1, n_steps: int = 1000, loss: str = "bce",
                            record_every: int | None = None):
    """Function-space gradient descent of a kernel machine: the lazy (γ → 0, m → ∞) network.

    In the lazy limit the centred MLP of seed 003 stays at its linearisation, and one SGD step
    of size α on the mean loss changes the output by Δf(x) = −α s² E_b[ℓ'(f(x_b), y_b) Θ̂(x, x_b)]
    with s = 1/(γ√d) and Θ̂ → Θ (:func:`relu_ntk_gram`). Because α s² = α₀ for γ <= 1
    (App. F / G.1), the infinite-width lazy network after t steps is, up to SGD noise,

        f_{t+1}(x) = f_t(x) − α₀ Σ_j p_j ℓ'(f_t(x_j), y_j) K(x, x_j),    f_0 = 0,

    with ℓ' = σ(f) − y for BCE (``loss="bce"``) or f − (2y − 1) for squared loss ("mse"), and
    p_j the training distribution over the distinct training points (``p``; uniform if None,
    :func:`sd_training_pairs` returns the balanced SD one). [RECON: standard NTK dynamics
    (Jacot et al. 2018) applied to the seed's parametrisation.]

    Runs ``n_steps`` steps. Returns ``(f_test, steps_recorded)``: f_test of shape (n_records,
    n_test) with the outputs after the recorded steps (every ``record_every`` steps and at the end).
    """
    Xtr = _points("train_x", train_x)
    Xte = _points("test_x", test_x, Xtr.shape[1])
    y = as_float_array("train_y", train_y)
    if y.shape != (Xtr.shape[0],) or not np.all((y == 0) | (y == 1)):
        raise ValueError(f"train_y must be {Xtr.shape[0]} labels in {{0, 1}}, got shape {y.shape}")
    if p is None:
        p = np.full(y.size, 1.0 / y.size)
    p = np.asarray(p, dtype=float)
    if p.shape != y.shape or np.any(p < 0) or not np.isclose(p.sum(), 1.0):
        raise ValueError(f"p must be {y.size} probabilities summing to 1, got shape {p.shape}")
    check_pos_float("lr", lr)
    steps = check_int("n_steps", n_steps, minimum=1)
    if loss not in ("bce", "mse"):
        raise ValueError(f"loss must be 'bce' or 'mse', got {loss!r}")
    every = steps if record_every is None else check_int("record_every", record_every, minimum=1)
    Ktr = _gram(kernel, Xtr)
    Kte = _gram(kernel, Xte, Xtr)
    f_tr = np.zeros(y.size)
    dual = np.zeros(y.size)  # f_t(x) = −K(x, X_train) · dual
    out, rec = [], []
    for t in range(1, steps + 1):
        g = special.expit(f_tr) - y if loss == "bce" else f_tr - (2.0 * y - 1.0)
        c = lr * p * g
        f_tr -= Ktr @ c
        dual += c
        if t % every == 0 or t == steps:
            out.append(-(Kte @ dual))
            rec.append(t)
    return np.asarray(out), np.asarray(rec)


@dataclass(frozen=True)
class KernelAccuracy:
    """Test accuracy of the kernel-regression predictor on the SD task, averaged over symbol sets.

    accuracy : float             mean over ``n_seeds`` draws of the L training symbols.
    stderr : float               standard error of that mean (seed-to-seed).
    accuracy_same, accuracy_different : float   class-conditional accuracies (means).
    per_seed : (n_seeds,) array
    L, d : int; kernel : str; ridge : float; n_test : int
    """

    accuracy: float
    stderr: float
    accuracy_same: float
    accuracy_different: float
    per_seed: np.ndarray
    L: int
    d: int
    kernel: str
    ridge: float
    n_test: int


def _check_kernel_accuracy_sizes(L, d, n_test, n_seeds):
    """ValueError (naming the sizes) when one seed's arrays would exceed 16 GiB: the training and
    test Gram matrices with their work arrays, the pairs; or the per-seed results (Python floats,
    ~96 bytes per seed)."""
    check_alloc(f"L={L} with d={d} and n_test={n_test}",
                6 * L**4 + 6 * n_test * L * L + 4 * L * L * d + 8 * n_test * d,
                what="the training and test Gram matrices and the pairs")
    check_alloc(f"n_seeds={n_seeds}", n_seeds, itemsize=96, what="the per-seed accuracies")


@renamed_argument(L="n_symbols")
def sd_kernel_accuracy(n_symbols: int, d: int, *, kernel: str = "ntk", n_test: int = 2000,
                       n_seeds: int = 4, ridge: float = 0.0,
                       seed: int | np.random.Generator = 0) -> KernelAccuracy:
    """Accuracy of the NTK / NNGP regression predictor on the noiseless SD task vs (L, d).

    For each of ``n_seeds`` independent draws of L = ``n_symbols`` symbols s ~ N(0, I/d) the predictor of
    :func:`kernel_regression_predict` is fitted to all L² distinct training pairs
    (:func:`sd_training_pairs`) and evaluated on ``n_test`` balanced fresh-symbol pairs.
    Seed 003 App. D / Fig. 1e–f (lazy regime) [RECON: the seed shows networks, not this
    predictor]. Cost O(L⁶) per seed; keep L <= ~64 on a CPU. ``seed``: an int or a
    ``numpy.random.Generator`` (used as given). Sizes whose arrays exceed 16 GiB raise
    ValueError (the L² × L² training Gram matrix: L <= ~200; the ``n_test`` × L² test one).
    """
    L = check_int("n_symbols", n_symbols, minimum=2)
    d = check_int("d", d, minimum=1)
    n_test = check_int("n_test", n_test, minimum=2)
    n_seeds = check_int("n_seeds", n_seeds, minimum=1)
    _check_kernel_accuracy_sizes(L, d, n_test, n_seeds)
    if kernel not in _KERNELS:
        raise ValueError(f"kernel must be one of {_KERNELS}, got {kernel!r}")
    rng = as_rng(seed)
    acc, acc_s, acc_d = [], [], []
    for _ in range(n_seeds):
        S = rng.standard_normal((L, d)) / np.sqrt(d)
        xtr, ytr, _p = sd_training_pairs(S)
        xte, yte = sd_test_pairs(n_test, d, seed=rng)
        f = kernel_regression_predict(xtr, ytr, xte, kernel=kernel, ridge=ridge)
        correct = (f > 0) == (yte == 1)
        acc.append(correct.mean())
        acc_s.append(correct[yte == 1].mean())
        acc_d.append(correct[yte == 0].mean())
    acc = np.asarray(acc)
    se = float(acc.std(ddof=1) / np.sqrt(n_seeds)) if n_seeds > 1 else float("nan")
    return KernelAccuracy(float(acc.mean()), se, float(np.mean(acc_s)), float(np.mean(acc_d)),
                          acc, L, d, kernel, ridge, n_test)


def sd_kernel_accuracy_grid(Ls, ds, *, kernel: str = "ntk", n_test: int = 2000,
                            n_seeds: int = 4, ridge: float = 0.0,
                            seed: int | np.random.Generator = 0):
    """:func:`sd_kernel_accuracy` over a grid; returns ``(acc, stderr)`` arrays of shape
    (len(Ls), len(ds)). Independent random streams per grid point are spawned from ``seed`` (an
    int: ``SeedSequence(seed).spawn``; a ``numpy.random.Generator``: ``Generator.spawn``).
    Sizes are bounded as in :func:`sd_kernel_accuracy` (checked for the whole grid up front)."""
    Ls = [check_int("Ls[i]", v, minimum=2) for v in np.atleast_1d(Ls).tolist()]
    ds = [check_int("ds[j]", v, minimum=1) for v in np.atleast_1d(ds).tolist()]
    if Ls and ds:
        _check_kernel_accuracy_sizes(max(Ls), max(ds), check_int("n_test", n_test, minimum=2),
                                     check_int("n_seeds", n_seeds, minimum=1))
    n_points = len(Ls) * len(ds)
    if isinstance(seed, np.random.Generator):
        seeds = seed.spawn(n_points)
    else:
        seeds = [np.random.default_rng(s) for s in
                 np.random.SeedSequence(check_int("seed", seed, minimum=0)).spawn(n_points)]
    acc = np.empty((len(Ls), len(ds)))
    se = np.empty_like(acc)
    for i, L in enumerate(Ls):
        for j, d in enumerate(ds):
            r = sd_kernel_accuracy(L, d, kernel=kernel, n_test=n_test, n_seeds=n_seeds,
                                   ridge=ridge, seed=seeds[i * len(ds) + j])
            acc[i, j], se[i, j] = r.accuracy, r.stderr
    return acc, se


# --------------------------------------------------------------------------------------------
# Theorem 2: explicit Hoeffding bound
# --------------------------------------------------------------------------------------------


def sphere_cosine_mean(func, n: int, *, epsabs: float = 1e-13):
    """E[func(u)] for u = cosine between a fixed and a uniform direction on S^{n−1} (n >= 2).

    u has density Γ(n/2)/(√π Γ((n−1)/2)) (1 − u²)^{(n−3)/2} on [−1, 1] (E[u] = 0,
    E[u²] = 1/n); integrated with adaptive quadrature (scipy ``quad``), split at ±8/√n where the
    mass concentrates for large n (QAWS with the algebraic weight for n <= 40). ``func`` must accept scalars.
    """
    n = check_int("n", n, minimum=2)
    epsabs = check_pos_float("epsabs", epsabs)
    if not callable(func):
        raise TypeError(f"func must be callable, got {type(func).__name__}")
    logc = special.gammaln(n / 2.0) - special.gammaln((n - 1) / 2.0) - 0.5 * np.log(np.pi)

    def integrand(u):
        return func(u) * np.exp(logc + 0.5 * (n - 3) * np.log1p(-u * u))

    a = 0.5 * (n - 3)
    if n <= 40:  # algebraic end-point weight (1 − u)^a (1 + u)^a handled exactly by QAWS
        val, _err = integrate.quad(lambda u: func(u) * np.exp(logc), -1.0, 1.0, weight="alg",
                                   wvar=(a, a), epsabs=epsabs, epsrel=1e-12, limit=200)
        return float(val)
    cut = 8.0 / np.sqrt(n)
    total = 0.0
    for lo, hi in ((-1.0, -cut), (-cut, 0.0), (0.0, cut), (cut, 1.0)):
        val, _err = integrate.quad(integrand, lo, hi, epsabs=epsabs, epsrel=1e-12, limit=200)
        total += val
    return float(total)


def _K(u):
    u = np.clip(u, -1.0, 1.0)
    return u * (1.0 - np.arccos(u) / np.pi) + np.sqrt(1.0 - u * u) / (2.0 * np.pi)


@dataclass(frozen=True)
class Theorem2Bound:
    """The restricted kernel classifier of the proof of Theorem 2 and its Hoeffding bound.

    mean_kernel_same : E[K(u)] between a same test pair and a same training pair (u ~ S^{d−1}).
    mean_kernel_mixed : E[K(u)] for every other test/training combination (u ~ S^{2d−1}).
    epsilon : b⁻ = −(1 + ε) b⁺, chosen to equalise the two class margins.
    margin_per_term : δ = (m_same − m_mixed)/2 = E[f]/(P/2) for both classes (≈ 3/(16π d)).
    n_terms : P = 2⌊L/3⌋ independent summands (⌊L/3⌋ same, ⌊L/3⌋ disjoint different pairs).
    error_bound : exp(−P δ² / (1 + (1 + ε)²)) (bounds both class-conditional errors).
    rate : the decay constant κ in error_bound = exp(−κ L) (for L a multiple of 3).
    """

    L: int
    d: int
    mean_kernel_same: float
    mean_kernel_mixed: float
    epsilon: float
    margin_per_term: float
    n_terms: int
    error_bound: float
    rate: float


@renamed_argument(L="n_symbols")
def theorem2_bound(n_symbols: int, d: int) -> Theorem2Bound:
    """Test-error bound of the lazy (NTK) model on the SD task, seed 003 Theorem 2 / App. D.

    L = ``n_symbols`` training symbols. Proof construction [MT]: keep ⌊L/3⌋ same training pairs
    built from symbols S1 and ⌊L/3⌋ different pairs built from disjoint consecutive symbols of
    S2, with dual coefficients b⁺ > 0 (same) and b⁻ < 0 (different), so f(x) = Σ_j b_j K(x·x_j)
    is a sum of independent bounded terms and Hoeffding's inequality gives
    P(error) <= exp(−2 E[f]² / Σ_j c_j²).

    Correction [RECON]: the seed takes |b⁻| − |b⁺| = O(1) and |b⁻/b⁺| < 2, but then the
    constant term K(0) = 1/(2π) of E[K] makes E[f] = −O(P) for *same* test pairs as well. The
    margins of both classes are O(P/d) only if the constant cancels to O(1/d): with
    m_S = E[K] (same test, same train; u ~ S^{d−1}, E u² = 1/d) and m_D = E[K] (all other
    combinations; u ~ S^{2d−1}, E u² = 1/(2d)), b⁻ = −(1 + ε) b⁺ and ε = (m_S − m_D)/(2 m_D)
    give E[f | same] = −E[f | different] = (P/2) b⁺ δ with δ = (m_S − m_D)/2 ≈ 3/(16π d)
    (Taylor, K(u) ≈ 1/(2π) + u/2 + 3u²/(4π)). Summand ranges are b⁺ (K ∈ [0, 1]) and
    (1 + ε) b⁺, so the bound is exp(−P δ²/(1 + (1 + ε)²)) = exp(−O(L/d²)) — Theorem 2's scaling
    L ∝ d², here with its explicit (small) constant. The expectations are unconditional over the
    test pair (their O(d^{-1/2}) dependence on the test norms is neglected).
    """
    L = check_int("n_symbols", n_symbols, minimum=3)
    d = check_int("d", d, minimum=2)
    m_s = sphere_cosine_mean(_K, d)
    m_d = sphere_cosine_mean(_K, 2 * d)
    eps = (m_s - m_d) / (2.0 * m_d)
    delta = (m_s - m_d) / 2.0
    P = 2 * (L // 3)
    expo = P * delta**2 / (1.0 + (1.0 + eps) ** 2)
    return Theorem2Bound(L, d, m_s, m_d, eps, delta, P, float(np.exp(-expo)),
                         float(expo / (3 * (L // 3))))
