"""Redundant coding of sigmoidal non-lazy networks on general (non-orthogonal) data, z|a
fluctuations neglected (seed 000 main text, MNIST approximation; notes §4.4 [RECON]).

Source: A. van Meegen & H. Sompolinsky, *Coding schemes in neural networks learning
classification tasks*, Nat. Commun. 16, 3354 (2025) (seed 000).

Inputs are columns of X (N0 x P) and enter through ``K0 = X^T X / N0``; targets Y are (P, m), one
row per training input, m = number of outputs. With ``Q_t(z) = |t^T phi(z)|^2/(2P) - z^T K0^{-1}
z/2`` the codes are the tied global maxima z_gamma of Q_t, the readouts ``a_gamma = t^T
phi(z_gamma)/P`` and the output constraint ``sum_gamma P_gamma phi(z_gamma) a_gamma^T = Y``. The
neuron, its search and the solution strategies are in :mod:`._general_core`; the loop shared with
the toy solver (:mod:`._sigmoid_toy`) in :mod:`._toy_core`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._progress import as_progress
from ..._results import SolverStatus, Status, raise_if_failed
from ...checks import as_float_matrix, as_rng, check_int, check_pos_float, check_real, renamed_option
from ...kernels._gauss import _phi_derivs, gaussian_pair_expectation
from ...kernels._nngp import mean_activation
from ...kernels._tilted import _check_tilted_activation
from .._code_core import _merge_duplicate_codes, _residual_parts
from .._problem import (
    _check_anneal,
    _check_labels,
    _check_psd_gram,
    _check_search_starts,
    _check_start,
    _check_targets,
)
from .._protocol import _check_k0, _check_test_diag, _gen_error_args, _mean_squared_error
from ._bundle import GAP_RTOL, OUTPUT_ATOL, _solve_general_bundle
from ._general_core import (
    _exact_solve,
    _general_exact_system,
    _GeneralNeuron,
    _repair_general,
    _solve_general,
    _solve_general_continuation,
)

__all__ = ["SigmoidGeneralSolution", "solve_sigmoid_general"]


@dataclass(frozen=True)
class SigmoidGeneralSolution(SolverStatus):
    """Fluctuation-free mean-field posterior of a sigmoidal network on general data (notes §4.4).

    Implements the coding-solution protocol (:mod:`._protocol`): ``predict``, ``test_kernel``,
    ``generalization_error`` on test inputs given by their input kernels.

    Attributes (n codes, P training inputs, m outputs)
    ----------
    t : (P, m)             conjugate field.
    P_gamma : (n,)         code weights (>= 0, sum 1).
    a_gamma : (n, m)       readouts, ``a_gamma = t^T phi(z_gamma) / P``.
    z_gamma : (n, P)       preactivation modes on the training inputs (P(z|a_gamma) ≈ delta).
    mean_activations : (n, P)  phi(z_gamma).
    codes : (n, P) bool    mean_activations > threshold.
    g_value : float        tied maximal value of G_t(a).
    residuals : dict       "stationarity", "degeneracy", "normalisation", "output" (max-abs).
    global_gap, other_maxima (k, P), other_g : as in :class:`SigmoidToySolution` (in z).
    weight_null_space : (n, k)  non-uniqueness of the weights (k = 0: unique).
    duality_gap : float    certificate ``upper - lower`` of the convex outer problem
                           ``f(t) = max Q_t - tr(t^T Y)`` (NaN when not converged).
    f_bounds : (lower, upper)  ``f* in [lower, upper]``; upper = f at the returned t (global
                           search), lower = minus the cost ``E[z^T K0^+ z/2 + P|a|^2/2]`` of a
                           feasible code measure (weak duality): the codes themselves for the
                           exact strategies, the restricted problem over the atoms found for
                           "bundle".
    relative_gap : float   ``duality_gap / (1 + |f_bounds[1]|)`` (property), the measure the
                           bundle's certificate compares with 1e-5.
    K0 (P, P), Y (P, m), activation, threshold : the problem (inputs as columns of X,
                           K0 = X^T X / N0; one row of Y per training input).
    """

    t: np.ndarray
    P_gamma: np.ndarray
    a_gamma: np.ndarray
    z_gamma: np.ndarray
    mean_activations: np.ndarray
    codes: np.ndarray
    g_value: float
    residuals: dict
    global_gap: float
    other_maxima: np.ndarray
    other_g: np.ndarray
    weight_null_space: np.ndarray
    K0: np.ndarray
    Y: np.ndarray
    activation: str
    threshold: float
    duality_gap: float = float("nan")
    f_bounds: tuple = (float("nan"), float("nan"))

    @property
    def n_codes(self) -> int:
        return int(self.P_gamma.size)

    @property
    def relative_gap(self) -> float:
        """The certificate's measure ``duality_gap / (1 + |upper|)`` (upper = ``f_bounds[1]``;
        certified when <= 1e-5 with the output constraint met, notes §4.4 [RECON]); NaN when
        there is no finite upper bound."""
        upper = float(self.f_bounds[1])
        return float(self.duality_gap) / (1.0 + abs(upper)) if np.isfinite(upper) else float("nan")

    def mean_output(self) -> np.ndarray:
        """Training output ``sum_gamma P_gamma phi(z_gamma) a_gamma^T`` (P, m); equals Y."""
        return np.einsum("g,gp,gr->pr", self.P_gamma, self.mean_activations, self.a_gamma)

    def feature_kernel(self) -> np.ndarray:
        """Feature kernel on the training inputs without z|a fluctuations (P, P):
        ``K_1 = sum_gamma P_gamma phi(z_gamma) phi(z_gamma)^T``."""
        ph = self.mean_activations
        return np.einsum("g,gp,gq->pq", self.P_gamma, ph, ph)

    def class_codes(self, labels) -> np.ndarray:
        """Per-class codes (n, m_classes) bool: class-averaged mean activation > threshold."""
        P = self.K0.shape[0]
        lab = _check_labels(labels, P)
        if lab.size != P:
            raise ValueError(f"labels must have length P = {P}, got {lab.size}")
        k = int(lab.max()) + 1
        oh = np.eye(k)[lab]
        avg = self.mean_activations @ oh / oh.sum(0)
        return avg > self.threshold

    # -- test inputs (notes §4.4 "B.2"; signatures of the coding-solution protocol) ------------
    def _conditional(self, name, k0, k_diag, diag_name, keep_variance):
        P = self.K0.shape[0]
        k0 = _check_k0(name, k0, P)
        # K0^{-1} k0 (P, Q); on the range of K0 (pseudo-inverse) when K0 is singular, where
        # the codes z_gamma and, for inputs, k0 lie
        R = np.linalg.lstsq(self.K0, k0, rcond=1e-10)[0]
        means = self.z_gamma @ R  # (n, Q)
        if keep_variance:
            kd = _check_test_diag(diag_name, k_diag, k0.shape[1],
                                  required_by="the sigmoid predictor with keep_variance=True")
            s2 = kd - np.sum(k0 * R, axis=0)
            s2 = np.maximum(s2, 0.0)
        else:
            _check_test_diag(diag_name, k_diag, k0.shape[1])
            s2 = np.zeros(k0.shape[1])
        return R, means, s2

    def predict(self, k0, k_test_diag=None, *, keep_variance: bool = True) -> np.ndarray:
        """Mean predictor on test inputs (Q, m) (seed 000 Eq. for f_r(x) [MT]; notes §4.4):

        ``f_r(x) = sum_gamma P_gamma a_gamma^r <phi(z*)>_gamma`` with ``z* | z_gamma ~
        N(m_gamma(x), s^2(x))``, ``m_gamma = k0(x)^T K0^{-1} z_gamma``,
        ``s^2 = K0(x,x) - k0^T K0^{-1} k0`` and the closed form ``<phi> = 1/2[1 + erf(sqrt(pi)
        m / (2 sqrt(1 + pi s^2/2)))]`` [RECON]. ``keep_variance=False`` drops s^2 (whether the
        paper kept it is not known, notes §4.4). ``k0`` is (P, Q) (``input_kernel(X, X_test)``),
        ``k_test_diag`` (Q,) (``|x|^2 / N0``; required unless ``keep_variance=False``).
        """
        _, means, s2 = self._conditional("k0", k0, k_test_diag, "k_test_diag", keep_variance)
        act = mean_activation(means, s2[None, :], self.activation)  # (n, Q)
        return np.einsum("g,gq,gr->qr", self.P_gamma, act, self.a_gamma)

    def test_kernel(self, k0_a, k0_b, K0_ab=None, k_test_diag_a=None, k_test_diag_b=None, *,
                    keep_variance: bool = True, n_nodes: int = 40, k_diag_a=None,
                    k_diag_b=None) -> np.ndarray:
        """Feature kernel on test inputs (Qa, Qb) [MT form; notes §4.4]:
        ``K(x1, x2) = sum_gamma P_gamma E[phi(u) phi(v)]`` with (u, v) Gaussian, means
        m_gamma(x1), m_gamma(x2) and covariance ``K0(xi, xj) - k0(xi)^T K0^{-1} k0(xj)``
        (2-D Gauss-Hermite, ``n_nodes`` per dimension). ``k0_a`` (P, Qa), ``k0_b`` (P, Qb),
        ``K0_ab`` (Qa, Qb) and the diagonals (Qa,), (Qb,) are input kernels (``k_diag_a`` /
        ``k_diag_b`` are the deprecated spellings of ``k_test_diag_a`` / ``k_test_diag_b``)."""
        k_test_diag_a = renamed_option("k_test_diag_a", k_test_diag_a, "k_diag_a", k_diag_a)
        k_test_diag_b = renamed_option("k_test_diag_b", k_test_diag_b, "k_diag_b", k_diag_b)
        Ra, ma, sa = self._conditional("k0_a", k0_a, k_test_diag_a, "k_test_diag_a", keep_variance)
        Rb, mb, sb = self._conditional("k0_b", k0_b, k_test_diag_b, "k_test_diag_b", keep_variance)
        if not keep_variance:
            pa = _phi_derivs(ma, self.activation)[0]
            pb = _phi_derivs(mb, self.activation)[0]
            return np.einsum("g,ga,gb->ab", self.P_gamma, pa, pb)
        if K0_ab is None:
            raise ValueError("K0_ab (the input kernel between the two sets of test inputs) is "
                             "required with keep_variance=True")
        K0_ab = as_float_matrix("K0_ab", K0_ab)
        if K0_ab.shape != (Ra.shape[1], Rb.shape[1]):
            raise ValueError(f"K0_ab must have shape {(Ra.shape[1], Rb.shape[1])}, got "
                             f"{K0_ab.shape}")
        c12 = K0_ab - _check_k0("k0_a", k0_a, self.K0.shape[0]).T @ Rb
        c11 = np.broadcast_to(sa[:, None], c12.shape)
        c22 = np.broadcast_to(sb[None, :], c12.shape)
        # clip round-off so that |c12| <= sqrt(c11 c22)
        bound = np.sqrt(c11 * c22)
        c12 = np.clip(c12, -bound, bound)
        out = np.zeros(c12.shape)
        for g_ in range(self.n_codes):
            out += self.P_gamma[g_] * gaussian_pair_expectation(
                self.activation, self.activation, c11, c12, c22,
                m1=ma[g_][:, None], m2=mb[g_][None, :], n_nodes=n_nodes)
        return out

    def generalization_error(self, k0, k_test_diag=None, Y_test=None, *,
                             keep_variance: bool = True) -> np.ndarray:
        """Per-output ``eps_r = mean_mu [y_mu^r - f_r(x_mu)]^2`` (no variance term, [MT]);
        ``Y_test`` (Q, m), one row per test input."""
        k0, k_test_diag, Y_test = _gen_error_args("SigmoidGeneralSolution", k0, k_test_diag, Y_test)
        f = self.predict(k0, k_test_diag, keep_variance=keep_variance)
        return _mean_squared_error(f, Y_test)


def solve_sigmoid_general(
    K0,
    Y,
    *,
    activation: str = "sigmoid_erf",
    threshold: float = 0.5,
    t0=None,
    anneal=(50.0, 500.0, 5000.0),
    n_random: int = 10,
    strategy: str = "auto",
    n_steps: int = 10,
    seed=0,
    rtol: float = 1e-11,
    maxiter: int = 5000,
    atol: float | None = None,
    throw: bool = False,
    progress=False,
    tol: float | None = None,
    start=None,
) -> SigmoidGeneralSolution:
    """Redundant code of a sigmoidal non-lazy network (L = 1, T = 0, sigma_a^2 = 1/P, P -> inf)
    on general training data, neglecting the z|a fluctuations (the MT's MNIST approximation).

    Equations (notes §4.4 [RECON]): with ``Q_t(z) = |t^T phi(z)|^2/(2P) - z^T K0^{-1} z/2`` the
    codes are the tied global maxima z_gamma of Q_t (mode ``z = K0[(t a) o phi'(z)]``), the
    readouts ``a_gamma = t^T phi(z_gamma)/P``, ``G_t(a_gamma) = Q_t(z_gamma)/P`` equal, and the
    output constraint ``sum_gamma P_gamma phi(z_gamma) a_gamma^T = Y``. The outer problem in
    t (P x m) is the same convex one as for the toy (smoothing + L-BFGS for beta in ``anneal``,
    then the exact square system with the analytic Jacobian, global check of the maxima).
    On orthonormal toy inputs it reduces to ``solve_sigmoid_toy(..., fluctuations=False)``.

    Parameters
    ----------
    K0 : (P, P)      input kernel X^T X / N0 (inputs as columns of X; symmetric positive
                     semi-definite; a singular K0, e.g. more images than independent pixel
                     directions, is solved on its range by the bundle strategy).
    Y : (P, m)       targets, one row per training input, m = number of outputs; the class of
                     input mu (for the start patterns) is argmax_r Y[mu, r].
    activation       "sigmoid_erf" (paper) or "erf".
    strategy         "continuation": homotopy ``K0(lam) = (1-lam) I + lam K0`` from the exactly
                     solved orthonormal toy (needs class-structured Y: every row equal to the
                     target of its class), correcting the exact equations with Newton at each of
                     >= ``n_steps`` steps, dropping codes whose weight reaches 0 and adding maxima
                     that overtake; "anneal": smoothing + L-BFGS from ``t0`` (default
                     ``2 (Y - mean Y)``); "bundle": proximal bundle method on the convex
                     outer problem with exact quadratic cuts (see ``rtol``, ``maxiter``),
                     certified by a duality gap (``duality_gap``, ``f_bounds``) whose upper
                     bound is only as good as its search for the global maxima of Q_t
                     (multi-start Newton ascent and basin hopping, not exhaustive: at P = 100
                     on real images independent searches can find higher maxima, see
                     docs/coding_sigmoid.md "Limits"); K0 enters
                     through its range, and codes need not be class-structured; "auto":
                     continuation when possible, else (or when it fails) bundle.
    rtol, maxiter    strategy "bundle": stop when the predicted decrease of the bundle model is
                     below ``rtol (1 + |f|)``, after at most ``maxiter`` iterations, or earlier
                     at a certificate check (every 100 iterations once the predicted decrease
                     is below 1e-6 (1 + |f|)). The result is converged when the certificate
                     holds: relative duality gap <= 1e-5 and output constraint to 1e-4 (both
                     reported in ``message``). When rtol is met without a certificate (and
                     the final search finds no higher maximum), Newton on the exact equations
                     from the bundle's codes is tried (the exact polish, in the whitened
                     coordinates of the range of K0), and its root is certified by the same
                     search at its centre; failing that, the bundle goes on from where it
                     stopped with rtol / 100, at most twice, within ``maxiter`` (the polish is
                     tried at each such stop, and at the end when ``maxiter`` ran out first).
    t0 : (P, m)      start of the annealing strategy.
    start            None, or a converged :class:`SigmoidGeneralSolution` of the same Y and
                     activation at another (nearby) positive-definite kernel, e.g. the previous
                     iterate of an outer fixed point: strategies "auto" and "continuation" then
                     continue from it along ``(1-lam) K_start + lam K0``, trying the whole way in
                     one step first (halved while Newton fails), instead of from the toy; "auto"
                     falls back to the toy path, then the bundle, if that fails. The solution is
                     the same (the exact system's root); only the path to it is shorter (at
                     class-block kernels 1 % from the start: 6.5x faster at P = 50, 11x at P = 200).
    anneal, n_random, seed, atol, throw : as in :func:`solve_sigmoid_toy` (``tol=`` is the
                     deprecated spelling of ``atol``); n_random is bounded so that the
                     searches' starts (up to 10 n_random points in P dimensions, with their
                     P x P Newton Hessians) fit in 16 GiB.
    progress         False (silent), True (a line on stderr at most every 10 s: continuation
                     lambda, smoothing stage and objective) or a callable receiving each message.
    """
    atol = renamed_option("atol", atol, "tol", tol, default=1e-10)
    kf = _check_psd_gram(K0, factor=True)  # the one eigendecomposition of K0 (bundle: its range)
    K0, P, singular = kf.K0, kf.P, kf.singular
    Y = _check_targets(Y, P)
    m = Y.shape[1]
    activation = _check_tilted_activation(activation)
    if activation not in ("sigmoid_erf", "erf"):
        raise ValueError(f"activation must be 'sigmoid_erf' or 'erf' for solve_sigmoid_general, "
                         f"got {activation!r}")
    threshold = check_real("threshold", threshold)
    t0 = _check_start("t0", t0, (P, m))
    betas = _check_anneal(anneal)
    n_random = _check_search_starts("n_random", n_random, P, copies=10)
    if strategy not in ("auto", "continuation", "anneal", "bundle"):
        raise ValueError("strategy must be 'auto', 'continuation', 'anneal' or 'bundle', got "
                         f"{strategy!r}")
    rtol = check_pos_float("rtol", rtol)
    maxiter = check_int("maxiter", maxiter, minimum=1)
    n_steps = check_int("n_steps", n_steps, minimum=1)
    tol = check_pos_float("atol", atol)
    rng = as_rng(seed)
    report = as_progress(progress, "solve_sigmoid_general")
    start = _check_start_solution(start, Y, activation, strategy, singular)
    if singular and strategy not in ("auto", "bundle"):
        raise ValueError(f"K0 is singular (rank {kf.rank} of {P}): "
                         f"strategy={strategy!r} needs a positive-definite K0; use "
                         "strategy='bundle' or 'auto', which solve on the range of K0")
    if strategy == "bundle" or (strategy == "auto" and (singular or (
            t0 is None and start is None and _class_structure(Y) is None))):
        return _bundle_solution(kf, Y, activation, threshold, rng, n_random, rtol, maxiter,
                                report, throw)
    neuron = _GeneralNeuron(K0, activation)
    out = _exact_strategies(neuron, K0, Y, activation, strategy, t0, start, betas, rng, n_random,
                            tol, n_steps, report)
    if out is None:  # strategy "auto": the continuation failed, the proximal bundle is next
        return _bundle_solution(kf, Y, activation, threshold, rng, n_random, rtol, maxiter,
                                report, throw)
    sol = _exact_solution(out, neuron, K0, Y, activation, threshold, tol)
    report(sol.message, force=True)
    raise_if_failed(sol, throw)
    return sol


def _exact_strategies(neuron, K0, Y, activation, strategy, t0, start, betas, rng, n_random, tol,
                      n_steps, report):
    """The exact strategies: the continuation from ``start`` (a solution at another kernel) or
    from the orthonormal toy (class-structured targets, no t0), then the annealing from t0
    when they did not converge. Returns the solve's dict (converged or not), or None when
    strategy "auto" is to fall back to the proximal bundle."""
    structure = _class_structure(Y) if (t0 is None and strategy != "anneal") else None
    if strategy == "continuation" and structure is None and start is None:
        raise ValueError("strategy='continuation' needs class-structured targets (every row of Y "
                         "equal to the target vector of its class argmax) and no t0, or a start")
    out = None
    if start is not None:
        out = _continue_from_start(neuron, K0, Y, activation, start, rng, n_random, tol, report)
        if not out["converged"]:
            report(f"continuation from the start solution failed ({out['message']}); "
                   + ("from the orthonormal toy next" if structure is not None else
                      "proximal bundle next" if strategy == "auto" else "annealing next"),
                   force=True)
            if structure is None and strategy == "auto":
                return None
            out = None if structure is not None else out
        else:
            structure = None
    if structure is not None:
        out = _continue_from_toy(neuron, K0, Y, activation, structure, rng, n_random, tol,
                                 n_steps, report)
        if not out["converged"] and strategy == "auto":
            report(f"continuation failed ({out['message']}); proximal bundle next", force=True)
            return None
    if out is None or not out["converged"]:
        if t0 is None:
            t0 = 2.0 * (Y - Y.mean())
        out = _solve_general(K0, Y, neuron, t0, betas, rng, n_random, tol,
                             report if report.enabled else None)
    return out


def _continue_from_toy(neuron, K0, Y, activation, structure, rng, n_random, tol, n_steps, report):
    """The continuation from the exactly solved orthonormal toy of the class ``structure``
    (:func:`._general_core._solve_general_continuation`), then the global repair of its codes;
    the continuation's dict when it did not converge."""
    cont = _solve_general_continuation(K0, Y, activation, structure, rng, n_random, tol,
                                       n_steps, report if report.enabled else None)
    if not cont["converged"]:
        return cont
    out = _repair_general(neuron, Y, cont["x"], cont["n"], rng, n_random, tol)
    out["nit"] += cont["nit"]
    out["message"] = "continuation from the orthonormal toy: " + out["message"]
    return out


def _exact_solution(out, neuron, K0, Y, activation, threshold, tol):
    """The :class:`SigmoidGeneralSolution` of an exact strategy's dict ``out``: the residual
    parts of the exact system and the duality certificate (upper = f(t) = P G* - tr(t^T Y);
    lower = minus the cost of the code measure, weak duality); converged when the residual is
    within ten times max(atol, 1e-8)."""
    P, m = Y.shape
    if not out["converged"]:
        e = np.zeros((0, P))
        return SigmoidGeneralSolution(
            converged=False, status=Status.NUMERICAL_FAILURE, message=out["message"],
            nit=int(out["nit"]),
            residual=float("inf"), t=out["t"], P_gamma=np.zeros(0), a_gamma=np.zeros((0, m)),
            z_gamma=e, mean_activations=e, codes=np.zeros((0, P), bool), g_value=float("nan"),
            residuals={}, global_gap=float("nan"), other_maxima=e, other_g=np.zeros(0),
            weight_null_space=np.zeros((0, 0)), K0=K0, Y=Y, activation=activation,
            threshold=threshold)
    t, Z, Pg = out["t"], out["Z"], out["Pg"]
    n = Z.shape[0]
    F = _general_exact_system(np.concatenate([t.ravel(), Z.ravel(), Pg]), neuron, Y, n)[0]
    res = _residual_parts(F, n, P)
    resid = max(res.values())
    ph = _phi_derivs(Z, activation)[0]
    # certificate as for the bundle: upper = f(t) = P G* - tr(t^T Y); lower = minus the cost
    # sum_g P_g (z_g^T K0^{-1} z_g / 2 + P |a_g|^2 / 2) of the code measure (weak duality)
    upper = float(P * out["G"] - np.sum(t * Y))
    lower = float(-np.sum(Pg * (0.5 * np.sum(Z * np.linalg.solve(K0, Z.T).T, axis=1)
                                + 0.5 * P * np.sum(out["A"] ** 2, axis=1))))
    ok = resid < max(tol, 1e-8) * 10
    return SigmoidGeneralSolution(
        converged=bool(ok), status=Status.SUCCESS if ok else Status.NUMERICAL_FAILURE,
        message=out["message"], nit=int(out["nit"]),
        residual=resid, t=t, P_gamma=Pg, a_gamma=out["A"], z_gamma=Z, mean_activations=ph,
        codes=ph > threshold, g_value=float(out["G"]), residuals=res, global_gap=out["gap"],
        other_maxima=out["other"], other_g=out["other_G"], weight_null_space=out["null"], K0=K0,
        Y=Y, activation=activation, threshold=threshold, duality_gap=upper - lower,
        f_bounds=(lower, upper))
def _continue_from_start(neuron, K0, Y, activation, start, rng, n_random, tol, report):
    """The continuation from a solution at another kernel (``start``), then the global repair."""
    cont = _solve_general_continuation(
        K0, Y, activation, None, rng, n_random, tol, 1, report if report.enabled else None,
        start=(start.K0, start.t, start.z_gamma, start.P_gamma))
    if not cont["converged"]:
        return cont
    # distinct maxima of the start's kernel (e.g. a far Newton trial point) can flow into one
    # maximum here: one code, not several (merged, then the exact system solved again)
    P, m = Y.shape
    x, n = cont["x"], cont["n"]
    Z = x[P * m: P * m + n * P]
    x, n_merged = _merge_duplicate_codes(x, P * m, n, P, 1e-6 * (1.0 + np.max(np.abs(Z))))
    if n_merged < n:
        x, resid, nfev = _exact_solve(neuron, Y, x, n_merged, tol)
        cont["nit"] += nfev
        if resid > tol:
            return dict(t=x[: P * m].reshape(P, m), converged=False, nit=cont["nit"],
                        message=f"continuation from the start solution: after merging {n} codes "
                                f"into {n_merged} the exact solve failed (residual {resid:.2e})")
    out = _repair_general(neuron, Y, x, n_merged, rng, n_random, tol)
    out["nit"] += cont["nit"]
    out["message"] = "continuation from the start solution: " + out["message"]
    return out


def _check_start_solution(start, Y, activation, strategy, singular):
    """``start`` of :func:`solve_sigmoid_general`: None or a converged solution of the same
    problem (targets, activation) on a positive-definite kernel, for the continuation."""
    if start is None:
        return None
    if not isinstance(start, SigmoidGeneralSolution):
        raise TypeError(f"start must be a SigmoidGeneralSolution (from solve_sigmoid_general) or "
                        f"None, got {type(start).__name__}")
    if strategy not in ("auto", "continuation"):
        raise ValueError(f"start is used by strategy 'auto' or 'continuation', got "
                         f"strategy={strategy!r}")
    if singular:
        raise ValueError("start needs a positive-definite K0 (the continuation works on the "
                         "full kernel); K0 is singular: leave start=None (the bundle solves it)")
    if not start.converged or start.z_gamma.shape[0] == 0:
        raise ValueError(f"start must be a converged solution, got converged={start.converged} "
                         f"({start.message})")
    if start.Y.shape != Y.shape or not np.array_equal(start.Y, Y):
        raise ValueError(f"start must solve the same targets Y (shape {Y.shape}), got a solution "
                         f"for targets of shape {start.Y.shape}" + (
                             " with other values" if start.Y.shape == Y.shape else ""))
    if start.activation != activation:
        raise ValueError(f"start must use the same activation {activation!r}, got "
                         f"{start.activation!r}")
    if np.linalg.eigvalsh(start.K0)[0] <= 0:
        raise ValueError("start must be a solution on a positive-definite kernel (its K0 is "
                         "singular; the continuation works on the full kernel)")
    return start


def _bundle_solution(kf, Y, activation, threshold, rng, n_random, rtol, maxiter, report, throw):
    """Strategy "bundle" (:mod:`._bundle`) on the :class:`._problem.KernelFactor` ``kf`` of K0,
    wrapped as a :class:`SigmoidGeneralSolution`."""
    K0 = kf.K0
    out = _solve_general_bundle(kf, Y, activation, rng, max(n_random, 20), rtol, maxiter,
                                report if report.enabled else None)
    P = Y.shape[0]
    ok = out["certified"]
    msg = out["message"]
    status = Status.SUCCESS if ok else Status.MAX_ITERATIONS
    if out["converged"] and not ok:  # rtol met before maxiter, but no certificate
        status = Status.NUMERICAL_FAILURE
        tightened = (f" (tightened from rtol={rtol:g} when the certificate failed)"
                     if out["rtol"] != rtol else "")
        msg += (f"; the bundle met rtol={out['rtol']:g}{tightened} after {out['nit']} of "
                f"maxiter={maxiter} iterations but "
                f"the certificate does not hold (relative duality gap {out['rel_gap']:.1e}, "
                f"needs <= {GAP_RTOL:g}; output residual {out['output_residual']:.1e}, needs <= "
                f"{OUTPUT_ATOL:g}): lower rtol below {out['rtol']:g} so that the bundle refines "
                "its cuts further, or try another seed")
    Z = out["Z"]
    ph = _phi_derivs(Z, activation)[0]
    res = {"stationarity": 0.0, "degeneracy": out["spread"] / P,
           "normalisation": out["normalisation_residual"], "output": out["output_residual"]}
    sol = SigmoidGeneralSolution(
        converged=ok, status=status, message=msg,
        nit=int(out["nit"]), residual=max(res.values()), t=out["t"], P_gamma=out["Pg"],
        a_gamma=out["A"], z_gamma=Z, mean_activations=ph, codes=ph > threshold,
        g_value=float(out["G"]), residuals=res, global_gap=float("nan"),
        other_maxima=out["other"], other_g=out["other_G"],
        weight_null_space=np.zeros((Z.shape[0], 0)), K0=K0, Y=Y, activation=activation,
        threshold=threshold, duality_gap=float(out["gap"]),
        f_bounds=(float(out["lower"]), float(out["upper"])))
    report(sol.message, force=True)
    raise_if_failed(sol, throw)
    return sol


def _class_structure(Y):
    """(labels, class fractions, class targets) if every row of Y equals the target of its
    class (argmax), else None."""
    lab = np.argmax(Y, axis=1)
    m = Y.shape[1]
    if np.unique(lab).size != m:
        return None
    Yc = np.array([Y[lab == c][0] for c in range(m)])
    if not np.allclose(Y, Yc[lab], rtol=0, atol=1e-12):
        return None
    rho = np.bincount(lab, minlength=m) / lab.size
    return lab, rho, Yc
