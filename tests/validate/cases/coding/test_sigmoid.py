"""The coding/sigmoid-toy case (full suite only) end to end at a tiny size, with the sampler of its
full configuration (Gibbs-HMC with exact code moves)."""

import dataclasses

import numpy as np
import pytest
from cli_helpers import resize_case, validate_one
from richlazy.theory import solve_sigmoid_toy, toy_class_targets
from richlazy.validate.cases.coding import _sigmoid


@pytest.mark.slow
def test_sigmoid_toy_case_runs_with_code_moves_at_a_tiny_size(tmp_path, monkeypatch):
    full = _sigmoid.SAMPLERS["full"]
    assert full["sampler"] == "gibbs-hmc" and full["code_moves"]
    monkeypatch.setitem(_sigmoid.SAMPLERS, "full", dict(full, adapt_steps=2))
    tiny = dataclasses.replace(_sigmoid.SIZES.full, N=12, P=12, N0=16, n_chains=2, T=0.01, n_steps=12,
                               burn_in=4)
    resize_case(monkeypatch, _sigmoid.CASE, full=tiny)
    out = tmp_path / "rep"
    _, case = validate_one(out, "coding/sigmoid-toy", suite="full", seed=1)
    assert case["error"] is None
    qs = {q["name"]: q for q in case["quantities"]}
    sol = solve_sigmoid_toy(np.array((0.5, 0.25, 0.25)), toy_class_targets(3, y_plus=1.0, y_minus=0.5))
    assert np.isclose(qs["P_gamma code 1-1-1"]["theory"], sol.P_gamma[-1], rtol=1e-12)
    fr = [qs[f"P_gamma code {c}"]["simulation"] for c in ("0-1-1", "1-1-0", "1-0-1", "1-1-1")]
    assert all(0.0 <= f <= 1.0 for f in fr)
    assert "code moves" in case["notes"]
    # the chains' diagnostics reach the report (a verdict of "not mixed" is expected at this length)
    assert np.isfinite(case["max_rhat"]) and case["max_rhat"] >= 0.9 and case["verdict"]
