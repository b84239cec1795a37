"""Seed vocabulary of the equality theory: ``seed`` is an int or a numpy Generator; the old
``rng=`` spelling of the SD pair samplers still works with a DeprecationWarning."""

import numpy as np
import pytest
from richlazy.theory import (
    SolverStatus,
    sd_kernel_accuracy,
    sd_kernel_accuracy_grid,
    sd_test_pairs,
    sd_training_pairs,
    simulate_markov_walkers,
)


def test_sd_test_pairs_rng_is_a_deprecated_alias_of_seed():
    with pytest.warns(DeprecationWarning, match="rng= is deprecated"):
        x_old, y_old = sd_test_pairs(20, 3, sigma2=0.5, rng=np.random.default_rng(4))
    x_new, y_new = sd_test_pairs(20, 3, sigma2=0.5, seed=np.random.default_rng(4))
    np.testing.assert_array_equal(x_old, x_new)
    np.testing.assert_array_equal(y_old, y_new)
    x_int, _ = sd_test_pairs(20, 3, sigma2=0.5, seed=4)  # an int seeds a fresh Generator
    np.testing.assert_array_equal(x_int, x_new)
    with pytest.raises(TypeError, match="needs seed="):
        sd_test_pairs(20, 3)
    with pytest.raises(TypeError, match="pass seed= only"):
        sd_test_pairs(20, 3, seed=1, rng=np.random.default_rng(1))
    with pytest.raises(TypeError, match="seed must be a non-negative int or a numpy"):
        sd_test_pairs(20, 3, seed=1.5)


def test_sd_training_pairs_rng_is_a_deprecated_alias_of_seed():
    S = np.random.default_rng(0).standard_normal((3, 2))
    with pytest.warns(DeprecationWarning, match="use seed="):
        x_old, _, _ = sd_training_pairs(S, sigma2=0.1, rng=np.random.default_rng(2))
    x_new, _, _ = sd_training_pairs(S, sigma2=0.1, seed=2)
    np.testing.assert_array_equal(x_old, x_new)
    x0, _, _ = sd_training_pairs(S)  # noiseless: no seed needed
    assert not np.array_equal(x0, x_new)


def test_generator_and_int_seeds_agree():
    a = sd_kernel_accuracy(4, 3, n_test=50, n_seeds=2, seed=np.random.default_rng(3))
    b = sd_kernel_accuracy(4, 3, n_test=50, n_seeds=2, seed=3)
    np.testing.assert_array_equal(a.per_seed, b.per_seed)
    w1 = simulate_markov_walkers(4, readout_sign=1, n_units=3, batch_size=16, n_steps=5, seed=7)
    w2 = simulate_markov_walkers(4, readout_sign=1, n_units=3, batch_size=16, n_steps=5,
                                 seed=np.random.default_rng(7))
    np.testing.assert_array_equal(w1.omega1, w2.omega1)


def test_kernel_accuracy_grid_streams():
    acc, se = sd_kernel_accuracy_grid([3, 4], [2], n_test=40, n_seeds=2, seed=5)
    acc2, _ = sd_kernel_accuracy_grid([3, 4], [2], n_test=40, n_seeds=2, seed=5)
    np.testing.assert_array_equal(acc, acc2)
    assert acc.shape == se.shape == (2, 1)
    # an int seed spawns SeedSequence children, one Generator per grid point
    child = np.random.SeedSequence(5).spawn(2)[1]
    ref = sd_kernel_accuracy(4, 2, n_test=40, n_seeds=2, seed=np.random.default_rng(child))
    assert acc[1, 0] == ref.accuracy
    g_acc, _ = sd_kernel_accuracy_grid([3, 4], [2], n_test=40, n_seeds=2,
                                       seed=np.random.default_rng(5))
    assert g_acc.shape == (2, 1)


