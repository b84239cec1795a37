"""The sigmoid-data benchmark on a small digits problem: both strategies run on the same
subsets, the bundle converges with a certificate, unavailable datasets are reported."""

import numpy as np
from richlazy.validate.benchmarks._sigmoid_data import (
    bench_sigmoid_data,
    format_bench_sigmoid_data,
)


def test_sigmoid_data_bench_small(monkeypatch, tmp_path):
    monkeypatch.setenv("RICHLAZY_FASHION_MNIST_DIR", str(tmp_path))  # empty: unavailable
    r = bench_sigmoid_data(n_subsets=1, P=12, datasets=("digits", "fashion_mnist"))
    rows = r["datasets"]["digits"]["rows"]
    assert len(rows) == 1 and len(rows[0]["classes"]) == 3
    b = rows[0]["bundle"]
    assert b["converged"] and 0 <= b["rel_gap"] <= 1e-5 and b["n_codes"] >= 1
    assert np.isfinite(rows[0]["continuation"]["seconds"])
    assert "unavailable" in r["datasets"]["fashion_mnist"]
    text = format_bench_sigmoid_data(r)
    assert "digits" in text and "bundle" in text and "fashion_mnist: skipped" in text


def test_general_search_finds_the_maximum_sign_patterns_missed():
    """Fashion-MNIST classes 5, 6, 9 (the bench's first problem): at the t where the
    continuation used to stop, a search from the class patterns alone tops out at Q = 181.550,
    the continuation's tied codes (its former global check, class patterns plus 40 random sign
    patterns, reported them as global), while a maximum at Q = 183.377 exists; 10 prior draws
    z ~ N(0, K0) among the starts find it."""
    import pathlib

    import pytest
    from richlazy.simulate import DatasetUnavailableError
    from richlazy.theory.coding._general_core import _GeneralNeuron, _GeneralSearch
    from richlazy.validate.benchmarks._sigmoid_data import _problems

    try:
        classes, K0, Y = _problems("fashion_mnist", 1, 30, 0)[0]
    except DatasetUnavailableError:
        pytest.skip("Fashion-MNIST (Debian's dataset-fashion-mnist) is not installed")
    assert classes == (5, 6, 9)
    t = np.load(pathlib.Path(__file__).parent / "data" / "fashion_559_continuation_t.npz")["t"]
    neuron = _GeneralNeuron(K0, "sigmoid_erf")
    patterns_only = _GeneralSearch(neuron, Y, 0, np.random.default_rng(0)).maxima(t, full=True)[1]
    with_draws = _GeneralSearch(neuron, Y, 10, np.random.default_rng(0)).maxima(t, full=True)[1]
    assert 30 * patterns_only[0] == pytest.approx(181.550, abs=1e-3)
    assert 30 * with_draws[0] == pytest.approx(183.377, abs=1e-3)
