"""The exact single-neuron code move (``sample_neuron_codes``) of one-hidden-layer networks on
orthogonal inputs.

The reference is computed here from the definition of the posterior, independently of the move:
for N = P = 2 the readout integrates out in closed form (each output column is
Y_r ~ N(0, kappa H^T H + I/beta)), so the posterior of the four hidden weights is a 4-D density
that a tensor-product quadrature integrates; the readout's moments follow from its Gaussian
conditional at every node. A chain made of the move alone (it also redraws the readout) must
reproduce those moments within 4 batch-means standard errors.
"""

import math

import numpy as np
import pytest
import torch
from richlazy.simulate import (
    NetworkPosterior,
    NetworkSpec,
    make_generator,
    orthogonal_toy_task,
    sample_neuron_codes,
)
from richlazy.validate.stats import batch_means
from sim_helpers import assert_resume_is_bit_exact

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _small(activation, regime, m, *, T=0.05, sigma_a2=1.0):
    task = orthogonal_toy_task(2, 4, ratios=(0.5, 0.5), seed=3)
    Y = np.array([[0.8, -0.3], [-0.3, 0.5]])[:, :m]
    spec = NetworkSpec(N0=4, N=2, L=1, m=m, activation=activation, regime=regime)
    return NetworkPosterior(spec, task.X, Y, T=T, sigma_a2=sigma_a2, project_inputs=True)


def _phi(activation, z):
    if activation == "sigmoid_erf":
        from scipy.special import erf
        return 0.5 * (1.0 + erf(math.sqrt(math.pi) * z / 2.0))
    return np.maximum(z, 0.0)


def _quadrature_moments(post, n=41, half=6.0):
    """E[mean w^2], E[mean phi(z)], E[phi(z_11) phi(z_21)] and E[|A|^2 / N] by quadrature."""
    N, P, m = 2, 2, post.spec.m
    s, beta, sa2 = post.spec.readout_scale, post.beta, post.sigma_a2
    kappa = s * s * sa2
    d = np.diag(post.input_coordinates.numpy()) / math.sqrt(post.spec.N0)
    Y = post.Y.numpy()
    x = np.linspace(-half, half, n)
    w = np.stack(np.meshgrid(x, x, x, x, indexing="ij"), -1).reshape(-1, N, P)   # (G, N, P)
    H = _phi(post.spec.activation, w * d)
    Sig = kappa * np.einsum("gip,giq->gpq", H, H) + np.eye(P) / beta
    inv, logdet = np.linalg.inv(Sig), np.linalg.slogdet(Sig)[1]
    logp = (-0.5 * (w ** 2).sum((1, 2)) - 0.5 * m * logdet
            - 0.5 * np.einsum("pr,gpq,qr->g", Y, inv, Y))
    wt = np.exp(logp - logp.max())
    wt /= wt.sum()
    # readout given W: precision I/sigma_a2 + beta s^2 H H^T (N x N), mean C beta s H Y
    C = np.linalg.inv(np.eye(N) / sa2 + beta * s * s * np.einsum("gip,gjp->gij", H, H))
    mu = beta * s * np.einsum("gij,gjp,pr->gir", C, H, Y)
    A2 = ((mu ** 2).sum((1, 2)) + m * np.trace(C, axis1=1, axis2=2)) / N
    return np.array([wt @ (w ** 2).mean((1, 2)), wt @ H.mean((1, 2)), wt @ (H[:, 0, 0] * H[:, 1, 0]),
                     wt @ A2])


# the third case: five arbitrary start readouts of which the two best distinct ones are kept, and
# coarse grids whose cells are wide (log-linear cells with steep slopes)
_FEW = dict(readouts=torch.tensor([[1.0, 0.0], [-1.0, 0.5], [0.3, -2.0], [1.0, 0.01], [0.0, 0.0]]),
            max_components=2, n_grid=12, n_grid_fixed_point=8)


@pytest.mark.slow
@pytest.mark.parametrize("activation,regime,m,options", [("sigmoid_erf", "nonlazy", 1, {}),
                                                         ("relu", "lazy", 2, {}),
                                                         ("sigmoid_erf", "nonlazy", 2, _FEW)])
def test_the_move_alone_samples_the_exact_posterior(activation, regime, m, options):
    post = _small(activation, regime, m)
    ref = _quadrature_moments(post)
    g = make_generator(5, "cpu")
    theta = post.sample_prior(16, generator=g)
    recs, accs = [], []
    for k in range(1700):
        theta, acc = sample_neuron_codes(post, theta, generator=g, **options)
        if k >= 200:
            p = post.unflatten(theta)
            H = post.phi(post.preactivations(theta)[0])
            recs.append(torch.stack([p["W1"].square().mean((1, 2)), H.mean((1, 2)), H[:, 0, 0] * H[:, 1, 0],
                                     p["A"].square().sum((1, 2)) / 2], -1).numpy())
            accs.append(acc.numpy())
    mean, se = batch_means(np.array(recs), n_batches=10)
    assert np.all(np.abs(mean - ref) < 4 * se), (mean, ref, se)
    assert np.all(se < 0.03 * np.abs(ref))  # the comparison resolves a few per cent
    assert 0.2 < np.mean(accs) <= 1.0


