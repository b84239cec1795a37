"""Tilted Gaussian integrals: the single-neuron partition function of seed 000.

Source: A. van Meegen & H. Sompolinsky, *Coding schemes in neural networks learning
classification tasks* (seed 000); our notes ``spec/coding_schemes.md`` §4.3 (sigmoid toy) and
§5.2 (ReLU toy). For orthonormal toy inputs the conditional preactivation posterior of a
feature-layer neuron factorises over inputs; on an input of class c it is the *tilted* density

    P(z | h) = N(z | 0, 1) exp(h phi(z) - psi(h)),      h = t_c . a                   [RECON]

with the cumulant generating function of phi(z), z ~ N(0, 1),

    psi(h)   = log E_z exp(h phi(z)),
    psi'(h)  = <phi>_h          (mean activation of a neuron with readout a on class c),
    psi''(h) = Var_h(phi)       (its fluctuation, which does *not* vanish at large N, P [MT]).

psi is convex and psi(0) = 0. Evaluation:

* ``sigmoid_erf`` (phi = [1 + erf(sqrt(pi) z / 2)] / 2) and ``erf``: Gauss-Hermite quadrature
  (probabilists' rule, ``n_nodes`` nodes) in log-sum-exp form, as in the notes §4.3 step 1, but
  *adaptive*: the rule is centred on the saddle point z*(h) of -z^2/2 + h phi(z) and scaled to
  its Laplace width. The plain rule centred at 0 loses accuracy for |h| >~ 10 (errors 1e-11 at
  h = 10, 1e-6 at h = 60 with 121 nodes) because the tilted mass sits in a narrow peak at
  |z| ~ 2-3; the adaptive rule keeps ~1e-13 for |h| <= 100 (tests: scipy quad and mpmath).
* ``relu``: closed form of the notes §5.2, ``psi_R(h) = log[1/2 + e^{h^2/2} Phi_N(h)]`` with
  ``M(h) = psi_R'(h) = e^{h^2/2}(h Phi_N(h) + phi_N(h)) / (1/2 + e^{h^2/2} Phi_N(h))``
  (Phi_N, phi_N the standard normal cdf and pdf). psi_R is finite for **every real h** and
  grows like h^2/2 for h -> +inf (the tilted density becomes N(z | h, 1) on z > 0). The
  divergence that the ReLU theory is about is not in psi_R but in the *readout* integral
  ``int da exp(P[-|a|^2/2 + sum_c rho_c psi_R(t_c . a)])``, which exists only while
  ``sum_c rho_c relu(t_c . a)^2 < |a|^2`` in every direction; the marginal directions are the
  outliers (notes §5.2, see :mod:`richlazy.theory.coding.relu._toy`). Written with stable forms: for
  h <= 0 through the repeated Gaussian-tail integrals J_k(x) = int_0^inf z^k e^{-z^2/2 - x z} dz
  (x = -h; recurrence for x <= 10, asymptotic series beyond), for h > 0 through
  ``r = e^{-h^2/2} / (Phi_N(h) + e^{-h^2/2}/2)``.
* ``linear``: psi = h^2/2 exactly (the tilted density is N(z | h, 1)).

Also the fluctuation-free ("saddle") version used when z|a fluctuations are neglected (notes
§4.4, the MT's MNIST approximation): ``psi_0(h) = max_z [-z^2/2 + h phi(z)]`` with maximiser
z*(h) solving ``z = h phi'(z)``, ``psi_0' = phi(z*)``, ``psi_0'' = phi'(z*)^2 / (1 - h phi''(z*))``.

Kernels are numba-compiled (``cache=True``) and take arrays/scalars only; the public wrappers
validate and reshape. :func:`tilted_moments_quad` is a plain ``scipy.integrate.quad`` reference.
"""

from __future__ import annotations

import math
import warnings
from functools import lru_cache

import numba
import numpy as np
from scipy import integrate, special

from ..checks import as_float_array, broadcast_named
from ._gauss import _check_n_nodes

