"""Cross-check of richlazy's convergence diagnostics (:func:`richlazy.validate.chain_diagnostics`,
validate/_diagnostics.py) against arviz-stats' array interface (``arviz_stats.base.array_stats``).

Axis conventions: richlazy's samplers record series (S draws, E chains), richlazy's
``layout="draw_chain"``; ArviZ's default is (chain, draw), so the arviz calls on those arrays pass
``chain_axis=1, draw_axis=0``. ``test_chain_draw_layout_matches_arviz`` calls richlazy with
``layout="chain_draw"`` on the (E, S) array that arviz takes with its default axes (no transpose).

Like with like:

* richlazy's ``rhat`` is max(bulk, folded) rank-normalised split-R-hat; arviz's ``method="rank"``
  is the same max (``_rhat_rank``); richlazy's ``split_rhat(method="bulk", layout="draw_chain")`` is arviz's
  ``"z_scale"`` and ``"folded"`` is ``"folded"``.
* ``ess_bulk`` is arviz's ``method="bulk"``; ``ess_tail`` is arviz's ``method="tail"`` with
  ``prob=(0.05, 0.95)`` (the array interface has no default prob; the tuple form avoids
  ``1 - 0.05 != 0.95`` rounding).

Odd S (split chains): both libraries cut each chain into its first and last ``S // 2`` draws and
drop the middle draw (richlazy ``_split``: ``x[:n], x[S - n:]``; arviz ``_split_chains``:
``ary[:, :half], ary[:, -half:]``), and both rank-normalise and fold (median) over the split draws
only. For tail ESS both take q_0.05, q_0.95 over all S E draws (numpy's "linear" quantile, before
splitting) and the indicators ``x <= q`` on the split chains.

Results (arviz-stats 0.8.0): R-hat (rank, bulk, folded), bulk ESS and tail ESS agree to rounding
(all <= 5e-15 relative on these cases; asserted at 1e-10).

History. Bulk and tail ESS used to differ (relative 1.2e-6 .. 1.9e-2 bulk, 1.3e-5 .. 9.0e-2 tail
on these cases) because richlazy's multi-chain ESS of a series (``_ess_of``) was not that of arviz
``_ess`` / stan-dev/posterior ``.ess``. Changed in richlazy to match them:

1. autocovariance scale: richlazy multiplied the biased (1/n) FFT autocovariance by n/(n-1) at
   every lag; now, as in arviz and posterior, only the lag-0 term enters through W
   (``mean_var = mean_j acov_j(0) n/(n-1)``) and ``rho_t = 1 - (W - mean_j acov_j(t)) / var_plus``
   uses the biased acov;
2. truncation: at the first non-positive pair P_k = rho_2k + rho_2k+1, rho_2k is now added once
   to tau when positive (arviz/posterior "improve estimation"); richlazy dropped the pair;
3. end of the series: pairs are examined only while ``t < n_draw - 3`` (arviz's bound; posterior
   and Stan's C++ stop one pair earlier when n is odd, see validate/_diagnostics.py), and the last
   examined pair counts like a truncation pair (rho_2k once); richlazy summed all floor(n/2)
   pairs while positive;
4. tail quantiles for an odd S: over all S E draws, as arviz and posterior (richlazy took them
   over the split draws, the middle draws excluded).

Geyer's initial monotone sequence (running minimum of the pair sums before the truncation pair)
and the bound ``tau >= 1 / log10(M n)`` were already the same. Where arviz differs from richlazy by
design (a constant series or tail indicator: arviz returns M n, richlazy NaN / leaves the
indicator out of the tail minimum) is not exercised by these cases.
"""

import numpy as np
import pytest
from richlazy.validate import chain_diagnostics, ess_bulk, ess_tail
from richlazy.validate._diagnostics import _rank_normalise, _split, split_rhat

pytest.importorskip("arviz_stats")  # the reference is in the dev extra only
from arviz_stats.base import array_stats  # noqa: E402

RTOL = 1e-10
AX = {"chain_axis": 1, "draw_axis": 0}  # richlazy's (S draws, E chains)

KINDS = ("iid", "ar1", "unmixed", "t2")
SHAPES = ((1000, 4), (999, 4), (201, 3), (150, 2))  # two odd S


def _series(kind: str, S: int, E: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "iid":  # iid N(0, 1) chains
        return rng.standard_normal((S, E))
    if kind == "ar1":  # stationary AR(1) chains, phi = 0.9
        phi = 0.9
        eps = rng.standard_normal((S, E))
        x = np.empty((S, E))
        x[0] = eps[0] / np.sqrt(1.0 - phi * phi)
        for s in range(1, S):
            x[s] = phi * x[s - 1] + eps[s]
        return x
    if kind == "unmixed":  # chains with different means (0, 0.5, 1, ...)
        return rng.standard_normal((S, E)) + 0.5 * np.arange(E)
    if kind == "t2":  # heavy tails: Student t, df = 2 (infinite variance)
        return rng.standard_t(2.0, size=(S, E))
    raise ValueError(kind)


CASES = [pytest.param(kind, S, E, 100 * i + j, id=f"{kind}-S{S}-E{E}")
         for i, kind in enumerate(KINDS) for j, (S, E) in enumerate(SHAPES)]


def _rel(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)) / np.abs(np.asarray(b))))


