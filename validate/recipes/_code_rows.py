"""Code populations and code readouts of sigmoid networks as the compared rows of declared cases
(:class:`richlazy.validate.Compared`): one estimate per code fraction, per fraction outside a set of
codes, and per readout component or mean activation of a code, with their tolerance rules
(seed 000's redundant code, notes §4.3). Used by ``coding/sigmoid-temperature`` and
``coding/sigmoid-toy``.
"""

from __future__ import annotations

import numpy as np

from ..codes import code_label
from ..core._compare import compare
from ..core._sampling import ratio_series
from ..stats import mean_se

__all__ = ["code_fraction_estimate", "code_readout_estimate", "code_readout_indices",
           "code_readout_name", "code_readout_rule", "fraction_outside_estimate", "fraction_rule"]


def code_fraction_estimate(keys_t, key, N):
    """(fraction, SE, per-sample series) of the neurons with code ``key`` (``keys_t`` (S, E, N));
    SE = max(binomial over E*N neurons, chain-to-chain spread / sqrt(E))."""
    E = keys_t.shape[1]
    per_step = (keys_t == key).mean(axis=2)  # (S, E): fraction in the code per sample
    per_chain = per_step.mean(axis=0)  # (E,)
    f = per_chain.mean()
    return f, max(np.sqrt(f * (1 - f) / (E * N)), float(mean_se(per_chain)[1])), per_step


def fraction_outside_estimate(keys_t, keys, N):
    """(fraction, SE, per-sample series) of the neurons whose code key is not in ``keys``; the
    binomial SE floored at one neuron."""
    E = keys_t.shape[1]
    per_step = (~np.isin(keys_t, keys)).mean(axis=2)  # (S, E)
    per_chain = per_step.mean(axis=0)
    f = per_chain.mean()
    return f, max(np.sqrt(max(f * (1 - f), 1.0 / (E * N)) / (E * N)), float(mean_se(per_chain)[1])), per_step


def fraction_rule(run, name, theory, est, *, N, note, erg=None):
    """A fraction of neurons (``est`` as :func:`code_fraction_estimate` returns it): absolute
    tolerance 4 SE + 3/N; ``erg`` the ergodicity class (``dict(ergodicity=..., reason=...)``).
    A rule of :class:`richlazy.validate.Compared` (``run`` is not used)."""
    f, se, per_step = est
    return compare(name, theory, f, stderr=se, kind="abs", tol=4 * se + 3.0 / N, note=note,
                   mixing=per_step, **(erg or {}))


def code_readout_indices(keys, keys_t, m):
    """The compared (g, r, what) of the codes ``keys``: per output r the readout ("a") and the
    mean activation ("m"); a code no neuron was sampled in has its readouts only."""
    return [(g, r, q) for g, key in enumerate(keys) for r in range(m)
            for q in (("a", "m") if (keys_t == key).any() else ("a",))]


def code_readout_name(prefix, key, m, r, q):
    lab = code_label([(key >> j) & 1 for j in range(m)])
    return f"{prefix}readout a_{lab}^{r}" if q == "a" else f"{prefix}mean activation, code {lab}, class {r}"


def code_readout_estimate(keys_t, A, cm, key, r, q):
    """The sampled readout component r (``q = "a"``) or class-r mean activation (``q = "m"``)
    over the neurons in code ``key`` (``A``, ``cm``: (S, E, N, m)) as (mean, SE, delta-method
    series); None where no neuron was sampled in the code. SE of readouts from chains."""
    S, E = keys_t.shape[:2]
    sel = keys_t == key  # (S, E, N)
    if not sel.any():
        return None
    n_in = sel.sum(-1)  # (S, E)
    if q == "m":
        acts = cm[..., r][sel]
        se_m = max(acts.std() / np.sqrt(max(1, acts.size / S)), 1e-12)
        return acts.mean(), se_m, ratio_series((cm[..., r] * sel).sum(-1), n_in)
    vals = A[..., r][sel]
    # readouts per chain-time are exchangeable within a code; SE from chains
    chain_means = np.array([A[:, e][..., r][sel[:, e]].mean() if sel[:, e].any() else np.nan
                            for e in range(E)])
    chain_means = chain_means[np.isfinite(chain_means)]
    se_a = float(mean_se(chain_means)[1]) if len(chain_means) > 1 else \
        vals.std() / np.sqrt(max(1, vals.size))
    # a mean over the neurons in the code pooled over (sample, chain), i.e. a ratio
    # sum(a in code) / #(in code): chain diagnostics of its delta-method series
    return vals.mean(), max(se_a, 1e-12), ratio_series((A[..., r] * sel).sum(-1), n_in)


_READOUT_TOL = (" Readout components: abs tolerance 3 |a_gamma| / N + 4 SE (finite-N corrections "
                "O(1/N) on the scale of the code's readout vector).")


def code_readout_rule(run, name, theory, est, *, q, scale, N, note, erg=None):
    """A code's readout component (``q = "a"``: absolute tolerance ``3 scale / N + 4 SE`` with
    ``scale`` = |a_gamma|, the norm of the code's readout vector) or mean activation (``q = "m"``:
    relative tolerance 3/N + 4 SE); ``est`` None: no neuron sampled in the code (its readout is
    reported NaN, with no chain diagnostics). A rule of :class:`richlazy.validate.Compared`
    (``run`` is not used)."""
    erg = erg or {}
    if est is None:
        return compare(name, theory, float("nan"), kind="abs", tol=3.0 * scale / N + 1e-12,
                       note=note + " (no neuron sampled in this code)",
                       **(erg if erg.get("ergodicity") == "frozen" else {}))
    mean, se, series = est
    if q == "a":
        return compare(name, theory, mean, stderr=se, kind="abs", tol=3.0 * scale / N + 4 * se,
                       note=note + _READOUT_TOL, mixing=series, **erg)
    return compare(name, theory, mean, stderr=se, kind="rel", tol=3.0 / N + 4 * se / abs(theory),
                   note=note, mixing=series, **erg)
