"""Metropolis-adjusted samplers (MALA, HMC), dual-averaging adaptation, replica exchange and the
driver's acceptance bookkeeping: moments against closed forms and quadrature, bit-exact resume."""

import math

import numpy as np
import pytest
import torch
from richlazy.simulate import (
    NetworkPosterior,
    NetworkSpec,
    SamplerDivergedError,
    TwoLayerErfPosterior,
    hermite_target_data,
    langevin_init,
    langevin_step,
    orthogonal_toy_task,
)
from richlazy.simulate.samplers._driver import LowAcceptanceError, run_chain
from richlazy.simulate.samplers._hmc import hmc_init, hmc_step
from richlazy.simulate.samplers._mala import mala_init, mala_step
from richlazy.simulate.samplers._mh import MCMCState, mcmc_end_adaptation, mcmc_refresh
from richlazy.simulate.samplers._tempering import (
    ladder_betas,
    make_replica_exchange_step,
    replica_exchange_swap,
    target_rows,
    temperature_ladder,
)
from scipy.integrate import quad
from sim_helpers import seeded_generator as _gen

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _col(beta, default):
    """beta as a multiplier of (E, D) rows (None: default)."""
    b = default if beta is None else beta
    return b.unsqueeze(1) if torch.is_tensor(b) else b


# -- test potentials: Phi_beta = beta * loss + prior ------------------------------------------


class Gaussian:
    """loss = sum (x - mu)^2 / (2 s2), no prior: N(mu, s2 / beta)."""

    def __init__(self, mu, s2):
        self.mu, self.s2 = mu, s2

    def grad(self, th, beta=None):
        r = th - self.mu
        return _col(beta, 1.0) * r / self.s2, {"loss": 0.5 * (r * r / self.s2).sum(1)}

    def energy(self, th, beta=None):
        r = th - self.mu
        return (1.0 if beta is None else beta) * 0.5 * (r * r / self.s2).sum(1)


class DoubleWell:
    """1-D double well with unequal mode weights and Gaussian tails:
    loss = -log(w exp(-(x-1)^2 / (2 s^2)) + (1-w) exp(-(x+1)^2 / (2 s^2))), prior x^2 / (2 s2);
    default beta = beta0. (A quartic well (x^2-1)^2 has tails on which MALA is not geometrically
    ergodic (Roberts & Tweedie 1996): hot replicas get trapped far out. Gaussian tails avoid that.)"""

    def __init__(self, beta0, w, width, s2):
        self.beta0, self.w, self.width, self.s2 = beta0, w, width, s2

    def _parts(self, th):  # log-weights of the two wells (E, 2)
        c = 1.0 / (2 * self.width ** 2)
        return torch.cat([math.log(self.w) - c * (th - 1.0) ** 2,
                          math.log(1 - self.w) - c * (th + 1.0) ** 2], dim=1)

    def grad(self, th, beta=None):
        a = self._parts(th)
        r = torch.softmax(a, dim=1)
        gl = (r[:, :1] * (th - 1.0) + r[:, 1:] * (th + 1.0)) / self.width ** 2
        return _col(beta, self.beta0) * gl + th / self.s2, {"loss": -torch.logsumexp(a, dim=1)}

    def energy(self, th, beta=None):
        b = self.beta0 if beta is None else beta
        return -b * torch.logsumexp(self._parts(th), dim=1) + (th * th).sum(1) / (2.0 * self.s2)

    def p_positive(self, beta):
        c = 1.0 / (2 * self.width ** 2)

        def f(x):
            mix = self.w * math.exp(-c * (x - 1) ** 2) + (1 - self.w) * math.exp(-c * (x + 1) ** 2)
            return mix ** beta * math.exp(-x * x / (2 * self.s2))

        lo, hi = quad(f, -np.inf, 0)[0], quad(f, 0, np.inf)[0]
        return hi / (lo + hi)


