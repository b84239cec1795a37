"""The comparison rule of the linear-network cases (``coding/linear-toy``, ``coding/deep-linear``):
a sampled estimate against the linear network's theory with the a-priori tolerance 3/N + 4 SE
(relative) or 4 SE + 3/N x a natural scale (absolute), and the compared row of the
readout covariance U.
"""

from __future__ import annotations

import numpy as np

from ..core._compare import compare
from ..core._declaration import Compared

__all__ = ["READOUT_COVARIANCE_ROW", "compare_linear", "element_estimate", "finite_width_rule"]


def _tol_note(N):
    return (f"rel tolerance = 3/N (finite-width bias, N={N}) + 4 standard errors; abs tolerance = "
            f"4 standard errors + 3/N x natural scale.")


_LINEAR_MIXING = ("a linear network's posterior is Gaussian in every block (notes §3.1): one state, "
                  "no barrier for the chains to cross")


def compare_linear(name, theory, est, N, *, scale=None):
    """Compare with the a-priori tolerance of this case (see _tol_note); ``est`` is
    (mean, stderr) or (mean, stderr, mixing) with the chain diagnostics of the estimate."""
    th = float(theory)
    sim = float(est[0])
    se = float(est[1])
    mixing = est[2] if len(est) > 2 else None
    # the ergodicity class of a sampled estimate: a linear network's posterior is Gaussian
    erg = {} if mixing is None else dict(ergodicity="mixing", reason=_LINEAR_MIXING)
    if scale is not None and abs(th) < 1e-9 * scale:
        th = 0.0  # analytically zero; the solver returns round-off
    if scale is None:
        tol = 3.0 / N + 4.0 * se / abs(th)
        return compare(name, th, sim, stderr=se, kind="rel", tol=tol, note=_tol_note(N),
                       mixing=mixing, **erg)
    tol = 4.0 * se + 3.0 / N * scale
    return compare(name, th, sim, stderr=se, kind="abs", tol=tol, note=_tol_note(N), mixing=mixing,
                   **erg)


def finite_width_rule(run, name, theory, est, *, scale=None):
    """:func:`compare_linear` as the rule of a declared case's compared row
    (:class:`richlazy.validate.Compared`): the width N is ``run.cfg.N``."""
    return compare_linear(name, theory, est, run.cfg.N, scale=scale)


def element_estimate(est):
    """``e(key, *idx)``: mean, stderr and the chain diagnostics of one element of a recorded
    observable (the form :func:`compare_linear` takes)."""

    def e(key, *idx):
        return est[key].mean[idx], est[key].stderr[idx], est[key].mixing(*idx)

    return e


def _u_indices(run):
    m = run.theory.sol.U.shape[0]
    return [(r, r) for r in range(m)] + [(r, s) for r in range(m) for s in range(r + 1, m)]


def _u_scale(run, r, s):
    """Off the diagonal, the natural scale sqrt(U_rr U_ss) where the theory's U_rs is zero (an
    absolute tolerance there), else a relative tolerance."""
    U = run.theory.sol.U
    if r == s:
        return {}
    scale = float(np.sqrt(U[r, r] * U[s, s]))
    return dict(scale=scale if abs(U[r, s]) < 1e-9 * scale else None)


#: the readout covariance U (m x m) of a linear network's theory (``run.theory.sol.U``) against
#: its estimate ``run.simulation.e("UA", r, s)``: the diagonal, then the upper triangle
READOUT_COVARIANCE_ROW = Compared(
    lambda run, r, s: f"U[{r},{s}]" + (" (readout variance)" if r == s else ""),
    theory=lambda run, r, s: run.theory.sol.U[r, s],
    estimate=lambda run, r, s: run.simulation.e("UA", r, s), rule=finite_width_rule,
    over=_u_indices, options=_u_scale)
