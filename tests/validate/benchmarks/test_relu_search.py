"""The relu-search benchmark on a small digits problem: the compiled search and the scipy
baseline from the same starts agree on the largest maximum (the compiled one may only be higher:
its face polish makes a kink's value exact), and unavailable datasets are reported."""

import numpy as np
import pytest
from richlazy.validate.benchmarks._relu_search import bench_relu_search, format_bench_relu_search


@pytest.mark.slow
def test_relu_search_bench_small(monkeypatch, tmp_path):
    monkeypatch.setenv("RICHLAZY_FASHION_MNIST_DIR", str(tmp_path))  # empty: unavailable
    r = bench_relu_search(n_starts=60, P=12, datasets=("digits", "fashion_mnist"))
    d = r["datasets"]["digits"]
    assert len(d["classes"]) == 3 and d["n_starts"] == 60
    assert d["margin"] >= d["baseline_margin"] * (1 - 1e-6)
    assert d["margin"] == pytest.approx(d["baseline_margin"], rel=1e-3)
    assert d["n_maxima"] >= 1 and d["baseline_n_maxima"] >= 1
    assert np.isfinite(d["ratio"]) and d["ratio"] > 0
    assert "unavailable" in r["datasets"]["fashion_mnist"]
    text = format_bench_relu_search(r)
    assert "faster" in text and "fashion_mnist: skipped" in text
    with pytest.raises(ValueError, match="n_starts"):
        bench_relu_search(n_starts=0)
