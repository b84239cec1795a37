"""The samplers a case can choose in ``sample_posterior``: "gibbs-hmc" (exact readout draw +
HMC hidden block) is exact on the linear network, whose finite-N posterior is a 1-D Gaussian
scale mixture (quadrature in tests/simulate/samplers/test_gibbs.py)."""

import numpy as np
import pytest
import torch
from richlazy.simulate import NetworkSpec
from richlazy.validate.core._sampling import sample_posterior
from richlazy.validate.stats import batch_means, chain_diagnostics


def _task():
    N0 = P = 8
    rng = np.random.default_rng(0)
    X = np.sqrt(N0) * np.linalg.qr(rng.standard_normal((N0, N0)))[0][:, :P]
    Y = np.where(np.arange(P) % 2 == 0, 1.0, -1.0)[:, None]
    return X, Y


def _observe(post, theta, gen):
    A = post.unflatten(theta)["A"]
    return {"U": A.square().sum((1, 2)) / post.spec.N, "A0": A[:, 0, 0]}


def _sample_the_linear_network(linear_exact, **kw):
    """(exact U, run): the linear network N = N0 = P = 8 at T = 0.5, sigma_a2 = 1/8, sampled at
    dt = 0.03 by ``sample_posterior(..., **kw)``."""
    X, Y = _task()
    N, T, v = 8, 0.5, 1.0 / 8
    U_ex, _ = linear_exact(X.T @ X / 8, Y[:, 0], N, T, v)
    spec = NetworkSpec(N0=8, N=N, L=1, m=1, activation="linear")
    _, run = sample_posterior(spec, X, Y, T=T, sigma_a2=v, dt=0.03, observe=_observe, seed=5, device="cpu",
                              progress=False, **kw)
    return U_ex, run


@pytest.mark.slow
@pytest.mark.usefixtures("one_torch_thread")
def test_gibbs_hmc_is_exact_on_the_linear_network(linear_exact):
    """N = N0 = P = 8, T = 0.5, sigma_a2 = 1/8 at dt = 0.03, where plain ULA is biased by many
    SE (tests/simulate/samplers/test_gibbs.py); the adapted Gibbs-HMC chain matches the exact
    U = <|a|^2>/N within 4 batch-means SE, the readout's sign symmetry (mean 0) within 4 SE, and
    its chains mix (split-R-hat <= 1.01)."""
    U_ex, run = _sample_the_linear_network(linear_exact, n_chains=32, n_steps=1500, burn_in=300, thin=2,
                                           sampler="gibbs-hmc", n_leapfrog=5)
    U = run.samples["U"].double().numpy()
    m, se = batch_means(U)
    assert abs(m - U_ex) < 4 * se, f"exact {U_ex:.5f}, Gibbs-HMC {m:.5f} +- {se:.5f}"
    a0 = run.samples["A0"].double().numpy()
    ma, sea = batch_means(a0)
    assert abs(ma) < 4 * sea
    assert float(chain_diagnostics(U, layout="draw_chain").rhat) <= 1.01
    assert run.acceptance is not None and 0.6 < float(run.acceptance.mean()) < 0.99


@pytest.mark.usefixtures("one_torch_thread")
def test_gibbs_exact_matches_the_exact_linear_posterior(linear_exact):
    """The sweep with every block exact (and rescaling moves): U within 4 SE of the quadrature,
    mixed chains; the run records the sampler and the scale moves in its config."""
    U_ex, run = _sample_the_linear_network(linear_exact, n_chains=16, n_steps=800, burn_in=100, thin=1,
                                           sampler="gibbs-exact")
    U = run.samples["U"].double().numpy()
    m, se = batch_means(U)
    assert abs(m - U_ex) < 4 * se, f"exact {U_ex:.5f}, exact sweep {m:.5f} +- {se:.5f}"
    assert float(chain_diagnostics(U, layout="draw_chain").rhat) <= 1.01


