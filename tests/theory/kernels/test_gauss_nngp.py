"""Tests for richlazy.theory.kernels._gauss and richlazy.theory.kernels._nngp.

Every closed form is checked three ways: against an mpmath 2-D quadrature at 20 digits,
against the package's own Gauss–Hermite fallback, and against Monte Carlo with a seeded
numpy Generator (tolerance 5 standard errors). The NTK is checked against the empirical NTK
of a finite, wide two-layer network whose gradients are computed explicitly in numpy (and
those gradients against finite differences).
"""

from __future__ import annotations

import math
from functools import lru_cache

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from richlazy.theory.kernels import _gauss, _nngp

SMOOTH = ("linear", "sigmoid_erf", "erf")

# --------------------------------------------------------------------------------------------
# mpmath references (20 digits)
# --------------------------------------------------------------------------------------------

DPS = 20
R = 10  # |x| cut-off of the standard normal: npdf(10) ~ 8e-23, far below double precision


def _mp_phi(name):
    return {
        "linear": lambda z: z,
        "erf": mp.erf,
        "sigmoid_erf": lambda z: mp.erfc(-mp.sqrt(mp.pi) * z / 2) / 2,
        "relu": lambda z: z if z > 0 else mp.mpf(0),
    }[name]


def _mp_phi_prime(name):
    return {
        "linear": lambda z: mp.mpf(1),
        "erf": lambda z: 2 / mp.sqrt(mp.pi) * mp.exp(-z * z),
        "sigmoid_erf": lambda z: mp.exp(-mp.pi * z * z / 4) / 2,
        "relu": lambda z: mp.mpf(1) if z > 0 else mp.mpf(0),
    }[name]


def _clip(t):
    return min(max(t, -R), R)


def mp_pair(f, g, c11, c12, c22, m1=0.0, m2=0.0, *, kinked):
    """E[f(u) g(v)] by mpmath 2-D quadrature; (x, y) are the Cholesky coordinates,
    u = m1 + l11 x, v = m2 + l21 x + l22 y.

    * smooth f, g: tensor-product Gauss–Legendre over (x, y) in [-R, R]²;
    * kinked (ReLU or its step), zero means: polar coordinates (r, α) of (x, y); both kinks are
      rays through the origin, so the α-range is cut at them and every cell is smooth;
    * kinked with means: coordinates (x, v), in which both kinks (x = −m1/l11, v = 0) are
      axis-parallel cut lines.
    * l22 = 0 (exactly degenerate): a 1-D integral over x with both kinks as cut points.
    """
    with mp.workdps(DPS):
        c11, c12, c22, m1, m2 = (mp.mpf(float(t)) for t in (c11, c12, c22, m1, m2))
        l11 = mp.sqrt(c11)
        l21 = c12 / l11
        l22 = mp.sqrt(max(c22 - l21 * l21, 0))
        A = lru_cache(None)(lambda x: mp.npdf(x) * f(m1 + l11 * x))
        xs = sorted({-R, _clip(-m1 / l11), R}) if kinked else [-R, R]
        if l22 == 0:
            if kinked and l21 != 0:
                xs = sorted(set(xs) | {_clip(-m2 / l21)})
            return mp.quad(lambda x: A(x) * g(m2 + l21 * x), xs)
        if not kinked:
            B = lru_cache(None)(mp.npdf)
            return mp.quad(
                lambda x, y: A(x) * B(y) * g(m2 + l21 * x + l22 * y),
                [-R, 0, R],
                [-R, 0, R],
                method="gauss-legendre",
            )
        if m1 == 0 and m2 == 0:
            a_star = mp.atan2(-l21, l22)  # direction where v = 0
            cuts = {-mp.pi, -mp.pi / 2, mp.pi / 2, mp.pi}
            cuts |= {a for a in (a_star - mp.pi, a_star, a_star + mp.pi) if -mp.pi < a < mp.pi}
            rad = lru_cache(None)(lambda r: r * mp.exp(-r * r / 2) / (2 * mp.pi))
            return mp.quad(
                lambda a, r: rad(r)
                * f(l11 * r * mp.cos(a))
                * g(r * (l21 * mp.cos(a) + l22 * mp.sin(a))),
                sorted(cuts),
                [0, R],
                method="gauss-legendre",
            )
        G = lru_cache(None)(g)
        V = abs(m2) + (abs(l21) + l22) * R
        return mp.quad(
            lambda x, v: A(x) * mp.npdf((v - m2 - l21 * x) / l22) / l22 * G(v),
            xs,
            [-V, 0, V],
            method="gauss-legendre",
        )


