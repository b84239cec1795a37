"""Code populations and code readouts of sigmoid networks compared with a theory of codes
(seed 000's redundant code, notes §4.3): the fractions of neurons per code, the fraction outside
the predicted codes, and each code's readouts and mean activations. Used by
``coding/sigmoid-toy`` and ``coding/temperature``.
"""

from __future__ import annotations

import numpy as np

from ..codes import code_label
from ..core._compare import compare
from ..core._sampling import ratio_series
from ..stats import mean_se

__all__ = ["code_fraction_quantities", "code_readout_quantities", "fraction_outside_quantity"]


def code_fraction_quantities(sol, keys_t, N, note, prefix="", *, erg=None):
    """Compare the theory's code populations P_gamma with the sampled code fractions, and the
    fraction of neurons in codes the theory does not predict (expected 0). ``keys_t`` (S, E, N):
    each neuron's code as a bit key per sample. SE = max(binomial over E*N neurons,
    chain-to-chain spread / sqrt(E)); tolerance 4 SE + 3/N (absolute). ``erg``: the
    ergodicity class of every quantity, ``dict(ergodicity=..., reason=...)`` (None: undeclared)."""
    erg = erg or {}
    S, E = keys_t.shape[:2]
    m = sol.codes.shape[1]
    qs, predicted = [], set()
    for g, lab in enumerate(code_label(c) for c in sol.codes):
        key = int((sol.codes[g] * (1 << np.arange(m))).sum())
        predicted.add(key)
        per_step = (keys_t == key).mean(axis=2)  # (S, E): fraction in the code per sample
        per_chain = per_step.mean(axis=0)  # (E,)
        f = per_chain.mean()
        se = max(np.sqrt(f * (1 - f) / (E * N)), float(mean_se(per_chain)[1]))
        qs.append(compare(f"{prefix}P_gamma code {lab}", sol.P_gamma[g], f, stderr=se, kind="abs",
                          tol=4 * se + 3.0 / N, note=note, mixing=per_step, **erg))
    qs.append(fraction_outside_quantity(
        f"{prefix}fraction of neurons in codes the theory does not predict", 0.0, keys_t,
        list(predicted), N, note, erg=erg))
    return qs


def fraction_outside_quantity(name, theory, keys_t, keys, N, note, *, erg=None):
    """Compare ``theory`` with the sampled fraction of neurons whose code key is not in
    ``keys`` (``keys_t`` (S, E, N)). SE = max(binomial over E*N neurons, floored at one neuron,
    chain-to-chain spread / sqrt(E)); tolerance 4 SE + 3/N (absolute); ``erg`` as in
    :func:`code_fraction_quantities`."""
    E = keys_t.shape[1]
    per_step = (~np.isin(keys_t, keys)).mean(axis=2)  # (S, E)
    per_chain = per_step.mean(axis=0)
    f = per_chain.mean()
    se = max(np.sqrt(max(f * (1 - f), 1.0 / (E * N)) / (E * N)), float(mean_se(per_chain)[1]))
    return compare(name, theory, f, stderr=se, kind="abs", tol=4 * se + 3.0 / N, note=note,
                   mixing=per_step, **(erg or {}))


_READOUT_TOL = (" Readout components: abs tolerance 3 |a_gamma| / N + 4 SE (finite-N corrections "
                "O(1/N) on the scale of the code's readout vector).")


def code_readout_quantities(keys, a_theory, m_theory, keys_t, A, cm, N, note, prefix="", *, erg=None):
    """Compare the readouts ``a_theory`` (n, m) and mean activations ``m_theory`` (n, m) of the
    codes with bit keys ``keys`` with their sampled means over the neurons in each code
    (``A``, ``cm``: (S, E, N, m)); SE of readouts from chains. Mean activations: relative
    tolerance 3/N + 4 SE. Readout components: absolute tolerance ``3 |a_gamma| / N + 4 SE``, the
    O(1/N) allowance on the scale of the code's readout vector ``|a_gamma|`` rather than of the
    component (a component near 0 gets the same finite-N allowance as the others: measured at
    0.5 T_c, P = 100, the shift of a_0-1-1^0 = -0.108 was -0.0091 at N = 100 and -0.0048 at
    N = 200, 0.53 |a_gamma| / N; docs/notes/verdicts.md);
    ``erg`` as in :func:`code_fraction_quantities`."""
    erg = erg or {}
    S, E = keys_t.shape[:2]
    m = A.shape[-1]
    qs = []
    for g, key in enumerate(keys):
        lab = code_label([(key >> j) & 1 for j in range(m)])
        sel = keys_t == key  # (S, E, N)
        if not sel.any():
            for r in range(m):
                qs.append(compare(f"{prefix}readout a_{lab}^{r}", a_theory[g, r], float("nan"),
                                  kind="abs", tol=3.0 * float(np.linalg.norm(a_theory[g])) / N + 1e-12,
                                  note=note + " (no neuron sampled in "
                                  "this code)",  # a mixing class needs chain diagnostics: none here
                                  **(erg if erg.get("ergodicity") == "frozen" else {})))
            continue
        n_in = sel.sum(-1)  # (S, E)
        for r in range(m):
            vals = A[..., r][sel]
            # readouts per chain-time are exchangeable within a code; SE from chains
            chain_means = np.array([A[:, e][..., r][sel[:, e]].mean() if sel[:, e].any() else np.nan
                                    for e in range(E)])
            chain_means = chain_means[np.isfinite(chain_means)]
            se_a = float(mean_se(chain_means)[1]) if len(chain_means) > 1 else \
                vals.std() / np.sqrt(max(1, vals.size))
            se_a = max(se_a, 1e-12)
            th_a = a_theory[g, r]
            # a mean over the neurons in the code pooled over (sample, chain), i.e. a ratio
            # sum(a in code) / #(in code): chain diagnostics of its delta-method series
            qs.append(compare(f"{prefix}readout a_{lab}^{r}", th_a, vals.mean(), stderr=se_a,
                              kind="abs", tol=3.0 * float(np.linalg.norm(a_theory[g])) / N + 4 * se_a,
                              note=note + _READOUT_TOL,
                              mixing=ratio_series((A[..., r] * sel).sum(-1), n_in), **erg))
            acts = cm[..., r][sel]
            se_m = max(acts.std() / np.sqrt(max(1, acts.size / S)), 1e-12)
            th_m = m_theory[g, r]
            qs.append(compare(f"{prefix}mean activation, code {lab}, class {r}", th_m, acts.mean(),
                              stderr=se_m, kind="rel", tol=3.0 / N + 4 * se_m / abs(th_m),
                              note=note, mixing=ratio_series((cm[..., r] * sel).sum(-1), n_in), **erg))
    return qs
