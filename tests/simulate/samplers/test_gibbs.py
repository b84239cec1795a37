"""Exact readout draw (blocked Gibbs) for the network and erf posteriors.

Reference values are computed here in numpy from the definition of the potential, independently
of the sampler: for fixed features H the readout conditional has precision
``beta s^2 H H^T + I / v`` and mean ``Sigma beta s H Y`` (seed 000 Methods; seed 002 App. B.3).
"""

from dataclasses import dataclass, replace

import numpy as np
import pytest
import torch
from richlazy.simulate import (
    NetworkPosterior,
    NetworkSpec,
    TwoLayerErfPosterior,
    langevin_init,
    langevin_step,
    make_generator,
    orthogonal_toy_task,
    paper_step_size,
    run_chain,
)
from richlazy.simulate.samplers._gibbs import (
    ReadoutConditional,
    gibbs_readout_step,
    readout_conditional,
    sample_readout,
)
from richlazy.validate.stats import batch_means

pytestmark = pytest.mark.usefixtures("one_torch_thread")
CPU = torch.device("cpu")


def _net(N, P, *, regime="nonlazy", m=1, L=1, activation="linear", T=0.3, sigma_a2=0.5, N0=10,
         dtype=torch.float64, seed=1):
    task = orthogonal_toy_task(P, N0, ratios=(0.5, 0.5), seed=seed)
    Y = task.Y[:, :m] - 0.3 * (np.arange(P) % 3)[:, None]  # not one-hot: a generic target
    spec = NetworkSpec(N0=N0, N=N, L=L, m=m, activation=activation, regime=regime)
    return NetworkPosterior(spec, task.X, Y, T=T, sigma_a2=sigma_a2, dtype=dtype)


def _closed_form(H, Y, s, v, beta):
    """Conditional mean (N, m) and covariance (N, N) of the readout, straight from Phi_A."""
    N = H.shape[0]
    Sigma = np.linalg.inv(beta * s * s * H @ H.T + np.eye(N) / v)
    return Sigma @ (beta * s * H @ Y), Sigma


def _net_reference(post, th1):
    H = post.phi(post.preactivations(th1)[-1])[0].double().numpy()
    return _closed_form(H, post.Y.double().numpy(), post.spec.readout_scale, post.sigma_a2, post.beta)


def _check_draws(A, mu, Sigma, what):
    """A (E, N, m) draws vs N(mu[:, r], Sigma) per column: z-scores of means and covariances."""
    E, N, m = A.shape
    emp_mu = A.mean(0)
    z_mu = (emp_mu - mu) / np.sqrt(np.diag(Sigma)[:, None] / E)
    d = A - mu
    emp_cov = np.einsum("eir,ejr->ij", d, d) / (E * m)  # columns share Sigma; mean known
    se_cov = np.sqrt((np.outer(np.diag(Sigma), np.diag(Sigma)) + Sigma**2) / (E * m))
    z_cov = (emp_cov - Sigma) / se_cov
    assert np.abs(z_mu).max() < 5, f"{what}: mean z-scores {np.abs(z_mu).max():.2f}"
    assert np.abs(z_cov).max() < 5, f"{what}: covariance z-scores {np.abs(z_cov).max():.2f}"


NET_CASES = [  # N, P, regime, m, L, activation
    (5, 8, "nonlazy", 1, 1, "linear"),
    (12, 6, "lazy", 2, 2, "sigmoid_erf"),
    (6, 9, "lazy", 2, 1, "relu"),
    (10, 4, "nonlazy", 1, 2, "erf"),
    (9, 5, "nonlazy", 2, 2, "sigmoid_erf"),
]


