"""Sigmoidal toy task at *given* code populations: a conditional mean-field solution (seed 000).

The equilibrium theory of :func:`richlazy.theory.solve_sigmoid_toy` fixes the code fractions P_gamma
by the degeneracy condition (all populated codes are tied global maxima of g). A sampler whose
codes freeze after symmetry breaking (Fig. 5) need not reach those fractions: neurons can stay in
*metastable* codes (local maxima of g with lower g) for the whole run. The remaining equations of
the notes §4.3 still hold for whatever populations are present, because they only use the
factorised single-neuron posterior:

* stationarity of every populated code: ``a_gamma = sum_c rho_c t_c psi'(t_c . a_gamma)``;
* output constraint: ``sum_gamma P_gamma a_gamma^r psi'(t_c . a_gamma) = y_c^r`` (m^2 equations).

With the populations P_gamma given (e.g. measured), these are n m + k m equations for the
n m + k m unknowns (a_gamma, t) [derived here from notes §4.3, RECON]. The solution predicts the
code readouts, the tilts h = t_c . a_gamma, the mean activations psi'(h) and the tilted
preactivation laws *conditional on the populations*, which separates the test of the
single-neuron structure from the question of equilibration.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import root

from ..._results import SolverStatus, Status, raise_if_failed
from ...checks import (
    as_float_array,
    as_float_matrix,
    check_int,
    check_nonneg_float,
    check_pos_float,
    check_real,
    renamed_option,
)
from ...kernels._tilted import _check_tilted_activation
from .._code_core import _exact_system, _ToyNeuron
from .._problem import _check_start, _check_toy_problem

__all__ = ["SigmoidPopulationSolution", "solve_sigmoid_toy_populations"]


@dataclass(frozen=True)
class SigmoidPopulationSolution(SolverStatus):
    """Conditional mean-field state of the sigmoidal toy task at given code populations.

    t : (k, m)                conjugate field, row c = t_c.
    P_gamma : (n,)            the given populations (sum 1).
    a_gamma : (n, m)          code readouts (stationary points of g_t).
    h : (n, k)                tilts t_c . a_gamma.
    mean_activations : (n, k) psi'(h): <phi(z)> of code gamma on class c.
    codes : (n, k) bool       mean_activations > threshold.
    g_values : (n,)           g_t(a_gamma); in equilibrium all populated codes tie, a metastable
                              code has a lower value.
    is_maximum : (n,) bool    whether a_gamma is a local maximum of g_t (negative-definite Hessian).
    residuals : dict          max-abs "stationarity" and "output" residuals.
    """

    t: np.ndarray
    P_gamma: np.ndarray
    a_gamma: np.ndarray
    h: np.ndarray
    mean_activations: np.ndarray
    codes: np.ndarray
    g_values: np.ndarray
    is_maximum: np.ndarray
    residuals: dict


def solve_sigmoid_toy_populations(
    ratios,
    class_targets,
    populations,
    a_start,
    *,
    t0,
    T: float = 0.0,
    activation: str = "sigmoid_erf",
    threshold: float = 0.5,
    n_nodes: int = 121,
    atol: float | None = None,
    throw: bool = False,
    tol: float | None = None,
) -> SigmoidPopulationSolution:
    """Solve stationarity + output constraint of the notes §4.3 at fixed code populations.

    Equations [RECON, notes §4.3; the degeneracy condition is dropped because the populations are
    given]: ``grad g_t(a_gamma) = 0`` with ``g_t(a) = -|a|^2/2 + sum_c rho_c psi(t_c . a)`` and
    ``sum_gamma P_gamma a_gamma^r psi'(t_c . a_gamma) = y_c^r``, ``psi(h) = log E exp(h phi(z))``,
    z ~ N(0, 1). Newton (``scipy.optimize.root``, hybrid method) with the analytic Jacobian.

    Parameters
    ----------
    ratios : (k,)              class fractions rho_c (> 0, sum 1).
    class_targets : (k, m)     row c = target y_c (m = number of outputs).
    populations : (n,)         code fractions P_gamma (>= 0, sum 1).
    a_start : (n, m)           starting readouts, one per code (e.g. the equilibrium a_gamma and,
                               for a metastable code, the local maximum reported in
                               ``SigmoidToySolution.other_maxima``); fixes which code is which.
    t0 : (k, m)                starting conjugate field (e.g. the equilibrium t).
    T : float >= 0             rescaled temperature: the output constraint reads
                               ``... = y_c^r - T t_c^r`` (notes §2.3 (S1); default 0).
    activation, threshold, n_nodes, atol, throw : as in :func:`solve_sigmoid_toy` (``tol=`` is
                               the deprecated spelling of ``atol``).
    """
    atol = renamed_option("atol", atol, "tol", tol, default=1e-10)
    rho, Yc = _check_toy_problem(ratios, class_targets)
    k, m = Yc.shape
    Pg = as_float_array("populations", populations, ndim=1)
    if Pg.size < 1 or np.any(Pg < 0) or abs(Pg.sum() - 1) > 1e-9:
        raise ValueError(f"populations must be non-negative fractions summing to 1, got {Pg}")
    n = Pg.size
    A0 = as_float_matrix("a_start", a_start, allow_1d=True)
    if A0.shape != (n, m):
        raise ValueError(f"a_start must have shape (n={n}, m={m}), got {A0.shape}")
    t0 = _check_start("t0", t0, (k, m))
    threshold = check_real("threshold", threshold)
    T = check_nonneg_float("T", T)
    if not (0 < threshold < 1):
        raise ValueError(f"threshold must lie in (0, 1), got {threshold}")
    activation = _check_tilted_activation(activation)
    n_nodes = check_int("n_nodes", n_nodes, minimum=5)
    tol = check_pos_float("atol", atol)
    neuron = _ToyNeuron(rho, activation, True, n_nodes, m=m)
    km, nm = k * m, n * m
    rows = np.r_[0:nm, nm + n: nm + n + km]  # stationarity and output rows of the full system
    cols = np.r_[0:km + nm]  # t and a columns

    def fun(x):
        F, J = _exact_system(np.concatenate([x, Pg]), neuron, Yc, n, T)
        return F[rows], J[np.ix_(rows, cols)]

    sol = root(fun, np.concatenate([t0.ravel(), A0.ravel()]), jac=True, method="hybr",
               options=dict(xtol=1e-13, maxfev=2000))
    t = sol.x[:km].reshape(k, m)
    A = sol.x[km:].reshape(n, m)
    val, grad, hess, H, p1, _ = neuron.evaluate(A, t)
    res = {"stationarity": float(np.max(np.abs(grad))),
           "output": float(np.max(np.abs(np.einsum("g,gc,gr->cr", Pg, p1, A) - Yc + T * t)))}
    resid = max(res.values())
    ok = bool(resid < max(tol, 1e-9) * 10)
    msg = (f"converged: stationarity and output residuals {resid:.1e}" if ok else
           f"did not converge ({sol.message}); residual {resid:.1e}: try other a_start / t0")
    # hybr's status 2: its evaluation budget (maxfev=2000) ran out
    status = (Status.SUCCESS if ok else Status.MAX_ITERATIONS if sol.status == 2
              else Status.NUMERICAL_FAILURE)
    out = SigmoidPopulationSolution(
        converged=ok, status=status, message=msg,
        nit=int(sol.nfev), residual=resid,
        t=t, P_gamma=Pg, a_gamma=A, h=H, mean_activations=p1, codes=p1 > threshold, g_values=val,
        is_maximum=np.linalg.eigvalsh(hess)[:, -1] < 0, residuals=res,
    )
    raise_if_failed(out, throw)
    return out
