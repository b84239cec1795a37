"""The dual margin of a multiplier of the outlier-only ReLU theory, as a public search (seed 000,
notes §5.2 last bullet [RECON]).

For a multiplier t (P, m) of the interpolation constraint of :func:`solve_relu_outliers`, the
dual bound holds for every neuron direction exactly when

    dual margin  =  max_{z in range(K0), z != 0}  |t^T relu(z)|^2 / (P_s z^T K0^+ z)  <=  1,

with P_s = 1/sigma_a2. A margin above 1 names a direction along which a new outlier would lower
the cost; ``t / sqrt(margin)`` is always dual feasible, so ``tr(t^T Y)/sqrt(margin)`` is a lower
bound on the minimum cost (``lower_bound`` of the solution, T = 0). The maximisation is not
concave, so a search can only bound the margin from below: this one maximises from many starts
(compiled L-BFGS per start, then the exact maximum on the face of the activation region of the
best maxima; :mod:`._relu_search`) and returns every distinct local maximum it found.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._results import SolverStatus, Status
from ...checks import as_float_matrix, as_rng, check_pos_float
from .._problem import _check_psd_gram, _check_search_starts
from ._certificate import _starts
from ._factor import _Factor
from ._search import _batched_local_maxima

__all__ = ["ReLUDualMargin", "relu_dual_margin"]


@dataclass(frozen=True)
class ReLUDualMargin(SolverStatus):
    """Result of :func:`relu_dual_margin` (P training inputs).

    margin : float      the largest local maximum found of ``|t^T relu(z)|^2 / (P_s z^T K0^+ z)``
                        (0 when no start gave a positive value): a lower bound on the true dual
                        margin; <= 1 means no violating neuron direction was found.
    z : (P,)            its maximiser, a preactivation vector in the range of K0 scaled to
                        ``z^T K0^+ z = 1`` (zeros when ``margin`` is 0).
    maxima : (k,)       every distinct local maximum found, largest first (maximisers closer
                        than 1e-6 in the whitened coordinates count once).
    directions : (k, P) their maximisers, scaled as ``z``.
    n_starts : int      starts searched (also ``nit``).

    ``converged`` is True (the search always finishes); ``residual`` is 0 (a search solves no
    equations: its only uncertainty is a larger maximum that no start reached).
    """

    margin: float
    z: np.ndarray
    maxima: np.ndarray
    directions: np.ndarray
    n_starts: int


def relu_dual_margin(K0, t, *, sigma_a2: float | None = None, starts=None,
                     n_starts: int | None = None, seed=0) -> ReLUDualMargin:
    """Dual margin ``max_z |t^T relu(z)|^2 / (P_s z^T K0^+ z)`` over preactivations z in the range
    of K0 (seed 000, notes §5.2 last bullet [RECON]: the dual of the outlier-only ReLU problem of
    :func:`solve_relu_outliers` is ``max_t tr(t^T Y)`` subject to margin <= 1), by a multi-start
    search: every start is maximised by L-BFGS (scipy L-BFGS-B's default stopping rules, one
    compiled kernel for all starts), and the largest maxima (up to 200 with at least half the
    largest value) are polished to the exact maximum on the face of their activation region,
    where the ratio is a Rayleigh quotient of rank <= m. This is the search that
    :func:`solve_relu_outliers` uses for its certificates; call it with more starts or another
    seed to check a certificate independently.

    Parameters
    ----------
    K0 : (P, P)       input kernel of the training inputs (symmetric positive semi-definite;
                      a singular K0 is searched on its range).
    t : (P, m)        the multiplier, e.g. ``solve_relu_outliers(K0, Y).t``.
    sigma_a2 : float  readout prior variance, P_s = 1/sigma_a2 (default 1/P, as the solver's).
    starts : (S, P)   start preactivations (rows; only their part in the range of K0 counts).
                      Default: the signed output columns of t, their positive parts and those
                      mapped by K0, plus ``n_starts`` random directions.
    n_starts : int    random starts added to the default starts (default 40 P, the solver's
                      verification search); not allowed together with ``starts``. ValueError
                      when the starts with their work arrays would exceed 16 GiB.
    seed : int or numpy.random.Generator  for the random starts.

    Returns a :class:`ReLUDualMargin`. Its speed against one scipy call per start:
    ``richlazy bench --only relu-search`` (docs/benchmarks.md).
    """
    fac = _Factor.from_kernel(_check_psd_gram(K0, factor=True))
    P = fac.P
    t = as_float_matrix("t", t, allow_1d=True)  # a 1-D t is one output column
    if t.shape[0] != P:
        raise ValueError(f"t must have P = {P} rows (one per training input, as K0), got shape "
                         f"{t.shape}")
    Ps = float(P) if sigma_a2 is None else 1.0 / check_pos_float("sigma_a2", sigma_a2)
    if starts is not None:
        if n_starts is not None:
            raise ValueError(f"give either starts or n_starts, not both (got n_starts={n_starts!r} "
                             "with explicit starts)")
        Z0 = as_float_matrix("starts", starts)
        if Z0.shape[1] != P:
            raise ValueError(f"starts must be an (S, P) array with P = {P} columns (one start per row), "
                             f"got shape {Z0.shape}")
        W0 = fac.to_w(Z0)
    else:
        n_random = 40 * P if n_starts is None else _check_search_starts("n_starts", n_starts, P)
        W0 = _starts(t, fac, as_rng(seed), [], n_random)
    found = _batched_local_maxima(W0, fac.B, t, Ps)
    if found:
        maxima = np.array([f for f, _ in found])
        directions = np.array([w for _, w in found]) @ fac.B.T
    else:
        maxima, directions = np.zeros(0), np.zeros((0, P))
    margin = float(maxima[0]) if found else 0.0
    z = directions[0].copy() if found else np.zeros(P)
    verdict = ("<= 1: no violating neuron direction found" if margin <= 1.0 else
               "> 1: t violates the dual bound along z (a new outlier along z lowers the cost)")
    msg = (f"dual margin {margin:.10g} {verdict}; {len(maxima)} distinct local maxima from "
           f"{W0.shape[0]} starts (a multi-start search: the true margin is at least this)")
    return ReLUDualMargin(converged=True, status=Status.SUCCESS, message=msg, nit=int(W0.shape[0]),
                          residual=0.0, margin=margin, z=z, maxima=maxima,
                          directions=directions, n_starts=int(W0.shape[0]))
