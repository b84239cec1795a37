"""Closed-form NNGP and NTK kernels of wide networks (arcsine and arc-cosine kernels).

For pre-activations (u, v) ~ N(0, C), C = [[c11, c12], [c12, c22]], the quantities every
wide-network theory in richlazy needs are

* the NNGP expectation      E[φ(u) φ(v)]         (:func:`nngp_expectation`),
* the derivative expectation E[φ'(u) φ'(v)]      (:func:`derivative_expectation`),
* the mean activation        E[φ(z)], z ~ N(m, v) (:func:`mean_activation`),

and from them the layer-wise NNGP kernels (:func:`nngp_kernel`, :func:`nngp_cross_kernel`,
:func:`deep_nngp_kernel`, :func:`deep_nngp_cross_kernel`) and the two-layer NTK
(:func:`two_layer_ntk`, :func:`relu_ntk`, :func:`relu_ntk_unit_sphere`).

Normalisation conventions (see docs/kernels.md):

* Network (seed 000 §"Network", Eq. 1 [MT]): z¹(x) = W¹x/√N0, z^ℓ = W^ℓ φ(z^{ℓ−1})/√N, weights
  i.i.d. N(0, σ_w²). The input kernel is K0(x, x') = x·x'/N0, and the pre-activation covariance
  of layer ℓ is σ_w² K_{ℓ−1}, with K_ℓ(x, x') = E[φ(z^ℓ(x)) φ(z^ℓ(x'))] the kernel *of the
  activations* (the readout variance σ_a² is *not* included; multiply by it for the GP prior
  covariance of the output, seed 000 §6.2 / spec note §6.2 [RECON]).
* NTK (standard/"NTK" parametrisation, Jacot et al. 2018): f(x) = (1/√N) Σ_i a_i φ(w_i·x/√d),
  a_i ~ N(0, σ_a²), w_i ~ N(0, σ_w² I_d), gradient with respect to both a and W:
  Θ(x, x') = E[φ(u)φ(v)] + σ_a² c12 E[φ'(u)φ'(v)], (u, v) ~ N(0, σ_w² C), C = input kernel
  with c12 = x·x'/d. For ReLU on unit-norm inputs (c11 = c22 = 1) and σ_w² = σ_a² = 1 this is
  exactly the kernel K(u) = u(1 − arccos(u)/π) + √(1 − u²)/(2π) of seed 003 App. D.

Closed forms: Williams (1997) for erf (arcsine kernel), Cho & Saul (2009) for ReLU
(arc-cosine kernel of degree 1 and 0). Callables fall back to Gauss–Hermite quadrature
(:mod:`richlazy.theory.kernels._gauss`).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np

from ..checks import MAX_DEPTH, broadcast_named, check_int
from ._gauss import (
    _as_float_array,
    _check_activation,
    _check_covariances,
    _check_n_nodes,
    _check_nonnegative,
    _mean_builtin,
    gaussian_expectation,
    gaussian_pair_expectation,
)

__all__ = [
    "deep_nngp_cross_kernel",
    "deep_nngp_kernel",
    "derivative_expectation",
    "mean_activation",
    "nngp_cross_kernel",
    "nngp_expectation",
    "nngp_kernel",
    "relu_ntk",
    "relu_ntk_unit_sphere",
    "two_layer_ntk",
]

PSD_RTOL = 1e-8  # a kernel matrix's eigenvalues must be >= -PSD_RTOL * max|eigenvalue|

# --------------------------------------------------------------------------------------------
# elementwise closed forms (inputs already validated and broadcast)
# --------------------------------------------------------------------------------------------


def _angle(c11, c12, c22):
    """Return (√(c11 c22 − c12²), θ) with θ = atan2(√(c11 c22 − c12²), c12) ∈ [0, π].

    θ is the angle between the two pre-activations, cos θ = c12/√(c11 c22). Using the
    determinant instead of ρ = c12/√(c11 c22) keeps exactly degenerate covariances
    (c12² = c11 c22) exactly degenerate and avoids arccos near ±1. Variances above 2^500 are
    scaled by a power of two first (exact), so the products do not overflow.
    """
    big = max(float(np.max(c11, initial=0.0)), float(np.max(c22, initial=0.0)))
    f = 2.0 ** -np.frexp(big)[1] if big > 2.0**500 else 1.0
    c11, c12, c22 = c11 * f, c12 * f, c22 * f
    sin_s = np.sqrt(np.maximum(c11 * c22 - c12 * c12, 0.0))
    return sin_s / f, np.arctan2(sin_s, c12)


def _arcsine(c11, c12, c22, a2):
    """E[erf(a u) erf(a v)] = (2/π) arcsin(2a²c12 / √((1+2a²c11)(1+2a²c22))) (Williams 1997)."""
    x, y = 1.0 + 2.0 * a2 * c11, 1.0 + 2.0 * a2 * c22
    big = max(float(np.max(x, initial=1.0)), float(np.max(y, initial=1.0)))
    den = np.sqrt(x * y) if big < 1e150 else np.sqrt(x) * np.sqrt(y)  # the product overflows
    arg = 2.0 * a2 * c12 / den
    return (2.0 / np.pi) * np.arcsin(np.clip(arg, -1.0, 1.0))


def _nngp_closed(c11, c12, c22, name):
    if name == "linear":
        return c12.copy()
    if name == "erf":
        return _arcsine(c11, c12, c22, 1.0)
    if name == "sigmoid_erf":
        # φ = ½ + ½ erf(a z), a² = π/4; cross terms vanish by oddness of erf.
        return 0.25 + 0.25 * _arcsine(c11, c12, c22, np.pi / 4.0)
    # relu: arc-cosine kernel of degree 1 (Cho & Saul 2009), written with
    # s sin θ = √(c11 c22 − c12²) and s cos θ = c12, which stays accurate at |ρ| → 1
    sin_s, theta = _angle(c11, c12, c22)
    return np.maximum(sin_s + (np.pi - theta) * c12, 0.0) / (2.0 * np.pi)


def _derivative_closed(c11, c12, c22, name):
    if name == "linear":
        return np.ones_like(c12)
    if name in ("erf", "sigmoid_erf"):
        # φ' = κ exp(−a² z²): E = κ² / √det(I + 2a² C)
        a2, kappa2 = (1.0, 4.0 / np.pi) if name == "erf" else (np.pi / 4.0, 0.25)
        det = 1.0 + 2.0 * a2 * (c11 + c22) + 4.0 * a2 * a2 * np.maximum(c11 * c22 - c12 * c12, 0.0)
        return kappa2 / np.sqrt(det)
    # relu: P(u > 0, v > 0) = (π − θ)/(2π), arc-cosine kernel of degree 0; 0 if a variance is 0
    _, theta = _angle(c11, c12, c22)
    return np.where((c11 > 0.0) & (c22 > 0.0), (np.pi - theta) / (2.0 * np.pi), 0.0)


# --------------------------------------------------------------------------------------------
# public elementwise expectations
# --------------------------------------------------------------------------------------------


def nngp_expectation(c11, c12, c22, activation, *, n_nodes: int = 64):
    """E[φ(u) φ(v)] for (u, v) ~ N(0, [[c11, c12], [c12, c22]]), broadcast over arrays.

    Closed forms [RECON: standard NNGP results, as used for the GP baseline of seed 000 §6.2
    of the spec note; the sigmoid and ReLU forms are printed there and were checked by Monte
    Carlo]:

    * linear:       c12
    * erf:          (2/π) arcsin( 2 c12 / √((1 + 2 c11)(1 + 2 c22)) )            (Williams 1997)
    * sigmoid_erf:  ¼ + (1/2π) arcsin( (π/2) c12 / √((1 + π c11/2)(1 + π c22/2)) )
    * relu:         √(c11 c22)/(2π) · (sin θ + (π − θ) cos θ),  cos θ = c12/√(c11 c22)
                    (arc-cosine kernel of degree 1, Cho & Saul 2009; 0 if c11 c22 = 0)

    arcsin/arccos arguments are clipped to [−1, 1]. ``activation`` may be a vectorised callable
    φ; then 2-D Gauss–Hermite quadrature with ``n_nodes`` per dimension is used.

    Raises ValueError if c11 < 0, c22 < 0, |c12| > √(c11 c22)(1 + 1e-10), or the shapes do not
    broadcast; ValueError/TypeError for an unknown or invalid activation.
    """
    activation = _check_activation(activation)
    n_nodes = check_int("n_nodes", n_nodes, minimum=1)
    a, b, c = _check_covariances(c11, c12, c22)
    if callable(activation):
        return gaussian_pair_expectation(activation, activation, a, b, c, n_nodes=n_nodes)
    return _nngp_closed(a, b, c, activation)[()]


def derivative_expectation(c11, c12, c22, activation):
    """E[φ'(u) φ'(v)] for (u, v) ~ N(0, [[c11, c12], [c12, c22]]), built-in activations only.

    * linear:       1
    * erf:          (4/π) / √((1 + 2c11)(1 + 2c22) − 4 c12²)
    * sigmoid_erf:  ¼ / √((1 + π c11/2)(1 + π c22/2) − π² c12²/4)
    * relu:         (π − θ)/(2π) = P(u > 0, v > 0),  cos θ = c12/√(c11 c22)
                    (arc-cosine kernel of degree 0, Cho & Saul 2009; with relu'(0) = 0 it is 0
                    when c11 = 0 or c22 = 0)

    These follow from E[exp(−½ zᵀAz)] = det(I + CA)^{−1/2} for the Gaussian-shaped φ' of the
    erf family [RECON, elementary]. This is the second ingredient of the NTK (Jacot et al.
    2018); a callable has no derivative here (TypeError).
    """
    activation = _check_activation(activation, allow_callable=False)
    a, b, c = _check_covariances(c11, c12, c22)
    return _derivative_closed(a, b, c, activation)[()]


def mean_activation(mean, var, activation, *, n_nodes: int = 64):
    """E[φ(z)] for z ~ N(mean, var), broadcast over arrays.

    Closed forms [RECON, elementary Gaussian integrals]:

    * linear:       m
    * erf:          erf( m / √(1 + 2v) )
    * sigmoid_erf:  ½[1 + erf( √π m / (2 √(1 + π v/2)) )]
    * relu:         m Φ(m/s) + s ϕ(m/s),  s = √v  (Φ, ϕ the standard normal cdf and pdf;
                    max(m, 0) when v = 0)

    Needed for the mean activations of seed 000 (mean-field single-neuron posteriors). A
    vectorised callable falls back to 1-D Gauss–Hermite quadrature with ``n_nodes`` nodes.
    """
    activation = _check_activation(activation)
    n_nodes = check_int("n_nodes", n_nodes, minimum=1)
    m = _as_float_array(mean, "mean")
    v = _as_float_array(var, "var")
    m, v = broadcast_named({"mean": m, "var": v})
    _check_nonnegative(v, "var")
    if callable(activation):
        return gaussian_expectation(activation, m, v, n_nodes=n_nodes)
    return _mean_builtin(m, v, activation)[()]


# --------------------------------------------------------------------------------------------
# kernel matrices
# --------------------------------------------------------------------------------------------


def _check_sigma(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {value!r}")
    value = float(value)
    if not np.isfinite(value) or value < 0.0:
        raise ValueError(f"{name} is a weight variance and must be finite and >= 0; got {value}")
    return value


def _check_psd_pairs(diag_a, cross, diag_b, name: str) -> None:
    """Every 2×2 minor [[Kaa, Kab], [Kab, Kbb]] must be PSD (the expectation needs no more)."""
    bound = np.sqrt(diag_a)[:, None] * np.sqrt(diag_b)[None, :]
    bad = np.abs(cross) > bound * (1.0 + 1e-10)
    if np.any(bad):
        i, j = (int(k) for k in np.argwhere(bad)[0])
        raise ValueError(
            f"{name} is not a valid covariance: |{name}[{i},{j}]| = {float(abs(cross[i, j]))!r} exceeds "
            f"sqrt(K_ii K_jj) = {float(bound[i, j])!r} (Cauchy–Schwarz); {name} must be positive "
            "semidefinite"
        )


def _check_kernel_matrix(K, name: str) -> np.ndarray:
    K = _as_float_array(K, name)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"{name} must be a square 2-D matrix; got shape {K.shape}")
    scale = float(np.max(np.abs(K))) if K.size else 0.0
    asym = float(np.max(np.abs(K - K.T))) if K.size else 0.0
    if asym > 1e-10 * max(scale, 1e-300):
        raise ValueError(
            f"{name} must be symmetric; got max|{name} - {name}.T| = {asym!r} "
            f"(relative {asym / scale:.3g} > 1e-10)"
        )
    d = np.diag(K)
    if np.any(d < 0.0):
        raise ValueError(f"{name} must have a non-negative diagonal; got min {float(d.min())!r}")
    _check_psd_pairs(d, K, d, name)
    lam = np.linalg.eigvalsh(K) if K.size else np.zeros(1)
    tol = PSD_RTOL * float(np.max(np.abs(lam)))
    if lam[0] < -tol:
        raise ValueError(
            f"{name} must be positive semi-definite (a kernel matrix); its smallest eigenvalue "
            f"{float(lam[0]):.6g} is below -{PSD_RTOL:g} * max|eigenvalue| = {-tol:.6g}"
        )
    return K


def nngp_kernel(K, activation, *, sigma_w2: float = 1.0, n_nodes: int = 64):
    """P×P NNGP kernel of the next layer: K'_ij = E[φ(u_i) φ(u_j)], u ~ N(0, σ_w² K).

    This is one step of the standard layer recursion (seed 000 §6.2 of the spec note
    [RECON, standard NNGP]): with K = K0 = XᵀX/N0 it gives K_1 = kernel of φ(z¹). Uses
    :func:`nngp_expectation` with c11 = σ_w² K_ii, c12 = σ_w² K_ij, c22 = σ_w² K_jj.

    K must be square, symmetric (relative 1e-10), satisfy |K_ij| <= √(K_ii K_jj) and be positive
    semi-definite: its smallest eigenvalue must be >= -1e-8 · max|eigenvalue| (``PSD_RTOL``).
    A result that overflows float64 (e.g. from K = 1e308·I with sigma_w2 > 1) raises ValueError.
    Returns a symmetric float64 (P, P) array (symmetrised for callable activations).
    """
    activation = _check_activation(activation)
    s = _check_sigma(sigma_w2, "sigma_w2")
    n_nodes = _check_n_nodes(n_nodes)
    K = _check_kernel_matrix(K, "K")
    return _nngp_matrix(np.diag(K) * s, K * s, np.diag(K) * s, activation, n_nodes, True, "K")


def _nngp_matrix(da, Kab, db, activation, n_nodes, symmetric, name):
    """The next-layer kernel; ValueError naming ``name`` (the input kernel) if it overflows."""
    c11, c22 = da[:, None], db[None, :]
    if callable(activation):
        out = gaussian_pair_expectation(activation, activation, c11, Kab, c22, n_nodes=n_nodes)
        out = 0.5 * (out + out.T) if symmetric else out
    else:
        c11, c12, c22 = np.broadcast_arrays(c11, Kab, c22)
        out = _nngp_closed(c11, c12, c22, activation)
    return _check_finite_kernel(out, name)


def _check_finite_kernel(out, name):
    out = np.asarray(out)
    if not np.all(np.isfinite(out)):
        raise ValueError(
            f"the kernel computed from {name} overflows (non-finite entries): {name} times sigma_w2 "
            f"is too large for float64 (max representable {np.finfo(float).max:.3g})"
        )
    return out


def _check_cross(k_diag_a, K_ab, k_diag_b, names=("k_diag_a", "K_ab", "k_diag_b")):
    da = _as_float_array(k_diag_a, names[0])
    Kab = _as_float_array(K_ab, names[1])
    db = _as_float_array(k_diag_b, names[2])
    if da.ndim != 1 or db.ndim != 1:
        raise ValueError(
            f"{names[0]} and {names[2]} must be 1-D; got shapes {da.shape} and {db.shape}"
        )
    if Kab.shape != (da.size, db.size):
        raise ValueError(
            f"{names[1]} must have shape (len({names[0]}), len({names[2]})) = "
            f"{(da.size, db.size)}; got {Kab.shape}"
        )
    _check_nonnegative(da, names[0])
    _check_nonnegative(db, names[2])
    _check_psd_pairs(da, Kab, db, names[1])
    return da, Kab, db


def nngp_cross_kernel(k_diag_a, K_ab, k_diag_b, activation, *, sigma_w2=1.0, n_nodes=64):
    """Cross (e.g. train–test) block of the next-layer NNGP kernel.

    K'_ab[i, j] = E[φ(u) φ(v)] with (u, v) ~ N(0, σ_w² [[a_i, K_ab[i,j]], [K_ab[i,j], b_j]]),
    where a = ``k_diag_a`` (length Pa) and b = ``k_diag_b`` (length Pb) are the kernel diagonals
    of the two point sets and ``K_ab`` (Pa, Pb) their cross kernel [RECON, standard NNGP].
    """
    activation = _check_activation(activation)
    s = _check_sigma(sigma_w2, "sigma_w2")
    n_nodes = _check_n_nodes(n_nodes)
    da, Kab, db = _check_cross(k_diag_a, K_ab, k_diag_b)
    return _nngp_matrix(da * s, Kab * s, db * s, activation, n_nodes, False, "K_ab")


def _check_depth_sigmas(depth, sigma_w2) -> list[float]:
    if isinstance(depth, bool) or not isinstance(depth, numbers.Integral) or depth < 1:
        raise ValueError(f"depth must be an integer >= 1; got {depth!r}")
    if depth > MAX_DEPTH:
        raise ValueError(f"depth must be <= {MAX_DEPTH} (one P x P kernel is computed and kept "
                         f"per layer); got {depth}")
    if isinstance(sigma_w2, Sequence | np.ndarray) and not isinstance(sigma_w2, str):
        sig = list(sigma_w2)
        if len(sig) != depth:
            raise ValueError(
                f"sigma_w2 must be a number or a sequence of length depth={depth}; "
                f"got length {len(sig)}"
            )
        return [_check_sigma(v, "sigma_w2") for v in sig]
    return [_check_sigma(sigma_w2, "sigma_w2")] * int(depth)


def deep_nngp_kernel(K0, activation, depth, *, sigma_w2=1.0, n_nodes: int = 64):
    """Layer-wise NNGP kernels [K_1, ..., K_L] of a depth-L network.

    K_ℓ = E[φ(z^ℓ) φ(z^ℓ)ᵀ] with z^ℓ ~ N(0, σ_ℓ² K_{ℓ−1}) and K_0 = ``K0`` (= XᵀX/N0 for the
    network of seed 000 Eq. 1) [RECON, standard NNGP recursion; spec note §6.2 "iterate with
    σ_ℓ²"]. ``sigma_w2`` is one number for all layers or a sequence (σ_1², ..., σ_L²).
    ``depth`` is at most ``MAX_DEPTH`` = 1000; ``K0`` must be a kernel matrix as for
    :func:`nngp_kernel`, and a kernel that overflows float64 raises ValueError naming ``K0``.
    Returns a list of L symmetric (P, P) arrays, the kernels of the activations φ(z^ℓ).
    """
    activation = _check_activation(activation)
    sig = _check_depth_sigmas(depth, sigma_w2)
    n_nodes = _check_n_nodes(n_nodes)
    K = _check_kernel_matrix(K0, "K0")
    out = []
    for s in sig:
        d = np.diag(K) * s
        K = _nngp_matrix(d, K * s, d, activation, n_nodes, True, "K0")
        out.append(K)
    return out


def deep_nngp_cross_kernel(
    k0_diag_a, K0_ab, k0_diag_b, activation, depth, *, sigma_w2=1.0, n_nodes: int = 64
):
    """Layer-wise cross blocks of the NNGP kernel between two point sets (e.g. train, test).

    Iterates the diagonals and the cross block together:
    a_ℓ = E[φ(u)²], u ~ N(0, σ_ℓ² a_{ℓ−1}) (same for b), and K_ab^ℓ from
    :func:`nngp_cross_kernel` on (a_{ℓ−1}, K_ab^{ℓ−1}, b_{ℓ−1}) [RECON, standard NNGP].
    Returns a list of L tuples (a_ℓ, K_ab^ℓ, b_ℓ): diagonal on set a (Pa,), cross block
    (Pa, Pb), diagonal on set b (Pb,). For a GP predictor at test points use K_ab^L as the
    train–test kernel and b_L as the test prior variances. ``depth`` is at most ``MAX_DEPTH``
    = 1000; a kernel that overflows float64 raises ValueError naming its input.
    """
    activation = _check_activation(activation)
    sig = _check_depth_sigmas(depth, sigma_w2)
    n_nodes = _check_n_nodes(n_nodes)
    da, Kab, db = _check_cross(k0_diag_a, K0_ab, k0_diag_b, ("k0_diag_a", "K0_ab", "k0_diag_b"))
    out = []
    for s in sig:
        da_s, db_s = da * s, db * s
        Kab = _nngp_matrix(da_s, Kab * s, db_s, activation, n_nodes, False, "K0_ab")
        da = _check_finite_kernel(_diag_next(da_s, activation, n_nodes), "k0_diag_a")
        db = _check_finite_kernel(_diag_next(db_s, activation, n_nodes), "k0_diag_b")
        out.append((da, Kab, db))
    return out


def _diag_next(d, activation, n_nodes):
    if callable(activation):
        return np.asarray(
            gaussian_pair_expectation(activation, activation, d, d, d, n_nodes=n_nodes)
        ).reshape(d.shape)
    return _nngp_closed(d, d, d, activation)


# --------------------------------------------------------------------------------------------
# NTK
# --------------------------------------------------------------------------------------------


def two_layer_ntk(c11, c12, c22, activation, *, sigma_w2: float = 1.0, sigma_a2: float = 1.0):
    """Infinite-width NTK of a bias-free two-layer network, with respect to both layers.

    Network (NTK parametrisation, Jacot et al. 2018): f(x) = (1/√N) Σ_i a_i φ(w_i·x/√d),
    a_i ~ N(0, σ_a²), w_i ~ N(0, σ_w² I_d). With the input kernel C (c11 = |x|²/d,
    c12 = x·x'/d, c22 = |x'|²/d) and (u, v) ~ N(0, σ_w² C):

        Θ(x, x') = E[φ(u) φ(v)]  +  σ_a² c12 E[φ'(u) φ'(v)]
                   (readout grads)   (first-layer grads)

    [RECON: standard two-layer NTK; 003 App. D uses it for ReLU.] Built-in activations only;
    closed forms from :func:`nngp_expectation` and :func:`derivative_expectation`.
    """
    activation = _check_activation(activation, allow_callable=False)
    sw = _check_sigma(sigma_w2, "sigma_w2")
    sa = _check_sigma(sigma_a2, "sigma_a2")
    a, b, c = _check_covariances(c11, c12, c22)
    nngp = _nngp_closed(sw * a, sw * b, sw * c, activation)
    dd = _derivative_closed(sw * a, sw * b, sw * c, activation)
    return (nngp + sa * b * dd)[()]


def relu_ntk(c11, c12, c22, *, sigma_w2: float = 1.0, sigma_a2: float = 1.0):
    """Two-layer bias-free ReLU NTK (see :func:`two_layer_ntk` for the network and conventions).

        Θ = σ_w² √(c11 c22)/(2π) (sin θ + (π − θ) cos θ) + σ_a² c12 (π − θ)/(2π),
        cos θ = c12/√(c11 c22).

    Arc-cosine kernels of degree 1 and 0 (Cho & Saul 2009) in the NTK of Jacot et al. (2018).
    For unit-norm inputs (c11 = c22 = 1) and σ_w² = σ_a² = 1 it equals
    :func:`relu_ntk_unit_sphere` (ρ = c12) exactly; for general norms and σ_w² = σ_a² = s,
    Θ = s √(c11 c22) K(ρ) by positive homogeneity.
    """
    return two_layer_ntk(c11, c12, c22, "relu", sigma_w2=sigma_w2, sigma_a2=sigma_a2)


def relu_ntk_unit_sphere(rho):
    """ReLU NTK on the unit sphere, K(ρ) = ρ(1 − arccos(ρ)/π) + √(1 − ρ²)/(2π).

    Seed 003, App. D (the display after "the analytic form of the NTK kernel K is known to
    be", attributed there to Cho & Saul 2009) [MT]; ρ = x·x' for unit-norm inputs. It is
    :func:`relu_ntk` with c11 = c22 = 1, c12 = ρ, σ_w² = σ_a² = 1: the degree-1 arc-cosine
    part (sin θ + (π − θ)ρ)/(2π) from the readout gradients plus ρ(π − θ)/(2π) from the
    first-layer gradients. (Seed 003 calls the expansion kernel "(1/m) Σ φφ"; the formula it
    prints is this full two-layer NTK — spec/PAPERS.md.) Range: K(−1) = 0, K(0) = 1/(2π),
    K(1) = 1. Requires |ρ| <= 1 (relative slack 1e-10; clipped).
    """
    r = _as_float_array(rho, "rho")
    if np.any(np.abs(r) > 1.0 + 1e-10):
        bad = r[np.abs(r) > 1.0 + 1e-10].flat[0]
        raise ValueError(f"rho is a cosine and must satisfy |rho| <= 1; got rho={float(bad)!r}")
    r = np.clip(r, -1.0, 1.0)
    return (r * (1.0 - np.arccos(r) / np.pi) + np.sqrt(1.0 - r * r) / (2.0 * np.pi))[()]
