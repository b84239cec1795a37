"""Redundant coding in sigmoidal non-lazy networks: the orthogonal toy task (L = 1, T >= 0).

Source: A. van Meegen & H. Sompolinsky, *Coding schemes in neural networks learning
classification tasks*, Nat. Commun. 16, 3354 (2025) (seed 000), main text "Redundant coding
scheme" and Figs. 2, 4 [MT]; the self-consistency equations are the reconstruction of our notes
``spec/coding_schemes.md`` §2.3-2.4 and §4.2-4.3 [RECON] (the supplement B was not available).

Setting: one hidden layer, phi(z) = [1 + erf(sqrt(pi) z/2)]/2, readout prior variance
sigma_a^2 = 1/P, orthonormal inputs (K0 = I), class fractions rho_c and one target vector y_c per
class (k classes, m outputs; the inputs of the toy are orthonormal columns, so no input
kernel is passed). The single-neuron posterior (poster form [MT/POSTER]) is

    P(a) = sum_gamma P_gamma delta(a - a_gamma),   P(z_mu | a) ∝ N(z_mu|0,1) exp(h_c phi(z_mu)),
    h_c = t_c . a   for input mu of class c,

with the class-wise conjugate field t (m x m, row c = t_c). With
``g(a) = -|a|^2/2 + sum_c rho_c psi(t_c . a)`` and ``psi(h) = log E exp(h phi(z))``
(:mod:`richlazy.theory.kernels._tilted`), the P -> infinity equations are [RECON, notes §4.3]

    stationarity   a_gamma = sum_c rho_c t_c psi'(t_c . a_gamma)          (grad g(a_gamma) = 0)
    degeneracy     g(a_1) = ... = g(a_n) = max_a g(a)                      (global maxima tie)
    output         sum_gamma P_gamma a_gamma^r psi'(t_c . a_gamma) = y_c^r,   sum P_gamma = 1.

They are the optimality conditions of the convex problem
``min_t Phi_inf(t) = max_a g_t(a) - sum_c rho_c t_c . y_c`` (notes §2.4): the P_gamma are the
convex-combination coefficients of the gradients of the tied maxima. A neuron's code is
``[psi'(h_c) > 1/2]_c``, i.e. ``h_c > 0`` (mean activation above phi(0) = 1/2).

Finite P (notes §4.3 last bullet, the "finite P correction" of the Fig. 4a caption): for the toy
the readout marginal is exactly ``P(a) ∝ exp(P g_t(a))`` (N -> infinity, any P); we minimise the
smooth convex ``Phi_P(t) = (1/P) log int da exp(P g_t(a)) - sum_c rho_c t_c . y_c`` with the
a-integral done by adaptive Gauss-Hermite quadrature around every local maximum (Laplace
Gaussian as weight; beyond-Laplace corrections included). Its stationarity is the exact finite-P
output constraint ``<a^r psi'(t_c . a)>_{P(a)} = y_c^r``.

Finite temperature (rescaled T of notes §1.2, loss weight N/(2T)): the action of notes §2.3
gains ``(T/2)|t|^2``, i.e. ``(T/2) sum_c rho_c |t_c|^2`` per input, so the outer problem becomes
``min_t Phi(t) + (T/2) sum_c rho_c |t_c|^2`` (still convex, now strongly) and the output
constraint ``sum_gamma P_gamma a_gamma psi'(t_c . a_gamma) = y_c - T t_c`` (notes §2.3 (S1), the
same form as the linear network's ``K0 t U + T t = Y``, notes §3.6) [RECON]. Raising T shrinks t,
flattens g, and merges the codes: above a critical temperature T_c one code is left (seed 000
supplement E, "above T_c no redundant coding scheme" [MT]; :func:`locate_critical_temperature`).

``fluctuations=False`` replaces psi by the fluctuation-free psi_0 (z|a fluctuations neglected,
notes §4.4); this is the toy limit of :func:`solve_sigmoid_general` (general inputs K0,
:mod:`._sigmoid_general`, notes §4.4). The single-neuron core shared with the other coding solvers
is :mod:`._toy_core`, the finite-P quadrature :mod:`._sigmoid_finite_p`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..._results import SolverStatus, Status, raise_if_failed
from ...checks import (
    as_float_array,
    as_rng,
    check_alloc,
    check_int,
    check_nonneg_float,
    check_pos_float,
    check_real,
    renamed_option,
)
from ...kernels._tilted import _check_tilted_activation, _saddle_flat, tilted_density
from .._code_core import (
    _anneal_and_refine,
    _CodeProblem,
    _exact_system,
    _join_tied,
    _linear_part,
    _residual_parts,
    _Search,
    _select_from_system,
    _smoothed,
    _split_others,
    _ToyNeuron,
)
from .._problem import (
    _check_anneal,
    _check_labels,
    _check_nodes,
    _check_search_starts,
    _check_start,
    _check_toy_problem,
)
from ._finite_p import _code_summary, _finite_P_solve, _peak_weights

__all__ = ["SigmoidToySolution", "solve_sigmoid_toy", "toy_class_targets"]


@dataclass(frozen=True)
class SigmoidToySolution(SolverStatus):
    """Mean-field posterior of the sigmoidal network on the orthogonal toy task (notes §4.3).

    Attributes (n codes, k classes, m outputs; k = m for one-hot tasks)
    ----------
    t : (k, m)              conjugate field, row c = t_c (the same for every input of class c).
    P_gamma : (n,)          fraction of neurons using code gamma (>= 0, sums to 1).
    a_gamma : (n, m)        their readout vectors (the posterior is sum P_gamma delta(a - a_gamma)).
    h : (n, k)              tilts h[gamma, c] = t_c . a_gamma.
    mean_activations : (n, k)  <phi(z)> on class c for code gamma: psi'(h) (psi_0'(h) without
                            fluctuations).
    activation_variances : (n, k)  Var(phi(z) | a_gamma) on class c: psi''(h) (0 without
                            fluctuations, where z|a is a delta at the mode).
    codes : (n, k) bool     mean_activations > threshold (the code, e.g. 1-1-0).
    preactivation_modes : (n, k)  maximiser z* of -z^2/2 + h phi(z) (the mode of P(z|a)).
    g_value : float         the tied maximal value of g (P = None) / log-partition per P.
    residuals : dict        max-abs residuals: "stationarity", "degeneracy", "output",
                            "normalisation" (P = None) or "output" and "stationarity" (finite P).
    global_gap : float      max g over the other local maxima minus the tied value (< 0: the
                            codes are the global maxima, as required).
    other_maxima : (k, m)   the other (metastable) local maxima of g at the solution, and
    other_g : (k,)          their g values (candidate "unlikely" coding schemes, MT).
    readout_covariances : (n, m, m)  finite P only: Laplace covariance (-P grad^2 g)^-1 of each
                            peak (zeros for P = None).
    weight_null_space : (n, k)  P = None: directions along which the weights could move without
                            violating any equation (k = 0: unique). For k > 0 the reported
                            P_gamma is the P -> infinity limit of the finite-P weights [OURS].
    ratios, class_targets, P, activation, fluctuations, threshold : the problem.
    T : float               the rescaled temperature (0: interpolation).
    code_fractions : dict   code label ('1-1-0') -> fraction of neurons whose thresholded class
                            mean activations show that code. P = None: the summed P_gamma of the
                            peaks with that code. Finite P: the posterior mass, with a neuron's
                            code read from its empirical class means over the P rho_c inputs of
                            each class, as a sampler reads it (central-limit approximation; see
                            the finite-P module). Codes here can be missing from ``codes``: at
                            finite P the tails of the peaks cross the threshold.
    code_readouts : dict    code label -> (m,) mean readout of the neurons with that code.
    code_activations : dict code label -> (k,) mean empirical class activations of those neurons.
    """

    t: np.ndarray
    P_gamma: np.ndarray
    a_gamma: np.ndarray
    h: np.ndarray
    mean_activations: np.ndarray
    activation_variances: np.ndarray
    codes: np.ndarray
    preactivation_modes: np.ndarray
    g_value: float
    residuals: dict
    global_gap: float
    other_maxima: np.ndarray
    other_g: np.ndarray
    readout_covariances: np.ndarray
    weight_null_space: np.ndarray
    ratios: np.ndarray
    class_targets: np.ndarray
    P: int | None
    activation: str
    fluctuations: bool
    threshold: float
    mean_output_classes: np.ndarray = field(repr=False, default=None)
    T: float = 0.0
    code_fractions: dict = field(repr=False, default_factory=dict)
    code_readouts: dict = field(repr=False, default_factory=dict)
    code_activations: dict = field(repr=False, default_factory=dict)

    @property
    def n_codes(self) -> int:
        return int(self.P_gamma.size)

    def code_strings(self) -> list[str]:
        """Codes as strings like '1-1-0' (class order 0..m-1), one per gamma."""
        return ["-".join("1" if b else "0" for b in row) for row in self.codes]

    def mean_output(self, labels) -> np.ndarray:
        """Posterior-mean network output on training inputs with the given class labels (P, m):
        ``f_r(x_mu) = sum_gamma P_gamma a_gamma^r psi'(t_c . a_gamma)``, c = labels[mu] (P = None;
        at finite P the exact ``<a^r psi'(t_c . a)>_{P(a)}``). Equals the targets at T = 0 and
        ``y_c - T t_c`` at T > 0."""
        lab = _check_labels(labels, self.t.shape[0])
        return self.mean_output_classes[lab]

    def feature_kernel(self, labels) -> np.ndarray:
        """Posterior-averaged feature kernel K_1 on training inputs (P x P), Eq. (2) [MT]:

        ``K_1(mu, nu) = sum_gamma P_gamma <phi(z_mu) phi(z_nu)>_gamma``; given a_gamma the
        preactivations of different inputs are independent (K0 = I), so for mu != nu it is
        ``sum_gamma P_gamma psi'_c psi'_c'`` and on the diagonal
        ``sum_gamma P_gamma (psi''_c + psi'_c^2)`` (c, c' the classes of mu, nu)."""
        lab = _check_labels(labels, self.t.shape[0])
        M, V, w = self.mean_activations, self.activation_variances, self.P_gamma
        Kc = np.einsum("g,gc,gd->cd", w, M, M)
        diag = np.einsum("g,gc->c", w, V + M * M)
        K = Kc[lab][:, lab]
        K[np.diag_indices_from(K)] = diag[lab]
        return K

    def preactivation_density(self, z, gamma, c):
        """Conditional preactivation posterior P(z_mu | a_gamma) on an input of class c, the
        tilted density ``N(z|0,1) exp(h phi(z) - psi(h))``, h = t_c . a_gamma (Fig. 4c) [RECON]."""
        gamma = check_int("gamma", gamma, minimum=0)
        c = check_int("c", c, minimum=0)
        n, m = self.h.shape
        if gamma >= n:
            raise ValueError(f"gamma must be in 0..{n - 1}, got {gamma}")
        if c >= m:
            raise ValueError(f"c must be in 0..{m - 1}, got {c}")
        if not self.fluctuations:
            raise ValueError(
                "preactivation_density needs fluctuations=True; without fluctuations P(z|a) is a "
                "delta at preactivation_modes[gamma, c]"
            )
        return tilted_density(z, self.h[gamma, c], activation=self.activation)

    def readout_marginal_density(self, a, r):
        """Density of the readout component a^r (Fig. 4a). P = None: not a density (deltas),
        raises. Finite P: Laplace mixture ``sum_gamma P_gamma N(a | a_gamma^r, Sigma_gamma[r,r])``."""
        r = check_int("r", r, minimum=0)
        if r >= self.t.shape[1]:
            raise ValueError(f"r must be in 0..{self.t.shape[1] - 1}, got {r}")
        if self.P is None:
            raise ValueError("readout_marginal_density needs a finite P (P=None gives deltas)")
        a = as_float_array("a", a)
        var = self.readout_covariances[:, r, r]
        mu = self.a_gamma[:, r]
        dens = np.exp(-0.5 * (a[..., None] - mu) ** 2 / var) / np.sqrt(2 * np.pi * var)
        return (dens @ self.P_gamma)[()]



def toy_class_targets(m: int, *, y_plus: float = 1.0, y_minus: float = 0.0) -> np.ndarray:
    """Class target vectors of the toy task (seed 000 §Main theoretical result [MT]): row c is
    y_c with y_c^c = y_plus and y_c^r = y_minus for r != c (m classes, m outputs). An ``m``
    whose matrix exceeds 16 GiB raises ValueError."""
    m = check_int("m", m, minimum=1)
    check_alloc("m", 2 * m * m, what="the (m, m) target matrix")
    return np.where(np.eye(m, dtype=bool), check_real("y_plus", y_plus), check_real("y_minus", y_minus))


def _global_check(neuron, t, A_active, g_tied, rng, n_random):
    """Search all maxima of g_t (``n_random`` random starts): gap of the best non-code one."""
    search = _Search(neuron, n_random, rng)
    search.known = A_active.copy()
    A, g, _ = search.maxima(t, full=True)
    return _split_others(A, g, A_active, g_tied, 1e-5)


def _weight_system(neuron, t, A, Yc, T):
    """Linear system M w = b for the code weights at fixed (t, a_gamma): rows are the output
    constraint sum_gamma w_gamma rho_c psi'(h_c) a_gamma = rho_c (y_c - T t_c) and sum w = 1."""
    rho, k, m = neuron.rho, neuron.k, neuron.m
    p1 = neuron.psi(A @ t.T)[1]
    G = (rho[None, :, None] * p1[:, :, None] * A[:, None, :]).reshape(A.shape[0], k * m)
    M = np.vstack([G.T, np.ones(A.shape[0])])
    b = np.concatenate([(rho[:, None] * (Yc - T * t)).ravel(), [1.0]])
    return M, b


