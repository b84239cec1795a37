"""The exact polish of a bundle solution (theory/coding/sigmoid/_bundle_polish.py): its Jacobian, and
Newton from a perturbed solution back to the exact optimum."""

import numpy as np
import pytest
from richlazy.theory import solve_sigmoid_general, toy_class_targets
from richlazy.theory.coding.sigmoid._bundle import _RangeNeuron
from richlazy.theory.coding.sigmoid._bundle_polish import (
    _range_blocks,
    _range_exact_system,
    _schur_step,
    polish_bundle,
)


def test_range_system_jacobian_matches_finite_differences_on_a_singular_K0():
    rng = np.random.default_rng(0)
    P, m, n = 7, 3, 4
    X = rng.standard_normal((5, P))
    neuron = _RangeNeuron(X.T @ X / 5, "sigmoid_erf")  # rank 5 < P
    assert neuron.r == 5
    Y = rng.standard_normal((P, m))
    x = np.concatenate([rng.standard_normal(P * m), rng.standard_normal(n * neuron.r),
                        rng.uniform(0.1, 0.5, n)])
    F, J = _range_exact_system(x, neuron, Y, n)
    assert F.shape == (P * m + n * neuron.r + n,) and J.shape == (F.size, F.size)
    h = 1e-6
    Jn = np.empty_like(J)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        Jn[:, i] = (_range_exact_system(x + e, neuron, Y, n)[0]
                    - _range_exact_system(x - e, neuron, Y, n)[0]) / (2 * h)
    np.testing.assert_allclose(J, Jn, atol=1e-8)


def test_schur_step_equals_the_dense_newton_step():
    """Eliminating every code's u through its Hessian gives the step of the dense system."""
    rng = np.random.default_rng(4)
    P, m, n = 8, 3, 5
    X = rng.standard_normal((6, P))
    neuron = _RangeNeuron(X.T @ X / 6, "sigmoid_erf")
    Y = rng.standard_normal((P, m))
    x = np.concatenate([rng.standard_normal(P * m), rng.standard_normal(n * neuron.r),
                        rng.uniform(0.1, 0.5, n)])
    F, J = _range_exact_system(x, neuron, Y, n)
    assert np.linalg.cond(J) < 1e10
    dx = _schur_step(F, _range_blocks(x, neuron, Y, n)[1], P, m, n, neuron.r)
    np.testing.assert_allclose(dx, np.linalg.solve(J, -F), rtol=1e-7, atol=1e-9)


def test_polish_returns_a_perturbed_toy_solution_to_the_exact_optimum():
    """From the exact (continuation) toy solution with t, codes and weights perturbed by 1e-3,
    Newton returns to a root whose value f = max Q_t - tr(t^T Y) is the exact optimum's, with
    the same weights and outputs."""
    P, Y = _toy_problem()
    exact = solve_sigmoid_general(np.eye(P), Y, strategy="continuation")
    assert exact.converged, exact.message
    neuron = _RangeNeuron(np.eye(P), "sigmoid_erf")
    U = np.linalg.lstsq(neuron.B, exact.z_gamma.T, rcond=None)[0].T
    rng = np.random.default_rng(1)
    t0 = exact.t + 1e-3 * rng.standard_normal(exact.t.shape)
    U0 = U + 1e-3 * rng.standard_normal(U.shape)
    P0 = exact.P_gamma * (1 + 1e-3 * rng.standard_normal(exact.P_gamma.size))
    pol = polish_bundle(neuron, Y, t0, U0, P0)
    assert pol is not None
    t1, U1, P1, res = pol
    assert res <= 1e-10
    f_exact = exact.g_value * P - np.sum(exact.t * Y)
    Q1 = neuron.evaluate(U1, t1, order=0)[0]
    assert np.ptp(Q1) < 1e-9  # tied
    assert Q1[0] - np.sum(t1 * Y) == pytest.approx(f_exact, abs=1e-9 * abs(f_exact))
    np.testing.assert_allclose(P1, exact.P_gamma, atol=1e-8)
    _, V1, _, _, ph1, _, _ = neuron.evaluate(U1, t1)
    out = np.einsum("g,gp,gr->pr", P1, ph1, V1 / P)
    np.testing.assert_allclose(out, Y, atol=1e-9)


def test_polish_gives_up_on_a_wrong_code_set():
    """Two of the toy's codes only (the output constraint cannot hold): no root, None."""
    P, Y = _toy_problem()
    exact = solve_sigmoid_general(np.eye(P), Y, strategy="continuation")
    neuron = _RangeNeuron(np.eye(P), "sigmoid_erf")
    U = np.linalg.lstsq(neuron.B, exact.z_gamma.T, rcond=None)[0].T
    keep = np.argsort(exact.P_gamma)[-2:]
    Pg = exact.P_gamma[keep] / exact.P_gamma[keep].sum()
    assert polish_bundle(neuron, Y, exact.t, U[keep], Pg) is None


