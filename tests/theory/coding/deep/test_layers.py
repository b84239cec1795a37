"""Lower layers of deep sigmoid networks: layer 1 under a class-block conjugate kernel (exact
Hubbard-Stratonovich field integral) against closed forms, tensor quadrature and importance
sampling; the conjugate kernel below the feature layer; the self-consistent L = 2 network; the
middle layers (prior N(0, K_{l-1}) with a class-block kernel: the mode-wise field integral against
layer 1's exact grid and importance sampling) and the general-L solver (against the L = 2 solver,
and its map against the chain of the public pieces)."""

import dataclasses
import itertools
import math

import numpy as np
import pytest
from richlazy.theory import (
    SolverError,
    Status,
    conjugate_kernel,
    solve_sigmoid_deep,
    solve_sigmoid_first_layer,
    solve_sigmoid_general,
    solve_sigmoid_middle_layer,
    solve_sigmoid_two_layer,
    toy_class_targets,
)
from scipy import special


def _phi(z):
    return 0.5 * special.erfc(-0.5 * math.sqrt(math.pi) * z)


def _class_block(labels, diag, B):
    K = np.asarray(B, float)[np.ix_(labels, labels)]
    K[np.diag_indices(len(labels))] = np.asarray(diag, float)[labels]
    return K


def _irwin_hall_sf(x, n):
    """P(U_1 + ... + U_n > x) for independent uniforms on (0, 1)."""
    cdf = sum((-1) ** k * math.comb(n, k) * max(x - k, 0.0) ** n for k in range(n + 1)) / math.factorial(n)
    return 1.0 - cdf


def test_without_coupling_the_layer_is_uniform_activations_with_irwin_hall_codes():
    # sigma_w2 = 2/pi makes phi(z) = Phi(z sqrt(pi/2)) uniform on (0, 1); K~ = 0 leaves it untilted,
    # so <phi^2> = 1/3, <phi phi'> = 1/4, and a class with n inputs is active (mean > 0.6) with the
    # Irwin-Hall tail probability; classes are independent.
    labels = np.array([0, 0, 0, 1, 1, 1, 1, 1])
    s = solve_sigmoid_first_layer(np.zeros((8, 8)), labels, sigma_w2=2 / math.pi, threshold=0.6,
                                  n_nodes=161, n_bins=1024)
    assert s.converged and s.field_rank == 0
    np.testing.assert_allclose(s.K_diag, 1 / 3, atol=2e-6)
    np.testing.assert_allclose(s.K_block, 1 / 4, atol=2e-6)
    np.testing.assert_allclose(s.mean_activation, 0.5, atol=1e-9)
    p = [_irwin_hall_sf(0.6 * 3, 3), _irwin_hall_sf(0.6 * 5, 5)]
    want = [(p[0] if k & 1 else 1 - p[0]) * (p[1] if k & 2 else 1 - p[1]) for k in range(4)]
    np.testing.assert_allclose(s.code_fractions, want, atol=2e-3)  # binned phi: O(1/n_bins)


@pytest.mark.slow
def test_kernel_matches_tensor_gauss_hermite_quadrature_of_the_full_posterior():
    # P = 4 inputs in two classes: the single-neuron posterior N(z|0,I) exp(phi^T K~ phi / 2) is a
    # 4-D integral; a 36^4 tensor Gauss-Hermite rule gives its kernel to a few 1e-7 (28^4: 1e-6).
    labels = np.array([0, 0, 1, 1])
    Kt = _class_block(labels, [1.1, -0.4], [[0.8, 0.3], [0.3, 1.4]])
    s = solve_sigmoid_first_layer(Kt, labels, throw=True)
    x, w = np.polynomial.hermite_e.hermegauss(36)
    w = w / w.sum()
    Z = np.array(list(itertools.product(x, repeat=4)))
    W = np.prod(np.array(list(itertools.product(w, repeat=4))), axis=1)
    F = _phi(Z)
    W = W * np.exp(0.5 * np.einsum("ij,jk,ik->i", F, Kt, F))
    W /= W.sum()
    K_ref = np.einsum("i,ij,ik->jk", W, F, F)
    np.testing.assert_allclose(s.K, K_ref, atol=1e-6)
    np.testing.assert_allclose(s.mean_activation, [W @ F[:, :2].mean(1), W @ F[:, 2:].mean(1)], atol=1e-6)
    assert s.block_residual < 1e-14


