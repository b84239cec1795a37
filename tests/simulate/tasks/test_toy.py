"""The toy tasks of seed 000: orthogonal inputs and the class-correlated variant."""

import numpy as np
import pytest
from richlazy.simulate import class_correlated_toy_task, orthogonal_toy_task

Q = np.array([[0.3, 0.1, 0.05], [0.1, 0.3, 0.1], [0.05, 0.1, 0.3]])


def test_class_correlated_inputs_have_the_class_block_kernel():
    """x_mu . x_nu / N0 = (1 - q_cc) delta + q_cc' exactly; q = 0 is the orthogonal task."""
    task = class_correlated_toy_task(20, 30, Q, y_minus=-0.5, seed=4)
    lab = task.labels
    K = task.X.T @ task.X / task.N0
    want = np.diag(1.0 - np.diag(Q)[lab]) + Q[np.ix_(lab, lab)]
    np.testing.assert_allclose(K, want, atol=1e-12)
    ref = orthogonal_toy_task(20, 30, y_minus=-0.5, seed=4)
    np.testing.assert_array_equal(task.Y, ref.Y)
    zero = class_correlated_toy_task(20, 30, np.zeros((3, 3)), y_minus=-0.5, seed=4)
    np.testing.assert_allclose(zero.X, ref.X, atol=1e-12)
    # basis columns beyond P + k are orthogonal to every training input
    np.testing.assert_allclose(task.basis[:, 23:].T @ task.X, 0.0, atol=1e-10)


@pytest.mark.parametrize("q,match", [
    (np.eye(2), "3 x 3"),
    (np.array([[0.3, 0.5, 0.0], [0.5, 0.3, 0.0], [0.0, 0.0, 0.3]]), "positive semi-definite"),
    (np.diag([1.0, 0.2, 0.2]), "diagonal < 1"),
])
def test_class_correlated_task_rejects_bad_covariances(q, match):
    with pytest.raises(ValueError, match=match):
        class_correlated_toy_task(20, 30, q)
    with pytest.raises(ValueError, match="N0 must be >= P \\+ k"):
        class_correlated_toy_task(20, 21, Q)