def _select_weights(neuron, t, A, Pg, Yc, T):
    """Resolve non-unique code weights of the toy (see :func:`_toy_core._select_from_system`)."""
    M, b = _weight_system(neuron, t, A, Yc, T)
    hess = neuron.evaluate(A, t)[2]
    return _select_from_system(M, Pg, hess)


def _solve_infinite_P(rho, Yc, neuron, neuron_fast, t0, betas, rng, n_random, tol, T):
    """Annealed smoothing + exact refinement (notes §4.3 steps 2-5). Returns a dict."""
    k, m = Yc.shape
    km = k * m
    search = _Search(neuron_fast, n_random, rng)

    def finish(x, n, beta, nit, resid):
        tt = x[:km].reshape(k, m)
        AA = x[km: km + n * m].reshape(n, m)
        Pg = x[km + n * m:]
        g_tied = float(neuron.evaluate(AA, tt, order=0)[0][0])
        gap, other, other_g = _global_check(neuron, tt, AA, g_tied, rng, 4 * n_random)
        if gap > 1e-9:
            return dict(converged=False, message=(f"solution with {n} codes is not global: another "
                                                  f"maximum of g is higher by {gap:.3g}"))
        AA, Pg, other, other_g, gap = _join_tied(AA, Pg, other, other_g, g_tied)
        Pg, null = _select_weights(neuron, tt, AA, Pg, Yc, T)
        msg = (f"converged: {AA.shape[0]} tied codes (smoothing beta={beta:g}, exact "
               f"refinement residual {resid:.1e})")
        if null.shape[1]:
            msg += (f"; the code weights are not unique ({null.shape[1]}-parameter family, "
                    f"see weight_null_space); reported: the P -> infinity limit of the "
                    f"finite-P weights (maximum entropy relative to det(-grad^2 g)^(-1/2))")
        return dict(t=tt, A=AA, Pg=Pg, g=g_tied, gap=gap, other=other, other_g=other_g,
                    nit=nit, converged=True, beta=beta, null=null, message=msg)

    prob = _CodeProblem(
        shape=(k, m), dim=m, search=search,
        smoothed=lambda t_flat, beta: _smoothed(t_flat, search, Yc, beta, T),
        system=lambda x, n: _exact_system(x, neuron, Yc, n, T),
        method="BFGS", options={"gtol": 1e-7}, hybr_maxfev=400, lm_maxiter=2000, finish=finish)
    return _anneal_and_refine(prob, t0, betas, n_random, tol)


