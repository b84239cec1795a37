"""Effective samples per second: blocked Gibbs (exact readout) with a Metropolis-adjusted hidden
block (HMC with ``n_leapfrog`` steps, or MALA when 0; step size adapted by dual averaging during
warm-up) vs the unadjusted Langevin chain the cases use, on the linear and the sigmoid toy of
seed 000 (the sigmoid toy at the quick case's T = 0.002, where codes freeze, and at 0.5 T_c,
where they switch); on the linear toy also the sweep in which every block is exact
(``gibbs_linear_step``, with the neuron rescaling moves).

Both samplers start from the same prior draw, burn in (not timed: ULA for the case's burn-in in
paper time, the Gibbs-MALA chain for its step-size adaptation plus as many steps), then run for
about the same wall time, spent in the steps only (recording the observables is not timed; up to
4000 draws per chain are recorded). Reported per observable: the mean ± batch-means SE of each sampler (the
two must agree, up to ULA's step-size bias), the bulk effective sample size over all chains, and
the ratio of ESS per second.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from richlazy.simulate import (
    LangevinWorkspace,
    NetworkPosterior,
    NetworkSpec,
    gibbs_linear_step,
    gibbs_readout_step,
    hmc_step,
    langevin_init,
    langevin_step,
    make_generator,
    mala_init,
    mala_step,
    mcmc_refresh,
    orthogonal_toy_task,
    resolve_device,
)

from ..stats import batch_means, ess_bulk
from ._registry import BenchResult, register_benchmark

__all__ = ["bench_mcmc_ess"]

_TOYS = {
    # the quick cases' configurations (coding/linear-toy, coding/sigmoid-toy) and their ULA dt
    "linear": dict(N=64, P=64, N0=84, T=0.02, dt=0.02, activation="linear", y_minus=0.0,
                   burn_time=100.0),
    "sigmoid": dict(N=100, P=100, N0=120, T=0.002, dt=0.02, activation="sigmoid_erf",
                    y_minus=0.5, burn_time=100.0),
    # the same task at T = 0.041 = 0.5 T_c (coding/sigmoid-temperature): codes can switch, so the
    # code fractions measure mixing between codes (at T = 0.002 they freeze in both samplers)
    "sigmoid-0.5Tc": dict(N=100, P=100, N0=120, T=0.041, dt=0.02, activation="sigmoid_erf",
                          y_minus=0.5, burn_time=100.0),
}


_N_OBS = 4000


def _posterior(toy, dev):
    c = _TOYS[toy]
    task = orthogonal_toy_task(c["P"], c["N0"], ratios=(0.5, 0.25, 0.25), y_plus=1.0,
                               y_minus=c["y_minus"], seed=0)
    spec = NetworkSpec(N0=c["N0"], N=c["N"], L=1, m=3, activation=c["activation"])
    post = NetworkPosterior(spec, task.X, task.Y, T=c["T"], sigma_a2=1.0 / c["P"], device=dev,
                            dtype=torch.float64, project_inputs=True)
    return post, task.labels


def _observe(post, labels, theta):
    """U[0,0] = |A_0|²/N per chain and the fraction of neurons per code (class-mean activation
    above 1/2 per class, 8 codes) - the sigmoid case's code definition."""
    A = post.unflatten(theta)["A"]
    U00 = A[:, :, 0].square().mean(1)
    h = post.phi(post.preactivations(theta)[-1])  # (E, N, P)
    lab = torch.as_tensor(labels, device=h.device)
    cm = torch.stack([h[:, :, lab == c].mean(-1) for c in range(3)], -1)  # (E, N, 3)
    key = ((cm > 0.5).long() * torch.tensor([1, 2, 4], device=h.device)).sum(-1)  # (E, N)
    frac = torch.stack([(key == k).double().mean(1) for k in range(8)], -1)  # (E, 8)
    return U00, frac


