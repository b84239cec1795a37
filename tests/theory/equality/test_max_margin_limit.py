"""Symmetric max-margin network of the SD task (theory/equality/_max_margin_limit.py).

The closed form is checked against an independent column-generation linear program (scipy
HiGHS), once on the symmetrised two-constraint problem and once on the full training set without
assuming symmetry, and by evaluating the network on every training pair.
"""

import itertools
import math

import numpy as np
import pytest
from richlazy.theory import (
    MaxMarginAccuracy,
    sd_max_margin_accuracy,
    sd_symmetric_max_margin,
)
from scipy.optimize import linprog


def _pairs(L):
    X, y = [], []
    for k, l in itertools.product(range(L), repeat=2):
        x = np.zeros(2 * L)
        x[k] = 1.0
        x[L + l] = 1.0
        X.append(x)
        y.append(1.0 if k == l else -1.0)
    return np.array(X), np.array(y)


def _lp(F, y):
    """max t s.t. y_n Σ_j c_j F_nj >= t, Σ|c_j| = 1; returns (c, t, duals >= 0)."""
    n, J = F.shape
    A = np.hstack([-(y[:, None] * np.hstack([F, -F])), np.ones((n, 1))])
    cost = np.zeros(2 * J + 1)
    cost[-1] = -1.0
    r = linprog(cost, A_ub=A, b_ub=np.zeros(n), A_eq=np.r_[np.ones(2 * J), 0.0][None],
                b_eq=[1.0], bounds=[(0, None)] * (2 * J) + [(None, None)], method="highs")
    assert r.status == 0
    return r.x[:J] - r.x[J:2 * J], r.x[-1], -r.ineqlin.marginals


def _column_generation(features, rows, y, D, rng, rounds=10, starts=200, iters=200):
    """Maximise the margin over unit-norm ReLU units w ∈ R^D by column generation.

    features(W) -> (n_constraints, J) margin features of the units W (J, D);
    rows(W, wy) -> (J, D) gradient of Σ_n wy_n features_n(w) per unit (pricing by projected
    gradient ascent on the sphere).
    """
    W = rng.standard_normal((3000, D))
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    t = -np.inf
    for _ in range(rounds):
        c, t, lam = _lp(features(W), y)
        best = []
        for sgn in (1.0, -1.0):
            V = rng.standard_normal((starts, D))
            V /= np.linalg.norm(V, axis=1, keepdims=True)
            for _ in range(iters):
                g = sgn * rows(V, lam * y)
                V = V + 0.05 * g
                V /= np.linalg.norm(V, axis=1, keepdims=True)
            best.append(V)
        W = np.vstack([W] + best)
    return _lp(features(W), y)[1]


def _sym_problem(L):
    off = ~np.eye(L, dtype=bool)

    def act(W):
        H = W[:, :L, None] + W[:, None, L:]
        return np.maximum(H, 0.0), H

    def features(W):
        R, _ = act(W)
        As = np.einsum("jkk->j", R) / L
        Ad = (R * off).sum((1, 2)) / (L * (L - 1))
        return np.vstack([As, Ad])

    def rows(W, wy):  # gradient of Σ_n wy_n F_n(w)
        _, H = act(W)
        on = (H > 0).astype(float)
        gs = np.einsum("jkk->jk", on) / L
        od = on * off / (L * (L - 1))
        return wy[0] * np.hstack([gs, gs]) + wy[1] * np.hstack([od.sum(2), od.sum(1)])

    return features, rows, np.array([1.0, -1.0])


@pytest.mark.slow
@pytest.mark.parametrize("L", [3, 4, 5, 6, 8])
def test_dual_certificate_of_the_symmetric_lp(L):
    # LP duality for max t s.t. Σ c_j A_s(w_j) >= t, −Σ c_j A_d(w_j) >= t, Σ|c_j| = 1:
    # t* = min_λ max_{|w|=1} |λ_s A_s(w) − λ_d A_d(w)|. Complementary slackness with both units
    # of the closed form gives λ_d = t*/A_d⁻, λ_s = 1 − λ_d; the closed form is optimal iff no
    # unit beats t* for that λ. Multi-start ascent on the sphere must not find one, and must
    # find the closed-form units (value t*).
    sol = sd_symmetric_max_margin(L)
    lam_d = sol.margin / sol.A_d_minus
    lam = np.array([1.0 - lam_d, lam_d])
    features, rows, _ = _sym_problem(L)
    rng = np.random.default_rng(L)
    for sgn in (1.0, -1.0):
        V = rng.standard_normal((2000, 2 * L))
        V /= np.linalg.norm(V, axis=1, keepdims=True)
        for it in range(600):
            V = V + (0.05 if it < 400 else 0.005) * sgn * rows(V, lam * np.array([1.0, -1.0]))
            V /= np.linalg.norm(V, axis=1, keepdims=True)
        val = sgn * (lam[0] * features(V)[0] - lam[1] * features(V)[1])
        assert val.max() <= sol.margin * (1 + 1e-9)
        assert val.max() >= sol.margin * (1 - 1e-3)
    # the closed-form units attain it exactly
    F = features(np.vstack([sol.w_plus, sol.w_minus]))
    np.testing.assert_allclose(lam[0] * F[0] - lam[1] * F[1], [sol.margin, -sol.margin],
                               rtol=1e-12)