def solve_sigmoid_toy(
    ratios,
    class_targets=None,
    *,
    P: int | None = None,
    T: float = 0.0,
    activation: str = "sigmoid_erf",
    fluctuations: bool = True,
    threshold: float = 0.5,
    t0=None,
    anneal=(50.0, 500.0, 5000.0, 1e5),
    n_random: int = 20,
    n_nodes: int = 121,
    search_nodes: int = 41,
    quad_nodes: int = 8,
    seed=0,
    atol: float | None = None,
    maxiter: int = 100,
    throw: bool = False,
    tol: float | None = None,
) -> SigmoidToySolution:
    """Self-consistent redundant code of a sigmoidal non-lazy network on the orthogonal toy task.

    Solves the equations of the notes §4.3 [RECON] (module docstring): P = None is the P -> inf
    limit (readouts are exact deltas at the tied global maxima a_gamma of
    ``g(a) = -|a|^2/2 + sum_c rho_c psi(t_c . a)``); a finite P gives the finite-P posterior
    ``P(a) ∝ exp(P g_t(a))`` with t from the exact finite-P output constraint (Fig. 4a caption
    "finite P correction", notes §4.3 last bullet).

    Algorithm (notes §4.3 / §11): all local maxima of g by multi-start Newton (warm starts, the
    2^k saturated-code vertices ``sum_c rho_c b_c t_c`` and ``n_random`` uniform starts); the
    convex outer problem smoothed as ``(1/beta) log sum_gamma exp(beta g_gamma)`` and minimised
    by BFGS for beta in ``anneal`` until the maxima with non-negligible weight solve the exact
    system (stationarity + degeneracy + output + normalisation, ``scipy.optimize.root`` with the
    analytic Jacobian) with P_gamma >= 0 and no other maximum higher (global check with
    4 n_random extra starts). Finite P: Newton on the convex Phi_P from the P = inf solution.

    Parameters
    ----------
    ratios : (k,) or ToyTask    class fractions rho_c (> 0, sum 1), or a :class:`ToyTask`
                                holding both (then leave out ``class_targets``).
    class_targets : (k, m)      row c = target vector y_c of class c (see toy_class_targets);
                                m = number of outputs; usually k = m (one-hot tasks), but e.g.
                                Fig. 1 has k = 2 classes and m = 1 output (y = +-1).
    P : int or None             number of training inputs; None = P -> infinity.
    T : float >= 0              rescaled temperature of the posterior (notes §1.2, loss weight
                                N/(2T)); T > 0 adds ``(T/2) sum_c rho_c |t_c|^2`` to the convex
                                outer objective, so the output constraint becomes
                                ``<a psi'_c> = y_c - T t_c`` (notes §2.3 (S1)) and the mean output
                                misses the targets by ``T t_c``. Default 0 (interpolation).
    activation : str            "sigmoid_erf" (paper), "erf", or "linear" (finite P only: the
                                Gaussian linear network, a check against solve_linear_network).
    fluctuations : bool         keep the z|a fluctuations (psi) or neglect them (psi_0, notes §4.4).
    threshold : float           code threshold on the mean activation (1/2 = phi(0)).
    t0 : (k, m), optional       starting conjugate field (default 2 (Y - mean Y)).
    anneal : sequence of float  smoothing parameters beta tried in turn.
    n_random : int              random starts of the maximum search (ValueError when 4 n_random
                                starts with their work arrays would exceed 16 GiB).
    seed : int or Generator     randomness of those starts (:func:`richlazy.theory.checks.as_rng`).
    n_nodes, search_nodes       Gauss-Hermite nodes for psi: final equations / during the search
                                (ValueError when the rule's n x n matrix would exceed 16 GiB).
    quad_nodes : int            finite P: Gauss-Hermite nodes per dimension of the per-peak
                                readout quadrature, used for m > 3 outputs, the linear
                                activation, or a P so large that the lattice used otherwise
                                would be too fine.
    atol : float                max-abs residual tolerance (default 1e-10; ``tol=`` is its
                                deprecated spelling).
    maxiter : int >= 1          finite P: Newton steps (one Jacobian solve + its line search each);
                                running out gives Status.MAX_ITERATIONS, a stalled line search
                                NUMERICAL_FAILURE. P = None: unused (the annealed search has its
                                own internal budgets; failing it is NUMERICAL_FAILURE).
    throw : bool                raise SolverError on failure.
    """
    atol = renamed_option("atol", atol, "tol", tol, default=1e-10)
    rho, Yc = _check_toy_problem(ratios, class_targets)
    k, m = Yc.shape
    activation = _check_tilted_activation(activation)
    if activation == "relu":
        raise ValueError("activation='relu' is not a redundant-code problem; use solve_relu_toy")
    if P is not None:
        P = check_int("P", P, minimum=1)
    if activation == "linear" and P is None:
        raise ValueError(
            "activation='linear' has a Gaussian readout posterior of width O(1) only at finite P; "
            "pass P (an integer)"
        )
    if not isinstance(fluctuations, bool):
        raise TypeError(f"fluctuations must be a bool, got {fluctuations!r}")
    threshold = check_real("threshold", threshold)
    T = check_nonneg_float("T", T)
    t0 = _check_start("t0", t0, (k, m))
    betas = _check_anneal(anneal)
    n_random = _check_search_starts("n_random", n_random, max(k, m), copies=4)
    n_nodes = _check_nodes("n_nodes", n_nodes, minimum=5)
    search_nodes = _check_nodes("search_nodes", search_nodes, minimum=5)
    quad_nodes = check_int("quad_nodes", quad_nodes, minimum=2)
    tol = check_pos_float("atol", atol)
    maxiter = check_int("maxiter", maxiter, minimum=1)
    rng = as_rng(seed)

    neuron = _ToyNeuron(rho, activation, fluctuations, n_nodes, m)
    fast = _ToyNeuron(rho, activation, fluctuations, search_nodes, m)
    if t0 is None:
        t0 = np.zeros((k, m)) if activation == "linear" else 2.0 * (Yc - Yc.mean())
    inf = None  # the P -> infinity solution (none for the linear activation)
    if activation != "linear":
        inf = _solve_infinite_P(rho, Yc, neuron, fast, t0, betas, rng, n_random, tol, T)
        if not inf["converged"]:
            out = _failed(inf, rho, Yc, P, activation, fluctuations, threshold, T)
            raise_if_failed(out, throw)
            return out
    if P is None:
        codes = _infinite_P_codes(neuron, Yc, T, inf)
    else:
        codes = _finite_P_codes(neuron, Yc, T, P, inf["t"] if inf is not None else t0, rng,
                                n_random, quad_nodes, tol, maxiter, threshold)
        codes["nit"] += 0 if inf is None else inf["nit"]
    out = _toy_solution(codes, neuron, Yc, P, T, activation, fluctuations, threshold, tol)
    raise_if_failed(out, throw)
    return out


