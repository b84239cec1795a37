"""Multi-chain convergence diagnostics (rank-normalised split-R-hat, bulk/tail ESS; Vehtari et
al. 2021), their place in compared quantities, and the case verdict."""

import json
import math

import numpy as np
import pytest
import torch
from numpy.polynomial.hermite_e import hermeval
from richlazy.validate import compare, stats
from richlazy.validate.cli import main
from richlazy.validate.core._compare import VERDICTS, Quantity, case_verdict
from richlazy.validate.core._registry import CaseOutcome, register_case
from richlazy.validate.core._sampling import (
    estimates_from_run,
    linearised_series,
    ratio_series,
)
from richlazy.validate.rendering._report import (
    CaseResult,
    Report,
    render_case_line,
    render_case_table,
    render_markdown,
    write_report,
)
from scipy.signal import lfilter
from scipy.stats import chi2, norm


def _ar1(rho, S, E, seed):
    """E stationary AR(1) chains x_t = rho x_{t-1} + sqrt(1 - rho^2) e_t, unit variance."""
    rng = np.random.default_rng(seed)
    e = rng.standard_normal((S, E)) * math.sqrt(1 - rho * rho)
    e[0] = rng.standard_normal(E)
    return lfilter([1.0], [1.0, -rho], e, axis=0)


def _indicator_ess_fraction(rho, p=0.05, K=150):
    """Exact ESS / N of I(x <= q_p) for a Gaussian AR(1): Hermite expansion of the indicator,
    a_k^2 = He_{k-1}(q)^2 phi(q)^2 / k!, corr_t = sum_k a_k^2 rho^(k t) / (p (1 - p))."""
    q = norm.ppf(p)
    phi = norm.pdf(q)
    tau = 1.0
    for k in range(1, K):
        c = np.zeros(k)
        c[-1] = 1.0
        a2 = hermeval(q, c) ** 2 * phi**2 / math.factorial(k)
        tau += 2 * a2 / (p * (1 - p)) * rho**k / (1 - rho**k)
    return 1.0 / tau


# --------------------------------------------------------------------------------------------
# ESS


# tolerances ~4-5 standard deviations of the estimator (measured over 12 seeds at S = 8000,
# E = 32: relative sd 0.5 %, 1.0 %, 2.5 %, 1.0 %)
@pytest.mark.parametrize(("rho", "tol"), [(0.0, 0.03), (0.5, 0.05), (0.9, 0.10), (-0.3, 0.05)])
def test_bulk_ess_of_ar1_chains(rho, tol):
    S, E = 8000, 32
    x = _ar1(rho, S, E, seed=int(100 * (rho + 1)))
    exact = (1 - rho) / (1 + rho)
    got = stats.ess_bulk(x, layout="draw_chain") / (S * E)
    assert abs(got / exact - 1) < tol, (rho, got, exact)
    assert stats.chain_diagnostics(x, layout="draw_chain").ess_bulk == stats.ess_bulk(x, layout="draw_chain")


@pytest.mark.parametrize("rho", [0.0, 0.5, 0.9])
def test_tail_ess_of_ar1_chains_matches_the_indicator_autocorrelation(rho):
    """Exact value from the Hermite expansion; the minimum over the two tails biases the
    estimate about 2 % low; relative sd of the estimator <= 2 % here (12 seeds)."""
    S, E = 8000, 32
    x = _ar1(rho, S, E, seed=7 + int(10 * rho))
    exact = _indicator_ess_fraction(rho)
    got = stats.ess_tail(x, layout="draw_chain") / (S * E)
    assert np.isfinite(got)
    assert abs(got / exact - 1) < 0.10, (rho, got, exact)
    if rho > 0:  # an indicator decorrelates faster than x itself
        assert stats.ess_tail(x, layout="draw_chain") > stats.ess_bulk(x, layout="draw_chain")


def test_ess_shapes_and_indexing():
    x = _ar1(0.5, 1000, 4, 3)[:, :, None] * np.array([1.0, 2.0, -1.0])
    m = stats.chain_diagnostics(x, layout="draw_chain")
    assert m.shape == (3,) and m.n_chains == 4 and m.n_draws == 1000
    m1 = m[1]
    assert isinstance(m1.rhat, float) and m1.shape == ()
    ref = stats.chain_diagnostics(x[:, :, 1], layout="draw_chain")
    assert (m1.rhat, m1.ess_bulk, m1.ess_tail) == pytest.approx((ref.rhat, ref.ess_bulk, ref.ess_tail),
                                                                 rel=1e-12)
    assert np.array_equal(m.mixed, m.rhat <= stats.RHAT_MAX)
    with pytest.raises(IndexError):
        m1[0]