class BayesLinReg:
    """loss = |y - X w|^2 / (2 s2), prior |w|^2 / (2 tau2): posterior precision
    Lam = beta X^T X / s2 + I / tau2, mean Lam^-1 beta X^T y / s2."""

    def __init__(self, X, y, s2, tau2):
        self.X, self.y, self.s2, self.tau2 = X, y, s2, tau2

    def grad(self, th, beta=None):
        r = th @ self.X.T - self.y
        loss = 0.5 * (r * r).sum(1) / self.s2
        return _col(beta, 1.0) * (r @ self.X) / self.s2 + th / self.tau2, {"loss": loss}

    def energy(self, th, beta=None):
        r = th @ self.X.T - self.y
        b = 1.0 if beta is None else beta
        return b * 0.5 * (r * r).sum(1) / self.s2 + 0.5 * (th * th).sum(1) / self.tau2

    def moments(self, beta):
        X, y = self.X.double().cpu().numpy(), self.y.double().cpu().numpy()
        Lam = beta * X.T @ X / self.s2 + np.eye(X.shape[1]) / self.tau2
        return np.linalg.solve(Lam, beta * X.T @ y / self.s2), np.linalg.inv(Lam)


def _blr(device="cpu", dtype=torch.float64):
    rng = np.random.default_rng(0)
    X = torch.tensor(rng.standard_normal((12, 3)), dtype=dtype, device=device)
    X[:, 1] += 0.8 * X[:, 0]  # correlated posterior
    y = torch.tensor(rng.standard_normal(12), dtype=dtype, device=device)
    return BayesLinReg(X, y, s2=0.5, tau2=2.0)


def _z(x, exact):
    """x (S, E, ...) samples of E independent chains: z-scores of the across-chain mean of the
    per-chain time averages against ``exact`` (SE from the spread across chains)."""
    a = x.double().mean(0).cpu().numpy()
    m, se = a.mean(0), a.std(0, ddof=1) / math.sqrt(a.shape[0])
    return (m - exact) / se


def _trace(state, step, n, keep_from):
    xs = []
    for i in range(n):
        state, _ = step(state, i)
        if i >= keep_from:
            xs.append(state.theta)
    return state, torch.stack(xs)


# -- Gaussian: exact samplers fix the ULA bias -------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_gaussian_mala_hmc_exact_where_ula_is_biased(dtype):
    mu = torch.tensor([1.0, -2.0, 0.5], dtype=dtype)
    s2 = torch.tensor([1.0, 0.25, 4.0], dtype=dtype)
    pot = Gaussian(mu, s2)
    E, eps = 2000, 0.25  # ULA: eps * lambda_max / 2 = 0.5 -> variance of coordinate 1 doubled
    x0 = torch.zeros(E, 3, dtype=dtype)
    g = _gen(0)
    mu_np, s2_np = mu.double().numpy(), s2.double().numpy()
    runs = {
        "mala": (mala_init(x0, pot, step_size=eps),
                 lambda s, i: mala_step(s, pot, generator=g)),
        "hmc": (hmc_init(x0, pot, step_size=0.45),
                lambda s, i: hmc_step(s, pot, generator=g, n_leapfrog=4)),
        "ula": (langevin_init(x0), lambda s, i: langevin_step(s, pot, step_size=eps, generator=g)),
    }
    res = {}
    for name, (st, step) in runs.items():
        _, x = _trace(st, step, 350, 100)
        res[name] = (_z(x, mu_np), _z((x - mu) ** 2, s2_np), x)
    for name in ("mala", "hmc"):
        zm, zv, _ = res[name]
        assert np.all(np.abs(zm) < 4.5), (name, zm)
        assert np.all(np.abs(zv) < 4.5), (name, zv)
    # ULA at the same eps: mean right, variance biased exactly as Euler-Maruyama predicts
    zm, zv, x = res["ula"]
    assert np.all(np.abs(zm) < 4.5), zm
    assert zv[1] > 20, zv
    lam = 1.0 / s2_np
    assert np.all(np.abs(_z((x - mu) ** 2, 1.0 / (lam * (1 - eps * lam / 2))) < 4.5))


