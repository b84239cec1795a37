"""Population annealing (tempered SMC): well weights of a multi-well posterior and log evidence
against closed forms, the diagnostics of a too-fast schedule, bit-exact resume and bad input."""

import math
import warnings

import numpy as np
import pytest
import torch
from richlazy.simulate import (
    CheckpointDiscardedWarning,
    annealed_mean,
    annealing_diagnostics,
    hmc_init,
    hmc_step,
    population_annealing,
)
from richlazy.simulate.samplers._annealing import _next_beta, _systematic, family_stats
from scipy.integrate import quad
from sim_helpers import seeded_generator as _gen

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _col(beta, default=1.0):
    b = default if beta is None else beta
    return b.unsqueeze(1) if torch.is_tensor(b) else b


# -- test potentials: Phi_beta = beta * loss + prior -------------------------------------------


class MultiWell:
    """Prior N(0, s2 I); loss = -log sum_j w_j N(theta; mu_j, sig2_j I). The posterior at beta = 1
    is a Gaussian mixture with weights pi_j ∝ w_j N(mu_j; 0, (s2 + sig2_j) I)."""

    def __init__(self, mu, sig2, w, s2):
        self.mu = torch.tensor(mu, dtype=torch.float64)  # (J, D)
        self.sig2 = torch.tensor(sig2, dtype=torch.float64)  # (J,)
        self.logw = torch.log(torch.tensor(w, dtype=torch.float64))
        self.s2 = s2

    def _logc(self, th):  # log w_j N(theta; mu_j, sig2_j I), (E, J)
        D = th.shape[1]
        r2 = ((th.unsqueeze(1) - self.mu) ** 2).sum(2)
        return self.logw - r2 / (2 * self.sig2) - 0.5 * D * torch.log(2 * math.pi * self.sig2)

    def grad(self, th, beta=None):
        a = self._logc(th)
        r = torch.softmax(a, dim=1) / self.sig2  # (E, J)
        gl = r.sum(1, keepdim=True) * th - r @ self.mu
        return _col(beta) * gl + th / self.s2, {"loss": -torch.logsumexp(a, dim=1)}

    def energy(self, th, beta=None):
        b = 1.0 if beta is None else beta
        return -b * torch.logsumexp(self._logc(th), dim=1) + (th * th).sum(1) / (2 * self.s2)

    def well(self, th):
        return torch.cdist(th, self.mu).argmin(1)

    def log_marginals(self):  # log w_j N(mu_j; 0, (s2 + sig2_j) I)
        v = self.s2 + self.sig2
        D = self.mu.shape[1]
        return (self.logw - (self.mu ** 2).sum(1) / (2 * v) - 0.5 * D * torch.log(2 * math.pi * v)).numpy()

    def weights(self):
        lm = self.log_marginals()
        return np.exp(lm - np.logaddexp.reduce(lm))


def _wells():
    return MultiWell(mu=[[2.5, 0.0], [-2.5, 0.0], [0.0, 2.5]], sig2=[0.06, 0.1, 0.08],
                     w=[0.5, 0.3, 0.2], s2=4.0)


class BayesLinReg:
    """Prior N(0, I); loss = |y - X theta|^2 / (2 s2)."""

    def __init__(self, X, y, s2):
        self.X, self.y, self.s2 = X, y, s2

    def grad(self, th, beta=None):
        r = th @ self.X.T - self.y
        return _col(beta) * (r @ self.X) / self.s2 + th, {"loss": 0.5 * (r * r).sum(1) / self.s2}

    def energy(self, th, beta=None):
        r = th @ self.X.T - self.y
        return (1.0 if beta is None else beta) * 0.5 * (r * r).sum(1) / self.s2 + 0.5 * (th * th).sum(1)

    def log_z(self, beta=1.0):
        """log ∫ N(theta; 0, I) exp(-beta loss) = -log det(A)/2 - beta y^T y / (2 s2) + b^T A^-1 b / 2,
        A = I + beta X^T X / s2, b = beta X^T y / s2."""
        X, y = self.X.numpy(), self.y.numpy()
        A = np.eye(X.shape[1]) + beta * X.T @ X / self.s2
        b = beta * X.T @ y / self.s2
        return (-0.5 * np.linalg.slogdet(A)[1] - beta * (y @ y) / (2 * self.s2)
                + 0.5 * b @ np.linalg.solve(A, b))


def _blr(D=3, n=10, seed=0):
    rng = np.random.default_rng(seed)
    X = torch.tensor(rng.standard_normal((n, D)))
    y = X @ torch.tensor(rng.standard_normal(D)) + 0.5 * torch.tensor(rng.standard_normal(n))
    return BayesLinReg(X, y, s2=0.5)


def _prior(E, D, seed, scale=1.0):
    return scale * torch.randn(E, D, generator=_gen(seed), dtype=torch.float64)