@pytest.mark.parametrize("L", [2, 3])
def test_closed_form_is_the_unsymmetrised_lp_optimum(L):
    X, y = _pairs(L)

    def features(W):
        return np.maximum(X @ W.T, 0.0)

    def rows(W, wy):
        return ((W @ X.T > 0) * wy[None, :]) @ X

    t_lp = _column_generation(features, rows, y, 2 * L, np.random.default_rng(10 + L))
    t = sd_symmetric_max_margin(L).margin
    assert t_lp <= t + 1e-9
    assert t_lp >= t * (1 - 1e-2)


@pytest.mark.parametrize("L", [2, 3, 4, 5, 6])
def test_every_training_pair_sits_on_the_margin(L):
    sol = sd_symmetric_max_margin(L)
    v_p, v_m = sol.w_plus[:L], sol.w_minus[:L]
    plus = {tuple(np.asarray(v_p)[list(p)]) for p in itertools.permutations(range(L))}
    minus = [np.asarray(v_m)[list(p)] for p in itertools.permutations(range(L))]
    plus = [np.array(v) for v in plus]
    X, y = _pairs(L)
    f = np.zeros(len(y))
    for v in plus:
        f += sol.c_plus / len(plus) * np.maximum(X @ np.r_[v, v], 0.0)
    for v in minus:
        f -= sol.c_minus / len(minus) * np.maximum(X @ np.r_[v, -v], 0.0)
    np.testing.assert_allclose(y * f, sol.margin, rtol=1e-12, atol=1e-14)
    assert math.isclose(np.linalg.norm(sol.w_plus), 1.0) and math.isclose(
        np.linalg.norm(sol.w_minus), 1.0)
    np.testing.assert_allclose(sol.w_minus[L:], -sol.w_minus[:L])
    assert math.isclose(sol.c_plus + sol.c_minus, 1.0)


def test_L2_accuracy_is_three_quarters():
    # L = 2: same pairs always correct; different pairs compare |u1−u2| with |w1−w2| for
    # i.i.d. u, w and c⁺ = c⁻, so P(correct) = 1/2 exactly: total 3/4 (Eq. 3's L = 2 value).
    sol = sd_symmetric_max_margin(2)
    assert math.isclose(sol.c_plus, 0.5) and math.isclose(sol.margin, 0.25)
    acc = sd_max_margin_accuracy(2, n_test=40000, seed=3)
    assert isinstance(acc, MaxMarginAccuracy)
    assert acc.same == 1.0
    assert abs(acc.different - 0.5) < 4 * acc.stderr_different
    assert abs(acc.accuracy - 0.75) < 4 * acc.stderr


def test_accuracy_is_deterministic_and_orbit_flag():
    a = sd_max_margin_accuracy(4, n_test=3000, seed=5)
    b = sd_max_margin_accuracy(4, n_test=3000, seed=5, chunk=700)
    assert a == b
    assert a.orbit_exact
    assert not sd_max_margin_accuracy(8, n_test=200, max_perms=100).orbit_exact


def test_bad_input():
    with pytest.raises(ValueError, match="n_symbols"):
        sd_symmetric_max_margin(1)
    with pytest.raises(TypeError, match="n_symbols"):
        sd_symmetric_max_margin(2.5)
    with pytest.raises(ValueError, match="n_test"):
        sd_max_margin_accuracy(3, n_test=0)
    with pytest.raises(ValueError, match="max_perms"):
        sd_max_margin_accuracy(3, max_perms=0)


def test_closed_form_carries_the_common_status_fields():
    from richlazy.theory._results import Status

    sol = sd_symmetric_max_margin(5)
    assert sol.converged and sol.status is Status.SUCCESS and sol.status == 0
    assert sol.nit == 0 and sol.residual == 0.0 and sol.message == "closed form"


def test_accuracy_seed_takes_a_generator():
    a = sd_max_margin_accuracy(4, n_test=2000, seed=np.random.default_rng(9))
    b = sd_max_margin_accuracy(4, n_test=2000, seed=9)
    assert a == b
