"""Validation case ``coding/linear-toy`` (seed 000, van Meegen & Sompolinsky, §Linear networks;
notes §3): a deep linear non-lazy network (L = 1) on the orthogonal toy task, declared as data;
the stages are the functions below the declaration."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import torch
from richlazy.simulate import NetworkSpec, orthogonal_toy_task
from richlazy.theory import input_kernel, solve_linear_network
from richlazy.validate import Compared, Sizes, declare_case

from ...observables import class_block_means, class_means, layer_kernels, readout_second_moment
from ...recipes import (
    READOUT_COVARIANCE_ROW,
    NetworkSize,
    element_estimate,
    estimates_from_run,
    finite_width_rule,
    kernel_heatmaps,
    linearised_series,
    readout_histograms,
    sample_posterior,
)
from ...stats import mean_se

M = 3  # classes (one-hot targets y+ = 1, y- = 0, class ratios [1/2, 1/4, 1/4])
ALPHAS = (0.8, 0.5)  # overlaps of the two test inputs per class with their class direction


@dataclass(frozen=True)
class LinearToySize(NetworkSize):
    sampler: str


SIZES = Sizes(
    # every block exact (gibbs_linear_step with rescaling moves): ULA at dt = 0.02 for 20 000
    # steps left U, K_1 and Cov(z|a) unmixed (split-R̂ up to 1.19, bulk ESS 32-150 of 4800
    # draws); Gibbs-HMC reached bulk ESS >= 2102 in 17 s, the exact sweep >= 6799 in 12 s
    quick=LinearToySize(N=64, P=64, N0=84, n_chains=8, T=0.02, dt=0.02, n_steps=6_000,
                        burn_in=1_000, thin=5, sampler="gibbs-exact"),
    # the paper's Fig. 2 size; the exact sweep needs no step size (ULA needed ~4e5 steps at
    # dt = 0.01 here, a GPU job)
    full=LinearToySize(N=200, P=200, N0=220, n_chains=4, T=0.005, dt=0.01, n_steps=6_000,
                       burn_in=1_000, thin=5, sampler="gibbs-exact"),
)


def _rows(run):
    return range(M)


def _pairs(run):
    return [(c, d) for c in range(M) for d in range(c, M)]


def _e(key):
    return lambda run, *idx: run.simulation.e(key, *idx)


def _zero_scale(value, scale):
    """The absolute tolerance's scale where the theory value is analytically zero, else None."""
    return dict(scale=scale) if abs(value) <= 1e-12 else {}


CASE = declare_case(
    "coding/linear-toy",
    description=(
        "Deep linear non-lazy network (L=1) on the orthogonal toy task (classes [1/2,1/4,1/4], "
        "one-hot targets y+=1, y-=0): readout covariance U, feature kernel K_1, conditional "
        "preactivation law z|a ~ N(Y U^-1 a, K0), training outputs, test predictor, test kernel "
        "and generalisation error from a Langevin ensemble vs the mean-field theory at the same "
        "rescaled temperature T (seed 000 §Linear networks; notes §3)."
    ),
    sizes=SIZES,
    theory=lambda ctx, cfg: _theory(ctx, cfg),
    simulation=lambda ctx, cfg, th: _simulation(ctx, cfg, th),
    compared=(
        READOUT_COVARIANCE_ROW,
        Compared("K_1 diagonal, class {0}", theory=lambda run, c: run.theory.Kd[c], estimate=_e("Kd"),
                 rule=finite_width_rule, over=_rows),
        Compared("K_1 block ({0},{1})", theory=lambda run, c, d: run.theory.Kb[c, d], estimate=_e("Kb"),
                 rule=finite_width_rule, over=_pairs,
                 options=lambda run, c, d: _zero_scale(run.theory.Kb[c, d], run.theory.kscale)),
        Compared("Cov(z|a) diagonal, class {0}", theory=lambda run, c: 1.0, estimate=_e("Rd"),
                 rule=finite_width_rule, over=_rows),
        Compared("Cov(z|a) block ({0},{1})", theory=lambda run, c, d: 0.0, estimate=_e("Rb"),
                 rule=finite_width_rule, over=_pairs, options=lambda run, c, d: dict(scale=1.0)),
        Compared("training output f_{1}, class {0}", theory=lambda run, c, r: run.theory.Fc[c, r],
                 estimate=_e("Fc"), rule=finite_width_rule, over=lambda run: np.ndindex(M, M),
                 options=lambda run, c, r: _zero_scale(run.theory.Fc[c, r], 1.0)),
        Compared(lambda run, q: (f"test predictor f_{run.theory.test_cls[q]}(x*{q}) (class "
                                 f"{run.theory.test_cls[q]}, alpha={run.theory.test_alpha[q]})"),
                 theory=lambda run, q: run.theory.f[q, run.theory.test_cls[q]],
                 estimate=lambda run, q: run.simulation.e("Fs", q, run.theory.test_cls[q]),
                 rule=finite_width_rule, over=lambda run: range(run.theory.Q)),
        Compared("test kernel K(x*{0}, x*{0})", theory=lambda run, q: run.theory.Kss[q, q],
                 estimate=lambda run, q: run.simulation.e("Kss", q, q), rule=finite_width_rule,
                 over=lambda run: range(run.theory.Q)),
        Compared("test kernel K(x*{0}, x*{1})", theory=lambda run, q, p: run.theory.Kss[q, p],
                 estimate=_e("Kss"), rule=finite_width_rule,
                 over=lambda run: [(q, q + 1) for q in range(0, run.theory.Q, 2)]),
        # the theory (N -> inf) has no predictor-variance term: its bias part (y - <f>)^2 is
        # compared, and the sampled predictor variance separately against 0 (it is O(1/N))
        Compared("generalisation error eps_{0}, bias part mean (y - <f>)^2",
                 theory=lambda run, r: run.theory.gen[r], estimate=lambda run, r: _bias(run, r),
                 rule=finite_width_rule, over=_rows),
        Compared("predictor variance Var f(x*) (mean over test inputs, outputs)",
                 theory=lambda run: 0.0, estimate=lambda run: run.simulation.pv, rule=finite_width_rule,
                 options=lambda run: dict(scale=run.simulation.pv_scale)),
    ),
    figures=lambda run: _figures(run),
    notes=lambda run: _notes(run),
    params=lambda run: dict(m=M, sigma_a2=run.theory.sigma_a2, y_plus=1.0, y_minus=0.0,
                            ratios=[0.5, 0.25, 0.25], dtype="float64"),
)


