"""Helpers shared by the theory tests (on sys.path through pytest's ``pythonpath``)."""

import numpy as np
from richlazy.theory import input_kernel, toy_class_targets
from richlazy.theory.kernels._tilted import tilted_moments_quad

# the class ratios of the Fig. 2 / 4 toy configuration (seed 000): [1/2, 1/4, 1/4]
RHO = np.array([0.5, 0.25, 0.25])


def assert_sigmoid_toy_equations(s, targets):
    """Stationarity, degeneracy and the output constraint of a sigmoid toy solution ``s`` (class
    ratios RHO) re-evaluated with the scipy-quad reference of psi (independent of the solver's
    Gauss-Hermite kernel), the output against ``targets``; returns the class outputs."""
    psi, d1, _ = (np.asarray(v) for v in tilted_moments_quad(s.a_gamma @ s.t.T))
    stat = -s.a_gamma + (d1 * RHO) @ s.t
    g = -0.5 * np.sum(s.a_gamma**2, axis=1) + psi @ RHO
    out = np.einsum("g,gc,gr->cr", s.P_gamma, d1, s.a_gamma)
    assert np.max(np.abs(stat)) < 1e-10
    assert np.max(np.abs(g - g[0])) < 1e-10
    np.testing.assert_allclose(out, targets, atol=1e-10)
    return out


def class_correlated_inputs(P, N0, Q=0, seed=5):
    """P inputs as the columns of X (N0, P), input mu in class mu % 3: its class mean (standard
    normal, drawn first) plus 0.8 standard normal noise; then Q test inputs drawn the same way.
    Returns (X, labels, test X (N0, Q), test labels)."""
    rng = np.random.default_rng(seed)
    lab = np.arange(P) % 3
    means = rng.standard_normal((3, N0))
    X = (means[lab] + 0.8 * rng.standard_normal((P, N0))).T
    labs = np.arange(Q) % 3
    Xs = (means[labs] + 0.8 * rng.standard_normal((Q, N0))).T
    return X, lab, Xs, labs


def class_correlated_problem(P=12, N0=40, seed=5):
    """(K0, Y): the input kernel of :func:`class_correlated_inputs` and one-hot targets y+ = 1,
    y- = -1/2."""
    X, lab, _, _ = class_correlated_inputs(P, N0, seed=seed)
    return input_kernel(X), toy_class_targets(3, y_minus=-0.5)[lab]