# -- pieces ------------------------------------------------------------------------------------


def test_blr_evidence_formula_matches_quadrature():
    pot = _blr(D=1, n=6, seed=3)
    X, y = pot.X.numpy()[:, 0], pot.y.numpy()
    for beta in (0.3, 1.0):
        def f(t, beta=beta):
            loss = ((y - X * t) ** 2).sum() / (2 * pot.s2)
            return math.exp(-t * t / 2 - beta * loss) / math.sqrt(2 * math.pi)

        z = quad(f, -np.inf, np.inf, epsabs=0, epsrel=1e-12)[0]
        assert math.log(z) == pytest.approx(pot.log_z(beta), abs=1e-9)


def test_systematic_resampling_and_family_statistics():
    g = _gen(0)
    logw = torch.randn(3, 50, generator=g, dtype=torch.float64) * 2
    idx = _systematic(logw, torch.rand(3, generator=g, dtype=torch.float64))
    W = torch.softmax(logw, 1)
    ones = torch.ones(3, 50, dtype=torch.float64)
    counts = torch.zeros(3, 50, dtype=torch.float64).scatter_add_(1, idx, ones)
    assert bool(((counts >= torch.floor(50 * W) - 1e-9) & (counts <= torch.ceil(50 * W) + 1e-9)).all())
    fam = torch.tensor([0, 0, 1, 1, 2, 2, 2, 2], dtype=torch.int64)  # G = 2 populations of R = 4
    n, eff = family_stats(fam, 2)
    assert n.tolist() == [2, 1]
    assert eff.tolist() == pytest.approx([2.0, 1.0])
    loss = torch.randn(40, generator=g, dtype=torch.float64).numpy() * 5
    b = _next_beta(loss, 0.2, 10.0, 0.5)
    w = np.exp(-(b - 0.2) * (loss - loss.min()))
    assert w.sum() ** 2 / (w * w).sum() == pytest.approx(20.0, rel=1e-9)


# -- exactness ---------------------------------------------------------------------------------


def test_multiwell_weights_recovered_where_a_chain_is_stuck():
    pot = _wells()
    G, R = 8, 250
    run = population_annealing(_prior(G * R, 2, 1, scale=2.0), pot, generator=_gen(2),
                               n_populations=G, n_moves=5, n_leapfrog=5, step_size=0.3)
    assert run.converged and run.status == "converged"
    ind = torch.nn.functional.one_hot(pot.well(run.theta), 3).to(torch.float64)
    est = annealed_mean(run, ind)
    exact = pot.weights()
    z = (est.mean.numpy() - exact) / est.se.numpy()
    print("weights", est.mean.numpy(), "+-", est.se.numpy(), "exact", exact, "stages", run.n_stages)
    assert np.all(np.abs(z) < 4.0), z
    assert np.all(np.abs(est.mean.numpy() - exact) < 0.05)
    lz = float(np.logaddexp.reduce(pot.log_marginals()))
    lz_se = float(run.log_evidence.std() / math.sqrt(G))
    print("log Z", float(run.log_evidence.mean()), "+-", lz_se, "exact", lz)
    assert abs(float(run.log_evidence.mean()) - lz) < 4 * lz_se + 0.02
    diag = annealing_diagnostics(run, ind)
    print("diagnostics", diag)
    assert diag.equilibrated, diag.message
    # a chain at beta = 1 started in well 0 stays there
    st, g = hmc_init(pot.mu[:1].repeat(4, 1) + 0.1, pot, step_size=0.15), _gen(3)
    for _ in range(500):
        st, _info = hmc_step(st, pot, generator=g, n_leapfrog=5)
    assert bool((pot.well(st.theta) == 0).all())  # fraction 1 against the exact 0.55


def test_too_fast_schedule_is_flagged():
    pot = _wells()
    G, R = 4, 100
    run = population_annealing(_prior(G * R, 2, 1, scale=2.0), pot, generator=_gen(2),
                               n_populations=G, ess_min=1e-4, n_moves=2, n_leapfrog=5, step_size=0.3)
    assert run.converged and run.n_stages == 1
    ind = torch.nn.functional.one_hot(pot.well(run.theta), 3).to(torch.float64)
    diag = annealing_diagnostics(run, ind)
    print("too fast", diag)
    assert not diag.equilibrated
    assert {"ess", "families"} <= set(diag.failed)
    assert "converged" not in diag.failed


