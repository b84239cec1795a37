"""Observables of sampled ensembles."""

import numpy as np
import pytest
import torch
from richlazy.simulate import NetworkPosterior, NetworkSpec, make_generator, orthogonal_toy_task
from richlazy.validate.observables import (
    class_block_means,
    class_means,
    layer_kernels,
    readout_second_moment,
)


def test_class_block_means_against_a_loop():
    rng = np.random.default_rng(0)
    labels = np.array([0, 0, 1, 2, 1, 0, 2, 2])
    M = torch.as_tensor(rng.standard_normal((2, 8, 8)))
    d, b = class_block_means(M, labels, 3)
    for e in range(2):
        for c in range(3):
            ic = np.flatnonzero(labels == c)
            assert np.isclose(d[e, c], M[e].numpy()[ic, ic].mean())
            for k in range(3):
                ik = np.flatnonzero(labels == k)
                vals = [M[e, i, j].item() for i in ic for j in ik if i != j]
                assert np.isclose(b[e, c, k], np.mean(vals))
    F = torch.as_tensor(rng.standard_normal((8, 2)))
    cm = class_means(F, labels, 3)
    assert np.allclose(cm[1], F.numpy()[labels == 1].mean(0))
    with pytest.raises(ValueError, match="at least 2 inputs"):
        class_block_means(M, np.array([0, 0, 0, 0, 1, 1, 1, 2]), 3)


def test_layer_kernels_and_readout_moment():
    task = orthogonal_toy_task(6, 9, seed=0)
    post = NetworkPosterior(NetworkSpec(N0=9, N=5, L=2, m=3, activation="relu"), task.X, task.Y,
                            T=1.0, sigma_a2=0.5)
    th = post.sample_prior(3, generator=make_generator(0, torch.device("cpu")))
    K1, K2 = layer_kernels(post, th)
    zs = post.preactivations(th)
    h2 = torch.relu(zs[1])
    assert torch.allclose(K2, h2.transpose(1, 2) @ h2 / 5)
    assert K1.shape == (3, 6, 6)
    A = post.unflatten(th)["A"]
    assert torch.allclose(readout_second_moment(post, th)[1], A[1].T @ A[1] / 5)
    with pytest.raises(ValueError, match="layers must be in 1..L = 2"):
        layer_kernels(post, th, layers=[3])
