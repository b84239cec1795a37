"""The problem object of the coding solvers (issue 54): ``KernelFactor`` factors the input kernel
K0 once (eigendecomposition, range factor, its pseudo-inverse, null space, rank) and is passed
down, so a solve eigendecomposes K0 once."""

import numpy as np
import pytest
from richlazy.theory import input_kernel, relu_dual_margin, solve_sigmoid_general, toy_class_targets
from richlazy.theory.coding._problem import KernelFactor, _check_psd_gram, _range_factor
from richlazy.theory.coding.relu._factor import _Factor


def _kernels():
    rng = np.random.default_rng(3)
    P, N0 = 12, 6
    lab = np.arange(P) % 3
    X = rng.standard_normal((N0, P)) + 1.5 * np.eye(N0, 3)[:, lab]
    Xf = rng.standard_normal((30, P))
    return {"singular": X.T @ X / N0, "definite": Xf.T @ Xf / 30}


@pytest.mark.parametrize("case", ["singular", "definite"])
def test_kernel_factor_reconstructs_K0_and_factors_it_on_its_range(case):
    K0 = _kernels()[case]
    kf = KernelFactor(K0)
    P = K0.shape[0]
    lam, V = kf.eigenvalues, kf.eigenvectors
    np.testing.assert_allclose((V * lam) @ V.T, K0, atol=1e-13)
    np.testing.assert_allclose(V.T @ V, np.eye(P), atol=1e-13)
    r = 6 if case == "singular" else P
    assert kf.rank == r and kf.P == P and kf.singular == (r < P)
    assert kf.B.shape == (P, r) and kf.Bpinv.shape == (r, P) and kf.N.shape == (P, P - r)
    # B B^T = K0 on the range (the dropped eigenvalues are round-off), B^+ B = I_r, K0 N = 0
    np.testing.assert_allclose(kf.B @ kf.B.T, K0, atol=1e-13)
    np.testing.assert_allclose(kf.Bpinv @ kf.B, np.eye(r), atol=1e-12)
    np.testing.assert_allclose(kf.B.T @ kf.N, 0.0, atol=1e-13)
    np.testing.assert_allclose(K0 @ kf.N, 0.0, atol=1e-13)
    # the pseudo-inverse: Bpinv^T Bpinv = K0^+
    np.testing.assert_allclose(kf.Bpinv.T @ kf.Bpinv, np.linalg.pinv(K0, rcond=1e-10, hermitian=True),
                               rtol=1e-9, atol=1e-9)


def test_kernel_factor_is_the_range_factor_and_the_checked_kernel_bit_for_bit():
    K0 = _kernels()["singular"]
    kf = _check_psd_gram(K0, factor=True)
    K0c, B, Bpinv, N = _check_psd_gram(K0)
    for a, b in zip((kf.K0, kf.B, kf.Bpinv, kf.N), (K0c, B, Bpinv, N), strict=True):
        assert np.array_equal(a, b)
    for a, b in zip(kf.range_factor(), _range_factor(K0), strict=True):
        assert np.array_equal(a, b)
    lam, V = np.linalg.eigh(K0)
    assert np.array_equal(kf.eigenvalues, lam) and np.array_equal(kf.eigenvectors, V)
    assert "rank=6" in repr(kf)
    with pytest.raises(AttributeError, match="read-only"):
        kf.B = B
    # relu's factor built from it equals the one built from the tuple
    a, b = _Factor.from_kernel(kf), _Factor(K0c, B, Bpinv, N)
    for name in ("B", "Bpinv", "N", "pinv", "proj", "M", "E"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.singular and a.chol is None
    d = _Factor.from_kernel(KernelFactor(_kernels()["definite"]))
    assert not d.singular and d.chol is not None and np.array_equal(d.B, d.chol)


def test_check_psd_gram_keeps_its_messages():
    with pytest.raises(ValueError, match="smallest eigenvalue -1 \\(largest 3\\)"):
        _check_psd_gram([[1.0, 2.0], [2.0, 1.0]], factor=True)
    with pytest.raises(ValueError, match="not symmetric"):
        _check_psd_gram([[1.0, 2.0], [0.0, 1.0]], factor=True)


def _eigh_calls_on(monkeypatch, K0):
    """Count ``numpy.linalg.eigh`` calls whose argument equals K0."""
    calls = []
    eigh = np.linalg.eigh

    def counting(a, *args, **kwargs):
        a_arr = np.asarray(a)
        if a_arr.shape == K0.shape and np.array_equal(a_arr, K0):
            calls.append(1)
        return eigh(a, *args, **kwargs)

    monkeypatch.setattr(np.linalg, "eigh", counting)
    return calls


@pytest.mark.slow
def test_one_eigendecomposition_of_K0_per_sigmoid_bundle_solve(monkeypatch):
    """The bundle strategy on a singular K0 used to eigendecompose K0 in the check and again in
    the bundle's neuron (2 calls); now the check's KernelFactor is passed down."""
    K0 = _kernels()["singular"]
    Y = toy_class_targets(3, y_minus=-0.5)[np.arange(12) % 3]
    calls = _eigh_calls_on(monkeypatch, K0)
    sol = solve_sigmoid_general(K0, Y, seed=2, maxiter=2)
    assert sol.status is not None and sol.n_codes >= 1
    assert len(calls) == 1


def test_one_eigendecomposition_of_K0_per_relu_margin_search(monkeypatch):
    rng = np.random.default_rng(5)
    lab = np.arange(9) % 3
    X = (rng.standard_normal((3, 30))[lab] + 0.8 * rng.standard_normal((9, 30))).T
    K0 = input_kernel(X)
    calls = _eigh_calls_on(monkeypatch, K0)
    out = relu_dual_margin(K0, 0.5 * toy_class_targets(3, y_minus=-0.5)[lab], n_starts=5)
    assert out.converged and len(calls) == 1
