"""Theory side of ``coding/deep-sigmoid`` and ``coding/deep-sigmoid-annealed``: the mean-field
predictions compared with the samples.

* L = 2 (Fig. 5): the self-consistent two-layer theory
  (:func:`richlazy.theory.solve_sigmoid_deep` with one kernel; notes §2.3 (S2)-(S3), §4.5 [RECON]): the
  class blocks of K_1, layer 1's code fractions, and the feature layer's code fractions and
  readouts at the fixed point. Newton starts from the sampled posterior-mean K_1; the start only
  selects the fixed point (the map has several), the values compared are the theory's.
* L > 2 (Fig. 3): the self-consistent deep theory (:func:`richlazy.theory.solve_sigmoid_deep`;
  the middle layers by the mode-wise field integral of
  :func:`richlazy.theory.solve_sigmoid_middle_layer`): the class blocks of K_1 ... K_{L-1}, the
  code fractions of every layer below the feature layer, and the feature layer's codes and
  readouts. Newton starts from the sampled posterior-mean kernels.
* When the fixed point is not found: the feature layer given the sampled kernel of the layer
  below (the L = 1 problem with input kernel K_{L-1}, fluctuation-free; a conditional test), as
  the message in the notes says; for L > 2 also layer 1 given the sampled conjugate kernel
  K~_1 = K_1^-1 (<z^2 z^2T> - K_1) K_1^-1 ((S3) with sampled moments; a conditional test of the
  exact layer-1 integral).
"""

from __future__ import annotations

import math

import numpy as np
from richlazy.theory import (
    solve_sigmoid_deep,
    solve_sigmoid_first_layer,
    solve_sigmoid_general,
)

from ..codes import class_mean_activations, code_label, neuron_codes
from ..core._compare import Equilibration, compare
from ..stats import mean_se

__all__ = ["FEATURE_FROZEN", "LOWER_CONDITIONED", "LOWER_MIXING", "NOT_ANNEALED", "layer_code_keys",
           "theory_class_codes", "theory_quantities"]

_FRAC_TOL = "abs tolerance 3/N + 4 SE; SE = max(binomial over E*N neurons, chain spread)"
#: ergodicity classes (compare(..., ergodicity=, reason=)) of the compared quantities
FEATURE_FROZEN = ("feature-layer codes freeze below T_c (barriers O(P); MT Fig. 5, notes §4.3): the value "
                  "depends on the metastable state each network froze into")
LOWER_MIXING = ("lower-layer neurons switch codes during sampling (MT Fig. 5), and the compared value "
                "is measured against each chain's own stationary code distribution")
LOWER_CONDITIONED = ("lower-layer neurons switch codes (MT Fig. 5), but their stationary law is set by "
                     "the feature-layer state each chain froze into (more chains or a longer burn-in "
                     "did not lower R-hat), so the pooled value depends on the frozen states")
#: the equilibration verdict of the chains' frozen quantities
NOT_ANNEALED = Equilibration(False, (
    "chains from prior draws keep the feature-layer state they froze into; population annealing of "
    "the L = 2 network (full-suite case coding/deep-sigmoid-annealed) collapsed to one ancestral "
    "family per population at the sizes a CPU affords (docs/notes/verdicts.md)"))
_REL_TOL = ("rel tolerance 0.2 + 3/N + 4 SE, as for the fluctuation-free theory in coding/real-images "
            "(z|a fluctuations of the feature layer neglected, P -> infinity); SE from chain means")


def layer_code_keys(class_mean_acts) -> np.ndarray:
    """Integer code keys ``sum_c code_c 2^c`` (..., N) of class-mean activations (..., N, m),
    a class active iff its mean activation exceeds 1/2."""
    codes = neuron_codes(class_mean_acts)
    return (codes * (1 << np.arange(codes.shape[-1]))).sum(-1)


def theory_class_codes(sol, labels, m: int):
    """Class codes of a general-data solution: the class means of each code's activations
    ``phi(z_gamma)`` thresholded at 1/2. Codes with the same class pattern are merged: their
    weights add and their readouts are averaged with those weights. Returns (keys (n',),
    P (n',), readouts (n', m))."""
    cm = class_mean_activations(sol.mean_activations, labels, m)  # (n, m)
    keys = layer_code_keys(cm)
    uniq = np.unique(keys)
    P = np.array([sol.P_gamma[keys == k].sum() for k in uniq])
    a = np.array([(sol.P_gamma[keys == k, None] * sol.a_gamma[keys == k]).sum(0) / max(w, 1e-300)
                  for k, w in zip(uniq, P, strict=True)])
    return uniq, P, a


