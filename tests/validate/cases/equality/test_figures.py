"""The boundary fit of the phase-diagram case (Fig. 1e): crossings and the fitted exponent on
accuracy surfaces with a known boundary."""

import dataclasses
import math

import numpy as np
import pytest
from cli_helpers import resize_case
from richlazy.validate.cases.equality._figures import boundary_exponent, crossing_L


def _surface(ds, Ls, b, c):
    """Accuracy rising from 1/2 to 1 in log L, crossing 0.75 exactly at L* = c d^b."""
    ds, Ls = np.asarray(ds, float)[:, None], np.asarray(Ls, float)[None, :]
    x = np.log(Ls) - np.log(c * ds**b)
    return 0.5 + 0.5 / (1 + np.exp(-x))  # 0.75 at x = 0


def test_crossing_interpolates_in_log_L():
    Ls = [2, 4, 8, 16]
    # 0.6 at L=4, 0.9 at L=8: 0.75 is halfway in log2 L -> L* = 4 * 2**0.5
    assert crossing_L(Ls, [0.5, 0.6, 0.9, 1.0]) == pytest.approx(4 * math.sqrt(2), rel=1e-12)
    assert crossing_L(Ls, [0.8, 0.9, 0.9, 1.0]) == 2.0
    assert math.isnan(crossing_L(Ls, [0.5, 0.6, 0.7, 0.74]))


@pytest.mark.parametrize("b", [1.0, 2.0, 2.5])
def test_exponent_of_a_known_boundary(b):
    ds = [8, 16, 32, 64]
    Ls = [2.0**k for k in range(1, 25)]
    acc = _surface(ds, Ls, b, 1.0)
    fit, c, Lst = boundary_exponent(ds, Ls, acc)
    # log-linear interpolation of a logistic in log L: exact crossing to ~1 %, exponent to 1e-2
    assert fit == pytest.approx(b, abs=0.02)
    assert np.allclose(Lst, np.asarray(ds, float) ** b, rtol=0.05)


def test_censored_crossings_are_left_out():
    ds, Ls = [1, 8, 16, 32, 64], [2.0**k for k in range(1, 25)]
    acc = _surface(ds, Ls, 2.0, 1.0)  # d = 1: L* = 1 lies below the grid
    b, _c, Lst = boundary_exponent(ds, Ls, acc)
    assert Lst[0] == 2.0 and b == pytest.approx(2.0, abs=0.02)


def test_too_few_crossings_gives_nan():
    ds, Ls = [8, 16, 32, 64], [2, 4, 8]
    acc = _surface(ds, Ls, 2.0, 0.1)  # only d = 8 crosses inside L <= 8 (L* = 6.4)
    b, c, Lst = boundary_exponent(ds, Ls, acc)
    assert math.isnan(b) and math.isnan(c) and np.isfinite(Lst).sum() < 3


def test_noisy_bayes_full_size_runs_the_published_protocol(tmp_path, monkeypatch):
    """A tiny stand-in for the full size of equality/noisy-bayes: the published-protocol networks
    are trained and compared with both Bayes curves beside richlazy's (Fig. 2)."""
    from richlazy.validate import run_suite
    from richlazy.validate.cases.equality import _noisy

    tiny = dataclasses.replace(_noisy.SIZES.full, d=8, sigma2s=(1.0,), Ls=(4, 64), seeds=2, width=32,
                               steps=300, n_test=200, protocols=("richlazy", "published"))
    resize_case(monkeypatch, _noisy.CASE, full=tiny)
    rep = run_suite("full", only="equality/noisy-bayes", device="cpu", out_dir=tmp_path,
                    progress=False)
    (case,) = rep.cases
    assert case.error is None, case.error
    names = [q.name for q in case.quantities]
    assert sum("published protocol" in n for n in names) == 2 and len(names) == 4
    pub = case.params["net_published"]
    assert np.shape(pub) == (1, 2) and all(0.4 < a <= 1.0 for a in pub[0])
    assert 0.4 < case.params["bayes_mem_published"][0][0] <= 1.0
    assert (tmp_path / case.figures[0]).stat().st_size > 1000
