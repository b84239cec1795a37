"""Bad inputs to theory functions get a ValueError/TypeError naming the public argument
(issue 12): indefinite kernels, inconsistent input kernels, complex arrays, unparsable table
strings, maxiter/rtol out of range; numpy scalars are accepted as numbers."""

import numpy as np
import pytest
import sympy as sp
from richlazy.theory import (
    input_kernel,
    nngp_posterior,
    parse_table_expression,
    rkhs_norm,
    solve_linear_network,
    solve_nngp,
)
from richlazy.theory.checks import as_psd_matrix


def _problem(P=6, N0=10, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N0, P))
    Y = np.where(np.arange(P)[:, None] % 2 == np.arange(2)[None, :], 1.0, -1.0)
    return X, Y


# ------------------------------------------------------------------------- PSD kernels


def test_rkhs_norm_rejects_indefinite_kernel_with_its_smallest_eigenvalue():
    K = np.array([[1.0, 2.0], [2.0, 1.0]])  # eigenvalues 3 and -1; used to return a number
    with pytest.raises(ValueError, match=r"K must be positive semi-definite.*smallest eigenvalue is -1"):
        rkhs_norm(K, np.array([1.0, 1.0]))
    with pytest.raises(ValueError, match="K must be symmetric"):
        rkhs_norm(np.array([[1.0, 0.5], [0.0, 1.0]]), np.ones(2))
    with pytest.raises(ValueError, match="K must be square"):
        rkhs_norm(np.ones((2, 3)), np.ones(2))


def test_rkhs_norm_still_accepts_round_off_and_singular_kernels():
    X, _ = _problem(P=8, N0=3)
    K = input_kernel(X)  # rank 3: zero eigenvalues up to round-off
    f = K @ np.ones(8)
    assert np.isfinite(rkhs_norm(K, f)) and rkhs_norm(K, f) > 0
    assert rkhs_norm(np.eye(3), np.array([1.0, 2.0, 2.0])) == pytest.approx(9.0)


def test_as_psd_matrix_messages():
    with pytest.raises(ValueError, match=r"G must be positive semi-definite.*smallest eigenvalue is -2"):
        as_psd_matrix("G", -2.0 * np.eye(3))
    with pytest.raises(TypeError, match="G must be real"):
        as_psd_matrix("G", np.eye(2) * (1 + 1j))
    with pytest.raises(ValueError, match="G must contain only finite"):
        as_psd_matrix("G", np.full((2, 2), np.nan))
    np.testing.assert_array_equal(as_psd_matrix("G", np.zeros((2, 2))), np.zeros((2, 2)))


# ------------------------------------------------------------------------- solve_linear_network


def test_linear_network_rejects_complex_K0_and_Y():
    X, Y = _problem()
    K0 = input_kernel(X)
    with pytest.raises(TypeError, match="K0 must be real, got a complex array"):
        solve_linear_network(K0.astype(complex), Y)
    with pytest.raises(TypeError, match="Y must be real"):
        solve_linear_network(K0, Y + 0j)


@pytest.mark.parametrize("T", [0.0, 0.1])
@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(maxiter=0), ValueError, "maxiter must be >= 1, got 0"),
        (dict(maxiter=-5), ValueError, "maxiter must be >= 1, got -5"),
        (dict(maxiter=2.0), TypeError, "maxiter must be an integer"),
        (dict(rtol=np.nan), ValueError, "rtol must be finite"),
        (dict(rtol=0.0), ValueError, "rtol must be > 0"),
    ],
)
def test_linear_network_validates_maxiter_and_rtol(T, kwargs, exc, match):
    X, Y = _problem()
    with pytest.raises(exc, match=match):
        solve_linear_network(input_kernel(X), Y, T=T, **kwargs)


def test_linear_network_budget_is_max_iterations_and_numpy_scalars_work():
    from richlazy.theory import Status

    X, Y = _problem()
    K0 = input_kernel(X)
    ok = solve_linear_network(K0, Y, T=np.float32(0.1), maxiter=np.int64(200), rtol=np.float32(1e-12))
    assert ok.converged and ok.nit <= 200
    cut = solve_linear_network(K0, Y, T=0.1, maxiter=1)
    # hybr finishes the Jacobian it started: at most one iteration beyond the budget
    assert cut.status is Status.MAX_ITERATIONS and "maxiter=1" in cut.message and cut.nit <= 2


def test_linear_network_docstring_names_the_method_it_runs():
    doc = solve_linear_network.__doc__
    assert "hybr" in doc and "Newton-Krylov" not in doc


# ------------------------------------------------------------------------- nngp_posterior


