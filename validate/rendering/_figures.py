"""The one figure helper: matplotlib's object API (``matplotlib.figure.Figure``), so no global
backend is selected and nothing happens at import time; figures render with Agg when saved."""

from __future__ import annotations

import pathlib

__all__ = ["new_figure", "save_figure"]


def new_figure(nrows: int = 1, ncols: int = 1, *, figsize=None, layout: str | None = "constrained",
               squeeze: bool = True, **subplot_kw):
    """A fresh ``(Figure, axes)`` pair, like ``pyplot.subplots`` but without pyplot's global state."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout=layout)
    axes = fig.subplots(nrows, ncols, squeeze=squeeze, **subplot_kw)
    return fig, axes


def save_figure(fig, path, *, dpi: int = 110) -> pathlib.Path:
    """Write ``fig`` to ``path`` (PNG unless the suffix says otherwise) and release it."""
    path = pathlib.Path(path)
    fig.savefig(path, dpi=dpi)
    fig.clear()
    return path
