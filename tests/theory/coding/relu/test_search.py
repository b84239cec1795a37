"""The batched search for local maxima of the ReLU dual ratio (theory/coding/relu/_search.py)
against an exhaustive enumeration of the faces of the activation regions on small problems."""

import itertools

import numpy as np
import pytest
from richlazy.theory import relu_dual_margin, solve_relu_outliers
from richlazy.theory.coding.relu._search import _ascend, _batched_local_maxima, _ratio


def _problem(P, m, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((P + 3, P))
    K0 = X.T @ X / (P + 3)
    B = np.linalg.cholesky(K0)
    t = rng.standard_normal((P, m))
    return B, t, float(P)


def _face_maximum(B, t, Ps):
    """Global maximum of f(w) = |t^T relu(B w)|^2 / (Ps |w|^2) by enumerating every sign
    vector s in {+, -, 0}^P: the maximum lies in the relative interior of one face
    {z_K = 0, sign z = s elsewhere}, where f is a Rayleigh quotient whose top eigenvector is
    a candidate when it has the face's signs."""
    P, r = B.shape
    best = 0.0
    for signs in itertools.product((1, -1, 0), repeat=P):
        s = np.array(signs)
        face, pos = s == 0, s == 1
        if not pos.any():
            continue
        if face.any():
            _, sv, Vt = np.linalg.svd(B[face])
            Q = Vt[int(np.sum(sv > 1e-12 * sv[0])):].T
        else:
            Q = np.eye(r)
        if Q.shape[1] == 0:
            continue
        M = (B @ Q).T @ (pos[:, None] * t)
        _, U = np.linalg.eigh(M.T @ M)
        for sgn in (1.0, -1.0):
            w = Q @ (sgn * M @ U[:, -1])
            if np.linalg.norm(w) == 0:
                continue
            z = B @ w
            if np.all(np.sign(np.where(np.abs(z) <= 1e-10 * np.abs(z).max(), 0, z)) == s):
                best = max(best, float(_ratio(w[None, :], B, t, Ps)[0][0]))
    return best


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_search_finds_the_global_maximum_of_small_problems(seed):
    B, t, Ps = _problem(6, 2, seed)
    exact = _face_maximum(B, t, Ps)
    starts = np.random.default_rng(10 + seed).standard_normal((200, 6))
    found = _batched_local_maxima(starts, B, t, Ps)
    vals = np.array([v for v, _ in found])
    assert vals[0] == pytest.approx(exact, rel=1e-10)
    assert np.all(vals <= exact * (1 + 1e-10))
    assert np.all(np.diff(vals) <= 0)  # largest first
    for v, w in found:  # each value is f at its unit maximiser
        assert np.linalg.norm(w) == pytest.approx(1.0, rel=1e-12)
        assert _ratio(w[None, :], B, t, Ps)[0][0] == pytest.approx(v, rel=1e-12)
    W = np.array([w for _, w in found])
    dist = np.linalg.norm(W[:, None] - W[None], axis=-1) + np.eye(len(W))
    assert dist.min() > 1e-6  # distinct


def test_ascent_never_lowers_the_ratio_and_reaches_stationary_points():
    B, t, Ps = _problem(12, 3, 4)
    W0 = np.random.default_rng(5).standard_normal((300, 12))
    W, f = _ascend(W0, B, t, Ps)
    f0 = _ratio(W0, B, t, Ps)[0]
    assert np.all(f >= f0 - 1e-15)
    np.testing.assert_allclose(_ratio(W, B, t, Ps)[0], f, rtol=1e-12)
    # at a maximiser inside its region, f is the top eigenvalue of the region's Rayleigh
    # quotient: compare where no preactivation is near a kink
    Z = W @ B.T
    inner = np.min(np.abs(Z), axis=1) > 1e-3 * np.max(np.abs(Z), axis=1)
    assert inner.sum() > 10
    for w, fw in zip(W[inner], f[inner], strict=True):
        M = B.T @ ((B @ w > 0)[:, None] * t)
        assert fw == pytest.approx(np.linalg.eigvalsh(M.T @ M)[-1] / Ps, rel=1e-6)


def test_starts_with_zero_ratio_give_no_maximum():
    B, t, Ps = _problem(5, 1, 0)
    t = np.abs(t)
    W0 = -np.linalg.solve(B, np.ones((5, 2))).T  # z = -1 everywhere: relu(z) = 0
    assert _batched_local_maxima(W0, B, t, Ps) == []


# --- the public search: relu_dual_margin -------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1])
def test_public_margin_is_the_enumerated_global_maximum(seed):
    """relu_dual_margin on K0 = B B^T with its default starts equals the enumeration; its
    maximiser z is scaled to z^T K0^-1 z = 1 and attains the margin."""
    B, t, Ps = _problem(6, 2, seed)
    K0 = B @ B.T
    res = relu_dual_margin(K0, t, seed=3)
    assert res.converged and res.n_starts == res.nit >= 240
    assert res.margin == pytest.approx(_face_maximum(B, t, Ps), rel=1e-10)
    assert res.z @ np.linalg.solve(K0, res.z) == pytest.approx(1.0, rel=1e-10)
    v = t.T @ np.maximum(res.z, 0.0)
    assert v @ v / Ps == pytest.approx(res.margin, rel=1e-10)
    assert res.maxima[0] == res.margin and np.all(np.diff(res.maxima) <= 0)
    assert res.directions.shape == (len(res.maxima), 6)


def test_public_margin_on_a_singular_kernel_stays_in_its_range():
    """Rank-4 K0 at P = 7: the maximiser lies in the range of K0 and the margin is the
    enumeration over the range coordinates (the range factor of the eigendecomposition)."""
    rng = np.random.default_rng(8)
    X = rng.standard_normal((4, 7))
    K0 = X.T @ X / 4
    t = rng.standard_normal((7, 2))
    lam, V = np.linalg.eigh(K0)
    keep = lam > 1e-10 * lam[-1]
    Br = V[:, keep] * np.sqrt(lam[keep])
    res = relu_dual_margin(K0, t, sigma_a2=0.5)
    assert res.margin == pytest.approx(_face_maximum(Br, t, 2.0), rel=1e-10)
    null = V[:, ~keep]
    assert np.abs(null.T @ res.directions.T).max() < 1e-10 * np.abs(res.directions).max()
    assert res.z @ np.linalg.pinv(K0) @ res.z == pytest.approx(1.0, rel=1e-8)


def test_public_margin_certifies_the_toy_solution_and_explicit_starts():
    """On orthonormal inputs the solver's multiplier is dual feasible with margin exactly 1
    (the optimum's outliers attain it); explicit starts are searched as given."""
    P = 16
    Yc = np.array([[1.0, -0.5, -0.5], [-0.5, 1.0, -0.5], [-0.5, -0.5, 1.0]])
    lab = np.repeat(np.arange(3), [8, 4, 4])
    sol = solve_relu_outliers(np.eye(P), Yc[lab], seed=0)
    assert sol.converged, sol.message
    res = relu_dual_margin(np.eye(P), sol.t, n_starts=200, seed=1)
    assert res.margin == pytest.approx(1.0, abs=1e-8)
    one = relu_dual_margin(np.eye(P), sol.t, starts=sol.zbar[:1])
    assert one.n_starts == 1 and one.margin == pytest.approx(1.0, abs=1e-8)
    np.testing.assert_allclose(one.z, sol.zbar[0] / np.linalg.norm(sol.zbar[0]), atol=1e-6)


def test_public_margin_rejects_bad_input_by_name():
    K0, t = np.eye(4), np.ones((4, 2))
    with pytest.raises(ValueError, match="t must have P = 4 rows"):
        relu_dual_margin(K0, np.ones((3, 2)))
    with pytest.raises(ValueError, match="either starts or n_starts"):
        relu_dual_margin(K0, t, starts=np.ones((2, 4)), n_starts=3)
    with pytest.raises(ValueError, match="starts must be an"):
        relu_dual_margin(K0, t, starts=np.ones((2, 3)))
    with pytest.raises(ValueError, match="sigma_a2"):
        relu_dual_margin(K0, t, sigma_a2=-1.0)
    with pytest.raises(ValueError, match="n_starts"):
        relu_dual_margin(K0, t, n_starts=-1)
    with pytest.raises(ValueError, match="K0"):
        relu_dual_margin(-K0, t)
    res = relu_dual_margin(K0, np.zeros((4, 1)), n_starts=5)  # t = 0: t^T relu(z) = 0 for all z
    assert res.n_starts == 5 and res.margin == 0.0 and res.maxima.size == 0 and not np.any(res.z)