def mp_mean(f, m, v, *, kinked):
    with mp.workdps(DPS):
        m, s = mp.mpf(float(m)), mp.sqrt(mp.mpf(float(v)))
        pts = sorted({-R, _clip(-m / s), R}) if (kinked and s > 0) else [-R, R]
        return mp.quad(lambda x: mp.npdf(x) * f(m + s * x), pts)


COVS = [
    (1.0, 0.3, 2.0),  # generic
    (1.0, 0.999, 1.0),  # near-degenerate, rho = 0.999
    (0.7, -0.7 * 1.3 * (1 - 1e-6), 1.69),  # near anti-degenerate
    (2.0, -2.0, 2.0),  # exactly degenerate, rho = -1
]


# --------------------------------------------------------------------------------------------
# closed forms vs mpmath
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("act", _gauss.ACTIVATIONS)
@pytest.mark.parametrize("cov", COVS[:2] + COVS[3:], ids=["generic", "rho.999", "rho-1"])
def test_nngp_expectation_vs_mpmath(act, cov):
    f = _mp_phi(act)
    ref = float(mp_pair(f, f, *cov, kinked=act == "relu"))
    got = _nngp.nngp_expectation(*cov, act)
    # a handful of float64 operations; arcsin/arccos conditioning is mild at these points
    assert abs(got - ref) <= 1e-13 * max(1.0, abs(ref))


def test_relu_nngp_near_antidegenerate_vs_mpmath():
    f = _mp_phi("relu")
    cov = COVS[2]
    ref = float(mp_pair(f, f, *cov, kinked=True))
    # E ~ (π − θ)³ tiny here; compare absolutely at the float64 level of the inputs
    assert abs(_nngp.nngp_expectation(*cov, "relu") - ref) <= 1e-15
    assert ref > 0


@pytest.mark.slow
@pytest.mark.parametrize("act", ("sigmoid_erf", "erf", "relu"))
def test_derivative_expectation_vs_mpmath(act):
    fp = _mp_phi_prime(act)
    # the smooth references cost seconds each: one covariance per smooth activation
    covs = {"relu": COVS[:3], "erf": [COVS[0]], "sigmoid_erf": [COVS[1]]}[act]
    for cov in covs:
        ref = float(mp_pair(fp, fp, *cov, kinked=act == "relu"))
        got = _nngp.derivative_expectation(*cov, act)
        assert abs(got - ref) <= 1e-12 * max(1.0, abs(ref))


@pytest.mark.parametrize("act", _gauss.ACTIVATIONS)
def test_mean_activation_vs_mpmath(act):
    f = _mp_phi(act)
    for m, v in [(0.0, 1.0), (0.7, 0.3), (-1.2, 2.5), (2.0, 0.0), (-0.4, 0.0), (-3.0, 0.5)]:
        if v == 0.0:
            ref = float(f(mp.mpf(m)))
        else:
            ref = float(mp_mean(f, m, v, kinked=act == "relu"))
        assert abs(_nngp.mean_activation(m, v, act) - ref) <= 1e-13 * max(1.0, abs(ref))


def test_zero_variance_nngp():
    """u = 0 a.s.: E[φ(u)φ(v)] = φ(0) E[φ(v)] (mpmath 1-D reference for E[φ(v)])."""
    for act in _gauss.ACTIVATIONS:
        f = _mp_phi(act)
        ev = float(mp_mean(f, 0.0, 1.5, kinked=act == "relu"))
        expected = float(f(mp.mpf(0))) * ev
        assert abs(_nngp.nngp_expectation(0.0, 0.0, 1.5, act) - expected) <= 1e-15
        assert abs(_nngp.nngp_expectation(1.5, 0.0, 0.0, act) - expected) <= 1e-15


# --------------------------------------------------------------------------------------------
# Price's theorem: ∂/∂c12 E[φ(u)φ(v)] = E[φ'(u)φ'(v)]
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("act", _gauss.ACTIVATIONS)
def test_price_theorem(act):
    c11, c22 = 1.3, 0.8
    c12 = np.array([-0.7, -0.2, 0.0, 0.4, 0.9])
    h = 1e-5
    fd = (_nngp.nngp_expectation(c11, c12 + h, c22, act) - _nngp.nngp_expectation(c11, c12 - h, c22, act)) / (
        2 * h
    )
    # central difference: truncation O(h²)·|E'''| + rounding 1e-16/h, both < 1e-8 here
    np.testing.assert_allclose(fd, _nngp.derivative_expectation(c11, c12, c22, act), atol=1e-8)


# --------------------------------------------------------------------------------------------
# Gauss–Hermite
# --------------------------------------------------------------------------------------------


