"""Multi-chain convergence diagnostics: rank-normalised split-R-hat, bulk-ESS and tail-ESS.

Definitions of Vehtari, Gelman, Simpson, Carpenter & Buerkner (2021), "Rank-normalization,
folding, and localization: an improved R-hat for assessing convergence of MCMC", Bayesian
Analysis 16(2), 667-718. The numbers are those of stan-dev/posterior (Stan's R reference
implementation: ``rhat``, ``ess_bulk``, ``ess_tail``, ``.ess``) and of arviz-stats, which implements
the same steps; R-hat, bulk and tail ESS agree with arviz-stats 0.8.0 to rounding
(tests/validate/test_diagnostics_arviz.py). The corner cases where posterior and arviz differ
are listed after the steps. Re-exported by :mod:`richlazy.validate.stats`; pure numpy (plus
``scipy.special.ndtri``, the inverse normal CDF).

Input: samples of E chains of S successive draws each, any trailing shape (one diagnostic per
trailing element). The keyword ``layout`` of :func:`split_rhat`, :func:`ess_bulk`,
:func:`ess_tail` and :func:`chain_diagnostics` says which of the first two axes is which:
``layout="draw_chain"`` takes ``(S, E, ...)`` (draw, chain), the order richlazy's samplers record
and the one of the other standard-error rules of :mod:`richlazy.validate.stats`;
``layout="chain_draw"`` takes ``(E, S, ...)`` (chain, draw), the order of NumPyro and ArviZ (the
two axes are swapped, a view, and the computation is the same, so the results are bit-identical
to the draw_chain call on the view ``np.swapaxes(samples, 0, 1)``; a contiguous copy of it may
differ in the last bit, the split chains keeping the input's memory order). Without ``layout``
(deprecated) the samples are taken as (draw, chain) with a DeprecationWarning; the default becomes
``"chain_draw"`` in the next release. Below, the samples are (S, E, ...) after that swap.

Steps (per trailing element):

1. **Split.** Each chain is cut into its first and second half (the middle draw is dropped when S
   is odd): ``M = 2E`` chains of ``n = floor(S/2)`` draws. A trend inside a chain then shows up as
   a difference between the halves.
2. **Rank normalisation.** With ``r`` the fractional rank of a draw among all ``M n`` draws
   (ties get their average rank), ``z = Phi^{-1}((r - 3/8) / (M n + 1/4))`` (Blom's offsets).
3. **Split-R-hat** of a series ``y`` (n draws of M chains): chain means ``ybar_j``, chain
   variances ``s_j^2`` (ddof 1), ``W = mean_j s_j^2``, ``B/n = var_j(ybar_j)`` (ddof 1),
   ``var_plus = (n-1)/n W + B/n``, ``R-hat = sqrt(var_plus / W)``.
   ``R-hat = max(R-hat_bulk, R-hat_tail)`` with R-hat_bulk on ``z`` and R-hat_tail on the rank
   normalised folded draws ``|x - median(x)|`` (the folded version catches chains with equal
   locations and different scales).
4. **ESS** of a series ``y`` (posterior ``.ess``, arviz-stats ``_ess``): with
   ``acov_j(t) = (1/n) sum_s (y_js - ybar_j)(y_j,s+t - ybar_j)`` the biased autocovariance of
   chain j (Geyer 1992; ``acov_j(0) = (n-1)/n s_j^2``), ``rho_0 = 1`` and
   ``rho_t = 1 - (W - mean_j acov_j(t)) / var_plus`` for t >= 1 (multi-chain autocorrelation;
   the n/(n-1) correction enters only through W). Geyer's initial positive sequence scans the
   pairs ``P_k = rho_2k + rho_2k+1``, k = 0, 1, ..., L with ``L = (n-3)//2`` (arviz's loop
   ``while t < n - 3``), and stops at the first ``k*`` with ``P_k* <= 0``, or at ``k* = L``. The
   pairs before k* are made non-increasing (initial monotone sequence: running minimum), and
   ``tau = -1 + 2 sum_{k<k*} P_k + rho_2k*``, the last term (the improved estimate for
   antithetic chains) counted when ``P_k* >= 0`` or ``rho_2k* > 0``; tau is bounded below by
   ``1 / log10(M n)`` (which caps the ESS at ``M n log10(M n)``), ``ESS = M n / tau``. For
   n <= 4, or ``rho_1 <= -1``, nothing beyond P_0 is scanned: tau = 0 and the cap applies.
   **bulk-ESS** is the ESS of ``z``; **tail-ESS** is the smaller of the ESS of the split-chain
   indicators ``I(x <= q_0.05)`` and ``I(x <= q_0.95)``, with the quantiles (numpy's "linear",
   R's type 7) over all ``S E`` draws, the middle draws of an odd S included.

Where the references differ, richlazy follows arviz-stats (its tested reference), except for
constant series:

* end of the scan for odd n: posterior (``while (t < n - 5)`` over even t) and Stan's C++ ``ess``
  (``t < n - 4`` over odd t) scan the pairs only up to ``(n-4)//2``, one fewer than arviz, and
  Stan's C++ also weighs rho_2k* differently at that end. This changes the ESS only when the scan
  reaches its end without a non-positive pair (strongly correlated or unmixed chains; up to
  1.5 % on the cross-check's cases);
* nothing scanned beyond P_0 (n <= 4 in arviz, n <= 5 in posterior, or ``rho_1 <= -1``): arviz
  gets tau = 0 (the cap, ``ESS = M n log10(M n)``), posterior tau = 2 (its
  ``sum(rho_hat_t[1:max_t])`` with ``max_t = 0`` sums rho_0; and NA for n < 3);
* a constant series has ESS NaN, as in posterior (arviz returns ``M n``), and a constant tail
  indicator is left out of the tail-ESS minimum (posterior: NA, arviz: ``M n``); see below.

Invariance. R-hat_bulk, bulk-ESS and tail-ESS depend on the draws only through their ranks,
so they are unchanged by any strictly increasing transform of the quantity (exp, log, ...);
R-hat_folded (and so R-hat) is unchanged by affine maps and sign flips.

Constant quantities. When every draw of a quantity is equal there is nothing to disagree on:
``R-hat = 1`` (so it counts as mixed) and both ESS are NaN (undefined). When every (split) chain
is constant but the chains differ (stuck chains), ``R-hat = inf``. An indicator that is constant
(e.g. a discrete quantity whose 95 % quantile is its maximum) has an undefined ESS and is left out
of the tail-ESS minimum (NaN only when both are undefined).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from richlazy.theory.checks import as_float_array

__all__ = ["LAYOUTS", "RHAT_MAX", "RHAT_METHODS", "Mixing", "chain_diagnostics", "ess_bulk",
           "ess_tail", "split_rhat", "worst_mixing"]

#: A quantity counts as mixed iff its rank-normalised split-R-hat is at most this (Vehtari et
#: al. 2021 recommend 1.01).
RHAT_MAX = 1.01

#: methods of :func:`split_rhat`
RHAT_METHODS = ("rank", "bulk", "folded", "classic")

#: values of ``layout``: samples (S, E, ...) = (draw, chain, ...), richlazy's samplers' order, or
#: (E, S, ...) = (chain, draw, ...), the order of NumPyro and ArviZ
LAYOUTS = ("draw_chain", "chain_draw")

_LAYOUT_WARNING = (
    'samples are taken as (draw, chain, ...) because no layout was given; pass layout="draw_chain" '
    'to keep that, or layout="chain_draw" for the (chain, draw, ...) order of NumPyro and ArviZ, '
    "which becomes the default in the next release")


@dataclass(frozen=True)
class Mixing:
    """Convergence diagnostics of one quantity (or an array of them).

    Attributes
    ----------
    rhat : float or ndarray
        Rank-normalised split-R-hat, max of bulk and folded (see module doc); 1 for a constant
        quantity, inf for constant chains at different values.
    ess_bulk, ess_tail : float or ndarray
        Bulk and tail effective sample size over all chains (NaN when undefined).
    n_chains, n_draws : int
        Chains E and draws per chain S of the input (before splitting).

    For input ``(S, E)`` the three diagnostics are floats; for ``(S, E, ...)`` arrays of the
    trailing shape, and ``mixing[idx]`` picks the diagnostics of one element.
    """

    rhat: float | np.ndarray
    ess_bulk: float | np.ndarray
    ess_tail: float | np.ndarray
    n_chains: int
    n_draws: int

    @property
    def mixed(self):
        """``rhat <= RHAT_MAX`` (a bool, or a bool array)."""
        r = np.asarray(self.rhat) <= RHAT_MAX
        return bool(r) if r.ndim == 0 else r

    @property
    def shape(self) -> tuple:
        return np.shape(self.rhat)

    def __getitem__(self, idx) -> Mixing:
        if not self.shape:
            raise IndexError("a scalar Mixing cannot be indexed")
        vals = [np.asarray(v)[idx] for v in (self.rhat, self.ess_bulk, self.ess_tail)]
        vals = [float(v) if np.ndim(v) == 0 else v for v in vals]
        return Mixing(*vals, self.n_chains, self.n_draws)


# ---------------------------------------------------------------------------------------------
# input checks and building blocks


def _check(samples, name: str = "samples", layout: str = "draw_chain") -> np.ndarray:
    """``samples`` as a float64 array (S, E, ...) with S >= 4, E >= 2, all finite; for
    ``layout="chain_draw"`` the input is (E, S, ...) and the result its first two axes swapped (a
    view). Errors name the axes of the input's layout."""
    x = as_float_array(name, samples, finite=False)
    chain_draw = layout == "chain_draw"
    if x.ndim < 2:
        shape = ("(E, S, ...) with E chains of S draws (layout='chain_draw')" if chain_draw
                 else "(S, E, ...) with S draws of E chains")
        raise ValueError(f"{name} must have shape {shape}, got shape {x.shape}")
    if chain_draw:
        x = np.swapaxes(x, 0, 1)
    S, E = x.shape[:2]
    chain_axis, draw_axis = (0, 1) if chain_draw else (1, 0)
    if E < 2:
        raise ValueError(f"{name} needs at least 2 chains (axis {chain_axis}) for R-hat, "
                         f"got E = {E}")
    if S < 4:
        raise ValueError(f"{name} needs at least 4 draws per chain (axis {draw_axis}) to split "
                         f"chains, got S = {S}")
    if x.size and not np.all(np.isfinite(x)):
        raise ValueError(f"{name} contain NaN or inf")
    return x