__all__ = [
    "TILTED_ACTIVATIONS",
    "tilted_moments",
    "tilted_density",
    "tilted_moments_quad",
    "saddle_moments",
]

#: Activations for which the tilted integrals are implemented.
TILTED_ACTIVATIONS: tuple[str, ...] = ("sigmoid_erf", "erf", "relu", "linear")

_SQRT_2PI = math.sqrt(2.0 * math.pi)
_C = 1.0 / _SQRT_2PI  # standard normal density at 0
_X_ASYMPT = 10.0  # J_k(x): recurrence below, asymptotic series above


# --------------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------------


def _check_tilted_activation(activation) -> str:
    if not isinstance(activation, str):
        raise TypeError(
            f"activation must be a str, one of {', '.join(TILTED_ACTIVATIONS)}; got "
            f"{type(activation).__name__}"
        )
    if activation not in TILTED_ACTIVATIONS:
        raise ValueError(
            f"activation must be one of {', '.join(TILTED_ACTIVATIONS)}, got {activation!r}"
        )
    return activation


# --------------------------------------------------------------------------------------------
# numba kernels
# --------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def _saddle_point(hi, kind):
    """z* solving z = h phi'(z) (unique); returns (z*, phi'(z*), a2).

    kind 0: sigmoid_erf (phi' = k0 exp(-a2 z^2), k0 = 1/2, a2 = pi/4),
    kind 1: erf (k0 = 2/sqrt(pi), a2 = 1). phi' is even, so z* has the sign of h and
    u = log|z*| solves G(u) = u + a2 e^{2u} - log(|h| k0) = 0. G is increasing and convex, so
    Newton converges monotonically after at most one overshoot (no bracketing needed).
    """
    if kind == 0:
        k0 = 0.5
        a2 = math.pi / 4.0
    else:
        k0 = 2.0 / math.sqrt(math.pi)
        a2 = 1.0
    if hi == 0.0:
        return 0.0, k0, a2
    L = math.log(abs(hi) * k0)
    u = L if L < 0.0 else 0.5 * math.log(L / a2 + 1.0)
    for _ in range(100):
        e2 = math.exp(2.0 * u)
        du = (u + a2 * e2 - L) / (1.0 + 2.0 * a2 * e2)
        u -= du
        if abs(du) <= 1e-15 * (1.0 + abs(u)):
            break
    z = math.exp(u) if hi > 0.0 else -math.exp(u)
    return z, k0 * math.exp(-a2 * z * z), a2


@numba.njit(cache=True)
def _phi_scalar(z, kind):
    if kind == 0:
        return 0.5 * math.erfc(-0.5 * math.sqrt(math.pi) * z)
    return math.erf(z)


@numba.njit(cache=True)
def _agh_moments_kernel(h, kind, x, logw, psi, d1, d2):
    """psi, psi', psi'' at each h[i] by *adaptive* Gauss-Hermite quadrature (log-sum-exp).

    The rule for N(0,1) is moved to the Laplace approximation N(z*, s^2) of the tilted density,
    s^2 = 1/(1 - h phi''(z*)):  E_z e^{h phi(z)} = sum_k w_k s exp(-u_k^2/2 + x_k^2/2
    + h phi(u_k)), u_k = z* + s x_k, w_k the normalised N(0,1) weights. At h = 0 it is the
    plain rule.
    """
    n = x.size
    v = np.empty(n)
    ph = np.empty(n)
    for i in range(h.size):
        hi = h[i]
        zs, dphi, a2 = _saddle_point(hi, kind)
        s = 1.0 / math.sqrt(1.0 + 2.0 * a2 * zs * zs)  # 1 - h phi''(z*) = 1 + 2 a2 z*^2
        mx = -np.inf
        for k in range(n):
            u = zs + s * x[k]
            ph[k] = _phi_scalar(u, kind)
            v[k] = logw[k] - 0.5 * u * u + 0.5 * x[k] * x[k] + hi * ph[k]
            if v[k] > mx:
                mx = v[k]
        s0 = 0.0
        s1 = 0.0
        for k in range(n):
            e = math.exp(v[k] - mx)
            v[k] = e
            s0 += e
            s1 += e * ph[k]
        mean = s1 / s0
        s2 = 0.0
        for k in range(n):
            dk = ph[k] - mean
            s2 += v[k] * dk * dk
        psi[i] = mx + math.log(s0 * s)
        d1[i] = mean
        d2[i] = s2 / s0