def test_gauss_hermite_nodes_moments():
    x, w = _gauss.gauss_hermite_nodes(10)
    assert _gauss.gauss_hermite_nodes(10)[0] is x  # cached
    assert not x.flags.writeable and not w.flags.writeable
    for k in range(10):  # exact up to degree 2n − 1 = 19
        exact = 0.0 if k % 2 else float(math.prod(range(1, k, 2)))  # (k − 1)!!
        assert abs(float(w @ x**k) - exact) <= 1e-12 * max(1.0, exact)
    # degree 20 is not integrated exactly by the 10-point rule
    assert abs(float(w @ x**20) - math.prod(range(1, 20, 2))) > 1.0


@pytest.mark.parametrize("act", SMOOTH)
def test_gaussian_expectation_vs_closed_form(act):
    m = np.array([[-1.0], [0.0], [0.5]])
    v = np.array([0.0, 0.4, 1.7])
    gh = _gauss.gaussian_expectation(act, m, v)
    assert gh.shape == (3, 3)
    np.testing.assert_allclose(gh, _nngp.mean_activation(m, v, act), rtol=0, atol=1e-13)
    # a callable takes the same path; results must agree with the named one
    f = lambda z: _gauss.phi(z, act)  # noqa: E731
    np.testing.assert_allclose(_gauss.gaussian_expectation(f, m, v), gh, rtol=0, atol=1e-15)
    np.testing.assert_allclose(_nngp.mean_activation(m, v, f), gh, rtol=0, atol=1e-15)


@pytest.mark.parametrize("act", _gauss.ACTIVATIONS)
def test_pair_closed_vs_quadrature_vs_monte_carlo(act):
    rng = np.random.default_rng(12345)
    n = 400_000
    for c11, c12, c22 in COVS[:3]:
        cf = _nngp.nngp_expectation(c11, c12, c22, act)
        gh = _gauss.gaussian_pair_expectation(act, act, c11, c12, c22, n_nodes=96)
        assert abs(gh - cf) <= 1e-10 * max(1.0, abs(cf))
        if act != "relu":  # pure 2-D tensor rule on callables (kink-free integrands only)
            f = lambda z, a=act: _gauss.phi(z, a)  # noqa: E731
            gh2 = _nngp.nngp_expectation(c11, c12, c22, f, n_nodes=64)
            assert abs(gh2 - cf) <= 1e-10 * max(1.0, abs(cf))
        cov = np.array([[c11, c12], [c12, c22]])
        uv = rng.multivariate_normal(np.zeros(2), cov, size=n, method="eigh")
        t = _gauss.phi(uv[:, 0], act) * _gauss.phi(uv[:, 1], act)
        se = t.std(ddof=1) / np.sqrt(n)
        assert abs(t.mean() - cf) <= 5 * se + 1e-15
        td = _gauss.phi_prime(uv[:, 0], act) * _gauss.phi_prime(uv[:, 1], act)
        sed = td.std(ddof=1) / np.sqrt(n)
        assert abs(td.mean() - _nngp.derivative_expectation(c11, c12, c22, act)) <= 5 * sed + 1e-15


@pytest.mark.parametrize(
    "f,g", [("sigmoid_erf", "sigmoid_erf"), ("relu", "relu"), ("erf", "relu")]
)
def test_pair_with_means_vs_mpmath(f, g):
    """Non-zero means (conditional test kernels): quadrature vs mpmath."""
    c11, c12, c22, m1, m2 = 0.9, 0.5, 1.4, 0.6, -0.8
    kinked = "relu" in (f, g)
    ref = float(mp_pair(_mp_phi(f), _mp_phi(g), c11, c12, c22, m1, m2, kinked=kinked))
    got = _gauss.gaussian_pair_expectation(f, g, c11, c12, c22, m1=m1, m2=m2, n_nodes=96)
    assert abs(got - ref) <= 1e-11 * max(1.0, abs(ref))
    # swapping the roles of (f, c11, m1) and (g, c22, m2) gives the same number
    swapped = _gauss.gaussian_pair_expectation(g, f, c22, c12, c11, m1=m2, m2=m1, n_nodes=96)
    assert abs(swapped - ref) <= 1e-11 * max(1.0, abs(ref))


def test_pair_with_means_callables_vs_monte_carlo_and_builtin():
    rng = np.random.default_rng(7)
    c11, c12, c22 = np.array([0.5, 1.0]), np.array([0.2, -0.9]), np.array([1.0, 1.0])
    m1, m2 = np.array([0.3, -0.5]), np.array([1.0, 0.1])
    sq = lambda z: z * z  # noqa: E731  (callable, exercises the 2-D tensor rule)
    got = _gauss.gaussian_pair_expectation("sigmoid_erf", sq, c11, c12, c22, m1=m1, m2=m2)
    both_callable = _gauss.gaussian_pair_expectation(
        lambda z: _gauss.phi(z, "sigmoid_erf"), sq, c11, c12, c22, m1=m1, m2=m2
    )
    np.testing.assert_allclose(got, both_callable, rtol=1e-12)
    n = 400_000
    for k in range(2):
        cov = np.array([[c11[k], c12[k]], [c12[k], c22[k]]])
        uv = rng.multivariate_normal([m1[k], m2[k]], cov, size=n, method="eigh")
        t = _gauss.phi(uv[:, 0], "sigmoid_erf") * uv[:, 1] ** 2
        assert abs(t.mean() - got[k]) <= 5 * t.std(ddof=1) / np.sqrt(n)


