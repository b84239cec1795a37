"""richlazy.validate.recipes (code persistence): lagged persistence of codes and top-k sets, and
the mixing value of decorrelated codes."""

import numpy as np
import pytest
from richlazy.validate.recipes import lagged_persistence, lagged_set_persistence, mixing_value


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


def test_mixing_value_is_the_agreement_probability_of_independent_draws():
    assert mixing_value([0, 0, 1, 1]) == pytest.approx(0.5)
    assert mixing_value(np.full((3, 4), 7)) == pytest.approx(1.0)
    # i.i.d. codes (no memory): the lagged persistence is Σ p² at every lag >= 1
    p = np.array([0.5, 0.3, 0.15, 0.05])
    rng = np.random.default_rng(0)
    keys = rng.choice(4, size=(400, 2, 200), p=p)
    exact = float(np.sum(p * p))
    assert mixing_value(keys) == pytest.approx(exact, abs=0.005)
    n = keys[3:].size
    se = np.sqrt(exact * (1 - exact) / n)
    assert lagged_persistence(keys, 3).mean() == pytest.approx(exact, abs=5 * se)


def test_mixing_value_rejects_empty_keys():
    with pytest.raises(ValueError, match="keys"):
        mixing_value(np.zeros((0, 3)))