# ---- the stages ------------------------------------------------------------------------------


def _test_inputs(task, P, N0):
    """x* = sqrt(N0) (alpha q_mu + sqrt(1 - alpha^2) q_perp), two per class (alpha in ALPHAS)."""
    first = [int(np.flatnonzero(task.labels == c)[0]) for c in range(M)]
    cols, test_cls, test_alpha = [], [], []
    j = P
    for c in range(M):
        for a in ALPHAS:
            cols.append(np.sqrt(N0) * (a * task.basis[:, first[c]] + np.sqrt(1 - a * a) * task.basis[:, j]))
            test_cls.append(c)
            test_alpha.append(a)
            j += 1
    return np.stack(cols, axis=1), test_cls, test_alpha


def _theory(ctx, cfg):
    """The task, the finite-T (and T = 0) theory, and its predictions on the test inputs."""
    task = orthogonal_toy_task(cfg.P, cfg.N0, y_plus=1.0, y_minus=0.0, seed=ctx.child_seed(0))
    sigma_a2 = 1.0 / cfg.P  # paper: P^(-1/L) with L = 1
    K0 = input_kernel(task.X)
    sol = solve_linear_network(K0, task.Y, L=1, sigma_a2=sigma_a2, T=cfg.T, throw=True)
    sol0 = solve_linear_network(K0, task.Y, L=1, sigma_a2=sigma_a2)
    Xs, test_cls, test_alpha = _test_inputs(task, cfg.P, cfg.N0)
    Ys = task.class_targets()[test_cls]
    k0s = input_kernel(task.X, Xs)
    Kss = sol.test_kernel(k0s, k0s, input_kernel(Xs))
    K1 = sol.kernels[0]
    Kd, Kb = (x.numpy() for x in class_block_means(torch.as_tensor(K1), task.labels, M))
    oh = np.eye(M)[task.labels]
    return SimpleNamespace(
        task=task, sigma_a2=sigma_a2, sol=sol, sol0=sol0, Xs=Xs, Q=Xs.shape[1], test_cls=test_cls,
        test_alpha=test_alpha, Ys=Ys, f=sol.predict(k0s), Kss=Kss,
        gen=sol.generalization_error(k0s, None, Ys),
        B=torch.as_tensor(sol.Y - cfg.T * sol.t) @ torch.as_tensor(np.linalg.inv(sol.U)),  # E[z|a] = B a
        K1=K1, Kd=Kd, Kb=Kb, kscale=float(np.mean(np.diag(K1))),
        Fc=oh.T @ sol.mean_output / oh.sum(0)[:, None])  # class-averaged training outputs


