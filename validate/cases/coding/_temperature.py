"""Validation case for the critical temperature of the sigmoid toy (seed 000 supplement E: "above
an empirical T_c the network no longer shows a redundant coding scheme" [MT]).

Theory: :func:`richlazy.theory.sweep_temperature` / :func:`locate_critical_temperature` (P -> inf
equations at rescaled temperature T: outer objective ``+ (T/2) sum_c rho_c |t_c|^2``, output
``y_c - T t_c``; notes §2.3 (S1) [RECON]). Simulation: the non-lazy sigmoid-erf network sampled
at several T below and above T_c (Gibbs-HMC: exact readout draw, HMC of the hidden block).
Compared at each T: the code fractions, the class-mean training outputs against ``y_c - T t_c``
(the finite-T output constraint), and the mean readout over all neurons. Per-code readouts and
mean activations are compared with the finite-P theory at the sampled P
(``solve_sigmoid_toy(P=...)``): a neuron's code is read off by thresholding its empirical class
mean activations at 1/2, and at P = 100 the readout peaks of the codes are only 3-8 Laplace
standard deviations apart, so the neurons assigned to a code are the finite-P posterior
``exp(P g)`` over that code's threshold region, not the P -> inf mode (which the notes report
beside). The finite-P theory also predicts the small fraction of neurons in codes outside the
P -> inf set (tails of the peaks crossing the threshold).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
from richlazy.simulate import NetworkSpec, orthogonal_toy_task
from richlazy.theory import (
    locate_critical_temperature,
    solve_sigmoid_toy,
    sweep_temperature,
    toy_class_targets,
)
from richlazy.validate import Compared, Sizes, compare, declare_case

from ...codes import code_key, code_label, neuron_codes
from ...observables import class_means
from ...recipes import (
    code_fraction_estimate,
    code_readout_estimate,
    code_readout_indices,
    code_readout_name,
    code_readout_rule,
    fraction_outside_estimate,
    fraction_rule,
    sample_posterior,
)
from ...stats import mean_se


@dataclass(frozen=True)
class TemperatureSize:
    N: int  # width
    P: int  # training inputs
    N0: int  # input dimension
    n_chains: int
    T_over_Tc: tuple[float, ...]  # sampled temperatures as multiples of the P -> inf T_c
    dt: float
    n_steps: tuple[int, ...]  # Gibbs-HMC steps per temperature (half burn-in)


# T values as multiples of the P -> inf T_c (~0.082 for this task): well below, just below and
# above, with Gibbs-HMC steps per T (exact readout draw + HMC of the hidden block). With ULA the
# code fractions had split-R-hat 1.25-1.6 after 120 000 steps at 0.5 T_c; Gibbs-HMC reached
# 1.016-1.022 in 6000 steps there and <= 1.006 at 0.85 and 1.5 T_c.
SIZES = Sizes(
    quick=TemperatureSize(N=100, P=100, N0=120, n_chains=4, T_over_Tc=(0.5, 0.85, 1.5), dt=0.02,
                          n_steps=(24_000, 9_000, 4_000)),
    full=TemperatureSize(N=500, P=500, N0=520, n_chains=4, T_over_Tc=(0.25, 0.5, 0.75, 0.9, 1.1, 1.5),
                         dt=0.004, n_steps=(40_000,) * 6),
)
#: recorded samples per chain and temperature where a size sets it (a report parameter), else 400
_N_RECORDED = {"quick": 1_000}
_RATIOS = (0.5, 0.25, 0.25)
_Y_MINUS = 0.5
#: ergodicity classes (compare(..., ergodicity=, reason=)): below T_c the barriers between codes
#: are P dg(T), vanishing at T_c (supplement E), low enough at T >= 0.5 T_c and P = 100 for the
#: chains to switch codes; above T_c one code and no barrier
_BELOW = dict(ergodicity="mixing", reason="code barriers P dg(T) vanish at T_c (supplement E) and are "
              "crossed on the sampled time scale at T >= 0.5 T_c, P = 100")
_ABOVE = dict(ergodicity="mixing", reason="above T_c one code and no barrier between neurons' states")
# codes whose per-code readouts are compared: at least this finite-P fraction of the neurons
_MIN_CODE_FRACTION = 0.02
_OUTSIDE_P_INF = "fraction of neurons in codes outside the P -> inf set"


# ---- the rules of the rows ------------------------------------------------------------------


def _output_estimate(F, c, r):
    """(mean, SE, per-(sample, chain) series) of the class-c mean training output r."""
    ser = F[:, :, c, r]  # (S, E)
    mu, se = mean_se(ser.mean(axis=0))
    return mu, se, ser


def _readout_estimate(A, r):
    """(mean, SE, per-(sample, chain) series) of readout component r averaged over all neurons."""
    ser = A[..., r].mean(axis=-1)  # (S, E): mean over neurons
    mu, se = mean_se(ser.mean(axis=0))
    return mu, se, ser


def _output(run, name, theory, est, *, N, note, erg):
    """A class-mean training output vs y_c - T t_c: absolute tolerance 4 SE + 3/N."""
    mu, se, ser = est
    return compare(name, theory, mu, stderr=max(se, 1e-12), kind="abs", tol=4 * se + 3.0 / N,
                   note=note, mixing=ser, **erg)


def _mean_readout(run, name, theory, est, *, N, note, erg):
    """The mean readout over all neurons vs sum_gamma P_gamma a_gamma: relative tolerance
    3/N + 4 SE."""
    mu, se, ser = est
    return compare(name, theory, mu, stderr=max(se, 1e-12), kind="rel",
                   tol=3.0 / N + 4 * se / abs(theory), note=note, mixing=ser, **erg)


def _rows_at(i):
    """The compared rows at the i-th sampled temperature (none where the size samples fewer): code
    fractions, fraction outside the theory's codes, class-mean outputs, mean readouts (P -> inf
    theory), fraction outside the P -> inf codes and per-code readouts (finite-P theory)."""
    th, sm = (lambda run: run.theory.at[i]), (lambda run: run.simulation.at[i])

    def over(indices):
        return lambda run: indices(run) if i < len(run.theory.at) else []

    inf, fin = (lambda run, *k: th(run).inf), (lambda run, *k: th(run).fin)
    return (
        Compared(lambda run, g: f"{th(run).prefix}P_gamma code {th(run).labels[g]}",
                 theory=lambda run, g: th(run).sol.P_gamma[g], rule=fraction_rule, options=inf,
                 estimate=lambda run, g: code_fraction_estimate(sm(run).keys_t, th(run).keys[g], run.cfg.N),
                 over=over(lambda run: range(len(th(run).keys)))),
        Compared(lambda run: f"{th(run).prefix}fraction of neurons in codes the theory does not predict",
                 theory=lambda run: 0.0, rule=fraction_rule, options=inf, over=over(lambda run: [()]),
                 estimate=lambda run: fraction_outside_estimate(sm(run).keys_t, th(run).keys, run.cfg.N)),
        Compared(lambda run, c, r: (f"{th(run).prefix}mean output, class {c}, output {r} (y - T t = "
                                    f"{th(run).sol.mean_output_classes[c, r]:.3f})"),
                 theory=lambda run, c, r: th(run).sol.mean_output_classes[c, r], rule=_output,
                 estimate=lambda run, c, r: _output_estimate(sm(run).F, c, r), options=inf,
                 over=over(lambda run: np.ndindex(th(run).sol.mean_output_classes.shape[0], th(run).m))),
        Compared(lambda run, r: f"{th(run).prefix}mean readout over all neurons, output {r}",
                 theory=lambda run, r: th(run).a_mean[r], rule=_mean_readout, options=inf,
                 estimate=lambda run, r: _readout_estimate(sm(run).A, r),
                 over=over(lambda run: range(th(run).m))),
        Compared(lambda run: f"{th(run).prefix}finite-P theory, {_OUTSIDE_P_INF}",
                 theory=lambda run: th(run).outside, rule=fraction_rule, options=fin,
                 estimate=lambda run: fraction_outside_estimate(sm(run).keys_t, th(run).inf_keys, run.cfg.N),
                 over=over(lambda run: [()])),
        Compared(lambda run, g, r, q: code_readout_name(f"{th(run).prefix}finite-P theory, ",
                                                         th(run).shown[g], th(run).m, r, q),
                 theory=lambda run, g, r, q: (th(run).a_fin if q == "a" else th(run).m_fin)[g, r],
                 estimate=lambda run, g, r, q: code_readout_estimate(sm(run).keys_t, sm(run).A, sm(run).cm,
                                                                     th(run).shown[g], r, q),
                 rule=code_readout_rule,
                 over=over(lambda run: code_readout_indices(th(run).shown, sm(run).keys_t, th(run).m)),
                 options=lambda run, g, r, q: dict(th(run).fin, q=q, scale=th(run).a_norm[g])),
    )


CASE = declare_case(
    "coding/sigmoid-temperature",
    description=(
        "Critical temperature of the redundant code (seed 000 supplement E): sigmoid-erf non-lazy "
        "network on the orthogonal toy task (classes [1/2,1/4,1/4], y+=1, y-=1/2) sampled at "
        "several rescaled temperatures below and above the theory's T_c (where the codes merge "
        "into one); code fractions, class-mean outputs (vs y - T t) and mean readouts at each T "
        "vs the finite-T P -> infinity theory (notes §2.3 (S1), reconstructed), and the single "
        "code's readouts and activations above T_c; Gibbs-HMC sampler."
    ),
    sizes=SIZES,
    theory=lambda ctx, cfg: _theory(ctx, cfg),
    simulation=lambda ctx, cfg, th: _simulation(ctx, cfg, th),
    compared=tuple(row for i in range(max(len(SIZES.quick.T_over_Tc), len(SIZES.full.T_over_Tc)))
                   for row in _rows_at(i)),
    figures=lambda run: _figure(run),
    notes=lambda run: _notes(run),
    params=lambda run: _params(run),
)


# ---- the rules of the rows -------------------------------------------------------------------


def _outside_fraction(sol, fin, keys_t, N, note, prefix, erg):
    """The fraction of neurons in codes the P -> inf theory lacks, vs the finite-P theory's."""
    predicted = [code_key(c) for c in sol.code_strings()]
    th = sum(f for c, f in fin.code_fractions.items() if code_key(c) not in predicted)
    return fraction_rule(None, f"{prefix}finite-P theory, {_OUTSIDE_P_INF}", th,
                         fraction_outside_estimate(keys_t, predicted, N), N=N, note=note, erg=erg)


