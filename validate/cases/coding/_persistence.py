"""Code persistence: linear vs sigmoid-erf vs ReLU networks (seed 000, Figs. 2 and 5).

The coding schemes differ in whether a neuron keeps its role over sampling time:

* **linear** (analog code): the readout posterior of every neuron is one Gaussian, a ~ N(0, U)
  (notes §3.1), which the sampler explores fully. A neuron's readout sign pattern
  ``sign(a) in {+,-}^m`` therefore decorrelates, and the probability that it is the same at two
  times far apart is the mixing value ``sum_s p_s^2``, with ``p_s`` the orthant probabilities of
  N(0, U) (closed form for m = 3).
* **sigmoid-erf** (redundant code): each neuron sits at one of the code readouts a_gamma, separated
  by barriers of height O(P) (P(a) ∝ exp(P g(a)), notes §4.3): permutation symmetry is broken and
  the sign pattern persists (probability 1 at P -> infinity), far above the mixing value
  ``sum_gamma P_gamma^2``.
* **ReLU** (sparse code): a few outlier neurons carry O(sqrt N) readouts and are frozen (notes §5.1);
  the identity of the outliers persists (probability 1), against ``k/N`` if roles were exchanged.
  The ReLU chains start from seeded single-class outliers (as in ``coding/relu-toy``): from a prior
  draw the outliers form by a slow coarsening (many mid-sized outliers merging) that a quick run
  does not finish, and the identity of a transient top-k set is not the quantity of interest.

Persistence at lag l is the fraction of (time origin, neuron) pairs whose code at the two times is
equal, averaged over all origins in the recorded window; the case uses the longest lag with half
the window as origins.
"""

from __future__ import annotations

import math

import numpy as np
from richlazy.simulate import NetworkSpec, orthogonal_toy_task
from richlazy.theory import (
    input_kernel,
    solve_linear_network,
    solve_relu_toy,
    solve_sigmoid_toy,
    toy_class_targets,
)

from ...core._compare import Equilibration, compare
from ...core._registry import CaseContext, CaseOutcome, register_case
from ...core._sampling import sample_posterior
from ...recipes import (
    lagged_persistence,
    lagged_set_persistence,
    origin_series,
    persistence_curve,
    run_seeded,
)
from ...stats import chain_diagnostics, fraction_se, worst_mixing

PERSISTENCE_SIZES = {
    "quick": dict(
        N=50, P=50, N0=60,
        linear=dict(n_chains=8, T=0.05, dt=0.02, n_steps=6_000, burn_in=1_000, thin=25, y_minus=0.0,
                    sampler="gibbs-exact"),
        sigmoid=dict(n_chains=4, T=0.002, dt=0.02, n_steps=48_000, burn_in=16_000, thin=200,
                     anneal_from=0.01, anneal_steps=12_000, y_minus=0.4),
        relu=dict(n_chains=4, T=0.01, dt=0.01, n_steps=48_000, burn_in=16_000, thin=200, y_minus=-0.5,
                  amplitudes=(0.5, 2.0)),
    ),
    "full": dict(
        N=200, P=200, N0=220,
        linear=dict(n_chains=8, T=0.05, dt=0.005, n_steps=800_000, burn_in=40_000, thin=2_000,
                    y_minus=0.0),
        sigmoid=dict(n_chains=4, T=0.002, dt=0.02, n_steps=400_000, burn_in=120_000, thin=1_000,
                     anneal_from=0.01, anneal_steps=100_000, y_minus=0.4),
        relu=dict(n_chains=4, T=0.01, dt=0.002, n_steps=800_000, burn_in=200_000, thin=2_000,
                  y_minus=-0.5, amplitudes=(0.5, 2.0)),
    ),
}
RATIOS = (0.5, 0.25, 0.25)