# --------------------------------------------------------------------------------------------
# R-hat


@pytest.mark.parametrize("seed", range(4))
def test_rhat_of_iid_chains_is_one_within_sampling_error(seed):
    """Split into M = 2E chains of n draws: R^2 = (n-1)/n + F/n with F ~ chi2_{M-1}/(M-1)
    (iid draws), so sqrt(1 - 1/n) <= R and R <= sqrt(1 + (F_max - 1)/n) with F_max the
    1 - 1e-6 quantile (bulk and folded each; Bonferroni over the two is still < 1e-5)."""
    S, E = 2000, 8
    n, M = S // 2, 2 * E
    x = np.random.default_rng(seed).standard_normal((S, E))
    f_max = chi2.ppf(1 - 1e-6, M - 1) / (M - 1)
    hi = math.sqrt(1 + (f_max - 1) / n)
    r = stats.split_rhat(x, layout="draw_chain")
    assert math.sqrt(1 - 1 / n) - 1e-12 <= r <= hi < stats.RHAT_MAX
    assert stats.chain_diagnostics(x, layout="draw_chain").mixed


def test_rhat_flags_a_chain_with_a_shifted_mean():
    x = np.random.default_rng(1).standard_normal((1000, 4))
    x[:, 2] += 1.0  # one chain offset by one standard deviation
    r = stats.split_rhat(x, layout="draw_chain")
    assert r > 1.05 > stats.RHAT_MAX
    assert not stats.chain_diagnostics(x, layout="draw_chain").mixed


def test_folded_rhat_catches_different_scales_that_bulk_and_classic_miss():
    x = np.random.default_rng(2).standard_normal((1000, 4))
    x[:, 0] *= 3.0  # same mean, three times the spread
    assert stats.split_rhat(x, method="classic", layout="draw_chain") < stats.RHAT_MAX
    assert stats.split_rhat(x, method="bulk", layout="draw_chain") < stats.RHAT_MAX
    assert stats.split_rhat(x, method="folded", layout="draw_chain") > 1.05
    assert stats.split_rhat(x, layout="draw_chain") == stats.split_rhat(x, method="folded",
                                                                          layout="draw_chain")


def test_splitting_catches_a_trend_inside_every_chain():
    S, E = 1000, 2
    x = np.random.default_rng(3).standard_normal((S, E))
    x[S // 2:] += 1.0  # the second half of each chain differs from the first
    # unsplit R-hat (chain means equal): blind to it
    n = S
    W = x.var(axis=0, ddof=1).mean()
    B_n = x.mean(axis=0).var(ddof=1)
    assert math.sqrt(((n - 1) / n * W + B_n) / W) < stats.RHAT_MAX
    assert stats.split_rhat(x, layout="draw_chain") > 1.05
    assert stats.split_rhat(x, method="classic", layout="draw_chain") > 1.05


def test_rank_diagnostics_are_invariant_under_monotone_transforms():
    x = _ar1(0.6, 1001, 3, 4)  # odd S: the middle draw is dropped
    y = np.exp(x)
    assert (stats.split_rhat(y, method="bulk", layout="draw_chain")
            == stats.split_rhat(x, method="bulk", layout="draw_chain"))
    assert stats.ess_bulk(y, layout="draw_chain") == stats.ess_bulk(x, layout="draw_chain")
    assert stats.ess_tail(y, layout="draw_chain") == stats.ess_tail(x, layout="draw_chain")
    # the folded part is invariant under sign flips and (exact) scalings
    for z in (-x, 4.0 * x):
        assert stats.split_rhat(z, layout="draw_chain") == stats.split_rhat(x, layout="draw_chain")
    # the classic split-R-hat is not
    assert (stats.split_rhat(y, method="classic", layout="draw_chain")
            != stats.split_rhat(x, method="classic", layout="draw_chain"))


def test_constant_and_stuck_chains():
    m = stats.chain_diagnostics(np.full((10, 3), 2.5), layout="draw_chain")
    assert m.rhat == 1.0 and m.mixed and math.isnan(m.ess_bulk) and math.isnan(m.ess_tail)
    stuck = np.ones((10, 3)) * np.array([0.0, 0.0, 1.0])  # each chain constant, one differs
    m = stats.chain_diagnostics(stuck, layout="draw_chain")
    assert m.rhat == math.inf and not m.mixed
    # a two-valued quantity whose upper tail indicator is constant: tail ESS from the other
    x = (np.random.default_rng(5).random((400, 4)) < 0.2).astype(float)
    m = stats.chain_diagnostics(x, layout="draw_chain")
    assert np.isfinite(m.ess_tail) and m.mixed


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="samples needs at least 2 chains"):
        stats.chain_diagnostics(np.zeros((10, 1)), layout="draw_chain")
    with pytest.raises(ValueError, match="samples needs at least 4 draws"):
        stats.split_rhat(np.zeros((3, 4)), layout="draw_chain")
    with pytest.raises(ValueError, match=r"samples must have shape \(S, E, ...\)"):
        stats.ess_bulk(np.zeros(10), layout="draw_chain")
    with pytest.raises(ValueError, match="samples contain NaN or inf"):
        stats.ess_tail(np.full((10, 2), np.nan), layout="draw_chain")
    with pytest.raises(TypeError, match="samples must be real"):
        stats.chain_diagnostics(np.ones((10, 2), dtype=complex), layout="draw_chain")
    with pytest.raises(ValueError, match="method must be one of"):
        stats.split_rhat(np.zeros((10, 2)), method="plain", layout="draw_chain")


