"""Multi-class ReLU outliers on the toy task (y- > 0, where single-class outliers leave the
readout integral unstable): the KKT conditions re-evaluated independently, convex optimality
against random feasible t, and the structure of the y- = +1/2 optimum."""

import functools

import numpy as np
import pytest
from richlazy.theory import relu_stability_margin, solve_relu_toy, toy_class_targets
from richlazy.theory.coding._code_core import _ToyNeuron
from richlazy.theory.kernels._tilted import tilted_moments_quad
from theory_helpers import RHO


@functools.cache
def _solve(y_minus):
    return solve_relu_toy(RHO, toy_class_targets(3, y_minus=y_minus))


@pytest.fixture(scope="module", params=[0.5, 0.25])
def sol(request):
    """y- = +1/2 (the single-class solution has lambda* = 1.048) and +1/4 (1.010)."""
    return request.param, _solve(request.param)


@pytest.mark.slow
def test_multiclass_outliers_solve_the_kkt_system(sol):
    """Converged with at least one outlier on several classes; every outlier stationary
    (abar = sum_c rho_c t_c zbar_c, zbar_c = relu(t_c . abar) on its classes, t_c . abar <= 0 on
    the others) and marginal; bulk stationarity and the output constraint with the scipy-quad
    M(h); lambda* = 1 (the single-class solution had lambda* > 1)."""
    y_minus, s = sol
    assert s.converged, s.message
    assert "multi-class" in s.message
    assert np.any(s.outlier_codes.sum(axis=1) > 1)
    Yc = toy_class_targets(3, y_minus=y_minus)
    _, M, _ = (np.asarray(v) for v in tilted_moments_quad(s.t @ s.a0, activation="relu"))
    np.testing.assert_allclose(s.a0, (RHO * M) @ s.t, atol=1e-11)
    out = M[:, None] * s.a0[None, :] + s.outlier_class_preactivations.T @ s.outlier_readouts
    np.testing.assert_allclose(out, Yc, atol=1e-11)
    for o in s.outliers():
        abar, z = o["abar"], o["zbar_classes"]
        np.testing.assert_allclose(abar, (RHO * z) @ s.t, atol=1e-11)
        h = s.t @ abar
        on = np.asarray(o["codes"])
        np.testing.assert_allclose(z[on], h[on], atol=1e-11)
        assert np.all(h[np.setdiff1d(np.arange(3), on)] <= 1e-9)
        # marginal: log-weight E = -|abar|^2/2 - |zbar|_rho^2/2 + abar . t^T (rho zbar) = 0
        E = -0.5 * abar @ abar - 0.5 * np.sum(RHO * z * z) + abar @ ((RHO * z) @ s.t)
        assert abs(E) < 1e-10
    assert abs(relu_stability_margin(s.t, RHO)[0] - 1.0) < 1e-10
    assert s.bulk_gap < 0


def test_multiclass_optimum_is_the_constrained_minimum(sol):
    """Phi(t) = max_a g_t(a) - sum rho_c t_c . y_c does not decrease under random feasible
    perturbations of t (scaled into lambda*(t) <= 1; lambda* is homogeneous of degree 2)."""
    y_minus, s = sol
    Yc = toy_class_targets(3, y_minus=y_minus)
    neuron = _ToyNeuron(RHO, "relu", True, 0, 3)

    def phi(t):
        A, g, _ = neuron.local_maxima(t, np.vstack([np.zeros(3), s.a0]))
        return g[0] - np.sum(RHO * np.sum(t * Yc, axis=1))

    p0 = phi(s.t)
    rng = np.random.default_rng(0)
    for _ in range(12):
        t = s.t + 0.05 * rng.standard_normal((3, 3))
        lam = relu_stability_margin(t, RHO)[0]
        t = t / np.sqrt(max(lam, 1.0)) * (1 - 1e-9)
        assert phi(t) >= p0 - 1e-12


def test_y_minus_half_gives_orthogonal_marginal_fields():
    """At y- = +1/2 the optimum has rho_c |t_c|^2 = 1 and mutually orthogonal t_c, so every
    direction in their positive cone is marginal and the split into outliers is not unique (the
    message says so); the outputs and the outlier feature kernel do not depend on the split."""
    s = _solve(0.5)
    assert s.converged, s.message
    np.testing.assert_allclose(s.marginality, 1.0, atol=1e-10)
    off = (s.t @ s.t.T)[~np.eye(3, dtype=bool)]
    np.testing.assert_allclose(off, 0.0, atol=1e-10)
    assert "not unique" in s.message
    # the outlier kernel from the reported split equals t_c^T Q t_c' with
    # Q = sum_j abar_j abar_j^T (every outlier direction lies in the positive cone)
    Z = s.outlier_class_preactivations
    Q = s.outlier_readouts.T @ s.outlier_readouts
    np.testing.assert_allclose(Z.T @ Z, s.t @ Q @ s.t.T, atol=1e-10)