@numba.njit(cache=True)
def _relu_J(x):
    """J_k(x) = int_0^inf z^k exp(-z^2/2 - x z) dz for k = 0, 1, 2 and x >= 0."""
    if x <= _X_ASYMPT:
        j0 = math.sqrt(math.pi / 2.0) * math.exp(0.5 * x * x) * math.erfc(x / math.sqrt(2.0))
        j1 = 1.0 - x * j0
        j2 = j0 - x * j1
        return j0, j1, j2
    out0 = 0.0
    out1 = 0.0
    out2 = 0.0
    ix2 = 1.0 / (x * x)
    for k in range(3):
        # t_0 = k! / x^(k+1);  t_{n+1}/t_n = -(k+2n+1)(k+2n+2) / (2 (n+1) x^2)
        term = 1.0 / x
        for j in range(1, k + 1):
            term *= j / x
        total = term
        for n in range(200):
            ratio = -(k + 2 * n + 1) * (k + 2 * n + 2) / (2.0 * (n + 1)) * ix2
            if abs(ratio) >= 1.0:
                break
            term *= ratio
            total += term
            if abs(term) < 1e-18 * abs(total):
                break
        if k == 0:
            out0 = total
        elif k == 1:
            out1 = total
        else:
            out2 = total
    return out0, out1, out2


@numba.njit(cache=True)
def _relu_moments_kernel(h, psi, d1, d2):
    for i in range(h.size):
        hi = h[i]
        if hi <= 0.0:
            j0, j1, j2 = _relu_J(-hi)
            Z = 0.5 + _C * j0
            m1 = _C * j1 / Z
            m2 = _C * j2 / Z
            psi[i] = math.log(Z)
            d1[i] = m1
            d2[i] = m2 - m1 * m1
        else:
            Phi = 0.5 * math.erfc(-hi / math.sqrt(2.0))
            eh = math.exp(-0.5 * hi * hi)
            den = Phi + 0.5 * eh
            r = eh / den
            b = 0.5 * hi - _C
            psi[i] = 0.5 * hi * hi + math.log(den)
            d1[i] = hi - b * r
            d2[i] = 1.0 + (0.5 * (hi * hi - 1.0) - hi * _C) * r - b * b * r * r


@numba.njit(cache=True)
def _saddle_kernel(h, kind, zs, psi, d1, d2):
    """Fluctuation-free version: z* = h phi'(z*), psi_0 = -z*^2/2 + h phi(z*), derivatives."""
    for i in range(h.size):
        hi = h[i]
        z, dphi, a2 = _saddle_point(hi, kind)
        ph = _phi_scalar(z, kind)
        zs[i] = z
        psi[i] = -0.5 * z * z + hi * ph
        d1[i] = ph
        d2[i] = dphi * dphi / (1.0 + 2.0 * a2 * z * z)


# --------------------------------------------------------------------------------------------
# node tables
# --------------------------------------------------------------------------------------------


@lru_cache(maxsize=32)
def _nodes(n_nodes: int):
    x, w = np.polynomial.hermite_e.hermegauss(n_nodes)
    logw = np.log(w) - 0.5 * math.log(2.0 * math.pi)
    x = np.ascontiguousarray(x)
    logw = np.ascontiguousarray(logw)
    x.setflags(write=False)
    logw.setflags(write=False)
    return x, logw


