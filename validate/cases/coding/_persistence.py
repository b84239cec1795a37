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
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
from richlazy.simulate import NetworkSpec, orthogonal_toy_task
from richlazy.theory import (
    input_kernel,
    solve_linear_network,
    solve_relu_toy,
    solve_sigmoid_toy,
    toy_class_targets,
)
from richlazy.validate import Compared, Equilibration, Sizes, compare, declare_case

from ...recipes import (
    PERSISTENCE_TOL_NOTE,
    lagged_persistence,
    lagged_set_persistence,
    origin_series,
    persistence_curve,
    persistence_rule,
    run_seeded,
    sample_posterior,
)
from ...stats import chain_diagnostics, fraction_se, worst_mixing


@dataclass(frozen=True)
class PersistenceSize:
    N: int  # width of every network
    P: int  # training inputs
    N0: int  # input dimension


SIZES = Sizes(quick=PersistenceSize(N=50, P=50, N0=60), full=PersistenceSize(N=200, P=200, N0=220))
#: the three ensembles' samplers per size (report parameters after the configuration's)
ARMS = {
    "quick": dict(
        linear=dict(n_chains=8, T=0.05, dt=0.02, n_steps=6_000, burn_in=1_000, thin=25, y_minus=0.0,
                    sampler="gibbs-exact"),
        sigmoid=dict(n_chains=4, T=0.002, dt=0.02, n_steps=48_000, burn_in=16_000, thin=200,
                     anneal_from=0.01, anneal_steps=12_000, y_minus=0.4),
        relu=dict(n_chains=4, T=0.01, dt=0.01, n_steps=48_000, burn_in=16_000, thin=200, y_minus=-0.5,
                  amplitudes=(0.5, 2.0)),
    ),
    "full": dict(
        linear=dict(n_chains=8, T=0.05, dt=0.005, n_steps=800_000, burn_in=40_000, thin=2_000,
                    y_minus=0.0),
        sigmoid=dict(n_chains=4, T=0.002, dt=0.02, n_steps=400_000, burn_in=120_000, thin=1_000,
                     anneal_from=0.01, anneal_steps=100_000, y_minus=0.4),
        relu=dict(n_chains=4, T=0.01, dt=0.002, n_steps=800_000, burn_in=200_000, thin=2_000,
                  y_minus=-0.5, amplitudes=(0.5, 2.0)),
    ),
}
RATIOS = (0.5, 0.25, 0.25)
_SIGN = "sign-pattern persistence"


def _exceeds(run, name, theory, est, *, note, erg):
    """A trend claim: the estimate exceeds the theory value by 10 SE."""
    d, se, mixing = est
    return compare(name, theory, d, stderr=se, kind="gt", tol=10.0, mixing=mixing, note=note, **erg)


CASE = declare_case(
    "coding/persistence",
    description=(
        "Code persistence over sampling time, linear vs sigmoid-erf vs ReLU non-lazy networks on "
        "the orthogonal toy task (seed 000, Figs. 2 and 5; notes §3.1, §4.3, §5.1): linear readout "
        "sign patterns mix to the orthant-probability value sum_s p_s^2 of a ~ N(0, U); sigmoid "
        "codes persist (broken permutation symmetry); ReLU outliers keep their identity."
    ),
    sizes=SIZES,
    theory=lambda ctx, cfg: _theory(ctx, cfg),
    simulation=lambda ctx, cfg, th: _simulation(ctx, cfg, th),
    compared=(
        Compared(lambda run: f"linear: {_SIGN} at lag {run.simulation.linear.lag_steps} steps",
                 theory=lambda run: run.theory.mix_lin, estimate=lambda run: run.simulation.linear.est,
                 rule=persistence_rule, options=lambda run: dict(erg=_LINEAR, note=(
                     "theory: mixing value sum_s p_s^2 of a ~ N(0, U) (U at the sampling T); "
                     + _lag_note(run.theory.arms["linear"], run.simulation.linear.lag_steps)
                     + PERSISTENCE_TOL_NOTE))),
        Compared(lambda run: f"sigmoid: {_SIGN} at lag {run.simulation.sigmoid.lag_steps} steps",
                 theory=lambda run: 1.0, estimate=lambda run: run.simulation.sigmoid.est,
                 rule=persistence_rule,
                 options=lambda run: dict(erg=_SIGMOID, note=(
                     f"theory: frozen codes (barriers O(P)); mixing value would be sum_gamma P_gamma^2 = "
                     f"{run.theory.mix_sig:.3f}; " + PERSISTENCE_TOL_NOTE))),
        # a difference of two independent ensembles (different lengths): the worse diagnostics
        Compared("sigmoid minus linear persistence (symmetry breaking vs mixing)", theory=lambda run: 0.0,
                 estimate=lambda run: run.simulation.difference, rule=_exceeds,
                 options=lambda run: dict(erg=_SIGMOID, note=(
                     "trend claim: the sigmoid codes persist far above the linear mixing value; "
                     "must exceed 10 SE"))),
        Compared(lambda run: (f"ReLU: identity persistence of the top-{run.theory.k} readouts at lag "
                              f"{run.simulation.relu.lag_steps} steps"),
                 theory=lambda run: 1.0, estimate=lambda run: run.simulation.relu.est, rule=persistence_rule,
                 options=lambda run: dict(erg=_RELU, note=(
                     f"theory: {run.theory.k} frozen outliers (readouts O(sqrt N)); exchangeable roles "
                     f"would give k/N = {run.theory.k / run.cfg.N:.3f}; " + PERSISTENCE_TOL_NOTE))),
    ),
    figures=lambda run: _figure(run.ctx, run.simulation.curves, (run.simulation.relu.est[0],
                                                                 run.theory.k / run.cfg.N)),
    notes=lambda run: _notes(run),
    params=lambda run: dict(ARMS[run.ctx.size]),
)


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