def test_equality_results_carry_the_common_status_fields():
    from richlazy.theory import SolverStatus, max_margin_solution, sd_symmetric_max_margin
    from richlazy.theory._results import Status

    S = np.random.default_rng(1).standard_normal((6, 4))
    x, y, _ = sd_training_pairs(S)
    mm = max_margin_solution(x, y)
    assert isinstance(mm, SolverStatus) and mm.converged and mm.status is Status.SUCCESS
    assert mm.residual < 1e-10
    w = simulate_markov_walkers(4, readout_sign=-1, n_units=2, batch_size=8, n_steps=3, seed=0)
    assert isinstance(w, SolverStatus) and w.status is Status.SUCCESS and w.nit == 3
    assert isinstance(sd_symmetric_max_margin(3), SolverStatus)


# ---- renamed arguments: L -> n_symbols, steps -> n_steps (issue 54, one call shape) ----------


@pytest.mark.parametrize("fn, args, kwargs", [
    ("rich_accuracy", (), {}),
    ("rich_different_accuracy", (), dict(rho=1.5)),
    ("readout_ratio_heuristic", (), {}),
    ("eq3_accuracy", (), {}),
    ("theorem2_bound", (), dict(d=8)),
    ("sd_symmetric_max_margin", (), {}),
    ("sd_max_margin_accuracy", (), dict(n_test=50, seed=0, max_perms=10)),
    ("sd_kernel_accuracy", (), dict(d=3, n_test=20, n_seeds=1, seed=0)),
    ("simulate_markov_walkers", (), dict(readout_sign=1, n_units=2, batch_size=4, n_steps=3, seed=0)),
])
def test_L_is_a_deprecated_alias_of_n_symbols(fn, args, kwargs):
    import richlazy.theory as T

    f = getattr(T, fn)
    new = f(*args, n_symbols=4, **kwargs)
    with pytest.warns(DeprecationWarning, match="L= is deprecated.*use n_symbols=") as rec:
        old = f(*args, L=4, **kwargs)
    assert rec[0].filename == __file__  # the warning points at the caller
    positional = f(4, *args, **kwargs)
    for r in (old, positional):
        if isinstance(new, SolverStatus) and hasattr(new, "omega1"):
            np.testing.assert_array_equal(r.omega1, new.omega1)
        elif hasattr(new, "__dataclass_fields__"):
            assert repr(r) == repr(new)
        else:
            np.testing.assert_array_equal(r, new)
    with pytest.raises(TypeError, match="pass n_symbols= only"):
        f(*args, n_symbols=4, L=4, **kwargs)
    with pytest.raises(TypeError, match="pass n_symbols= only"):
        f(4, *args, L=4, **kwargs)
    with pytest.raises(ValueError, match="n_symbols must be"):
        f(*args, n_symbols=1, **kwargs)


def test_steps_is_a_deprecated_alias_of_n_steps():
    new = simulate_markov_walkers(4, readout_sign=-1, n_units=2, batch_size=8, n_steps=3, seed=0)
    with pytest.warns(DeprecationWarning, match="steps= is deprecated.*use n_steps="):
        old = simulate_markov_walkers(4, readout_sign=-1, n_units=2, batch_size=8, steps=3, seed=0)
    np.testing.assert_array_equal(old.omega1, new.omega1)
    assert old.steps == new.steps == new.nit == 3
    with pytest.raises(TypeError, match="pass n_steps= only"):
        simulate_markov_walkers(4, readout_sign=-1, steps=3, n_steps=3)

    from richlazy.theory import kernel_gradient_descent

    S = np.random.default_rng(0).standard_normal((3, 2))
    x, y, p = sd_training_pairs(S)
    f_new, r_new = kernel_gradient_descent(x, y, x[:4], p=p, n_steps=7, record_every=3)
    with pytest.warns(DeprecationWarning, match="steps= is deprecated.*use n_steps="):
        f_old, r_old = kernel_gradient_descent(x, y, x[:4], p=p, steps=7, record_every=3)
    np.testing.assert_array_equal(f_old, f_new)
    np.testing.assert_array_equal(r_old, r_new)
    with pytest.raises(TypeError, match="pass n_steps= only"):
        kernel_gradient_descent(x, y, x[:4], steps=7, n_steps=7)