def test_worst_mixing():
    a = stats.Mixing(1.002, 800.0, 500.0, 4, 100)
    b = stats.Mixing(1.03, math.nan, 900.0, 8, 50)
    w = stats.worst_mixing(a, b)
    assert (w.rhat, w.ess_bulk, w.ess_tail, w.n_chains, w.n_draws) == (1.03, 800.0, 500.0, 4, 50)
    assert not w.mixed
    with pytest.raises(ValueError, match="mixings"):
        stats.worst_mixing()
    with pytest.raises(TypeError, match="mixings"):
        stats.worst_mixing(a, 1.0)


# --------------------------------------------------------------------------------------------
# series helpers for compared quantities


def test_linearised_and_ratio_series_track_the_chain_estimates():
    rng = np.random.default_rng(6)
    x = 2.0 + 0.01 * rng.standard_normal((200, 4, 3))
    g = lambda m: np.sum(m**2)  # noqa: E731
    grad = 2 * x.mean(axis=(0, 1))
    lin = linearised_series(x, grad)
    assert lin.shape == (200, 4)
    d_chain = [g(x[:, e].mean(0)) - g(x.mean((0, 1))) for e in range(4)]
    # equal up to the second-order term |xbar_e - xbar|^2 ~ 1e-6
    assert np.allclose(lin.mean(0) - lin.mean(), d_chain, rtol=0, atol=1e-5)
    assert np.max(np.abs(d_chain)) > 1e-3
    num, den = rng.random((50, 3)), 1.0 + rng.random((50, 3))
    r = ratio_series(num, den)
    assert r.sum() == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="grad"):
        linearised_series(x, np.ones(2))
    with pytest.raises(ValueError, match="num and den"):
        ratio_series(num, den[:, :2])


def test_estimates_from_run_diagnose_single_elements():
    class Run:
        samples = {"x": torch.as_tensor(_ar1(0.3, 400, 4, 8)[:, :, None] * np.ones(2))}

    est = estimates_from_run(Run())["x"]
    assert est.mean.shape == (2,)
    m = est.mixing(1)
    ref = stats.chain_diagnostics(_ar1(0.3, 400, 4, 8), layout="draw_chain")
    assert m.rhat == pytest.approx(ref.rhat) and m.ess_bulk == pytest.approx(ref.ess_bulk)
    with pytest.raises(ValueError, match="idx"):
        est.mixing()


# --------------------------------------------------------------------------------------------
# compare(), Quantity, verdict, report


