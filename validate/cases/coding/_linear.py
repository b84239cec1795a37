"""Validation cases for seed 000 (van Meegen & Sompolinsky, coding schemes)."""

from __future__ import annotations

import numpy as np
import torch
from richlazy.simulate import NetworkSpec, orthogonal_toy_task
from richlazy.theory import input_kernel, solve_linear_network

from ...core._registry import CaseContext, CaseOutcome, register_case
from ...core._sampling import estimates_from_run, linearised_series, sample_posterior
from ...observables import class_block_means, class_means, layer_kernels, readout_second_moment
from ...recipes import compare_linear, compare_U, element_estimate
from ...rendering._plots import kernel_heatmaps, readout_histograms
from ...stats import mean_se

# quick: minutes on 2 CPU cores; full: the paper's Fig. 2 linear configuration (meant for a GPU).
LINEAR_TOY_SIZES = {
    # every block exact (gibbs_linear_step with rescaling moves): ULA at dt = 0.02 for 20 000
    # steps left U, K_1 and Cov(z|a) unmixed (split-R̂ up to 1.19, bulk ESS 32-150 of 4800
    # draws); Gibbs-HMC reached bulk ESS >= 2102 in 17 s, the exact sweep >= 6799 in 12 s
    "quick": dict(N=64, P=64, N0=84, n_chains=8, T=0.02, dt=0.02, n_steps=6_000,
                  burn_in=1_000, thin=5, sampler="gibbs-exact"),
    # the paper's Fig. 2 size; the exact sweep needs no step size (ULA needed ~4e5 steps at
    # dt = 0.01 here, a GPU job)
    "full": dict(N=200, P=200, N0=220, n_chains=4, T=0.005, dt=0.01, n_steps=6_000,
                 burn_in=1_000, thin=5, sampler="gibbs-exact"),
}


