"""Standard figures of a sweep table: heatmaps over two grid keys and curves with error bars.

Values are averaged over replicates (and over the rows of failed tasks, which are left out);
error bars are the replicate-to-replicate standard error, or the row's own ``<metric>_se`` when
there is a single replicate. Grid keys that vary but are not on an axis are held at their first
value (the title says which).
"""

from __future__ import annotations

import math
import pathlib
import re

import numpy as np

from ._figures import new_figure, save_figure

__all__ = ["aggregate", "plot_heatmap", "plot_curves", "sweep_figures"]


def _num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def aggregate(rows, metric: str, keys: list[str]) -> dict:
    """``{(value of each key): (mean, se, n)}`` of ``metric`` over the ok rows."""
    groups: dict = {}
    for r in rows:
        if r.get("status", "ok") != "ok":
            continue
        v = r.get(metric)
        if not _num(v) or not math.isfinite(v):
            continue
        groups.setdefault(tuple(r.get(k) for k in keys), []).append((v, r.get(f"{metric}_se")))
    out = {}
    for k, vals in groups.items():
        x = np.array([v for v, _ in vals], dtype=float)
        if len(x) >= 2:
            se = float(x.std(ddof=1) / math.sqrt(len(x)))
        else:
            s = vals[0][1]
            se = float(s) if _num(s) else math.nan
        out[k] = (float(x.mean()), se, len(x))
    return out


def _held(rows, grid, axes):
    """Rows with every other varying key at its first grid value, and a text saying so."""
    others = {k: v[0] for k, v in grid.items() if k not in axes and len(v) > 1}
    kept = [r for r in rows if all(r.get(k) == v for k, v in others.items())]
    text = ", ".join(f"{k}={v}" for k, v in others.items())
    return kept, text


def plot_heatmap(ax, rows, metric: str, x: str, y: str, xs, ys, *, annotate: bool | None = None):
    """Mean of ``metric`` over replicates on the grid ``x`` × ``y`` (cells in grid order)."""
    agg = aggregate(rows, metric, [x, y])
    Z = np.full((len(ys), len(xs)), np.nan)
    for i, yv in enumerate(ys):
        for j, xv in enumerate(xs):
            if (xv, yv) in agg:
                Z[i, j] = agg[(xv, yv)][0]
    im = ax.imshow(Z, origin="lower", aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(xs)), [f"{v:g}" if _num(v) else str(v) for v in xs], fontsize=7)
    ax.set_yticks(range(len(ys)), [f"{v:g}" if _num(v) else str(v) for v in ys], fontsize=7)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if annotate is None:
        annotate = Z.size <= 64
    if annotate:
        for i in range(Z.shape[0]):
            for j in range(Z.shape[1]):
                if np.isfinite(Z[i, j]):
                    ax.text(j, i, f"{Z[i, j]:.3g}", ha="center", va="center", fontsize=6,
                            color="w")
    return im


def plot_curves(ax, rows, metric: str, x: str, hue: str | None, xs, hues, **kw):
    """``metric`` (mean ± SE over replicates) against ``x``, one line per value of ``hue``."""
    keys = [x] if hue is None else [x, hue]
    agg = aggregate(rows, metric, keys)
    for h in ([None] if hue is None else hues):
        pts = [(xv, *agg[(xv,) if hue is None else (xv, h)][:2]) for xv in xs
               if ((xv,) if hue is None else (xv, h)) in agg]
        if not pts:
            continue
        px = list(range(len(xs))) if not all(_num(v) for v in xs) else None
        xv = [xs.index(p[0]) if px is not None else p[0] for p in pts]
        m = [p[1] for p in pts]
        se = [0.0 if not math.isfinite(p[2]) else p[2] for p in pts]
        label = None if hue is None else f"{hue}={h:g}" if _num(h) else f"{hue}={h}"
        ax.errorbar(xv, m, yerr=se, fmt="o-", ms=3, capsize=2, label=label, **kw)
        if px is not None:
            ax.set_xticks(px, [str(v) for v in xs])
    ax.set_xlabel(x)
    ax.set_ylabel(metric)
    if hue is not None:
        ax.legend(fontsize=7)


def _safe(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", s)


def sweep_figures(rows, grid: dict, metrics, folder, figures=(), *, title: str = "") -> list:
    """Write the standard figures of a sweep into ``folder``; returns their paths.

    ``figures``: tuples ``(kind, metric, x, hue)``, kind "heatmap" (x and hue are the axes) or
    "curves"; when empty, every metric (up to 6) gets curves against the first varying key (lines
    per the second) and, with two or more varying keys, a heatmap over the first two."""
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    varying = [k for k, v in grid.items() if len(v) > 1]
    specs = list(figures)
    if not specs:
        for m in list(metrics)[:6]:
            if varying:
                specs.append(("curves", m, varying[0], varying[1] if len(varying) > 1 else None))
            if len(varying) >= 2:
                specs.append(("heatmap", m, varying[0], varying[1]))
    paths = []
    for kind, metric, x, hue in specs:
        if x not in grid:
            continue  # an axis this grid does not have
        if hue is not None and len(grid.get(hue, ())) < 2:
            if kind == "heatmap":
                continue
            hue = None  # a colour key the grid does not vary: one curve
        if kind == "heatmap" and (hue is None or len(grid[x]) < 2 or len(grid[hue]) < 2):
            continue
        sub, held = _held(rows, grid, [x, hue])
        if not aggregate(sub, metric, [x]):
            continue
        fig, ax = new_figure(figsize=(5, 3.6))
        if kind == "heatmap":
            im = plot_heatmap(ax, sub, metric, x, hue, grid[x], grid[hue])
            fig.colorbar(im, ax=ax, label=metric)
        else:
            plot_curves(ax, sub, metric, x, hue, grid[x], grid[hue] if hue else None)
        ax.set_title(" ".join(t for t in (title, metric, f"({held})" if held else "") if t),
                     fontsize=8)
        name = f"{kind}_{_safe(metric)}_{_safe(x)}" + (f"_{_safe(hue)}" if hue else "") + ".png"
        paths.append(save_figure(fig, folder / name))
    return paths
