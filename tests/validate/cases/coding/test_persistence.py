"""Helpers of the coding/persistence case: orthant probabilities (lagged persistence:
tests/validate/recipes/test_persistence.py)."""

import numpy as np
import pytest
from richlazy.validate.cases.coding._persistence import orthant_probabilities


def test_orthant_probabilities_match_monte_carlo():
    rng = np.random.default_rng(1)
    B = rng.normal(size=(3, 3))
    U = B @ B.T + 0.3 * np.eye(3)
    p = orthant_probabilities(U)
    assert sum(p.values()) == pytest.approx(1.0, abs=1e-12)
    a = rng.multivariate_normal(np.zeros(3), U, size=400_000)
    for signs, prob in p.items():
        hit = np.all((a > 0) == np.array(signs, dtype=bool), axis=1).mean()
        assert abs(hit - prob) < 5 * np.sqrt(prob * (1 - prob) / a.shape[0])


def test_orthant_probabilities_independent_components():
    p = orthant_probabilities(np.diag([1.0, 2.0, 0.5]))
    assert all(v == pytest.approx(0.125, abs=1e-15) for v in p.values())


def test_orthant_bad_shape():
    with pytest.raises(ValueError, match="U must be a 3 x 3"):
        orthant_probabilities(np.eye(2))