def _moments_flat(h: np.ndarray, activation: str, n_nodes: int = 121):
    """Unvalidated fast path: h is a contiguous float64 1-D array."""
    psi = np.empty_like(h)
    d1 = np.empty_like(h)
    d2 = np.empty_like(h)
    if activation == "relu":
        _relu_moments_kernel(h, psi, d1, d2)
    elif activation == "linear":
        psi[:] = 0.5 * h * h
        d1[:] = h
        d2[:] = 1.0
    else:
        x, logw = _nodes(n_nodes)
        _agh_moments_kernel(h, 0 if activation == "sigmoid_erf" else 1, x, logw, psi, d1, d2)
    return psi, d1, d2


def _saddle_flat(h: np.ndarray, activation: str):
    """Unvalidated fast path of :func:`saddle_moments`: returns (psi0, dpsi0, d2psi0, zstar)."""
    psi = np.empty_like(h)
    d1 = np.empty_like(h)
    d2 = np.empty_like(h)
    zs = np.empty_like(h)
    if activation == "relu":
        zs[:] = np.maximum(h, 0.0)
        psi[:] = 0.5 * zs * zs
        d1[:] = zs
        d2[:] = (h > 0.0).astype(float)
    elif activation == "linear":
        zs[:] = h
        psi[:] = 0.5 * h * h
        d1[:] = h
        d2[:] = 1.0
    else:
        _saddle_kernel(h, 0 if activation == "sigmoid_erf" else 1, zs, psi, d1, d2)
    return psi, d1, d2, zs


def _prepare_h(h):
    arr = as_float_array("h", h)
    flat = np.ascontiguousarray(arr.reshape(-1))
    return arr.shape, flat


def _reshape(shape, *arrays):
    return tuple(a.reshape(shape)[()] for a in arrays)


# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------


def tilted_moments(h, *, activation: str = "sigmoid_erf", n_nodes: int = 121):
    """Cumulant generating function of phi(z), z ~ N(0, 1), and its first two derivatives.

    ``psi(h) = log E exp(h phi(z))``, ``psi'(h) = <phi>_h``, ``psi''(h) = Var_h(phi)``, where
    ``<.>_h`` is the tilted density ``N(z|0,1) exp(h phi(z) - psi(h))`` (seed 000, notes §4.3
    [RECON]; for ReLU the closed form ``psi_R(h) = log[1/2 + e^{h^2/2} Phi_N(h)]``, notes §5.2,
    finite for every real h: see the module docstring for where the ReLU divergence really is).

    Parameters
    ----------
    h : array_like
        Tilts (any shape; must be finite).
    activation : {"sigmoid_erf", "erf", "relu", "linear"}
        phi; sigmoid_erf is ``[1 + erf(sqrt(pi) z/2)]/2`` (seed 000 §Network [MT]).
    n_nodes : int
        Gauss-Hermite nodes (sigmoid_erf and erf only; 1..512).

    Returns
    -------
    (psi, dpsi, d2psi), each of the shape of ``h`` (numpy scalars for scalar ``h``).
    """
    activation = _check_tilted_activation(activation)
    n_nodes = _check_n_nodes(n_nodes)
    shape, flat = _prepare_h(h)
    return _reshape(shape, *_moments_flat(flat, activation, n_nodes))


def saddle_moments(h, *, activation: str = "sigmoid_erf"):
    """Fluctuation-free tilted integrals (notes §4.4: z|a fluctuations neglected) [RECON].

    ``psi_0(h) = max_z [-z^2/2 + h phi(z)]``, maximiser ``z*(h)`` with ``z* = h phi'(z*)``
    (unique for the built-in activations), ``psi_0'(h) = phi(z*)`` (envelope theorem) and
    ``psi_0''(h) = phi'(z*)^2 / (1 - h phi''(z*))``. ReLU: ``z* = max(h, 0)``,
    ``psi_0 = max(h,0)^2/2``; linear: ``psi_0 = psi = h^2/2``.

    Returns ``(psi0, dpsi0, d2psi0, zstar)`` shaped like ``h``.
    """
    activation = _check_tilted_activation(activation)
    shape, flat = _prepare_h(h)
    return _reshape(shape, *_saddle_flat(flat, activation))