def _samples(samples, layout) -> np.ndarray:
    """The checked ``samples`` of a public diagnostic as (S, E, ...) (:func:`_check`), after
    checking ``layout``; ``layout=None`` warns (DeprecationWarning, pointing at the caller of the
    public function) and means ``"draw_chain"``."""
    if layout is None:
        warnings.warn(_LAYOUT_WARNING, DeprecationWarning, stacklevel=3)
        layout = "draw_chain"
    elif not isinstance(layout, str):
        raise TypeError(f"layout must be a str, one of {LAYOUTS}, got {type(layout).__name__}")
    elif layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    return _check(samples, layout=layout)


def _split(x: np.ndarray) -> np.ndarray:
    """(S, E, ...) -> (n, 2E, K) with n = S // 2: first halves then second halves (the middle
    draw of an odd S is dropped); trailing axes flattened to K."""
    S, E = x.shape[:2]
    n = S // 2
    x = x.reshape(S, E, int(np.prod(x.shape[2:], dtype=int)))
    return np.concatenate([x[:n], x[S - n:]], axis=1)


def _ranks(y: np.ndarray) -> np.ndarray:
    """Fractional ranks 1..N over the first two axes pooled (ties: average rank); y (n, M, K)."""
    n, M, K = y.shape
    flat = y.reshape(n * M, K)
    order = np.argsort(flat, axis=0, kind="stable")
    v = np.take_along_axis(flat, order, axis=0)
    N = n * M
    pos = np.arange(N)[:, None]
    new = np.ones((N, K), dtype=bool)
    new[1:] = v[1:] != v[:-1]
    # first and last sorted position of each run of equal values
    first = np.maximum.accumulate(np.where(new, pos, 0), axis=0)
    end = np.ones((N, K), dtype=bool)
    end[:-1] = new[1:]
    last = np.minimum.accumulate(np.where(end, pos, N - 1)[::-1], axis=0)[::-1]
    r_sorted = 0.5 * (first + last) + 1.0
    r = np.empty_like(r_sorted)
    np.put_along_axis(r, order, r_sorted, axis=0)
    return r.reshape(n, M, K)