def test_dual_averaging_reaches_target_acceptance_and_freezes():
    """Dual averaging drives the acceptance during adaptation to the target (Hbar -> 0); the
    averaged step size it freezes is a little smaller than the fluctuating adaptive ones, so the
    acceptance after warm-up lies at or somewhat above the target."""
    pot = Gaussian(torch.zeros(4, dtype=torch.float64), torch.tensor([1.0, 0.1, 3.0, 0.5],
                                                                       dtype=torch.float64))
    x0 = torch.zeros(500, 4, dtype=torch.float64)
    for init, step, kw, target in ((mala_init, mala_step, {}, 0.574),
                                   (hmc_init, hmc_step, {"n_leapfrog": 3}, 0.8)):
        g = _gen(3)
        st = init(x0, pot, step_size=1e-3)  # far too small: adaptation must grow it
        acc = []
        for _ in range(300):
            st, info = step(st, pot, generator=g, adapt=True, target_accept=target, **kw)
            assert info["adapting"] is True
            acc.append(info["accept_prob"])
        assert st.n_adapt == 300
        during = float(torch.stack(acc[-150:]).mean())
        assert abs(during - target) < 0.03, (target, during)
        ended = mcmc_end_adaptation(st)
        assert torch.equal(ended.step_size, torch.exp(st.da_log_eps_bar)) and ended.n_adapt == 0
        acc = []
        for i in range(200):
            st, info = step(st, pot, generator=g, **kw)
            acc.append(info["accept_prob"])
            if i == 0:  # the first non-adaptive step fixes the averaged step size
                assert torch.equal(st.step_size, ended.step_size)
        assert torch.equal(st.step_size, ended.step_size) and st.n_adapt == 0
        assert float(st.step_size.min()) > 0.05
        after = float(torch.stack(acc).mean())
        assert target - 0.05 < after < target + 0.15, (target, after)


# -- double well: replica exchange crosses the barrier -----------------------------------------


def test_replica_exchange_double_well_matches_quadrature():
    pot = DoubleWell(beta0=1.0, w=0.3, width=0.25, s2=4.0)  # barrier ~7.3 at the target
    exact = pot.p_positive(1.0)
    R, K = 200, 6
    ladder = temperature_ladder(1.0, 1.0 / 32, K)
    st = mala_init(torch.full((R * K, 1), -1.0, dtype=torch.float64), pot, step_size=0.02,
                   beta=ladder_betas(ladder, R))
    step = make_replica_exchange_step(pot, n_ladders=R, method="mala", adapt_steps=200)
    run = run_chain(st, step, n_steps=1000, generator=_gen(1), burn_in=200, progress=False,
                    observe=lambda s: {"x": target_rows(s.theta[:, 0], R)})
    frac = (run.samples["x"] > 0).double().mean(0).numpy()  # per ladder
    p, se = frac.mean(), frac.std(ddof=1) / math.sqrt(R)
    assert abs(p - exact) < 4.5 * se and abs(p - exact) < 0.03, (p, se, exact)
    assert run.swap_rates.shape == (K - 1,)
    assert bool(((run.swap_rates > 0.05) & (run.swap_rates < 1)).all()), run.swap_rates
    assert run.acceptance.shape == (R * K,) and not bool(run.low_acceptance.any())
    # plain MALA at the target temperature, with the step size adapted there, from x = -1:
    # without swaps it stays in its well
    eps = target_rows(run.state.step_size, R)
    st = mala_init(torch.full((R, 1), -1.0, dtype=torch.float64), pot, step_size=eps)
    plain = run_chain(st, lambda s, g: mala_step(s, pot, generator=g), n_steps=1000, generator=_gen(2),
                      burn_in=200, progress=False, observe=lambda s: {"x": s.theta[:, 0]})
    assert float((plain.samples["x"] > 0).double().mean()) < 0.15 * exact, exact
    assert float(plain.acceptance.mean()) > 0.4


