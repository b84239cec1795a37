"""ToyTask (theory/coding/_task.py): the orthogonal toy task per class, its per-input form, and
the toy solvers called with it."""

import numpy as np
import pytest
from richlazy.theory import ToyTask, solve_relu_toy, solve_sigmoid_toy, toy_class_targets

RATIOS = (0.5, 0.25, 0.25)


def _task(y_minus=-0.5):
    return ToyTask(RATIOS, toy_class_targets(3, y_plus=1.0, y_minus=y_minus))


def test_per_input_form_round_trips():
    t = _task()
    assert t.n_classes == 3 and t.ratios.dtype == float
    lab = t.labels(8)
    assert lab.tolist() == [0, 0, 0, 0, 1, 1, 2, 2]
    Y = t.targets(8)
    assert np.array_equal(Y[4], t.class_targets[1]) and Y.shape == (8, 3)
    back = ToyTask.from_labels(lab, Y)
    assert np.array_equal(back.ratios, t.ratios) and np.array_equal(back.class_targets, t.class_targets)
    # labels in any order give the same task
    perm = np.random.default_rng(0).permutation(8)
    shuffled = ToyTask.from_labels(lab[perm], Y[perm])
    assert np.array_equal(shuffled.ratios, t.ratios)
    assert np.array_equal(shuffled.class_targets, t.class_targets)


@pytest.mark.parametrize("solver", [solve_sigmoid_toy, solve_relu_toy])
def test_toy_solvers_take_the_task_and_give_the_same_result(solver):
    t = _task()
    a, b = solver(t), solver(list(RATIOS), t.class_targets)
    assert a.converged and a.message == b.message
    assert np.array_equal(a.ratios, b.ratios) and np.array_equal(a.class_targets, b.class_targets)
    with pytest.raises(TypeError, match="class_targets must be left out when the task is a ToyTask"):
        solver(t, t.class_targets)
    with pytest.raises(TypeError, match="class_targets is required"):
        solver(list(RATIOS))


@pytest.mark.parametrize("make, exc, match", [
    (lambda: ToyTask([0.5, 0.6], np.ones((2, 1))), ValueError, "ratios must sum to 1"),
    (lambda: ToyTask([0.5, 0.5], np.ones((3, 1))), ValueError, "class_targets must have one row per class"),
    (lambda: ToyTask.from_labels([0, 0, 1], [[1.0], [2.0], [3.0]]), ValueError, "differ within a class"),
    (lambda: ToyTask.from_labels([0, 2], np.ones((2, 1))), ValueError, r"every class 0\.\.2"),
    (lambda: ToyTask.from_labels([0, 1, 1], np.ones((2, 1))), ValueError, "one entry per row of Y"),
    (lambda: ToyTask.from_labels([0.0, 1.0], np.ones((2, 1))), TypeError, "labels must be integers"),
    (lambda: _task().labels(10), ValueError, "whole number"),
    (lambda: _task().targets(0), ValueError, "P"),
])
def test_bad_tasks_name_the_argument(make, exc, match):
    with pytest.raises(exc, match=match):
        make()