def _toy_problem():
    """Fig. 2's toy task at P = 16 (classes of 8, 4, 4 orthonormal inputs, y- = 1/2)."""
    lab = np.array([0] * 8 + [1] * 4 + [2] * 4)
    return lab.size, toy_class_targets(3, y_minus=0.5)[lab]


@pytest.mark.slow
def test_bundle_stopped_early_is_certified_by_the_polish(monkeypatch):
    """A bundle stopped at a loose rtol without tightening has no certificate by itself; the
    exact polish of its codes certifies it, at the exact toy optimum."""
    import richlazy.theory.coding.sigmoid._bundle as bundle

    P, Y = _toy_problem()
    exact = solve_sigmoid_general(np.eye(P), Y, strategy="continuation")
    f_exact = exact.g_value * P - np.sum(exact.t * Y)
    monkeypatch.setattr(bundle, "_MAX_TIGHTEN", 0)
    sol = solve_sigmoid_general(np.eye(P), Y, strategy="bundle", seed=1, rtol=1e-4)
    assert sol.converged, sol.message
    assert "certified after an exact polish" in sol.message
    assert sol.relative_gap <= 1e-10
    assert sol.f_bounds[1] == pytest.approx(f_exact, abs=1e-9 * abs(f_exact))
    np.testing.assert_allclose(sol.mean_output(), Y, atol=1e-9)
    # the same solve without the polish stops uncertified
    monkeypatch.setattr(bundle, "polish_bundle", lambda *a, **k: None)
    plain = solve_sigmoid_general(np.eye(P), Y, strategy="bundle", seed=1, rtol=1e-4)
    assert not plain.converged and plain.relative_gap > 1e-5
    assert "an exact polish of its codes found no root" in plain.message


def _count_independent_searches(monkeypatch, bundle):
    """Spy on the oracle: the certificate's independent basin-hopping runs are its calls
    that hop without warm starts."""
    runs = []
    call = bundle._Oracle.__call__

    def spy(self, t, warm, *args, **kwargs):
        if warm is None and kwargs.get("hop_rounds", 0) > 0:
            runs.append(1)
        return call(self, t, warm, *args, **kwargs)

    monkeypatch.setattr(bundle._Oracle, "__call__", spy)
    return runs


def _solve_with_a_failing_polish(monkeypatch):
    """The toy at a loose rtol with a polish that finds no root: (solution, polish calls,
    independent searches)."""
    import richlazy.theory.coding.sigmoid._bundle as bundle

    P, Y = _toy_problem()
    calls = []

    def no_root(*args, **kwargs):
        calls.append(1)
        return None

    monkeypatch.setattr(bundle, "polish_bundle", no_root)
    runs = _count_independent_searches(monkeypatch, bundle)
    sol = solve_sigmoid_general(np.eye(P), Y, strategy="bundle", seed=1, rtol=1e-4)
    assert calls, "the polish was never tried: no check failed at an rtol stop"
    return sol, calls, runs


@pytest.mark.slow
def test_failed_polish_is_not_reported_once_the_bundle_certifies_itself(monkeypatch):
    """A polish that finds no root at a loose rtol, followed by the tightened bundle's own
    certificate: the message states the certificate, not the polish that failed on the way."""
    sol, _calls, _runs = _solve_with_a_failing_polish(monkeypatch)
    assert sol.converged and sol.relative_gap <= 1e-5, sol.message
    assert "found no root" not in sol.message


@pytest.mark.slow
def test_a_check_that_fails_at_an_rtol_stop_skips_the_independent_searches(monkeypatch):
    """The check at a loose rtol stop fails (the polish finds no root there), the tightened
    bundle then certifies: only that certificate runs the _CERT_HOP_RUNS - 1 independent
    searches. A full search at the failing stop (as before) ran them twice."""
    import richlazy.theory.coding.sigmoid._bundle as bundle

    sol, _calls, runs = _solve_with_a_failing_polish(monkeypatch)
    assert sol.converged and sol.relative_gap <= 1e-5, sol.message
    assert len(runs) == bundle._CERT_HOP_RUNS - 1


@pytest.mark.slow
def test_an_uncertified_result_reports_the_full_search(monkeypatch):
    """Stopped uncertified (loose rtol, no tightening, no polish): the bounds returned come from
    the full search with every independent run, not from the staged check that failed."""
    import richlazy.theory.coding.sigmoid._bundle as bundle

    P, Y = _toy_problem()
    monkeypatch.setattr(bundle, "_MAX_TIGHTEN", 0)
    monkeypatch.setattr(bundle, "polish_bundle", lambda *a, **k: None)
    runs = _count_independent_searches(monkeypatch, bundle)
    sol = solve_sigmoid_general(np.eye(P), Y, strategy="bundle", seed=1, rtol=1e-4)
    assert not sol.converged
    assert len(runs) == bundle._CERT_HOP_RUNS - 1
    lower, upper = sol.f_bounds
    assert np.isfinite(lower) and np.isfinite(upper) and upper >= lower
