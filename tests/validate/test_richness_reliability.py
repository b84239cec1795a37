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