def test_code_fractions_and_kernel_match_importance_sampling_in_three_classes():
    rng = np.random.default_rng(1)
    labels = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2])
    B = np.array([[0.9, 0.2, -0.1], [0.2, 0.5, 0.1], [-0.1, 0.1, 0.7]])
    Kt = _class_block(labels, [1.2, 0.3, 0.9], B)
    s = solve_sigmoid_first_layer(Kt, labels, throw=True)
    assert s.field_rank == 3 and s.edge_log_weight < -30
    F = _phi(rng.standard_normal((400_000, 9)))
    lw = 0.5 * np.einsum("ij,jk,ik->i", F, Kt, F)
    w = np.exp(lw - lw.max())
    w /= w.sum()

    def est(x):  # self-normalised importance estimate and its standard error
        mu = w @ x
        return mu, np.sqrt(np.sum(w ** 2 * (x - mu) ** 2))

    keys = sum((F[:, labels == c].mean(1) > 0.5).astype(int) << c for c in range(3))
    for k in range(8):
        mu, se = est((keys == k).astype(float))
        assert abs(s.code_fractions[k] - mu) < 5 * se + 2e-3, (k, s.code_fractions[k], mu, se)
    for i, j in [(0, 0), (0, 1), (0, 4), (3, 8), (5, 6)]:
        mu, se = est(F[:, i] * F[:, j])
        assert abs(s.K[i, j] - mu) < 5 * se, (i, j, s.K[i, j], mu, se)
    assert abs(s.code_fractions.sum() - 1) < 1e-10


def test_off_block_part_is_dropped_and_reported():
    labels = np.array([0, 0, 0, 1, 1, 1])
    Kt = _class_block(labels, [0.5, 0.5], [[0.6, 0.1], [0.1, 0.6]])
    noise = np.random.default_rng(0).normal(0, 0.05, (6, 6))
    s0 = solve_sigmoid_first_layer(Kt, labels)
    s1 = solve_sigmoid_first_layer(Kt + noise + noise.T, labels)
    assert s0.block_residual < 1e-14 and 0.01 < s1.block_residual < 0.5
    assert np.max(np.abs(s1.K - s0.K)) < 0.05


def test_indefinite_class_block_is_a_status_not_a_wrong_answer():
    labels = np.array([0, 0, 1, 1])
    Kt = _class_block(labels, [0.0, 0.0], [[0.5, 1.0], [1.0, 0.5]])  # eigenvalues 1.5, -0.5
    s = solve_sigmoid_first_layer(Kt, labels)
    assert not s.converged and s.status == Status.BAD_PROBLEM
    assert "negative eigenvalue" in s.message and np.all(np.isnan(s.K))
    with pytest.raises(SolverError, match="negative eigenvalue"):
        solve_sigmoid_first_layer(Kt, labels, throw=True)


@pytest.mark.parametrize("kwargs, match", [
    (dict(K_tilde=np.zeros((4, 3))), "K_tilde must be square"),
    (dict(K_tilde=np.triu(np.ones((4, 4)))), "K_tilde must be symmetric"),
    (dict(labels=np.array([0, 0, 1])), "labels must have one entry per row"),
    (dict(labels=np.array([0, 0, 0, 1])), "at least 2 inputs"),
    (dict(labels=np.array([0.0, 0.0, 1.0, 1.0])), "labels must be integers"),
    (dict(sigma_w2=-1.0), "sigma_w2"),
    (dict(threshold=1.5), "threshold must lie inside"),
    (dict(activation="relu"), "activation must be one of"),
    (dict(grid_step=2.0), "grid_step must be <= 1"),
])
def test_bad_input_names_the_argument(kwargs, match):
    args = dict(K_tilde=np.eye(4) * 0.1, labels=np.array([0, 0, 1, 1]))
    args.update(kwargs)
    with pytest.raises((ValueError, TypeError), match=match):
        solve_sigmoid_first_layer(args.pop("K_tilde"), args.pop("labels"), **args)


def test_too_many_classes_is_rejected():
    labels = np.repeat(np.arange(5), 2)
    with pytest.raises(ValueError, match="at most 4 classes"):
        solve_sigmoid_first_layer(np.zeros((10, 10)), labels)


@pytest.fixture(scope="module")
def toy_solution():
    labels = np.repeat([0, 1, 2], [6, 3, 3])
    Y = toy_class_targets(3, y_plus=1.0, y_minus=0.5)[labels]
    return solve_sigmoid_general(np.eye(12), Y, seed=0, throw=True)