def _threshold_free(sol, F, A, N, note, prefix, erg):
    """Quantities that need no code assignment: the class-mean training outputs vs y_c - T t_c
    (the finite-T output constraint) and the mean readout over all neurons vs
    sum_gamma P_gamma a_gamma (the rows of the declaration, as a list)."""
    out_th, a_th, m = sol.mean_output_classes, sol.P_gamma @ sol.a_gamma, F.shape[-1]
    return ([_output(None, f"{prefix}mean output, class {c}, output {r} (y - T t = {out_th[c, r]:.3f})",
                     out_th[c, r], _output_estimate(F, c, r), N=N, note=note, erg=erg)
             for c in range(out_th.shape[0]) for r in range(m)]
            + [_mean_readout(None, f"{prefix}mean readout over all neurons, output {r}", a_th[r],
                             _readout_estimate(A, r), N=N, note=note, erg=erg) for r in range(m)])


# ---- the stages ------------------------------------------------------------------------------


def _theory(ctx, cfg):
    """T_c, the temperature sweep (figure curves and sampled T on one grid), the task and, per
    sampled T, the P -> inf and finite-P solutions with what the rows compare."""
    N, P = cfg.N, cfg.P
    m = len(_RATIOS)
    rho = np.array(_RATIOS)
    Yc = toy_class_targets(m, y_plus=1.0, y_minus=_Y_MINUS)
    tc = locate_critical_temperature(0.02, 0.3, ratios=rho, class_targets=Yc, atol=1e-5)
    Tc = tc.T_c
    Ts = [round(f * Tc, 5) for f in cfg.T_over_Tc]
    # one sweep for the figure's curves and the sampled temperatures (on the same grid)
    grid = np.unique(np.concatenate([np.linspace(0.0, 1.6 * Tc, 33), np.asarray(Ts)]))
    curves = sweep_temperature(grid, ratios=rho, class_targets=Yc)
    sweep = [curves[int(np.searchsorted(grid, T))] for T in Ts]
    bad = [T for T, s in zip(Ts, sweep, strict=True) if not s.converged]
    if bad:
        raise RuntimeError(f"the theory did not converge at T = {bad}: {curves.message}")
    task = orthogonal_toy_task(P, cfg.N0, ratios=_RATIOS, y_plus=1.0, y_minus=_Y_MINUS,
                               seed=ctx.child_seed(0))
    note = (f"theory: finite-T P -> infinity equations at the same T; abs tolerance 4 SE + 3/N "
            f"(N={N}) for fractions and outputs, rel tolerance 3/N + 4 SE for the mean readout "
            "(finite-N and finite-P corrections O(1/N), O(1/P) fixed in advance)")
    note_fin = (f"theory: finite-P solution at the sampled P={P} and T (codes read from the "
                f"empirical class means of P rho_c inputs, as sampled); rel tolerance 3/N + 4 SE "
                f"for mean activations, abs 4 SE + 3/N for fractions (N={N}), fixed in advance")
    finite = [solve_sigmoid_toy(rho, Yc, P=P, T=T, throw=True) for T in Ts]
    at = []
    for T, sol, fn in zip(Ts, sweep, finite, strict=True):
        erg = _BELOW if T < Tc else _ABOVE
        inf_keys = [code_key(c) for c in sol.code_strings()]
        shown = [c for c, f in fn.code_fractions.items() if f >= _MIN_CODE_FRACTION]
        a_fin = np.array([fn.code_readouts[c] for c in shown])
        at.append(SimpleNamespace(
            sol=sol, m=m, prefix=f"T={T:g} ({T / Tc:.2f} T_c): ", inf=dict(N=N, note=note, erg=erg),
            fin=dict(N=N, note=note_fin, erg=erg), labels=[code_label(c) for c in sol.codes],
            keys=[int((c * (1 << np.arange(m))).sum()) for c in sol.codes],
            a_mean=sol.P_gamma @ sol.a_gamma, inf_keys=inf_keys,
            outside=sum(f for c, f in fn.code_fractions.items() if code_key(c) not in inf_keys),
            shown=[code_key(c) for c in shown], a_fin=a_fin, a_norm=[float(np.linalg.norm(a)) for a in a_fin],
            m_fin=np.array([fn.code_activations[c] for c in shown])))
    return SimpleNamespace(tc=tc, Tc=Tc, Ts=Ts, grid=grid, curves=curves, sweep=sweep, task=task,
                           finite=finite, at=at)


