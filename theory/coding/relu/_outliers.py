"""Outlier-only theory of ReLU non-lazy networks on general data (seed 000, notes §5.2 last
bullet [RECON]; MT: on MNIST the mean predictor is captured by the outliers alone).

Source: A. van Meegen & H. Sompolinsky, *Coding schemes in neural networks learning
classification tasks*, Nat. Commun. 16, 3354 (2025) (seed 000), main text "Sparse coding scheme".

The KKT conditions of the outlier equations without the bulk are those of the minimum-norm
interpolation ``min sum_i [|abar_i|^2 / sigma_a2 + zbar_i^T K0^{-1} zbar_i]/2`` subject to
``sum_i abar_i relu(zbar_i)^T = Y^T``; the Lagrange multiplier is t. Inputs are columns of X
(N0 x P) and enter through ``K0 = X^T X / N0``; Y is (P, m), one row per training input, m =
number of outputs. The problem is posed on the range of K0 (``K0 = B B^T``, B: P x r,
``zbar = B u``, ``|u|^2 = zbar^T K0^+ zbar``), so a singular K0 (fewer independent input
directions than training inputs) is solved there; for a positive-definite K0 this is the problem
above. The toy-task theory (bulk plus outliers) is in :mod:`._relu_toy`.

This module holds the result, the solver and its restarts of sliding neurons; the stages after
them (certificate, dual ascent, bounds, the point returned, the message) are in
:mod:`._outliers_stages`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._progress import as_progress
from ..._results import SolverStatus, Status, raise_if_failed
from ...checks import as_rng, check_int, check_pos_float, check_real, renamed_option
from .._problem import _check_psd_gram, _check_representable, _check_targets
from .._protocol import _check_k0, _check_test_diag, _gen_error_args, _mean_squared_error
from ._certificate import _pricing
from ._factor import _Factor
from ._outliers_stages import (  # noqa: F401  (the constants, documented there: re-exported)
    GAP_RTOL,
    INOUT_ITER,
    N_VERIFY_PER_P,
    PROX_STEPS,
    _certify_best,
    _choose_returned,
    _compact_network,
    _dual_ascent,
    _feasible_upper_bound,
    _not_certified,
    _outlier_message,
    _reprice_bound,
    _Searches,
)
from ._sliding import _kkt_point, _penalised_stage

__all__ = ["ReLUOutlierSolution", "solve_relu_outliers"]


@dataclass(frozen=True)
class ReLUOutlierSolution(SolverStatus):
    """Outlier-only mean-field theory of a ReLU network on general data (notes §5.2) [RECON].

    Attributes (n_o outliers, P training inputs, m outputs)
    ----------
    abar : (n_o, m)      sqrt(N)-scaled outlier readouts.
    zbar : (n_o, P)      sqrt(N)-scaled outlier preactivations on the training inputs.
    t : (P, m)           conjugate field = Lagrange multiplier of the interpolation constraint
                         (at T = 0 not unique: the consistent multiplier with the smallest
                         dual margin found, see :mod:`._relu_certificate`).
    cost : float         sum_i [P |abar_i|^2 + zbar_i^T K0^+ zbar_i] / 2 (minimised; K0^+ is
                         the pseudo-inverse, = K0^-1 for a positive-definite K0; every zbar_i
                         lies in the range of K0).
    dual_margin : float  max over z in range(K0) of |t^T relu(z)|^2 / (P z^T K0^+ z) found by a
                         multi-start search; <= 1 certifies (up to the search) that no further
                         outlier direction is unstable, i.e. the KKT point is the global optimum.
    residuals : dict     "stationarity_a", "stationarity_z", "output" (max-abs; the relu
                         subgradient in [0, 1] is allowed where zbar_mu = 0).
    lower_bound : float  dual lower bound on the global minimum of the cost (weak duality,
                         :func:`_dual_lower_bound`): t rescaled by ``1/sqrt(dual_margin)`` is
                         dual feasible, so no interpolant costs less (up to the search that
                         found ``dual_margin``).
    duality_gap : float  ``(cost - lower_bound) / cost``: how far the returned point can be from
                         the global optimum, relative (0 when certified). It bounds the
                         suboptimality of a feasible point only: see ``upper_bound``.
    upper_bound : float  the cost of a feasible network (an upper bound on the global minimum,
                         so the minimum lies in [lower_bound, upper_bound]): ``cost`` when the
                         returned point interpolates (T = 0; any point at T > 0), or, when it
                         is not certified, the cheaper group-lasso network over the neuron
                         directions known at the end (those of the dual ascent's last
                         restricted problem, or the point's own without the ascent;
                         :func:`._relu_dual._restricted_primal`); inf when neither interpolates.
                         ``bracket_gap`` is the relative width of [lower_bound, upper_bound].
    t_bound : (P, m)     the dual-feasible multiplier whose dual value is ``lower_bound`` (the
                         multiplier that gave the bound, scaled by ``1/sqrt(its margin)``):
                         ``relu_dual_margin(K0, t_bound, sigma_a2=...)`` checks the bound
                         independently (its margin must be <= 1 for the bound to hold).
    K0, Y, P_scale, T : the problem (K0 (P, P) input kernel of the training inputs, columns of X;
                         Y (P, m), one row per training input, m outputs; P_scale = 1/sigma_a2 =
                         inverse readout prior variance, default P; T = rescaled temperature,
                         0 = interpolation).

    Implements the coding-solution protocol (:mod:`._protocol`): ``predict``, ``test_kernel``,
    ``generalization_error``.
    """

    abar: np.ndarray
    zbar: np.ndarray
    t: np.ndarray
    cost: float
    dual_margin: float
    residuals: dict
    K0: np.ndarray
    Y: np.ndarray
    P_scale: float
    T: float = 0.0
    lower_bound: float = float("nan")
    duality_gap: float = float("nan")
    upper_bound: float = float("nan")
    t_bound: np.ndarray | None = None

    @property
    def n_outliers(self) -> int:
        return int(self.abar.shape[0])

    @property
    def bracket_gap(self) -> float:
        """Relative width ``(upper_bound - lower_bound) / upper_bound`` of the interval known to
        contain the global minimum of the cost (weak duality below, a feasible network above;
        notes §5.2 [RECON]); at most about 1e-6 when certified, NaN when no feasible network is
        known. Unlike ``duality_gap`` it does not depend on the returned point."""
        upper = float(self.upper_bound)
        if not np.isfinite(upper) or upper <= 0:
            return float("nan")
        return max(upper - float(self.lower_bound), 0.0) / upper

    def mean_output(self) -> np.ndarray:
        """Training output ``sum_i relu(zbar_i) abar_i^T`` (P, m); equals Y - T t."""
        return np.maximum(self.zbar, 0.0).T @ self.abar

    @property
    def sigma_a2(self) -> float:
        """Readout prior variance sigma_a^2 = 1 / P_scale."""
        return 1.0 / self.P_scale

    def _test_activations(self, name, k0):
        k0 = _check_k0(name, k0, self.K0.shape[0])
        # zbar_i(x) = zbar_i^T K0^+ k0(x): the pseudo-inverse on the range of K0, where zbar_i
        # and (for inputs) k0 lie, with the rank cut of the solver (as in the sigmoid solution)
        R = np.linalg.lstsq(self.K0, k0, rcond=1e-10)[0]
        return k0, np.maximum(self.zbar @ R, 0.0)  # (n_o, Q)

    def predict(self, k0, k_test_diag=None) -> np.ndarray:
        """Mean predictor (Q, m) [MT, outlier part]: ``f_r(x) = sum_i abar_i^r relu(zbar_i(x))``,
        ``zbar_i(x) = zbar_i^T K0^+ k0(x)`` (pseudo-inverse; K0^-1 when K0 is positive
        definite); ``k0`` is (P, Q) with columns X^T x / N0
        (``input_kernel(X, X_test)``). ``k_test_diag`` is accepted for the common protocol and
        not used (the outlier preactivations on a test input are deterministic)."""
        k0, R = self._test_activations("k0", k0)
        _check_test_diag("k_test_diag", k_test_diag, k0.shape[1])
        return R.T @ self.abar

    def test_kernel(self, k0_a, k0_b, K0_ab=None, k_test_diag_a=None,
                    k_test_diag_b=None) -> np.ndarray:
        """Outlier part of the test kernel (Qa, Qb) [MT]: ``sum_i relu(zbar_i(x1))
        relu(zbar_i(x2))`` (sqrt(N)-scaled); ``k0_a`` (P, Qa), ``k0_b`` (P, Qb). ``K0_ab`` and the
        diagonals are accepted for the common protocol and not used."""
        k0_a, za = self._test_activations("k0_a", k0_a)
        k0_b, zb = self._test_activations("k0_b", k0_b)
        _check_test_diag("k_test_diag_a", k_test_diag_a, k0_a.shape[1])
        _check_test_diag("k_test_diag_b", k_test_diag_b, k0_b.shape[1])
        return za.T @ zb

    def generalization_error(self, k0, k_test_diag=None, Y_test=None) -> np.ndarray:
        """Per-output ``eps_r = mean_mu [y_mu^r - f_r(x_mu)]^2`` ([MT], no variance term);
        ``Y_test`` (Q, m). The old form ``(k0, Y_test)`` warns (DeprecationWarning)."""
        k0, k_test_diag, Y_test = _gen_error_args("ReLUOutlierSolution", k0, k_test_diag, Y_test)
        return _mean_squared_error(self.predict(k0, k_test_diag), Y_test)


def _insert(A, W, t, B, Ps, w_star):
    """Add a small neuron along the violating direction w* (readout along t^T relu(B w*)),
    reusing a dead neuron when there is one."""
    v = t.T @ np.maximum(B @ w_star, 0.0)
    s = 0.1 * np.sqrt(np.mean(np.sum(W * W, axis=1))) + 1e-3
    a_new = s * v / (np.linalg.norm(v) * np.sqrt(Ps))
    live = np.linalg.norm(A, axis=1) * np.linalg.norm(W, axis=1)
    dead = np.flatnonzero(live < 1e-8 * max(live.max(), 1e-300))
    if dead.size:
        A, W = A.copy(), W.copy()
        A[dead[0]], W[dead[0]] = a_new, s * w_star
        return A, W
    return np.vstack([A, a_new]), np.vstack([W, s * w_star])


def solve_relu_outliers(
    K0,
    Y,
    *,
    sigma_a2: float | None = None,
    T: float = 0.0,
    n_neurons: int | None = None,
    n_restarts: int = 2,
    seed=0,
    atol: float | None = None,
    maxiter: int = 25,
    throw: bool = False,
    progress=False,
    dual_ascent: bool = True,
    P: float | None = None,
    tol: float | None = None,
) -> ReLUOutlierSolution:
    """Outlier-only ReLU theory (notes §5.2 last bullet) [RECON]: the minimum-norm interpolant

        min sum_i [P |abar_i|^2 + zbar_i^T K0^-1 zbar_i]/2   s.t.   sum_i abar_i relu(zbar_i)^T = Y^T

    whose KKT conditions are the outlier equations ``P abar = t^T relu(zbar)``,
    ``K0^-1 zbar = Theta(zbar) o (t abar)`` (relu subgradient in [0, 1] where zbar_mu = 0) with
    the multiplier t. It is convex over neuron measures (an atomic-norm problem); its dual is
    ``max_t tr(t^T Y)`` subject to ``|t^T relu(z)|^2 <= P z^T K0^-1 z`` for every z, so a KKT
    point whose t satisfies that bound (``dual_margin <= 1``) is the global optimum. Otherwise
    ``t / sqrt(dual_margin)`` is dual feasible and its dual value is a lower bound on the global
    minimum (``lower_bound``; ``duality_gap`` = (cost - lower_bound)/cost bounds how far the
    returned point can be from it). When the dual ascent (``dual_ascent``) finds a network
    along its directions that is cheaper than the KKT point of the sliding neurons (or that
    point does not interpolate), that network is returned instead (the best feasible point
    known; its neurons cluster around a few directions, its KKT residual with the lower
    bound's multiplier is reported, and it is certified when its cost is within 1e-6 of the
    lower bound). Such a network is then compacted (:func:`._relu_sliding._compact_points`):
    its clusters of neurons (activation patterns with cosine > 0.99, 0.999 or 0.98) are merged
    into one neuron each, the merged neurons slide and the KKT system is solved exactly. Each
    compact KKT point's multiplier (with the certificate's search over the free multipliers at
    T = 0) gives one more dual bound, and the cheapest compact point is returned, with its own
    multiplier, when it is cheaper than the sliding-neuron KKT point (or that point does not
    interpolate) and no dearer than the network (within 1e-6, relative): a point of a few
    neurons. It is certified when its cost is within 1e-6 of the lower bound.

    Range formulation: the preactivations of a network on the training inputs lie in the range
    of K0, so the problem is posed there, ``zbar = B u`` with ``K0 = B B^T`` and
    ``|u|^2 = zbar^T K0^+ zbar`` (K0^+ the pseudo-inverse; eigenvalues <= 1e-10 x the largest
    count as zero); everywhere above K0^-1 reads K0^+, stationarity reads ``zbar = K0 [g o
    (t abar)]`` and the dual bound is over z in the range. A singular K0 (fewer independent
    input directions than training inputs, e.g. N0 < P) is therefore solved, not rejected;
    for a positive-definite K0 (B = chol(K0)) it is the problem above, with the same results.
    With a singular K0 an interpolant need not exist (relu(z), z in the range, need not span
    the targets): repeated or positively parallel inputs with inconsistent targets, or a zero
    input with a nonzero target, raise ValueError at T = 0; other infeasible targets give an
    uncertified result whose message says so. The predictor on a test input uses
    ``zbar_i(x) = zbar_i^T K0^+ k0(x)``.

    With ``T > 0`` the interpolation constraint is replaced by the finite-temperature output
    ``sum_i abar_i relu(zbar_i)^T = (Y - T t)^T`` (notes §2.3 (S1)), i.e. the weight-decay
    regression ``min cost + |F - Y|^2 / (2T)`` with ``t = (Y - F)/T`` [RECON, outlier-only].

    Algorithm (conditional gradient with sliding neurons): the weight-decay regression
    ``cost + |F - Y|^2/(2 lam)`` is minimised over ``n_neurons`` neurons (L-BFGS, z = B w)
    for decreasing lam (down to T, or to 1e-7 x the data scale at T = 0); after each stage the
    dual margin is searched (multi-start L-BFGS, :func:`_pricing`) with ``t = (Y - F)/lam``, and
    a neuron is inserted in the most violating direction while the margin exceeds 1 (at most
    the ``maxiter`` budget allows). Negligible neurons are pruned, parallel ones merged, the KKT system
    is solved exactly at the final sign pattern (least-squares Newton with an active-set update
    of the zero entries), t is projected onto the span of the targets, and the certificate is
    recomputed. The lowest-cost certified result of ``n_restarts`` random initialisations is
    returned. If its multiplier is not dual feasible, the dual ascent (``dual_ascent``) raises
    the lower bound from it; ``converged`` then means a solved KKT point with
    ``duality_gap <= 1e-6``: within that relative distance of the global minimum (up to the
    pricing search, as every bound here).

    Parameters
    ----------
    K0 : (P, P)        input kernel X^T X / N0 (inputs as columns of X; symmetric positive
                       semi-definite, possibly singular: solved on its range).
    Y : (P, m)         targets, one row per training input, m = number of outputs.
    sigma_a2 : float   readout prior variance sigma_a^2 > 0; default 1/P (the paper's scaling).
                       The cost weighs |abar|^2 by its inverse ``1/sigma_a2`` (called P above).
                       ``P=`` (the inverse readout prior variance, P = 1/sigma_a2) is the
                       deprecated spelling.
    T : float >= 0     rescaled temperature (0: interpolation).
    n_neurons          initial number of candidate neurons (default 3 m).
    n_restarts         random initialisations; ``seed`` (int or numpy Generator) their randomness.
    atol               max-abs KKT residual tolerance (default 1e-10; ``tol=`` deprecated).
    maxiter : int >= 1 iteration budget per restart. One iteration is one *stage*: an L-BFGS
                       minimisation of the penalised objective at one penalty lam (at most 3000
                       L-BFGS steps) and the dual-margin search after it. The annealing schedule
                       takes up to 5 stages (its last ``maxiter`` penalties when the budget is
                       smaller); each neuron insertion costs one more stage, so the default 25
                       allows 20 insertions at T = 0. The final KKT polish and certificate run
                       once per round regardless. ``nit`` counts stages over all restarts (the
                       message also gives the L-BFGS steps). Stopping uncertified because the
                       budget ran out gives ``Status.MAX_ITERATIONS``; stopping uncertified with
                       budget left (no insertion direction found, or the KKT system unsolved)
                       ``NUMERICAL_FAILURE``.
    throw : bool       raise SolverError on failure.
    progress           False (silent), True (a line on stderr at most every 10 s: restart,
                       stage, penalty, neurons, dual margin) or a callable receiving each message.
    dual_ascent : bool when the point is not certified by its own multiplier, raise the lower
                       bound by proximal column generation on the convex dual
                       (:func:`._relu_dual._prox_dual_ascent`, at most 4 proximal steps of at
                       most 10 restricted problems each), then narrow [lower_bound,
                       upper_bound] by in-out column generation on the directions it collected
                       (:func:`._relu_dual._inout_refinement`, at most 40 restricted problems;
                       the upper bound is then the network over its directions, returned when
                       cheaper than the KKT point), and compact the network into a KKT point of
                       few neurons (above). A KKT point whose relative duality gap to
                       that bound is <= ``GAP_RTOL`` = 1e-6 is certified (``converged``) even
                       when its own multiplier has ``dual_margin`` > 1 (at T = 0 the multiplier
                       is not unique and the dual optimum is degenerate).
    """
    atol = renamed_option("atol", atol, "tol", tol, default=1e-10)
    report = as_progress(progress, "solve_relu_outliers")
    kf = _check_psd_gram(K0, factor=True)
    K0, fac = kf.K0, _Factor.from_kernel(kf)
    Pn, rank = fac.B.shape
    Y = _check_targets(Y, Pn)
    if P is not None:  # deprecated spelling: P = inverse readout prior variance = 1/sigma_a2
        Ps = check_pos_float("P", P)
        renamed_option("sigma_a2", sigma_a2, "P", 1.0 / Ps)
    else:
        Ps = float(Pn) if sigma_a2 is None else 1.0 / check_pos_float("sigma_a2", sigma_a2)
    T = check_real("T", T)
    if T < 0:
        raise ValueError(f"T must be a finite number >= 0, got {T!r}")
    n = 3 * Y.shape[1] if n_neurons is None else check_int("n_neurons", n_neurons, minimum=1)
    n_restarts = check_int("n_restarts", n_restarts, minimum=1)
    tol = check_pos_float("atol", atol)
    maxiter = check_int("maxiter", maxiter, minimum=1)
    if not isinstance(dual_ascent, (bool, np.bool_)):
        raise TypeError(f"dual_ascent must be True or False, got {dual_ascent!r}")
    if not np.any(Y):
        raise ValueError("Y must not be all zero (the minimum-norm solution is then empty)")
    if T == 0 and rank < Pn:
        _check_representable(K0, Y)
    srch = _Searches(fac, K0, Y, Ps, T, tol, as_rng(seed), report)
    best, nit, n_lbfgs = _best_of_restarts(srch, n, maxiter, n_restarts)
    pb = _certify_best(srch, best)
    if not pb.ok and dual_ascent and pb.cost > 0:
        _dual_ascent(srch, pb)
    _feasible_upper_bound(srch, pb)
    if not pb.ok and pb.network is not None:
        _compact_network(srch, pb)
    if pb.lower > pb.upper * (1 + 1e-12):
        _reprice_bound(srch, pb)
    _choose_returned(srch, pb)
    ok, msg = _outlier_message(pb, nit, n_lbfgs)
    status = Status.SUCCESS
    if not ok:
        status, why = _not_certified(srch, pb, maxiter)
        msg = "not certified: " + msg + why
    out = ReLUOutlierSolution(
        converged=bool(ok), status=status, message=msg, nit=nit, residual=pb.resid,
        abar=pb.A, zbar=pb.Z, t=pb.t, cost=float(pb.cost), dual_margin=float(pb.margin),
        residuals=pb.res_d, K0=K0, Y=Y, P_scale=Ps, T=T, lower_bound=float(pb.lower),
        duality_gap=float(pb.gap), upper_bound=float(pb.upper), t_bound=pb.t_bound,
    )
    report(out.message, force=True)
    raise_if_failed(out, throw)
    return out


def _best_of_restarts(srch, n, maxiter, n_restarts):
    """The sliding neurons from ``n_restarts`` random initialisations of ``n`` neurons (each
    :func:`_restart`): the annealing schedule of penalties (1, 0.1, 0.01, 0.001 above the final
    one, then ``lam_end``) takes the first stages of the budget (its last entries when the
    budget is shorter); every insertion then needs one more stage. Returns (the lowest-cost
    point whose KKT system was solved, else the one with the smallest residual; the stages and
    the L-BFGS steps over all restarts)."""
    lam_end = srch.lam_end
    lams = [lam for lam in (1.0, 1e-1, 1e-2, 1e-3) if lam > lam_end] + [lam_end]
    lams = lams[-min(len(lams), maxiter):]
    best = None
    nit = 0
    n_lbfgs = 0
    for restart in range(n_restarts):
        cand, stages, n_steps = _restart(srch, n, lams, maxiter, (restart, n_restarts))
        nit += stages
        n_lbfgs += n_steps
        cost, resid, ok_kkt = cand[3], cand[4], cand[6]
        if best is None or (ok_kkt and (not best[6] or cost < best[3] - 1e-9)) or \
                (not best[6] and not ok_kkt and resid < best[4]):
            best = cand
    return best, nit, n_lbfgs


def _restart(srch, n, lams, maxiter, restart):
    """One random initialisation of ``n`` neurons (``restart``: its index and the number of
    restarts, for the progress lines), slid through the penalties ``lams`` (:func:`_anneal`);
    then the KKT system solved exactly (:func:`._sliding._kkt_point`) and its multiplier priced
    (at T = 0, where it is not unique, with the multiplier search of the certificate). While
    it is not certified, a violating direction is known and the budget allows, the sliding
    continues from the polished neurons plus one inserted in that direction, at the final
    penalty only. Returns ((t, A, Z, cost, max residual, residuals, KKT solved, out of budget,
    certificate or None), stages, L-BFGS steps)."""
    fac, Y, Ps, T, tol, rng = srch.fac, srch.Y, srch.Ps, srch.T, srch.tol, srch.rng
    m, (Pn, rank) = Y.shape[1], fac.B.shape
    A = rng.standard_normal((n, m)) / np.sqrt(Ps)
    W = rng.standard_normal((n, rank)) / np.sqrt(Pn)
    stages = n_lbfgs = 0
    out_of_budget = False
    schedule = lams
    while True:
        A, W, stages, k_nit = _anneal(srch, A, W, schedule, stages, maxiter, restart)
        n_lbfgs += k_nit
        t, A, Z, W, res_d = _kkt_point(A, W, srch.lam_end, fac, Ps, Y, T, tol, srch.Pi)
        resid = max(res_d.values())
        ok_kkt = resid <= 10 * max(tol, 1e-8)
        margin, w_star = srch.price(t, W, srch.n_random)
        cert = None
        if ok_kkt and T == 0 and margin > 1.0 + 1e-6:  # t is not unique at T = 0
            cert = srch.certify(t, A, Z, srch.n_random)
            if cert.margin < margin:
                t, margin = cert.t, cert.margin
        certified = ok_kkt and margin <= 1.0 + 1e-6
        if certified or w_star is None:
            break
        if stages >= maxiter:
            out_of_budget = True
            break
        # sliding continues from the polished neurons plus one inserted in the violating
        # direction, at the final penalty only
        A, W = _insert(A, W, t, fac.B, Ps, w_star)
        schedule = [srch.lam_end]
    cost = 0.5 * (Ps * np.sum(A * A) + np.sum(Z * (Z @ fac.pinv)))
    if T > 0:
        cost += 0.5 * np.sum((np.maximum(Z, 0.0).T @ A - Y) ** 2) / T
    return (t, A, Z, float(cost), resid, res_d, ok_kkt, out_of_budget, cert), stages, n_lbfgs


def _anneal(srch, A, W, schedule, stages, maxiter, restart):
    """Slide the neurons (A, W) through the penalties of ``schedule``: at each penalty lam the
    weight-decay regression ``cost + |F - Y|^2/(2 lam)`` by L-BFGS (one stage,
    :func:`._sliding._penalised_stage`), then the dual margin of ``t = (Y - F)/lam`` searched
    and, while it exceeds 1 + 1e-3 and the budget leaves a stage for the insertion and the
    rest of the schedule, a neuron inserted in the most violating direction and the stage
    repeated. Returns (A, W, stages so far, L-BFGS steps)."""
    fac, B, Ps, Y, rng, report = srch.fac, srch.fac.B, srch.Ps, srch.Y, srch.rng, srch.report
    m = Y.shape[1]
    n_lbfgs = 0
    for j, lam in enumerate(schedule):
        while True:
            A, W, k_nit = _penalised_stage(A, W, m, B, Ps, Y, lam)
            stages += 1
            n_lbfgs += k_nit
            # an insertion needs one more stage here and leaves the rest of the schedule
            if stages + 1 + (len(schedule) - j - 1) > maxiter:
                break
            t = (Y - np.maximum(W @ B.T, 0.0).T @ A) / lam
            margin, w_star = _pricing(t @ srch.Pi, fac, Ps, rng, W, srch.n_random)
            report(f"restart {restart[0] + 1}/{restart[1]}, stage {stages}/{maxiter}: "
                   f"penalty {lam:.3g}, {A.shape[0]} neurons, dual margin {margin:.6f}")
            if margin <= 1.0 + 1e-3 or w_star is None:
                break
            A, W = _insert(A, W, t, B, Ps, w_star)
    return A, W, stages, n_lbfgs