def test_conjugate_kernel_without_fluctuations_is_the_code_second_moment(toy_solution):
    s = toy_solution
    C = np.einsum("g,gi,gj->ij", s.P_gamma, s.z_gamma, s.z_gamma)
    np.testing.assert_allclose(conjugate_kernel(s, fluctuations=False), C - np.eye(12), atol=1e-12)


def test_laplace_covariances_add_a_positive_semidefinite_part(toy_solution):
    s = toy_solution
    d = conjugate_kernel(s) - conjugate_kernel(s, fluctuations=False)
    lam = np.linalg.eigvalsh(d)
    assert lam[0] > -1e-12 and lam[-1] > 1e-3
    # on orthonormal inputs each code's Laplace covariance is diagonal: 1 / (1 - h phi''(z))
    expect = np.zeros(12)
    for P_g, z, a in zip(s.P_gamma, s.z_gamma, s.a_gamma, strict=True):
        d2 = -0.5 * math.pi * z * 0.5 * np.exp(-0.25 * math.pi * z * z)
        expect += P_g / (1.0 - (s.t @ a) * d2)
    np.testing.assert_allclose(d, np.diag(expect), atol=1e-12)


def test_conjugate_kernel_rejects_what_it_cannot_use(toy_solution):
    with pytest.raises(TypeError, match="solution must be a SigmoidGeneralSolution"):
        conjugate_kernel(np.eye(3))
    with pytest.raises(TypeError, match="fluctuations must be a bool"):
        conjugate_kernel(toy_solution, fluctuations="yes")


# ---- the self-consistent L = 2 network ------------------------------------------------------

_LABELS12 = np.repeat([0, 1, 2], [6, 3, 3])


def _block_start(labels, diag, within, between):
    """A class-block kernel: the rough magnitudes of a sampled K_1 in Fig. 5's configuration."""
    C = int(labels.max()) + 1
    B = np.full((C, C), between) + np.diag(np.full(C, within - between))
    return _class_block(labels, np.full(C, diag), B)


def _two_layer(labels, Y, K1_start, **kw):
    """The L = 2 network: solve_sigmoid_deep with one starting kernel (rtol of Fig. 5's runs)."""
    return solve_sigmoid_deep(labels, Y, K_start=[K1_start], **{"rtol": 1e-7, **kw})


@pytest.fixture(scope="module")
def two_layer():
    Y = toy_class_targets(3, y_plus=1.0, y_minus=0.5)[_LABELS12]
    return Y, _two_layer(_LABELS12, Y, _block_start(_LABELS12, 0.40, 0.33, 0.23), throw=True)


@pytest.mark.slow
def test_two_layer_solution_is_a_fixed_point_of_the_public_pieces(two_layer):
    Y, s = two_layer
    assert s.converged and s.residual < 1e-6 and s.map_gain > 1.0
    (K1,) = s.kernels
    feat = solve_sigmoid_general(K1, Y, seed=0, throw=True)
    first = solve_sigmoid_first_layer(conjugate_kernel(feat), _LABELS12, throw=True)
    np.testing.assert_allclose(first.K, K1, atol=1e-6)
    np.testing.assert_allclose(feat.P_gamma, s.feature.P_gamma, atol=1e-8)
    np.testing.assert_allclose(s.first_layer.code_fractions.sum(), 1.0, atol=1e-10)
    # the feature layer reproduces the targets (output constraint (S1) at T = 0)
    out = np.einsum("g,gp,gr->pr", feat.P_gamma, feat.mean_activations, feat.a_gamma)
    np.testing.assert_allclose(out, Y, atol=1e-8)


@pytest.mark.slow
def test_two_layer_fixed_point_does_not_depend_on_the_start_within_its_basin(two_layer):
    Y, s = two_layer
    s2 = _two_layer(_LABELS12, Y, _block_start(_LABELS12, 0.42, 0.36, 0.21), throw=True)
    np.testing.assert_allclose(s2.kernels[0], s.kernels[0], atol=1e-5)
    np.testing.assert_allclose(s2.first_layer.code_fractions, s.first_layer.code_fractions, atol=1e-5)


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(K1_start=np.eye(5)), ValueError, "K1_start must be a"),
    (dict(labels=_LABELS12[:-1]), ValueError, "labels must have one entry per row of Y"),
    (dict(seed=np.random.default_rng(0)), TypeError, "seed must be an int"),
    (dict(maxiter=0), ValueError, "maxiter"),
])
def test_two_layer_bad_input_names_the_argument(kwargs, exc, match):
    args = dict(labels=_LABELS12, Y=toy_class_targets(3, y_minus=0.5)[_LABELS12], K1_start=np.eye(12))
    args.update(kwargs)
    with pytest.raises(exc, match=match), pytest.warns(DeprecationWarning):
        solve_sigmoid_two_layer(args.pop("labels"), args.pop("Y"), **args)