def _simulation(ctx, cfg, th):
    """The Gibbs-HMC ensembles at the sampled temperatures: per T the neurons' code keys, readouts,
    class-mean activations and class-mean outputs; the sampled code populations and the P -> inf
    readout modes (notes, figure)."""
    m, labels = len(_RATIOS), th.task.labels
    spec = NetworkSpec(N0=cfg.N0, N=cfg.N, L=1, m=m, activation="sigmoid_erf", regime="nonlazy")

    def observe(post, theta, gen):
        h = post.phi(post.preactivations(theta)[-1])  # (E, N, P)
        cm = class_means(h.transpose(1, 2), labels, m).transpose(1, 2)  # (E, N, m)
        return {"cm": cm.float(), "A": post.unflatten(theta)["A"].float(),
                "F": class_means(post.outputs(theta), labels, m).float()}  # (E, m classes, m)

    at, sampled, modes, seconds = [], [], {}, 0.0
    for i, (T, sol) in enumerate(zip(th.Ts, th.sweep, strict=True)):
        n_steps = cfg.n_steps[i]
        _, run = sample_posterior(
            spec, th.task.X, th.task.Y, T=T, sigma_a2=1.0 / cfg.P, dt=cfg.dt, n_chains=cfg.n_chains,
            n_steps=n_steps, burn_in=n_steps // 2, thin=max(1, n_steps // _N_RECORDED.get(ctx.size, 400)),
            observe=observe, seed=ctx.child_seed(1 + i), device=ctx.device,
            checkpoint_path=ctx.checkpoint_dir / f"chain_T{i}.pt", progress=ctx.progress,
            desc=f"coding/sigmoid-temperature T={T:g}", sampler="gibbs-hmc",
        )
        seconds += run.seconds
        cm = run.samples["cm"].double().numpy()  # (S, E, N, m)
        keys_t = (neuron_codes(cm) * (1 << np.arange(m))).sum(-1)  # (S, E, N)
        at.append(SimpleNamespace(cm=cm, A=run.samples["A"].double().numpy(), keys_t=keys_t,
                                  F=run.samples["F"].double().numpy()))  # F: (S, E, m, m)
        modes[f"T={T:g}"] = {lab: np.round(sol.a_gamma[g], 3).tolist()
                             for g, lab in enumerate(sol.code_strings())}
        sampled.append({code_label([(k >> j) & 1 for j in range(m)]): float((keys_t == k).mean())
                        for k in np.unique(keys_t)})
    return SimpleNamespace(at=at, sampled=sampled, modes=modes, seconds=seconds)


