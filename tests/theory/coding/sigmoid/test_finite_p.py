"""The finite-P sigmoid toy posterior P(a) ∝ exp(P g_t(a)) (notes §4.3 last bullet) where its
peaks overlap (below and near T_c at P = 100), checked against an independent brute-force
integral over a, and its code fractions against a direct simulation of how a sampler reads a
neuron's code (thresholded empirical class means)."""

import functools

import numpy as np
import pytest
from richlazy.theory import solve_sigmoid_toy, toy_class_targets
from richlazy.theory.coding.sigmoid._finite_p import _tabulated_psi
from richlazy.theory.kernels._tilted import tilted_moments
from scipy.special import erf
from theory_helpers import RHO

YC = toy_class_targets(3, y_minus=0.5)  # Fig. 2 / 4 sigmoid; P -> inf T_c = 0.08195
P = 100


@functools.cache
def _solve(T):
    s = solve_sigmoid_toy(RHO, YC, P=P, T=T)
    assert s.converged, s.message
    return s


def _log_weight(A, t):
    psi, d1, _ = tilted_moments(A @ t.T, activation="sigmoid_erf")
    return P * (-0.5 * np.sum(A * A, axis=1) + psi @ RHO), d1


def _grid(lo, hi, h):
    axes = [np.arange(lo[i], hi[i] + h, h) for i in range(3)]
    return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)


@functools.cache
def _brute_posterior(T, h=0.07):
    """exp(P g_t(a)) on a uniform grid over a box that holds the mass: g decreases radially
    outside |a| = R = sum_c rho_c |t_c| (0 < psi' < 1), and 0.9 beyond it the prior term alone
    has dropped by P 0.9^2 / 2 = 40. A coarse pass over that box finds where the mass is; the
    fine grid covers it with a margin of 0.6 (a drop far beyond 60 / P)."""
    t = _solve(T).t
    R = float(np.sum(RHO * np.linalg.norm(t, axis=1))) + 0.9
    A = _grid([-R] * 3, [R] * 3, 0.15)
    logw, _ = _log_weight(A, t)
    near = A[logw > logw.max() - 60.0]
    A = _grid(near.min(axis=0) - 0.6, near.max(axis=0) + 0.6, h)
    logw, d1 = _log_weight(A, t)
    w = np.exp(logw - logw.max())
    return A, w / w.sum(), d1


@pytest.mark.slow
def test_finite_P_converges_where_the_per_peak_rule_stalled():
    """P = 100 at 0.5 T_c (as at T = 0, 0.2 and 0.95 T_c, measured): overlapping peaks made the
    earlier per-peak rule stall."""
    s = _solve(0.041)
    assert s.residuals["output"] < 1e-9 and len(s.code_fractions) >= 4


@pytest.mark.slow
def test_finite_P_output_constraint_against_a_brute_force_integral():
    """0.85 T_c, P = 100: the solver's output constraint and code bookkeeping re-evaluated on an
    independent grid."""
    T = 0.0697
    s = _solve(T)
    A, w, d1 = _brute_posterior(T)
    out = np.einsum("k,kc,kr->cr", w, d1, A)
    np.testing.assert_allclose(out, YC - T * s.t, atol=2e-7)
    # the posterior mean readout and the code fractions' bookkeeping
    mean_a = w @ A
    total = sum(s.code_fractions[c] * s.code_readouts[c] for c in s.code_fractions)
    np.testing.assert_allclose(total, mean_a, atol=2e-6)
    assert abs(sum(s.code_fractions.values()) - 1.0) < 1e-9


def _phi(z):
    return 0.5 * (1.0 + erf(np.sqrt(np.pi) * z / 2.0))


def _tilted_draws(hs, n, rng):
    """n draws of z from N(z|0,1) exp(h phi(z)) for each h in hs (rejection from N(0, 1) with
    acceptance exp(h phi(z) - max(h, 0)) <= 1)."""
    out = np.empty((hs.size, n))
    todo = np.ones((hs.size, n), dtype=bool)
    while todo.any():
        idx = np.nonzero(todo)
        z = rng.standard_normal(idx[0].size)
        h = hs[idx[0]]
        ok = rng.random(z.size) < np.exp(h * _phi(z) - np.maximum(h, 0.0))
        out[idx[0][ok], idx[1][ok]] = z[ok]
        todo[idx[0][ok], idx[1][ok]] = False
    return out


def test_finite_P_code_fractions_match_a_direct_simulation_of_thresholded_class_means():
    """At 0.85 T_c (five codes at P = 100, 1-0-0 among them, which the P -> inf theory lacks):
    draw a from the brute-force posterior, draw each class's P rho_c activations given a, and
    read the code from the thresholded empirical means, as the sampler does. Fractions and mean
    readouts per code agree with the solver's (central-limit) code summary within 4 Monte
    Carlo standard errors + 0.004 (allowance for the central-limit approximation, fixed in
    advance)."""
    T = 0.0697
    s = _solve(T)
    A, w, _ = _brute_posterior(T)
    rng = np.random.default_rng(1)
    n_draw = 20_000
    a = A[rng.choice(w.size, size=n_draw, p=w)]
    sizes = (P * RHO).astype(int)
    bits = np.empty((n_draw, 3), dtype=bool)
    for c in range(3):
        z = _tilted_draws(a @ s.t[c], sizes[c], rng)
        bits[:, c] = _phi(z).mean(axis=1) > 0.5
    labels = np.array(["-".join(str(int(b)) for b in row) for row in bits])
    assert s.code_fractions["1-0-0"] > 0.003  # the finite-P code that P -> inf does not have
    for code, frac in s.code_fractions.items():
        sel = labels == code
        f = sel.mean()
        se = np.sqrt(max(f * (1 - f), 1.0 / n_draw) / n_draw)
        assert abs(f - frac) < 4 * se + 0.004, (code, f, frac)
        if sel.sum() > 200:
            mu = a[sel].mean(axis=0)
            se_a = a[sel].std(axis=0) / np.sqrt(sel.sum())
            assert np.all(np.abs(mu - s.code_readouts[code]) < 4 * se_a + 0.004), (code, mu)
    assert np.isin(labels, list(s.code_fractions)).mean() > 0.999


def test_infinite_P_code_summary_is_the_sum_over_the_peaks():
    s = solve_sigmoid_toy(RHO, YC, T=0.04)
    assert s.converged, s.message
    for code, frac in s.code_fractions.items():
        sel = np.array([c == code for c in s.code_strings()])
        assert abs(frac - s.P_gamma[sel].sum()) < 1e-12
        np.testing.assert_allclose(s.code_readouts[code] * frac, s.P_gamma[sel] @ s.a_gamma[sel],
                                   atol=1e-12)
        np.testing.assert_allclose(s.code_activations[code] * frac,
                                   s.P_gamma[sel] @ s.mean_activations[sel], atol=1e-12)


def test_tabulated_psi_matches_the_quadrature():
    """The lattice's quintic Hermite table of psi (and its derivatives) against direct
    Gauss-Hermite tilted moments at random tilts: psi to 1e-13, psi' to 1e-11, psi'' to 1e-8."""
    h = np.random.default_rng(0).uniform(-6.0, 8.0, (4000, 3))
    direct = tilted_moments(h, activation="sigmoid_erf")

    class _Neuron:
        @staticmethod
        def psi(x):
            return tilted_moments(x, activation="sigmoid_erf")

    table = _tabulated_psi(_Neuron, h)
    for got, ref, tol in zip(table, direct, (1e-13, 1e-11, 1e-8), strict=True):
        assert np.max(np.abs(got - ref)) < tol