@pytest.mark.slow
def test_two_layer_out_of_iterations_is_a_status_that_says_what_to_change():
    Y = toy_class_targets(3, y_plus=1.0, y_minus=0.5)[_LABELS12]
    start = _block_start(_LABELS12, 0.36, 0.30, 0.20)
    s = _two_layer(_LABELS12, Y, start, maxiter=1)
    assert not s.converged and s.status == Status.MAX_ITERATIONS
    assert "raise maxiter" in s.message and s.history.size == 2 and s.history[-1] > 1e-7
    with pytest.raises(SolverError, match="raise maxiter"):
        _two_layer(_LABELS12, Y, start, maxiter=1, throw=True)


def test_two_layer_rejects_a_start_that_is_not_a_kernel():
    Y = toy_class_targets(3, y_plus=1.0, y_minus=0.5)[_LABELS12]
    with pytest.raises(ValueError, match="K1_start must be positive definite"), \
            pytest.warns(DeprecationWarning):
        solve_sigmoid_two_layer(_LABELS12, Y, K1_start=_block_start(_LABELS12, 0.2, 0.3, 0.1))
    with pytest.raises(ValueError, match=r"K_start\[0\] must be positive definite"):
        _two_layer(_LABELS12, Y, _block_start(_LABELS12, 0.2, 0.3, 0.1))


def test_two_layer_map_rejects_trial_kernels_that_are_not_positive_definite():
    # a Newton trial step can leave the cone of kernels; the map returns NaN (so the step is
    # halved) instead of passing an indefinite K_1 to the feature-layer solver
    from richlazy.theory.coding.deep._multi_layer import _DeepMap

    Y = toy_class_targets(3, y_plus=1.0, y_minus=0.5)[_LABELS12]
    F = _DeepMap(_LABELS12, Y, 2, 1.0, 0, 6)
    x = F.params([_block_start(_LABELS12, 0.2, 0.3, 0.1)])  # within-class above the diagonal
    np.testing.assert_allclose(x[:3], 0.2, rtol=1e-14)  # L = 2: the class-block values themselves
    fx, feat, mids, first, kts, why = F(x)
    assert np.all(np.isnan(fx)) and feat is None and F.n_evals == 1 and "not positive definite" in why


# ---- middle layers and the general-L network ------------------------------------------------

_B_TILDE = np.array([[1.0, -0.3, -0.2], [-0.3, 1.2, -0.1], [-0.2, -0.1, 0.9]])


@pytest.mark.slow
def test_diagonal_prior_reproduces_the_exact_first_layer_grid_with_two_modes():
    # no class shift (K_prev = I): the middle layer is layer 1's problem; here the field has two
    # modes (weights about 0.9 / 0.1), which the partition of unity has to split correctly
    labels = np.repeat([0, 1, 2], 16)
    Kt = _class_block(labels, np.full(3, -0.5) + 0.8 * np.diag(_B_TILDE), 0.8 * _B_TILDE)
    ref = solve_sigmoid_first_layer(Kt, labels, grid_step=0.3, throw=True)
    s = solve_sigmoid_middle_layer(np.eye(labels.size), Kt, labels, throw=True)
    assert len(s.modes) == 2 and s.mode_weights.min() > 0.05
    np.testing.assert_allclose(s.mode_weights.sum(), 1.0, atol=1e-12)
    np.testing.assert_allclose(s.K, ref.K, atol=2e-4)
    np.testing.assert_allclose(s.mean_activation, ref.mean_activation, atol=2e-4)
    np.testing.assert_allclose(s.code_fractions, ref.code_fractions, atol=1e-3)
    # more nodes per dimension: the grid's answer to a few 1e-6
    s8 = solve_sigmoid_middle_layer(np.eye(labels.size), Kt, labels, quad_nodes=8, throw=True)
    np.testing.assert_allclose(s8.K, ref.K, atol=2e-5)


