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

import numpy as np
from richlazy.simulate import NetworkSpec, orthogonal_toy_task
from richlazy.theory import (
    locate_critical_temperature,
    solve_sigmoid_toy,
    sweep_temperature,
    toy_class_targets,
)

from ...codes import code_key, code_label, neuron_codes
from ...core._compare import compare
from ...core._registry import CaseContext, CaseOutcome, register_case
from ...core._sampling import sample_posterior
from ...observables import class_means
from ...recipes import code_fraction_quantities, code_readout_quantities, fraction_outside_quantity
from ...stats import mean_se

# T values as multiples of the P -> inf T_c (~0.082 for this task): well below, just below and
# above, with Gibbs-HMC steps per T (exact readout draw + HMC of the hidden block). With ULA the
# code fractions had split-R-hat 1.25-1.6 after 120 000 steps at 0.5 T_c; Gibbs-HMC reached
# 1.016-1.022 in 6000 steps there and <= 1.006 at 0.85 and 1.5 T_c.
TEMPERATURE_SIZES = {
    "quick": dict(N=100, P=100, N0=120, n_chains=4, T_over_Tc=(0.5, 0.85, 1.5), dt=0.02,
                  n_steps=(24_000, 9_000, 4_000), n_recorded=1_000),
    "full": dict(N=500, P=500, N0=520, n_chains=4, T_over_Tc=(0.25, 0.5, 0.75, 0.9, 1.1, 1.5),
                 dt=0.004, n_steps=(40_000,) * 6),
}
_RATIOS = (0.5, 0.25, 0.25)
_Y_MINUS = 0.5
#: ergodicity classes (compare(..., ergodicity=, reason=)): below T_c the barriers between codes
#: are P dg(T), vanishing at T_c (supplement E), low enough at T >= 0.5 T_c and P = 100 for the
#: chains to switch codes; above T_c one code and no barrier
_BELOW = dict(ergodicity="mixing", reason="code barriers P dg(T) vanish at T_c (supplement E) and are "
              "crossed on the sampled time scale at T >= 0.5 T_c, P = 100")
_ABOVE = dict(ergodicity="mixing", reason="above T_c one code and no barrier between neurons' states")