def orthant_probabilities(U) -> dict[tuple[int, ...], float]:
    """Probabilities of the 8 sign patterns of a ~ N(0, U), m = 3 (Sheppard/Plackett):
    ``Pr[s_r a_r > 0 for all r] = 1/8 + (asin c_01 + asin c_02 + asin c_12)/(4 pi)`` with the
    correlations ``c_rs`` of ``diag(s) U diag(s)``."""
    U = np.asarray(U, dtype=float)
    if U.shape != (3, 3):
        raise ValueError(f"U must be a 3 x 3 covariance, got shape {U.shape}")
    d = np.sqrt(np.diag(U))
    C = U / np.outer(d, d)
    out = {}
    for bits in range(8):
        s = np.array([1 if (bits >> r) & 1 else -1 for r in range(3)])
        Cs = C * np.outer(s, s)
        out[tuple(int(b) for b in (s > 0))] = 0.125 + (math.asin(Cs[0, 1]) + math.asin(Cs[0, 2])
                                                         + math.asin(Cs[1, 2])) / (4 * math.pi)
    return out


def _sign_keys(A):
    """Readout sign patterns (..., N, m) -> integer keys (..., N)."""
    m = A.shape[-1]
    return ((A > 0) * (1 << np.arange(m))).sum(-1)


def _lag_note(cfg, lag_steps) -> str:
    """What the lag of the linear arm is, in the units of its sampler."""
    if cfg.get("sampler", "ula") == "gibbs-exact":
        return (f"the lag is {lag_steps} exact blocked-Gibbs sweeps (every layer drawn from its "
                "exact Gaussian conditional, plus neuron-scale moves); ")
    return (f"the lag is {lag_steps * cfg['T'] * cfg['dt']:.1f} relaxation times 1/(T dt) of the "
            "first-layer weights (ULA); ")


#: ergodicity classes (compare(..., ergodicity=, reason=)) of the compared persistences
_LINEAR = dict(ergodicity="mixing", reason="a linear neuron's readout law is one Gaussian N(0, U) "
               "(notes §3.1): no barrier, the chains explore every sign pattern")
_SIGMOID = dict(ergodicity="frozen", reason="codes freeze (barriers O(P), notes §4.3), and how many "
                "neurons flicker at a code border depends on the state each chain froze into",
                equilibration=Equilibration(False, (
                    "no certified equilibrium states: the chains start from an annealed prior draw; "
                    "population annealing and exact code moves did not equilibrate the codes within "
                    "the quick budget (docs/report_format.md)")))
_RELU = dict(ergodicity="mixing", reason="outlier identities freeze, but the persistence is the same "
             "in every permutation of the outlier roles, the only states of non-negligible weight (a "
             "split outlier costs exp(-P (1 - rho_c) log 2), notes §5.2)")

#: random stream of each ensemble (ctx.child_seed(k)); stream 0 draws the toy inputs
_STREAMS = {"linear": 1, "sigmoid": 2, "relu": 3}


def _run(ctx, name, activation, cfg, N, P, N0):
    task = orthogonal_toy_task(P, N0, ratios=RATIOS, y_plus=1.0, y_minus=cfg["y_minus"],
                               seed=ctx.child_seed(0))

    def observe(post, theta, gen):
        return {"A": post.unflatten(theta)["A"].float()}

    spec = NetworkSpec(N0=N0, N=N, L=1, m=3, activation=activation, regime="nonlazy")
    if "amplitudes" in cfg:  # ReLU: start from seeded single-class outliers (coding/relu-toy)
        _, run = run_seeded(
            spec, task, T=cfg["T"], sigma_a2=1.0 / P, dt=cfg["dt"], n_chains=cfg["n_chains"],
            n_steps=cfg["n_steps"], burn_in=cfg["burn_in"], thin=cfg["thin"], amplitudes=cfg["amplitudes"],
            class_targets=toy_class_targets(3, y_plus=1.0, y_minus=cfg["y_minus"]), observe=observe,
            seed=ctx.child_seed(_STREAMS[name]), device=ctx.device,
            checkpoint_path=ctx.checkpoint_dir / f"{name}.pt", progress=ctx.progress)
        return task, run, run.samples["A"].double().cpu().numpy()
    _, run = sample_posterior(
        spec, task.X, task.Y, T=cfg["T"], sigma_a2=1.0 / P, dt=cfg["dt"], n_chains=cfg["n_chains"],
        n_steps=cfg["n_steps"], burn_in=cfg["burn_in"], thin=cfg["thin"], observe=observe,
        seed=ctx.child_seed(_STREAMS[name]), device=ctx.device,
        checkpoint_path=ctx.checkpoint_dir / f"{name}.pt", progress=ctx.progress,
        desc=f"coding/persistence {name}", sampler=cfg.get("sampler", "ula"),
        anneal_from=cfg.get("anneal_from"), anneal_steps=cfg.get("anneal_steps", 0),
    )
    return task, run, run.samples["A"].double().cpu().numpy()  # (S, E, N, m)


