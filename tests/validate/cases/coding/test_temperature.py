"""Helpers of the coding/sigmoid-temperature case: the threshold-free comparisons (class-mean
outputs against y - T t, mean readout) and the fraction outside the codes, on synthetic samples
drawn around a known theory (they must pass) and shifted away from it (they must fail)."""

from __future__ import annotations

import numpy as np
import pytest
from richlazy.theory import solve_sigmoid_toy, toy_class_targets
from richlazy.validate.cases.coding._temperature import _ABOVE, _outside_fraction, _threshold_free
from theory_helpers import RHO

N, S, E = 100, 40, 4


@pytest.fixture(scope="module")
def single():
    """Above T_c: one code (1-1-1)."""
    return solve_sigmoid_toy(RHO, toy_class_targets(3, y_minus=0.5), T=0.15)


def _samples(sol, rng, shift_out=0.0, shift_a=0.0):
    F = sol.mean_output_classes + shift_out + 0.002 * rng.standard_normal((S, E, 3, 3))
    A = sol.a_gamma[0] + shift_a + 0.1 * rng.standard_normal((S, E, N, 3))
    return F, A


def test_threshold_free_quantities_pass_on_the_theory_and_fail_off_it(single):
    rng = np.random.default_rng(0)
    out = single.mean_output_classes
    assert np.max(np.abs(out - (toy_class_targets(3, y_minus=0.5) - 0.15 * single.t))) < 1e-12
    qs = _threshold_free(single, *_samples(single, rng), N, "note", "T: ", _ABOVE)
    assert len(qs) == 12 and all(q.passed for q in qs)
    assert all(q.ergodicity == "mixing" and q.ergodicity_reason for q in qs)
    assert all(q.rhat is not None and q.rhat < 1.05 for q in qs)
    # a constraint missing T t (the T = 0 targets) is far outside the tolerance
    wrong = _threshold_free(single, *_samples(single, rng, shift_out=0.15 * single.t), N, "note",
                            "T: ", _ABOVE)
    big = np.abs(0.15 * single.t).ravel() > 0.05  # T t well above the 3/N tolerance
    assert big.sum() >= 4
    assert not any(q.passed for q, b in zip(wrong[:9], big, strict=True) if b)
    off_a = _threshold_free(single, *_samples(single, rng, shift_a=0.1), N, "note", "T: ", _ABOVE)
    assert all(q.passed for q in off_a[:9]) and not any(q.passed for q in off_a[9:])


def test_fraction_outside_the_infinite_P_codes_against_the_finite_P_theory(single):
    """At T = 0.15 and P = 100 the finite-P theory puts 0.4 % of the neurons in 1-1-0 / 1-0-1
    (tails of the single peak crossing the threshold); sampled keys with that fraction pass,
    with 15 % fail (tolerance 4 SE + 3/N)."""
    fin = solve_sigmoid_toy(RHO, toy_class_targets(3, y_minus=0.5), P=N, T=0.15)
    assert fin.converged, fin.message
    outside = sum(f for c, f in fin.code_fractions.items() if c != "1-1-1")
    assert 0.001 < outside < 0.02
    keys = np.full((S, E, N), 7)
    rng = np.random.default_rng(2)
    for frac, ok in ((outside, True), (0.15, False)):
        k = keys.copy()
        k[rng.random((S, E, N)) < frac] = 3  # 1-1-0
        q = _outside_fraction(single, fin, k, N, "note", "T: ", _ABOVE)
        assert q.theory == pytest.approx(outside) and bool(q.passed) == ok