def test_compare_carries_mixing_and_round_trips(tmp_path):
    rng = np.random.default_rng(9)
    good = rng.standard_normal((200, 4))
    q = compare("x", 0.0, float(good.mean()), stderr=0.05, kind="z", tol=4, mixing=good)
    m = stats.chain_diagnostics(good, layout="draw_chain")
    assert (q.rhat, q.ess_bulk, q.ess_tail, q.mixed) == (m.rhat, m.ess_bulk, m.ess_tail, True)
    assert q.sampled and q.passed
    q2 = compare("y", 1.0, 1.0, stderr=0.1, kind="z", tol=3, mixing=stats.Mixing(math.inf, 2.0, 2.0, 3, 10))
    assert q2.passed and q2.mixed is False and q2.rhat == math.inf
    q3 = compare("z", 1.0, 1.0, kind="rel", tol=0.1)
    assert (q3.rhat, q3.ess_bulk, q3.ess_tail, q3.mixed) == (None, None, None, None)
    assert not q3.sampled
    # backwards compatible positional construction
    old = Quantity("w", 0.0, 1.0, None, None, None, "gt", 3.0, False, "note")
    assert old.mixed is None and old.to_dict()["rhat"] is None
    d = q.to_dict()
    assert d["rhat"] == q.rhat and d["ess_bulk"] == q.ess_bulk and d["mixed"] is True
    res = CaseResult("coding/x", "coding", "", False, 1.0, "cpu", 0, "quick", [q, q2, q3])
    assert res.verdict == "not mixed"
    write_report(Report("quick", "cpu", 0, "now", "0", [res]), tmp_path)
    rep = json.loads((tmp_path / "report.json").read_text())
    (case,) = rep["cases"]
    assert case["verdict"] == "not mixed" and rep["verdicts"]["not mixed"] == 1
    jq = case["quantities"]
    assert jq[0]["rhat"] == pytest.approx(q.rhat) and jq[0]["ess_tail"] == pytest.approx(q.ess_tail)
    assert jq[1]["rhat"] == "inf" and jq[1]["mixed"] is False
    assert jq[2]["rhat"] is None and jq[2]["mixed"] is None
    assert case["max_rhat"] == "inf" and case["min_ess_bulk"] == pytest.approx(2.0)


def test_compare_rejects_bad_mixing():
    with pytest.raises(ValueError, match=r"mixing must be a per-chain series of shape \(S, E\)"):
        compare("x", 1.0, 1.0, kind="rel", tol=0.1, mixing=np.zeros((10, 2, 2)))
    with pytest.raises(ValueError, match="mixing of quantity 'x': samples needs at least 2 chains"):
        compare("x", 1.0, 1.0, kind="rel", tol=0.1, mixing=np.zeros((10, 1)))
    with pytest.raises(ValueError, match="mixing must describe one quantity"):
        compare("x", 1.0, 1.0, kind="rel", tol=0.1,
                mixing=stats.chain_diagnostics(np.random.default_rng(0).standard_normal((10, 2, 3)),
                                               layout="draw_chain"))
    with pytest.raises(TypeError, match="mixing must be a Mixing"):
        compare("x", 1.0, 1.0, kind="rel", tol=0.1, mixing=1.01)


def _q(passed, mixed, theory=1.0):
    rhat = None if mixed is None else (1.001 if mixed else 1.2)
    ess = None if mixed is None else 500.0
    return Quantity("q", theory, 1.0, 0.1, 0.0, 0.0, "z", 3.0, passed, "", rhat, ess, ess, mixed)


@pytest.mark.parametrize(("quantities", "error", "verdict"), [
    ([_q(True, True), _q(True, None)], None, "agrees"),
    ([_q(True, True), _q(False, True)], None, "disagrees"),
    ([_q(False, None), _q(True, True)], None, "disagrees"),
    ([_q(True, True), _q(True, False)], None, "not mixed"),
    ([_q(False, True), _q(True, False)], None, "not mixed"),
    # a failure that sampling longer cannot rescue outranks "not mixed"
    ([_q(False, None), _q(True, False)], None, "disagrees"),
    ([_q(False, False, theory=float("nan")), _q(True, False)], None, "disagrees"),
    ([_q(True, True)], "Traceback: boom", "error"),
    ([], None, "error"),
])
def test_verdict_rule(quantities, error, verdict):
    assert case_verdict(quantities, error) == verdict
    assert verdict in VERDICTS
    res = CaseResult("coding/x", "coding", "", verdict == "agrees", 1.0, "cpu", 0, "quick",
                     quantities, error=error)
    assert res.verdict == verdict
    md = render_markdown(Report("quick", "cpu", 0, "now", "0", [res]))
    assert f"## `coding/x` — {verdict}" in md
    if any(q.rhat is not None for q in quantities):
        assert "| R̂ | bulk ESS | tail ESS |" in md
    line = render_case_line(res)
    assert line.startswith(verdict.upper()) and "coding/x" in line
    assert verdict in render_case_table(Report("quick", "cpu", 0, "now", "0", [res]))


