"""Exact Gibbs sweep of linear networks and the neuron rescaling move (linear and ReLU).

References are computed here from the definition of the potential, independently of the
sampler: the conditional of one weight matrix of a linear network is the Gaussian with precision
``I/sigma_w2 + beta D^T D`` and mean ``beta Sigma D^T y`` for the explicit design matrix D of
``vec(F) = D vec(W)``; the exact finite-N posterior of the L = 1 network is the quadrature of
``tests/conftest.py``; the rescaling move is checked on the prior (where the marginal laws of
``|w_i|^2`` and ``|a_i|^2`` are chi-square) and for invariance of the outputs.
"""

import numpy as np
import pytest
import torch
from richlazy.simulate import (
    NetworkPosterior,
    NetworkSpec,
    gibbs_linear_step,
    langevin_init,
    make_generator,
    orthogonal_toy_task,
    run_chain,
    sample_linear_layer,
    sample_neuron_scales,
)
from richlazy.validate.stats import batch_means
from sim_helpers import assert_resume_is_bit_exact

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _net(N, P, N0, *, L=1, m=2, regime="nonlazy", activation="linear", project=True, T=0.3,
         sigma_a2=0.7, sigma_w2=1.3, seed=1):
    task = orthogonal_toy_task(P, N0, ratios=(0.5, 0.5), seed=seed)
    rng = np.random.default_rng(seed)
    X = task.X + 0.3 * rng.standard_normal(task.X.shape)  # not orthogonal: a dense R
    Y = task.Y[:, :m] - 0.2
    spec = NetworkSpec(N0=N0, N=N, L=L, m=m, regime=regime, activation=activation)
    return NetworkPosterior(spec, X, Y, T=T, sigma_a2=sigma_a2, sigma_w2=sigma_w2,
                            project_inputs=project)


def _dense_conditional(post, theta, l):
    """Mean and covariance of vec(W^l) (row-major) given the rest, from the quadratic form."""
    p = {k: v[0].numpy() for k, v in post.unflatten(theta).items()}
    N, L, s = post.spec.N, post.spec.L, post.spec.readout_scale
    G = post.input_coordinates.numpy() if post.projected else post.X.numpy()
    G = G / np.sqrt(post.spec.N0)
    for k in range(1, l):
        G = p[f"W{k}"] @ G / np.sqrt(N)
    C = p["A"]
    for k in range(L, l, -1):
        C = p[f"W{k}"].T @ C / np.sqrt(N)
    D = s * np.einsum("ir,jq->rqij", C, G).reshape(-1, N * G.shape[0])  # vec(F^T) = D vec(W)
    cov = np.linalg.inv(post.beta * D.T @ D + np.eye(D.shape[1]) / post.sigma_w2)
    return cov @ (post.beta * D.T @ post.Y.numpy().T.reshape(-1)), cov


@pytest.mark.parametrize("N,P,N0,L,m,regime,project", [
    (4, 5, 7, 1, 2, "nonlazy", True),
    (3, 4, 6, 3, 2, "lazy", False),
    (5, 6, 8, 2, 1, "nonlazy", True),
])
def test_each_layer_draw_has_the_closed_form_conditional_law(N, P, N0, L, m, regime, project):
    post = _net(N, P, N0, L=L, m=m, regime=regime, project=project)
    th = post.sample_prior(1, generator=make_generator(2))
    E = 20_000
    for l in range(1, L + 1):
        mean, cov = _dense_conditional(post, th, l)
        new = sample_linear_layer(post, th.expand(E, -1).contiguous(), l, generator=make_generator(5))
        W = post.unflatten(new)[f"W{l}"].reshape(E, -1).numpy()
        others = [k for k in post.unflatten(new) if k != f"W{l}"]
        for k in others:  # nothing else moved
            assert torch.equal(post.unflatten(new)[k][0], post.unflatten(th)[k][0])
        sd = np.sqrt(np.diag(cov))
        z_mean = (W.mean(0) - mean) / (sd / np.sqrt(E))
        corr_err = (np.cov(W.T) - cov) / np.outer(sd, sd)  # SE of a correlation ~ 1/sqrt(E)
        assert np.abs(z_mean).max() < 5, f"layer {l}: mean z {np.abs(z_mean).max():.2f}"
        assert np.abs(corr_err).max() < 5 / np.sqrt(E), f"layer {l}: cov {np.abs(corr_err).max():.4f}"


