"""richlazy.validate.recipes (ReLU): reading outliers and bulk off samples, seeded states."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from richlazy.simulate import NetworkPosterior, NetworkSpec, make_generator, orthogonal_toy_task
from richlazy.validate.recipes import outlier_summary, seed_single_class_outliers

N, M, K = 400, 3, 3


def _bulk(rng, E=2):
    """Bulk-only samples (E, N, m) / (E, N, k): O(1) readouts and activations."""
    A = 0.1 + 0.2 * rng.standard_normal((E, N, M))
    zm = rng.standard_normal((E, N, K))
    cm = rng.uniform(0.2, 0.8, (E, N, K))
    return A, zm, cm


def _plant(A, zm, cm, e, i, c, abar, zbar):
    """Neuron i of network e becomes a single-class outlier of class c."""
    r = math.sqrt(N)
    A[e, i] = r * np.asarray(abar)
    zm[e, i] = -1.0
    zm[e, i, c] = r * zbar
    cm[e, i] = 0.05
    cm[e, i, c] = r * zbar


def test_single_outliers_and_bulk_are_read_off_exactly():
    rng = np.random.default_rng(1)
    A, zm, cm = _bulk(rng)
    abars = np.array([[0.7, -0.4, -0.3], [-0.3, 0.6, -0.3], [-0.35, -0.3, 0.65]])
    zbars = np.array([1.3, 1.6, 1.5])
    for e in range(2):
        for c in range(K):
            _plant(A, zm, cm, e, 10 * c + e, c, abars[c], zbars[c])
    s = outlier_summary(A, zm, cm)
    np.testing.assert_array_equal(s["n_single"], np.ones((2, K)))
    np.testing.assert_array_equal(s["n_other"], [0, 0])
    np.testing.assert_allclose(s["zbar"], np.broadcast_to(zbars, (2, K)), rtol=1e-12)
    np.testing.assert_allclose(s["abar"], np.broadcast_to(abars, (2, K, M)), rtol=1e-12)
    for e in range(2):
        bulk = np.ones(N, bool)
        bulk[[10 * c + e for c in range(K)]] = False
        np.testing.assert_allclose(s["a0"][e], A[e, bulk].mean(0), rtol=1e-12)
        np.testing.assert_allclose(s["bulk_activation"][e], cm[e, bulk].mean(0), rtol=1e-12)
        big = np.linalg.norm(A[e], axis=1)
        assert s["gap"][e] == pytest.approx(big[~bulk].min() / big[bulk].max(), rel=1e-12)


def test_split_outlier_aggregates_to_the_merged_one():
    """Two outliers on the same ray (abar_i, zbar_i) = (cos, sin) x (abar, zbar) give the
    theory's single outlier (abar, zbar): only s_c = sum zbar^2 is fixed."""
    rng = np.random.default_rng(2)
    A, zm, cm = _bulk(rng, E=1)
    abar, zbar = np.array([-0.3, 0.6, -0.3]), 1.6
    th = 0.6
    _plant(A, zm, cm, 0, 3, 1, math.cos(th) * abar, math.cos(th) * zbar)
    _plant(A, zm, cm, 0, 7, 1, math.sin(th) * abar, math.sin(th) * zbar)
    s = outlier_summary(A, zm, cm)
    np.testing.assert_array_equal(s["n_single"][0], [0, 2, 0])
    assert s["zbar"][0, 1] == pytest.approx(zbar, rel=1e-12)
    np.testing.assert_allclose(s["abar"][0, 1], abar, rtol=1e-12)
    assert np.isnan(s["zbar"][0, 0]) and np.all(np.isnan(s["abar"][0, 2]))


def test_multi_class_outlier_is_not_single_class():
    rng = np.random.default_rng(3)
    A, zm, cm = _bulk(rng, E=1)
    _plant(A, zm, cm, 0, 0, 0, [0.7, -0.4, -0.3], 1.3)
    cm[0, 0, 2] = math.sqrt(N) * 0.8  # also active on class 2
    s = outlier_summary(A, zm, cm)
    np.testing.assert_array_equal(s["n_single"][0], [0, 0, 0])
    assert s["n_other"][0] == 1


def test_outlier_summary_rejects_bad_input():
    A = np.zeros((2, 5, 3))
    with pytest.raises(ValueError, match="must share the leading shape"):
        outlier_summary(A, np.zeros((2, 4, 3)), np.zeros((2, 4, 3)))
    with pytest.raises(ValueError, match="threshold must be a finite number > 0, got -1"):
        outlier_summary(A, np.zeros((2, 5, 3)), np.zeros((2, 5, 3)), threshold=-1)


def _posterior(L=1, project=True):
    task = orthogonal_toy_task(8, 10, ratios=(0.5, 0.25, 0.25), y_plus=1.0, y_minus=-0.5, seed=0)
    spec = NetworkSpec(N0=10, N=6, L=L, m=3, activation="relu", regime="nonlazy")
    post = NetworkPosterior(spec, task.X, task.Y, T=0.01, sigma_a2=1 / 8, project_inputs=project)
    return post, task


def test_seeded_state_has_the_requested_single_class_neurons():
    post, task = _posterior()
    theta = post.sample_prior(3, generator=make_generator(0, "cpu"))
    Yc = np.array([[1.0, -0.5, -0.5], [-0.5, 1.0, -0.5], [-0.5, -0.5, 1.0]])
    amps = (0.5, 2.0)
    before = theta.clone()
    new = seed_single_class_outliers(post, theta, task.labels, Yc, amps)
    assert torch.equal(theta, before)  # the input is not modified
    z_old = post.preactivations(theta)[0]
    z = post.preactivations(new)[0]  # (E, N, P), computed by the network itself
    A = post.unflatten(new)["A"]
    r = math.sqrt(6)
    for e in range(3):
        amp = amps[e % 2]
        for c in range(3):
            on = torch.as_tensor(task.labels == c)
            torch.testing.assert_close(z[e, c, on], torch.full((int(on.sum()),), amp * r,
                                                               dtype=z.dtype))
            torch.testing.assert_close(z[e, c, ~on], -z_old[e, c, ~on].abs())
            torch.testing.assert_close(A[e, c], torch.as_tensor(Yc[c] * 0.5 * amp * r))
        # the other neurons keep their prior draw
        torch.testing.assert_close(z[e, 3:], z_old[e, 3:])


def test_seeded_state_rejects_unsupported_networks():
    post, task = _posterior(project=False)
    theta = post.sample_prior(1, generator=make_generator(0, "cpu"))
    with pytest.raises(ValueError, match="needs L = 1 and project_inputs=True"):
        seed_single_class_outliers(post, theta, task.labels, np.eye(3), (1.0,))
    post, task = _posterior()
    theta = post.sample_prior(1, generator=make_generator(0, "cpu"))
    with pytest.raises(ValueError, match="amplitudes must be positive numbers"):
        seed_single_class_outliers(post, theta, task.labels, np.eye(3), (0.0,))
    with pytest.raises(ValueError, match="class_targets must be"):
        seed_single_class_outliers(post, theta, task.labels, np.eye(2), (1.0,))