@pytest.mark.slow
def test_class_block_prior_matches_importance_sampling_of_the_full_posterior():
    # 6-D field (3 shifts, 3 HS fields), 14 inputs: self-normalised importance sampling of
    # N(z | 0, K_prev) exp(phi^T K~ phi / 2) gives <phi phi^T> and <z z^T>
    rng = np.random.default_rng(3)
    labels = np.repeat([0, 1, 2], [6, 4, 4])
    Kp = _class_block(labels, [0.5, 0.45, 0.48], [[0.3, 0.1, 0.05], [0.1, 0.25, 0.08], [0.05, 0.08, 0.28]])
    Kt = _class_block(labels, [-0.2, 0.3, 0.1] + 0.4 * np.diag(_B_TILDE), 0.4 * _B_TILDE)
    s = solve_sigmoid_middle_layer(Kp, Kt, labels, quad_nodes=7, throw=True)
    assert s.modes.shape[1] == 6
    Z = rng.standard_normal((600_000, labels.size)) @ np.linalg.cholesky(Kp).T
    F = _phi(Z)
    lw = 0.5 * np.einsum("ij,jk,ik->i", F, Kt, F)
    w = np.exp(lw - lw.max())
    w /= w.sum()

    def est(x):
        mu = w @ x
        return mu, np.sqrt(np.sum(w ** 2 * (x - mu) ** 2))

    for i, j in [(0, 0), (0, 1), (0, 7), (6, 7), (8, 13), (10, 11)]:
        mu, se = est(F[:, i] * F[:, j])
        assert abs(s.K[i, j] - mu) < 5 * se + s.quad_error, ("K", i, j, s.K[i, j], mu, se)
        mu, se = est(Z[:, i] * Z[:, j])
        tol = 5 * se + s.quad_error * np.abs(s.Czz).max()
        assert abs(s.Czz[i, j] - mu) < tol, ("Czz", i, j, s.Czz[i, j], mu, se)
    keys = sum((F[:, labels == c].mean(1) > 0.5).astype(int) << c for c in range(3))
    for k in range(8):
        mu, se = est((keys == k).astype(float))
        tol = 5 * se + s.code_quad_error + 2e-3
        assert abs(s.code_fractions[k] - mu) < tol, (k, s.code_fractions[k], mu, se)
    # (S3): the conjugate kernel of the layer below from <z z^T>
    Kinv = np.linalg.inv(Kp)
    np.testing.assert_allclose(s.K_tilde_below, Kinv @ (s.Czz - Kp) @ Kinv, atol=1e-10)


@pytest.mark.parametrize("activation", ["sigmoid_erf", "erf"])
def test_compiled_field_moments_match_adaptive_quadrature(activation):
    # the middle layer's per-point tilted averages (numba, Gauss-Hermite over eps) against
    # scipy's adaptive quad of the same integrals over z ~ N(xi, s^2)
    from richlazy.theory.coding.deep._field_kernels import tilted_field_moments
    from scipy import integrate

    phi = _phi if activation == "sigmoid_erf" else special.erf
    eps, w = np.polynomial.hermite_e.hermegauss(81)
    xi = np.array([-1.3, 0.0, 0.4, 2.1])
    u = np.array([3.0, -6.0, 0.7, -2.5])
    s, alpha = 0.35, -1.7
    out = tilted_field_moments(xi, u, s, alpha, eps, np.log(w / w.sum()), activation)
    for i in range(xi.size):
        def dens(z, f, i=i):
            return (f(z) * np.exp(-0.5 * ((z - xi[i]) / s) ** 2 + 0.5 * alpha * phi(z) ** 2 + u[i] * phi(z))
                    / (s * math.sqrt(2 * math.pi)))

        def integral(f, i=i):
            return integrate.quad(dens, xi[i] - 12 * s, xi[i] + 12 * s, args=(f,), epsabs=0, epsrel=1e-12)[0]

        chi = integral(lambda z: 1.0)
        def e(z, i=i):
            return (z - xi[i]) / s

        ref = [math.log(chi), integral(phi) / chi, integral(lambda z: phi(z) ** 2) / chi,
               integral(e) / chi, integral(lambda z: e(z) ** 2) / chi,
               integral(lambda z: e(z) * phi(z)) / chi]
        np.testing.assert_allclose(out[i], ref, rtol=1e-9, atol=1e-11)


def test_first_layer_without_codes_is_the_same_kernel():
    # the deep maps' light evaluation of layer 1 leaves out the class-mean distributions only
    from richlazy.theory.coding.deep._first_layer import _first_layer

    labels = np.repeat([0, 1, 2], [8, 5, 5])
    Kt = _class_block(labels, np.full(3, -0.3) + np.diag(_B_TILDE), _B_TILDE)
    full = solve_sigmoid_first_layer(Kt, labels, throw=True)
    light = _first_layer(Kt, labels, codes=False, throw=True)
    assert light.converged and np.all(np.isnan(light.code_fractions))
    assert "code fractions not computed" in light.message
    np.testing.assert_array_equal(light.K, full.K)
    np.testing.assert_array_equal(light.mean_activation, full.mean_activation)


