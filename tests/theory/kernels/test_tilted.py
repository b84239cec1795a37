"""Tilted Gaussian integrals psi(h) = log E exp(h phi(z)) (seed 000; notes §4.3, §5.2):
numba kernels vs mpmath, vs scipy quad, derivative identities, densities, validation."""

import math

import mpmath as mp
import numpy as np
import pytest
from richlazy.theory.kernels._tilted import (
    saddle_moments,
    tilted_density,
    tilted_moments,
    tilted_moments_quad,
)
from scipy import integrate, optimize


def _mp_reference(h, activation, dps=30):
    """psi, psi', psi'' by mpmath quadrature at high precision."""
    mp.mp.dps = dps
    h = mp.mpf(h)
    if activation == "sigmoid_erf":
        def phi(z):
            return (1 + mp.erf(mp.sqrt(mp.pi) * z / 2)) / 2
    elif activation == "erf":
        phi = mp.erf
    else:
        def phi(z):
            return max(z, 0)

    pts = [-mp.inf, -3, 0, 3, mp.inf]

    def mom(k):
        return mp.quad(lambda z: mp.npdf(z) * phi(z) ** k * mp.e ** (h * phi(z)), pts)

    Z = mom(0)
    m1 = mom(1) / Z
    m2 = mom(2) / Z
    return float(mp.log(Z)), float(m1), float(m2 - m1**2)


@pytest.mark.parametrize("activation", ["sigmoid_erf", "erf"])
@pytest.mark.parametrize("h", [-100.0, -20.0, -1.3, 0.0, 0.4, 7.0, 45.0])
def test_bounded_activations_match_mpmath(activation, h):
    ref = _mp_reference(h, activation)
    got = tilted_moments(h, activation=activation)
    for g, r in zip(got, ref, strict=True):
        assert abs(g - r) <= 1e-12 * max(1.0, abs(r)) + 1e-15
    # relative accuracy of the (small) variance at large |h|
    assert abs(got[2] - ref[2]) <= 1e-11 * ref[2]


@pytest.mark.parametrize("h", [-300.0, -40.0, -10.000001, -9.999999, -2.0, 0.0, 1.5, 12.0, 35.0])
def test_relu_closed_form_matches_mpmath(h):
    """psi_R(h) = log[1/2 + e^{h^2/2} Phi_N(h)] (notes §5.2), including both branches of the
    stable evaluation (recurrence / asymptotic series at x = -h = 10)."""
    ref = _mp_reference(h, "relu", dps=40)
    got = tilted_moments(h, activation="relu")
    assert abs(got[0] - ref[0]) <= 1e-13 * max(1.0, abs(ref[0]))
    assert abs(got[1] - ref[1]) <= 1e-12 * abs(ref[1])
    assert abs(got[2] - ref[2]) <= 1e-10 * abs(ref[2])


