"""numba kernel of the middle-layer field integral of deep sigmoidal networks (seed 000, notes
§2.3 (S2), §4.5 [RECON]; :mod:`._deep_middle`).

Given a point (xi, u) of the Hubbard-Stratonovich field, an input of class c has the tilted
density ``∝ N(z | xi, s^2) exp(½ alpha phi(z)^2 + u phi(z))``. Its normaliser and moments are
Gauss-Hermite sums over ``z = xi + s eps`` (eps the nodes of a standard normal). The field
quadrature needs them at 10^4-10^5 points per class and evaluation of the deep map; one pass per
point in compiled code replaces the (points x nodes) temporaries and the log-sum-exp of the numpy
version, which dominated the L = 3 solver's time.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ...kernels._tilted import _phi_scalar

__all__ = ["tilted_field_moments"]

#: activation name -> kind code of :func:`richlazy.theory.kernels._tilted._phi_scalar`
_KIND = {"sigmoid_erf": 0, "erf": 1}


def tilted_field_moments(xi, u, s, alpha, eps, logw, activation):
    """Per point i (arrays xi, u of one shape (M,)): the tilted average over ``eps ~ N(0, 1)``
    with the density ``∝ exp(½ alpha phi(z)^2 + u_i phi(z))``, ``z = xi_i + s eps``, by the
    Gauss-Hermite rule (nodes ``eps``, normalised log-weights ``logw``):

        ``log chi_i = log sum_k w_k exp(½ alpha phi(z_k)^2 + u_i phi(z_k))``

    and the averages <phi>, <phi^2>, <eps>, <eps^2>, <eps phi>. Returns an (M, 6) array with
    columns (log chi, <phi>, <phi^2>, <eps>, <eps^2>, <eps phi>). ``activation``: "sigmoid_erf"
    or "erf". Private: the middle-layer solver passes validated float64 arrays."""
    xi = np.ascontiguousarray(xi, dtype=np.float64)
    u = np.ascontiguousarray(u, dtype=np.float64)
    out = np.empty((xi.size, 6))
    _moments_kernel(xi, u, float(s), float(alpha), np.ascontiguousarray(eps, dtype=np.float64),
                    np.ascontiguousarray(logw, dtype=np.float64), _KIND[activation], out)
    return out


@numba.njit(cache=True)
def _moments_kernel(xi, u, s, alpha, eps, logw, kind, out):
    n = eps.size
    e = np.empty(n)
    ph = np.empty(n)
    for i in range(xi.size):
        emax = -np.inf
        for k in range(n):
            p = _phi_scalar(xi[i] + s * eps[k], kind)
            ph[k] = p
            v = logw[k] + (0.5 * alpha * p + u[i]) * p
            e[k] = v
            if v > emax:
                emax = v
        tot = 0.0
        m1 = 0.0
        m2 = 0.0
        me = 0.0
        me2 = 0.0
        meph = 0.0
        for k in range(n):
            w = math.exp(e[k] - emax)
            p = ph[k]
            x = eps[k]
            tot += w
            m1 += w * p
            m2 += w * p * p
            me += w * x
            me2 += w * x * x
            meph += w * x * p
        out[i, 0] = emax + math.log(tot)
        out[i, 1] = m1 / tot
        out[i, 2] = m2 / tot
        out[i, 3] = me / tot
        out[i, 4] = me2 / tot
        out[i, 5] = meph / tot
