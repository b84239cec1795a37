"""The sigmoid-data benchmark on a tiny digits problem (P = 6 images of three classes; the
solver itself is tested at larger P elsewhere): both strategies run on the same
subsets, the bundle converges with a certificate, unavailable datasets are reported."""

import numpy as np
import pytest
from richlazy.validate.benchmarks._sigmoid_data import (
    bench_sigmoid_data,
    format_bench_sigmoid_data,
)


@pytest.mark.slow
def test_sigmoid_data_bench_small(monkeypatch, tmp_path):
    monkeypatch.setenv("RICHLAZY_FASHION_MNIST_DIR", str(tmp_path))  # empty: unavailable
    r = bench_sigmoid_data(n_subsets=1, P=6, datasets=("digits", "fashion_mnist"))
    rows = r["datasets"]["digits"]["rows"]
    assert len(rows) == 1 and len(rows[0]["classes"]) == 3
    b = rows[0]["bundle"]
    assert b["converged"] and 0 <= b["rel_gap"] <= 1e-5 and b["n_codes"] >= 1
    assert np.isfinite(rows[0]["continuation"]["seconds"])
    assert "unavailable" in r["datasets"]["fashion_mnist"]
    text = format_bench_sigmoid_data(r)
    assert "digits" in text and "bundle" in text and "fashion_mnist: skipped" in text



@pytest.mark.slow
def test_sigmoid_data_bench_strategies_option():
    r = bench_sigmoid_data(n_subsets=1, P=6, datasets=("digits",), strategies=("bundle",))
    assert set(r["datasets"]["digits"]["rows"][0]) == {"classes", "bundle"}
    assert "continuation" not in format_bench_sigmoid_data(r)
    with pytest.raises(ValueError, match="strategies"):
        bench_sigmoid_data(n_subsets=1, P=6, strategies=("newton",))