def test_pair_degenerate_and_zero_variance():
    # c12 = +sqrt(c11 c22): v = sqrt(c22/c11) u exactly
    for act in _gauss.ACTIVATIONS:
        got = _gauss.gaussian_pair_expectation(act, act, 1.0, 2.0, 4.0, n_nodes=96)
        ref = _gauss.gaussian_pair_expectation(
            lambda z, a=act: _gauss.phi(z, a) * _gauss.phi(2.0 * z, a),
            "linear",
            1.0,
            0.0,
            0.0,
            m2=1.0,
            n_nodes=96,
        )
        assert abs(got - ref) <= 1e-12 * max(1.0, abs(ref))
        # zero variances: E = f(m1) g(m2)
        z = _gauss.gaussian_pair_expectation(act, act, 0.0, 0.0, 0.0, m1=0.4, m2=-0.3)
        assert z == pytest.approx(_gauss.phi(0.4, act) * _gauss.phi(-0.3, act), abs=1e-15)


# --------------------------------------------------------------------------------------------
# kernels
# --------------------------------------------------------------------------------------------


def _random_psd(rng, p, n):
    X = rng.normal(size=(p, n))
    return X @ X.T / n


def test_broadcasting_matches_loop():
    rng = np.random.default_rng(0)
    c11 = rng.uniform(0.1, 2.0, size=(3, 1))
    c22 = rng.uniform(0.1, 2.0, size=(1, 4))
    c12 = np.sqrt(c11 * c22) * rng.uniform(-1, 1, size=(3, 4))
    for act in _gauss.ACTIVATIONS:
        out = _nngp.nngp_expectation(c11, c12, c22, act)
        assert out.shape == (3, 4)
        loop = [[_nngp.nngp_expectation(c11[i, 0], c12[i, j], c22[0, j], act) for j in range(4)]
                for i in range(3)]
        np.testing.assert_array_equal(out, np.array(loop))
        assert np.ndim(_nngp.nngp_expectation(1.0, 0.5, 1.0, act)) == 0
        assert _nngp.derivative_expectation(c11, c12, c22, act).shape == (3, 4)
        assert _gauss.gaussian_pair_expectation(act, act, c11, c12, c22, m1=np.zeros(4)).shape == (3, 4)


@settings(max_examples=30, deadline=None)
@given(
    p=st.integers(1, 7),
    n=st.integers(1, 6),
    scale=st.floats(1e-3, 1e2),
    seed=st.integers(0, 2**31 - 1),
    act=st.sampled_from(_gauss.ACTIVATIONS),
    sw=st.floats(0.1, 3.0),
)
def test_nngp_kernel_symmetric_psd(p, n, scale, seed, act, sw):
    K = scale * _random_psd(np.random.default_rng(seed), p, n)
    K = 0.5 * (K + K.T)
    out = _nngp.nngp_kernel(K, act, sigma_w2=sw)
    assert out.shape == (p, p)
    np.testing.assert_array_equal(out, out.T)
    lam = np.linalg.eigvalsh(out)
    assert lam.min() >= -1e-10 * max(1.0, np.abs(out).max())
    if act == "linear":
        np.testing.assert_allclose(out, sw * K, rtol=1e-15, atol=0)


def test_nngp_kernel_matches_elementwise_and_cross():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(9, 20))
    K = X @ X.T / 20
    d = np.diag(K)
    for act in _gauss.ACTIVATIONS:
        full = _nngp.nngp_kernel(K, act, sigma_w2=1.7)
        np.testing.assert_allclose(
            full, _nngp.nngp_expectation(1.7 * d[:, None], 1.7 * K, 1.7 * d[None, :], act), rtol=1e-15
        )
        cross = _nngp.nngp_cross_kernel(d[:5], K[:5, 5:], d[5:], act, sigma_w2=1.7)
        np.testing.assert_array_equal(cross, full[:5, 5:])


