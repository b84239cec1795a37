"""The coding/deep-relu case: its helpers on hand-made layers and theory outliers, and a tiny
end-to-end run."""

import dataclasses
import math
from types import SimpleNamespace

import numpy as np
import pytest
from cli_helpers import resize_case, validate_one
from richlazy.validate.cases.coding import _deep_relu
from richlazy.validate.cases.coding._deep_relu import (
    strong_single_class_counts,
    theory_outlier_summary,
)


def test_strong_single_class_counts_reads_codes_at_the_threshold():
    N = 16  # threshold 0.25 sqrt(N) = 1
    cm = np.zeros((N, 3))
    cm[0] = [2.0, 0.0, 0.0]  # single class 0
    cm[1] = [0.0, 1.5, 0.5]  # single class 1
    cm[2] = [0.0, 1.2, 3.0]  # classes 1 and 2
    cm[3] = [0.0, 0.0, 1.0]  # exactly at the threshold: not strong
    single, multi = strong_single_class_counts(cm[None])
    assert single.tolist() == [[1, 1, 0]] and multi.tolist() == [1]


def test_strong_single_class_counts_rejects_a_vector():
    with pytest.raises(ValueError, match="act_class_mean"):
        strong_single_class_counts(np.ones(3))


def test_theory_outlier_summary_aggregates_like_the_samples():
    # two outliers along the same ray for class 0 (zbar 0.6 and 0.8 on its inputs: sum of
    # squares 1) and one for class 1; inputs 0, 1 of class 0, input 2 of class 1
    labels = np.array([0, 0, 1])
    zbar = np.array([[0.6, 0.6, -1.0], [0.8, 0.8, -0.5], [-0.3, -0.2, 2.0]])
    abar = np.array([[0.3, -0.15, 0.0], [0.4, -0.2, 0.0], [-0.1, 0.5, 0.0]])
    ts = theory_outlier_summary(SimpleNamespace(abar=abar, zbar=zbar), labels, 2)
    assert ts["n_single"].tolist() == [2, 1]
    assert ts["zbar"] == pytest.approx([1.0, 2.0])
    # abar_0 = sum_i abar_i zbar_i0 / zbar_0 = 0.6 (0.3, -0.15) + 0.8 (0.4, -0.2)
    assert ts["abar"][0, :2] == pytest.approx([0.5, -0.25])
    assert ts["abar"][1, :2] == pytest.approx([-0.1, 0.5])


@pytest.mark.slow
def test_deep_relu_case_runs_at_a_tiny_size(tmp_path, monkeypatch):
    tiny = dataclasses.replace(_deep_relu.SIZES.full, L=3, N=12, P=12, N0=16, y_minus=-0.5, T=0.01, dt=0.01,
                               n_chains=2, n_steps=200, burn_in=40, thin=8)
    resize_case(monkeypatch, _deep_relu.CASE, full=tiny)
    # a cheap theory: the kernel of 200 steps is far from the equilibrium one, and the full
    # certificate search on it (dual ascent, two restarts) takes a minute
    real = _deep_relu.solve_relu_outliers
    monkeypatch.setattr(_deep_relu, "solve_relu_outliers",
                        lambda *a, **k: real(*a, **dict(k, dual_ascent=False, n_restarts=1)))
    out = tmp_path / "rep"
    _, case = validate_one(out, "coding/deep-relu", suite="full", seed=1)
    assert case["error"] is None
    qs = case["quantities"]
    assert len(qs) == 3 * 4 + 3
    shares = [q for q in qs if "share of the class target" in q["name"]]
    assert len(shares) == 3 and all(q["theory"] == 1.0 for q in shares)
    # the theory side: finite aggregated outliers for every class (the outlier-only problem on
    # a sampled kernel has single-class solutions on the toy task)
    zq = [q for q in qs if "outlier preactivation" in q["name"]]
    assert all(math.isfinite(q["theory"]) and q["theory"] > 0 for q in zq)
    assert "layer 1: strong neurons" in case["notes"]
    for f in ("strong_neurons_by_layer.png", "feature_layer_outliers.png", "top_neurons_by_layer.png"):
        assert (out / "figures" / "coding_deep-relu" / f).exists()