def test_log_evidence_of_bayesian_linear_regression():
    pot = _blr()
    G, R = 10, 200
    run = population_annealing(_prior(G * R, 3, 4), pot, generator=_gen(5), n_populations=G,
                               n_moves=5, n_leapfrog=5, step_size=0.3)
    assert run.converged
    est, se = float(run.log_evidence.mean()), float(run.log_evidence.std() / math.sqrt(G))
    exact = pot.log_z(1.0)
    print("log Z", est, "+-", se, "exact", exact, "stages", run.n_stages)
    assert abs(est - exact) < 4 * se
    assert abs(est - exact) < 0.1  # bias at R = 200 small
    # the conditional-ESS rule: ESS = ess_min R at every stage short of the target, more at it
    below = run.betas < 1.0
    assert torch.allclose(run.ess_fraction[below], torch.tensor(0.5, dtype=torch.float64), atol=1e-6)
    assert bool((run.ess_fraction[~below] >= 0.5 - 1e-9).all())
    assert bool((run.betas[-1] == 1.0).all())


def test_log_evidence_ratio_from_a_tempered_start():
    pot = _blr()
    X, y = pot.X.numpy(), pot.y.numpy()
    A = np.eye(3) + 0.5 * X.T @ X / pot.s2  # the law at beta = 0.5: N(A^-1 b, A^-1)
    mean = np.linalg.solve(A, 0.5 * X.T @ y / pot.s2)
    L = np.linalg.cholesky(np.linalg.inv(A))
    th = torch.tensor(mean) + _prior(2000, 3, 8) @ torch.tensor(L).T
    run = population_annealing(th, pot, generator=_gen(9), beta_start=0.5, n_populations=10,
                               n_moves=5, n_leapfrog=5, step_size=0.2)
    est, se = float(run.log_evidence.mean()), float(run.log_evidence.std() / math.sqrt(10))
    exact = pot.log_z(1.0) - pot.log_z(0.5)
    print("log Z(1)/Z(0.5)", est, "+-", se, "exact", exact, "stages", run.n_stages)
    assert abs(est - exact) < 4 * se + 0.01


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_annealing_runs_on_cuda(tmp_path):
    pot = _blr()
    pot.X, pot.y = pot.X.cuda(), pot.y.cuda()
    g = torch.Generator(device="cuda")
    g.manual_seed(5)
    run = population_annealing(_prior(2000, 3, 4).cuda(), pot, generator=g, n_populations=10,
                               n_moves=5, n_leapfrog=5, step_size=0.3, checkpoint_path=tmp_path / "c")
    assert run.theta.device.type == "cuda" and run.converged
    pot.X, pot.y = pot.X.cpu(), pot.y.cpu()
    est, se = float(run.log_evidence.mean()), float(run.log_evidence.std() / math.sqrt(10))
    print("cuda log Z", est, "+-", se, "exact", pot.log_z(1.0))
    assert abs(est - pot.log_z(1.0)) < 4 * se + 0.01
    est_w = annealed_mean(run, run.theta)
    assert est_w.mean.device.type == "cpu"
    pot.X, pot.y = pot.X.cuda(), pot.y.cuda()
    g.manual_seed(5)
    again = population_annealing(_prior(2000, 3, 4).cuda(), pot, generator=g, n_populations=10,
                                 n_moves=5, n_leapfrog=5, step_size=0.3, checkpoint_path=tmp_path / "c")
    assert again.resumed_from == run.n_stages and torch.equal(again.theta, run.theta)
    assert torch.equal(again.log_evidence, run.log_evidence)


# -- checkpoints and input checks --------------------------------------------------------------


class _Interrupt:
    """Wraps a potential; raises KeyboardInterrupt at the n-th gradient call (simulated kill)."""

    def __init__(self, pot, n):
        self.pot, self.n, self.calls = pot, n, 0

    def grad(self, th, beta=None):
        self.calls += 1
        if self.calls == self.n:
            raise KeyboardInterrupt
        return self.pot.grad(th, beta=beta)

    def energy(self, th, beta=None):
        return self.pot.energy(th, beta=beta)


def _small(pot, path=None, **kw):
    args = dict(generator=_gen(7), n_populations=2, n_moves=3, n_leapfrog=3, step_size=0.3,
                checkpoint_path=path)
    args.update(kw)
    return population_annealing(_prior(40, 3, 6), pot, **args)


_FIELDS = ("theta", "loss", "betas", "ess_fraction", "n_families", "family_count", "acceptance",
           "step_size", "log_evidence", "families")


def _same(a, b):
    for f in _FIELDS:
        assert torch.equal(getattr(a, f), getattr(b, f)), f
    assert torch.equal(a.state.step_size, b.state.step_size)