def test_nngp_posterior_errors_name_public_arguments():
    X, Y = _problem()
    Xs = np.random.default_rng(1).standard_normal((10, 3))
    K0, k0, kd = input_kernel(X), input_kernel(X, Xs), np.sum(Xs * Xs, axis=0) / 10
    for act in ("linear", "relu", "erf"):
        with pytest.raises(ValueError, match=r"k0_test_diag must be >= 0") as e:
            nngp_posterior(K0, k0, -kd, Y, activation=act)
        assert "c22" not in str(e.value)
        with pytest.raises(ValueError, match=r"k0_cross is inconsistent with diag\(K0\) and k0_test_diag"):
            nngp_posterior(K0, 10.0 * k0, kd, Y, activation=act)
        with pytest.raises(ValueError, match="K0 must be positive semi-definite"):
            nngp_posterior(-K0, k0, kd, Y, activation=act)
    with pytest.raises(ValueError, match="activation='nope' is not a built-in activation"):
        solve_nngp(K0, Y, activation="nope")
    gp = solve_nngp(K0, Y, activation="relu")
    with pytest.raises(ValueError, match="k_test_diag must be >= 0"):
        gp.predict(k0, -kd)
    with pytest.raises(ValueError, match=r"k0 is inconsistent with diag\(K0\) and k_test_diag"):
        gp.predict(10.0 * k0, kd)
    Kss = input_kernel(Xs)
    with pytest.raises(ValueError, match="K0_ab is inconsistent with k_test_diag_a and k_test_diag_b"):
        gp.test_kernel(k0, k0, 10.0 * Kss, kd, kd)
    # consistent inputs still work (input kernels satisfy Cauchy-Schwarz up to round-off)
    assert np.all(np.isfinite(nngp_posterior(K0, k0, kd, Y, activation="relu").mean))


# ------------------------------------------------------------------------- parse_table_expression


@pytest.mark.parametrize("text", ["1/0 +", "(", "", "a b"])
def test_parse_table_expression_syntax_errors_are_value_errors(text):
    with pytest.raises(ValueError, match=r"text must be a table expression .*could not parse"):
        parse_table_expression(text)


@pytest.mark.parametrize("text", ["1/0", "oo", "nan", "(1, 2)"])
def test_parse_table_expression_rejects_non_finite_or_non_scalar(text):
    with pytest.raises(ValueError, match="text must be a (finite|scalar) table expression"):
        parse_table_expression(text)


def test_parse_table_expression_never_runs_code():
    with pytest.raises(ValueError, match="contains"):
        parse_table_expression('__import__("os").getcwd()')
    with pytest.raises(ValueError, match="contains"):
        parse_table_expression("().__class__")
    with pytest.raises(TypeError, match="text must be a str"):
        parse_table_expression(3)


def test_parse_table_expression_still_parses_tables():
    e = parse_table_expression("N*d**2 + 1/D")
    assert e.free_symbols == {sp.Symbol(n, positive=True) for n in ("N", "d", "D")}
    assert isinstance(parse_table_expression("N < d**3"), sp.core.relational.Relational)


# ------------------------------------------------------------------------- issue 53: overflow, depth, sizes


def test_input_kernel_rescales_large_inputs_and_rejects_an_overflowing_kernel():
    # X^T X overflowed to inf for entries ~1e154 although K0 = 1e308 is representable
    X = 1e154 * np.ones((3, 2))
    K0 = input_kernel(X)
    assert np.all(np.isfinite(K0)) and K0[0, 0] == pytest.approx(1e308, rel=1e-12)
    assert input_kernel(X, np.ones((3, 1)))[0, 0] == pytest.approx(1e154, rel=1e-12)
    with pytest.raises(ValueError, match=r"X .*input kernel X\^T X2 / N0 beyond float64"):
        input_kernel(1e200 * np.ones((3, 2)))  # returned inf


@pytest.mark.parametrize("activation", ["linear", "erf", "sigmoid_erf", "relu"])
def test_nngp_kernel_of_a_huge_kernel_is_finite_and_right(activation):
    # K = 1e300 I gave zeros (erf), 0.25 (sigmoid_erf) or NaN/inf (relu) from overflowing products
    from richlazy.theory import nngp_kernel

    out = nngp_kernel(1e300 * np.eye(3), activation)
    assert np.all(np.isfinite(out))
    diag = {"linear": 1e300, "erf": 1.0, "sigmoid_erf": 0.5, "relu": 0.5e300}[activation]
    assert out[0, 0] == pytest.approx(diag, rel=1e-6)
    if activation == "relu":  # orthogonal inputs: sqrt(c11 c22) / (2 pi)
        assert out[0, 1] == pytest.approx(1e300 / (2 * np.pi), rel=1e-12)


