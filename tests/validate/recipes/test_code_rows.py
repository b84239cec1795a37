"""richlazy.validate.recipes (sigmoid code populations as compared rows): the code-fraction rows
on synthetic keys at a known theory (they must pass) and shifted away from it (they must fail)."""

from __future__ import annotations

import numpy as np
import pytest
from richlazy.theory import solve_sigmoid_toy, toy_class_targets
from richlazy.validate.recipes import code_fraction_estimate, fraction_outside_estimate, fraction_rule
from theory_helpers import RHO

N, S, E = 100, 40, 4


@pytest.fixture(scope="module")
def single():
    """Above T_c: one code (1-1-1)."""
    return solve_sigmoid_toy(RHO, toy_class_targets(3, y_minus=0.5), T=0.15)


def _rows(sol, keys):
    """The code fraction of the theory's one code and the fraction outside it."""
    key = int((sol.codes[0] * (1 << np.arange(3))).sum())
    inside = fraction_rule(None, "P_gamma code 1-1-1", sol.P_gamma[0],
                           code_fraction_estimate(keys, key, N), N=N, note="note")
    outside = fraction_rule(None, "outside", 0.0, fraction_outside_estimate(keys, [key], N), N=N,
                            note="note")
    return inside, outside


def test_code_fractions_against_the_theory(single):
    key = int((single.codes[0] * (1 << np.arange(3))).sum())  # 1-1-1 -> 7
    assert key == 7 and single.P_gamma[0] == pytest.approx(1.0)
    keys = np.full((S, E, N), key)
    assert [q.passed for q in _rows(single, keys)] == [True, True]
    keys[:, :, :20] = 1  # 20 % of the neurons in code 1-0-0, which the theory does not have
    inside, outside = _rows(single, keys)
    assert inside.simulation == pytest.approx(0.8) and outside.simulation == pytest.approx(0.2)
    # SE: the binomial over E*N neurons (the chains agree exactly)
    assert inside.stderr == pytest.approx(np.sqrt(0.8 * 0.2 / (E * N)))
    assert not inside.passed and not outside.passed
