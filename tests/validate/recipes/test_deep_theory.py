"""richlazy.validate.recipes (deep sigmoid theory side): code keys of class-mean activations,
class-block means of kernels and the merging of theory codes by class pattern."""

from types import SimpleNamespace

import numpy as np
import pytest
from richlazy.validate.recipes import layer_code_keys, theory_class_codes


def test_layer_code_keys_threshold_class_means_at_one_half():
    cm = np.array([[[0.6, 0.4, 0.7], [0.5, 0.9, 0.1]]])  # (E=1, N=2, m=3)
    assert layer_code_keys(cm).tolist() == [[1 + 4, 2]]  # 0.5 itself is not active


def test_block_values_are_the_class_block_means():
    from richlazy.validate.recipes._deep_theory import _block_values

    labels = np.array([0, 0, 1, 1, 1])
    K = np.arange(25, dtype=float).reshape(5, 5)
    K = K + K.T
    b = _block_values(np.stack([K, 2 * K]), labels, 2)  # a leading batch axis is kept
    assert b["diagonal, class 1"].tolist() == [np.mean([24, 36, 48]), 2 * np.mean([24, 36, 48])]
    assert b["within class 0"][0] == K[0, 1]
    assert b["within class 1"][0] == pytest.approx(np.mean([K[2, 3], K[2, 4], K[3, 4]]))
    assert b["between classes 0,1"][0] == pytest.approx(K[:2, 2:].mean())


def test_theory_class_codes_merges_codes_with_the_same_class_pattern():
    labels = np.array([0, 0, 1, 2])
    act = np.array([[0.9, 0.8, 0.9, 0.1],   # class pattern 1-1-0
                    [0.7, 0.9, 0.6, 0.2],   # 1-1-0 again (another mode, same code)
                    [0.1, 0.2, 0.1, 0.9]])  # 0-0-1
    sol = SimpleNamespace(mean_activations=act, P_gamma=np.array([0.2, 0.6, 0.2]),
                          a_gamma=np.array([[1.0, 2.0, 0.0], [2.0, 0.0, 1.0], [0.0, 0.0, 3.0]]))
    keys, P, a = theory_class_codes(sol, labels, 3)
    assert keys.tolist() == [3, 4]
    assert P == pytest.approx([0.8, 0.2])
    assert a[0] == pytest.approx((0.2 * np.array([1.0, 2.0, 0.0]) + 0.6 * np.array([2.0, 0.0, 1.0])) / 0.8)
    assert a[1] == pytest.approx([0.0, 0.0, 3.0])