def test_indefinite_tilt_block_is_a_status_and_bad_input_names_the_argument():
    labels = np.repeat([0, 1, 2], 4)
    Kt = _class_block(labels, [0.1, 0.1, 0.1], -0.2 * np.eye(3))
    s = solve_sigmoid_middle_layer(np.eye(12), Kt, labels)
    assert not s.converged and s.status == Status.BAD_PROBLEM and "negative eigenvalue" in s.message
    good = _class_block(labels, [0.2] * 3, 0.1 * np.eye(3))
    with pytest.raises(ValueError, match="K_prev must have per-class diagonals above"):
        solve_sigmoid_middle_layer(_class_block(labels, [0.2] * 3, np.full((3, 3), 0.3)), good, labels)
    with pytest.raises(ValueError, match="K_tilde must be"):
        solve_sigmoid_middle_layer(np.eye(12), good[:5, :5], labels)
    with pytest.raises(ValueError, match="quad_nodes"):
        solve_sigmoid_middle_layer(np.eye(12), good, labels, quad_nodes=2)
    with pytest.raises(ValueError, match="at most 3 classes"):
        solve_sigmoid_middle_layer(np.eye(12), good, np.repeat([0, 1, 2, 3], 3))


@pytest.mark.slow
def test_the_deprecated_two_layer_solver_is_the_deep_solver_at_two_layers():
    labels = np.repeat([0, 1, 2], [6, 3, 3])
    Y = toy_class_targets(3, y_plus=1.0, y_minus=0.5)[labels]
    K1 = _class_block(labels, [0.40] * 3, np.full((3, 3), 0.23) + 0.10 * np.eye(3))
    with pytest.warns(DeprecationWarning, match=r"solve_sigmoid_deep\(labels, Y, K_start=\[K1_start\]"):
        a = solve_sigmoid_two_layer(labels, Y, K1_start=K1, throw=True)
    b = solve_sigmoid_deep(labels, Y, K_start=[K1], rtol=1e-7, throw=True)
    assert b.L == 2 and b.middle_layers == () and a.converged and a.message == b.message
    # one implementation: the wrapper only renames the fields
    assert np.array_equal(a.K1, b.kernels[0]) and np.array_equal(a.K_tilde, b.K_tildes[0])
    assert np.array_equal(a.history, b.history) and a.map_gain == b.map_gain and a.nit == b.nit
    assert np.array_equal(a.first_layer.code_fractions, b.first_layer.code_fractions)
    assert np.array_equal(a.feature.P_gamma, b.feature.P_gamma)
    with pytest.raises(TypeError, match="K_start must be a sequence"):
        solve_sigmoid_deep(labels, Y, K_start=K1)
    with pytest.raises(ValueError, match=r"K_start\[1\] must be a \(P, P\)"):
        solve_sigmoid_deep(labels, Y, K_start=[K1, np.eye(3)])


@pytest.mark.slow
def test_size_path_reaches_the_same_fixed_point_and_checks_its_input():
    # continuation in the class sizes: P = 8 (classes 4 / 2 / 2) first, then P = 12 from its
    # fixed point; the fixed point at P = 12 is the one Newton finds from the start directly
    labels = np.repeat([0, 1, 2], [6, 3, 3])
    Y = toy_class_targets(3, y_plus=1.0, y_minus=0.5)[labels]
    K1 = _class_block(labels, [0.40] * 3, np.full((3, 3), 0.23) + 0.10 * np.eye(3))
    direct = solve_sigmoid_deep(labels, Y, K_start=[K1], rtol=1e-7, throw=True)
    seen = []
    path = solve_sigmoid_deep(labels, Y, K_start=[K1], rtol=1e-7, size_path=[8], progress=seen.append,
                              throw=True)
    np.testing.assert_allclose(path.kernels[0], direct.kernels[0], atol=1e-6)
    assert "size path: P = 8:" in path.message and "no fixed point" not in path.message
    assert any("class sizes [4, 2, 2]" in line for line in seen)
    with pytest.raises(ValueError, match="size_path must be increasing sizes below P = 12"):
        solve_sigmoid_deep(labels, Y, K_start=[K1], size_path=[8, 6])
    with pytest.raises(ValueError, match="size_path must be increasing sizes below P = 12"):
        solve_sigmoid_deep(labels, Y, K_start=[K1], size_path=[12])
    with pytest.raises(TypeError, match="size_path must be a sequence of ints"):
        solve_sigmoid_deep(labels, Y, K_start=[K1], size_path=[7.5])
    Y_bad = Y.copy()
    Y_bad[1, 0] += 0.1
    with pytest.raises(ValueError, match="size_path needs targets Y that are the same"):
        solve_sigmoid_deep(labels, Y_bad, K_start=[K1], size_path=[8])


