"""Code detection on constructed activations."""

import numpy as np
import pytest
from richlazy.validate.codes import (
    class_mean_activations,
    code_fractions,
    code_label,
    code_persistence,
    neuron_codes,
    top_k_active,
)


def _constructed(E=2, N=40, seed=0):
    """Neurons with prescribed codes: activation 0.9 on coded classes, 0.1 elsewhere, noise."""
    rng = np.random.default_rng(seed)
    labels = np.repeat([0, 1, 2], [8, 4, 4])
    patterns = np.array([[1, 1, 0], [0, 1, 1], [1, 0, 1], [1, 1, 1]], bool)
    which = rng.choice(4, size=(E, N), p=[0.4, 0.3, 0.2, 0.1])
    act = np.where(patterns[which][..., labels], 0.9, 0.1) + 0.05 * rng.standard_normal((E, N, 16))
    return act, labels, patterns, which


def test_codes_recover_constructed_patterns():
    act, labels, patterns, which = _constructed()
    cm = class_mean_activations(act, labels, 3)
    codes = neuron_codes(cm)
    assert np.array_equal(codes, patterns[which])
    fr = code_fractions(codes)
    for j, p in enumerate(patterns):
        f, se = fr.get(code_label(p))
        assert f == pytest.approx((which == j).mean())
        assert se == pytest.approx(np.sqrt(f * (1 - f) / 80))
    assert fr.n == 80 and np.allclose(fr.fraction.sum(), 1.0)
    assert np.allclose(fr.per_chain.sum(1), 1.0)
    assert code_label([True, False, True]) == "1-0-1"


def test_persistence_and_top_k():
    act, labels, patterns, which = _constructed(E=1, N=10)
    codes = neuron_codes(class_mean_activations(act, labels, 3))
    series = np.stack([codes, codes, codes.copy()])
    series[2, 0, :3] = ~series[2, 0, :3]  # three neurons change code
    assert np.allclose(code_persistence(series), [1.0, 1.0, 0.7])
    a = np.zeros((1, 5, 4))
    a[0, 3] = 5.0
    a[0, 1] = 2.0
    assert top_k_active(a, 2).tolist() == [[3, 1]]


def test_validation():
    with pytest.raises(ValueError, match="P = 3 inputs"):
        class_mean_activations(np.ones((2, 4)), [0, 1, 2], 3)
    with pytest.raises(ValueError, match="needs at least one input"):
        class_mean_activations(np.ones((2, 3)), [0, 0, 1], 3)
    with pytest.raises(ValueError, match=r"shape \(E, N, m\)"):
        code_fractions(np.ones(3, bool))
    with pytest.raises(ValueError, match=r"shape \(S, E, N, m\)"):
        code_persistence(np.ones((2, 3, 4), bool))
    with pytest.raises(ValueError, match="k must be an int in 1..N = 5"):
        top_k_active(np.ones((5, 3)), 6)
    with pytest.raises(ValueError, match="threshold must be finite"):
        neuron_codes(np.ones((2, 3)), threshold=float("nan"))
