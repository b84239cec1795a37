"""Long theory solves report progress (issue 12): ``progress=`` on the general sigmoid and ReLU
outlier solvers is silent by default, prints throttled lines on stderr with ``True``, hands every
message to a callable, and rejects anything else naming the option."""

import numpy as np
import pytest
from richlazy.theory import (
    solve_relu_outliers,
    solve_sigmoid_general,
)
from theory_helpers import class_correlated_problem


@pytest.fixture(scope="module")
def problem():
    return class_correlated_problem(P=9, N0=30)


def test_sigmoid_general_progress_callable_gets_stages_and_final_message(problem):
    K0, Y = problem
    got = []
    sol = solve_sigmoid_general(K0, Y, progress=got.append)
    assert sol.converged
    assert len(got) >= 2
    assert all(m.startswith("[solve_sigmoid_general] ") for m in got)
    assert any("lambda" in m or "beta" in m for m in got[:-1])
    # the last line is the solver's own message, with the elapsed time
    assert got[-1].startswith(f"[solve_sigmoid_general] {sol.message} (")
    assert got[-1].endswith(" s)")


def test_progress_true_prints_on_stderr_and_default_is_silent(problem, capsys):
    K0, Y = problem
    a = solve_sigmoid_general(K0, Y)
    assert capsys.readouterr().err == ""
    b = solve_sigmoid_general(K0, Y, progress=np.True_)
    err = capsys.readouterr().err
    assert err.startswith("[solve_sigmoid_general] ")
    assert b.message in err
    # reporting does not change the result
    np.testing.assert_array_equal(a.P_gamma, b.P_gamma)
    np.testing.assert_array_equal(a.t, b.t)


@pytest.mark.slow
def test_relu_outliers_progress_reports_stages_and_margin(problem):
    K0, Y = problem
    got = []
    sol = solve_relu_outliers(K0, Y, n_restarts=1, maxiter=7, progress=got.append)
    stages = [m for m in got if "stage" in m]
    assert stages and all("dual margin" in m for m in stages)
    assert got[-1].startswith(f"[solve_relu_outliers] {sol.message} (")


@pytest.mark.parametrize("solve", [solve_sigmoid_general, solve_relu_outliers])
@pytest.mark.parametrize("bad", ["yes", 1, 0.5])
def test_progress_rejects_non_bool_non_callable(problem, solve, bad):
    K0, Y = problem
    with pytest.raises(TypeError, match="progress"):
        solve(K0, Y, progress=bad)
