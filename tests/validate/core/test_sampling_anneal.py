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


def test_annealed_step_is_pure_and_bit_identical_to_the_mutating_reference():
    """The step takes the temperature as an argument: the posterior is never mutated, and the run
    is bit-for-bit the one of the former implementation, which set ``post.beta`` inside the step."""
    from richlazy.simulate import (
        NetworkPosterior,
        langevin_init,
        langevin_step,
        make_generator,
        paper_step_size,
        run_chain,
    )

    spec, task = _setup()
    T, dt, seed, A, n_anneal = 0.1, 0.01, 5, 1.0, 100
    post, run = sample_posterior(spec, task.X, task.Y, T=T, sigma_a2=0.125, dt=dt, n_chains=3,
                                 n_steps=250, burn_in=120, thin=10, observe=_obs, seed=seed,
                                 device="cpu", progress=False, anneal_from=A, anneal_steps=n_anneal)
    ref = NetworkPosterior(spec, task.X, task.Y, T=T, sigma_a2=0.125, device="cpu",
                           dtype=torch.float64, project_inputs=True)
    gen = make_generator(seed, torch.device("cpu"))
    state = langevin_init(ref.sample_prior(3, generator=gen))
    beta_T = ref.beta
    seen = []

    def mutating_step(s, g):
        if s.step >= n_anneal:
            ref.beta = beta_T
            return langevin_step(s, ref, step_size=paper_step_size(dt, T), generator=g)
        T_s = A * (T / A) ** (s.step / n_anneal)
        ref.beta = beta_T * T / T_s
        return langevin_step(s, ref, step_size=paper_step_size(dt, T_s), generator=g)

    def observe(s):
        seen.append(post.beta)
        return _obs(ref, s.theta, None)

    old = run_chain(state, mutating_step, n_steps=250, generator=gen, burn_in=120, thin=10,
                    observe=observe, progress=False)
    assert torch.equal(run.state.theta, old.state.theta)
    assert torch.equal(run.samples["A2"], old.samples["A2"])
    assert post.beta == beta_T and set(seen) == {beta_T}
