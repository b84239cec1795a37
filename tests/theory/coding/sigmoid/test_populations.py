"""Conditional (given-population) mean-field solution of the sigmoidal toy task."""

import numpy as np
import pytest
from richlazy.theory import solve_sigmoid_toy, solve_sigmoid_toy_populations, toy_class_targets
from richlazy.theory.coding._code_core import _ToyNeuron
from theory_helpers import RHO


@pytest.fixture(scope="module")
def eq04():
    Y = toy_class_targets(3, y_plus=1.0, y_minus=0.4)
    return Y, solve_sigmoid_toy(RHO, Y, throw=True)


def test_equilibrium_populations_reproduce_the_equilibrium_solution(eq04):
    Y, s = eq04
    c = solve_sigmoid_toy_populations(RHO, Y, s.P_gamma, s.a_gamma + 0.05, t0=s.t + 0.05, throw=True)
    np.testing.assert_allclose(c.a_gamma, s.a_gamma, atol=1e-9)
    np.testing.assert_allclose(c.t, s.t, atol=1e-9)
    # the equilibrium codes tie (degeneracy) although the condition was not imposed
    assert np.ptp(c.g_values) < 1e-9
    assert np.all(c.is_maximum)


def test_metastable_population_solution_satisfies_the_equations(eq04):
    Y, s = eq04
    Pg = np.array([0.32, 0.31, 0.31, 0.06])
    A0 = np.vstack([s.a_gamma, s.other_maxima[:1]])
    c = solve_sigmoid_toy_populations(RHO, Y, Pg, A0, t0=s.t, throw=True)
    nr = _ToyNeuron(RHO, "sigmoid_erf", True, 121)
    val, grad, _, _, p1, _ = nr.evaluate(c.a_gamma, c.t)
    assert np.max(np.abs(grad)) < 1e-9  # stationarity, recomputed independently of the solver
    out = np.einsum("g,gc,gr->cr", Pg, p1, c.a_gamma)
    np.testing.assert_allclose(out, Y, atol=1e-9)  # output constraint
    # with neurons removed from the equilibrium codes, the codes are no longer tied
    assert np.ptp(c.g_values[:3]) > 1e-3


@pytest.mark.parametrize("kw, match", [
    (dict(populations=[0.5, 0.6]), "populations"),
    (dict(populations=[-0.1, 1.1]), "populations"),
    (dict(a_start=np.zeros((3, 3))), "a_start"),
    (dict(t0=np.zeros((2, 3))), "t0"),
    (dict(ratios=[0.5, 0.6, -0.1]), "ratios"),
    (dict(threshold=1.5), "threshold"),
])
def test_bad_input(kw, match):
    args = dict(ratios=RHO, class_targets=toy_class_targets(3, y_plus=1.0, y_minus=0.4),
                populations=[0.5, 0.5], a_start=np.zeros((2, 3)), t0=np.zeros((3, 3)))
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        solve_sigmoid_toy_populations(args.pop("ratios"), args.pop("class_targets"), args.pop("populations"),
                                      args.pop("a_start"), **args)