@pytest.mark.slow
def test_three_layer_map_is_the_chain_of_the_public_pieces():
    # one pass of the L = 3 map: feature layer on K_2, its K~_2, the middle layer (prior K_1, tilt
    # K~_2) giving K_2' and K~_1, layer 1 under K~_1 giving K_1'; the light evaluation used inside
    # Newton (one quadrature rule) agrees with the full one
    from richlazy.theory.coding.deep._multi_layer import _DeepMap

    labels = np.repeat([0, 1, 2], [6, 3, 3])
    Y = toy_class_targets(3, y_plus=1.0, y_minus=-0.5)[labels]
    K1 = _class_block(labels, [0.38, 0.36, 0.36], np.full((3, 3), 0.22) + 0.085 * np.eye(3))
    K2 = _class_block(labels, [0.41, 0.43, 0.43], np.full((3, 3), 0.22) + 0.18 * np.eye(3))
    F = _DeepMap(labels, Y, 3, 1.0, 0, 6)
    x = F.params([K1, K2])
    np.testing.assert_allclose(F.kernels(x)[1], K2, atol=1e-14)
    fx_full, feat, mids, first, kts, why = F(x, full=True)
    fx_light = F(x)[0]
    assert why == "" and len(mids) == 1 and mids[0].converged
    np.testing.assert_allclose(fx_light, fx_full, atol=1e-12)
    f_ref = solve_sigmoid_general(K2, Y, seed=0, throw=True)
    # the feature layer agrees to rounding (6e-12 with numpy 2.4) and the map's K_1 (through its
    # parameters) to about 1e-16; the middle layer's mode search can take another path from
    # inputs that differ at that level (its K then differs within its quadrature error, 2e-5,
    # seen with numpy 2.4.6), so the chain continues from the map's own inputs
    np.testing.assert_allclose(conjugate_kernel(feat), conjugate_kernel(f_ref), atol=1e-10)
    K1x = F.kernels(x)[0]
    np.testing.assert_allclose(K1x, K1, atol=1e-14)
    m_ref = solve_sigmoid_middle_layer(K1x, conjugate_kernel(feat), labels, seed=0, throw=True)
    l_ref = solve_sigmoid_first_layer(m_ref.K_tilde_below, labels, throw=True)
    K1n, K2n = F.kernels(fx_full)
    np.testing.assert_allclose(K2n, m_ref.K, atol=1e-12)
    np.testing.assert_allclose(K1n, l_ref.K, atol=1e-12)
    np.testing.assert_allclose(kts[0], m_ref.K_tilde_below, atol=1e-12)
    np.testing.assert_allclose(first.code_fractions, l_ref.code_fractions, atol=1e-12)


def test_shared_newton_loop_solves_a_stiff_map_and_reports_a_map_without_fixed_point():
    from richlazy.theory.coding.deep._fixed_point import _newton_fixed_point

    class Map:  # F(x) = x - r(x) with a stiff, nonlinear residual whose root is (1, 1)
        def __init__(self, r):
            self.r, self.n_evals = r, 0

        def __call__(self, x):
            self.n_evals += 1
            return x + self.r(x), "ok"

    stiff = Map(lambda x: np.array([x[0] - 1.0, 300.0 * (x[1] - x[0] ** 2)]))
    run = _newton_fixed_point(stiff, np.array([-1.2, 1.0]), rtol=1e-10, maxiter=40, fd_step=1e-7,
                              report=lambda *a, **k: None, start_name="x0", failure=lambda e: e[0])
    assert run.status == Status.SUCCESS and run.gain > 100
    np.testing.assert_allclose(run.x, [1.0, 1.0], atol=1e-9)
    # |x - 3| + 1 > 0 has no root: a fresh Newton direction and every damped step fail
    none = Map(lambda x: np.abs(x - 3.0) + 1.0)
    run = _newton_fixed_point(none, np.array([0.0]), rtol=1e-10, maxiter=10, fd_step=1e-6,
                              report=lambda *a, **k: None, start_name="x0", failure=lambda e: e[0])
    assert run.status == Status.NUMERICAL_FAILURE
    assert "Levenberg-Marquardt" in run.why and "try another x0" in run.why