def test_relu_matches_printed_formula():
    """M(h) = e^{h^2/2}(h Phi + phi_N)/(1/2 + e^{h^2/2} Phi), the formula of the notes §5.2."""
    h = np.linspace(-4, 4, 17)
    Phi = 0.5 * (1 + np.vectorize(math.erf)(h / math.sqrt(2)))
    pdf = np.exp(-h * h / 2) / math.sqrt(2 * math.pi)
    E = np.exp(h * h / 2)
    psi, M, _ = tilted_moments(h, activation="relu")
    np.testing.assert_allclose(psi, np.log(0.5 + E * Phi), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(M, E * (h * Phi + pdf) / (0.5 + E * Phi), rtol=1e-12)


@pytest.mark.parametrize("activation", ["sigmoid_erf", "relu", "linear"])
def test_kernel_matches_quad_reference_on_grid(activation):
    h = np.linspace(-25, 25, 11)
    a = np.array(tilted_moments(h, activation=activation))
    b = np.array(tilted_moments_quad(h, activation=activation))
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_linear_is_gaussian():
    h = np.array([-3.0, 0.5, 2.0])
    psi, d1, d2 = tilted_moments(h, activation="linear")
    np.testing.assert_allclose(psi, h * h / 2)
    np.testing.assert_allclose(d1, h)
    np.testing.assert_allclose(d2, 1.0)
    z = np.linspace(-4, 6, 9)
    np.testing.assert_allclose(tilted_density(z, 2.0, activation="linear"),
                               np.exp(-(z - 2) ** 2 / 2) / math.sqrt(2 * math.pi), rtol=1e-13)


@pytest.mark.parametrize("activation", ["sigmoid_erf", "erf", "relu"])
def test_derivatives_are_finite_differences_of_psi(activation):
    """psi' and psi'' vs 4th-order central differences of psi (and of psi')."""
    h = np.array([-6.0, -0.7, 0.3, 2.5, 9.0])
    e = 1e-3

    def fd(f, x):
        return (-f(x + 2 * e) + 8 * f(x + e) - 8 * f(x - e) + f(x - 2 * e)) / (12 * e)

    psi = lambda x: tilted_moments(x, activation=activation)[0]  # noqa: E731
    d1 = lambda x: tilted_moments(x, activation=activation)[1]  # noqa: E731
    _, g1, g2 = tilted_moments(h, activation=activation)
    np.testing.assert_allclose(fd(psi, h), g1, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(fd(d1, h), g2, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("activation", ["sigmoid_erf", "relu"])
@pytest.mark.parametrize("h", [-8.0, 0.0, 3.0])
def test_density_normalised_with_mean_and_variance(activation, h):
    phi = (lambda z: 0.5 * math.erfc(-math.sqrt(math.pi) * z / 2)) if activation == "sigmoid_erf" \
        else (lambda z: max(z, 0.0))
    dens = lambda z: float(tilted_density(z, h, activation=activation))  # noqa: E731
    pts = [0.0, h]
    norm = integrate.quad(dens, -30, 30, points=pts, epsabs=1e-13, limit=200)[0]
    mean = integrate.quad(lambda z: phi(z) * dens(z), -30, 30, points=pts, epsabs=1e-13,
                          limit=200)[0]
    sec = integrate.quad(lambda z: phi(z) ** 2 * dens(z), -30, 30, points=pts, epsabs=1e-13,
                         limit=200)[0]
    _, m1, var = tilted_moments(h, activation=activation)
    assert abs(norm - 1) < 1e-10
    assert abs(mean - m1) < 1e-10
    assert abs(sec - mean**2 - var) < 1e-9


@pytest.mark.parametrize("activation", ["sigmoid_erf", "erf"])
def test_saddle_moments(activation):
    """psi_0(h) = max_z [-z^2/2 + h phi(z)]: the maximiser, the envelope derivative and the
    second derivative, against a bounded scalar maximisation and finite differences."""
    h = np.array([-30.0, -2.0, 0.0, 0.8, 11.0])
    psi0, d1, d2, zs = saddle_moments(h, activation=activation)
    phi = (lambda z: 0.5 * math.erfc(-math.sqrt(math.pi) * z / 2)) if activation == "sigmoid_erf" \
        else math.erf
    for i, hi in enumerate(h):
        res = optimize.minimize_scalar(lambda z, hi=hi: 0.5 * z * z - hi * phi(z),
                                       bounds=(-5, 5), method="bounded",
                                       options={"xatol": 1e-12})
        assert abs(zs[i] - res.x) < 1e-6
        assert abs(psi0[i] + res.fun) < 1e-11
    e = 1e-4
    p_up = saddle_moments(h + e, activation=activation)
    p_dn = saddle_moments(h - e, activation=activation)
    np.testing.assert_allclose((p_up[0] - p_dn[0]) / (2 * e), d1, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose((p_up[1] - p_dn[1]) / (2 * e), d2, rtol=1e-6, atol=1e-9)


def test_saddle_relu_and_linear():
    h = np.array([-2.0, 0.0, 1.5])
    p, d1, d2, z = saddle_moments(h, activation="relu")
    np.testing.assert_allclose(z, [0.0, 0.0, 1.5])
    np.testing.assert_allclose(p, [0.0, 0.0, 1.125])
    np.testing.assert_allclose(d1, [0.0, 0.0, 1.5])
    p, d1, d2, z = saddle_moments(h, activation="linear")
    np.testing.assert_allclose(p, h * h / 2)


def test_vectorised_equals_looped_and_shapes():
    h = np.linspace(-5, 5, 12).reshape(3, 4)
    vec = tilted_moments(h)
    assert all(v.shape == (3, 4) for v in vec)
    for i in range(3):
        for j in range(4):
            sc = tilted_moments(h[i, j])
            assert np.ndim(sc[0]) == 0
            for k in range(3):
                assert vec[k][i, j] == sc[k]


def test_validation_messages():
    with pytest.raises(ValueError, match="activation must be one of sigmoid_erf, erf, relu"):
        tilted_moments(1.0, activation="tanh")
    with pytest.raises(TypeError, match="activation must be a str"):
        tilted_moments(1.0, activation=np.tanh)
    with pytest.raises(ValueError, match="h must contain only finite values"):
        tilted_moments([1.0, np.nan])
    with pytest.raises(TypeError, match="h must be a real numeric array"):
        tilted_moments({"a": 1})
    with pytest.raises(ValueError, match="n_nodes must be between 1 and 512"):
        tilted_moments(1.0, n_nodes=0)
    with pytest.raises(TypeError, match="n_nodes must be an integer"):
        tilted_moments(1.0, n_nodes=2.5)
    with pytest.raises(ValueError, match="z and h must be broadcastable"):
        tilted_density(np.zeros(3), np.zeros(2))
    with pytest.raises(ValueError, match="z must contain only finite values"):
        tilted_density([np.inf], 0.0)
    with pytest.raises(ValueError, match="activation must be one of"):
        saddle_moments(1.0, activation="softplus")
    with pytest.raises(ValueError, match="activation must be one of"):
        tilted_moments_quad(1.0, activation="x")
