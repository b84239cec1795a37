"""The iteration driver of ``richlazy.theory._numerics`` (issue 54): ``iterate`` owns the loop,
its count, history and stopping status (the vocabulary of ``theory._results.Status``) for an
init / step / terminate triple; the Newton loops of the solvers run through it."""

import math

import numpy as np
import pytest
from richlazy.theory import Status
from richlazy.theory._numerics import (
    MAX_ITERATIONS,
    NUMERICAL_FAILURE,
    SUCCESS,
    Iteration,
    _newton_lstsq,
    iterate,
)


def test_the_driver_speaks_the_status_vocabulary():
    """_numerics imports nothing of richlazy: its codes are Status's stable integer values."""
    assert (SUCCESS, MAX_ITERATIONS, NUMERICAL_FAILURE) == (
        Status.SUCCESS, Status.MAX_ITERATIONS, Status.NUMERICAL_FAILURE)
    out = iterate(0, lambda x, n: (x, (Status.BAD_PROBLEM, "no root")), None, maxiter=3)
    assert Status(out.status) is Status.BAD_PROBLEM and out.why == "no root" and not out.converged


def _cos_map(tol):
    """x -> cos(x), a contraction on [0, 1] (|sin x| <= sin 1 < 1) with fixed point 0.739085..."""

    def step(x, _nit):
        return math.cos(x), None

    def terminate(x):
        return Status.SUCCESS if abs(math.cos(x) - x) <= tol else None

    return step, terminate


def _count_cos_steps(x, tol):
    """Steps of the plain loop ``while |cos x - x| > tol: x = cos x`` (the reference count)."""
    n = 0
    while abs(math.cos(x) - x) > tol:
        x, n = math.cos(x), n + 1
    return x, n


def test_iterate_converges_on_a_contraction_with_the_loop_count_and_history():
    step, terminate = _cos_map(1e-12)
    out = iterate(1.0, step, terminate, maxiter=500, record=lambda x: abs(math.cos(x) - x))
    x_ref, n_ref = _count_cos_steps(1.0, 1e-12)
    assert isinstance(out, Iteration)
    assert out.status == Status.SUCCESS and out.converged and out.why == ""
    assert out.nit == n_ref and out.state == x_ref  # the same operations: bit-equal
    assert out.state == pytest.approx(0.7390851332151607, abs=1e-11)
    # history: the initial state and each step; the residuals of a contraction decrease
    assert len(out.history) == n_ref + 1
    assert all(b < a for a, b in zip(out.history, out.history[1:], strict=False))
    assert out.history[-1] <= 1e-12 < out.history[-2]


def test_iterate_reports_an_exhausted_budget_with_what_to_change():
    step, terminate = _cos_map(1e-12)
    out = iterate(1.0, step, terminate, maxiter=5)
    assert out.status == Status.MAX_ITERATIONS and not out.converged
    assert out.nit == 5
    x = 1.0
    for _ in range(5):
        x = math.cos(x)
    assert out.state == x
    assert "raise maxiter" in out.why  # the default says what to change (Status.fix)
    custom = iterate(1.0, step, terminate, maxiter=2, exhausted="raise maxiter or start closer")
    assert custom.status == Status.MAX_ITERATIONS and custom.why == "raise maxiter or start closer"
    # maxiter = 0: no step; a state that already meets the criterion still succeeds
    assert iterate(1.0, step, terminate, maxiter=0).status == Status.MAX_ITERATIONS
    fixed = iterate(x_fp := _count_cos_steps(1.0, 1e-12)[0], step, terminate, maxiter=0)
    assert fixed.status == Status.SUCCESS and fixed.nit == 0 and fixed.state == x_fp


def test_iterate_stops_with_a_failure_when_a_step_returns_non_finite_values():
    def step(x, nit):  # Newton on x^2 + 1 = 0 from 0 divides by zero at once
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.array([x[0] - (x[0] ** 2 + 1.0) / (2.0 * x[0])]), None

    out = iterate(np.array([0.0]), step, None, maxiter=10, values=lambda x: x,
                  nonfinite=lambda x: f"non-finite iterate {x[0]}")
    assert out.status == Status.NUMERICAL_FAILURE and not out.converged
    assert out.nit == 1 and not np.isfinite(out.state[0])
    assert out.why == "non-finite iterate -inf"
    # the finiteness test comes before terminate and before the budget
    out = iterate(np.array([np.nan]), step, lambda x: Status.SUCCESS, maxiter=0, values=lambda x: x)
    assert out.status == Status.NUMERICAL_FAILURE and out.nit == 0
    assert out.why == "the iteration produced non-finite values"


def test_a_step_can_stop_the_loop_and_skip_its_record():
    def step(x, nit):
        if nit == 3:
            return x, (Status.NUMERICAL_FAILURE, "breakdown")
        return (x + 1, None) if nit % 2 == 0 else (x, None)  # odd steps: no new iterate

    out = iterate(0, step, None, maxiter=10, record=lambda x: x if x % 1 == 0 else None)
    assert (out.status, out.why, out.nit, out.state) == (Status.NUMERICAL_FAILURE, "breakdown", 4, 2)
    assert out.history == [0, 1, 1, 2]
    only_new = iterate(0, step, None, maxiter=10, record=lambda x: x)
    assert only_new.history == [0, 1, 1, 2]
    # a stop given as a bare Status has no words
    out = iterate(0, lambda x, n: (x + 1, Status.SUCCESS), None, maxiter=10)
    assert (out.status, out.why, out.nit, out.state) == (Status.SUCCESS, "", 1, 1)


@pytest.mark.parametrize("maxiter", [-1, 2.5, True, None])
def test_iterate_rejects_a_bad_budget(maxiter):
    with pytest.raises(ValueError, match="maxiter must be an int >= 0"):
        iterate(0.0, lambda x, n: (x, None), None, maxiter=maxiter)


def test_newton_lstsq_through_the_driver_solves_regular_and_singular_systems():
    def regular(x):
        return (np.array([x[0] ** 2 + x[1] - 3.0, x[0] - x[1] ** 3 + 1.0]),
                np.array([[2 * x[0], 1.0], [1.0, -3 * x[1] ** 2]]))

    x, res, nfev = _newton_lstsq(regular, np.array([1.3, 0.2]), 1e-13)
    assert res <= 1e-13 and nfev >= 2
    np.testing.assert_allclose(regular(x)[0], 0.0, atol=1e-13)

    def singular(x):  # consistent, rank-deficient Jacobian: the minimum-norm steps
        return (np.array([x[0] + x[1] - 2.0, 2 * (x[0] + x[1]) - 4.0, x[2] ** 3 - 8.0]),
                np.array([[1.0, 1.0, 0.0], [2.0, 2.0, 0.0], [0.0, 0.0, 3 * x[2] ** 2]]))

    x, res, _ = _newton_lstsq(singular, np.array([0.1, 0.3, 1.0]), 1e-13)
    assert res <= 1e-13 and x[0] - x[1] == pytest.approx(-0.2)  # min-norm steps keep x0 - x1

    def no_root(x):  # |x| + 1 > 0: backtracking stalls, the iteration stops at a finite point
        return np.array([abs(x[0]) + 1.0]), np.array([[np.sign(x[0]) or 1.0]])

    x, res, nfev = _newton_lstsq(no_root, np.array([0.5]), 1e-13, maxiter=2)
    assert res == 1.0625 and nfev == 6  # two accepted halved steps (counts of the old loop)
