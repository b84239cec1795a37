"""The code-moves benchmark at a tiny size: its numbers are consistent with each other."""

import pytest
from richlazy.validate.benchmarks._code_moves import bench_code_moves, format_bench_code_moves


@pytest.mark.usefixtures("one_torch_thread")
def test_code_moves_bench_reports_cost_ratios_and_code_changes():
    r = bench_code_moves(sizes=(12,), effect_P=12, n_probe=3, quench_steps=20, min_time=0.05,
                         effect_time=0.3)
    (c,) = r["cost"]
    assert c["P"] == 12 and c["neuron_move_ms"] > 0 and c["hmc_transition_ms"] > 0
    assert c["sweep_s"] == pytest.approx(c["neuron_move_ms"] * 12 / 1e3)
    assert c["sweep_over_hmc"] == pytest.approx(c["sweep_s"] / (c["hmc_transition_ms"] / 1e3))
    e, h = r["effect"]["code_moves"], r["effect"]["hmc_only"]
    assert e["transitions"] >= 1 and h["transitions"] >= 1
    assert 0.0 <= e["acceptance"] <= 1.0 and h["acceptance"] is None
    for run in (e, h):
        f0, f1 = run["fractions_before"], run["fractions_after"]
        assert run["gap_before"] == pytest.approx((f0[2] + f0[3] - f0[0] - f0[1]) / 2)
        assert run["gap_after"] == pytest.approx((f1[2] + f1[3] - f1[0] - f1[1]) / 2)
    assert e["fractions_before"] == h["fractions_before"]  # both start from the same state
    text = format_bench_code_moves(r)
    assert "P = 12" in text and "Gibbs-HMC alone" in text and "1-1-1" in text