def theory_quantities(ctx, task, run, N, L, *, quad_nodes=6, size_path=None):
    """(quantities, notes) of the theory comparisons of the case (see the module docstring);
    ``quad_nodes``: field nodes per dimension of the middle layers (L > 2); ``size_path``: the
    continuation in the class sizes of :func:`richlazy.theory.solve_sigmoid_deep` (L > 2)."""
    labels, Y = np.asarray(task.labels), np.asarray(task.Y, dtype=float)
    K_below = run.samples["K_below"].double().numpy()  # (S, E, P, P)
    keys_top = layer_code_keys(run.samples[f"layer{L}"].double().numpy())
    notes = []
    if L == 2:
        sc = solve_sigmoid_deep(labels, Y, K_start=[K_below.mean(axis=(0, 1))], rtol=1e-7,
                                seed=ctx.child_seed(2))
        notes.append(f"Self-consistent L = 2 theory (solve_sigmoid_deep, Newton from the sampled K_1): "
                     f"{sc.message}; first step's residual {sc.history[0]:.3f}.")
        if sc.converged:
            tag = "(self-consistent L = 2 theory)"
            qs = _feature_layer(sc.feature, keys_top, run, labels, N, tag, "at the fixed point")
            qs += _lower_layer(1, sc.kernels[0], sc.first_layer.code_fractions, K_below, run, labels, N,
                               tag, L)
            notes.append(_feature_note(sc.feature, labels, "at the fixed point") + " " + _first_note(sc))
            return qs, notes
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
            qs = _feature_layer(sc.feature, keys_top, run, labels, N, tag, "at the fixed point")
            layers = [sc.first_layer, *sc.middle_layers]
            for l in range(1, L):
                qs += _lower_layer(l, sc.kernels[l - 1], layers[l - 1].code_fractions, K_sampled[l - 1],
                                   run, labels, N, tag, L)
            notes.append(_feature_note(sc.feature, labels, "at the fixed point") + " " + "; ".join(
                f"layer {l}: {lay.message}" for l, lay in enumerate(layers, start=1)) + ".")
            return qs, notes
    notes.append(f"Falling back to the feature layer given the sampled K_{L - 1}.")
    sol = solve_sigmoid_general(K_below.mean(axis=(0, 1)), Y, seed=ctx.child_seed(2))
    tag = f"(given K_{L - 1})"
    qs = _feature_layer(sol, keys_top, run, labels, N, tag, f"given the sampled K_{L - 1}")
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
            qs += _lower_layer(1, first.K, first.code_fractions, run.samples["K1"].double().numpy(), run,
                               labels, N, "(given the sampled K~_1)", L,
                               where="given the sampled K~_1 (exact layer-1 field integral)")
    return qs, notes


def _fraction(name, theory, keys, k, N, note, *, frozen):
    """Compare the fraction of neurons with code key k (keys (S, E, N)) with ``theory``; frozen
    either way: a feature-layer fraction (``frozen``) by its own barriers, a lower layer's through
    the feature-layer state that conditions it."""
    E = keys.shape[1]
    per_step = (keys == k).mean(axis=2)  # (S, E)
    f = float(per_step.mean())
    se = max(math.sqrt(max(f * (1 - f), 1.0 / (E * N)) / (E * N)), float(mean_se(per_step.mean(0))[1]))
    return compare(name, float(theory), f, stderr=se, kind="abs", tol=4 * se + 3.0 / N, mixing=per_step,
                   note=note, ergodicity="frozen", reason=FEATURE_FROZEN if frozen else LOWER_CONDITIONED,
                   equilibration=NOT_ANNEALED)


def _feature_layer(sol, keys_t, run, labels, N, tag, how):
    """Code fractions and per-code readouts of the feature layer vs a general-data solution."""
    m = sol.a_gamma.shape[1]
    keys, P_th, a_th = theory_class_codes(sol, labels, m)
    A = run.samples["A"].double().numpy()  # (S, E, N, m)
    E = keys_t.shape[1]
    frac_note = f"theory: fluctuation-free code weights P_gamma of the feature layer {how}; {_FRAC_TOL}"
    read_note = f"theory: fluctuation-free code readouts {how}; {_REL_TOL}"
    qs = []
    for k, P_g, a_g in zip(keys, P_th, a_th, strict=True):
        lab = code_label([(k >> j) & 1 for j in range(m)])
        qs.append(_fraction(f"feature layer: fraction in code {lab} {tag}", P_g, keys_t, k, N, frac_note,
                            frozen=True))
        sel = keys_t == k  # (S, E, N)
        cnt = sel.sum(axis=2)  # (S, E)
        full = np.all(cnt > 0, axis=0)  # chains with neurons in the code at every sample
        for r in range(m):
            name = f"feature layer: readout a_{lab}^{r} {tag}"
            if not sel.any():
                qs.append(compare(name, float(a_g[r]), float("nan"), kind="rel", tol=0.2,
                                  note=read_note + " (no neuron sampled in this code)",
                                  ergodicity="frozen", reason=FEATURE_FROZEN, equilibration=NOT_ANNEALED))
                continue
            series = np.where(cnt > 0, (A[..., r] * sel).sum(axis=2) / np.maximum(cnt, 1), np.nan)
            chain_means = np.array([A[:, e, :, r][sel[:, e]].mean() for e in range(E) if sel[:, e].any()])
            vals = A[..., r][sel]
            se_a = (float(mean_se(chain_means)[1]) if chain_means.size > 1
                    else float(vals.std() / math.sqrt(vals.size)))  # one chain: its samples
            se_a = max(se_a, 1e-12)
            qs.append(compare(name, float(a_g[r]), float(vals.mean()), stderr=se_a, kind="rel",
                              tol=0.2 + 3.0 / N + 4 * se_a / max(abs(float(a_g[r])), 1e-12),
                              mixing=series[:, full] if full.sum() >= 2 else None,
                              note=read_note + ("" if full.sum() >= 2 else
                                                "; fewer than 2 chains hold this code throughout, "
                                                "so no chain diagnostics"),
                              ergodicity="frozen", reason=FEATURE_FROZEN, equilibration=NOT_ANNEALED))
    return qs