@pytest.mark.parametrize("N,P,regime,m,L,activation", NET_CASES)
def test_network_readout_draws_have_the_closed_form_conditional_law(N, P, regime, m, L, activation):
    post = _net(N, P, regime=regime, m=m, L=L, activation=activation, T=0.2 if regime == "nonlazy" else 0.05)
    th1 = post.sample_prior(1, generator=make_generator(0))
    mu, Sigma = _net_reference(post, th1)
    E = 12_000
    th = th1.expand(E, -1).contiguous()
    auto = "weight" if N <= P else "function"
    for seed, method in enumerate(("weight", "function")):
        rc = readout_conditional(post, th1, method=method)
        assert rc.method == method
        np.testing.assert_allclose(rc.mean[0].numpy(), mu, rtol=1e-10, atol=1e-12 * np.abs(mu).max())
        np.testing.assert_allclose(rc.cov[0].numpy(), Sigma, rtol=1e-10, atol=1e-12 * Sigma.max())
        assert rc.trace.item() == pytest.approx(np.trace(Sigma), rel=1e-11)
        rb = rc.second_moment()[0].numpy()  # E[A^T A / N | hidden]
        np.testing.assert_allclose(rb, (mu.T @ mu + np.trace(Sigma) * np.eye(m)) / N, rtol=1e-10)
        new = sample_readout(post, th, generator=make_generator(10 + seed), method=method)
        p_new, p_old = post.unflatten(new), post.unflatten(th)
        for k in p_new:  # hidden block untouched, input not modified
            if k != "A":
                assert torch.equal(p_new[k], p_old[k])
        _check_draws(p_new["A"].numpy(), mu, Sigma, f"{method} form")
    assert readout_conditional(post, th1).method == auto
    # the trace-only path gives the same trace as the covariance path
    for method in ("weight", "function"):
        t = readout_conditional(post, th1, method=method, covariance=False)
        assert t.cov is None and t.trace.item() == pytest.approx(np.trace(Sigma), rel=1e-11)


def test_the_two_forms_agree_on_a_batch_and_in_float32():
    post = _net(7, 7, regime="nonlazy", m=2, L=2, activation="sigmoid_erf", T=0.1)
    th = post.sample_prior(6, generator=make_generator(3))
    a = readout_conditional(post, th, method="weight")
    b = readout_conditional(post, th, method="function")
    scale = a.mean.abs().max()
    assert float((a.mean - b.mean).abs().max() / scale) < 1e-10
    assert float((a.cov - b.cov).abs().max() / a.cov.abs().max()) < 1e-10
    # float32: same law to single precision, draws stay float32
    p32 = _net(7, 7, regime="nonlazy", m=2, L=2, activation="sigmoid_erf", T=0.1, dtype=torch.float32)
    th32 = th.float()
    for method in ("weight", "function"):
        c = readout_conditional(p32, th32, method=method)
        assert c.mean.dtype == torch.float32
        assert float((c.mean.double() - a.mean).abs().max() / scale) < 1e-4
        new = sample_readout(p32, th32, generator=make_generator(0), method=method)
        assert new.dtype == torch.float32 and bool(torch.isfinite(new).all())


def _erf_reference(post, W, Xs, ys):
    H = np.asarray(torch.erf(torch.as_tensor(Xs) @ torch.as_tensor(W).T).T)  # (N, P)
    return _closed_form(H, ys[:, None], 1.0, 1.0 / post.prec_a, 1.0 / post.kappa)


