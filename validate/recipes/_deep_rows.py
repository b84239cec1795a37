"""The theory side of ``coding/deep-sigmoid`` and ``coding/deep-sigmoid-3`` as the pieces and
compared rows of declared cases: :func:`deep_theory_pieces` solves the theory (the self-consistent
theory, or the feature layer
given the sampled kernel below and, for L > 2, layer 1 given the sampled conjugate kernel) and
returns the feature-layer and lower-layer comparisons it leads to, which :func:`deep_theory_rows`
states as rows (the same names, values, tolerances and ergodicity classes).

The rows read ``run.simulation.pieces`` (what :func:`deep_theory_pieces` returns) and
``run.cfg.N``.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
from richlazy.theory import solve_sigmoid_deep, solve_sigmoid_first_layer, solve_sigmoid_general

from ..codes import code_label
from ..core._compare import compare
from ..core._declaration import Compared
from ..stats import mean_se
from ._deep_theory import (
    _FRAC_TOL,
    _REL_TOL,
    FEATURE_FROZEN,
    LOWER_CONDITIONED,
    NOT_ANNEALED,
    _block_values,
    _feature_note,
    _first_note,
    layer_code_keys,
    theory_class_codes,
)

__all__ = ["deep_theory_pieces", "deep_theory_rows"]


def _feature(sol, keys_t, A, labels, tag, how):
    """The feature layer's comparison with a general-data solution ``sol``: its merged class
    codes (keys, P, readouts) against the sampled code keys ``keys_t`` and readouts ``A``."""
    keys, P_th, a_th = theory_class_codes(sol, labels, sol.a_gamma.shape[1])
    return SimpleNamespace(keys=keys, P_th=P_th, a_th=a_th, keys_t=keys_t, A=A, tag=tag,
                           m=sol.a_gamma.shape[1],
                           frac_note=(f"theory: fluctuation-free code weights P_gamma of the feature layer "
                                      f"{how}; {_FRAC_TOL}"),
                           read_note=f"theory: fluctuation-free code readouts {how}; {_REL_TOL}")


def _lower(l, K_theory, code_fractions, K_sampled, run, labels, tag, L, where=None):
    """Layer l's comparison: class blocks of K_l and code fractions against a theory (by default
    the self-consistent solution; ``where`` says otherwise)."""
    m = int(labels.max()) + 1
    how = ("layer 1 by the exact field integral" if l == 1 else
           f"layer {l} by the mode-wise field integral over class shifts and fields")
    if where is None:
        where = (f"at the fixed point of the L = {L} map (feature layer fluctuation-free with Laplace "
                 f"covariances in K~_{L - 1}, {how})")
    return SimpleNamespace(
        l=l, m=m, tag=tag, sampled=_block_values(K_sampled, labels, m),
        predicted=_block_values(K_theory, labels, m),
        code_fractions=code_fractions, keys=layer_code_keys(run.samples[f"layer{l}"].double().numpy()),
        k_note=f"theory: K_{l} {where}; {_REL_TOL}",
        f_note=(f"theory: layer-{l} code fractions {where} (a neuron's class means of phi over the n_c "
                f"inputs of each class, thresholded at 1/2); {_FRAC_TOL}"))


def deep_theory_pieces(ctx, task, run, L, *, quad_nodes=6, size_path=None):
    """The theory comparisons of the deep sigmoid cases as pieces: ``feature`` (the feature
    layer's), ``lower`` (a list, per lower layer compared, in order) and ``notes``; the
    solvers run in order on the case's stream 2."""
    labels, Y = np.asarray(task.labels), np.asarray(task.Y, dtype=float)
    K_below = run.samples["K_below"].double().numpy()  # (S, E, P, P)
    keys_top = layer_code_keys(run.samples[f"layer{L}"].double().numpy())
    A = run.samples["A"].double().numpy()  # (S, E, N, m)
    notes = []
    if L == 2:
        sc = solve_sigmoid_deep(labels, Y, K_start=[K_below.mean(axis=(0, 1))], rtol=1e-7,
                                             seed=ctx.child_seed(2))
        notes.append(f"Self-consistent L = 2 theory (solve_sigmoid_deep, Newton from the sampled K_1): "
                     f"{sc.message}; first step's residual {sc.history[0]:.3f}.")
        if sc.converged:
            tag = "(self-consistent L = 2 theory)"
            feature = _feature(sc.feature, keys_top, A, labels, tag, "at the fixed point")
            lower = [_lower(1, sc.kernels[0], sc.first_layer.code_fractions, K_below, run, labels, tag, L)]
            notes.append(_feature_note(sc.feature, labels, "at the fixed point") + " " + _first_note(sc))
            return SimpleNamespace(feature=feature, lower=lower, notes=notes)
    else:
        K_sampled = [run.samples[f"K{l}"].double().numpy() for l in range(1, L - 1)] + [K_below]
        sc = solve_sigmoid_deep(labels, Y, K_start=[K.mean(axis=(0, 1)) for K in K_sampled],
                                             quad_nodes=quad_nodes, maxiter=40, size_path=size_path,
                                             seed=ctx.child_seed(2), progress=ctx.progress)
        start = "the sampled kernels" + ("" if size_path is None else
                                         f", continued in the class sizes through P = {list(size_path)}")
        notes.append(f"Self-consistent L = {L} theory (solve_sigmoid_deep, Newton from {start}): "
                     f"{sc.message}; first step's residual {sc.history[0]:.3f}.")
        if sc.converged:
            tag = f"(self-consistent L = {L} theory)"
            feature = _feature(sc.feature, keys_top, A, labels, tag, "at the fixed point")
            layers = [sc.first_layer, *sc.middle_layers]
            lower = [_lower(l, sc.kernels[l - 1], layers[l - 1].code_fractions, K_sampled[l - 1], run, labels,
                            tag, L) for l in range(1, L)]
            notes.append(_feature_note(sc.feature, labels, "at the fixed point") + " " + "; ".join(
                f"layer {l}: {lay.message}" for l, lay in enumerate(layers, start=1)) + ".")
            return SimpleNamespace(feature=feature, lower=lower, notes=notes)
    notes.append(f"Falling back to the feature layer given the sampled K_{L - 1}.")
    sol = solve_sigmoid_general(K_below.mean(axis=(0, 1)), Y, seed=ctx.child_seed(2))
    feature = _feature(sol, keys_top, A, labels, f"(given K_{L - 1})", f"given the sampled K_{L - 1}")
    lower = []
    notes.append(_feature_note(sol, labels, f"given the sampled K_{L - 1}"))
    if "C2" in run.samples:  # L > 2: layer 1 given the sampled conjugate kernel K~_1 (S3)
        K1 = run.samples["K1"].double().numpy().mean(axis=(0, 1))
        C2 = run.samples["C2"].double().numpy().mean(axis=(0, 1))
        K1inv = np.linalg.inv(K1)
        Kt1 = K1inv @ (C2 - K1) @ K1inv
        first = solve_sigmoid_first_layer(0.5 * (Kt1 + Kt1.T), labels)
        notes.append(f"Layer 1 given the sampled K~_1 = K_1^-1 (<z^2 z^2T> - K_1) K_1^-1 (a conditional test "
                     f"of the exact layer-1 field integral): {first.message}.")
        if first.converged:
            lower.append(_lower(1, first.K, first.code_fractions, run.samples["K1"].double().numpy(), run,
                                labels, "(given the sampled K~_1)", L,
                                where="given the sampled K~_1 (exact layer-1 field integral)"))
    return SimpleNamespace(feature=feature, lower=lower, notes=notes)


# ---- the rows --------------------------------------------------------------------------------


def _label(key, m):
    return code_label([(key >> j) & 1 for j in range(m)])


def _fraction_estimate(keys, k, N):
    """(fraction, SE, per-sample series) of the neurons with code key k (keys (S, E, N)); the
    binomial SE floored at one neuron, or the chain spread."""
    E = keys.shape[1]
    per_step = (keys == k).mean(axis=2)  # (S, E)
    f = float(per_step.mean())
    se = max(math.sqrt(max(f * (1 - f), 1.0 / (E * N)) / (E * N)), float(mean_se(per_step.mean(0))[1]))
    return f, se, per_step


def _fraction_rule(run, name, theory, est, *, note, frozen):
    """A code fraction, frozen either way: a feature-layer fraction (``frozen``) by its own
    barriers, a lower layer's through the feature-layer state that conditions it. Absolute
    tolerance 3/N + 4 SE."""
    f, se, per_step = est
    return compare(name, float(theory), f, stderr=se, kind="abs", tol=4 * se + 3.0 / run.cfg.N,
                   mixing=per_step, note=note, ergodicity="frozen",
                   reason=FEATURE_FROZEN if frozen else LOWER_CONDITIONED, equilibration=NOT_ANNEALED)


def _readout_estimate(feat, i, r):
    """The sampled readout a^r of the neurons in the feature layer's code i: (mean, SE, series
    or None, whether >= 2 chains hold the code throughout); None if no neuron was sampled in it."""
    k, keys_t, A = feat.keys[i], feat.keys_t, feat.A
    E = keys_t.shape[1]
    sel = keys_t == k  # (S, E, N)
    if not sel.any():
        return None
    cnt = sel.sum(axis=2)  # (S, E)
    full = np.all(cnt > 0, axis=0)  # chains with neurons in the code at every sample
    series = np.where(cnt > 0, (A[..., r] * sel).sum(axis=2) / np.maximum(cnt, 1), np.nan)
    chain_means = np.array([A[:, e, :, r][sel[:, e]].mean() for e in range(E) if sel[:, e].any()])
    vals = A[..., r][sel]
    se_a = (float(mean_se(chain_means)[1]) if chain_means.size > 1
            else float(vals.std() / math.sqrt(vals.size)))  # one chain: its samples
    return float(vals.mean()), max(se_a, 1e-12), series[:, full] if full.sum() >= 2 else None, full.sum() >= 2


def _feature_rule(run, name, theory, est, *, note, fraction):
    """A feature-layer code fraction (``fraction``) or code readout (relative tolerance
    0.2 + 3/N + 4 SE; NaN where no neuron was sampled in the code)."""
    if fraction:
        return _fraction_rule(run, name, theory, est, note=note, frozen=True)
    erg = dict(ergodicity="frozen", reason=FEATURE_FROZEN, equilibration=NOT_ANNEALED)
    th = float(theory)
    if est is None:
        return compare(name, th, float("nan"), kind="rel", tol=0.2,
                       note=note + " (no neuron sampled in this code)", **erg)
    mean, se_a, series, diagnosed = est
    note += "" if diagnosed else "; fewer than 2 chains hold this code throughout, so no chain diagnostics"
    return compare(name, th, mean, stderr=se_a, kind="rel",
                   tol=0.2 + 3.0 / run.cfg.N + 4 * se_a / max(abs(th), 1e-12), mixing=series, note=note,
                   **erg)


def _kernel_rule(run, name, theory, series, *, note):
    """A class-block statistic of a lower layer's kernel: relative tolerance 0.2 + 3/N + 4 SE,
    SE from the chain means."""
    chain = series.mean(0)
    se = max(float(mean_se(chain)[1]), 1e-12)
    th = float(theory)
    return compare(name, th, float(chain.mean()), stderr=se, kind="rel",
                   tol=0.2 + 3.0 / run.cfg.N + 4 * se / max(abs(th), 1e-12), mixing=series, note=note,
                   ergodicity="frozen", reason=LOWER_CONDITIONED, equilibration=NOT_ANNEALED)


def _feat(run):
    return run.simulation.pieces.feature


def _feature_indices(run):
    f = _feat(run)
    return [(i, r) for i in range(len(f.keys)) for r in (None, *range(f.m))]


def _feature_estimate(run, i, r):
    f = _feat(run)
    return _fraction_estimate(f.keys_t, f.keys[i], run.cfg.N) if r is None else _readout_estimate(f, i, r)


def _feature_name(run, i, r):
    f = _feat(run)
    lab = _label(f.keys[i], f.m)
    return (f"feature layer: fraction in code {lab} {f.tag}" if r is None else
            f"feature layer: readout a_{lab}^{r} {f.tag}")


def _lower_rows(b):
    """The rows of the b-th compared lower layer (none where fewer are compared)."""
    def low(run):
        return run.simulation.pieces.lower[b]

    def over(indices):
        return lambda run: indices(run) if b < len(run.simulation.pieces.lower) else []

    return (
        Compared(lambda run, name: f"layer {low(run).l}: K_{low(run).l} {name} {low(run).tag}",
                 theory=lambda run, name: low(run).predicted[name],
                 estimate=lambda run, name: low(run).sampled[name],
                 rule=_kernel_rule, over=over(lambda run: list(low(run).sampled)),
                 options=lambda run, name: dict(note=low(run).k_note)),
        Compared(lambda run, k: f"layer {low(run).l}: fraction in code {_label(k, low(run).m)} "
                                f"{low(run).tag}",
                 theory=lambda run, k: low(run).code_fractions[k],
                 estimate=lambda run, k: _fraction_estimate(low(run).keys, k, run.cfg.N), rule=_fraction_rule,
                 over=over(lambda run: range(1 << low(run).m)),
                 options=lambda run, k: dict(note=low(run).f_note, frozen=False)),
    )


def deep_theory_rows(max_lower):
    """The compared rows of the theory side: the feature layer's code fractions and readouts (per
    code, its fraction then its readouts), then per compared lower layer (at most ``max_lower``)
    the class blocks of its kernel and its code fractions."""
    return (
        Compared(_feature_name,
                 theory=lambda run, i, r: _feat(run).P_th[i] if r is None else _feat(run).a_th[i][r],
                 estimate=_feature_estimate, rule=_feature_rule, over=_feature_indices,
                 options=lambda run, i, r: dict(
                     fraction=r is None, note=_feat(run).frac_note if r is None else _feat(run).read_note)),
        *(row for b in range(max_lower) for row in _lower_rows(b)),
    )