def _params(run):
    """The report's parameters after the configuration's (n_recorded where the size sets it)."""
    recorded = {"n_recorded": _N_RECORDED[run.ctx.size]} if run.ctx.size in _N_RECORDED else {}
    return dict(recorded, T=run.theory.Ts, T_c=run.theory.Tc, m=len(_RATIOS), ratios=list(_RATIOS),
                y_plus=1.0, y_minus=_Y_MINUS, sigma_a2=1.0 / run.cfg.P)


def _notes(run):
    th, sim, cfg = run.theory, run.simulation, run.cfg
    pops = [dict(zip(s.code_strings(), np.round(s.P_gamma, 3).tolist(), strict=True)) for s in th.sweep]
    return (f"T_c = {th.Tc:.5f} (P -> inf; codes just below: "
            f"{ {c: round(w, 4) for c, w in th.tc.codes_below.items()} }, above: "
            f"{th.tc.code_above}). Theory populations per T: "
            f"{pops}; "
            f"sampled: {[{c: round(v, 3) for c, v in d.items()} for d in sim.sampled]}. "
            "Finite-P code fractions per T: "
            f"{[{c: round(f, 4) for c, f in s.code_fractions.items() if f >= 1e-4} for s in th.finite]}. "
            f"P -> inf readout modes per code: {sim.modes}. Gibbs-HMC steps per T {list(cfg.n_steps)} x "
            f"{cfg.n_chains} chains (half burn-in); sampling took {sim.seconds:.1f} s.")


