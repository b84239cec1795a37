"""The sweep experiments of seeds 000 and 002 (validate/sweeps/experiments/_coding.py, _ldt.py),
called directly at tiny sizes: declared metrics, determinism per task, and theory numbers equal to
what the public theory functions give."""

from __future__ import annotations

import math

import numpy as np
import pytest
from richlazy.theory import ak_two_layer_erf, solve_sigmoid_toy, toy_class_targets
from richlazy.validate.sweeps._registry import SweepContext, get_sweep

CODES_TINY = dict(y_minus=0.5, T=0.002, N=8, P=8, n_chains=2, n_steps=600, burn_in_frac=0.5,
                  n_samples=5, dt_P=2.0, anneal_from=0.005, anneal_frac=0.8, finite_p_theory=False)
LDT_TINY = dict(P=16, d=4, N=4, kappa=1.0, scaling="standard", n_chains=3, n_steps=400,
                dtype="float32")


def _run(name, cfg, replicate=0, **kw):
    spec = get_sweep(name)
    cfg = {k: p.default for k, p in spec.params.items()} | cfg
    ctx = SweepContext(experiment=name, config=cfg, replicate=replicate, seed=0, device="cpu", **kw)
    return spec.fn(ctx, **cfg)


def _same(a: dict, b: dict) -> bool:
    """Bit-identical dicts of floats (NaN equal to NaN)."""
    return a.keys() == b.keys() and all(
        (math.isnan(a[k]) and math.isnan(b[k])) or a[k] == b[k] for k in a)


@pytest.fixture(scope="module")
def codes_runs():
    return _run("sigmoid-codes", CODES_TINY), _run("sigmoid-codes", CODES_TINY), \
        _run("sigmoid-codes", CODES_TINY, replicate=1)


@pytest.fixture(scope="module")
def ldt_runs():
    return _run("ldt-alignment", LDT_TINY), _run("ldt-alignment", LDT_TINY), \
        _run("ldt-alignment", LDT_TINY, replicate=1)


def _check_metrics(name, out):
    spec = get_sweep(name)
    assert set(spec.metrics) <= set(out)
    extra = set(out) - set(spec.metrics)
    assert all(k.endswith("_se") and k[:-3] in spec.metrics for k in extra), extra
    for k, v in out.items():
        assert isinstance(v, float), (k, v)
    return {k: v for k, v in out.items() if not math.isnan(v)}


def test_both_experiments_are_registered_with_gpu_use_and_figures():
    for name in ("sigmoid-codes", "ldt-alignment"):
        spec = get_sweep(name)
        assert spec.uses_gpu and spec.metrics and spec.figures
        for kind, metric, x, hue in spec.figures:
            assert kind in ("heatmap", "curves") and metric in spec.metrics
            assert x in spec.params and (hue is None or hue in spec.params)


def test_sigmoid_codes_metrics_are_finite_and_fractions_sum_to_one(codes_runs):
    out = codes_runs[0]
    finite = _check_metrics("sigmoid-codes", out)
    # only the metastable gap may be NaN (no other maximum of g at y- = 1/2)
    assert set(out) - set(finite) <= {"theory_global_gap"}
    assert all(math.isfinite(v) for v in finite.values())
    groups = ("011", "110_101", "111", "100", "010_001", "000")
    assert sum(out[f"sampled_{g}"] for g in groups) == pytest.approx(1.0)
    assert sum(out[f"theory_{g}"] for g in groups) == pytest.approx(1.0)
    for g in groups:
        assert out[f"sampled_{g}_se"] > 0
        assert out[f"diff_{g}"] == pytest.approx(out[f"sampled_{g}"] - out[f"theory_{g}"])
        assert out[f"z_{g}"] == pytest.approx(out[f"diff_{g}"] / out[f"diff_{g}_se"])
    assert 0.0 <= out["persistence"] <= 1.0


def test_sigmoid_codes_is_deterministic_per_task(codes_runs, tmp_path):
    a, b, other = codes_runs
    assert _same(a, b)
    assert not _same(a, other)
    assert any(a[k] != other[k] for k in a if k.startswith("sampled_"))
    # checkpoints do not perturb the streams
    assert _same(a, _run("sigmoid-codes", CODES_TINY, checkpoint_dir=tmp_path))
    assert (tmp_path / "chain.pt").exists()