def _run(step, state, n, every, post, labels):
    """n steps of ``step``, observing every ``every`` steps; returns (U (S,E), frac (S,E,8),
    seconds spent in the steps (the observations are not timed), state, acceptance or None)."""
    g = make_generator(7, post.device)
    Us, Fs, acc = [], [], []
    secs = 0.0
    for k in range(n):
        t0 = time.perf_counter()
        state, info = step(state, g)
        secs += time.perf_counter() - t0
        if "accepted" in info:
            acc.append(info["accepted"])
        if (k + 1) % every == 0:
            u, f = _observe(post, labels, state.theta)
            Us.append(u.cpu())
            Fs.append(f.cpu())
    rate = float(torch.stack(acc).double().mean()) if acc else None
    return torch.stack(Us).numpy(), torch.stack(Fs).numpy(), secs, state, rate


def _sized_run(step, state, g, post, labels, min_time, n_time):
    """Time ``n_time`` steps, then :func:`_run` about ``min_time`` seconds of them (>= 400 steps,
    up to _N_OBS recorded draws per chain). Returns (run, seconds per step, steps)."""
    t = time.perf_counter()
    for _ in range(n_time):
        state, _ = step(state, g)
    t_step = (time.perf_counter() - t) / n_time
    n = max(int(min_time / t_step), 400)
    return _run(step, state, n, max(n // _N_OBS, 1), post, labels), t_step, n


def _summ(x, secs):
    m, se = batch_means(x)
    ess = float(ess_bulk(x, layout="draw_chain"))
    return dict(mean=float(m), se=float(se), ess=ess, seconds=secs, ess_per_s=ess / secs)


def bench_mcmc_ess(toy: str, *, device="auto", n_chains: int = 8, gibbs_dt: float = 1.0,
                   n_leapfrog: int = 10, min_time: float = 10.0) -> dict:
    """ULA at the case's dt vs Gibbs (exact readout) + HMC (``n_leapfrog`` > 0) or MALA (0) on
    the hidden block on ``toy`` ("linear", "sigmoid" or "sigmoid-0.5Tc")."""
    c = _TOYS[toy]
    dev = resolve_device(device)
    post, labels = _posterior(toy, dev)
    theta0 = post.sample_prior(n_chains, generator=make_generator(1, dev))
    hidden = ~post.block_mask("A")
    eps_ula = c["T"] * c["dt"]

    ws = LangevinWorkspace()  # as the cases run ULA (sample_posterior)

    def ula(st, g):
        return langevin_step(st, post, step_size=eps_ula, generator=g, workspace=ws)

    n_adapt = 500

    def gibbs(st, g):
        if n_leapfrog:
            return hmc_step(st, post, generator=g, mask=hidden, adapt=st.step < n_adapt,
                            n_leapfrog=n_leapfrog)
        return mala_step(st, post, generator=g, mask=hidden, adapt=st.step < n_adapt)

    gstep = gibbs_readout_step(post, gibbs, refresh=lambda st: mcmc_refresh(st, post))
    # burn-in (not timed)
    st_u = langevin_init(theta0)
    g = make_generator(3, dev)
    for _ in range(int(c["burn_time"] / c["dt"])):
        st_u, _ = ula(st_u, g)
    st_g = mala_init(theta0, post, step_size=c["T"] * gibbs_dt, precond=1.0 / post.precision)
    for _ in range(2 * n_adapt):
        st_g, _ = gstep(st_g, g)
    # up to _N_OBS recorded draws per chain: coarser thinning would cap the ESS of a sampler whose
    # draws are nearly independent (the exact sweep) at the number of draws
    (U_u, F_u, sec_u, _, _), t_u, n_u = _sized_run(ula, st_u, g, post, labels, min_time, 50)
    (U_g, F_g, sec_g, st_g, acc_g), t_g, n_g = _sized_run(gstep, st_g, g, post, labels, min_time, 20)
    runs = {"ula": (U_u, F_u, sec_u), "gibbs_mala": (U_g, F_g, sec_g)}
    exact_timing = {}
    if c["activation"] == "linear":  # every block exact: same start, burn-in as Gibbs-HMC
        xstep = gibbs_linear_step(post)
        st_x = langevin_init(theta0)
        for _ in range(2 * n_adapt):
            st_x, _ = xstep(st_x, g)
        (U_x, F_x, sec_x, _, _), t_x, n_x = _sized_run(xstep, st_x, g, post, labels, min_time, 20)
        runs["gibbs_exact"] = (U_x, F_x, sec_x)
        exact_timing = dict(exact_step_ms=t_x * 1e3, exact_steps=n_x)
    k = int(np.argmax(F_g.mean((0, 1))))  # the most populated code
    out = dict(toy=toy, config=dict(c), n_chains=n_chains, device=str(dev), n_leapfrog=n_leapfrog,
               gibbs_dt=gibbs_dt, ula_step_ms=t_u * 1e3, gibbs_step_ms=t_g * 1e3,
               ula_steps=n_u, gibbs_steps=n_g,
               gibbs_step_size_mean=float(st_g.step_size.mean()), gibbs_acceptance=acc_g, code=k,
               **exact_timing)
    for name, pick in (("U00", lambda U, F: U), (f"code_{k}_fraction", lambda U, F: F[..., k])):
        summ = {key: _summ(pick(U, F), sec) for key, (U, F, sec) in runs.items()}
        ula_rate = summ["ula"]["ess_per_s"]
        out[name] = dict(summ, ess_per_s_ratio=summ["gibbs_mala"]["ess_per_s"] / ula_rate)
        if "gibbs_exact" in summ:
            out[name]["exact_ess_per_s_ratio"] = summ["gibbs_exact"]["ess_per_s"] / ula_rate
    return out


def format_bench_mcmc(res: list) -> str:
    lines = ["Effective samples per second, Gibbs (exact readout) + Metropolis-adjusted hidden "
             "block vs ULA at the case's dt (bulk ESS over all chains, about equal wall time)"]
    for r in res:
        c = r["config"]
        lines.append(f"  {r['toy']} toy (N=P={c['N']}, T={c['T']}, {r['n_chains']} chains): ULA dt="
                     f"{c['dt']} {r['ula_step_ms']:.2f} ms/step; Gibbs-"
                     f"{'HMC x' + str(r['n_leapfrog']) if r['n_leapfrog'] else 'MALA'} step size "
                     f"{r['gibbs_step_size_mean']:.3g} (adapted, acceptance {r['gibbs_acceptance']:.2f}) "
                     f"{r['gibbs_step_ms']:.2f} ms/step")
        for name in [k for k in r if k == "U00" or k.startswith("code_")]:
            q = r[name]
            u, g = q["ula"], q["gibbs_mala"]
            lines.append(f"    {name}: ULA {u['mean']:.5g} ± {u['se']:.2g} (ESS {u['ess']:.0f}, "
                         f"{u['ess_per_s']:.1f}/s) | Gibbs {g['mean']:.5g} ± {g['se']:.2g} "
                         f"(ESS {g['ess']:.0f}, {g['ess_per_s']:.1f}/s) -> ratio "
                         f"{q['ess_per_s_ratio']:.1f}x (target >= 10x)")
            if "gibbs_exact" in q:
                x = q["gibbs_exact"]
                lines.append(f"      every block exact ({r['exact_step_ms']:.2f} ms/step): "
                             f"{x['mean']:.5g} ± {x['se']:.2g} (ESS {x['ess']:.0f}, "
                             f"{x['ess_per_s']:.1f}/s) -> ratio {q['exact_ess_per_s_ratio']:.1f}x")
    return "\n".join(lines)


@register_benchmark("sampler-ess", devices=("cpu", "cuda"),
                    description="ESS/s of U[0,0] and code fractions: Gibbs (exact readout) + "
                                "HMC hidden block vs ULA at the case's dt, linear toy, sigmoid toy "
                                "at T = 0.002 and at 0.5 T_c")
def _run_mcmc(*, device: str, min_time: float) -> BenchResult:
    res = [bench_mcmc_ess(toy, device=device, min_time=10 * min_time) for toy in _TOYS]
    return BenchResult("sampler-ess", {"runs": res}, format_bench_mcmc(res))