@register_case(
    "coding/sigmoid-temperature",
    description=(
        "Critical temperature of the redundant code (seed 000 supplement E): sigmoid-erf non-lazy "
        "network on the orthogonal toy task (classes [1/2,1/4,1/4], y+=1, y-=1/2) sampled at "
        "several rescaled temperatures below and above the theory's T_c (where the codes merge "
        "into one); code fractions, class-mean outputs (vs y - T t) and mean readouts at each T "
        "vs the finite-T P -> infinity theory (notes §2.3 (S1), reconstructed), and the single "
        "code's readouts and activations above T_c; Gibbs-HMC sampler."
    ),
)
def sigmoid_temperature(ctx: CaseContext) -> CaseOutcome:
    cfg = TEMPERATURE_SIZES[ctx.size]
    N, P, N0 = cfg["N"], cfg["P"], cfg["N0"]
    m = len(_RATIOS)
    rho = np.array(_RATIOS)
    Yc = toy_class_targets(m, y_plus=1.0, y_minus=_Y_MINUS)
    tc = locate_critical_temperature(0.02, 0.3, ratios=rho, class_targets=Yc, atol=1e-5)
    Tc = tc.T_c
    Ts = [round(f * Tc, 5) for f in cfg["T_over_Tc"]]
    # one sweep for the figure's curves and the sampled temperatures (on the same grid)
    grid = np.unique(np.concatenate([np.linspace(0.0, 1.6 * Tc, 33), np.asarray(Ts)]))
    curves = sweep_temperature(grid, ratios=rho, class_targets=Yc)
    sweep = [curves[int(np.searchsorted(grid, T))] for T in Ts]
    bad = [T for T, s in zip(Ts, sweep, strict=True) if not s.converged]
    if bad:
        raise RuntimeError(f"the theory did not converge at T = {bad}: {curves.message}")
    task = orthogonal_toy_task(P, N0, ratios=_RATIOS, y_plus=1.0, y_minus=_Y_MINUS,
                               seed=ctx.child_seed(0))
    labels = task.labels
    spec = NetworkSpec(N0=N0, N=N, L=1, m=m, activation="sigmoid_erf", regime="nonlazy")

    def observe(post, theta, gen):
        h = post.phi(post.preactivations(theta)[-1])  # (E, N, P)
        cm = class_means(h.transpose(1, 2), labels, m).transpose(1, 2)  # (E, N, m)
        return {"cm": cm.float(), "A": post.unflatten(theta)["A"].float(),
                "F": class_means(post.outputs(theta), labels, m).float()}  # (E, m classes, m)

    note = (f"theory: finite-T P -> infinity equations at the same T; abs tolerance 4 SE + 3/N "
            f"(N={N}) for fractions and outputs, rel tolerance 3/N + 4 SE for the mean readout "
            "(finite-N and finite-P corrections O(1/N), O(1/P) fixed in advance)")
    note_fin = (f"theory: finite-P solution at the sampled P={P} and T (codes read from the "
                f"empirical class means of P rho_c inputs, as sampled); rel tolerance 3/N + 4 SE "
                f"for mean activations, abs 4 SE + 3/N for fractions (N={N}), fixed in advance")
    finite = [solve_sigmoid_toy(rho, Yc, P=P, T=T, throw=True) for T in Ts]
    qs, sampled, modes, seconds = [], [], {}, 0.0
    for i, (T, sol) in enumerate(zip(Ts, sweep, strict=True)):
        n_steps = cfg["n_steps"][i]
        _, run = sample_posterior(
            spec, task.X, task.Y, T=T, sigma_a2=1.0 / P, dt=cfg["dt"], n_chains=cfg["n_chains"],
            n_steps=n_steps, burn_in=n_steps // 2, thin=max(1, n_steps // cfg.get("n_recorded", 400)),
            observe=observe, seed=ctx.child_seed(1 + i), device=ctx.device,
            checkpoint_path=ctx.checkpoint_dir / f"chain_T{i}.pt", progress=ctx.progress,
            desc=f"coding/sigmoid-temperature T={T:g}", sampler="gibbs-hmc",
        )
        seconds += run.seconds
        cm = run.samples["cm"].double().numpy()  # (S, E, N, m)
        A = run.samples["A"].double().numpy()
        F = run.samples["F"].double().numpy()  # (S, E, m, m)
        keys_t = (neuron_codes(cm) * (1 << np.arange(m))).sum(-1)  # (S, E, N)
        prefix = f"T={T:g} ({T / Tc:.2f} T_c): "
        erg = _BELOW if T < Tc else _ABOVE
        qs += code_fraction_quantities(sol, keys_t, N, note, prefix=prefix, erg=erg)
        qs += _threshold_free(sol, F, A, N, note, prefix, erg)
        fin = finite[i]
        qs.append(_outside_fraction(sol, fin, keys_t, N, note_fin, prefix, erg))
        shown = [c for c, f in fin.code_fractions.items() if f >= _MIN_CODE_FRACTION]
        keys = [code_key(c) for c in shown]
        qs += code_readout_quantities(
            keys, np.array([fin.code_readouts[c] for c in shown]),
            np.array([fin.code_activations[c] for c in shown]), keys_t, A, cm, N, note_fin,
            prefix=prefix + "finite-P theory, ", erg=erg)
        modes[f"T={T:g}"] = {lab: np.round(sol.a_gamma[g], 3).tolist()
                             for g, lab in enumerate(sol.code_strings())}
        sampled.append({code_label([(k >> j) & 1 for j in range(m)]): float((keys_t == k).mean())
                        for k in np.unique(keys_t)})
    figs = _figure(ctx, Tc, Ts, sampled, grid, curves, finite)
    notes = (f"T_c = {Tc:.5f} (P -> inf; codes just below: "
             f"{ {c: round(w, 4) for c, w in tc.codes_below.items()} }, above: "
             f"{tc.code_above}). Theory populations per T: "
             f"{[dict(zip(s.code_strings(), np.round(s.P_gamma, 3).tolist(), strict=True)) for s in sweep]}; "
             f"sampled: {[{c: round(v, 3) for c, v in d.items()} for d in sampled]}. "
             "Finite-P code fractions per T: "
             f"{[{c: round(f, 4) for c, f in s.code_fractions.items() if f >= 1e-4} for s in finite]}. "
             f"P -> inf readout modes per code: {modes}. Gibbs-HMC steps per T {list(cfg['n_steps'])} x "
             f"{cfg['n_chains']} chains (half burn-in); sampling took {seconds:.1f} s.")
    params = dict(cfg, T=Ts, T_c=Tc, m=m, ratios=list(_RATIOS), y_plus=1.0, y_minus=_Y_MINUS,
                  sigma_a2=1.0 / P)
    return CaseOutcome(quantities=qs, figures=figs, params=params, notes=notes)


# codes whose per-code readouts are compared: at least this finite-P fraction of the neurons
_MIN_CODE_FRACTION = 0.02


def _outside_fraction(sol, fin, keys_t, N, note, prefix, erg):
    """The fraction of neurons in codes the P -> inf theory lacks, vs the finite-P theory's."""
    predicted = [code_key(c) for c in sol.code_strings()]
    th = sum(f for c, f in fin.code_fractions.items() if code_key(c) not in predicted)
    return fraction_outside_quantity(
        f"{prefix}finite-P theory, fraction of neurons in codes outside the P -> inf set", th,
        keys_t, predicted, N, note, erg=erg)


def _threshold_free(sol, F, A, N, note, prefix, erg):
    """Quantities that need no code assignment: the class-mean training outputs vs y_c - T t_c
    (the finite-T output constraint) and the mean readout over all neurons vs
    sum_gamma P_gamma a_gamma."""
    qs = []
    m = F.shape[-1]
    out_th = sol.mean_output_classes  # (classes, m) = y_c - T t_c
    for c in range(out_th.shape[0]):
        for r in range(m):
            ser = F[:, :, c, r]  # (S, E)
            mu, se = mean_se(ser.mean(axis=0))
            qs.append(compare(f"{prefix}mean output, class {c}, output {r} (y - T t = "
                              f"{out_th[c, r]:.3f})", out_th[c, r], mu, stderr=max(se, 1e-12),
                              kind="abs", tol=4 * se + 3.0 / N, note=note, mixing=ser, **erg))
    a_th = sol.P_gamma @ sol.a_gamma
    for r in range(m):
        ser = A[..., r].mean(axis=-1)  # (S, E): mean over neurons
        mu, se = mean_se(ser.mean(axis=0))
        qs.append(compare(f"{prefix}mean readout over all neurons, output {r}", a_th[r], mu,
                          stderr=max(se, 1e-12), kind="rel", tol=3.0 / N + 4 * se / abs(a_th[r]),
                          note=note, mixing=ser, **erg))
    return qs


def _figure(ctx, Tc, Ts, sampled, grid, curves, finite):
    pops, reads = curves.populations(), curves.readouts()
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