def test_deep_map_turns_a_layer_solver_exception_into_a_failed_trial_point(monkeypatch):
    # far from the start a layer solver may raise (e.g. an SVD that does not converge inside
    # the feature layer's continuation); the map returns NaN so that Newton halves its step
    from richlazy.theory.coding.deep import _multi_layer as _deep_multi_layer

    labels = np.repeat([0, 1, 2], [4, 2, 2])
    Y = toy_class_targets(3, y_plus=1.0, y_minus=-0.5)[labels]

    def boom(*a, **k):
        raise np.linalg.LinAlgError("SVD did not converge")

    monkeypatch.setattr(_deep_multi_layer, "solve_sigmoid_general", boom)
    F = _deep_multi_layer._DeepMap(labels, Y, 3, 1.0, 0, 4)
    K = _class_block(labels, [0.4] * 3, np.full((3, 3), 0.2) + 0.1 * np.eye(3))
    fx, feat, mids, first, kts, why = F(F.params([K, K]))
    assert np.all(np.isnan(fx)) and feat is None and "LinAlgError" in why
    s = solve_sigmoid_deep(labels, Y, K_start=[K, K], maxiter=3)
    assert s.status == Status.NUMERICAL_FAILURE and "LinAlgError" in s.message


@pytest.mark.slow
def test_feature_layer_started_from_a_nearby_solution_is_the_same_solution():
    # solve_sigmoid_general(start=...) continues from a solution at another kernel instead of from
    # the orthonormal toy: same root of the exact system (t, weights, readouts), shorter path
    labels = np.repeat([0, 1, 2], [5, 4, 4])
    Y = toy_class_targets(3, y_plus=1.0, y_minus=-0.5)[labels]
    B = np.array([[0.30, 0.22, 0.21], [0.22, 0.31, 0.22], [0.21, 0.22, 0.31]])
    d = np.array([0.38, 0.36, 0.36])
    near = solve_sigmoid_general(_class_block(labels, d, B), Y, seed=0, throw=True)
    K = _class_block(labels, 1.01 * d, 1.005 * B)
    cold = solve_sigmoid_general(K, Y, seed=0, throw=True)
    warm = solve_sigmoid_general(K, Y, seed=0, start=near, throw=True)
    assert warm.message.startswith("continuation from the start solution")
    assert cold.message.startswith("continuation from the orthonormal toy")
    np.testing.assert_allclose(warm.t, cold.t, atol=1e-8)
    np.testing.assert_allclose(warm.P_gamma, cold.P_gamma, atol=1e-8)
    np.testing.assert_allclose(warm.a_gamma, cold.a_gamma, atol=1e-8)
    assert abs(warm.duality_gap) < 1e-6 * (1 + abs(warm.f_bounds[1]))
    # from far away (the identity kernel's solution) the path is longer but ends at the same root
    far = solve_sigmoid_general(np.eye(labels.size), Y, seed=0, throw=True)
    again = solve_sigmoid_general(K, Y, seed=0, start=far, throw=True)
    np.testing.assert_allclose(again.a_gamma, cold.a_gamma, atol=1e-8)
    # a start whose codes flow into one maximum gives one code, not several: code 0 split in two
    # nearby copies (found in coding/deep-sigmoid-3, where a far Newton trial kernel had 52 tied
    # maxima and the next solves kept them all as separate codes)
    split = dataclasses.replace(
        near, z_gamma=np.vstack([near.z_gamma, near.z_gamma[:1] + 1e-3]),
        P_gamma=np.concatenate([near.P_gamma[:1] / 2, near.P_gamma[1:], near.P_gamma[:1] / 2]))
    merged = solve_sigmoid_general(K, Y, seed=0, start=split, throw=True)
    assert merged.z_gamma.shape[0] == cold.z_gamma.shape[0] == 6
    np.testing.assert_allclose(merged.P_gamma, cold.P_gamma, atol=1e-8)

    # what start must be
    with pytest.raises(TypeError, match="start must be a SigmoidGeneralSolution"):
        solve_sigmoid_general(K, Y, start=near.t)
    with pytest.raises(ValueError, match="start must solve the same targets Y"):
        solve_sigmoid_general(K, Y[:, [1, 0, 2]], start=near)
    with pytest.raises(ValueError, match="start is used by strategy 'auto' or 'continuation'"):
        solve_sigmoid_general(K, Y, start=near, strategy="bundle")
    with pytest.raises(ValueError, match="start must be a converged solution"):
        failed = dataclasses.replace(near, converged=False, status=Status.NUMERICAL_FAILURE)
        solve_sigmoid_general(K, Y, start=failed)