def _observer(th, N):
    labels, Xs_t = th.task.labels, None

    def observe(post, theta, gen):
        nonlocal Xs_t
        if Xs_t is None:
            Xs_t = torch.as_tensor(th.Xs, device=theta.device, dtype=theta.dtype)
        A = post.unflatten(theta)["A"]  # (E, N, m)
        z = post.preactivations(theta)[-1]  # (E, N, P)
        zs = post.preactivations(theta, Xs_t, generator=gen)[-1]  # (E, N, Q)
        (K,) = layer_kernels(post, theta)  # linear: kernel of z
        Kd, Kb = class_block_means(K, labels, M)
        resid = z - A @ th.B.to(theta.device, theta.dtype).T
        Rd, Rb = class_block_means(resid.transpose(1, 2) @ resid / N, labels, M)
        return {
            "UA": readout_second_moment(post, theta), "Kd": Kd, "Kb": Kb, "Rd": Rd, "Rb": Rb,
            "Fc": class_means(post.outputs(theta), labels, M),  # (E, m, m): class-averaged outputs
            "Fs": (zs.transpose(1, 2) @ A) / N,  # (E, Q, m): network outputs on test inputs
            "Kss": zs.transpose(1, 2) @ zs / N, "K_mean": K.mean(0).float(), "A": A.float(),
        }

    return observe


def _simulation(ctx, cfg, th):
    """The ensemble, its estimates, and the sampled predictor variance (an average over
    independent chains of each chain's variance: no chain diagnostics)."""
    spec = NetworkSpec(N0=cfg.N0, N=cfg.N, L=1, m=M, activation="linear", regime="nonlazy")
    _, run = sample_posterior(
        spec, th.task.X, th.task.Y, sigma_a2=th.sigma_a2, **cfg.chain_options(),
        observe=_observer(th, cfg.N),
        seed=ctx.child_seed(1), device=ctx.device, dtype=torch.float64,
        checkpoint_path=ctx.checkpoint_dir / "chain.pt", progress=ctx.progress,
        desc="coding/linear-toy", sampler=cfg.sampler,
    )
    est = estimates_from_run(run)
    Fs = run.samples["Fs"].double().numpy()  # (S, E, Q, m)
    pv, pv_se = (float(v) for v in mean_se(Fs.var(axis=0, ddof=1).mean(axis=(1, 2))))
    return SimpleNamespace(run=run, est=est, e=element_estimate(est), Fs=Fs, pv=(pv, pv_se),
                           pv_scale=float(np.mean(np.diag(th.sol.U)) * np.mean(np.diag(th.Kss))))


def _bias(run, r):
    """(mean, stderr, series) of the bias part eps_r = mean_q (y - <f(x*_q)>)^2: a nonlinear
    function of the mean predictor, whose mixing is that of its delta-method series."""
    Ys, Q, est = run.theory.Ys, run.theory.Q, run.simulation.est
    f_bar, f_se = est["Fs"].mean, est["Fs"].stderr
    err = (Ys[:, r] - f_bar[:, r]) ** 2
    grad = np.zeros(f_bar.shape)
    grad[:, r] = 2 * (f_bar[:, r] - Ys[:, r]) / Q  # d eps_r / d <f(x*_q)>_r
    se = np.sqrt(np.sum((2 * (f_bar[:, r] - Ys[:, r]) * f_se[:, r]) ** 2)) / Q
    return err.mean(), se, linearised_series(run.simulation.Fs, grad)


def _figures(run):
    ctx, sim = run.ctx, run.simulation.run
    K_s = sim.samples["K_mean"].double().mean(0).numpy()
    kernel_heatmaps(run.theory.K1, K_s, ctx.out_dir / "kernel_K1.png", title="feature kernel K_1")
    readout_histograms(sim.samples["A"].numpy(), run.theory.sol.U, ctx.out_dir / "readouts.png")
    return ["kernel_K1.png", "readouts.png"]


def _notes(run):
    cfg, th, sim, N = run.cfg, run.theory, run.simulation.run, run.cfg.N
    est = run.simulation.est
    ess_min = float(min(np.min(est[k].ess) for k in ("UA", "Kd", "Kb", "Rd", "Rb", "Fc", "Fs", "Kss")))
    return (
        f"Theory at the sampling temperature T={cfg.T} (L=1 finite-T saddle point); the T=0 theory "
        f"gives diag U = {np.round(np.diag(th.sol0.U), 4).tolist()} vs finite-T "
        f"{np.round(np.diag(th.sol.U), 4).tolist()}. {sim.n_steps} steps x {cfg.n_chains} chains, "
        f"{sim.samples['UA'].shape[0]} recorded samples per chain, smallest effective sample "
        f"size {ess_min:.0f}; sampling took {sim.seconds:.1f} s"
        + (f" (resumed from step {sim.resumed_from})" if sim.resumed_from else "") + ". "
        "Known finite-width effects: Cov(z|a) on the diagonal is reduced by about m/N "
        f"(= {M / N:.3f}) because the output constraint pins the m readout directions of each "
        "input's preactivation vector. The generalisation error is compared through its bias part; "
        f"the sampled predictor variance ({run.simulation.pv[0]:.4f}) is the O(1/N) term the "
        "non-lazy theory neglects (the test inputs' components outside span(X) alone give about "
        "(1/N) U (1 - alpha^2))."
    )