def test_replica_swap_moves_positions_and_recomputes_caches():
    pot = DoubleWell(beta0=1.0, w=0.4, width=0.5, s2=2.0)
    R, K = 3, 4
    betas = ladder_betas(temperature_ladder(4.0, 0.5, K), R)
    th = torch.linspace(-1.5, 1.5, R * K, dtype=torch.float64).unsqueeze(1)
    st = mala_init(th, pot, step_size=0.1, beta=betas)
    n_moved = 0
    for parity in (0, 1, 0, 1):
        new, info = replica_exchange_swap(st, pot, n_ladders=R, generator=_gen(parity + 7), parity=parity)
        assert torch.isnan(info["swap_accept"][1 - parity::2]).all()
        # the multiset of positions within each ladder is preserved; rows keep their weights
        a, _ = st.theta.view(R, K).sort(1)
        b, _ = new.theta.view(R, K).sort(1)
        assert torch.equal(a, b) and torch.equal(new.beta, betas)
        ref = mcmc_refresh(new, pot)
        assert torch.equal(new.energy, ref.energy) and torch.equal(new.grad, ref.grad)
        # only pairs of the given parity moved: with K = 4 and parity 1, rows k = 0 and 3 stay
        if parity == 1:
            moved = (new.theta != st.theta).view(R, K)
            assert not bool(moved[:, 0].any() or moved[:, 3].any())
        n_moved += int((new.theta != st.theta).sum())
        st = new
    assert n_moved > 0
    # acceptance formula: a single ladder, two replicas, known losses
    st2 = mala_init(torch.tensor([[1.0], [0.0]], dtype=torch.float64), pot, step_size=0.1,
                    beta=torch.tensor([2.0, 0.5], dtype=torch.float64))
    _, info = replica_exchange_swap(st2, pot, n_ladders=1, generator=_gen(0), parity=0)
    l0, l1 = float(st2.loss[0]), float(st2.loss[1])
    a = math.exp((2.0 - 0.5) * (l0 - l1))
    assert a < 0.9 and float(info["swap_accept"][0]) == pytest.approx(a, rel=1e-12)


# -- Bayesian linear regression with per-chain beta --------------------------------------------