def _rank_normalise(y: np.ndarray) -> np.ndarray:
    """``Phi^{-1}((r - 3/8) / (N + 1/4))`` of the pooled fractional ranks r, N = n M."""
    from scipy.special import ndtri

    N = y.shape[0] * y.shape[1]
    return ndtri((_ranks(y) - 0.375) / (N + 0.25))


def _fold(y: np.ndarray) -> np.ndarray:
    """``|y - median|`` with the median over all draws (per trailing element)."""
    med = np.median(y.reshape(y.shape[0] * y.shape[1], y.shape[2]), axis=0)
    return np.abs(y - med)


def _moments(y: np.ndarray):
    """W, B/n and var_plus of split chains y (n, M, K), and where y is constant. A constant chain
    gets variance 0 and its value as mean exactly (no rounding of the mean/variance formulas)."""
    n, M, K = y.shape
    const_chain = np.ptp(y, axis=0) == 0  # (M, K)
    s2 = np.where(const_chain, 0.0, y.var(axis=0, ddof=1))
    means = np.where(const_chain, y[0], y.mean(axis=0))
    const = np.ptp(y.reshape(n * M, K), axis=0) == 0  # (K,)
    W = s2.mean(axis=0)
    B_n = np.where(const, 0.0, means.var(axis=0, ddof=1))
    return W, B_n, (n - 1) / n * W + B_n, const