def _figure(run):
    ctx, th, sampled = run.ctx, run.theory, run.simulation.sampled
    Tc, Ts, grid, finite = th.Tc, th.Ts, th.grid, th.finite
    pops, reads = th.curves.populations(), th.curves.readouts()
    with ctx.figure("code_populations_vs_T.png", 1, 2, figsize=(10, 3.6)) as (_fig, axes):
        for j, (code, pop) in enumerate(pops.items()):
            axes[0].plot(grid / Tc, pop, "-", color=f"C{j}", label=f"theory {code}")
            axes[0].plot(np.asarray(Ts) / Tc, [d.get(code, 0.0) for d in sampled], "o",
                         color=f"C{j}")
            axes[0].plot(np.asarray(Ts) / Tc, [s.code_fractions.get(code, 0.0) for s in finite],
                         "x", ms=8, color=f"C{j}")
            axes[1].plot(grid / Tc, reads[code][:, 0], "-", color=f"C{j}", label=f"{code}")
        for ax in axes:
            ax.axvline(1.0, color="k", ls=":", lw=1)
            ax.set_xlabel("T / T_c")
        axes[0].set_ylabel("fraction of neurons")
        axes[0].set_title("lines: P → ∞ theory, ×: finite-P theory, dots: sampled", fontsize=8)
        axes[1].set_ylabel("readout a_γ^0 (theory)")
        axes[0].legend(frameon=False, fontsize=7)
    return ["code_populations_vs_T.png"]