def test_deep_kernels_compose_and_cross_consistent():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(8, 30))
    K0 = X @ X.T / 30
    d = np.diag(K0)
    sig = [1.5, 0.8, 2.0]
    for act in _gauss.ACTIVATIONS:
        layers = _nngp.deep_nngp_kernel(K0, act, 3, sigma_w2=sig)
        assert len(layers) == 3
        K = K0
        for s, Kl in zip(sig, layers, strict=True):
            K = _nngp.nngp_kernel(K, act, sigma_w2=s)
            np.testing.assert_array_equal(Kl, K)
        cross = _nngp.deep_nngp_cross_kernel(d[:3], K0[:3, 3:], d[3:], act, 3, sigma_w2=sig)
        for (da, Kab, db), Kl in zip(cross, layers, strict=True):
            np.testing.assert_allclose(Kab, Kl[:3, 3:], rtol=1e-14, atol=1e-15)
            np.testing.assert_allclose(da, np.diag(Kl)[:3], rtol=1e-14)
            np.testing.assert_allclose(db, np.diag(Kl)[3:], rtol=1e-14)
    lin = _nngp.deep_nngp_kernel(K0, "linear", 3, sigma_w2=sig)[-1]
    np.testing.assert_allclose(lin, np.prod(sig) * K0, rtol=1e-14)


def test_deep_relu_kernel_vs_monte_carlo_network():
    """Two-layer deep NNGP of ReLU vs an ensemble of finite random networks (N = 4000)."""
    rng = np.random.default_rng(11)
    d, N, reps = 10, 1000, 30
    X = rng.normal(size=(3, d))
    K0 = X @ X.T / d
    K2 = _nngp.deep_nngp_kernel(K0, "relu", 2, sigma_w2=2.0)[-1]
    ests = []
    for _ in range(reps):
        W1 = rng.normal(scale=np.sqrt(2.0), size=(N, d))
        h1 = np.maximum(W1 @ X.T / np.sqrt(d), 0.0)
        W2 = rng.normal(scale=np.sqrt(2.0), size=(N, N))
        h2 = np.maximum(W2 @ h1 / np.sqrt(N), 0.0)
        ests.append(h2.T @ h2 / N)
    ests = np.array(ests)
    mean, se = ests.mean(0), ests.std(0, ddof=1) / np.sqrt(reps)
    # finite-width bias is O(1/N) ~ 1e-3 relative; allow it on top of the 5-SE band
    assert np.all(np.abs(mean - K2) <= 5 * se + 1e-3 * np.abs(K2))


def test_callable_activation_kernel():
    rng = np.random.default_rng(5)
    K = _random_psd(rng, 6, 10)
    out = _nngp.nngp_kernel(K, np.tanh)
    np.testing.assert_array_equal(out, out.T)
    # tanh via the GH fallback vs Monte Carlo on one entry
    n = 400_000
    uv = rng.multivariate_normal(np.zeros(2), K[:2, :2], size=n, method="eigh")
    t = np.tanh(uv[:, 0]) * np.tanh(uv[:, 1])
    assert abs(t.mean() - out[0, 1]) <= 5 * t.std(ddof=1) / np.sqrt(n)
    # a callable equal to a built-in reproduces the closed form; the 2-D Gauss–Hermite error
    # for erf grows with the variance (measured: 2e-8 at variance 2 and 64 nodes, < 1e-14 at
    # 128 nodes), so use 128 nodes here where the diagonal is <= 2
    K = K / max(1.0, np.max(np.diag(K)) / 2.0)
    f = lambda z: _gauss.phi(z, "erf")  # noqa: E731
    np.testing.assert_allclose(
        _nngp.nngp_kernel(K, f, n_nodes=128), _nngp.nngp_kernel(K, "erf"), rtol=0, atol=1e-13
    )


# --------------------------------------------------------------------------------------------
# NTK
# --------------------------------------------------------------------------------------------


def _net_grads(a, W, x, act):
    """Gradients of f(x) = (1/√N) Σ a_i φ(w_i·x/√d) wrt a (N,) and W (N, d)."""
    N, d = W.shape
    u = W @ x / np.sqrt(d)
    ga = _gauss.phi(u, act) / np.sqrt(N)
    gW = (a * _gauss.phi_prime(u, act))[:, None] * x[None, :] / np.sqrt(N * d)
    return ga, gW


def _net(a, W, x, act):
    N, d = W.shape
    return float(a @ _gauss.phi(W @ x / np.sqrt(d), act) / np.sqrt(N))


def test_network_gradients_vs_finite_differences():
    rng = np.random.default_rng(8)
    N, d = 7, 5
    a, W, x = rng.normal(size=N), rng.normal(size=(N, d)), rng.normal(size=d)
    h = 1e-6
    for act in _gauss.ACTIVATIONS:
        ga, gW = _net_grads(a, W, x, act)
        for i in range(N):
            e = np.zeros(N)
            e[i] = h
            fd = (_net(a + e, W, x, act) - _net(a - e, W, x, act)) / (2 * h)
            assert fd == pytest.approx(ga[i], abs=1e-8)
            for j in range(d):
                E = np.zeros((N, d))
                E[i, j] = h
                fd = (_net(a, W + E, x, act) - _net(a, W - E, x, act)) / (2 * h)
                assert fd == pytest.approx(gW[i, j], abs=1e-8)


