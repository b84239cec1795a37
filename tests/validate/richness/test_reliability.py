"""Richness measures on inputs with no defined answer raise instead of returning NaN or a number
outside the measure's range (issue 12): indefinite or zero kernels for cka, all-zero features for
linear_cka / dlr."""

import math

import numpy as np
import pytest
from richlazy.validate.richness import cka, dlr, linear_cka, s_init


def _feat(n=8, p=3, seed=0):
    return np.random.default_rng(seed).standard_normal((n, p))


@pytest.mark.parametrize("debiased", [False, True])
def test_cka_rejects_indefinite_kernels(debiased):
    # cka(-I, I) used to return -1.0 (outside [0, 1])
    with pytest.raises(ValueError, match=r"K must be positive semi-definite.*smallest eigenvalue is -1"):
        cka(-np.eye(4), np.eye(4), debiased=debiased)
    X = _feat()
    G = X @ X.T
    with pytest.raises(ValueError, match="L must be positive semi-definite"):
        cka(G, G - 3.0 * np.eye(8), debiased=debiased)
    stack = np.stack([G, -G])
    with pytest.raises(ValueError, match=r"L\[1\] must be positive semi-definite"):
        cka(G, stack, debiased=debiased)


def test_cka_rejects_zero_kernel_but_accepts_round_off_negative_eigenvalues():
    with pytest.raises(ValueError, match="K is all zero: a zero kernel has no defined CKA"):
        cka(np.zeros((4, 4)), np.eye(4))
    X = _feat(n=12, p=2)
    G = X @ X.T  # rank 2: ten eigenvalues that are zero up to round-off, some slightly negative
    assert cka(G, G) == pytest.approx(1.0)
    assert 0.0 <= cka(G, np.eye(12)) <= 1.0


@pytest.mark.parametrize("debiased", [False, True])
def test_linear_cka_of_zero_features_raises(debiased):
    Y = _feat(p=2, seed=1)
    with pytest.raises(ValueError, match=r"X is all zero \(shape \(8, 3\)\): zero features have no "
                                         r"defined CKA"):
        linear_cka(np.zeros((8, 3)), Y, debiased=debiased)
    with pytest.raises(ValueError, match="Y is all zero"):
        linear_cka(Y, np.zeros((8, 2)), debiased=debiased)
    with pytest.raises(ValueError, match="features_learned is all zero|Y is all zero"):
        s_init(Y, np.zeros((8, 2)))


@pytest.mark.parametrize("whiten", [False, True])
def test_dlr_of_zero_features_or_outputs_raises(whiten):
    F = _feat(p=2, seed=2)
    with pytest.raises(ValueError, match="features is all zero .*no defined D_LR"):
        dlr(np.zeros((8, 3)), F, whiten_outputs=whiten)
    with pytest.raises(ValueError, match="outputs is all zero .*no defined D_LR"):
        dlr(_feat(), np.zeros((8, 2)), whiten_outputs=whiten)
    with pytest.raises(ValueError, match=r"features is all zero \(shape \(2, 8, 3\)\)"):
        dlr(np.zeros((2, 8, 3)), F, whiten_outputs=whiten)


def test_one_degenerate_member_of_a_stack_is_nan_not_an_error():
    # a member with zero features inside a stack is a measured outcome (documented NaN)
    X = np.stack([_feat(), np.zeros((8, 3))])
    v = dlr(X, _feat(p=2, seed=3))
    assert np.isfinite(v[0]) and math.isnan(v[1])


def test_block_rows_accepts_numpy_integers():
    X, F = _feat(), _feat(p=2, seed=4)
    assert dlr(X, F, block_rows=np.int64(3)) == pytest.approx(dlr(X, F))
    assert linear_cka(X, F, block_rows=np.int32(2)) == pytest.approx(linear_cka(X, F))
    for bad in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match="block_rows must be a positive int or None"):
            dlr(X, F, block_rows=bad)


# ------------------------------------------------------------------ issue 53: constant or zero inputs


@pytest.mark.parametrize("debiased", [False, True])
def test_linear_cka_of_constant_features_raises(debiased):
    # constant features gave NaN (ones) or a round-off number (0.1: about 1e-33)
    Y = _feat(p=2, seed=1)
    for c in (1.0, 0.1):
        with pytest.raises(ValueError, match=r"X has zero variance over the samples .*no defined CKA"):
            linear_cka(np.full((8, 3), c), Y, debiased=debiased)
    with pytest.raises(ValueError, match="features_learned has zero variance"):
        s_init(Y, np.full((8, 2), 0.1))
    # one constant member inside a stack stays a documented NaN
    v = linear_cka(np.stack([_feat(), np.ones((8, 3))]), Y, debiased=debiased)
    assert np.isfinite(v[0]) and math.isnan(v[1])


def test_cka_of_a_constant_kernel_raises():
    X = _feat()
    with pytest.raises(ValueError, match=r"K is constant .*no defined CKA"):
        cka(np.full((8, 8), 0.03), X @ X.T)  # gave 1.4e-17
    with pytest.raises(ValueError, match="L is constant"):
        cka(X @ X.T, np.ones((8, 8)), debiased=True)


def test_effective_dimension_of_a_zero_spectrum_raises():
    from richlazy.validate.richness import effective_dimension

    with pytest.raises(ValueError, match=r"eigenvalues after the first are all zero"):
        effective_dimension(np.array([1.0, 0.0, 0.0]))  # NaN before
    with pytest.raises(ValueError, match=r"eigenvalues are all zero"):
        effective_dimension(np.zeros(4), drop_first=False)
    d = effective_dimension(np.array([[5.0, 1.0, 1.0], [5.0, 0.0, 0.0]]))
    assert d[0] == pytest.approx(3.0) and math.isnan(d[1])


def test_collapse_measures_of_zero_features_raise():
    from richlazy.validate.richness import nc1, nc2_etf

    lab = np.arange(9) % 3
    for ridge in (1e-4, 0.0):  # returned 0 ("perfect collapse")
        with pytest.raises(ValueError, match=r"features has identical class means .*NC1 is undefined"):
            nc1(np.zeros((9, 3)), lab, ridge=ridge)
    with pytest.raises(ValueError, match="features has identical class means"):
        nc2_etf(np.full((9, 3), 0.1), lab)  # NaN cosines
    X = np.random.default_rng(0).standard_normal((9, 3))
    v = nc1(np.stack([X, np.zeros((9, 3))]), lab)
    assert np.isfinite(v[0]) and math.isnan(v[1])


def test_eigen_curves_of_zero_inputs_raise():
    from richlazy.validate.richness import eigen_curves

    F = _feat(n=12, p=4, seed=3)
    for name, args in (("features", (np.zeros((12, 4)), F[:, :2], F[:, :2])),
                       ("targets", (F, np.zeros((12, 2)), F[:, :2])),
                       ("outputs", (F, F[:, :2], np.zeros((12, 2))))):
        with pytest.raises(ValueError, match=f"{name} is all zero"):
            eigen_curves(*args)


def test_class_statistics_refuses_an_enormous_n_classes():
    from richlazy.validate.richness import class_statistics

    with pytest.raises(ValueError, match=r"n_classes is too large: .* GiB, above the 16 GiB limit"):
        class_statistics(_feat(n=9), np.arange(9) % 3, n_classes=10**9)  # MemoryError before
