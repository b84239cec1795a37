"""GP / lazy baseline (notes §6.2)."""

import numpy as np
import pytest
from richlazy.theory import input_kernel, nngp_posterior


def _data(seed=0, P=15, Q=6, N0=20):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N0, P))
    Xs = rng.standard_normal((N0, Q))
    Y = rng.standard_normal((P, 2))
    return X, Xs, Y


def test_linear_gp_matches_textbook_formulas():
    X, Xs, Y = _data()
    K0, k0 = input_kernel(X), input_kernel(X, Xs)
    kss = np.einsum("ij,ij->j", Xs, Xs) / X.shape[0]
    s2 = 0.7
    gp = nngp_posterior(K0, k0, kss, Y, sigma_a2=s2)
    Kinv = np.linalg.inv(K0)
    assert np.allclose(gp.mean, k0.T @ Kinv @ Y)
    assert np.allclose(gp.variance, s2 * (kss - np.einsum("ij,ij->j", k0, Kinv @ k0)))
    Ys = np.zeros((6, 2))
    assert np.allclose(gp.generalization_error(Ys), np.mean(gp.mean**2 + gp.variance[:, None], axis=0))
    assert np.allclose(gp.bias_error(Ys), np.mean(gp.mean**2, axis=0))


@pytest.mark.parametrize("activation", ["relu", "sigmoid_erf", "erf"])
def test_gp_mean_independent_of_sigma_a2_variance_proportional(activation):
    X, Xs, Y = _data(1)
    K0, k0 = input_kernel(X), input_kernel(X, Xs)
    kss = np.einsum("ij,ij->j", Xs, Xs) / X.shape[0]
    a = nngp_posterior(K0, k0, kss, Y, activation=activation, sigma_a2=1.0)
    b = nngp_posterior(K0, k0, kss, Y, activation=activation, sigma_a2=0.01)
    assert np.allclose(a.mean, b.mean, rtol=1e-8, atol=1e-10)
    assert np.allclose(b.variance, 0.01 * a.variance, rtol=1e-6, atol=1e-14)
    assert np.all(a.variance >= 0)


def test_gp_interpolates_training_points():
    X, _, Y = _data(2)
    K0 = input_kernel(X)
    gp = nngp_posterior(K0, K0, np.diag(K0), Y, activation="relu", depth=2)
    assert np.allclose(gp.mean, Y, atol=1e-8)
    assert np.allclose(gp.variance, 0.0, atol=1e-8)


def test_gp_validation():
    X, Xs, Y = _data(3)
    K0, k0 = input_kernel(X), input_kernel(X, Xs)
    kss = np.ones(6)
    with pytest.raises(ValueError, match="k0_cross must have P = 15 rows"):
        nngp_posterior(K0, k0[:-1], kss, Y)
    with pytest.raises(ValueError, match=r"k0_test_diag must have shape \(6,\)"):
        nngp_posterior(K0, k0, np.ones(5), Y)
    with pytest.raises(ValueError, match="depth must be >= 1"):
        nngp_posterior(K0, k0, kss, Y, depth=0)
    with pytest.raises(ValueError, match="noise must be >= 0"):
        nngp_posterior(K0, k0, kss, Y, noise=-1.0)
    with pytest.raises(TypeError, match="activation must be a str"):
        nngp_posterior(K0, k0, kss, Y, activation=3)
    dup = np.ones((4, 4))  # four identical inputs: solved on the kernel's range when consistent
    same = nngp_posterior(dup, np.ones((4, 1)), np.ones(1), np.ones((4, 1)))
    np.testing.assert_allclose(same.mean, [[1.0]], atol=1e-12)
    np.testing.assert_allclose(same.variance, [0.0], atol=1e-12)
    with pytest.raises(ValueError,
                       match=r"singular \(rank 1 of 4\) and Y is not in its range.*pass noise > 0"):
        nngp_posterior(dup, np.ones((4, 1)), np.ones(1), np.arange(4.0)[:, None])
