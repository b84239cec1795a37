"""The validate-side glue of population annealing: the blocked-Gibbs annealing of a network
posterior and the equilibration verdict of a frozen quantity's population estimate."""

import numpy as np
import pytest
import torch
from richlazy.simulate import NetworkSpec, orthogonal_toy_task
from richlazy.validate.core._annealing import anneal_posterior, frozen_estimate

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _task(P=6, N0=8):
    return orthogonal_toy_task(P, N0, ratios=(0.5, 0.25, 0.25), y_plus=1.0, y_minus=0.5, seed=0)


def test_a_gentle_target_is_equilibrated_and_its_estimate_is_the_population_mean(tmp_path):
    """A linear network at a high temperature (weak likelihood): few stages, the families survive,
    the populations agree, and the estimate is the mean of the population means."""
    task = _task()
    spec = NetworkSpec(N0=8, N=4, L=1, m=3, activation="linear", regime="nonlazy")
    post, run = anneal_posterior(spec, task.X, task.Y, T=20.0, sigma_a2=1.0, n_populations=2,
                                 population_size=64, n_moves=2, n_leapfrog=3, seed=1, device="cpu",
                                 progress=False)
    assert run.converged and float(run.betas[-1].min()) == pytest.approx(post.beta)
    vals = post.unflatten(run.theta)["A"].mean(dim=1)  # (E, m)
    mean, se, eq = frozen_estimate(run, vals)
    assert eq.equilibrated, eq.diagnostic
    assert eq.diagnostic.startswith("population annealing: 2 populations x 64 networks")
    pm = vals.double().reshape(2, 64, 3).mean(1)
    np.testing.assert_allclose(mean, pm.mean(0).numpy(), rtol=1e-12)
    np.testing.assert_allclose(se, (pm.std(0) / np.sqrt(2)).numpy(), rtol=1e-12)


def test_a_collapsed_population_is_not_equilibrated_and_says_why():
    """A sigmoid network annealed to a low temperature with populations of 4: every population
    ends as one family; the verdict names the failed diagnostics with their numbers."""
    task = _task()
    spec = NetworkSpec(N0=8, N=4, L=1, m=3, activation="sigmoid_erf", regime="nonlazy")
    post, run = anneal_posterior(spec, task.X, task.Y, T=0.002, sigma_a2=1.0 / 6, n_populations=2,
                                 population_size=4, n_moves=1, n_leapfrog=2, seed=2, device="cpu",
                                 progress=False)
    _, _, eq = frozen_estimate(run, torch.zeros(8, 2))
    assert not eq.equilibrated
    assert "families" in eq.diagnostic and "effective families" in eq.diagnostic