def _theory(ctx, cfg):
    """Per ensemble its task (stream 0, its y-), and the three theories: the linear network's U
    and the orthant mixing value, the sigmoid codes' mixing value, the ReLU outlier count."""
    arms = ARMS[ctx.size]
    tasks = {name: orthogonal_toy_task(cfg.P, cfg.N0, ratios=RATIOS, y_plus=1.0, y_minus=c["y_minus"],
                                       seed=ctx.child_seed(0)) for name, c in arms.items()}
    lin, sig, relu = arms["linear"], arms["sigmoid"], arms["relu"]
    sol = solve_linear_network(input_kernel(tasks["linear"].X), tasks["linear"].Y, L=1,
                               sigma_a2=1.0 / cfg.P, T=lin["T"], throw=True)
    p_s = orthant_probabilities(sol.U)
    ssol = solve_sigmoid_toy(np.array(RATIOS), toy_class_targets(3, y_plus=1.0, y_minus=sig["y_minus"]),
                             P=None, throw=True)
    rsol = solve_relu_toy(np.array(RATIOS), toy_class_targets(3, y_plus=1.0, y_minus=relu["y_minus"]),
                          throw=True)
    return SimpleNamespace(arms=arms, tasks=tasks, mix_lin=float(sum(v * v for v in p_s.values())),
                           mix_sig=float(np.sum(ssol.P_gamma ** 2)), k=int(len(rsol.outlier_classes)))


def _run(ctx, name, activation, cfg, task, N, P, N0):
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
        return run.samples["A"].double().cpu().numpy()
    _, run = sample_posterior(
        spec, task.X, task.Y, T=cfg["T"], sigma_a2=1.0 / P, dt=cfg["dt"], n_chains=cfg["n_chains"],
        n_steps=cfg["n_steps"], burn_in=cfg["burn_in"], thin=cfg["thin"], observe=observe,
        seed=ctx.child_seed(_STREAMS[name]), device=ctx.device,
        checkpoint_path=ctx.checkpoint_dir / f"{name}.pt", progress=ctx.progress,
        desc=f"coding/persistence {name}", sampler=cfg.get("sampler", "ula"),
        anneal_from=cfg.get("anneal_from"), anneal_steps=cfg.get("anneal_steps", 0),
    )
    return run.samples["A"].double().cpu().numpy()  # (S, E, N, m)


def _sign_persistence(A, N, thin):
    """Readout sign-pattern persistence at the longest lag (half the window as origins): the
    estimate (mean, SE, chain diagnostics), the lag in steps and the persistence curve."""
    keys = _sign_keys(A)
    lag = keys.shape[0] // 2
    p, se = fraction_se(lagged_persistence(keys, lag), keys.shape[1] * N)
    mx = chain_diagnostics(origin_series(keys[lag:] == keys[:-lag]), layout="draw_chain")
    return SimpleNamespace(est=(p, se, mx), lag_steps=lag * thin, curve=persistence_curve(keys))


def _simulation(ctx, cfg, th):
    """The three ensembles (linear, sigmoid, ReLU) and their persistences at the longest lag."""
    N, P, N0, arms = cfg.N, cfg.P, cfg.N0, th.arms
    c = arms["linear"]
    linear = _sign_persistence(_run(ctx, "linear", "linear", c, th.tasks["linear"], N, P, N0), N, c["thin"])
    c = arms["sigmoid"]
    sigmoid = _sign_persistence(_run(ctx, "sigmoid", "sigmoid_erf", c, th.tasks["sigmoid"], N, P, N0), N,
                                c["thin"])
    (p_sig, se_sig, mx_sig), (p_lin, se_lin, mx_lin) = sigmoid.est, linear.est
    difference = (p_sig - p_lin, math.hypot(se_sig, se_lin), worst_mixing(mx_sig, mx_lin))
    c = arms["relu"]
    A = _run(ctx, "relu", "relu", c, th.tasks["relu"], N, P, N0)
    k = th.k
    norms = np.linalg.norm(A, axis=-1)  # (S, E, N)
    top = np.argsort(-norms, axis=-1, kind="stable")[..., :k]
    lag = top.shape[0] // 2
    p_relu, se_relu = fraction_se(lagged_set_persistence(top, lag), top.shape[1] * k)
    hits = (top[lag:, :, :, None] == top[:-lag, :, None, :]).any(-1)  # (S - lag, E, k)
    srt = np.sort(norms, axis=-1)
    relu = SimpleNamespace(est=(p_relu, se_relu, origin_series(hits)), lag_steps=lag * c["thin"],
                           gap=float(np.median(srt[..., -k] / srt[..., -k - 1])))
    curves = {"linear": (linear.curve, arms["linear"]["thin"], th.mix_lin),
              "sigmoid": (sigmoid.curve, arms["sigmoid"]["thin"], th.mix_sig)}
    return SimpleNamespace(linear=linear, sigmoid=sigmoid, difference=difference, relu=relu, curves=curves)


def _notes(run):
    th, sim, k, N = run.theory, run.simulation, run.theory.k, run.cfg.N
    return (f"ReLU: median ratio of the k-th to the (k+1)-th largest readout norm {sim.relu.gap:.2f} "
            f"(k = {k} theory outliers). persistence at the longest lag: linear {sim.linear.est[0]:.3f} "
            f"(mixing {th.mix_lin:.3f}), sigmoid {sim.sigmoid.est[0]:.3f} (mixing {th.mix_sig:.3f}), ReLU "
            f"outliers {sim.relu.est[0]:.3f} (chance {k / N:.3f}).")


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
