"""Finite temperature in the sigmoid toy theory (seed 000 supplement E; notes §2.3 (S1)): the
equations at T > 0, their T -> 0 limit, the linear-network check, the T sweep and the critical
temperature T_c above which one code is left."""

import dataclasses
import itertools
import types

import numpy as np
import pytest
from richlazy.theory import (
    CodeTransition,
    CriticalTemperature,
    LocatedCodeTransition,
    code_transitions,
    locate_code_transition,
    locate_critical_temperature,
    solve_linear_network,
    solve_sigmoid_toy,
    solve_sigmoid_toy_populations,
    sweep_temperature,
    sweep_y_minus,
    toy_class_targets,
)
from richlazy.theory.kernels._tilted import tilted_moments
from scipy.optimize import minimize
from theory_helpers import RHO, assert_sigmoid_toy_equations

YC = toy_class_targets(3, y_minus=0.5)  # the Fig. 2 / 4 sigmoid configuration


def _g(A, t, rho=RHO):
    psi = tilted_moments(A @ t.T, activation="sigmoid_erf")[0]
    return -0.5 * np.sum(A * A, axis=-1) + psi @ rho


def _outer(t, T, rho=RHO, Yc=YC, n=31):
    """Phi_T(t) = max_a g_t(a) - sum_c rho_c t_c.(y_c - T t_c/2), the max over a dense grid refined
    by Newton-free local polishing (independent of the solver's maxima search)."""
    R = float(np.sum(rho * np.linalg.norm(t, axis=1))) + 0.1
    x = np.linspace(-R, R, n)
    A = np.array(list(itertools.product(x, repeat=t.shape[1])))
    g = _g(A, t, rho)
    best = -np.inf
    for a0 in A[np.argsort(g)[-8:]]:
        res = minimize(lambda a: -_g(a[None], t, rho)[0], a0, method="Nelder-Mead",
                       options=dict(xatol=1e-12, fatol=1e-15, maxiter=4000))
        best = max(best, -res.fun)
    return best - np.sum(rho * np.sum(t * (Yc - 0.5 * T * t), axis=1))


@pytest.fixture(scope="module")
def warm():
    return solve_sigmoid_toy(RHO, YC, T=0.05)


def test_finite_T_equations_hold_with_independent_quadrature(warm):
    """Stationarity, degeneracy and the output constraint y_c - T t_c, re-evaluated with the
    scipy-quad reference of psi."""
    s = warm
    assert s.converged and s.T == 0.05 and s.n_codes == 4
    out = assert_sigmoid_toy_equations(s, YC - 0.05 * s.t)
    assert np.max(np.abs(out - YC)) > 1e-2  # T t is not negligible here: the check has teeth
    lab = np.array([0, 1, 2, 0])
    np.testing.assert_allclose(s.mean_output(lab), (YC - 0.05 * s.t)[lab], atol=1e-12)


@pytest.mark.slow
def test_finite_T_solution_minimises_the_outer_objective(warm):
    """The returned t minimises the strongly convex Phi(t) + (T/2) sum rho |t|^2: random
    perturbations raise it (objective evaluated by a grid + Nelder-Mead maximisation over a)."""
    s = warm
    f0 = _outer(s.t, s.T)
    assert abs(f0 - (s.g_value - np.sum(RHO * np.sum(s.t * (YC - 0.5 * s.T * s.t), axis=1)))) < 1e-9
    rng = np.random.default_rng(0)
    for _ in range(6):
        d = rng.standard_normal(s.t.shape)
        d *= 0.02 / np.linalg.norm(d)
        assert _outer(s.t + d, s.T) > f0 + 1e-7


def test_codes_are_global_maxima_on_a_grid(warm):
    s = warm
    R = float(np.sum(RHO * np.linalg.norm(s.t, axis=1)))
    x = np.linspace(-R, R, 41)
    A = np.array(list(itertools.product(x, x, x)))
    assert _g(A, s.t).max() <= s.g_value + 1e-12


def test_small_T_is_continuous_with_T_zero():
    """t(T) - t(0) is linear in T near 0 (a smooth branch, no jump): doubling T doubles it."""
    s0 = solve_sigmoid_toy(RHO, YC)
    d = []
    for T in (1e-6, 2e-6):
        s = solve_sigmoid_toy(RHO, YC, T=T)
        assert s.code_strings() and sorted(s.code_strings()) == sorted(s0.code_strings())
        d.append(s.t - s0.t)
    assert np.max(np.abs(d[0])) > 1e-6  # T does enter
    np.testing.assert_allclose(d[1], 2 * d[0], atol=2e-3 * np.max(np.abs(d[0])) + 1e-10)