def _infinite_P_codes(neuron, Yc, T, inf):
    """The P -> infinity codes of the annealed solve ``inf`` (:func:`_solve_infinite_P`) with
    the residual parts of the exact system, as the dict :func:`_toy_solution` takes."""
    m = Yc.shape[1]
    t, A, Pg = inf["t"], inf["A"], inf["Pg"]
    x = np.concatenate([t.ravel(), A.ravel(), Pg])
    n = A.shape[0]
    res = _residual_parts(_exact_system(x, neuron, Yc, n, T)[0], n, m)
    return dict(t=t, A=A, Pg=Pg, res=res, covs=np.zeros((n, m, m)), g_value=inf["g"],
                gap=inf["gap"], other=inf["other"], other_g=inf["other_g"], null=inf["null"],
                nit=inf["nit"], msg=inf["message"], ok=True,
                fail_status=Status.NUMERICAL_FAILURE, mean_out=None, summary=None)


def _finite_P_codes(neuron, Yc, T, P, start, rng, n_random, quad_nodes, tol, maxiter,
                    threshold):
    """The finite-P readout posterior by Newton on the convex Phi_P from ``start``
    (:func:`._finite_p._finite_P_solve`): its peaks, weights, Laplace covariances, output and
    stationarity residuals and code summary, as the dict :func:`_toy_solution` takes (``nit``:
    the Newton iterations only)."""
    rho, m = neuron.rho, Yc.shape[1]
    search = _Search(neuron, n_random, rng)
    t, st, nit_p, ok, stalled = _finite_P_solve(start, search, Yc, float(P), quad_nodes, tol,
                                                maxiter, T)
    A = st["A"]
    grad = neuron.evaluate(A, t)[1]
    res = {
        "output": float(np.max(np.abs(st["mean_out"] - Yc + T * t))),
        "stationarity": float(np.max(np.abs(grad))),
    }
    msg = (f"converged at finite P={P}: {A.shape[0]} readout peaks (Newton, {nit_p} iterations)"
           if ok else
           f"finite-P Newton stalled after {nit_p} iterations (the line search found no "
           f"decrease); try more quad_nodes or another t0" if stalled else
           f"finite-P Newton ran out of maxiter={maxiter} iterations; increase maxiter or "
           f"quad_nodes")
    return dict(t=t, A=A, Pg=_peak_weights(st, float(P)), res=res, covs=st["covs"],
                g_value=float(st["phi"] + _linear_part(rho, t, Yc, T)), gap=float("nan"),
                other=np.zeros((0, m)), other_g=np.zeros(0), null=np.zeros((A.shape[0], 0)),
                nit=nit_p, msg=msg, ok=ok,
                fail_status=Status.NUMERICAL_FAILURE if stalled else Status.MAX_ITERATIONS,
                mean_out=st["mean_out"], summary=_code_summary(st["nodes"], threshold, P * rho))


