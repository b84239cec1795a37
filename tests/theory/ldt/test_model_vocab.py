"""The public erf problem object (:class:`richlazy.theory.ErfModel`), the seed-002 vocabulary
(``rtol`` with ``xtol`` as deprecated alias, ``seed`` as int or Generator, per-element statuses)
and the public cache control of the scaling tables."""

import math

import numpy as np
import pytest
from richlazy.theory import (
    ErfModel,
    SolverError,
    ak_two_layer_erf,
    chernoff_energy,
    clear_table_cache,
    feature_propagation_rkhs,
    ldt_two_layer_erf,
    outlier_threshold,
    scaling_tables,
    tilted_overlap_density,
)
from richlazy.theory._results import Status


def test_erf_model_fields_and_derived_quantities():
    pr = ErfModel(10, 20, sigma_w2=1.5, sigma_a2=0.5, chi="mean-field")
    assert pr.chi == 20.0 and pr.perp == "frozen" and pr.degree == 3
    assert pr.c2 == pytest.approx(8.0 / (3.0 * math.pi), rel=1e-15)
    assert pr.b == pytest.approx(1.0 + 2.0 * 1.5 * 9 / 10, rel=1e-15)
    assert pr.prec == pytest.approx(10 / 1.5) and pr.scale == pytest.approx(0.5 / 20)
    assert pr.g_inf == pytest.approx(pr.c2 / 8)
    assert pr.tau(3.0) == pytest.approx(9.0 * 0.5 / (2 * 20 * 20))
    assert ErfModel(10, 20, chi="standard").chi == 1.0
    logz, mean, var = pr.moments(0.0)
    assert logz == 0.0 and 0 < mean < pr.g_inf and var > 0