@pytest.mark.parametrize("act", ("relu", "erf", "sigmoid_erf"))
def test_two_layer_ntk_vs_empirical(act):
    """Θ_emp = ∇f(x)·∇f(x') of one wide network; per-unit terms are i.i.d., so the
    standard error is their std/√N and the check is |Θ_emp − Θ| <= 5 SE."""
    rng = np.random.default_rng(2024)
    N, d = 50_000, 20
    sw, sa = 1.8, 0.6
    a = rng.normal(scale=np.sqrt(sa), size=N)
    W = rng.normal(scale=np.sqrt(sw), size=(N, d))
    xs = [rng.normal(size=d) * s for s in (1.0, 0.7, 1.4)]
    xs.append(-xs[0])
    pairs = [(0, 0), (0, 1), (1, 2), (0, 3), (2, 2)]
    for i, j in pairs:
        x, y = xs[i], xs[j]
        ga, gW = _net_grads(a, W, x, act)
        ha, hW = _net_grads(a, W, y, act)
        per_unit = N * (ga * ha + np.sum(gW * hW, axis=1))
        emp, se = per_unit.mean(), per_unit.std(ddof=1) / np.sqrt(N)
        assert emp == pytest.approx(float(ga @ ha + np.sum(gW * hW)), rel=1e-12)
        theory = _nngp.two_layer_ntk(x @ x / d, x @ y / d, y @ y / d, act, sigma_w2=sw, sigma_a2=sa)
        assert abs(emp - theory) <= 5 * se + 1e-15, (act, i, j, emp, theory, se)


def test_relu_ntk_unit_sphere_relation():
    rho = np.linspace(-1.0, 1.0, 101)
    K = _nngp.relu_ntk_unit_sphere(rho)
    # same formula, different operation order: a few ulps of the O(1) terms, which partly
    # cancel for ρ < 0 (K is negative there, min ≈ −0.068)
    np.testing.assert_allclose(_nngp.relu_ntk(1.0, rho, 1.0), K, rtol=1e-15, atol=5e-16)
    # positive homogeneity: Θ = s √(c11 c22) K(ρ) when σ_w² = σ_a² = s
    # (√(c11 c22) = 0.75 exactly, so c12 = ±0.75 stays exactly degenerate at ρ = ±1, where
    # the arc-cosine is infinitely sensitive to a rounding of c12)
    c11, c22, s = 2.25, 0.25, 1.7
    np.testing.assert_allclose(
        _nngp.relu_ntk(c11, rho * np.sqrt(c11 * c22), c22, sigma_w2=s, sigma_a2=s),
        s * np.sqrt(c11 * c22) * K,
        rtol=1e-14,
        atol=1e-16,
    )
    # K(−1) = 0, K(0) = 1/(2π), K(1) = 1 (the formula of seed 003 App. D at its end points)
    np.testing.assert_allclose(
        _nngp.relu_ntk_unit_sphere([-1.0, 0.0, 1.0]), [0.0, 1 / (2 * np.pi), 1.0], atol=1e-16
    )
    # readout part alone is the NNGP arc-cosine kernel
    np.testing.assert_allclose(
        _nngp.relu_ntk(1.0, rho, 1.0, sigma_a2=0.0), _nngp.nngp_expectation(1.0, rho, 1.0, "relu"), atol=0
    )


def test_ntk_unit_sphere_vs_mpmath():
    """K(ρ) = E[relu(u)relu(v)] + ρ P(u > 0, v > 0) with unit variances, by mpmath."""
    f, fp = _mp_phi("relu"), _mp_phi_prime("relu")
    for r in (-0.6, 0.25, 0.95):
        ref = mp_pair(f, f, 1.0, r, 1.0, kinked=True) + r * mp_pair(fp, fp, 1.0, r, 1.0, kinked=True)
        assert abs(_nngp.relu_ntk_unit_sphere(r) - float(ref)) <= 1e-14


# --------------------------------------------------------------------------------------------
# activations
# --------------------------------------------------------------------------------------------


