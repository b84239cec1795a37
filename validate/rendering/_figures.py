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
    """Write ``fig`` to ``path`` (PNG unless the suffix says otherwise) and release it. The file is
    written atomically (:func:`richlazy.simulate.atomic_write`): a reader never sees half a
    figure, and a failed or interrupted write leaves the old file in place. Every figure of the
    package is written here (checked by ``tests/test_architecture.py``)."""
    from richlazy.simulate import atomic_write  # here, not at import: rendering needs no torch

    path = pathlib.Path(path)
    fmt = path.suffix[1:].lower() or "png"
    atomic_write(path, lambda fh: fig.savefig(fh, format=fmt, dpi=dpi))
    fig.clear()
    return path
