"""The coding/deep-sigmoid case: tiny end-to-end runs (its helpers: tests/validate/recipes/)."""

import dataclasses

import pytest
from cli_helpers import resize_case, validate_one
from richlazy.validate.cases.coding import _deep


@pytest.mark.slow
@pytest.mark.parametrize("L", [2, 3])
def test_deep_sigmoid_case_runs_at_a_tiny_size(tmp_path, monkeypatch, L):
    resize_case(monkeypatch, _deep.CASE,
                quick=dataclasses.replace(_deep.SIZES.quick, L=L, N=12, P=12, N0=16, y_minus=0.5, T=0.01,
                                          dt=0.02, n_chains=2, n_steps=200, burn_in=40, thin=8))
    if L > 2:  # one cheap Newton step of the L-layer theory (3 field nodes per dimension)
        from richlazy.validate.recipes import _deep_rows

        real = _deep_rows.solve_sigmoid_deep
        monkeypatch.setattr(_deep_rows, "solve_sigmoid_deep",
                            lambda *a, **k: real(*a, **dict(k, maxiter=1, quad_nodes=3)))
    out = tmp_path / "rep"
    _, case = validate_one(out, "coding/deep-sigmoid", seed=1)
    assert case["error"] is None
    names = [q["name"] for q in case["quantities"]]
    assert names[0].startswith(f"feature layer {L}: code persistence")
    assert names[1].startswith("layer 1: code persistence")
    for q in case["quantities"][:2]:  # persistences are fractions; the excess of layer 1 a difference
        assert -1.0 <= q["simulation"] <= 1.0 and q["stderr"] > 0
    assert case["quantities"][0]["theory"] == 1.0 and case["quantities"][1]["theory"] == 0.0
    # the feature layer given the sampled kernel below: fractions of the theory's codes sum to <= 1
    sc = [q for q in case["quantities"] if f"(self-consistent L = {L} theory)" in q["name"]]
    given = [q for q in case["quantities"] if f"(given K_{L - 1})" in q["name"]]
    cond = [q for q in case["quantities"] if "(given the sampled K~_1)" in q["name"]]
    assert len(given) + len(sc) + len(cond) == len(case["quantities"]) - 2
    # at this size and seed the L = 2 map has a fixed point, and one Newton step of the L = 3 map
    # (3 field nodes) does not reach one: each branch of the case is exercised, and pinned
    assert bool(sc) == (L == 2)
    if L == 2:  # a fixed point: feature layer + 9 class blocks of K_1 + 2^3 layer-1 code fractions
        assert not given and "fixed point of the L = 2 map" in case["notes"]
        first = [q for q in sc if q["name"].startswith("layer 1:")]
        assert len(first) == 9 + 8
        codes = [q for q in first if "fraction in code" in q["name"]]
        assert sum(q["theory"] for q in codes) == pytest.approx(1.0, abs=1e-8)
        assert sum(q["simulation"] for q in codes) == pytest.approx(1.0, abs=1e-6)
        assert all(0.0 < q["theory"] < 1.0 for q in first if "K_1" in q["name"])
    else:  # L = 3, no fixed point: the feature layer given the sampled kernel below, and layer 1
        # given the sampled conjugate kernel (S3) with sampled moments
        assert given and "Feature layer given the sampled" in case["notes"]
        assert "Falling back" in case["notes"]
        assert f"Self-consistent L = {L} theory" in case["notes"]
        assert "Layer 1 given the sampled K~_1" in case["notes"]
        # ... whose exact field integral does not converge on these tiny, short chains' moments:
        # no conditional rows (their 9 + 8 rows are checked at quick size by the suite's report)
        assert cond == []
    feature = [q for q in sc + given if q["name"].startswith("feature layer:")]
    fracs = [q for q in feature if "fraction in code" in q["name"]]
    assert fracs and sum(q["theory"] for q in fracs) == pytest.approx(1.0)
    for layer in range(1, L + 1):
        assert f"layer {layer}: " in case["notes"]
    for fig in case["figures"]:
        assert (out / fig).stat().st_size > 1000


def test_deep_sigmoid_case_rejects_a_single_hidden_layer(tmp_path, monkeypatch):
    resize_case(monkeypatch, _deep.CASE, quick=dataclasses.replace(_deep.SIZES.quick, L=1))
    out = tmp_path / "rep"
    rc, case = validate_one(out, "coding/deep-sigmoid")
    assert rc == 1
    assert case["verdict"] == "error" and "L must be an int >= 2" in case["error"]


@pytest.mark.slow
@pytest.mark.parametrize("suite, size_path", [("quick", None), ("full", (8,))])
def test_deep_sigmoid_3_runs_at_three_layers_in_both_suites(tmp_path, monkeypatch, suite, size_path):
    from richlazy.validate.core._registry import all_cases
    from richlazy.validate.recipes import _deep_rows

    spec = all_cases()["coding/deep-sigmoid-3"]
    assert spec.suites == ("quick", "full")
    assert _deep.SIZES_3.quick.L == _deep.SIZES_3.full.L == 3
    assert _deep.SIZE_PATH_3["full"][-1] < _deep.SIZES_3.full.P
    # a tiny run through the same case code: the L-layer theory receives the case's quad_nodes
    # and size path
    seen = {}
    real = _deep_rows.solve_sigmoid_deep

    def spy(*a, **k):
        seen.update(k)
        return real(*a, **dict(k, maxiter=1, quad_nodes=3))

    monkeypatch.setattr(_deep_rows, "solve_sigmoid_deep", spy)
    tiny = dataclasses.replace(_deep.SIZES_3[suite], L=3, N=12, P=12, N0=16, y_minus=-0.5, T=0.01, dt=0.02,
                               n_chains=2, n_steps=200, burn_in=40, thin=8, quad_nodes=4)
    resize_case(monkeypatch, _deep.CASE_3, **{suite: tiny})
    if size_path is None:
        monkeypatch.delitem(_deep.SIZE_PATH_3, suite, raising=False)
    else:
        monkeypatch.setitem(_deep.SIZE_PATH_3, suite, size_path)
    out = tmp_path / "rep"
    _, case = validate_one(out, "coding/deep-sigmoid-3", suite=suite)
    assert case["error"] is None and seen["quad_nodes"] == 4 and len(seen["K_start"]) == 2
    assert seen["size_path"] == size_path
    assert "Self-consistent L = 3 theory" in case["notes"]
    assert ("continued in the class sizes through P = [8]" in case["notes"]) == (size_path is not None)