@pytest.mark.parametrize(("kind", "S", "E", "seed"), CASES)
def test_rhat_matches_arviz(kind, S, E, seed):
    x = _series(kind, S, E, seed)
    assert _rel(chain_diagnostics(x, layout="draw_chain").rhat,
                array_stats.rhat(x, method="rank", **AX)) <= RTOL
    assert _rel(split_rhat(x, method="bulk", layout="draw_chain"),
                array_stats.rhat(x, method="z_scale", **AX)) <= RTOL
    assert _rel(split_rhat(x, method="folded", layout="draw_chain"),
                array_stats.rhat(x, method="folded", **AX)) <= RTOL


def test_rhat_trailing_axes_match_arviz():
    # (S, E, K): one diagnostic per trailing element in both libraries
    x = np.stack([_series(kind, 301, 3, 1000 + i) for i, kind in enumerate(KINDS)], axis=-1)
    want = array_stats.rhat(x, method="rank", **AX)
    assert want.shape == (len(KINDS),)
    assert _rel(chain_diagnostics(x, layout="draw_chain").rhat, want) <= RTOL


@pytest.mark.parametrize(("kind", "S", "E", "seed"), CASES)
def test_ess_inputs_match_arviz(kind, S, E, seed):
    """arviz's bulk/tail ESS equal arviz's plain multi-chain ESS (``method="identity"``: no
    split, no transform) of richlazy's split rank-normalised draws / split tail indicators, so
    the two libraries agree up to the ESS-of-a-series step (tail: quantiles over all draws, which
    are the split-draw quantiles when S is even)."""
    x = _series(kind, S, E, seed)
    y = _split(x[:, :, None])[:, :, 0]
    z = _rank_normalise(y[:, :, None])[:, :, 0]
    bulk = array_stats.ess(x, method="bulk", **AX)
    assert _rel(array_stats.ess(z, method="identity", **AX), bulk) <= RTOL
    tail = array_stats.ess(x, method="tail", prob=(0.05, 0.95), **AX)
    q = np.quantile(x, [0.05, 0.95])
    if S % 2 == 0:
        np.testing.assert_array_equal(q, np.quantile(y, [0.05, 0.95]))
    ess_q = [array_stats.ess((y <= qi).astype(float), method="identity", **AX) for qi in q]
    assert _rel(min(ess_q), tail) <= RTOL


@pytest.mark.parametrize(("kind", "S", "E", "seed"), CASES)
def test_ess_bulk_matches_arviz(kind, S, E, seed):
    x = _series(kind, S, E, seed)
    assert _rel(chain_diagnostics(x, layout="draw_chain").ess_bulk,
                array_stats.ess(x, method="bulk", **AX)) <= RTOL


@pytest.mark.parametrize(("kind", "S", "E", "seed"), CASES)
def test_ess_tail_matches_arviz(kind, S, E, seed):
    x = _series(kind, S, E, seed)
    want = array_stats.ess(x, method="tail", prob=(0.05, 0.95), **AX)
    assert _rel(chain_diagnostics(x, layout="draw_chain").ess_tail, want) <= RTOL


def test_ess_trailing_axes_match_arviz():
    x = np.stack([_series(kind, 301, 3, 1000 + i) for i, kind in enumerate(KINDS)], axis=-1)
    m = chain_diagnostics(x, layout="draw_chain")
    assert _rel(m.ess_bulk, array_stats.ess(x, method="bulk", **AX)) <= RTOL
    assert _rel(m.ess_tail, array_stats.ess(x, method="tail", prob=(0.05, 0.95), **AX)) <= RTOL


@pytest.mark.parametrize(("kind", "S", "E", "seed"), CASES)
def test_chain_draw_layout_matches_arviz(kind, S, E, seed):
    """richlazy with ``layout="chain_draw"`` on the (chain, draw) array exactly as arviz takes it
    with its default axes (``chain_axis=-2, draw_axis=-1``)."""
    x = np.ascontiguousarray(_series(kind, S, E, seed).T)  # (E, S): the NumPyro/ArviZ order
    m = chain_diagnostics(x, layout="chain_draw")
    assert (m.n_chains, m.n_draws) == (E, S)
    assert _rel(m.rhat, array_stats.rhat(x, method="rank")) <= RTOL
    assert _rel(split_rhat(x, method="bulk", layout="chain_draw"),
                array_stats.rhat(x, method="z_scale")) <= RTOL
    assert _rel(split_rhat(x, method="folded", layout="chain_draw"),
                array_stats.rhat(x, method="folded")) <= RTOL
    want_bulk = array_stats.ess(x, method="bulk")
    want_tail = array_stats.ess(x, method="tail", prob=(0.05, 0.95))
    assert _rel(m.ess_bulk, want_bulk) <= RTOL and _rel(m.ess_tail, want_tail) <= RTOL
    assert _rel(ess_bulk(x, layout="chain_draw"), want_bulk) <= RTOL
    assert _rel(ess_tail(x, layout="chain_draw"), want_tail) <= RTOL


def test_chain_draw_layout_trailing_axes_match_arviz():
    # (E, S, K): chains and draws first, as richlazy's chain_draw takes them (arviz told where)
    x = np.stack([_series(kind, 301, 3, 1000 + i).T for i, kind in enumerate(KINDS)], axis=-1)
    ax = {"chain_axis": 0, "draw_axis": 1}
    m = chain_diagnostics(x, layout="chain_draw")
    assert m.shape == (len(KINDS),) and (m.n_chains, m.n_draws) == (3, 301)
    assert _rel(m.rhat, array_stats.rhat(x, method="rank", **ax)) <= RTOL
    assert _rel(m.ess_bulk, array_stats.ess(x, method="bulk", **ax)) <= RTOL
    assert _rel(m.ess_tail, array_stats.ess(x, method="tail", prob=(0.05, 0.95), **ax)) <= RTOL
