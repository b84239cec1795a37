"""Theory pieces of ``coding/deep-sigmoid`` and ``coding/deep-sigmoid-annealed`` (their rows are in
:mod:`._deep_rows`): the mean-field predictions compared with the samples.

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

import numpy as np

from ..codes import class_mean_activations, code_label, neuron_codes
from ..core._compare import Equilibration

__all__ = ["FEATURE_FROZEN", "LOWER_CONDITIONED", "LOWER_MIXING", "NOT_ANNEALED", "layer_code_keys",
           "theory_class_codes"]

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
