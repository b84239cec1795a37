"""Simulated annealing inside the burn-in of sample_posterior."""

import numpy as np
import pytest
import torch
from richlazy.simulate import NetworkSpec, orthogonal_toy_task
from richlazy.validate.core._sampling import sample_posterior


def _setup():
    task = orthogonal_toy_task(8, 10, y_plus=1.0, y_minus=0.0, seed=0)
    spec = NetworkSpec(N0=10, N=6, L=1, m=3, activation="linear", regime="nonlazy")
    return spec, task


def _obs(post, theta, gen):
    return {"A2": post.unflatten(theta)["A"].square().mean(dim=(1, 2))}


@pytest.mark.parametrize("kw, match", [
    (dict(anneal_from=0.01, anneal_steps=10), "anneal_from"),
    (dict(anneal_from=float("inf"), anneal_steps=10), "anneal_from"),
    (dict(anneal_from=1.0, anneal_steps=0), "anneal_steps"),
    (dict(anneal_from=1.0, anneal_steps=500), "anneal_steps"),
    (dict(anneal_from=1.0, anneal_steps=10.0), "anneal_steps"),
])
def test_bad_anneal_arguments(kw, match):
    spec, task = _setup()
    with pytest.raises(ValueError, match=match):
        sample_posterior(spec, task.X, task.Y, T=0.1, sigma_a2=0.125, dt=0.01, n_chains=2, n_steps=200,
                         burn_in=100, thin=10, observe=_obs, seed=0, device="cpu", progress=False, **kw)


def test_annealing_ends_at_the_target_temperature():
    """After the anneal the chain is the plain chain at T: from the same state and generator,
    recorded samples equal those of a chain whose likelihood weight is N/T (the weight is reset)."""
    spec, task = _setup()
    kw = dict(T=0.1, sigma_a2=0.125, dt=0.01, n_chains=2, n_steps=300, burn_in=100, thin=50,
              observe=_obs, seed=3, device="cpu", progress=False)
    post, run = sample_posterior(spec, task.X, task.Y, anneal_from=1.0, anneal_steps=100, **kw)
    assert post.beta == pytest.approx(spec.N / 0.1)
    _, plain = sample_posterior(spec, task.X, task.Y, **kw)
    # same noise stream, different early temperatures: the states differ at the end of the anneal
    assert not torch.equal(run.samples["A2"], plain.samples["A2"])
    assert np.all(np.isfinite(run.samples["A2"].numpy()))
