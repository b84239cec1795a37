"""Helpers of the coding/persistence case: orthant probabilities and lagged persistence."""

import numpy as np
import pytest
from richlazy.validate.cases.coding._persistence import (
    lagged_persistence,
    lagged_set_persistence,
    orthant_probabilities,
)


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


def test_lagged_persistence_of_a_two_state_markov_chain():
    """Per-neuron symmetric two-state chain with flip probability q: Pr[same at lag l] =
    (1 + (1 - 2q)^l)/2."""
    rng = np.random.default_rng(2)
    S, E, N, q = 400, 3, 500, 0.05
    flips = rng.random((S, E, N)) < q
    keys = np.cumsum(flips, axis=0) % 2
    for lag in (1, 5, 20):
        pers = lagged_persistence(keys, lag)
        expected = 0.5 * (1 + (1 - 2 * q) ** lag)
        assert pers.shape == (E,)
        assert np.all(np.abs(pers - expected) < 0.02)
    assert np.all(lagged_persistence(keys, 0) == 1.0)


def test_lagged_set_persistence_counts_members_not_order():
    top = np.array([[[0, 1, 2]], [[2, 0, 1]], [[2, 0, 7]]])  # (S=3, E=1, k=3)
    # lag 1: origins 0 and 1 -> 3/3 and 2/3 kept
    assert lagged_set_persistence(top, 1) == pytest.approx([5 / 6])
    assert lagged_set_persistence(top, 2) == pytest.approx([2 / 3])


@pytest.mark.parametrize("fn, arg, lag, match", [
    (lagged_persistence, np.zeros((4, 2)), 1, "keys"),
    (lagged_persistence, np.zeros((4, 2, 3)), 4, "lag"),
    (lagged_set_persistence, np.zeros((4, 2)), 1, "top"),
    (lagged_set_persistence, np.zeros((4, 2, 3)), -1, "lag"),
])
def test_bad_input(fn, arg, lag, match):
    with pytest.raises(ValueError, match=match):
        fn(arg, lag)


def test_orthant_bad_shape():
    with pytest.raises(ValueError, match="U must be a 3 x 3"):
        orthant_probabilities(np.eye(2))