def test_sampler_arguments_are_checked():
    X, Y = _task()
    spec = NetworkSpec(N0=8, N=8, L=1, m=1)
    kw = dict(T=0.5, sigma_a2=0.125, dt=0.03, n_chains=2, n_steps=10, burn_in=4, thin=1,
              observe=_observe, seed=0, device="cpu", progress=False)
    with pytest.raises(ValueError, match="sampler must be one of"):
        sample_posterior(spec, X, Y, sampler="mala-ish", **kw)
    with pytest.raises(ValueError, match=r"anneal_from needs sampler='ula' .*got anneal_from=1\.0$"):
        sample_posterior(spec, X, Y, sampler="gibbs-hmc", anneal_from=1.0, anneal_steps=2, **kw)
    with pytest.raises(ValueError, match="adapt_steps must be an int in"):
        sample_posterior(spec, X, Y, sampler="gibbs-hmc", adapt_steps=9, **kw)
    sig = NetworkSpec(N0=8, N=8, L=1, m=1, activation="sigmoid_erf")
    with pytest.raises(ValueError, match="'gibbs-exact' needs a linear network"):
        sample_posterior(sig, X, Y, sampler="gibbs-exact", **kw)
    with pytest.raises(ValueError, match="scale_moves needs sampler"):
        sample_posterior(spec, X, Y, sampler="ula", scale_moves=True, **kw)
    with pytest.raises(ValueError, match="scale_moves needs sampler"):
        sample_posterior(sig, X, Y, sampler="gibbs-hmc", scale_moves=True, **kw)
    with pytest.raises(TypeError, match="scale_moves must be a bool"):
        sample_posterior(spec, X, Y, sampler="gibbs-hmc", scale_moves="yes", **kw)


def test_block_mask_and_prior_energy():
    from richlazy.simulate import NetworkPosterior

    X, Y = _task()
    post = NetworkPosterior(NetworkSpec(N0=8, N=5, L=2, m=1, activation="erf"), X, Y, T=0.3,
                            sigma_a2=0.5)
    p = post.unflatten(torch.arange(post.D, dtype=torch.float64)[None])
    mask = post.block_mask("A")
    assert torch.equal(torch.arange(post.D, dtype=torch.float64)[mask], p["A"].flatten())
    assert int(post.block_mask("W1", "W2").sum()) == post.D - p["A"].numel()
    th = post.sample_prior(3, generator=torch.Generator().manual_seed(1))
    _, info = post.grad(th)
    assert torch.allclose(post.beta * info["loss"] + post.prior_energy(th), post.energy(th),
                          rtol=1e-12, atol=0)
    with pytest.raises(ValueError, match="names must be blocks of"):
        post.block_mask("B")
    with pytest.raises(ValueError, match="names must name at least one block"):
        post.block_mask()


@pytest.mark.slow
@pytest.mark.usefixtures("one_torch_thread")
def test_gibbs_hmc_with_code_moves_is_exact_on_the_linear_network(linear_exact):
    """The code moves (``code_moves=True``) keep Gibbs-HMC exact: orthogonal inputs (N0 = 10,
    P = 8), N = 8, T = 0.5; U = <|a|^2>/N within 4 batch-means SE of the quadrature."""
    rng = np.random.default_rng(0)
    X = np.sqrt(10) * np.linalg.qr(rng.standard_normal((10, 10)))[0][:, :8]
    Y = np.where(np.arange(8) % 2 == 0, 1.0, -1.0)[:, None]
    N, T, v = 8, 0.5, 1.0 / 8
    U_ex, _ = linear_exact(X.T @ X / 10, Y[:, 0], N, T, v)
    spec = NetworkSpec(N0=10, N=N, L=1, m=1, activation="linear")
    post, run = sample_posterior(spec, X, Y, T=T, sigma_a2=v, dt=0.03, n_chains=16, n_steps=700,
                                 burn_in=100, thin=2, observe=_observe, seed=5, device="cpu",
                                 progress=False, sampler="gibbs-hmc", n_leapfrog=5, code_moves=True,
                                 scale_moves=False)
    m, se = batch_means(run.samples["U"].double().numpy())
    assert abs(m - U_ex) < 4 * se, f"exact {U_ex:.5f}, with code moves {m:.5f} +- {se:.5f}"
    assert se < 0.02 * U_ex


def test_code_moves_arguments_are_checked():
    X, Y = _task()  # P = N0: the inputs are not projected
    kw = dict(T=0.5, sigma_a2=0.125, dt=0.03, n_chains=2, n_steps=4, burn_in=2, thin=1,
              observe=_observe, seed=0, device="cpu", progress=False)
    spec = NetworkSpec(N0=8, N=4, L=1, m=1, activation="sigmoid_erf")
    with pytest.raises(TypeError, match="code_moves must be a bool"):
        sample_posterior(spec, X, Y, sampler="gibbs-hmc", code_moves=1, **kw)
    with pytest.raises(ValueError, match="code_moves needs sampler"):
        sample_posterior(spec, X, Y, sampler="ula", code_moves=True, **kw)
    with pytest.raises(ValueError, match="code_moves needs sampler"):
        sample_posterior(NetworkSpec(N0=8, N=4, L=2, m=1, activation="sigmoid_erf"), X, Y,
                         sampler="gibbs-hmc", code_moves=True, **kw)
    with pytest.raises(ValueError, match="code_moves needs orthogonal"):
        sample_posterior(spec, X, Y, sampler="gibbs-hmc", code_moves=True, **kw)