def test_sigmoid_codes_theory_equals_the_public_solver(codes_runs):
    out = codes_runs[0]
    sol = solve_sigmoid_toy(np.array([0.5, 0.25, 0.25]), toy_class_targets(3, y_plus=1.0, y_minus=0.5))
    w = dict(zip(sol.code_strings(), sol.P_gamma, strict=True))
    assert set(w) == {"0-1-1", "1-1-0", "1-0-1", "1-1-1"}
    assert out["theory_011"] == w["0-1-1"]
    assert out["theory_110_101"] == pytest.approx(w["1-1-0"] + w["1-0-1"], rel=1e-15)
    assert out["theory_111"] == w["1-1-1"]
    assert out["theory_100"] == out["theory_010_001"] == out["theory_000"] == 0.0
    assert out["theory_n_codes"] == 4.0 and out["theory_converged"] == 1.0
    # the documented reconstruction numbers (docs/coding_sigmoid.md)
    assert out["theory_011"] == pytest.approx(0.331569, abs=1e-6)
    assert out["theory_111"] == pytest.approx(0.037572, abs=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("y_minus,P_theory", [(0.1, None), (0.3, 20)])
def test_sigmoid_codes_metastable_and_finite_p_theory(y_minus, P_theory):
    """y- = 0.1: the 1-0-0 code is a metastable maximum of g (gap < 0, weight 0 at P = inf);
    P = 20: the finite-P solve gives it a small positive weight (3.3e-4; an independent
    brute-force integral of exp(P g) over its threshold region gives 3.1e-4. The earlier
    per-peak quadrature, which double counted overlapping peaks, gave > 1e-3)."""
    cfg = dict(CODES_TINY, y_minus=y_minus, P=P_theory or 8, finite_p_theory=P_theory is not None)
    out = _run("sigmoid-codes", cfg)
    sol = solve_sigmoid_toy(np.array([0.5, 0.25, 0.25]),
                            toy_class_targets(3, y_plus=1.0, y_minus=y_minus), P=P_theory)
    w = dict(zip(sol.code_strings(), sol.P_gamma, strict=True))
    assert out["theory_011"] == w["0-1-1"]
    assert out["theory_100"] == w.get("1-0-0", 0.0)
    assert out["theory_converged"] == 1.0 == float(sol.converged)
    if P_theory is None:
        assert out["theory_100"] == 0.0 and out["theory_n_codes"] == 3.0
        assert out["theory_global_gap"] == float(sol.global_gap) == pytest.approx(-0.0906, abs=1e-4)
    else:
        # below the experiment's activity threshold (1e-3), so three codes are counted
        assert 1e-4 < out["theory_100"] < 1e-3 and out["theory_n_codes"] == 3.0
        assert math.isnan(out["theory_global_gap"])  # not computed at finite P


def test_ldt_alignment_metrics_are_finite(ldt_runs):
    out = ldt_runs[0]
    finite = _check_metrics("ldt-alignment", out)
    assert finite == out
    assert out["sampled_alignment_se"] > 0  # one sample's alignment a.G may be negative
    assert out["diff_alignment"] == pytest.approx(out["sampled_alignment"] - out["theory_alignment"])
    assert out["z_alignment"] == pytest.approx(out["diff_alignment"] / out["sampled_alignment_se"])
    assert out["sampled_n_outliers"] >= 0


def test_ldt_alignment_is_deterministic_per_task(ldt_runs):
    a, b, other = ldt_runs
    assert _same(a, b)
    assert not _same(a, other)
    assert a["theory_alignment"] == other["theory_alignment"]


@pytest.mark.parametrize("scaling,chi", [("standard", 1.0), ("mean-field", 4.0)])
def test_ldt_alignment_theory_equals_the_public_solver(ldt_runs, scaling, chi):
    out = ldt_runs[0] if scaling == "standard" else _run("ldt-alignment", dict(LDT_TINY, scaling=scaling))
    ak = ak_two_layer_erf(16.0, 4, 4, kappa=1.0, chi=chi)
    assert out["theory_alignment"] == float(ak.mean_alignment)
    assert out["theory_n_outliers"] == float(ak.n_outliers)
    assert out["theory_t"] == float(ak.t)
    assert out["theory_converged"] == 1.0
    assert 0.0 < out["theory_alignment"] < 1.0


# ------------------------------------------------------------------ sd-accuracy (seed 003)

def test_sd_accuracy_matches_direct_training_and_eq3():
    from richlazy.simulate import sd_symbols, sd_test_batch, train_gamma_mlp_sd
    from richlazy.theory import rich_accuracy

    spec = get_sweep("sd-accuracy")
    cfg = {k: p.default for k, p in spec.params.items()}
    cfg.update(L=3, d=8, width=32, steps=60, n_test=200, eval_every=20)
    ctx = SweepContext(experiment="sd-accuracy", config=cfg, replicate=0, seed=0, device="cpu")
    out = spec.fn(ctx, **cfg)
    # the same network trained directly from the task's stream 0
    g = ctx.generator(0)
    S = sd_symbols(1, 3, 8, generator=g)
    xt, yt = sd_test_batch(1, 200, 8, generator=g)
    res = train_gamma_mlp_sd(S, xt, yt, 1.0, width=32, n_steps=60, eval_every=20, generator=g)
    assert out["best_accuracy"] == float(res.best_accuracy[0])
    assert out["final_accuracy"] == float(res.final_accuracy[0])
    assert out["eq3_accuracy"] == float(rich_accuracy(3))
    p = out["best_accuracy"]
    assert out["best_accuracy_se"] == pytest.approx(np.sqrt(p * (1 - p) / 200))
    pub = dict(cfg, protocol="published", n_test=0, eval_every=0, steps=30)
    ctx2 = SweepContext(experiment="sd-accuracy", config=pub, replicate=0, seed=0, device="cpu")
    o2 = spec.fn(ctx2, **pub)
    assert 0.0 <= o2["best_accuracy"] <= 1.0 and np.isfinite(o2["best_accuracy_se"])