def _block_values(K, labels, m):
    """Class-block statistics of kernels K (..., P, P): per class the diagonal mean and the
    within-class off-diagonal mean, per pair of classes the between-class mean; a dict name ->
    (...) array."""
    out = {}
    diag = np.diagonal(K, axis1=-2, axis2=-1)
    for a in range(m):
        ia = labels == a
        out[f"diagonal, class {a}"] = diag[..., ia].mean(-1)
        blk = K[..., ia, :][..., :, ia]
        k = int(ia.sum())
        out[f"within class {a}"] = (blk.sum((-2, -1)) - diag[..., ia].sum(-1)) / (k * (k - 1))
    for a in range(m):
        for c in range(a + 1, m):
            out[f"between classes {a},{c}"] = K[..., labels == a, :][..., :, labels == c].mean((-2, -1))
    return out


def _lower_layer(l, K_theory, code_fractions, K_sampled, run, labels, N, tag, L, where=None):
    """Class blocks of K_l and layer-l code fractions vs a theory (by default the self-consistent
    solution; ``where`` says otherwise)."""
    m = int(labels.max()) + 1
    sampled = _block_values(K_sampled, labels, m)
    predicted = _block_values(K_theory, labels, m)
    how = ("layer 1 by the exact field integral" if l == 1 else
           f"layer {l} by the mode-wise field integral over class shifts and fields")
    if where is None:
        where = (f"at the fixed point of the L = {L} map (feature layer fluctuation-free with Laplace "
                 f"covariances in K~_{L - 1}, {how})")
    k_note = f"theory: K_{l} {where}; {_REL_TOL}"
    qs = []
    for name, series in sampled.items():
        chain = series.mean(0)
        se = max(float(mean_se(chain)[1]), 1e-12)
        th = float(predicted[name])
        qs.append(compare(f"layer {l}: K_{l} {name} {tag}", th, float(chain.mean()), stderr=se, kind="rel",
                          tol=0.2 + 3.0 / N + 4 * se / max(abs(th), 1e-12), mixing=series, note=k_note,
                          ergodicity="frozen", reason=LOWER_CONDITIONED, equilibration=NOT_ANNEALED))
    keys = layer_code_keys(run.samples[f"layer{l}"].double().numpy())  # (S, E, N)
    f_note = (f"theory: layer-{l} code fractions {where} (a neuron's class means of phi over the n_c "
              f"inputs of each class, thresholded at 1/2); {_FRAC_TOL}")
    for k in range(1 << m):
        lab = code_label([(k >> j) & 1 for j in range(m)])
        qs.append(_fraction(f"layer {l}: fraction in code {lab} {tag}", code_fractions[k], keys, k, N,
                            f_note, frozen=False))
    return qs


def _feature_note(sol, labels, how):
    m = sol.a_gamma.shape[1]
    keys, P_th, a_th = theory_class_codes(sol, labels, m)
    return (f"Feature layer {how} (solve_sigmoid_general): {sol.message}; codes " + ", ".join(
        f"{code_label([(k >> j) & 1 for j in range(m)])} P={P_g:.3f} a={np.round(a_g, 3).tolist()}"
        for k, P_g, a_g in zip(keys, P_th, a_th, strict=True)) + ".")


def _first_note(sc):
    f = sc.first_layer
    return (f"Layer 1 at the fixed point: {f.message}; class block of K~_1 "
            f"{np.round(f.B_tilde, 3).tolist()}, "
            f"alpha {np.round(f.alpha, 3).tolist()}; K_1 diagonal {np.round(f.K_diag, 3).tolist()}, "
            f"off-diagonal blocks {np.round(f.K_block, 3).tolist()}; map gain {sc.map_gain:.1f} (why plain "
            "iteration of the map fails).")