def test_nngp_kernel_rejects_indefinite_kernels_and_overflowing_results():
    from richlazy.theory import nngp_kernel

    K = np.array([[1.0, 0.9, 0.9], [0.9, 1.0, -0.9], [0.9, -0.9, 1.0]])  # 2x2 minors fine, eig -0.8
    with pytest.raises(ValueError, match=r"K must be positive semi-definite.*-0.8.*-1e-08 \* max"):
        nngp_kernel(K, "relu")
    with pytest.raises(ValueError, match="the kernel computed from K overflows"):
        nngp_kernel(1e308 * np.eye(2), "linear", sigma_w2=10.0)
    nngp_kernel(np.ones((3, 3)), "relu")  # singular (rank 1) kernels stay valid


def test_deep_nngp_kernels_bound_the_depth():
    from richlazy.theory import deep_nngp_cross_kernel, deep_nngp_kernel

    with pytest.raises(ValueError, match=r"depth must be <= 1000.*got 1001"):
        deep_nngp_kernel(np.eye(2), "relu", 1001)
    with pytest.raises(ValueError, match=r"depth must be <= 1000"):
        deep_nngp_cross_kernel(np.ones(2), np.eye(2), np.ones(2), "relu", 10**6)
    assert len(deep_nngp_kernel(np.eye(2), "relu", 3)) == 3


def test_linear_network_depth_is_bounded_and_nothing_overflows():
    from richlazy.theory import solve_U

    _, Y = _problem(P=4)
    K0 = np.eye(4)
    # L = 10**6 raised OverflowError from sigma_a2**L (Python floats)
    for call in (lambda: solve_U(np.eye(2), sigma_a2=2.0, L=10**6),
                 lambda: solve_linear_network(K0, Y, L=10**6, sigma_a2=2.0)):
        with pytest.raises(ValueError, match=r"L must be <= 1000"):
            call()
    # within the bound, sigma_a2**L would overflow or underflow: the roots are computed in logs
    G = np.diag([2.0, 1e-3])
    for s in (0.5, 10.0):
        for exact in (True, False):
            u = solve_U(G, sigma_a2=s, L=1000, exact=exact)[1]
            ref = s * (np.diag(G) / s) ** (1 / 1001)  # leading order u = (s^L g)^(1/(L+1))
            assert np.all(np.isfinite(u)) and np.all(u > 0)
            if not exact:
                assert u == pytest.approx(np.sort(ref), rel=1e-12)
            else:  # the exact root solves u^L (u - s) = s^L g, i.e. L log(u/s) + log(u - s) = log g
                lhs = 1000 * np.log(u / s) + np.log(u - s)
                assert lhs == pytest.approx(np.log(np.sort(np.diag(G))), abs=1e-9)


def test_linear_network_roots_match_the_direct_formula_at_moderate_depth():
    from richlazy.theory import solve_U

    g, s, L = 3.0, 0.7, 3
    u = solve_U(np.array([[g]]), sigma_a2=s, L=L)[1][0]
    assert u ** (L + 1) - s * u**L == pytest.approx(s**L * g, rel=1e-13)


def _toy_t():
    from richlazy.theory import toy_class_targets

    return toy_class_targets(3, y_minus=-0.5)


_LAB6 = np.arange(6) % 3
_RHO = (0.5, 0.25, 0.25)
_BLOCK_LAB = np.repeat(np.arange(3), 4)
_BLOCK_K = 0.7 * np.eye(12) + 0.3 * (_BLOCK_LAB[:, None] == _BLOCK_LAB[None, :])

