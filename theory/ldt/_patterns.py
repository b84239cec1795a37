"""Variational pattern energies and feature-propagation rules.

Paper: Rubin, Davidovich, Ringel, *Mitigating the Curse of Detail* (seed 002), Sec. 4-5 and
App. C-E; spec note ``curse_of_detail.md`` section 4. All formulas are reconstructions [RECON]
of stripped equations unless tagged otherwise; [CHECKED] marks those we verified numerically
(``docs/ldt.md``).

Variational energy, eq. (10)/(61), with the weakly fluctuating (mean) kernel of eq. (58):

    E_q(alpha) = sum_{l,i} Delta_{l,i} + a_y
    Delta      = 1/2 [ <mu, K^{-1}, mu> + Tr(K^{-1} Q) - Tr 1 ]        (68)  (Gaussian q = N(mu, Q))
    a_y        = alpha^2 <y,y>^2 / (2 <y, K_{L-1}, y>)                 (cost of alignment alpha)

Patterns (eqs. 11-12, App. E): GP (Delta = 0), GFL (Q = K + D lambda_* Phi Phi^T, Delta = D/2),
specialization (mean mu Phi, Delta = mu^2 <Phi,K^{-1},Phi>/2), M-specialization, magnetization
(all N neurons with small mu, beta = N mu^2) and sqrt(M)-specialization (O(1) neurons of
magnitude mu, for homogeneous activations).  Feature propagation: Claim (i) (Sherman-Morrison
spike, eqs. 71-72) and Claim (ii) (Price/Mehler expansion, eqs. 73-75).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from .._results import DeprecatedDictAccess
from ..checks import (
    as_float_array,
    as_float_matrix,
    as_psd_matrix,
    as_rng,
    check_alloc,
    check_int,
    check_pos_float,
    check_symmetric,
)
from ._erf_model import ErfModel, erf_derivative_gaussian_mean

__all__ = [
    "alignment_cost",
    "gaussian_pattern_cost",
    "gfl_cost",
    "gfl_log_partition_ratio",
    "specialization_cost",
    "gp_energy",
    "gfl_energy",
    "m_specialization_energy",
    "magnetization_energy",
    "sqrt_m_specialization_energy",
    "PatternEnergies",
    "two_layer_erf_pattern_energies",
    "rkhs_norm",
    "spiked_rkhs_norm",
    "sherman_morrison_quadratic_form",
    "mehler_coefficients",
    "mehler_kernel",
    "FeaturePropagationRKHS",
    "feature_propagation_rkhs",
]


# --------------------------------------------------------------------------------------------
# building blocks of eq. (10)
# --------------------------------------------------------------------------------------------
def alignment_cost(alpha, yKy, *, y_norm2: float = 1.0) -> np.ndarray:
    """``a_y = alpha^2 <y,y>^2 / (2 <y, K, y>)`` — cost of forcing alignment alpha when the
    last-layer kernel is K (eq. 10/61; readout integrated out, eq. 45) [RECON]. ``alpha`` (an
    alignment) must be ``>= 0`` elementwise.

    Equals -log of the Gaussian density of A_f = alpha when A_f ~ N(0, <y,K,y>/<y,y>^2).
    """
    a = _nonneg("alpha", alpha)
    v = as_float_array("yKy", yKy)
    if np.any(v <= 0):
        raise ValueError("yKy must be > 0 (<y, K, y> of a positive kernel)")
    y_norm2 = check_pos_float("y_norm2", y_norm2)
    return a * a * y_norm2**2 / (2.0 * v)


def gaussian_pattern_cost(mu, Q, K) -> float:
    """``Delta = 1/2 [mu^T K^{-1} mu + Tr(K^{-1} Q) - n]`` for a Gaussian trial law N(mu, Q)
    against the GP law N(0, K) (eq. 68; weight-space form eq. 77) [RECON].

    Functions are represented by their values on n points (or by weights); the quadratic forms
    are then independent of the point weights, ``<f, K^{-1}, f> = f^T K^{-1} f``.  This is the
    "energy" part of KL(q || p); the log-det part is the subleading partition-function ratio.
    ``K`` must be symmetric positive definite and ``Q`` symmetric positive semi-definite (a
    covariance; :func:`richlazy.theory.checks.as_psd_matrix`).
    """
    K = check_symmetric("K", as_float_matrix("K", K), what="a kernel matrix")
    n = K.shape[0]
    try:
        L = np.linalg.cholesky(K)
    except np.linalg.LinAlgError:
        raise ValueError("K must be symmetric positive definite") from None
    Q = as_psd_matrix("Q", Q)
    if Q.shape != K.shape:
        raise ValueError(f"Q must have the shape of K {K.shape}, got {Q.shape}")
    mu = as_float_array("mu", mu, ndim=1)
    if mu.shape[0] != n:
        raise ValueError(f"mu must have length {n}, got {mu.shape[0]}")
    z = np.linalg.solve(L, mu)
    A = np.linalg.solve(L, Q)
    tr = np.trace(np.linalg.solve(L, A.T))
    return 0.5 * (float(z @ z) + float(tr) - n)


def gfl_cost(D) -> np.ndarray:
    """GFL cost per neuron ``Delta = D/2`` for ``Q = K + D lambda_* Phi Phi^T`` (eigenvalue
    lambda_* -> (1 + D) lambda_*; eqs. 11, 68; App. C.4 case 2) [RECON, CHECKED with
    :func:`gaussian_pattern_cost`]."""
    D = as_float_array("D", D)
    if np.any(D < 0):
        raise ValueError("D must be >= 0 (amplification of an eigenvalue)")
    return 0.5 * D


def gfl_log_partition_ratio(D) -> np.ndarray:
    """Subleading log-ratio of partition functions for GFL, ``1/2 log(1 + D)`` (App. C.4)."""
    D = as_float_array("D", D)
    if np.any(D < 0):
        raise ValueError("D must be >= 0 (amplification of an eigenvalue)")
    return 0.5 * np.log1p(D)


def specialization_cost(mu, rkhs_norm_value) -> np.ndarray:
    """Cost of one specialized neuron with mean ``mu Phi``: ``mu^2 <Phi, K^{-1}, Phi> / 2``
    (eqs. 12, 68; App. C.4 case 1) [RECON]. ``mu`` (a magnitude) must be ``>= 0`` elementwise."""
    mu = _nonneg("mu", mu)
    n = as_float_array("rkhs_norm_value", rkhs_norm_value)
    if np.any(n <= 0):
        raise ValueError("rkhs_norm_value must be > 0")
    return 0.5 * mu * mu * n


# --------------------------------------------------------------------------------------------
# pattern energies from ingredients (scaling forms with the O(1) factors of eq. 10 kept)
# --------------------------------------------------------------------------------------------
def _pos(name, v):
    arr = as_float_array(name, v)
    if np.any(arr <= 0):
        raise ValueError(f"{name} must be > 0")
    return arr


def _nonneg(name, v):
    arr = as_float_array(name, v)
    if np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0 elementwise, got {float(np.min(arr))!r}")
    return arr


def gp_energy(alpha, lam_target) -> np.ndarray:
    """GP / lazy pattern: all Delta = 0, ``E = a_y = alpha^2 / (2 lambda_y)`` with
    ``lambda_y = <y, K_GP, y>`` (App. E.1.1 (1)) [RECON]."""
    return alignment_cost(alpha, _pos("lam_target", lam_target))


def gfl_energy(D, *, n_neurons, lam_target, degree: int, alpha=1.0) -> np.ndarray:
    """GFL of all ``n_neurons`` on the linear feature with amplification D (App. E.1.1 (2)):

        E = n_neurons D/2 + alpha^2 / (2 lambda_y (1 + D)^degree)

    using Claim (ii): the degree-m component of the next kernel is amplified by (1+D)^m [RECON].
    """
    D = as_float_array("D", D)
    if np.any(D < 0):
        raise ValueError("D must be >= 0 (amplification of an eigenvalue)")
    n = _pos("n_neurons", n_neurons)
    degree = check_int("degree", degree, minimum=1)
    lam = _pos("lam_target", lam_target)
    return n * gfl_cost(D) + alignment_cost(alpha, lam * (1.0 + D) ** degree)


def m_specialization_energy(
    M, *, n_neurons, rkhs_norm_value, overlap2, lam_target=0.0, mu=1.0, alpha=1.0
) -> np.ndarray:
    """M of ``n_neurons`` specialize with mean ``mu Phi`` (App. E.1.1 (3), Claim (i)):

        E = M mu^2 <Phi,K^{-1},Phi>/2 + alpha^2 / (2 [lambda_y + (M/N) <psi, y>^2])

    where the specialists add the spike ``(M/N) psi psi^T`` (psi = sigma(mu Phi)) to the next
    kernel, ``overlap2 = <psi, y>^2`` [RECON]."""
    M = _pos("M", M)
    N = _pos("n_neurons", n_neurons)
    cost = M * specialization_cost(mu, rkhs_norm_value)
    ov = _pos("overlap2", overlap2)
    lam = as_float_array("lam_target", lam_target)
    if np.any(lam < 0):
        raise ValueError("lam_target must be >= 0")
    return cost + alignment_cost(alpha, lam + (M / N) * ov)


def magnetization_energy(
    beta, *, n_neurons, rkhs_norm_value, overlap2, lam_target=0.0, alpha=1.0
) -> np.ndarray:
    """All N neurons specialize with a small common mean, ``beta = sum_i mu_i^2 = N mu^2``
    (Corollary 2 of Claim (i)):

        E = beta <Phi,K^{-1},Phi>/2 + alpha^2 / (2 [lambda_y + (beta/N) <Phi', y>^2])  [RECON].
    """
    beta = _pos("beta", beta)
    N = _pos("n_neurons", n_neurons)
    n = _pos("rkhs_norm_value", rkhs_norm_value)
    ov = _pos("overlap2", overlap2)
    lam = as_float_array("lam_target", lam_target)
    return 0.5 * beta * n + alignment_cost(alpha, lam + beta / N * ov)


def sqrt_m_specialization_energy(
    mu, *, n_neurons, rkhs_norm_value, overlap2, lam_target=0.0, alpha=1.0
) -> np.ndarray:
    """O(1) neuron with large magnitude mu (homogeneous activations such as ReLU; App. E.2 (4)):

    E = mu^2 <Phi,K^{-1},Phi>/2 + alpha^2 / (2 [lambda_y + (mu^2/N) <Phi', y>^2])  [RECON].
    """
    mu = _pos("mu", mu)
    N = _pos("n_neurons", n_neurons)
    n = _pos("rkhs_norm_value", rkhs_norm_value)
    ov = _pos("overlap2", overlap2)
    lam = as_float_array("lam_target", lam_target)
    return 0.5 * mu * mu * n + alignment_cost(alpha, lam + mu * mu / N * ov)


@dataclass(frozen=True)
class PatternEnergies(DeprecatedDictAccess):
    """Minimised pattern energies of the two-layer erf network
    (:func:`two_layer_erf_pattern_energies`), each ``(energy, params)`` with ``params`` the
    minimiser. The old dict keys ``res["GP"]``, ``res["GFL"]``, ``res["M-specialization"]`` still
    work for one release, with a DeprecationWarning.

    gp : (float, dict)                 GP energy alpha^2/(2 V0); no parameters (``{}``).
    gfl : (float, dict)                GFL energy minimised over D; params ``{"D": D*}``.
    m_specialization : (float, dict)   M-specialization energy minimised over (M, mu) (M
                                       continuous); params ``{"M": M*, "mu": mu*}``.
    """

    gp: tuple[float, dict]
    gfl: tuple[float, dict]
    m_specialization: tuple[float, dict]

    def _old_keys(self) -> dict[str, str]:
        return {"GP": "gp", "GFL": "gfl", "M-specialization": "m_specialization"}


def two_layer_erf_pattern_energies(
    alpha, d: int, N: int, *, sigma_w2: float = 1.0, sigma_a2: float = 1.0, chi=1.0, degree: int = 3
) -> PatternEnergies:
    """Minimised pattern energies of the two-layer erf network, evaluated with the exact
    ingredients of the LDT model (spec 3.2 and 5.1), for comparison with the exact LDT [RECON]:

    * GP:     E = alpha^2 / (2 V0),  V0 = (sigma_a^2/chi) E_prior[g]
    * GFL:    Sigma_w = (sigma_w^2/d)(I + D w* w*^T):  E(D) = N D/2 + alpha^2/(2 V(D)),
              V(D) = (sigma_a^2/chi) E_{w_par ~ N(0, sigma_w^2 (1+D)/d)}[g]
    * M-spec: M neurons at w_par = mu (weight-space cost d mu^2/(2 sigma_w^2) each, eq. 77):
              E(M, mu) = M d mu^2/(2 sigma_w^2) + alpha^2/(2 [V0 + (sigma_a^2/chi)(M/N) g(mu)])

    Each is minimised numerically over its parameters (M continuous).  Returns
    :class:`PatternEnergies`: ``(energy, params)`` per pattern (fields ``gp``, ``gfl``,
    ``m_specialization``).
    """
    a = float(check_pos_float("alpha", alpha))
    pr = ErfModel(d, N, sigma_w2=sigma_w2, sigma_a2=sigma_a2, chi=chi, degree=degree)
    scale = pr.scale
    m = pr.degree
    c2 = pr.c2
    V0 = scale * pr.moments(0.0)[1]
    # E_{w ~ N(0, s2)}[g] with the perpendicular part frozen
    x, wx = np.polynomial.hermite_e.hermegauss(200)
    wx = wx / math.sqrt(2 * math.pi)

    def V_of(s2):
        w = math.sqrt(s2) * x
        return scale * float(np.sum(wx * c2 * w ** (2 * m) / (pr.b + 2 * w * w) ** m))

    out = {"GP": (a * a / (2 * V0), {})}

    def e_gfl(logD):
        D = math.exp(logD)
        return pr.N * D / 2 + a * a / (2 * V_of(pr.sigma_w2 * (1 + D) / pr.d))

    res = optimize.minimize_scalar(
        e_gfl, bounds=(-20, 20), method="bounded", options={"xatol": 1e-10}
    )
    out["GFL"] = (float(res.fun), {"D": math.exp(res.x)})

    def g_of(mu):
        return c2 * mu ** (2 * m) / (pr.b + 2 * mu * mu) ** m

    def e_spec(p):
        M, mu = math.exp(p[0]), math.exp(p[1])
        return M * pr.d * mu * mu / (2 * pr.sigma_w2) + a * a / (
            2 * (V0 + scale * M / pr.N * g_of(mu))
        )

    best = None
    for mu0 in (0.5, 1.0, 2.0):
        for M0 in (0.1, 1.0, 10.0, 100.0):
            r = optimize.minimize(
                e_spec,
                [math.log(M0), math.log(mu0)],
                method="Nelder-Mead",
                options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 4000},
            )
            if best is None or r.fun < best.fun:
                best = r
    out["M-specialization"] = (
        float(best.fun),
        {"M": math.exp(best.x[0]), "mu": math.exp(best.x[1])},
    )
    return PatternEnergies(gp=out["GP"], gfl=out["GFL"], m_specialization=out["M-specialization"])


# --------------------------------------------------------------------------------------------
# Claim (i): Sherman-Morrison spike
# --------------------------------------------------------------------------------------------
def rkhs_norm(K, f, *, rcond: float | None = None) -> float:
    """``<f, K^{-1}, f> = f^T K^{+} f`` on a discrete measure (values at n points; independent of
    the point weights).  Eigenvalues below ``rcond * max`` are discarded (pseudo-inverse), as in
    the App. C.5 protocol; ``rcond=None`` uses ``n * eps``. ``K`` must be a symmetric positive
    semi-definite kernel matrix (ValueError with its smallest eigenvalue otherwise)."""
    K = as_psd_matrix("K", K)
    n = K.shape[0]
    f = as_float_array("f", f, ndim=1)
    if f.shape[0] != n:
        raise ValueError(f"f must have length {n}, got {f.shape[0]}")
    if rcond is None:
        rcond = n * np.finfo(float).eps
    rcond = check_pos_float("rcond", rcond)
    lam, U = np.linalg.eigh(K)
    keep = lam > rcond * max(lam.max(), 0.0)
    c = U[:, keep].T @ f
    return float(np.sum(c * c / lam[keep]))


def spiked_rkhs_norm(base_norm, c) -> np.ndarray:
    """Claim (i), eq. (72): ``<psi, (K0 + c psi psi^T)^{-1}, psi> = n0 / (1 + c n0)`` with
    ``n0 = <psi, K0^{-1}, psi>``; tends to ``1/c`` when ``c n0 >> 1`` [RECON, CHECKED].
    Corollary 1: M of N neurons specialized => c = M/N => norm ~ N/M."""
    n0 = as_float_array("base_norm", base_norm)
    if np.any(n0 <= 0):
        raise ValueError("base_norm must be > 0")
    c = as_float_array("c", c)
    if np.any(c < 0):
        raise ValueError("c must be >= 0 (spike strength)")
    return n0 / (1.0 + c * n0)


def sherman_morrison_quadratic_form(K0, psi, c, phi=None) -> float:
    """``<phi, (K0 + c psi psi^T)^{-1}, phi>`` by Sherman-Morrison (eq. 71) with one Cholesky
    factorisation of K0:
    ``phi^T K0^{-1} phi - c (phi^T K0^{-1} psi)^2 / (1 + c psi^T K0^{-1} psi)``.
    ``phi`` defaults to ``psi``."""
    K0 = check_symmetric("K0", as_float_matrix("K0", K0), what="a kernel matrix")
    n = K0.shape[0]
    psi = as_float_array("psi", psi, ndim=1)
    if psi.shape[0] != n:
        raise ValueError(f"psi must have length {n}, got {psi.shape[0]}")
    phi = psi if phi is None else as_float_array("phi", phi, ndim=1)
    if phi.shape[0] != n:
        raise ValueError(f"phi must have length {n}, got {phi.shape[0]}")
    c = float(as_float_array("c", c, ndim=0))
    if c < 0:
        raise ValueError(f"c must be >= 0 (spike strength), got {c}")
    try:
        L = np.linalg.cholesky(K0)
    except np.linalg.LinAlgError:
        raise ValueError("K0 must be symmetric positive definite") from None
    zp = np.linalg.solve(L, psi)
    zf = np.linalg.solve(L, phi)
    return float(zf @ zf - c * (zf @ zp) ** 2 / (1.0 + c * (zp @ zp)))


# --------------------------------------------------------------------------------------------
# Claim (ii): Price / Mehler coefficients
# --------------------------------------------------------------------------------------------
def _relu_derivative_means(q: float, n_max: int) -> np.ndarray:
    """E_{u~N(0,q)}[ReLU^{(n)}(u)], n = 0..n_max (delta-function derivatives for n >= 2)."""
    out = np.zeros(n_max + 1)
    out[0] = math.sqrt(q / (2 * math.pi))
    if n_max >= 1:
        out[1] = 0.5
    for n in range(2, n_max + 1):
        j = n - 2  # E[delta^{(j)}(u)] = (2 pi q)^{-1/2} q^{-j/2} He_j(0)
        if j % 2 == 1:
            continue
        he0 = (-1) ** (j // 2) * special.factorial2(j - 1, exact=True) if j > 0 else 1
        out[n] = he0 / math.sqrt(2 * math.pi * q) * q ** (-j / 2)
    return out


_MAX_MEHLER_ORDER = 170  # largest n with a finite float64 n!


def mehler_coefficients(activation, q, n_max: int, *, n_nodes: int = 200) -> np.ndarray:
    """Coefficients b_n of ``K(x,x') = sum_n b_n Q(x,x')^n`` for jointly Gaussian pre-activations
    with equal variances ``Q(x,x) = Q(x',x') = q`` (Price/Mehler expansion, eq. 73) [RECON,
    CHECKED against the arcsine / arc-cosine closed forms]:

        b_n = (E_{u~N(0,q)} sigma^{(n)}(u))^2 / n!

    ``activation``: ``"erf"`` and ``"relu"`` use closed forms; a callable uses Gauss-Hermite with
    ``E sigma^{(n)}(u) = q^{-n/2} E[sigma(u) He_n(u/sqrt q)]`` (Stein).  Returns shape
    ``(n_max + 1,)``. ``n_max`` must be <= 170 (n! is a float64); for a callable, an ``n_nodes``
    whose Gauss-Hermite companion matrix exceeds 16 GiB raises ValueError.
    """
    q = check_pos_float("q", q)
    n_max = check_int("n_max", n_max, minimum=0)
    if n_max > _MAX_MEHLER_ORDER:
        raise ValueError(f"n_max must be <= {_MAX_MEHLER_ORDER} (b_n divides by n!, which must be a "
                         f"finite float64), got {n_max}")
    n_nodes = check_int("n_nodes", n_nodes, minimum=1)
    if activation == "erf":
        m = np.array([float(erf_derivative_gaussian_mean(n, q)) for n in range(n_max + 1)])
    elif activation == "relu":
        m = _relu_derivative_means(q, n_max)
    elif callable(activation):
        n_nodes = check_int("n_nodes", n_nodes, minimum=n_max + 2)
        check_alloc(f"n_nodes={n_nodes}", 3 * n_nodes * n_nodes,
                    what="the Gauss-Hermite companion matrix and its eigenvectors")
        z, wz = np.polynomial.hermite_e.hermegauss(n_nodes)
        wz = wz / math.sqrt(2 * math.pi)
        s = np.asarray(activation(math.sqrt(q) * z), dtype=float)
        m = np.empty(n_max + 1)
        for n in range(n_max + 1):
            he = np.polynomial.hermite_e.hermeval(z, [0] * n + [1])
            m[n] = q ** (-n / 2) * float(np.sum(wz * s * he))
    else:
        raise ValueError(f"activation must be 'erf', 'relu' or a callable, got {activation!r}")
    fact = np.array([math.factorial(n) for n in range(n_max + 1)], dtype=float)
    return m * m / fact


def mehler_kernel(Q, q, activation, n_max: int) -> np.ndarray:
    """Truncated expansion ``sum_{n<=n_max} b_n Q^n`` (eq. 73) at covariances ``Q`` (|Q| <= q);
    ``n_max <= 170`` as in :func:`mehler_coefficients`."""
    Q = as_float_array("Q", Q)
    q = check_pos_float("q", q)
    if np.any(np.abs(Q) > q * (1 + 1e-12)):
        raise ValueError("Q must satisfy |Q| <= q (a covariance with equal variances q)")
    b = mehler_coefficients(activation, q, n_max)
    return np.polynomial.polynomial.polyval(Q, b)


# --------------------------------------------------------------------------------------------
# Claim (ii): the numerical protocol of App. C.5 (Figs. 5-6)
# --------------------------------------------------------------------------------------------
def _relu(x):
    return np.maximum(x, 0.0)


@dataclass(frozen=True)
class FeaturePropagationRKHS(DeprecatedDictAccess):
    """Claim (ii) protocol of App. C.5 (:func:`feature_propagation_rkhs`); ``res["rkhs_norm"]``
    etc. still work for one release, with a DeprecationWarning.

    D : (n_D,)              the GFL amplifications of the second layer.
    rkhs_norm : (n_D,)      RKHS norm of phi_*^2 (mean removed) under K2 at each D.
    top_eigenvalue : float  lambda_1 of K1/n (the first-layer kernel whose top eigenvector is phi_*).
    """

    D: np.ndarray
    rkhs_norm: np.ndarray
    top_eigenvalue: float


def feature_propagation_rkhs(
    D_values,
    *,
    d: int,
    N: int,
    n: int,
    seed: int | np.random.Generator,
    activation: Callable[[np.ndarray], np.ndarray] | None = None,
    rcond: float = 1e-10,
) -> FeaturePropagationRKHS:
    """Claim (ii) check of App. C.5 (Fig. 5) [PROSE protocol; sizes are free parameters]:

    1. Gaussian data X (n x d); first layer of width N with ReLU; empirical NNGP kernel K1.
    2. phi_* = top eigenvector of K1 (normalised to mean square 1 on the sample).
    3. best readout v with H1 v ~ phi_* (least squares), v_hat = v/|v|.
    4. second-layer rows ~ N(0, (1/N)(I + D v_hat v_hat^T)) (GFL with amplification D), ReLU,
       empirical kernel K2 (width N).
    5. RKHS norm of phi_*^2 (mean removed) under K2 with null eigenvalues discarded.

    Claim (ii) predicts ``norm ∝ D^{-2}`` for large D.  ``seed`` is a non-negative int or a
    ``numpy.random.Generator`` (advanced in place). Sizes whose arrays (about
    ``8 (n d + N d + 3 n N + 3 N^2 + 2 n^2)`` bytes) exceed 16 GiB raise ValueError.  Returns
    :class:`FeaturePropagationRKHS` (``D``, ``rkhs_norm`` per D, ``top_eigenvalue`` lambda_1 of
    K1/n).
    """
    D = as_float_array("D_values", D_values, ndim=1)
    if D.size == 0 or np.any(D < 0):
        raise ValueError("D_values must be a non-empty 1-D array of amplifications >= 0")
    d = check_int("d", d, minimum=1)
    N = check_int("N", N, minimum=1)
    n = check_int("n", n, minimum=2)
    check_alloc(f"d={d}, N={N}, n={n}", n * d + N * d + 3 * n * N + 3 * N * N + 2 * n * n,
                what="the inputs, the two layers and their n x n kernels")
    act = _relu if activation is None else activation
    if not callable(act):
        raise TypeError(f"activation must be callable or None, got {type(act).__name__}")
    rng = as_rng(seed)
    X = rng.standard_normal((n, d))
    W1 = rng.standard_normal((N, d)) / math.sqrt(d)
    H1 = act(X @ W1.T)
    K1 = H1 @ H1.T / N
    lam, U = np.linalg.eigh(K1)
    phi = U[:, -1] * math.sqrt(n)
    v, *_ = np.linalg.lstsq(H1, phi, rcond=None)
    v_hat = v / np.linalg.norm(v)
    target = phi * phi
    target = target - target.mean()
    Z = rng.standard_normal((N, N)) / math.sqrt(N)
    proj = Z @ v_hat
    norms = np.empty(D.size)
    for i, Di in enumerate(D):
        # rows with covariance (1/N)(I + D v v^T): add (sqrt(1+D) - 1) along v_hat
        W2 = Z + np.outer(proj, v_hat) * (math.sqrt(1.0 + Di) - 1.0)
        H2 = act(H1 @ W2.T)
        K2 = H2 @ H2.T / N
        norms[i] = rkhs_norm(K2, target, rcond=rcond)
    return FeaturePropagationRKHS(D=D, rkhs_norm=norms, top_eigenvalue=float(lam[-1] / n))