def test_resume_after_interruption_is_bit_exact(tmp_path):
    ref = _small(_blr())
    assert ref.n_stages >= 3
    ck = tmp_path / "pa.ck"
    with pytest.raises(KeyboardInterrupt):
        _small(_Interrupt(_blr(), 30), ck)
    resumed = _small(_blr(), ck)
    assert resumed.resumed_from is not None and resumed.resumed_from >= 1
    _same(resumed, ref)
    again = _small(_blr(), ck)  # a finished checkpoint: nothing left to do
    assert again.resumed_from == ref.n_stages
    _same(again, ref)
    # max_stages: a status, not an exception; a larger max_stages resumes
    cut = _small(_blr(), tmp_path / "b.ck", max_stages=2)
    assert cut.status == "max_stages" and not cut.converged and "max_stages" in cut.message
    assert "converged" in annealing_diagnostics(cut).failed
    _same(_small(_blr(), tmp_path / "b.ck"), ref)


def test_damaged_checkpoint_is_discarded_and_recomputed(tmp_path):
    ref = _small(_blr())
    ck = tmp_path / "pa.ck"
    _small(_blr(), ck, max_stages=2)
    data = bytearray(ck.read_bytes())
    data[len(data) // 2] ^= 0xFF
    ck.write_bytes(bytes(data))
    with pytest.warns(CheckpointDiscardedWarning, match="checksum"):
        run = _small(_blr(), ck)
    assert run.discarded_checkpoint is not None and run.resumed_from is None
    assert (tmp_path / "pa.ck.discarded").exists()
    _same(run, ref)


def test_bad_arguments_name_the_argument(tmp_path):
    pot, th, g = _blr(), _prior(8, 3, 0), _gen(0)
    cases = [
        (dict(theta=_prior(9, 3, 0), n_populations=2), ValueError, "n_populations"),
        (dict(n_populations=8), ValueError, "n_populations"),  # R = 1
        (dict(beta_start=1.0, beta_target=0.5), ValueError, "beta_target"),
        (dict(beta_start=-0.1), ValueError, "beta_start"),
        (dict(ess_min=0.0), ValueError, "ess_min"),
        (dict(ess_min=1.0), ValueError, "ess_min"),
        (dict(potential=object()), TypeError, "potential"),
        (dict(generator=None), TypeError, "generator"),
        (dict(method="ula"), ValueError, "method"),
        (dict(method="mala", n_leapfrog=3), ValueError, "n_leapfrog"),
        (dict(n_moves=0), ValueError, "n_moves"),
        (dict(max_stages=0), ValueError, "max_stages"),
        (dict(step_size=-1.0), ValueError, "step_size"),
        (dict(checkpoint_path=tmp_path), ValueError, "checkpoint_path"),
    ]
    for kw, exc, name in cases:
        args = dict(theta=th, potential=pot, generator=g, n_populations=2)
        args.update(kw)
        with pytest.raises(exc, match=name):
            population_annealing(args.pop("theta"), args.pop("potential"), **args)
    run = _small(pot)
    with pytest.raises(ValueError, match="values"):
        annealed_mean(run, torch.zeros(3))
    with pytest.raises(TypeError, match="run"):
        annealed_mean("run", torch.zeros(40))
    with pytest.raises(ValueError, match="min_ess_fraction"):
        annealing_diagnostics(run, min_ess_fraction=1.5)


def test_mala_runs_and_estimates_are_consistent():
    pot = _blr()
    run = _small(pot, method="mala", n_leapfrog=None, step_size=0.05)
    assert run.converged
    est = annealed_mean(run, run.theta)
    assert est.population_means.shape == (2, 3) and est.mean.shape == (3,)
    assert torch.allclose(est.mean, run.theta.mean(0))
    assert bool((est.population_se > 0).all())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        annealing_diagnostics(run, run.theta)


def test_caller_kernel_replaces_the_moves_and_enters_the_checkpoint(tmp_path):
    """A caller's kernel is what moves the rows: the built-in HMC written as a kernel gives the
    same run bit for bit, every stage calls it n_moves times at the rows' own weights, and a
    checkpoint written with one kernel label is not resumed under another."""
    pot = _blr()
    calls, betas = [], []

    def kernel(state, g):
        calls.append(1)
        betas.append(state.beta.clone())
        return hmc_step(state, pot, generator=g, n_leapfrog=3, target_accept=0.8)

    ref = _small(pot)
    run = _small(pot, kernel=kernel, kernel_label="hmc-3")
    _same(run, ref)
    assert len(calls) == 3 * run.n_stages
    assert all(torch.is_tensor(b) and b.shape == (40,) for b in betas)
    ck = tmp_path / "k.ck"
    _small(pot, ck, kernel=kernel, kernel_label="hmc-3", max_stages=1)
    with pytest.raises(ValueError, match="configuration"):
        _small(pot, ck, kernel=kernel, kernel_label="another kernel")
    for kw, exc in ((dict(kernel="hmc", kernel_label="x"), TypeError),
                    (dict(kernel=kernel), ValueError), (dict(kernel_label="x"), ValueError)):
        with pytest.raises(exc, match="kernel"):
            _small(pot, **kw)