def _phi_np(z, activation):
    if activation == "sigmoid_erf":
        return 0.5 * special.erfc(-0.5 * math.sqrt(math.pi) * z)
    if activation == "erf":
        return special.erf(z)
    if activation == "relu":
        return np.maximum(z, 0.0)
    return np.asarray(z, dtype=float) * 1.0


def tilted_density(z, h, *, activation: str = "sigmoid_erf", n_nodes: int = 121):
    """Normalised tilted density ``N(z|0,1) exp(h phi(z) - psi(h))`` (notes §4.3 [RECON]).

    This is the conditional preactivation posterior ``P(z_mu | a)`` of a feature-layer neuron on
    a toy input of class c, with ``h = t_c . a`` (seed 000 Fig. 4c, "theoretical distribution").
    ``z`` and ``h`` are broadcast against each other; psi is evaluated as in
    :func:`tilted_moments`.
    """
    activation = _check_tilted_activation(activation)
    n_nodes = _check_n_nodes(n_nodes)
    zz = as_float_array("z", z)
    hh = as_float_array("h", h)
    zz, hh = broadcast_named({"z": zz, "h": hh}, message="z and h must be broadcastable")
    shape = zz.shape
    hf = np.ascontiguousarray(hh.reshape(-1))
    psi = _moments_flat(hf, activation, n_nodes)[0]
    zf = zz.reshape(-1)
    logp = -0.5 * zf * zf - 0.5 * math.log(2.0 * math.pi) + hf * _phi_np(zf, activation) - psi
    return np.exp(logp).reshape(shape)[()]


def _quad_one(h: float, activation: str):
    f = lambda z: _phi_np(z, activation)  # noqa: E731
    # shift = max_z [h phi(z) - z^2/2] (bounded phi: |shift| <= |h|; relu/linear: h^2/2)
    if activation in ("relu", "linear"):
        shift = 0.5 * max(h, 0.0) ** 2 if activation == "relu" else 0.5 * h * h
        center = max(h, 0.0) if activation == "relu" else h
    else:
        zs = _saddle_flat(np.array([h]), activation)
        shift = float(zs[0][0])
        center = float(zs[3][0])
    pts = sorted({0.0, center})
    lo, hi = min(pts) - 40.0, max(pts) + 40.0

    def integral(g):
        with warnings.catch_warnings():  # epsrel 1e-13 is at round-off; quad may say so
            warnings.simplefilter("ignore", integrate.IntegrationWarning)
            val, _ = integrate.quad(
                lambda z: g(z) * math.exp(-0.5 * z * z + h * float(f(z)) - shift),
                lo, hi, points=pts, limit=400, epsabs=0.0, epsrel=1e-13,
            )
        return val

    z0 = integral(lambda z: 1.0)
    mean = integral(lambda z: float(f(z))) / z0
    var = integral(lambda z: (float(f(z)) - mean) ** 2) / z0
    psi = shift + math.log(z0 / _SQRT_2PI)
    return psi, mean, var


def tilted_moments_quad(h, *, activation: str = "sigmoid_erf"):
    """Reference implementation of :func:`tilted_moments` by adaptive quadrature.

    Plain ``scipy.integrate.quad`` (relative tolerance 1e-13) of ``N(z) phi(z)^k exp(h phi(z))``
    on a window of +-40 around 0 and the saddle point, shifted by the saddle value so nothing
    overflows; three integrals (normaliser, mean, central second moment) per h. Slow, used by
    the tests and the benchmark (``richlazy.validate.benchmarks._coding``).
    """
    activation = _check_tilted_activation(activation)
    shape, flat = _prepare_h(h)
    out = np.array([_quad_one(float(v), activation) for v in flat]).reshape(-1, 3)
    return _reshape(shape, out[:, 0].copy(), out[:, 1].copy(), out[:, 2].copy())
