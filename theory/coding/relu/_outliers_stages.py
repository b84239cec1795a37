"""The stages of the outlier-only ReLU theory after its restarts (seed 000, notes §5.2 last
bullet [RECON]; :func:`._outliers.solve_relu_outliers`).

Source: A. van Meegen & H. Sompolinsky, *Coding schemes in neural networks learning
classification tasks*, Nat. Commun. 16, 3354 (2025) (seed 000), main text "Sparse coding scheme".

From the best KKT point of the sliding neurons to the point returned: its certificate (the dual
margin of its multiplier, at T = 0 the search over the free multipliers) and its dual lower
bound; the dual ascent that raises the bound (:mod:`._dual`); the feasible networks along the
known neuron directions, which give the upper bound; their compaction into KKT points of few
neurons (:func:`._sliding._compact_points`); the repricing of a bound that exceeds a feasible
cost; the choice of the point returned; and the message. The search context
(:class:`_Searches`: the problem and the random streams of the pricing searches) is shared with
the restarts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..._results import Status
from .._problem import _row_space_projector
from ._certificate import (
    _certify_kkt_point,
    _dual_lower_bound,
    _feasible_multiple,
    _local_maxima,
    _pricing,
    _reprice_lower,
)
from ._dual import _inout_refinement, _network_point, _prox_dual_ascent, _restricted_primal
from ._kkt import _kkt_residuals, _subgradient
from ._sliding import _compact_points

__all__: list[str] = []

GAP_RTOL = 1e-6  # a KKT point within this relative duality gap of the lower bound is certified
PROX_STEPS = 4  # proximal steps (of at most 10 restricted problems) of the dual ascent
INOUT_ITER = 40  # restricted problems of the in-out refinement (_relu_dual._inout)
# random starts per training input of the search that checks every margin a certificate rests
# on (as the dual ascent's verification): at P = 30 a search of 55 starts certified compact KKT
# points whose multipliers a search of 40 P starts finds violated by 2 % (docs/coding_relu.md)
N_VERIFY_PER_P = 40


class _Searches:
    """The outlier problem (factor ``fac`` of K0, targets Y, readout weight Ps = 1/sigma_a2,
    temperature T, KKT tolerance) with the random streams of its pricing searches.

    ``rng`` drives the solver's path; the verification searches, ``n_verify`` = N_VERIFY_PER_P P
    random starts each, draw from their own stream ``rng_v`` (spawned from ``rng``), so that
    they change the solver's path only where they find a violation (the path follows every
    random number it draws). ``n_random`` starts per ordinary search, ``Pi`` the projector onto
    the span of the targets, ``lam_end`` the final penalty of the annealing (T, or 1e-4 at
    T = 0)."""

    def __init__(self, fac, K0, Y, Ps, T, tol, rng, report):
        self.fac, self.K0, self.Y, self.Ps, self.T, self.tol = fac, K0, Y, Ps, T, tol
        self.rng, self.report = rng, report
        self.Pn = fac.P
        self.n_verify = N_VERIFY_PER_P * self.Pn  # random starts of every search a certificate rests on
        self.rng_v = rng.spawn(1)[0]
        self.Pi = _row_space_projector(Y)
        self.lam_end = T if T > 0 else 1e-4
        self.n_random = 10 + self.Pn // 2

    def certify(self, t, A, Z, n_start):
        """The multiplier search of :func:`._certificate._certify_kkt_point` at the KKT point
        (A, Z) with multiplier t: cutting planes from searches of ``n_start`` random starts, each
        accepted only after a verification search of ``n_verify`` starts."""
        fac, Ps, rng, rng_v, n_verify = self.fac, self.Ps, self.rng, self.rng_v, self.n_verify
        zero_tol = 1e-9 * max(1.0, float(np.max(np.abs(Z))))  # as for the KKT residuals
        theta0 = _subgradient(Z, A, t, fac, np.abs(Z) <= zero_tol)[0]
        return _certify_kkt_point(
            t, A, Z, fac, Ps, lambda tt, Wk: _local_maxima(tt, fac, Ps, rng, Wk, n_start),
            theta0=theta0, zero_tol=zero_tol,
            verify=lambda tt, Wk: _local_maxima(tt, fac, Ps, rng_v, Wk, n_verify))

    def price(self, t, W, n_start):
        """Dual margin by a search of ``n_start`` random starts, checked by one of ``n_verify``
        when it would certify (margin <= 1 + 1e-6). Returns (margin, violating w or None)."""
        margin, w_star = _pricing(t, self.fac, self.Ps, self.rng, W, n_start)
        if margin <= 1.0 + 1e-6:
            margin_v, w_v = _pricing(t, self.fac, self.Ps, self.rng_v, W, self.n_verify)
            if margin_v > margin:
                margin, w_star = margin_v, w_v
        return margin, w_star


@dataclass
class _PointAndBounds:
    """The point to return and what is known of the global minimum of the cost, refined stage by
    stage (names as in :func:`._outliers.solve_relu_outliers`).

    The point: multiplier t, readouts A, preactivations Z, cost, max KKT residual ``resid`` and
    its parts ``res_d``, whether its KKT system was solved (``ok_kkt``) and its restart ran out
    of budget, the certificate ``cert`` of its multipliers (or None), its dual margin and
    whether it is certified (``ok``). The bounds: ``lower`` (weak duality) with its
    dual-feasible multiplier ``t_bound``, ``t_low`` the multiplier of a bound raised beyond the
    point's own (or None), ``gap`` = (cost - lower) / cost, ``upper`` the cost of the cheapest
    feasible network (``point_upper``: the point's own cost when it is feasible), the known
    neuron directions ``W_known`` (readouts ``V_known``), the restricted duals of the ascent
    (``ascent``, None without it), the group-lasso ``network`` (A, Z, cost), the preactivations
    of every feasible network, and the best compact KKT point with the number tried. Then the
    choice: the cost of the sliding-neuron point and whether a compact point or the network
    replaced it."""

    t: np.ndarray
    A: np.ndarray
    Z: np.ndarray
    cost: float
    resid: float
    res_d: dict
    ok_kkt: bool
    out_of_budget: bool
    cert: object
    margin: float
    ok: bool
    lower: float
    t_bound: np.ndarray
    gap: float
    W_known: np.ndarray
    V_known: np.ndarray | None = None
    t_low: np.ndarray | None = None
    ascent: int | None = None
    out_tol: float = float("nan")
    upper: float = float("inf")
    point_upper: float = float("inf")
    network: tuple | None = None
    feasible_Z: list = field(default_factory=list)
    compact: tuple | None = None
    n_compact: int = 0
    point_cost: float = float("nan")
    returned_compact: bool = False
    returned_network: bool = False


def _certify_best(srch, best):
    """The best restart's point (the tuple of :func:`._outliers._restart`), priced again by a
    wider search (``n_random + P`` starts); at T = 0 a violation the certificate had not seen
    certifies again with it. Returns its :class:`_PointAndBounds` with the dual lower bound of
    its multiplier."""
    t, A, Z, cost, resid, res_d, ok_kkt, out_of_budget, cert = best
    fac, Y, T = srch.fac, srch.Y, srch.T
    margin, _ = srch.price(t, fac.to_w(Z), srch.n_random + srch.Pn)
    if ok_kkt and T == 0 and margin > 1.0 + 1e-6 and (cert is None or cert.margin <= 1.0 + 1e-6):
        # the wider search found a violation the certificate had not seen: certify again with it
        cert = srch.certify(t, A, Z, srch.n_random + srch.Pn)
        if cert.margin < margin:
            t, margin = cert.t, cert.margin
    ok = ok_kkt and margin <= 1.0 + 1e-6
    lower = _dual_lower_bound(t, Y, T, margin)
    t_bound = _feasible_multiple(t, Y, T, margin)  # the multiplier of ``lower``
    gap = (cost - lower) / cost if cost > 0 else 0.0
    return _PointAndBounds(t, A, Z, cost, resid, res_d, ok_kkt, out_of_budget, cert, margin, ok,
                           lower, t_bound, gap, W_known=fac.to_w(Z))


def _dual_ascent(srch, pb):
    """Raise the lower bound by proximal column generation on the convex dual, then narrow
    [lower, upper] by in-out column generation on its directions (:mod:`._dual`); the point is
    then certified when its gap is within GAP_RTOL."""
    fac, Y, Ps, T, rng, Pn, report = srch.fac, srch.Y, srch.Ps, srch.T, srch.rng, srch.Pn, srch.report
    cost = pb.cost
    t_asc, lower_asc, pb.ascent, pb.W_known = _prox_dual_ascent(
        fac, Y, Ps, T, pb.t, pb.W_known, rng, 2 * Pn, n_outer=PROX_STEPS, n_inner=10,
        max_atoms=20 * Pn, target=cost, gap_rtol=GAP_RTOL, report=report)
    if lower_asc < cost * (1 - GAP_RTOL):
        t_io, lower_io, n_io, pb.W_known, pb.V_known, _ = _inout_refinement(
            fac, Y, Ps, T, t_asc, pb.W_known, rng, 2 * Pn, n_iter=INOUT_ITER, target=cost,
            gap_rtol=GAP_RTOL, report=report)
        pb.ascent += n_io
        if lower_io > lower_asc:  # keep the multiplier of the better bound
            t_asc, lower_asc = t_io, lower_io
    if lower_asc > pb.lower:
        pb.lower, pb.gap = lower_asc, (cost - lower_asc) / cost
        pb.t_low = pb.t_bound = t_asc
    pb.ok = pb.ok_kkt and pb.gap <= GAP_RTOL


def _feasible_upper_bound(srch, pb):
    """The upper bound: the point's cost when it is feasible (interpolates, or T > 0), and when
    it is not certified the group-lasso network over the known directions when that is cheaper
    (:func:`._dual._restricted_primal`, :func:`._dual._network_point`)."""
    fac, Y, Ps, T = srch.fac, srch.Y, srch.Ps, srch.T
    pb.out_tol = out_tol = 1e-8 * float(np.abs(Y).max())
    pb.upper = pb.cost if (T > 0 or pb.res_d["output"] <= out_tol) else float("inf")
    pb.point_upper = pb.upper  # the point's cost when it is feasible: what another point must beat
    pb.feasible_Z = [pb.Z] if np.isfinite(pb.upper) else []  # preactivations of the feasible networks
    if not pb.ok:  # a feasible network along the known directions (_relu_dual._restricted_primal)
        u, u_res, V_net = _restricted_primal(fac, pb.W_known, Y, Ps, T, V0=pb.V_known,
                                             readouts=True)
        if u_res <= out_tol and u < pb.upper:
            pb.upper = u
            pb.network = _network_point(fac, pb.W_known, V_net, Ps, Y, T, out_tol)
            if pb.network is not None:
                pb.feasible_Z.append(pb.network[1])


def _compact_network(srch, pb):
    """Merge the network's clusters of neurons and solve the KKT system of the merged few
    (:func:`._sliding._compact_points`): each such point's multiplier gives a dual bound; the
    cheapest is kept when it is cheaper than the sliding-neuron KKT point (if that interpolates)
    and no dearer than the network (within GAP_RTOL: few neurons rather than many for that
    much). Stops once the kept point is within GAP_RTOL of the bound."""
    fac, Y, Ps, T, Pn = srch.fac, srch.Y, srch.Ps, srch.T, srch.Pn
    network = pb.network
    for t_c, A_c, Z_c, cost_c, res_c in _compact_points(network[0], network[1], fac, Ps, Y,
                                                        T, srch.tol, srch.lam_end, srch.Pi):
        pb.n_compact += 1
        margin_c, _ = srch.price(t_c, fac.to_w(Z_c), srch.n_random + Pn)
        if T == 0 and margin_c > 1.0 + 1e-6:  # t is not unique at T = 0
            cert_c = srch.certify(t_c, A_c, Z_c, srch.n_random + Pn)
            if cert_c.margin < margin_c:
                t_c, margin_c = cert_c.t, cert_c.margin
        lower_c = _dual_lower_bound(t_c, Y, T, margin_c)
        if lower_c > pb.lower:
            pb.lower, pb.t_low = lower_c, t_c
            pb.t_bound = _feasible_multiple(t_c, Y, T, margin_c)
        if T > 0 or res_c["output"] <= pb.out_tol:
            pb.upper = min(pb.upper, cost_c)
            pb.feasible_Z.append(Z_c)
        compact = pb.compact
        if (cost_c < pb.point_upper * (1 - 1e-9) and cost_c <= network[2] * (1 + GAP_RTOL)
                and (compact is None or cost_c < compact[3])):
            pb.compact = (t_c, A_c, Z_c, cost_c, margin_c, res_c)
        srch.report(f"compact KKT point {pb.n_compact}: {A_c.shape[0]} neurons, cost "
                    f"{cost_c:.10g}, dual margin {margin_c:.8f}, lower bound {pb.lower:.10g}")
        if pb.compact is not None and pb.compact[3] - pb.lower <= GAP_RTOL * pb.compact[3]:
            break


def _reprice_bound(srch, pb):
    """Weak duality fails (the bound exceeds the cost of a feasible network): the bound's
    multiplier violates the dual bound on some neuron of a cheaper feasible network, a
    direction the pricing search missed. Price it again from those neurons (and the known
    directions) and keep the bound that survives (:func:`._certificate._reprice_lower`)."""
    lower, t_fix = _reprice_lower(srch.fac, srch.Ps, srch.Y, srch.T,
                                  [pb.t] + ([pb.t_low] if pb.t_low is not None else []),
                                  pb.W_known, pb.feasible_Z, srch.rng_v, srch.n_verify)
    pb.lower = lower
    if pb.t_low is not None:
        pb.t_low = t_fix
    pb.t_bound = t_fix
    pb.gap = max(pb.cost - lower, 0.0) / pb.cost if pb.cost > 0 else 0.0
    pb.ok = pb.ok and pb.gap <= GAP_RTOL


def _choose_returned(srch, pb):
    """The point returned: the cheapest compact KKT point (with its own multiplier) when there
    is one, else the group-lasso network when it is cheaper than the sliding-neuron KKT point
    (with the lower bound's multiplier, its margin checked by a verification search and its KKT
    residuals reported), else that point; certified when within GAP_RTOL of the bound."""
    fac, Y, Ps, T = srch.fac, srch.Y, srch.Ps, srch.T
    pb.point_cost = pb.cost
    pb.returned_compact = pb.compact is not None
    pb.returned_network = (not pb.returned_compact and pb.network is not None
                           and pb.network[2] < pb.point_upper * (1 - 1e-9))
    if pb.returned_compact:
        # a KKT point (with its own multiplier), cheaper than or as cheap as the network
        pb.t, pb.A, pb.Z, pb.cost, pb.margin, pb.res_d = pb.compact
        pb.resid = max(pb.res_d.values())
        pb.gap = max(pb.cost - pb.lower, 0.0) / pb.cost
        pb.ok = pb.gap <= GAP_RTOL
    elif pb.returned_network:
        # return the cheaper network (with the lower bound's multiplier) instead of the point
        pb.A, pb.Z, pb.cost = pb.network
        t = pb.t_low if pb.t_low is not None else _feasible_multiple(pb.t, Y, T, pb.margin)
        pb.t = t
        pb.margin, _ = _pricing(t, fac, Ps, srch.rng_v, fac.to_w(pb.Z), srch.n_verify)
        if pb.margin > 1.0 + 1e-6:  # this search refutes the bound's multiplier: scale it down
            pb.lower = min(pb.lower, _dual_lower_bound(t, Y, T, pb.margin))
            pb.t_bound = _feasible_multiple(t, Y, T, pb.margin)
        zero_tol = 1e-9 * max(1.0, float(np.max(np.abs(pb.Z))))
        pb.res_d = _kkt_residuals(t, pb.A, pb.Z, fac, Ps, Y, T, zero_tol)
        pb.resid = max(pb.res_d.values())
        pb.upper = min(pb.upper, pb.cost)
        pb.gap = max(pb.cost - pb.lower, 0.0) / pb.cost
        pb.ok = pb.gap <= GAP_RTOL  # weak duality alone: a feasible network this close to the bound


def _outlier_message(pb, nit, n_lbfgs):
    """The message of the point returned (cost, residual, margin, bounds, work; what replaced
    the sliding-neuron point, a cheaper network, a bound above a feasible cost, the dual
    ascent), and whether it stays certified (not when the bound exceeds a feasible cost)."""
    A, cost, lower, upper, gap, ok = pb.A, pb.cost, pb.lower, pb.upper, pb.gap, pb.ok
    known = ("the directions of the dual ascent" if pb.ascent is not None else
             "the KKT point's own directions")
    replaced = pb.returned_compact or pb.returned_network  # not the sliding-neuron KKT point
    msg = (f"converged: {A.shape[0]} outliers, cost {cost:.10g}, KKT residual {pb.resid:.1e}, "
           f"dual margin {pb.margin:.8f}, dual lower bound {lower:.10g} (relative gap "
           f"{gap:.2e}), feasible upper bound {upper:.10g} ({nit} stages, {n_lbfgs} L-BFGS "
           "steps)")
    if pb.returned_network:
        msg += (f"; returned: the group-lasso network over {known} ({A.shape[0]} neurons), " +
                (f"cheaper than the KKT point of the sliding neurons ({pb.point_cost:.10g})"
                 if np.isfinite(pb.point_upper) else
                 f"feasible, where the point of the sliding neurons (cost {pb.point_cost:.10g}) "
                 "does not interpolate") +
                "; it is a KKT point only to the residual shown")
    if pb.returned_compact:
        msg += (f"; returned: a KKT point of {A.shape[0]} neurons from merging the clustered "
                f"neurons of the group-lasso network over {known} "
                f"({pb.network[0].shape[0]} neurons, cost {pb.network[2]:.10g}; the "
                f"sliding-neuron KKT point cost {pb.point_cost:.10g})")
    if upper < cost * (1 - 1e-9):
        msg += (f"; a network along the known neuron directions costs {upper:.10g} < cost, so the "
                "returned point is not the global minimum, which lies in [lower bound, upper "
                f"bound] (relative width {max(upper - lower, 0.0) / upper:.2e})")
    if lower > upper * (1 + 1e-12):
        ok = False  # the bound is known to be wrong at this level: no certificate from it
        msg += (f"; the lower bound exceeds the cost of a feasible network by "
                f"{(lower - upper) / upper:.1e} (relative): the pricing search missed a violating "
                "direction, so the lower bound is uncertain at about that level")
    if pb.ascent is not None:
        msg += (f"; dual ascent (proximal, then in-out; {pb.ascent} restricted duals) " +
                (f"and {pb.n_compact} merged KKT points " if pb.n_compact else "") +
                "raised the lower bound" +
                (f" to within {gap:.1e} of the cost: certified" if ok else ""))
        cert = pb.cert
        if (ok and not replaced and cert is not None
                and cert.cut_bound > 1.0 + 1e-6 and cert.exact):
            msg += (" (no multiplier of this KKT point is exactly dual feasible, so a lower cost "
                    "may exist, by at most the gap)")
    return ok, msg


def _not_certified(srch, pb, maxiter):
    """Why the point returned is not certified (appended to the message): the dual margin, the
    certificate's verdict, the open gap of a replacing point, an infeasible interpolation on a
    singular K0, the spent budget; with the status (MAX_ITERATIONS when the budget stopped the
    sliding neurons, else NUMERICAL_FAILURE)."""
    cert, margin, gap, res_d, fac = pb.cert, pb.margin, pb.gap, pb.res_d, srch.fac
    replaced = pb.returned_compact or pb.returned_network
    why = ("; dual margin > 1: t violates the dual bound, so global optimality is not "
           "certified (another neuron direction may lower the cost, by at most the gap)"
           if margin > 1.0 + 1e-6 else "; KKT system not solved to tolerance")
    if cert is not None and margin > 1.0 + 1e-6:
        if cert.cut_bound > 1.0 + 1e-6 and cert.exact:
            why = (f"; not the global minimum: no multiplier t consistent with this KKT point "
                   f"({cert.free_dims} free dimensions) satisfies the dual bound even on "
                   f"{cert.n_cuts} directions (min-max margin {cert.cut_bound:.8f} > 1), so "
                   "a lower cost exists (by at most the gap); try more n_restarts")
        else:
            why += (f"; the certificate search ({cert.free_dims} free dimensions of t, "
                    f"{cert.rounds} cutting-plane rounds, {cert.n_cuts} directions) did not "
                    "settle it")
    if replaced:  # only the gap is open
        why = (f"; the returned {'point' if pb.returned_compact else 'network'} is within "
               f"{gap:.1e} of the lower bound, not within {GAP_RTOL:g} " +
               ("(the dual ascent's budget is spent; neither the search over neuron "
                "directions nor the merged network's multipliers closed the gap)"
                if pb.ascent is not None else
                "(dual_ascent=False: the dual ascent would raise the lower bound)"))
    if fac.singular and srch.T == 0 and res_d["output"] > 1e-6 * float(np.max(np.abs(srch.Y))):
        # the likely reason on a singular K0: no interpolant exists (t diverges with 1/lam)
        why = (f"; the output constraint is violated by {res_d['output']:.2e}: K0 is "
               f"singular (rank {fac.r} < P = {srch.Pn}), and relu(z) with z in the range of K0 "
               "need not span the targets, so the interpolation problem is probably "
               "infeasible (T > 0, regression, always has a solution)")
    if pb.out_of_budget and not replaced:
        status = Status.MAX_ITERATIONS
        why += f" (the budget of maxiter={maxiter} stages per restart is used up; raise maxiter)"
    else:
        status = Status.NUMERICAL_FAILURE
        why += (" (the search found no insertion direction; try more n_restarts)"
                if margin > 1.0 + 1e-6 and not replaced
                else "")
    return status, why
