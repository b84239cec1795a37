"""richlazy.validate.recipes (sigmoid code populations): the code-fraction comparison on
synthetic keys at a known theory (it must pass) and shifted away from it (it must fail)."""

from __future__ import annotations

import numpy as np
import pytest
from richlazy.theory import solve_sigmoid_toy, toy_class_targets
from richlazy.validate.recipes import code_fraction_quantities
from theory_helpers import RHO

N, S, E = 100, 40, 4


@pytest.fixture(scope="module")
def single():
    """Above T_c: one code (1-1-1)."""
    return solve_sigmoid_toy(RHO, toy_class_targets(3, y_minus=0.5), T=0.15)


def test_code_fractions_against_the_theory(single):
    key = int((single.codes[0] * (1 << np.arange(3))).sum())  # 1-1-1 -> 7
    keys = np.full((S, E, N), key)
    qs = code_fraction_quantities(single, keys, N, "note")
    assert [q.passed for q in qs] == [True, True]
    keys[:, :, :20] = 1  # 20 % of the neurons in code 1-0-0, which the theory does not have
    qs = code_fraction_quantities(single, keys, N, "note")
    assert qs[0].simulation == pytest.approx(0.8) and qs[1].simulation == pytest.approx(0.2)
    assert not qs[0].passed and not qs[1].passed
