"""Tests of the helpers of the prior large-deviation cases (validate/cases/ldt/_prior.py); the
prior sampler they use is tested in ``tests/simulate/tasks/test_prior_sampler.py``."""

from __future__ import annotations

import pytest
from richlazy.validate.cases.ldt._prior import _slope


def test_slope():
    ds = [8, 12, 16, 24]
    s, s_se = _slope(ds, [3.0 * d + 1.0 for d in ds], [0.1] * 4)
    assert s == pytest.approx(3.0) and s_se > 0
    assert _slope(ds, [2.0 * d for d in ds]) == (pytest.approx(2.0), None)