@register_case(
    "coding/persistence",
    description=(
        "Code persistence over sampling time, linear vs sigmoid-erf vs ReLU non-lazy networks on "
        "the orthogonal toy task (seed 000, Figs. 2 and 5; notes §3.1, §4.3, §5.1): linear readout "
        "sign patterns mix to the orthant-probability value sum_s p_s^2 of a ~ N(0, U); sigmoid "
        "codes persist (broken permutation symmetry); ReLU outliers keep their identity."
    ),
)
def persistence(ctx: CaseContext) -> CaseOutcome:
    cfg = PERSISTENCE_SIZES[ctx.size]
    N, P, N0 = cfg["N"], cfg["P"], cfg["N0"]
    qs, curves, notes = [], {}, []
    tol_note = ("abs tolerance 3/N + 4 SE (finite-N corrections O(1/N)); SE = max(binomial over the "
                "E*N neurons, chain-to-chain spread / sqrt(E))")

    # ---- linear: mixing to the orthant-probability value
    c = cfg["linear"]
    task, run, A = _run(ctx, "linear", "linear", c, N, P, N0)
    sol = solve_linear_network(input_kernel(task.X), task.Y, L=1, sigma_a2=1.0 / P, T=c["T"], throw=True)
    p_s = orthant_probabilities(sol.U)
    mix_lin = float(sum(v * v for v in p_s.values()))
    keys = _sign_keys(A)
    S = keys.shape[0]
    lag = S // 2
    p_lin, se_lin = fraction_se(lagged_persistence(keys, lag), keys.shape[1] * N)
    mx_lin = chain_diagnostics(origin_series(keys[lag:] == keys[:-lag]))
    lag_steps = lag * c["thin"]
    qs.append(compare(f"linear: sign-pattern persistence at lag {lag_steps} steps", mix_lin, p_lin,
                      stderr=se_lin, kind="abs", tol=4 * se_lin + 3.0 / N, mixing=mx_lin,
                      note="theory: mixing value sum_s p_s^2 of a ~ N(0, U) (U at the sampling T); "
                           + _lag_note(c, lag_steps) + tol_note, **_LINEAR))
    curves["linear"] = (persistence_curve(keys), c["thin"], mix_lin)

    # ---- sigmoid: codes persist
    c = cfg["sigmoid"]
    _, run, A = _run(ctx, "sigmoid", "sigmoid_erf", c, N, P, N0)
    ssol = solve_sigmoid_toy(np.array(RATIOS), toy_class_targets(3, y_plus=1.0, y_minus=c["y_minus"]),
                             P=None, throw=True)
    mix_sig = float(np.sum(ssol.P_gamma ** 2))
    keys = _sign_keys(A)
    lag = keys.shape[0] // 2
    p_sig, se_sig = fraction_se(lagged_persistence(keys, lag), keys.shape[1] * N)
    mx_sig = chain_diagnostics(origin_series(keys[lag:] == keys[:-lag]))
    lag_steps = lag * c["thin"]
    qs.append(compare(f"sigmoid: sign-pattern persistence at lag {lag_steps} steps", 1.0, p_sig,
                      stderr=se_sig, kind="abs", tol=4 * se_sig + 3.0 / N, mixing=mx_sig,
                      note=f"theory: frozen codes (barriers O(P)); mixing value would be "
                           f"sum_gamma P_gamma^2 = {mix_sig:.3f}; " + tol_note, **_SIGMOID))
    diff = p_sig - p_lin
    se_d = math.hypot(se_sig, se_lin)
    # a difference of two independent ensembles (different lengths): the worse diagnostics
    qs.append(compare("sigmoid minus linear persistence (symmetry breaking vs mixing)", 0.0, diff,
                      stderr=se_d, kind="gt", tol=10.0, mixing=worst_mixing(mx_sig, mx_lin),
                      note="trend claim: the sigmoid codes persist far above the linear mixing value; "
                           "must exceed 10 SE", **_SIGMOID))
    curves["sigmoid"] = (persistence_curve(keys), c["thin"], mix_sig)

    # ---- ReLU: outlier identity persists
    c = cfg["relu"]
    _, run, A = _run(ctx, "relu", "relu", c, N, P, N0)
    rsol = solve_relu_toy(np.array(RATIOS), toy_class_targets(3, y_plus=1.0, y_minus=c["y_minus"]),
                          throw=True)
    k = int(len(rsol.outlier_classes))
    norms = np.linalg.norm(A, axis=-1)  # (S, E, N)
    top = np.argsort(-norms, axis=-1, kind="stable")[..., :k]
    lag = top.shape[0] // 2
    p_relu, se_relu = fraction_se(lagged_set_persistence(top, lag), top.shape[1] * k)
    hits = (top[lag:, :, :, None] == top[:-lag, :, None, :]).any(-1)  # (S - lag, E, k)
    lag_steps = lag * c["thin"]
    qs.append(compare(f"ReLU: identity persistence of the top-{k} readouts at lag {lag_steps} steps", 1.0,
                      p_relu, stderr=se_relu, kind="abs", tol=4 * se_relu + 3.0 / N,
                      mixing=origin_series(hits),
                      note=f"theory: {k} frozen outliers (readouts O(sqrt N)); exchangeable roles would give "
                           f"k/N = {k / N:.3f}; " + tol_note, **_RELU))
    srt = np.sort(norms, axis=-1)
    gap = float(np.median(srt[..., -k] / srt[..., -k - 1]))
    notes.append(f"ReLU: median ratio of the k-th to the (k+1)-th largest readout norm {gap:.2f} "
                 f"(k = {k} theory outliers).")

    figs = _figure(ctx, curves, (p_relu, k / N))
    notes.append(f"persistence at the longest lag: linear {p_lin:.3f} (mixing {mix_lin:.3f}), sigmoid "
                 f"{p_sig:.3f} (mixing {mix_sig:.3f}), ReLU outliers {p_relu:.3f} (chance {k / N:.3f}).")
    params = {kk: v for kk, v in cfg.items()}
    return CaseOutcome(quantities=qs, figures=figs, params=params, notes=" ".join(notes))


def _figure(ctx, curves, relu):
    with ctx.figure("code_persistence.png", figsize=(5.6, 3.6)) as (fig, ax):
        for i, (name, ((lags, pers), thin, mix)) in enumerate(curves.items()):
            ax.plot(lags * thin, pers, "o-", color=f"C{i}", ms=3, label=f"{name}: sign-pattern persistence")
            ax.axhline(mix, color=f"C{i}", ls=":", lw=1, label=f"{name}: mixing value")
        ax.axhline(relu[0], color="C2", ls="--", lw=1.2, label="ReLU: outlier identity (longest lag)")
        ax.set_xlabel("lag (sampler steps)")
        ax.set_ylabel("fraction of neurons keeping their code")
        ax.set_ylim(0, 1.05)
        ax.legend(frameon=False, fontsize=7)
    return ["code_persistence.png"]