# (call, message): size arguments that used to end in MemoryError, an allocator or overflow
# error, or a run without end (issue 53), each refused up front naming the argument and the limit
_SIZE_CASES = {
    "feature_propagation_rkhs": (
        lambda T: T.feature_propagation_rkhs([1.0], d=3, N=10**8, n=12, seed=0),
        r"d=3, N=100000000, n=12 is too large: .* GiB, above the 16 GiB"),
    "sd_test_pairs": (lambda T: T.sd_test_pairs(10**12, 3, seed=0), r"n=1000000000000 with d=3 is too large"),
    "toy_class_targets": (lambda T: T.toy_class_targets(10**9), r"m is too large"),
    "solve_sigmoid_toy.n_random": (
        lambda T: T.solve_sigmoid_toy(_RHO, _toy_t(), n_random=10**9),
        r"n_random=1000000000 is too large: .* above the 16 GiB"),
    "solve_sigmoid_toy.n_nodes": (
        lambda T: T.solve_sigmoid_toy(_RHO, _toy_t(), n_nodes=10**9), r"n_nodes=1000000000 is too large"),
    "sweep_y_minus.n_random": (
        lambda T: T.sweep_y_minus([0.3], ratios=_RHO, n_random=10**12),
        r"n_random=1000000000000 is too large"),
    "sweep_temperature.n_random": (
        lambda T: T.sweep_temperature([0.2], ratios=_RHO, class_targets=_toy_t(), n_random=10**9),
        r"n_random=1000000000 is too large"),
    "solve_sigmoid_general.n_random": (
        lambda T: T.solve_sigmoid_general(np.eye(6), _toy_t()[_LAB6], n_random=10**9),
        r"n_random=1000000000 is too large"),
    "solve_sigmoid_first_layer.n_bins": (
        lambda T: T.solve_sigmoid_first_layer(0.3 * np.eye(6) + 0.1, _LAB6, n_bins=10**9),
        r"n_bins=1000000000 with classes of up to 2 inputs is too large"),
    "solve_sigmoid_middle_layer.n_starts": (
        lambda T: T.solve_sigmoid_middle_layer(0.3 * np.eye(6) + 0.2, 0.3 * np.eye(6) + 0.1, _LAB6,
                                               n_starts=10**12),
        r"n_starts=1000000000000 is too large"),
    "solve_relu_block.quad_nodes": (
        lambda T: T.solve_relu_block(_BLOCK_K, _toy_t()[_BLOCK_LAB], bulk="laplace", quad_nodes=10**9),
        r"quad_nodes=1000000000 on \d class-field dimensions is too large"),
    "solve_relu_block.readout_nodes": (
        lambda T: T.solve_relu_block(_BLOCK_K, _toy_t()[_BLOCK_LAB], bulk="readout_law", readout_nodes=10**9),
        r"readout_nodes=1000000000 with m=3 outputs is too large"),
    "relu_dual_margin.n_starts": (
        lambda T: T.relu_dual_margin(np.eye(6), _toy_t()[_LAB6], n_starts=10**9),
        r"n_starts=1000000000 is too large"),
    "sd_kernel_accuracy.L": (lambda T: T.sd_kernel_accuracy(10**9, 2),
                             r"L=1000000000 with d=2 .* is too large"),
    "sd_kernel_accuracy.n_seeds": (
        lambda T: T.sd_kernel_accuracy(3, 2, n_seeds=10**12), r"n_seeds=1000000000000 is too large"),
    "sd_kernel_accuracy_grid.n_test": (
        lambda T: T.sd_kernel_accuracy_grid([3, 4], [2], n_test=10**12),
        r"L=4 with d=2 and n_test=1000000000000 is too large"),
    "sd_max_margin_accuracy.L": (lambda T: T.sd_max_margin_accuracy(10**9),
                                 r"L=1000000000 with n_test=20000"),
    "sd_max_margin_accuracy.n_test": (
        lambda T: T.sd_max_margin_accuracy(3, n_test=10**12), r"L=3 with n_test=1000000000000"),
    "sd_symmetric_max_margin": (lambda T: T.sd_symmetric_max_margin(10**12), r"L=1000000000000 is too large"),
    "circulant_eigenpairs": (lambda T: T.circulant_eigenpairs(10**9), r"d=1000000000 is too large"),
    "handcrafted_solution": (lambda T: T.handcrafted_solution(10**12), r"d=1000000000000 is too large"),
    "simulate_markov_walkers": (
        lambda T: T.simulate_markov_walkers(4, readout_sign=1, n_units=10**9),
        r"n_units=1000000000 with L=4 and batch_size=512 is too large"),
    "mehler_coefficients": (
        lambda T: T.mehler_coefficients("erf", 0.6, 10**9), r"n_max must be <= 170 .*got 1000000000"),
    "solve_linear_network.maxiter": (
        lambda T: T.solve_linear_network(np.eye(4), np.eye(2)[np.arange(4) % 2], L=1, sigma_a2=0.5,
                                         T=0.01, maxiter=10**12),
        r"maxiter must be <= 429496729 for m=2 outputs .*got 1000000000000"),
    "ak_two_layer_erf.maxiter": (
        lambda T: T.ak_two_layer_erf([10.0], 8, 4, maxiter=10**12),
        r"maxiter must be <= 10000000 .*got 1000000000000"),
    "ldt_two_layer_erf.maxiter": (
        lambda T: T.ldt_two_layer_erf([0.2], 8, 4, points_per_width=4.0, maxiter=10**12),
        r"maxiter must be <= 10000000 .*got 1000000000000"),
    "log_z1_reference.dps": (lambda T: T.log_z1_reference(0.5, 4, dps=10**9),
                             r"dps must be <= 100000 .*got 1000000000"),
}


@pytest.mark.parametrize("case", sorted(_SIZE_CASES))
def test_size_arguments_are_refused_before_allocating(case):
    import richlazy.theory as T

    call, message = _SIZE_CASES[case]
    with pytest.raises(ValueError, match=message):
        call(T)


def test_sizes_below_the_limits_still_work():
    from richlazy.theory import circulant_eigenpairs, mehler_coefficients, toy_class_targets

    assert toy_class_targets(3).shape == (3, 3)
    assert circulant_eigenpairs(3)[1].shape == (6, 6)
    assert mehler_coefficients("erf", 0.6, 170).shape == (171,)