def test_phi_values_and_derivatives():
    z = np.linspace(-3, 3, 13)
    np.testing.assert_allclose(_gauss.phi(z, "sigmoid_erf") + _gauss.phi(-z, "sigmoid_erf"), 1.0, rtol=1e-15)
    assert _gauss.phi(0.0, "sigmoid_erf") == 0.5
    assert _gauss.phi_prime(0.0, "sigmoid_erf") == 0.5
    np.testing.assert_array_equal(_gauss.phi(z, "relu"), np.maximum(z, 0))
    assert _gauss.phi_prime(0.0, "relu") == 0.0
    h = 1e-6
    for act in SMOOTH:
        fd = (_gauss.phi(z + h, act) - _gauss.phi(z - h, act)) / (2 * h)
        np.testing.assert_allclose(fd, _gauss.phi_prime(z, act), atol=1e-9)
    np.testing.assert_array_equal(_gauss.phi(z, np.sin), np.sin(z))
    # lower tail of the sigmoid is accurate (no 1 − 1 cancellation)
    assert _gauss.phi(-30.0, "sigmoid_erf") == pytest.approx(float(mp.erfc(30 * mp.sqrt(mp.pi) / 2) / 2))


# --------------------------------------------------------------------------------------------
# validation messages
# --------------------------------------------------------------------------------------------


def test_activation_validation():
    with pytest.raises(ValueError, match=r"activation='tanh' is not a built-in activation; "
                       r"valid names are linear, sigmoid_erf, erf, relu"):
        _nngp.nngp_expectation(1.0, 0.0, 1.0, "tanh")
    with pytest.raises(TypeError, match=r"activation must be a built-in name \(str\) or a "
                       r"vectorised callable; got an object of type int"):
        _nngp.nngp_expectation(1.0, 0.0, 1.0, 3)
    with pytest.raises(TypeError, match=r"activation must be one of the built-in names .*"
                       r"a callable .* is not supported here"):
        _gauss.phi_prime(0.0, np.tanh)
    with pytest.raises(TypeError, match=r"activation must be a str; got an object of type float"):
        _nngp.derivative_expectation(1.0, 0.0, 1.0, 1.5)
    with pytest.raises(TypeError, match=r"activation must be one of the built-in names"):
        _nngp.two_layer_ntk(1.0, 0.0, 1.0, np.tanh)
    with pytest.raises(ValueError, match=r"f='soft' is not a built-in activation"):
        _gauss.gaussian_pair_expectation("soft", "relu", 1.0, 0.0, 1.0)
    with pytest.raises(TypeError, match=r"g must be a built-in name"):
        _gauss.gaussian_pair_expectation("relu", None, 1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match=r"f must be vectorised .* returned shape \(\)"):
        _gauss.gaussian_expectation(lambda z: 1.0, 0.0, 1.0)


def test_covariance_validation():
    with pytest.raises(ValueError, match=r"c11 is a variance and must be >= 0; got c11=-0.1"):
        _nngp.nngp_expectation(-0.1, 0.0, 1.0, "erf")
    with pytest.raises(ValueError, match=r"c22 is a variance and must be >= 0; got c22=-2.0"):
        _nngp.derivative_expectation(1.0, 0.0, -2.0, "relu")
    with pytest.raises(ValueError, match=r"c12 must satisfy \|c12\| <= sqrt\(c11\*c22\) .* "
                       r"got c12=1.5 with sqrt\(c11\*c22\)=1.0 at index \(1,\)"):
        _nngp.nngp_expectation(1.0, [0.5, 1.5], 1.0, "relu")
    # within the 1e-10 relative slack is accepted
    _nngp.nngp_expectation(1.0, 1.0 + 1e-12, 1.0, "relu")
    with pytest.raises(ValueError, match=r"the shapes of c11, c12, c22 must be broadcastable; "
                       r"got c11\(2,\), c12\(3,\), c22\(\)"):
        _nngp.nngp_expectation([1.0, 1.0], [0.0, 0.0, 0.0], 1.0, "erf")
    with pytest.raises(ValueError, match=r"c12 must be finite"):
        _nngp.nngp_expectation(1.0, np.nan, 1.0, "erf")
    with pytest.raises(TypeError, match=r"c11 must be a real number or an array of real numbers"):
        _nngp.nngp_expectation("a", 0.0, 1.0, "erf")
    with pytest.raises(ValueError, match=r"m1 must be finite"):
        _gauss.gaussian_pair_expectation("erf", "erf", 1.0, 0.0, 1.0, m1=np.inf)
    with pytest.raises(ValueError, match=r"shapes of c11, c12, c22, m1, m2 must be broadcastable"):
        _gauss.gaussian_pair_expectation("erf", "erf", 1.0, 0.0, 1.0, m1=[0, 1], m2=[0, 1, 2])
    with pytest.raises(ValueError, match=r"var is a variance and must be >= 0; got var=-1.0"):
        _nngp.mean_activation(0.0, -1.0, "relu")
    with pytest.raises(ValueError, match=r"var is a variance and must be >= 0"):
        _gauss.gaussian_expectation("relu", 0.0, -1.0)
    with pytest.raises(ValueError, match=r"mean must be finite"):
        _nngp.mean_activation(np.inf, 1.0, "relu")
    with pytest.raises(ValueError, match=r"shapes of mean, var must be broadcastable"):
        _nngp.mean_activation([0.0, 1.0], [1.0, 1.0, 1.0], "erf")
    with pytest.raises(ValueError, match=r"z must be finite"):
        _gauss.phi(np.nan, "relu")