@pytest.mark.parametrize("per_chain", [False, True])
def test_erf_readout_draws_have_the_closed_form_conditional_law(per_chain):
    rng = np.random.default_rng(4)
    N, P, d = 9, 6, 4
    X2 = torch.as_tensor(rng.standard_normal((2, P, d)))
    y2 = torch.as_tensor(rng.standard_normal((2, P)))
    E = 12_000
    if per_chain:  # two training sets, each shared by half of the chains
        X, y = X2.repeat_interleave(E // 2, 0), y2.repeat_interleave(E // 2, 0)
    else:
        X, y = X2[0], y2[0]
    post = TwoLayerErfPosterior(X, y, N=N, kappa=0.05, sigma_a2=1.5, chi=2.0)
    W = rng.standard_normal((N, d)) / np.sqrt(d)
    th = torch.zeros(E, post.dim, dtype=torch.float64)
    th[:, : N * d] = torch.as_tensor(W).reshape(-1)
    sets = [0, 1] if per_chain else [0]
    for seed, method in enumerate(("weight", "function")):
        new = sample_readout(post, th, generator=make_generator(seed), method=method)
        assert torch.equal(new[:, : N * d], th[:, : N * d])
        rc = readout_conditional(post, th, method=method, covariance=False)
        for k in sets:
            rows = slice(k * (E // 2), (k + 1) * (E // 2)) if per_chain else slice(None)
            mu, Sigma = _erf_reference(post, W, X2[k].numpy(), y2[k].numpy())
            np.testing.assert_allclose(rc.mean[rows][0].numpy(), mu, rtol=1e-10)
            _check_draws(new[rows, N * d:, None].numpy(), mu, Sigma, f"erf set {k}, {method}")


def test_per_chain_beta_ladder_matches_scalar_beta_row_by_row():
    post = _net(6, 8, regime="lazy", m=2, L=2, activation="sigmoid_erf", T=0.2)
    th = post.sample_prior(4, generator=make_generator(2))
    ladder = torch.tensor([0.5, 1.0, 3.0, 10.0], dtype=torch.float64) * post.beta
    for method in ("weight", "function"):
        lad = sample_readout(post, th, generator=make_generator(5), beta=ladder, method=method)
        rc = readout_conditional(post, th, beta=ladder, method=method)
        for e in range(4):
            one = sample_readout(post, th, generator=make_generator(5), beta=float(ladder[e]),
                                 method=method)
            assert torch.equal(lad[e], one[e]), (method, e)
            rc1 = readout_conditional(post, th, beta=float(ladder[e]), method=method)
            assert torch.equal(rc.mean[e], rc1.mean[e]) and torch.equal(rc.cov[e], rc1.cov[e])
        # default beta == posterior.beta, through the same path
        assert torch.equal(sample_readout(post, th, generator=make_generator(5), method=method),
                           sample_readout(post, th, generator=make_generator(5), beta=post.beta,
                                          method=method))
    # a hotter chain has a broader conditional: tr Sigma decreases along the ladder
    tr = readout_conditional(post, th[:1].expand(4, -1), beta=ladder).trace
    assert bool((tr[1:] < tr[:-1]).all())


# --------------------------------------------------------------------------------------------
# blocked Gibbs on the linear network vs the exact finite-N posterior
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_blocked_gibbs_removes_the_readout_step_size_bias_of_ula(linear_exact):
    """L = 1 non-lazy linear network, N = N0 = P = 8, T = 0.5, sigma_a2 = 1/P (the paper's
    choice; it makes the readout mode stiff: ULA eigenvalue ~ dt (1 + G/U + T/sigma_a2) ~ 20 dt
    vs ~ dt (U + T) ~ 1 dt for the hidden weights). At dt = 0.03 plain ULA overestimates
    U = <|a|^2>/N by many standard errors; Gibbs (same ULA step for W, exact readout) agrees with
    the exact value within 4 batch-means standard errors (the remaining hidden-step bias,
    ~0.1 %, is below that)."""
    N = N0 = P = 8
    T, v, dt = 0.5, 1.0 / 8, 0.03
    rng = np.random.default_rng(0)
    X = np.sqrt(N0) * np.linalg.qr(rng.standard_normal((N0, N0)))[0][:, :P]
    Y = np.where(np.arange(P) % 2 == 0, 1.0, -1.0)[:, None]
    U_ex, loss_ex = linear_exact(X.T @ X / N0, Y[:, 0], N, T, v)
    post = NetworkPosterior(NetworkSpec(N0=N0, N=N, L=1, m=1), X, Y, T=T, sigma_a2=v)
    eps = paper_step_size(dt, T)

    def ula(s, g):
        return langevin_step(s, post, step_size=eps, generator=g, noise_dtype=None)

    def observe(s):
        A = post.unflatten(s.theta)["A"]
        return {"U": A.square().sum((1, 2)) / N}

    res = {}
    for name, fn in (("ULA", ula), ("Gibbs", gibbs_readout_step(post, ula))):
        g = make_generator(3)
        run = run_chain(langevin_init(post.sample_prior(64, generator=g)), fn, n_steps=4000,
                        burn_in=800, thin=4, observe=observe, generator=g, progress=False)
        res[name] = batch_means(run.samples["U"].numpy())
    (mu_u, se_u), (mu_g, se_g) = res["ULA"], res["Gibbs"]
    msg = (f"exact U = {U_ex:.5f}; ULA {mu_u:.5f} +- {se_u:.5f} (z = {(mu_u - U_ex) / se_u:+.1f}); "
           f"Gibbs {mu_g:.5f} +- {se_g:.5f} (z = {(mu_g - U_ex) / se_g:+.1f})")
    assert (mu_u - U_ex) / se_u > 5, "ULA should be visibly biased here: " + msg
    assert abs(mu_g - U_ex) < abs(mu_u - U_ex), msg
    assert abs(mu_g - U_ex) < 4 * se_g, msg
    assert 0.5 < loss_ex < 2  # the quadrature is sane (the loss ~ P T / (2N) + bias part)


# --------------------------------------------------------------------------------------------
# driver integration, refresh hook, errors
# --------------------------------------------------------------------------------------------


def _gibbs_run(post, path, n_steps):
    g = make_generator(7)
    st = langevin_init(post.sample_prior(3, generator=g))
    eps = paper_step_size(0.05, 0.1)
    step = gibbs_readout_step(post, lambda s, gg: langevin_step(s, post, step_size=eps, generator=gg))
    return run_chain(st, step, n_steps=n_steps, burn_in=10, thin=10, generator=g,
                     observe=lambda s: {"f": post.outputs(s.theta)}, checkpoint_path=path,
                     checkpoint_every=40, config={"case": "gibbs-resume"}, progress=False)


def test_checkpoint_resume_with_the_gibbs_step_is_bit_exact(tmp_path):
    post = _net(10, 12, m=2, L=2, activation="sigmoid_erf", T=0.1, sigma_a2=0.1, N0=16)
    ref = _gibbs_run(post, None, 200)
    first = _gibbs_run(post, tmp_path / "ck.pt", 100)
    assert first.n_steps == 100
    resumed = _gibbs_run(post, tmp_path / "ck.pt", 200)
    assert resumed.resumed_from == 100
    assert torch.equal(resumed.state.theta, ref.state.theta)
    assert torch.equal(resumed.samples["f"], ref.samples["f"])


@dataclass(frozen=True)
class _CachedState:
    theta: torch.Tensor
    step: int = 0
    energy: torch.Tensor | None = None


def test_refresh_is_applied_after_the_readout_draw_and_the_state_type_is_kept():
    post = _net(6, 8, m=2, activation="relu")
    g = make_generator(0)
    th = post.sample_prior(2, generator=g)
    st = _CachedState(theta=th, energy=post.energy(th))

    def hidden(s, gg):  # ULA on theta; its cached energy goes stale
        new, info = langevin_step(langevin_init(s.theta), post, step_size=1e-3, generator=gg)
        return replace(s, theta=new.theta, step=s.step + 1), info

    step = gibbs_readout_step(post, hidden, refresh=lambda s: replace(s, energy=post.energy(s.theta)))
    new, info = step(st, g)
    assert isinstance(new, _CachedState) and new.step == 1 and "loss" in info
    assert torch.equal(new.energy, post.energy(new.theta))
    assert not torch.equal(post.unflatten(new.theta)["A"], post.unflatten(th)["A"])
    # beta as a function of the step count reaches the readout draw
    seen = []
    step2 = gibbs_readout_step(post, hidden, beta=lambda k: seen.append(k) or post.beta)
    step2(new, g)
    assert seen == [1]


def test_a_diverged_chain_gets_a_nan_readout_and_leaves_the_others_alone():
    post = _net(6, 8, m=2, L=2, activation="sigmoid_erf")
    th = post.sample_prior(3, generator=make_generator(0))
    bad = th.clone()
    bad[1, 0] = float("nan")
    a = sample_readout(post, th, generator=make_generator(1))
    b = sample_readout(post, bad, generator=make_generator(1))
    Ab = post.unflatten(b)["A"]
    assert bool(torch.isnan(Ab[1]).all())
    assert torch.equal(Ab[[0, 2]], post.unflatten(a)["A"][[0, 2]])


def test_cholesky_failure_names_what_to_change():
    # float32 at a tiny temperature, P x P form with N < P: I + c H^T H has P - N unit
    # eigenvalues buried under rounding errors of size ~1e-7 c |H|^2 >> 1
    post = _net(3, 12, regime="lazy", activation="sigmoid_erf", T=1e-12, N0=12, dtype=torch.float32)
    th = post.sample_prior(2, generator=make_generator(0))
    with pytest.raises(ValueError, match="Cholesky.*float64"):
        sample_readout(post, th, generator=make_generator(0), method="function")


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda p, th, g: sample_readout(object(), th, generator=g), TypeError,
         "posterior must be a NetworkPosterior or a TwoLayerErfPosterior, got object"),
        (lambda p, th, g: sample_readout(p, th[:, :-1], generator=g), ValueError,
         r"theta must have shape \(E, D\)"),
        (lambda p, th, g: sample_readout(p, th.float(), generator=g), ValueError,
         "theta must have dtype torch.float64"),
        (lambda p, th, g: sample_readout(p, th, generator=g, beta=0.0), ValueError,
         "beta must be a finite real number > 0, got 0.0"),
        (lambda p, th, g: sample_readout(p, th, generator=g, beta=-1), ValueError,
         "beta must be a finite real number > 0"),
        (lambda p, th, g: sample_readout(p, th, generator=g, beta="hot"), TypeError, "beta must be"),
        (lambda p, th, g: sample_readout(p, th, generator=g, beta=torch.ones(3)), ValueError,
         r"beta must be a number or a tensor of shape \(E,\) = \(2,\).*got shape \(3,\)"),
        (lambda p, th, g: sample_readout(p, th, generator=g, beta=torch.tensor([1.0, 0.0])),
         ValueError, "beta must be finite and > 0 for every chain"),
        (lambda p, th, g: sample_readout(p, th, generator=None), TypeError,
         "generator must be a torch.Generator"),
        (lambda p, th, g: sample_readout(p, th, generator=g, method="qr"), ValueError,
         "method must be one of"),
        (lambda p, th, g: readout_conditional(p, th, covariance=1), TypeError, "covariance must be a bool"),
        (lambda p, th, g: gibbs_readout_step(p, "ula"), TypeError, "hidden_step must be callable"),
        (lambda p, th, g: gibbs_readout_step(p, lambda s, gg: (s, {}), refresh=3), TypeError,
         "refresh must be callable"),
        (lambda p, th, g: gibbs_readout_step(p, lambda s, gg: (s, {}), beta=-2.0), ValueError,
         "beta must be a finite real number > 0"),
        (lambda p, th, g: gibbs_readout_step(None, lambda s, gg: (s, {})), TypeError,
         "posterior must be a NetworkPosterior"),
    ],
)
def test_bad_arguments_name_the_argument(call, exc, match):
    post = _net(4, 6)
    th = post.sample_prior(2, generator=make_generator(0))
    with pytest.raises(exc, match=match):
        call(post, th, make_generator(0))