def test_case_result_rejects_unknown_verdict():
    with pytest.raises(ValueError, match="verdict must be one of"):
        CaseResult("coding/x", "coding", "", True, 1.0, "cpu", 0, "quick", [], verdict="fine")


def test_runner_reports_not_mixed_as_inconclusive(tmp_path, scratch_registry, capsys):
    rng = np.random.default_rng(11)
    stuck = rng.standard_normal((100, 4)) + np.array([0.0, 0.0, 0.0, 2.0])

    @register_case("coding/zz-fixture-unmixed", description="agrees but not mixed", suites=("quick",))
    def _unmixed(ctx):
        return CaseOutcome(quantities=[compare("x", 0.5, float(stuck.mean()), kind="abs", tol=1.0,
                                               mixing=stuck)])

    @register_case("coding/zz-fixture-mixed", description="agrees and mixed", suites=("quick",))
    def _mixed(ctx):
        x = rng.standard_normal((100, 4))
        return CaseOutcome(quantities=[compare("x", 0.0, float(x.mean()), kind="abs", tol=1.0,
                                               mixing=x)])

    @register_case("coding/zz-fixture-wrong", description="mixed but disagrees", suites=("full",))
    def _wrong(ctx):
        x = rng.standard_normal((100, 4))
        return CaseOutcome(quantities=[compare("x", 5.0, float(x.mean()), kind="abs", tol=1.0,
                                               mixing=x)])

    # not mixed is inconclusive: the report says so, the case does not pass, the exit code is 0
    rc = main(["validate", "--only", "coding/zz-fixture-*", "--out", str(tmp_path), "--quiet"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "NOT MIXED  coding/zz-fixture-unmixed" in out and "1 agrees, 1 not mixed" in out
    # a disagreement (with mixed chains) is a failure: exit code 1
    assert main(["validate", "--suite", "full", "--only", "coding/zz-fixture-wrong", "--out",
                 str(tmp_path / "full"), "--quiet"]) == 1
    assert "DISAGREES  coding/zz-fixture-wrong" in capsys.readouterr().out
    rep = json.loads((tmp_path / "report.json").read_text())
    by = {c["name"]: c for c in rep["cases"]}
    un, ok = by["coding/zz-fixture-unmixed"], by["coding/zz-fixture-mixed"]
    assert un["verdict"] == "not mixed" and un["passed"] is False
    assert un["quantities"][0]["passed"] is True and un["quantities"][0]["rhat"] > 1.1
    assert ok["verdict"] == "agrees" and ok["passed"] is True
    assert not rep["passed"]
    md = (tmp_path / "report.md").read_text()
    assert "**NOT MIXED**" in md and "| max R̂ | min bulk ESS |" in md


def test_empty_trailing_shape_gives_empty_diagnostics():
    """(S, E, 0): no quantity, so every diagnostic is an empty array of shape (0,), as
    ess_bulk and ess_tail already gave (the folded R-hat's median reshape used to fail)."""
    d = stats.chain_diagnostics(np.zeros((10, 3, 0)), layout="draw_chain")
    assert d.shape == (0,)
    for v in (d.rhat, d.ess_bulk, d.ess_tail, d.mixed):
        assert np.asarray(v).shape == (0,)
    assert np.asarray(stats.ess_bulk(np.zeros((10, 3, 0)), layout="draw_chain")).shape == (0,)
    assert np.asarray(stats.ess_tail(np.zeros((10, 3, 0)), layout="draw_chain")).shape == (0,)


# --------------------------------------------------------------------------------------------
# layout: samples (draw, chain, ...) or (chain, draw, ...)

_FUNCS = (stats.split_rhat, stats.ess_bulk, stats.ess_tail, stats.chain_diagnostics)


def _chain_draw(kind, E, S, trailing, seed):
    """(E, S, *trailing) samples in NumPyro/ArviZ order: iid normal or AR(1) chains (rho 0.8)."""
    K = int(np.prod(trailing, dtype=int))
    if kind == "iid":
        x = np.random.default_rng(seed).standard_normal((S, E * K))
    else:
        x = _ar1(0.8, S, E * K, seed)
    return np.swapaxes(x.reshape(S, E, *trailing), 0, 1).copy()


def _same(a, b) -> bool:
    """Bit for bit (NaN where the other is NaN)."""
    return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True) and type(a) is type(b)


@pytest.mark.parametrize("trailing", [(), (2, 3)])
@pytest.mark.parametrize("kind", ["iid", "ar1"])
def test_chain_draw_layout_is_the_draw_chain_result_of_the_transpose(kind, trailing):
    """Bit for bit on the transposed view ``np.swapaxes(x, 0, 1)`` (the same array the chain_draw
    call works on). A C-contiguous copy of it agrees to rounding only: the split chains keep the
    input's memory order, and the FFT and means then round differently in the last bit."""
    E, S = 3, 201  # unequal, odd S: a mix-up of the axes shows
    x = _chain_draw(kind, E, S, trailing, seed=31 + len(trailing))
    assert x.shape == (E, S, *trailing)
    xt = np.swapaxes(x, 0, 1)
    for method in ("rank", "bulk", "folded", "classic"):
        assert _same(stats.split_rhat(x, method=method, layout="chain_draw"),
                     stats.split_rhat(xt, method=method, layout="draw_chain"))
    for f in (stats.ess_bulk, stats.ess_tail):
        assert _same(f(x, layout="chain_draw"), f(xt, layout="draw_chain"))
        assert np.allclose(f(x, layout="chain_draw"),
                           f(np.ascontiguousarray(xt), layout="draw_chain"), rtol=1e-12, atol=0)
    m = stats.chain_diagnostics(x, layout="chain_draw")
    ref = stats.chain_diagnostics(xt, layout="draw_chain")
    for field in ("rhat", "ess_bulk", "ess_tail"):
        assert _same(getattr(m, field), getattr(ref, field)), field
    assert (m.n_chains, m.n_draws) == (ref.n_chains, ref.n_draws) == (E, S)
    assert m.shape == trailing
    assert np.all(np.isfinite(m.ess_tail))


def test_layout_not_given_warns_and_takes_draw_chain():
    x = _ar1(0.5, 100, 3, 12)  # (S, E) = (draw, chain)
    for f in _FUNCS:
        with pytest.warns(DeprecationWarning, match="no layout was given") as rec:
            got = f(x)
        deps = [w for w in rec if issubclass(w.category, DeprecationWarning)]
        assert len(deps) == 1, f.__name__  # chain_diagnostics warns once
        msg = str(deps[0].message)
        assert '"draw_chain"' in msg and '"chain_draw"' in msg
        assert "(draw, chain, ...)" in msg and "next release" in msg
        assert deps[0].filename == __file__  # points at the caller
        assert got == f(x, layout="draw_chain")
    assert stats.chain_diagnostics(x, layout="draw_chain").n_chains == 3


@pytest.mark.parametrize("f", _FUNCS, ids=lambda f: f.__name__)
def test_bad_layout_names_the_argument(f):
    x = np.random.default_rng(13).standard_normal((20, 3))
    with pytest.raises(ValueError, match=r"layout must be one of \('draw_chain', 'chain_draw'\), "
                                         r"got 'chain,draw'"):
        f(x, layout="chain,draw")
    with pytest.raises(TypeError, match="layout must be a str.*got int"):
        f(x, layout=3)
    with pytest.raises(TypeError):
        f(x, "draw_chain")  # keyword only


def test_chain_draw_errors_count_chains_and_draws_on_their_axes():
    # (E, S) = (3, 10) is fine as chain_draw, too few draws as draw_chain
    assert stats.chain_diagnostics(np.random.default_rng(14).standard_normal((3, 10)),
                                   layout="chain_draw").n_draws == 10
    with pytest.raises(ValueError, match=r"samples needs at least 4 draws per chain \(axis 0\)"):
        stats.split_rhat(np.zeros((3, 10)), layout="draw_chain")
    with pytest.raises(ValueError, match=r"samples needs at least 2 chains \(axis 0\) .* E = 1"):
        stats.chain_diagnostics(np.zeros((1, 10)), layout="chain_draw")
    with pytest.raises(ValueError, match=r"samples needs at least 4 draws per chain \(axis 1\) "
                                         r".* S = 1"):
        stats.ess_bulk(np.zeros((10, 1)), layout="chain_draw")
    with pytest.raises(ValueError, match=r"samples must have shape \(E, S, ...\) with E chains"):
        stats.ess_tail(np.zeros(10), layout="chain_draw")