@pytest.mark.parametrize("method", ["mala", "hmc"])
def test_bayes_linreg_posterior_with_per_chain_beta(method):
    pot = _blr()
    E = 1000
    beta = torch.cat([torch.ones(E // 2), torch.full((E // 2,), 0.3)]).double()
    precond = torch.full((3,), pot.tau2, dtype=torch.float64)  # prior variances
    x0 = torch.zeros(E, 3, dtype=torch.float64)
    g = _gen(5)
    if method == "mala":
        st = mala_init(x0, pot, step_size=0.01, precond=precond, beta=beta)
        step = lambda s, i: mala_step(s, pot, generator=g, adapt=i < 150)  # noqa: E731
    else:
        st = hmc_init(x0, pot, step_size=0.05, precond=precond, beta=beta)
        step = lambda s, i: hmc_step(s, pot, generator=g, n_leapfrog=5, adapt=i < 150)  # noqa: E731
    st, x = _trace(st, step, 450, 150)
    for half, b in ((slice(0, E // 2), 1.0), (slice(E // 2, E), 0.3)):
        mu, S = pot.moments(b)
        xs = x[:, half].numpy()
        assert np.all(np.abs(_z(torch.tensor(xs), mu)) < 4.5)
        d = xs - mu
        zc = _z(torch.tensor(d[:, :, :, None] * d[:, :, None, :]), S)
        assert np.all(np.abs(zc) < 4.5), (b, zc)
    assert int(st.n_accept.min()) > 50


# -- block updates ---------------------------------------------------------------------------


@pytest.mark.parametrize("sel", [(0, 2), (0, 1)])  # HMC: the general mask path, the block fast path
@pytest.mark.parametrize("method", ["mala", "hmc"])
def test_masked_block_update_samples_the_conditional(method, sel):
    pot = _blr()
    E = 1000
    A = list(sel)
    f = ({0, 1, 2} - set(A)).pop()  # the fixed coordinate
    mask = torch.zeros(3, dtype=torch.bool)
    mask[A] = True
    mu, S = pot.moments(1.0)
    Lam = np.linalg.inv(S)
    g = _gen(11)
    x0 = torch.tensor(np.random.default_rng(1).standard_normal((E, 3)) * 0.7 + mu)
    if method == "mala":
        st = mala_init(x0, pot, step_size=0.02)
        step = lambda s, i: mala_step(s, pot, generator=g, mask=mask, adapt=i < 100)  # noqa: E731
    else:
        st = hmc_init(x0, pot, step_size=0.1)
        step = lambda s, i: hmc_step(s, pot, generator=g, n_leapfrog=4, mask=mask, adapt=i < 100)  # noqa: E731
    st, x = _trace(st, step, 350, 100)
    assert torch.equal(st.theta[:, f], x0[:, f]) and torch.equal(x[:, :, f], x0[:, f].expand(250, E))
    # conditional of w_A given w_f: mean mu_A - Lam_AA^-1 Lam_Af (w_f - mu_f)
    LAA = Lam[np.ix_(A, A)]
    cmean = mu[A][None, :] - (np.linalg.solve(LAA, Lam[A, f])[None, :] * (x0[:, f:f + 1].numpy() - mu[f]))
    res = x[:, :, A].numpy() - cmean[None]
    assert np.all(np.abs(_z(torch.tensor(res), np.zeros(2))) < 4.5)
    zc = _z(torch.tensor(res[:, :, :, None] * res[:, :, None, :]), np.linalg.inv(LAA))
    assert np.all(np.abs(zc) < 4.5), zc
    assert float(st.n_accept.double().mean()) > 100


# -- tempered network posteriors ---------------------------------------------------------------


def _net_posterior():
    task = orthogonal_toy_task(6, 8, seed=2)
    spec = NetworkSpec(N0=8, N=5, L=2, m=3, activation="sigmoid_erf")
    return NetworkPosterior(spec, task.X, task.Y, T=0.2, sigma_a2=0.3)


def _erf_posterior():
    X, y = hermite_target_data(7, 4, generator=_gen(3), dtype=torch.float64)
    return TwoLayerErfPosterior(X, y, N=3, kappa=0.4, chi=2.0)


@pytest.mark.parametrize("which", ["network", "erf"])
def test_per_chain_beta_matches_float_beta_and_autograd(which):
    post = _net_posterior() if which == "network" else _erf_posterior()
    theta = post.sample_prior(4, generator=_gen(4))
    betas = torch.tensor([0.5, 1.0, 7.0, 23.0], dtype=torch.float64)
    g_t, info_t = post.grad(theta, beta=betas)
    e_t = post.energy(theta, beta=betas)
    for e in range(4):
        g_f, info_f = post.grad(theta, beta=float(betas[e]))
        assert torch.equal(g_t[e], g_f[e])
        assert torch.equal(post.energy(theta, beta=float(betas[e]))[e], e_t[e])
        assert torch.equal(info_t["loss"], info_f["loss"])
    # grad is the gradient of energy, for tempered and default weights
    for b in (betas, None):
        th = theta.clone().requires_grad_(True)
        (post.energy(th, beta=b) if b is not None else post.energy(th)).sum().backward()
        g = post.grad(theta, beta=b)[0] if b is not None else post.grad(theta)[0]
        torch.testing.assert_close(th.grad, g, rtol=1e-10, atol=1e-12)
    # Phi = beta * loss + prior, and the default weight is post.beta
    d = post.energy(theta, beta=betas) - post.energy(theta, beta=2 * betas)
    torch.testing.assert_close(d, -betas * info_t["loss"], rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(post.energy(theta), post.energy(theta, beta=post.beta), rtol=1e-12, atol=0)
    torch.testing.assert_close(post.grad(theta)[0], post.grad(theta, beta=post.beta)[0], rtol=1e-12,
                               atol=1e-14)


def test_replica_exchange_hmc_on_network_posterior():
    post = _net_posterior()
    theta = post.sample_prior(6, generator=_gen(5))
    ladder = temperature_ladder(post.beta, post.beta / 10, 3)
    st = mala_init(theta, post, step_size=1e-3, precond=1.0 / post.precision, beta=ladder_betas(ladder, 2))
    step = make_replica_exchange_step(post, n_ladders=2, method="hmc", n_leapfrog=3, adapt_steps=30)
    run = run_chain(st, step, n_steps=60, generator=_gen(6), progress=False)
    assert run.acceptance.shape == (6,) and bool((run.acceptance > 0.3).all()), run.acceptance
    ref = mcmc_refresh(run.state, post)
    torch.testing.assert_close(run.state.energy, ref.energy, rtol=1e-12, atol=1e-12)


# -- checkpoint / resume -----------------------------------------------------------------------


def _resumable(kind, tmp, n_steps, crash_at=None, ck=True):
    if kind == "replica":
        pot = DoubleWell(beta0=1.0, w=0.3, width=0.3, s2=4.0)
        R, K = 4, 3
        st = mala_init(torch.full((R * K, 1), -1.0, dtype=torch.float64), pot, step_size=0.05,
                       beta=ladder_betas(temperature_ladder(1.0, 0.1, K), R))
        step = make_replica_exchange_step(pot, n_ladders=R, method="mala", adapt_steps=30)
    else:
        pot = _blr()
        x0 = torch.zeros(8, 3, dtype=torch.float64)
        if kind == "mala":
            st = mala_init(x0, pot, step_size=0.05)
            step = lambda s, g: mala_step(s, pot, generator=g, adapt=s.step < 30)  # noqa: E731
        else:
            st = hmc_init(x0, pot, step_size=0.1)
            step = lambda s, g: hmc_step(s, pot, generator=g, n_leapfrog=3, adapt=s.step < 30)  # noqa: E731

    def observe(s):
        if crash_at is not None and s.step >= crash_at:
            raise KeyboardInterrupt  # simulated interruption
        return {"theta": s.theta}

    return run_chain(st, step, n_steps=n_steps, generator=_gen(9), burn_in=10, observe=observe,
                     checkpoint_path=(tmp / "ck.pt") if ck else None, checkpoint_every=40,
                     config={"kind": kind}, progress=False, acceptance_window=20)


@pytest.mark.parametrize("kind", ["mala", "hmc", "replica"])
def test_checkpoint_resume_is_bit_exact(tmp_path, kind):
    ref = _resumable(kind, tmp_path / "a", 120, ck=False)
    with pytest.raises(KeyboardInterrupt):
        _resumable(kind, tmp_path / "b", 120, crash_at=67)
    resumed = _resumable(kind, tmp_path / "b", 120)
    assert resumed.resumed_from == 40
    for f in ("theta", "step_size", "energy", "grad", "n_accept", "da_log_eps_bar"):
        assert torch.equal(getattr(resumed.state, f), getattr(ref.state, f)), f
    assert torch.equal(resumed.samples["theta"], ref.samples["theta"])
    assert torch.equal(resumed.acceptance, ref.acceptance)
    if kind == "replica":
        assert torch.equal(resumed.swap_rates, ref.swap_rates)
    else:
        assert resumed.swap_rates is None


# -- acceptance collapse ---------------------------------------------------------------------


def test_collapsed_acceptance_raises_with_the_fix():
    pot = Gaussian(torch.zeros(3, dtype=torch.float64), torch.tensor([1.0, 0.25, 4.0], dtype=torch.float64))
    st = mala_init(torch.zeros(16, 3, dtype=torch.float64), pot, step_size=50.0)
    step = lambda s, g: mala_step(s, pot, generator=g)  # noqa: E731
    with pytest.raises(LowAcceptanceError, match="reduce step_size") as err:
        run_chain(st, step, n_steps=200, generator=_gen(0), progress=False, acceptance_window=50)
    assert isinstance(err.value, SamplerDivergedError) and "step 50" in str(err.value)
    run = run_chain(st, step, n_steps=200, generator=_gen(0), progress=False, acceptance_window=50,
                    throw=False)
    assert bool(run.low_acceptance.all()) and float(run.acceptance.max()) < 0.05
    # the check can be disabled; a reasonable step size passes it; ULA reports no acceptance
    run = run_chain(st, step, n_steps=60, generator=_gen(0), progress=False, min_acceptance=None)
    assert not bool(run.low_acceptance.any())
    ok = run_chain(mala_init(torch.zeros(16, 3, dtype=torch.float64), pot, step_size=0.2), step,
                   n_steps=100, generator=_gen(0), progress=False, acceptance_window=50)
    assert float(ok.acceptance.min()) > 0.3
    ula = run_chain(langevin_init(torch.zeros(4, 3, dtype=torch.float64)),
                    lambda s, g: langevin_step(s, pot, step_size=0.1, generator=g), n_steps=5,
                    generator=_gen(0), progress=False)
    assert ula.acceptance is None and ula.swap_rates is None and ula.low_acceptance is None


# -- devices, ladders, bad arguments -----------------------------------------------------------


def test_temperature_ladder_is_geometric():
    lad = temperature_ladder(8.0, 0.25, 6)
    assert torch.allclose(lad, torch.tensor([8.0, 4.0, 2.0, 1.0, 0.5, 0.25], dtype=torch.float64))
    assert temperature_ladder(3.0, 3.0, 1).tolist() == [3.0]
    assert ladder_betas(lad, 2).tolist() == lad.tolist() * 2
    x = torch.arange(12.0).view(12, 1)
    assert target_rows(x, 2)[:, 0].tolist() == [0.0, 6.0]


# CUDA-vs-CPU agreement of the same step: only meaningful on a machine with a GPU (CI has none)
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_samplers_run_on_cuda(dtype):
    dev = torch.device("cuda")
    pot = Gaussian(torch.tensor([1.0, -1.0], dtype=dtype, device=dev), torch.tensor([1.0, 0.25], dtype=dtype,
                                                                                  device=dev))
    g = _gen(0, "cuda")
    x0 = torch.zeros(4000, 2, dtype=dtype, device=dev)
    for st, step in ((mala_init(x0, pot, step_size=0.3), lambda s, i: mala_step(s, pot, generator=g)),
                     (hmc_init(x0, pot, step_size=0.4),
                      lambda s, i: hmc_step(s, pot, generator=g, n_leapfrog=3))):
        st, x = _trace(st, step, 250, 50)
        assert st.theta.device.type == "cuda" and st.theta.dtype == dtype
        assert np.all(np.abs(_z(x, np.array([1.0, -1.0]))) < 4.5)
        assert np.all(np.abs(_z((x - pot.mu) ** 2, np.array([1.0, 0.25]))) < 4.5)
    pot2 = DoubleWell(beta0=1.0, w=0.3, width=0.3, s2=4.0)
    st = mala_init(torch.zeros(8, 1, dtype=dtype, device=dev), pot2, step_size=0.05,
                   beta=ladder_betas(temperature_ladder(1.0, 0.1, 4, dtype=dtype, device=dev), 2))
    run = run_chain(st, make_replica_exchange_step(pot2, n_ladders=2, adapt_steps=20), n_steps=50,
                    generator=g, progress=False)
    assert run.swap_rates.shape == (3,) and run.state.theta.device.type == "cuda"


def test_bad_arguments_name_the_argument():
    pot = Gaussian(torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64))
    x0 = torch.zeros(4, 2, dtype=torch.float64)
    st = mala_init(x0, pot, step_size=0.1)
    rst = mala_init(x0, pot, step_size=0.1, beta=torch.ones(4, dtype=torch.float64))
    g = _gen(0)
    post = _net_posterior()
    th = post.sample_prior(3, generator=g)

    class NoEnergy:
        def grad(self, th, beta=None):
            return th, {"loss": th.sum(1)}

    cases = [
        (lambda: mala_init("x", pot, step_size=0.1), TypeError, "theta"),
        (lambda: mala_init(torch.zeros(3), pot, step_size=0.1), ValueError, "theta"),
        (lambda: mala_init(x0.long(), pot, step_size=0.1), ValueError, "theta"),
        (lambda: mala_init(x0 * math.nan, pot, step_size=0.1), ValueError, "theta"),
        (lambda: mala_init(x0, pot, step_size=0.0), ValueError, "step_size"),
        (lambda: mala_init(x0, pot, step_size=math.nan), ValueError, "step_size"),
        (lambda: mala_init(x0, pot, step_size="big"), TypeError, "step_size"),
        (lambda: mala_init(x0, pot, step_size=torch.ones(3)), ValueError, "step_size"),
        (lambda: hmc_init(x0, pot, step_size=0.1, precond=torch.ones(3)), ValueError, "precond"),
        (lambda: hmc_init(x0, pot, step_size=0.1, precond=-torch.ones(2)), ValueError, "precond"),
        (lambda: mala_init(x0, pot, step_size=0.1, beta=-1.0), ValueError, "beta"),
        (lambda: mala_init(x0, pot, step_size=0.1, beta=torch.ones(3)), ValueError, "beta"),
        (lambda: mala_init(x0, pot, step_size=0.1, beta=torch.zeros(4)), ValueError, "beta"),
        (lambda: mala_init(x0, NoEnergy(), step_size=0.1), TypeError, "potential"),
        (lambda: mala_step(st, pot, generator=None), TypeError, "generator"),
        (lambda: mala_step(st, pot, generator=g, target_accept=1.5), ValueError, "target_accept"),
        (lambda: mala_step(st, pot, generator=g, adapt="yes"), TypeError, "adapt"),
        (lambda: mala_step(st, pot, generator=g, mask=torch.ones(2)), TypeError, "mask"),
        (lambda: mala_step(st, pot, generator=g, mask=torch.ones(3, dtype=torch.bool)), ValueError, "mask"),
        (lambda: mala_step(st, pot, generator=g, mask=torch.zeros(2, dtype=torch.bool)), ValueError, "mask"),
        (lambda: mala_step(langevin_init(x0), pot, generator=g), TypeError, "state"),
        (lambda: hmc_step(st, pot, generator=g, n_leapfrog=0), ValueError, "n_leapfrog"),
        (lambda: temperature_ladder(1.0, 2.0, 3), ValueError, "beta_min"),
        (lambda: temperature_ladder(1.0, 0.5, 0), ValueError, "K"),
        (lambda: temperature_ladder(math.inf, 0.5, 2), ValueError, "beta_target"),
        (lambda: replica_exchange_swap(rst, pot, n_ladders=3, generator=g, parity=0), ValueError,
         "n_ladders"),
        (lambda: replica_exchange_swap(rst, pot, n_ladders=4, generator=g, parity=0), ValueError, "K >= 2"),
        (lambda: replica_exchange_swap(rst, pot, n_ladders=2, generator=g, parity=2), ValueError, "parity"),
        (lambda: replica_exchange_swap(st, pot, n_ladders=2, generator=g, parity=0), ValueError,
         "state.beta"),
        (lambda: make_replica_exchange_step(pot, n_ladders=2, method="gibbs"), ValueError, "method"),
        (lambda: make_replica_exchange_step(pot, n_ladders=2, method="hmc"), ValueError, "n_leapfrog"),
        (lambda: make_replica_exchange_step(pot, n_ladders=2, method="ula", adapt_steps=5), ValueError,
         "adapt_steps"),
        (lambda: make_replica_exchange_step(pot, n_ladders=2, swap_every=0), ValueError, "swap_every"),
        (lambda: run_chain(st, lambda s, gg: mala_step(s, pot, generator=gg), n_steps=2, generator=g,
                           progress=False, min_acceptance=1.5), ValueError, "min_acceptance"),
        (lambda: run_chain(st, lambda s, gg: mala_step(s, pot, generator=gg), n_steps=2, generator=g,
                           progress=False, acceptance_window=0), ValueError, "acceptance_window"),
        (lambda: post.grad(th, beta=torch.ones(2, dtype=torch.float64)), ValueError, "beta"),
        (lambda: post.energy(th, beta=-torch.ones(3, dtype=torch.float64)), ValueError, "beta"),
        (lambda: post.grad(th, beta=torch.ones(3, dtype=torch.complex128)), TypeError, "beta"),
        (lambda: _erf_posterior().energy(torch.zeros(2, 15, dtype=torch.float64), beta=0.0), ValueError,
         "beta"),
    ]
    for fn, exc, name in cases:
        with pytest.raises(exc, match=name):
            fn()
    assert isinstance(st, MCMCState)