def test_erf_per_chain_inputs_need_one_chain_per_training_set():
    X = torch.zeros(3, 5, 2, dtype=torch.float64)
    post = TwoLayerErfPosterior(X, torch.zeros(3, 5, dtype=torch.float64), N=4, kappa=0.1)
    with pytest.raises(ValueError, match=r"theta must have one row per training set \(3\)"):
        sample_readout(post, torch.zeros(2, post.dim, dtype=torch.float64), generator=make_generator(0))


def test_readout_conditional_is_a_frozen_result():
    post = _net(4, 6)
    rc = readout_conditional(post, post.sample_prior(2, generator=make_generator(0)))
    assert isinstance(rc, ReadoutConditional) and rc.mean.shape == (2, 4, 1) and rc.cov.shape == (2, 4, 4)
    with pytest.raises(AttributeError):
        rc.method = "weight"


# CUDA-vs-CPU agreement of the same step: only meaningful on a machine with a GPU (CI has none)
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_matches_cpu():
    post = _net(7, 9, m=2, L=2, activation="sigmoid_erf")
    th = post.sample_prior(5, generator=make_generator(0))
    task_post = NetworkPosterior(post.spec, post.X, post.Y, T=post.T, sigma_a2=post.sigma_a2, device="cuda")
    for method in ("weight", "function"):
        a = readout_conditional(post, th, method=method)
        b = readout_conditional(task_post, th.cuda(), method=method)
        assert torch.allclose(a.mean, b.mean.cpu(), rtol=1e-9, atol=1e-12)
        new = sample_readout(task_post, th.cuda(), generator=make_generator(0, "cuda"), method=method)
        assert new.device.type == "cuda" and bool(torch.isfinite(new).all())
    with pytest.raises(ValueError, match="generator lives on 'cpu'"):
        sample_readout(task_post, th.cuda(), generator=make_generator(0))