def test_erf_model_overlap_density_matches_tilted_overlap_density():
    for perp in ("frozen", "exact"):
        pr = ErfModel(12, 12, perp=perp)
        w = np.linspace(-1.5, 1.5, 31)
        t = 20.0
        np.testing.assert_allclose(np.exp(pr.log_overlap_density(w, pr.tau(t))),
                                   tilted_overlap_density(w, t, 12, 12, perp=perp), rtol=1e-14)


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (lambda: ErfModel(1, 5), ValueError, "d must be >= 2"),
        (lambda: ErfModel(5, 0), ValueError, "N must be >= 1"),
        (lambda: ErfModel(5, 5, sigma_w2=0.0), ValueError, "sigma_w2 must be > 0"),
        (lambda: ErfModel(5, 5, chi="lazy"), ValueError, "chi must be a positive number"),
        (lambda: ErfModel(5, 5, degree=2), ValueError, "degree must be odd"),
        (lambda: ErfModel(5, 5, points_per_width=1.0), ValueError, "points_per_width must be >= 2"),
        (lambda: ErfModel(5, 5, perp="x"), ValueError, "perp must be 'frozen'"),
        (lambda: ErfModel(5, 5).moments(-1.0), ValueError, "tau must be >= 0"),
        (lambda: ErfModel(5, 5).tail(1.0, -0.1), ValueError, "threshold must be >= 0"),
        (lambda: ErfModel(5.5, 5), TypeError, "d must be an integer"),
    ],
)
def test_erf_model_validation(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_frozen_tail_is_the_outlier_fraction_of_the_ldt():
    d, N = 20, 20
    r = ldt_two_layer_erf(0.4, d, N)
    pr = ErfModel(d, N)
    frac, rperp = pr.tail(float(r.tau_star), outlier_threshold(d))
    assert frac == float(r.outlier_fraction)
    assert rperp == pytest.approx((d - 1) / d, rel=1e-14)


def test_xtol_is_a_deprecated_alias_of_rtol():
    new = ldt_two_layer_erf([0.2, 0.5], 16, 16, rtol=1e-10)
    with pytest.warns(DeprecationWarning, match="xtol= is deprecated"):
        old = ldt_two_layer_erf([0.2, 0.5], 16, 16, xtol=1e-10)
    np.testing.assert_array_equal(old.energy, new.energy)
    np.testing.assert_array_equal(old.t_star, new.t_star)
    new = ak_two_layer_erf([50.0, 200.0], 16, 16, rtol=1e-10)
    with pytest.warns(DeprecationWarning, match="xtol= is deprecated"):
        old = ak_two_layer_erf([50.0, 200.0], 16, 16, xtol=1e-10)
    np.testing.assert_array_equal(old.mean_alignment, new.mean_alignment)
    with pytest.raises(TypeError, match="pass rtol= only"):
        ldt_two_layer_erf(0.2, 16, 16, rtol=1e-10, xtol=1e-10)


def test_grid_results_carry_per_element_statuses():
    r = ldt_two_layer_erf(np.array([[0.2, 0.5], [0.8, 1.1]]), 16, 16)
    assert r.statuses.shape == (2, 2) and np.all(r.statuses == Status.SUCCESS)
    assert r.status is Status.SUCCESS
    ak = ak_two_layer_erf([10.0, 100.0, 1000.0], 16, 16)
    assert ak.statuses.tolist() == [0, 0, 0] and ak.converged
    # a budget of one Brent iteration per alpha cannot converge: MAX_ITERATIONS, per element
    bad = ldt_two_layer_erf([0.2, 0.5], 16, 16, maxiter=1)
    assert not bad.converged and bad.status is Status.MAX_ITERATIONS
    assert np.all(bad.statuses == Status.MAX_ITERATIONS) and "maxiter" in bad.message
    with pytest.raises(SolverError, match="maxiter"):
        ak_two_layer_erf([10.0], 16, 16, maxiter=1, throw=True)


def test_chernoff_statuses_distinguish_budget_from_bad_problem():
    p = 0.3
    cgf = lambda t: np.log1p(p * np.expm1(t))  # noqa: E731
    r = chernoff_energy(np.array([0.5, 1.2]), cgf)
    assert r.statuses.tolist() == [Status.SUCCESS, Status.BAD_PROBLEM]
    assert r.status is Status.BAD_PROBLEM
    # the same well-posed alpha with a bisection budget of 2: the budget ran out
    r = chernoff_energy(np.array([0.5]), cgf, maxiter=2)
    assert r.statuses.tolist() == [Status.MAX_ITERATIONS]
    assert r.status is Status.MAX_ITERATIONS and "maxiter" in r.message
    # beyond the edge of the CGF domain (exponential law, Lambda infinite for t >= 2)
    lam = 2.0

    def cgf_exp(t):
        return np.where(t < lam, -np.log(np.clip(1 - t / lam, 1e-300, None)), np.inf)

    r = chernoff_energy(np.array([1.0]), cgf_exp)
    assert r.converged and r.statuses.tolist() == [0]


def test_feature_propagation_seed_int_or_generator():
    kw = dict(d=5, N=40, n=30, rcond=1e-6)
    a = feature_propagation_rkhs([0.0, 10.0], seed=3, **kw)
    b = feature_propagation_rkhs([0.0, 10.0], seed=np.random.default_rng(3), **kw)
    np.testing.assert_array_equal(a.rkhs_norm, b.rkhs_norm)
    with pytest.raises(TypeError, match="seed must be a non-negative int or a numpy"):
        feature_propagation_rkhs([0.0], seed=None, **kw)


def test_table_cache_can_be_bypassed_and_cleared():
    warm = scaling_tables(model="fcn2-erf-He3")
    again = scaling_tables(model="fcn2-erf-He3")
    cold = scaling_tables(model="fcn2-erf-He3", cache=False)
    assert [r.to_dict() for r in cold] == [r.to_dict() for r in warm] == [r.to_dict() for r in again]
    clear_table_cache()
    assert [r.to_dict() for r in scaling_tables(model="fcn2-erf-He3")] == [
        r.to_dict() for r in warm]
    with pytest.raises(TypeError, match="cache must be True or False"):
        scaling_tables(cache=1)