def test_linear_activation_at_finite_T_reproduces_linear_theory():
    """activation='linear' at finite P and T > 0 must give the finite-T linear network
    (K0 t U + T t = Y, U^-1 = P I - t^T t; solve_linear_network with K0 = I, sigma_a2 = 1/P)."""
    P, T = 40, 0.3
    lab = np.array([0] * 20 + [1] * 10 + [2] * 10)
    s = solve_sigmoid_toy(RHO, YC, P=P, T=T, activation="linear")
    assert s.converged, s.message
    lin = solve_linear_network(np.eye(P), YC[lab], sigma_a2=1.0 / P, T=T)
    assert lin.converged, lin.message
    np.testing.assert_allclose(s.readout_covariances[0], lin.U, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(s.t, lin.t[[0, 20, 30]], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(s.mean_output(lab), lin.mean_output, atol=1e-9)
    t0 = solve_sigmoid_toy(RHO, YC, P=P, activation="linear").t
    assert np.max(np.abs(s.t - t0)) > 0.05


def test_populations_solver_at_finite_T_reproduces_equilibrium(warm):
    s = warm
    c = solve_sigmoid_toy_populations(RHO, YC, s.P_gamma, s.a_gamma, t0=s.t * 1.05, T=s.T)
    assert c.converged, c.message
    np.testing.assert_allclose(c.t, s.t, atol=1e-9)
    np.testing.assert_allclose(c.a_gamma, s.a_gamma, atol=1e-9)


@pytest.mark.slow
def test_critical_temperature_is_where_the_single_code_branch_loses_global_maximality():
    """Above T_c one code (1-1-1) is left. Independent check: follow the single-code branch
    (populations [1]) below T_c; there another local maximum of g rises above the code's value.
    Its gap, extrapolated linearly to zero, gives the located T_c."""
    loc = locate_critical_temperature(0.05, 0.2, ratios=RHO, class_targets=YC, atol=1e-4)
    Tc = loc.T_c
    assert loc.code_above == "1-1-1" and len(loc.codes_below) >= 2
    assert 0.07 < Tc < 0.1
    above = solve_sigmoid_toy(RHO, YC, T=Tc + 0.002)
    gaps = []
    for dT in (0.002, 0.004):
        br = solve_sigmoid_toy_populations(RHO, YC, [1.0], above.a_gamma, t0=above.t, T=Tc - dT)
        assert br.converged, br.message
        R = float(np.sum(RHO * np.linalg.norm(br.t, axis=1)))
        x = np.linspace(-R, R, 61)
        A = np.array(list(itertools.product(x, x, x)))
        far = np.linalg.norm(A - br.a_gamma[0], axis=1) > 0.2
        a0 = A[far][np.argmax(_g(A[far], br.t))]
        other = -minimize(lambda a, t=br.t: -_g(a[None], t)[0], a0, method="Nelder-Mead",
                          options=dict(xatol=1e-12, fatol=1e-15, maxiter=4000)).fun
        gaps.append(other - br.g_values[0])
    assert gaps[0] > 0 and gaps[1] > gaps[0]  # below T_c the single code is not global
    T0 = Tc - 0.002 + gaps[0] * 0.002 / (gaps[1] - gaps[0])  # linear extrapolation to gap 0
    assert abs(T0 - Tc) < 1.5e-3


def test_sweep_temperature_curves():
    Ts = [0.0, 0.05, 0.15]
    sw = sweep_temperature(Ts, ratios=RHO, class_targets=YC)
    assert sw.converged and len(sw) == 3 and np.array_equal(sw.T, Ts)
    pops = sw.populations()
    total = sum(pops.values())
    np.testing.assert_allclose(total, 1.0, atol=1e-9)
    assert pops["1-1-1"][2] == pytest.approx(1.0) and pops["1-1-1"][0] == pytest.approx(sw[0].P_gamma[
        sw[0].code_strings().index("1-1-1")])
    ra = sw.readouts()
    assert np.isnan(ra["0-1-1"][2]).all() and np.isfinite(ra["0-1-1"][0]).all()
    # the single code above T_c: readout from the 1-code equations a psi'(t_c.a) = y_c - T t_c
    s = sw[2]
    np.testing.assert_allclose(s.P_gamma, [1.0])
    np.testing.assert_allclose(s.a_gamma[0] * s.mean_activations[0][:, None], YC - 0.15 * s.t,
                               atol=1e-10)


def test_temperature_validation():
    with pytest.raises(ValueError, match="T must be >= 0"):
        solve_sigmoid_toy(RHO, YC, T=-0.1)
    with pytest.raises(ValueError, match="T_values"):
        sweep_temperature([0.1, -1.0], ratios=RHO, class_targets=YC)
    with pytest.raises(TypeError, match="T_values"):
        sweep_temperature([0.1], ratios=RHO, class_targets=YC, T=0.2)
    with pytest.raises(ValueError, match="T_lo"):
        locate_critical_temperature(0.3, 0.1, ratios=RHO, class_targets=YC)
    with pytest.raises(ValueError, match="raise T_hi"):
        locate_critical_temperature(0.0, 0.05, ratios=RHO, class_targets=YC)
    with pytest.raises(ValueError, match="lower T_lo"):
        locate_critical_temperature(0.15, 0.3, ratios=RHO, class_targets=YC)


# ------------------------------------------------------------------ result containers
def _active(sol, min_weight=1e-6):
    return {c: float(w) for c, w in zip(sol.code_strings(), sol.P_gamma, strict=True) if w > min_weight}


def _check_old_dict_access(res, expected: dict):
    """``res`` is frozen, ``res[old key]`` warns and returns the field, and ``expected`` (the dict
    the function used to return) equals the fields."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(res, dataclasses.fields(res)[0].name, None)
    for key, value in expected.items():
        field = key if key.isidentifier() else None
        with pytest.warns(DeprecationWarning, match=rf"result\['{key}'\] is deprecated; use result\."):
            got = res[key]
        assert got == value and (field is None or got is getattr(res, field))
    with pytest.warns(DeprecationWarning, match="no longer a dict"):
        assert list(res.keys()) == list(expected)
    with pytest.raises(KeyError):
        res["no such key"]


def test_critical_temperature_result():
    loc = locate_critical_temperature(0.05, 0.2, ratios=RHO, class_targets=YC, atol=0.02)
    assert isinstance(loc, CriticalTemperature)
    a, b = loc.interval
    assert 0 < b - a <= 0.02 and loc.T_c == 0.5 * (a + b)
    below, above = _active(solve_sigmoid_toy(RHO, YC, T=a)), _active(solve_sigmoid_toy(RHO, YC, T=b))
    assert loc.codes_below == below and len(below) >= 2
    assert list(above) == [loc.code_above] == ["1-1-1"]
    _check_old_dict_access(loc, {"T_c": 0.5 * (a + b), "interval": (a, b), "codes_below": below,
                                 "code_above": "1-1-1"})


def test_code_transitions_result():
    ys = [0.1, 0.3, 0.5]
    sw = sweep_y_minus(ys, ratios=RHO)
    codes = [tuple(sorted(_active(s))) for s in sw]
    (tr,) = code_transitions(ys, sw)
    assert isinstance(tr, CodeTransition) and tr.failed is None
    assert codes[0] == codes[1] != codes[2]
    _check_old_dict_access(tr, {"between": (0.3, 0.5), "before": codes[1], "after": codes[2]})
    assert "failed" not in tr and "between" in tr
    # a failed grid point: a first entry lists it (the old "failed" key), then the change around it
    failed, change = code_transitions(ys, [sw[0], types.SimpleNamespace(converged=False), sw[2]])
    assert (failed.between, failed.before, failed.after, failed.failed) == (None, None, None, (0.3,))
    assert (change.between, change.before, change.after) == ((0.1, 0.5), codes[0], codes[2])
    _check_old_dict_access(failed, {"between": None, "before": None, "after": None, "failed": (0.3,)})


def test_located_code_transition_result():
    loc = locate_code_transition(0.45, 0.5, ratios=RHO, atol=2e-2)
    assert isinstance(loc, LocatedCodeTransition)
    a, b = loc.interval
    assert 0.45 <= a < b <= 0.5 and b - a <= 2e-2
    before = tuple(sorted(_active(solve_sigmoid_toy(RHO, toy_class_targets(3, y_minus=a)))))
    after = tuple(sorted(_active(solve_sigmoid_toy(RHO, toy_class_targets(3, y_minus=b)))))
    assert before != after and "1-1-1" in after
    _check_old_dict_access(loc, {"y_minus": 0.5 * (a + b), "interval": (a, b), "before": before,
                                 "after": after})