def _code_activations(neuron, A, t, activation, fluctuations):
    """Tilts ``H = A t^T`` of the codes, their mean activations psi'(H), activation variances
    psi''(H) (0 without fluctuations) and preactivation modes z* (H itself for the linear
    activation)."""
    H = A @ t.T
    if fluctuations:
        _, p1, p2 = neuron.psi(H)
        zs = _saddle_flat(np.ascontiguousarray(H.ravel()), activation)[3].reshape(H.shape) \
            if activation != "linear" else H.copy()
    else:
        _, p1, _ = neuron.psi(H)
        p2 = np.zeros_like(H)
        zs = _saddle_flat(np.ascontiguousarray(H.ravel()), activation)[3].reshape(H.shape)
    return H, p1, p2, zs


def _toy_solution(codes, neuron, Yc, P, T, activation, fluctuations, threshold, tol):
    """The :class:`SigmoidToySolution` of the codes (dict of :func:`_infinite_P_codes` or
    :func:`_finite_P_codes`): activations, mean output, code summary, and the check that the
    residual of the saddle-point equations is within ten times max(atol, 1e-8)."""
    t, A, Pg = codes["t"], codes["A"], codes["Pg"]
    H, p1, p2, zs = _code_activations(neuron, A, t, activation, fluctuations)
    if P is None:
        mean_out = np.einsum("g,gc,gr->cr", Pg, p1, A)
        summary = _code_summary((A, Pg, p1, p2), threshold, None)
    else:
        mean_out, summary = codes["mean_out"], codes["summary"]
    res = codes["res"]
    resid = max(res.values())
    ok, fail_status, msg = codes["ok"], codes["fail_status"], codes["msg"]
    if ok and not resid < max(tol, 1e-8) * 10:
        ok, fail_status = False, Status.NUMERICAL_FAILURE
        msg += f"; but the residual {resid:.1e} of the saddle-point equations is above tolerance"
    return SigmoidToySolution(
        converged=bool(ok), status=Status.SUCCESS if ok else fail_status, message=msg,
        nit=int(codes["nit"]), residual=resid,
        t=t, P_gamma=Pg, a_gamma=A, h=H, mean_activations=p1, activation_variances=p2,
        codes=p1 > threshold, preactivation_modes=zs, g_value=float(codes["g_value"]),
        residuals=res, global_gap=codes["gap"], other_maxima=codes["other"],
        other_g=codes["other_g"], readout_covariances=codes["covs"],
        weight_null_space=codes["null"], ratios=neuron.rho, class_targets=Yc, P=P,
        activation=activation, fluctuations=fluctuations, threshold=threshold,
        mean_output_classes=mean_out, T=T,
        code_fractions={c: v[0] for c, v in summary.items()},
        code_readouts={c: v[1] for c, v in summary.items()},
        code_activations={c: v[2] for c, v in summary.items()},
    )


def _failed(info, rho, Yc, P, activation, fluctuations, threshold, T):
    k, m = Yc.shape
    e = np.zeros((0, m))
    return SigmoidToySolution(
        converged=False, status=Status.NUMERICAL_FAILURE, message=info["message"],
        nit=int(info["nit"]),
        residual=float("inf"), t=info["t"], P_gamma=np.zeros(0), a_gamma=e, h=np.zeros((0, k)),
        mean_activations=np.zeros((0, k)), activation_variances=np.zeros((0, k)),
        codes=np.zeros((0, k), bool),
        preactivation_modes=np.zeros((0, k)), g_value=float("nan"), residuals={},
        global_gap=float("nan"),
        other_maxima=e, other_g=np.zeros(0), readout_covariances=np.zeros((0, m, m)),
        weight_null_space=np.zeros((0, 0)), ratios=rho, class_targets=Yc, P=P,
        activation=activation, fluctuations=fluctuations, threshold=threshold,
        mean_output_classes=np.full((k, m), np.nan), T=T,
    )