def _rhat_of(y: np.ndarray) -> np.ndarray:
    """Split-R-hat of already split chains y (n, M, K): sqrt(var_plus / W); 1 where y is
    constant, inf where every chain is constant but the chains differ."""
    W, _, var_plus, const = _moments(y)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sqrt(var_plus / W)
    return np.where(const, 1.0, np.where(W > 0, r, np.inf))


def _ess_of(y: np.ndarray) -> np.ndarray:
    """Multi-chain ESS of split chains y (n, M, K) as in Stan/posterior ``.ess`` and arviz-stats
    ``_ess`` (module doc, step 4); NaN where y is constant."""
    n, M, K = y.shape
    W, _, var_plus, const = _moments(y)  # W = mean_j acov_j(0) n/(n-1)
    ok = ~const & (var_plus > 0)
    yc = y - y.mean(axis=0, keepdims=True)
    size = 1 << (2 * n - 1).bit_length()
    f = np.fft.rfft(yc, n=size, axis=0)
    acov = np.fft.irfft(f * np.conj(f), n=size, axis=0)[:n] / n  # biased: sum_s yc_s yc_s+t / n
    acov = np.where(np.ptp(y, axis=0) == 0, 0.0, acov)  # a constant chain: exactly 0
    rho = 1.0 - (W - acov.mean(axis=1)) / np.where(ok, var_plus, 1.0)  # (n, K)
    rho[0] = 1.0
    # pairs P_k = rho_2k + rho_2k+1; the scan examines k = 0 .. L (arviz: while t < n - 3) and
    # stops at the first P_k <= 0 or at k = L: that last examined pair k* is the truncation pair
    L = max((n - 3) // 2, 0)
    pairs = rho[: 2 * L + 2].reshape(L + 1, 2, K).sum(axis=1)
    stop = pairs <= 0
    stop[L] = True
    kstar = np.argmax(stop, axis=0)  # (K,)
    before = np.arange(L + 1)[:, None] < kstar  # the pairs 0 .. k*-1 (all positive)
    mono = np.minimum.accumulate(np.where(before, pairs, np.inf), axis=0)  # initial monotone seq.
    cols = np.arange(K)
    rho_even, p_last = rho[2 * kstar, cols], pairs[kstar, cols]
    # the truncation pair contributes rho_2k* once: stored when P_k* >= 0, else only if positive
    last = np.where((p_last >= 0) | (rho_even > 0), rho_even, 0.0)
    tau = -1.0 + 2.0 * np.sum(np.where(before, mono, 0.0), axis=0) + last
    N = n * M
    tau = np.maximum(tau, 1.0 / math.log10(N))
    return np.where(ok, N / np.where(ok, tau, 1.0), np.nan)


def _shape_out(v: np.ndarray, x: np.ndarray):
    v = v.reshape(x.shape[2:])
    return float(v) if v.ndim == 0 else v


# ---------------------------------------------------------------------------------------------
# public functions


def split_rhat(samples, *, method: str = "rank", layout: str | None = None):
    """Split-R-hat of ``samples`` (S draws of E chains, axes by ``layout``): a float for 2-d
    samples, else an array of the trailing shape.

    ``method``:

    * ``"rank"`` (default): ``max(R-hat_bulk, R-hat_folded)``, the R-hat of Vehtari et al.
      (2021) reported in :class:`Mixing`;
    * ``"bulk"``: split-R-hat of the rank-normalised draws only;
    * ``"folded"``: split-R-hat of the rank-normalised folded draws ``|x - median|`` only;
    * ``"classic"``: split-R-hat of the raw draws (Gelman et al., BDA3), not invariant under
      monotone transforms.

    ``layout`` (keyword): ``"draw_chain"`` for ``samples`` (S, E, ...) = (draw, chain, ...), the
    order richlazy's samplers record, or ``"chain_draw"`` for (E, S, ...) = (chain, draw, ...), the
    order of NumPyro and ArviZ (the result is bit-identical to the draw_chain call on the
    transposed view ``np.swapaxes(samples, 0, 1)``). Not given (None): deprecated, taken as
    ``"draw_chain"`` with a DeprecationWarning; the default becomes ``"chain_draw"`` in the next
    release. The other standard-error rules of :mod:`richlazy.validate.stats` keep (S, E) =
    (draw, chain). ValueError naming ``layout`` for another string, TypeError for a non-string.

    Formulas in the module doc. Raises ValueError naming ``samples`` for fewer than 2 chains,
    fewer than 4 draws or non-finite draws, and naming ``method`` for an unknown method.
    """
    if method not in RHAT_METHODS:
        raise ValueError(f"method must be one of {RHAT_METHODS}, got {method!r}")
    x = _samples(samples, layout)
    y = _split(x)
    if method == "classic":
        r = _rhat_of(y)
    elif method == "bulk":
        r = _rhat_of(_rank_normalise(y))
    elif method == "folded":
        r = _rhat_of(_rank_normalise(_fold(y)))
    else:
        r = np.maximum(_rhat_of(_rank_normalise(y)), _rhat_of(_rank_normalise(_fold(y))))
    return _shape_out(r, x)


def ess_bulk(samples, *, layout: str | None = None):
    """Bulk effective sample size of ``samples`` (S draws of E chains, axes by ``layout``):
    multi-chain ESS of the rank normalised split chains (module doc). NaN for a constant
    quantity.

    ``layout`` (keyword): ``"draw_chain"`` or ``"chain_draw"``, as in :func:`split_rhat` (not
    given: deprecated, taken as (draw, chain) with a DeprecationWarning).
    """
    x = _samples(samples, layout)
    return _shape_out(_ess_of(_rank_normalise(_split(x))), x)


def _ess_tail_split(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Tail ESS of x (S, E, ...) with y = _split(x): indicators of the split chains at the 5 % and
    95 % quantiles of all S E draws (the middle draws of an odd S included, as in posterior)."""
    flat = x.reshape(x.shape[0] * x.shape[1], y.shape[2])
    q05, q95 = np.quantile(flat, [0.05, 0.95], axis=0)
    lo = _ess_of((y <= q05).astype(float))
    hi = _ess_of((y <= q95).astype(float))
    return np.fmin(lo, hi)  # NaN (constant indicator) ignored unless both are NaN


def ess_tail(samples, *, layout: str | None = None):
    """Tail effective sample size of ``samples`` (S draws of E chains, axes by ``layout``): the
    smaller multi-chain ESS of the indicators ``I(x <= q_0.05)`` and ``I(x <= q_0.95)`` on the
    split chains, the quantiles over all draws (module doc).

    ``layout`` (keyword): ``"draw_chain"`` or ``"chain_draw"``, as in :func:`split_rhat` (not
    given: deprecated, taken as (draw, chain) with a DeprecationWarning).
    """
    x = _samples(samples, layout)
    return _shape_out(_ess_tail_split(x, _split(x)), x)


def chain_diagnostics(samples, *, layout: str | None = None) -> Mixing:
    """R-hat, bulk-ESS and tail-ESS of ``samples`` (S draws of E chains, axes by ``layout``) as a
    :class:`Mixing` (``n_chains`` = E, ``n_draws`` = S in either layout).

    ``samples``: S >= 4 draws of E >= 2 chains (ValueError naming ``samples`` otherwise, or for
    NaN/inf; TypeError for complex or non-numeric input). See the module doc for the definitions
    and for constant quantities.

    ``layout`` (keyword): ``"draw_chain"`` or ``"chain_draw"``, as in :func:`split_rhat` (not
    given: deprecated, taken as (draw, chain) with a DeprecationWarning).
    """
    x = _samples(samples, layout)
    y = _split(x)
    z = _rank_normalise(y)
    rhat = np.maximum(_rhat_of(z), _rhat_of(_rank_normalise(_fold(y))))
    return Mixing(_shape_out(rhat, x), _shape_out(_ess_of(z), x),
                  _shape_out(_ess_tail_split(x, y), x), int(x.shape[1]), int(x.shape[0]))


def worst_mixing(*mixings: Mixing) -> Mixing:
    """The most pessimistic combination of scalar :class:`Mixing` records, for a quantity computed
    from several independent runs (e.g. a difference of two ensembles' means): largest R-hat,
    smallest bulk and tail ESS (undefined NaN values ignored unless all are NaN), smallest chain
    and draw counts. Raises ValueError naming ``mixings`` when empty, TypeError for another type.
    """
    if not mixings:
        raise ValueError("mixings must hold at least one Mixing")
    for m in mixings:
        if not isinstance(m, Mixing):
            raise TypeError(f"mixings must be Mixing records, got {type(m).__name__}")
        if m.shape:
            raise ValueError(f"mixings must be scalar Mixing records, got one of shape {m.shape}")

    def lo(vals):
        v = np.array(vals, dtype=float)
        v = v[~np.isnan(v)]
        return float(v.min()) if v.size else math.nan

    return Mixing(max(float(m.rhat) for m in mixings), lo([m.ess_bulk for m in mixings]),
                  lo([m.ess_tail for m in mixings]), min(m.n_chains for m in mixings),
                  min(m.n_draws for m in mixings))