@register_case(
    "coding/linear-toy",
    description=(
        "Deep linear non-lazy network (L=1) on the orthogonal toy task (classes [1/2,1/4,1/4], "
        "one-hot targets y+=1, y-=0): readout covariance U, feature kernel K_1, conditional "
        "preactivation law z|a ~ N(Y U^-1 a, K0), training outputs, test predictor, test kernel "
        "and generalisation error from a Langevin ensemble vs the mean-field theory at the same "
        "rescaled temperature T (seed 000 §Linear networks; notes §3)."
    ),
)
def linear_toy(ctx: CaseContext) -> CaseOutcome:
    cfg = LINEAR_TOY_SIZES[ctx.size]
    N, P, N0, T = cfg["N"], cfg["P"], cfg["N0"], cfg["T"]
    m = 3
    task = orthogonal_toy_task(P, N0, y_plus=1.0, y_minus=0.0, seed=ctx.child_seed(0))
    sigma_a2 = 1.0 / P  # paper: P^(-1/L) with L = 1
    K0 = input_kernel(task.X)
    sol = solve_linear_network(K0, task.Y, L=1, sigma_a2=sigma_a2, T=T, throw=True)
    sol0 = solve_linear_network(K0, task.Y, L=1, sigma_a2=sigma_a2)

    # test inputs: x* = sqrt(N0) (alpha q_mu + sqrt(1 - alpha^2) q_perp), two per class
    first = [int(np.flatnonzero(task.labels == c)[0]) for c in range(m)]
    alphas = (0.8, 0.5)
    cols, test_cls, test_alpha = [], [], []
    j = P
    for c in range(m):
        for a in alphas:
            cols.append(np.sqrt(N0) * (a * task.basis[:, first[c]] + np.sqrt(1 - a * a) * task.basis[:, j]))
            test_cls.append(c)
            test_alpha.append(a)
            j += 1
    Xs = np.stack(cols, axis=1)
    Qn = Xs.shape[1]
    Ys = task.class_targets()[test_cls]
    k0s = input_kernel(task.X, Xs)
    K0ss = input_kernel(Xs)
    f_th = sol.predict(k0s)
    Kss_th = sol.test_kernel(k0s, k0s, K0ss)
    gen_th = sol.generalization_error(k0s, None, Ys)
    B = torch.as_tensor(sol.Y - T * sol.t) @ torch.as_tensor(np.linalg.inv(sol.U))  # E[z|a] = B a
    labels = task.labels

    dev_dtype = torch.float64
    Xs_t = None

    def observe(post, theta, gen):
        nonlocal Xs_t
        if Xs_t is None:
            Xs_t = torch.as_tensor(Xs, device=theta.device, dtype=theta.dtype)
        A = post.unflatten(theta)["A"]  # (E, N, m)
        z = post.preactivations(theta)[-1]  # (E, N, P)
        zs = post.preactivations(theta, Xs_t, generator=gen)[-1]  # (E, N, Q)
        (K,) = layer_kernels(post, theta)  # linear: kernel of z
        Kd, Kb = class_block_means(K, labels, m)
        Bd = B.to(theta.device, theta.dtype)
        resid = z - A @ Bd.T
        R = resid.transpose(1, 2) @ resid / N
        Rd, Rb = class_block_means(R, labels, m)
        F = post.outputs(theta)  # (E, P, m)
        Fc = class_means(F, labels, m)  # (E, m, m): class-averaged outputs
        Fs = (zs.transpose(1, 2) @ A) / N  # (E, Q, m): linear network outputs on test inputs
        return {
            "UA": readout_second_moment(post, theta), "Kd": Kd, "Kb": Kb, "Rd": Rd, "Rb": Rb, "Fc": Fc,
            "Fs": Fs, "Kss": zs.transpose(1, 2) @ zs / N,
            "K_mean": K.mean(0).float(), "A": A.float(),
        }

    spec = NetworkSpec(N0=N0, N=N, L=1, m=m, activation="linear", regime="nonlazy")
    _, run = sample_posterior(
        spec, task.X, task.Y, T=T, sigma_a2=sigma_a2, dt=cfg["dt"], n_chains=cfg["n_chains"],
        n_steps=cfg["n_steps"], burn_in=cfg["burn_in"], thin=cfg["thin"], observe=observe,
        seed=ctx.child_seed(1), device=ctx.device, dtype=dev_dtype,
        checkpoint_path=ctx.checkpoint_dir / "chain.pt", progress=ctx.progress,
        desc="coding/linear-toy", sampler=cfg.get("sampler", "ula"),
    )
    est = estimates_from_run(run)
    e = element_estimate(est)
    U = sol.U
    qs = compare_U(U, e, N)
    K1 = sol.kernels[0]
    Kd_th, Kb_th = (x.numpy() for x in class_block_means(torch.as_tensor(K1), labels, m))
    kscale = float(np.mean(np.diag(K1)))
    for c in range(m):
        qs.append(compare_linear(f"K_1 diagonal, class {c}", Kd_th[c], e("Kd", c), N))
    for c in range(m):
        for d in range(c, m):
            if abs(Kb_th[c, d]) > 1e-12:
                qs.append(compare_linear(f"K_1 block ({c},{d})", Kb_th[c, d], e("Kb", c, d), N))
            else:
                qs.append(compare_linear(f"K_1 block ({c},{d})", Kb_th[c, d], e("Kb", c, d), N, scale=kscale))
    # conditional law of z given a: covariance K0 = I (diag 1, off-diag 0)
    for c in range(m):
        qs.append(compare_linear(f"Cov(z|a) diagonal, class {c}", 1.0, e("Rd", c), N))
    for c in range(m):
        for d in range(c, m):
            qs.append(compare_linear(f"Cov(z|a) block ({c},{d})", 0.0, e("Rb", c, d), N, scale=1.0))
    Fm = sol.mean_output
    oh = np.eye(m)[labels]
    Fc_th = oh.T @ Fm / oh.sum(0)[:, None]
    for c in range(m):
        for r in range(m):
            if abs(Fc_th[c, r]) > 1e-12:
                qs.append(compare_linear(f"training output f_{r}, class {c}", Fc_th[c, r], e("Fc", c, r), N))
            else:
                qs.append(compare_linear(f"training output f_{r}, class {c}", Fc_th[c, r], e("Fc", c, r), N,
                                         scale=1.0))
    for q in range(Qn):
        c = test_cls[q]
        qs.append(compare_linear(f"test predictor f_{c}(x*{q}) (class {c}, alpha={test_alpha[q]})",
                       f_th[q, c], e("Fs", q, c), N))
    for q in range(Qn):
        qs.append(compare_linear(f"test kernel K(x*{q}, x*{q})", Kss_th[q, q], e("Kss", q, q), N))
    for q in range(0, Qn, 2):
        qs.append(compare_linear(f"test kernel K(x*{q}, x*{q + 1})", Kss_th[q, q + 1], e("Kss", q, q + 1), N))
    # generalisation error: the theory (N -> inf) has no predictor-variance term. Compare the
    # bias part (y - <f>)^2 with it, and check separately that the sampled predictor variance is
    # O(1/N) (theory value 0).
    Fs_s = run.samples["Fs"].double().numpy()  # (S, E, Q, m)
    f_bar, f_se = est["Fs"].mean, est["Fs"].stderr
    for r in range(m):
        err = (Ys[:, r] - f_bar[:, r]) ** 2
        grad = np.zeros(f_bar.shape)
        grad[:, r] = 2 * (f_bar[:, r] - Ys[:, r]) / Qn  # d eps_r / d <f(x*_q)>_r
        se = np.sqrt(np.sum((2 * (f_bar[:, r] - Ys[:, r]) * f_se[:, r]) ** 2)) / Qn
        # eps_r is a nonlinear function of the mean predictor: mixing of its delta-method series
        qs.append(compare_linear(f"generalisation error eps_{r}, bias part mean (y - <f>)^2", gen_th[r],
                       (err.mean(), se, linearised_series(Fs_s, grad)), N))
    # an average over independent chains of each chain's variance: no chain diagnostics
    chain_var = Fs_s.var(axis=0, ddof=1).mean(axis=(1, 2))  # posterior variance per chain
    pv, pv_se = (float(v) for v in mean_se(chain_var))
    pv_scale = float(np.mean(np.diag(U)) * np.mean(np.diag(Kss_th)))
    qs.append(compare_linear("predictor variance Var f(x*) (mean over test inputs, outputs)", 0.0,
                   (pv, pv_se), N, scale=pv_scale))

    figs = []
    K_s = run.samples["K_mean"].double().mean(0).numpy()
    kernel_heatmaps(K1, K_s, ctx.out_dir / "kernel_K1.png", title="feature kernel K_1")
    figs.append("kernel_K1.png")
    readout_histograms(run.samples["A"].numpy(), U, ctx.out_dir / "readouts.png")
    figs.append("readouts.png")
    compared = ("UA", "Kd", "Kb", "Rd", "Rb", "Fc", "Fs", "Kss")
    ess_min = float(min(np.min(est[k].ess) for k in compared))
    notes = (
        f"Theory at the sampling temperature T={T} (L=1 finite-T saddle point); the T=0 theory "
        f"gives diag U = {np.round(np.diag(sol0.U), 4).tolist()} vs finite-T "
        f"{np.round(np.diag(U), 4).tolist()}. {run.n_steps} steps x {cfg['n_chains']} chains, "
        f"{run.samples['UA'].shape[0]} recorded samples per chain, smallest effective sample "
        f"size {ess_min:.0f}; sampling took {run.seconds:.1f} s"
        + (f" (resumed from step {run.resumed_from})" if run.resumed_from else "") + ". "
        "Known finite-width effects: Cov(z|a) on the diagonal is reduced by about m/N "
        f"(= {m / N:.3f}) because the output constraint pins the m readout directions of each "
        "input's preactivation vector. The generalisation error is compared through its bias part; "
        f"the sampled predictor variance ({pv:.4f}) is the O(1/N) term the non-lazy theory "
        "neglects (the test inputs' components outside span(X) alone give about "
        "(1/N) U (1 - alpha^2))."
    )
    params = dict(cfg, m=m, sigma_a2=sigma_a2, y_plus=1.0, y_minus=0.0, ratios=[0.5, 0.25, 0.25],
                  dtype="float64")
    return CaseOutcome(quantities=qs, figures=figs, params=params, notes=notes)