def test_exact_gibbs_chain_matches_the_exact_finite_n_posterior(linear_exact):
    """L = 1, m = 1, N = N0 = P = 8, sigma_a2 = 1/P: U = <|a|^2>/N from the exact sweep (with and
    without rescaling moves) within 4 batch-means SE of the quadrature."""
    N = N0 = P = 8
    T, v = 0.5, 1.0 / 8
    rng = np.random.default_rng(0)
    X = np.sqrt(N0) * np.linalg.qr(rng.standard_normal((N0, N0)))[0][:, :P]
    Y = np.where(np.arange(P) % 2 == 0, 1.0, -1.0)[:, None]
    U_ex, _ = linear_exact(X.T @ X / N0, Y[:, 0], N, T, v)
    post = NetworkPosterior(NetworkSpec(N0=N0, N=N, L=1, m=1), X, Y, T=T, sigma_a2=v)
    for scale_moves in (True, False):
        g = make_generator(3)
        run = run_chain(langevin_init(post.sample_prior(32, generator=g)),
                        gibbs_linear_step(post, scale_moves=scale_moves), n_steps=1500, burn_in=100,
                        thin=2, generator=g, progress=False,
                        observe=lambda s: {"U": post.unflatten(s.theta)["A"].square().sum((1, 2)) / N})
        mu, se = batch_means(run.samples["U"].numpy())
        assert abs(mu - U_ex) < 4 * se, f"scale_moves={scale_moves}: {mu:.5f} +- {se:.5f} vs {U_ex:.5f}"
        assert se < 0.01 * U_ex


@pytest.mark.parametrize("activation,L", [("linear", 1), ("relu", 2), ("linear", 3)])
def test_rescaling_leaves_the_outputs_unchanged_and_the_prior_invariant(activation, L):
    """On the prior (the likelihood is constant along the orbit, so the prior is what the move
    must keep): after 5 moves the mean and variance of |w_i|^2 and |a_i|^2 are those of the
    chi-square laws n_in sigma_w2 chi2_{n_in}, m sigma_a2 chi2_m, within 5 SE."""
    post = _net(6, 5, 9, L=L, m=2, activation=activation, T=1e6, sigma_a2=0.4, sigma_w2=1.7)
    th = post.sample_prior(3000, generator=make_generator(0))
    out0 = post.outputs(th)
    g = make_generator(1)
    new, acc = sample_neuron_scales(post, th, generator=g)
    assert torch.allclose(post.outputs(new), out0, rtol=1e-10, atol=1e-12)
    assert not torch.equal(new, th) and float(acc.mean()) > 0.5
    for _ in range(4):
        new, acc = sample_neuron_scales(post, new, generator=g)
    p = post.unflatten(new)
    for name, v in [("W1", post.sigma_w2), ("A", post.sigma_a2)] + (
            [(f"W{L}", post.sigma_w2)] if L > 1 else []):
        sq = p[name].square().sum(2).flatten().numpy() / v
        k = p[name].shape[2]
        n = sq.size / 3  # neurons of one chain are not independent draws: be conservative
        z_mean = (sq.mean() - k) / np.sqrt(2 * k / n)
        z_var = (sq.var() - 2 * k) / np.sqrt((48 * k + 8 * k * k) / n)  # var of a chi2 sample variance
        assert abs(z_mean) < 5 and abs(z_var) < 5, (name, z_mean, z_var)


def test_checkpoint_resume_of_the_exact_sweep_is_bit_exact(tmp_path):
    post = _net(5, 6, 9, L=2, m=2)

    assert_resume_is_bit_exact(post, gibbs_linear_step(post), tmp_path, n_steps=60, checkpoint_every=20,
                               case="gibbs-linear")


def test_a_diverged_chain_stays_nan_and_the_others_are_unaffected():
    post = _net(4, 5, 7, L=2)
    th = post.sample_prior(3, generator=make_generator(0))
    bad = th.clone()
    bad[1, 3] = float("nan")
    step = gibbs_linear_step(post)
    a, _ = step(langevin_init(th), make_generator(1))
    st = langevin_init(th)
    st = type(st)(theta=bad, step=0)
    b, info = step(st, make_generator(1))
    assert bool(torch.isnan(b.theta[1]).all())
    assert torch.isfinite(b.theta[[0, 2]]).all() and b.step == 1
    assert info["scale_acceptance"].shape == (3,)


@pytest.mark.parametrize("call, exc, match", [
    (lambda p, t: sample_linear_layer(_net(4, 5, 7, activation="relu"), t, 1,
                                      generator=make_generator(0)), ValueError, "linear network"),
    (lambda p, t: sample_linear_layer(p, t, 3, generator=make_generator(0)), ValueError,
     "layer must be a hidden layer 1..L = 1..2, got 3"),
    (lambda p, t: sample_linear_layer(p, t, 0, generator=make_generator(0)), ValueError, "layer"),
    (lambda p, t: sample_linear_layer(p, t, 1, generator=None), TypeError, "generator"),
    (lambda p, t: gibbs_linear_step(p, scale_moves=1), TypeError, "scale_moves"),
    (lambda p, t: gibbs_linear_step(p, method="qr"), ValueError, "method"),
    (lambda p, t: sample_neuron_scales(_net(4, 5, 7, activation="sigmoid_erf"), t,
                                       generator=make_generator(0)), ValueError, "homogeneous"),
    (lambda p, t: sample_neuron_scales(p, t[:, :3], generator=make_generator(0)), ValueError, "theta"),
])
def test_bad_arguments_name_the_argument(call, exc, match):
    post = _net(4, 5, 7, L=2)
    th = post.sample_prior(2, generator=make_generator(0))
    with pytest.raises(exc, match=match):
        call(post, th)
