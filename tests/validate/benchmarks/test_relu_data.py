"""The relu-data benchmark on a small digits problem: both variants run on the same subset, the
dual ascent never lowers the bound (so never widens the gap) and unavailable datasets are
reported."""

import numpy as np
import pytest
from richlazy.validate.benchmarks._relu_data import bench_relu_data, format_bench_relu_data


@pytest.mark.slow
def test_relu_data_bench_small(monkeypatch, tmp_path):
    monkeypatch.setenv("RICHLAZY_FASHION_MNIST_DIR", str(tmp_path))  # empty: unavailable
    r = bench_relu_data(n_subsets=1, P=12, datasets=("digits", "fashion_mnist"))
    row = r["datasets"]["digits"]["rows"][0]
    assert len(row["classes"]) == 3
    plain, ascent = row["KKT multiplier"], row["dual ascent"]
    # the same point with a bound at least as good, or a cheaper network along the ascent's
    # directions (returned instead of the KKT point)
    assert ascent["cost"] <= plain["cost"] * (1 + 1e-12)
    assert plain["n_outliers"] == ascent["n_outliers"] >= 1 or ascent["cost"] < plain["cost"]
    assert 0 <= ascent["gap"] <= plain["gap"] + 1e-12
    assert ascent["converged"] >= plain["converged"]
    assert np.isfinite(ascent["seconds"])
    assert "unavailable" in r["datasets"]["fashion_mnist"]
    text = format_bench_relu_data(r)
    assert "dual ascent" in text and "fashion_mnist: skipped" in text
    with pytest.raises(ValueError, match="n_subsets"):
        bench_relu_data(n_subsets=0)