def test_the_move_changes_codes_of_the_sigmoid_toy_and_keeps_a_valid_state():
    task = orthogonal_toy_task(30, 40, ratios=(0.5, 0.25, 0.25), y_plus=1.0, y_minus=0.5, seed=0)
    post = NetworkPosterior(NetworkSpec(N0=40, N=30, L=1, m=3, activation="sigmoid_erf"), task.X,
                            task.Y, T=0.01, sigma_a2=1 / 30, project_inputs=True)
    g = make_generator(2, "cpu")
    theta = post.sample_prior(2, generator=g)
    theta[1] = float("nan")
    new, acc = sample_neuron_codes(post, theta, generator=g)
    assert torch.isnan(new[1]).all() and acc[1] == 0  # a diverged chain stays as it is
    assert torch.isfinite(new[0]).all() and 0 < acc[0] <= 1
    assert not torch.equal(new[0], theta[0])
    before = theta.clone()
    sample_neuron_codes(post, theta, generator=g)
    assert torch.equal(theta[0], before[0])  # the input is not modified


def test_same_generator_state_gives_the_same_sweep():
    post = _small("sigmoid_erf", "nonlazy", 2)
    th = post.sample_prior(3, generator=make_generator(1, "cpu"))
    a, _ = sample_neuron_codes(post, th, generator=make_generator(9, "cpu"))
    b, _ = sample_neuron_codes(post, th, generator=make_generator(9, "cpu"))
    assert torch.equal(a, b)


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(n_grid=4), ValueError, "n_grid"),
    (dict(grid_halfwidth=0.0), ValueError, "grid_halfwidth"),
    (dict(n_fixed_point=0), ValueError, "n_fixed_point"),
    (dict(n_grid_fixed_point=2), ValueError, "n_grid_fixed_point"),
    (dict(max_components=0), ValueError, "max_components"),
    (dict(readouts=torch.ones(3, 5)), ValueError, "readouts"),
    (dict(readouts=[[1.0, 1.0]]), TypeError, "readouts"),
    (dict(beta=-1.0), ValueError, "beta"),
    (dict(generator=None), TypeError, "generator"),
])
def test_bad_arguments_name_the_argument(kwargs, exc, match):
    post = _small("sigmoid_erf", "nonlazy", 2)
    th = post.sample_prior(2, generator=make_generator(1, "cpu"))
    kw = dict(generator=make_generator(2, "cpu"))
    kw.update(kwargs)
    with pytest.raises(exc, match=match):
        sample_neuron_codes(post, th, **kw)


def test_networks_the_move_does_not_cover_are_refused():
    task = orthogonal_toy_task(4, 6, ratios=(0.5, 0.5), seed=1)
    deep = NetworkPosterior(NetworkSpec(N0=6, N=3, L=2, m=2, activation="sigmoid_erf"), task.X, task.Y,
                            T=0.1, sigma_a2=1.0, project_inputs=True)
    dense = NetworkPosterior(NetworkSpec(N0=6, N=3, L=1, m=2, activation="sigmoid_erf"), task.X, task.Y,
                             T=0.1, sigma_a2=1.0, project_inputs=False)
    assert deep.orthogonal_inputs and not dense.orthogonal_inputs
    g = make_generator(0, "cpu")
    with pytest.raises(ValueError, match="one hidden layer"):
        sample_neuron_codes(deep, deep.sample_prior(1, generator=g), generator=g)
    with pytest.raises(ValueError, match="orthogonal"):
        sample_neuron_codes(dense, dense.sample_prior(1, generator=g), generator=g)
    wide = NetworkPosterior(NetworkSpec(N0=6, N=3, L=1, m=5, activation="sigmoid_erf"), task.X,
                            np.zeros((4, 5)), T=0.1, sigma_a2=1.0, project_inputs=True)
    with pytest.raises(ValueError, match="readouts"):
        sample_neuron_codes(wide, wide.sample_prior(1, generator=g), generator=g)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_orthogonal_inputs_are_recognised_in_either_precision(dtype):
    """The toy task's inputs are orthogonal in float32 too (the QR's off-diagonal rounding is a
    few eps there), so the code move accepts a float32 posterior; inputs with an overlap of 1e-3
    are not orthogonal in either precision."""
    task = orthogonal_toy_task(20, 24, ratios=(0.5, 0.5), seed=2)
    spec = NetworkSpec(N0=24, N=3, L=1, m=2, activation="sigmoid_erf")
    post = NetworkPosterior(spec, task.X, task.Y, T=0.1, sigma_a2=1.0, project_inputs=True, dtype=dtype)
    assert post.orthogonal_inputs
    g = make_generator(0, "cpu")
    th, _ = sample_neuron_codes(post, post.sample_prior(2, generator=g), generator=g)
    assert th.dtype == dtype and bool(torch.isfinite(th).all())
    X = np.array(task.X, dtype=float)
    X[:, 1] += 1e-3 * np.linalg.norm(X[:, 1]) * X[:, 0] / np.linalg.norm(X[:, 0])
    skew = NetworkPosterior(spec, X, task.Y, T=0.1, sigma_a2=1.0, project_inputs=True, dtype=dtype)
    assert skew.projected and not skew.orthogonal_inputs


def test_checkpoint_resume_of_code_sweeps_is_bit_exact(tmp_path):
    from dataclasses import replace

    post = _small("sigmoid_erf", "nonlazy", 2)

    def step(s, g):
        theta, acc = sample_neuron_codes(post, s.theta, generator=g)
        return replace(s, theta=theta, step=s.step + 1), {"code_acceptance": acc}

    assert_resume_is_bit_exact(post, step, tmp_path, n_steps=40, checkpoint_every=10, case="neuron-codes")