def test_quadrature_option_validation():
    with pytest.raises(TypeError, match=r"n_nodes must be an integer; got 3.5"):
        _gauss.gaussian_expectation("erf", 0.0, 1.0, n_nodes=3.5)
    with pytest.raises(ValueError, match=r"n_nodes must be between 1 and 512; got 0"):
        _gauss.gauss_hermite_nodes(0)
    with pytest.raises(ValueError, match=r"n_nodes must be between 1 and 512; got 1000"):
        _nngp.nngp_kernel(np.eye(2), np.tanh, n_nodes=1000)


def test_kernel_matrix_validation():
    with pytest.raises(ValueError, match=r"K must be a square 2-D matrix; got shape \(2, 3\)"):
        _nngp.nngp_kernel(np.ones((2, 3)), "relu")
    with pytest.raises(ValueError, match=r"K must be symmetric; got max\|K - K.T\| = 0.5"):
        _nngp.nngp_kernel(np.array([[1.0, 0.5], [0.0, 1.0]]), "relu")
    with pytest.raises(ValueError, match=r"K must have a non-negative diagonal; got min -1.0"):
        _nngp.nngp_kernel(np.array([[-1.0, 0.0], [0.0, 1.0]]), "relu")
    with pytest.raises(ValueError, match=r"K is not a valid covariance: \|K\[0,1\]\| = 2.0 "
                       r"exceeds sqrt\(K_ii K_jj\) = 1.0"):
        _nngp.nngp_kernel(np.array([[1.0, 2.0], [2.0, 1.0]]), "relu")
    with pytest.raises(ValueError, match=r"sigma_w2 is a weight variance and must be finite and "
                       r">= 0; got -1.0"):
        _nngp.nngp_kernel(np.eye(2), "relu", sigma_w2=-1.0)
    with pytest.raises(TypeError, match=r"sigma_w2 must be a real number; got '1'"):
        _nngp.nngp_kernel(np.eye(2), "relu", sigma_w2="1")
    with pytest.raises(ValueError, match=r"sigma_a2 is a weight variance"):
        _nngp.relu_ntk(1.0, 0.0, 1.0, sigma_a2=-0.5)
    with pytest.raises(ValueError, match=r"K0 must be symmetric"):
        _nngp.deep_nngp_kernel(np.array([[1.0, 0.5], [0.0, 1.0]]), "erf", 2)


def test_cross_and_deep_validation():
    d = np.ones(2)
    with pytest.raises(ValueError, match=r"k_diag_a and k_diag_b must be 1-D; got shapes "
                       r"\(2, 1\) and \(2,\)"):
        _nngp.nngp_cross_kernel(d[:, None], np.zeros((2, 2)), d, "erf")
    with pytest.raises(ValueError, match=r"K_ab must have shape \(len\(k_diag_a\), "
                       r"len\(k_diag_b\)\) = \(2, 3\); got \(3, 2\)"):
        _nngp.nngp_cross_kernel(d, np.zeros((3, 2)), np.ones(3), "erf")
    with pytest.raises(ValueError, match=r"k_diag_b is a variance and must be >= 0"):
        _nngp.nngp_cross_kernel(d, np.zeros((2, 2)), -d, "erf")
    with pytest.raises(ValueError, match=r"K_ab is not a valid covariance: \|K_ab\[1,0\]\|"):
        _nngp.nngp_cross_kernel(d, np.array([[0.0, 0.0], [3.0, 0.0]]), d, "erf")
    with pytest.raises(ValueError, match=r"K0_ab must have shape"):
        _nngp.deep_nngp_cross_kernel(d, np.zeros((2, 1)), d, "erf", 2)
    with pytest.raises(ValueError, match=r"depth must be an integer >= 1; got 0"):
        _nngp.deep_nngp_kernel(np.eye(2), "erf", 0)
    with pytest.raises(ValueError, match=r"depth must be an integer >= 1; got 1.5"):
        _nngp.deep_nngp_kernel(np.eye(2), "erf", 1.5)
    with pytest.raises(ValueError, match=r"sigma_w2 must be a number or a sequence of length "
                       r"depth=3; got length 2"):
        _nngp.deep_nngp_kernel(np.eye(2), "erf", 3, sigma_w2=[1.0, 2.0])
    with pytest.raises(ValueError, match=r"rho is a cosine and must satisfy \|rho\| <= 1; "
                       r"got rho=1.5"):
        _nngp.relu_ntk_unit_sphere([0.0, 1.5])
