"""Figures for validation reports (functions return the file path)."""

from __future__ import annotations

import numpy as np

from ._figures import new_figure, save_figure

__all__ = ["kernel_heatmaps", "readout_histograms"]


def kernel_heatmaps(theory: np.ndarray, sampled: np.ndarray, path, *, title: str = "feature kernel"):
    """Side-by-side heatmaps of a theory kernel, the sampled kernel and their difference."""
    vmax = float(max(np.abs(theory).max(), np.abs(sampled).max()))
    fig, axes = new_figure(1, 3, figsize=(12, 3.8))
    for ax, mat, ttl in ((axes[0], theory, "theory"), (axes[1], sampled, "samples")):
        im = ax.imshow(mat, cmap="RdBu_r", vmin=-vmax, vmax=vmax, interpolation="nearest")
        ax.set_title(f"{title}: {ttl}")
        ax.set_xlabel("input ν")
        ax.set_ylabel("input μ")
    fig.colorbar(im, ax=axes[:2], shrink=0.8)
    diff = sampled - theory
    dmax = float(np.abs(diff).max()) or 1.0
    im2 = axes[2].imshow(diff, cmap="PuOr", vmin=-dmax, vmax=dmax, interpolation="nearest")
    axes[2].set_title("samples − theory")
    fig.colorbar(im2, ax=axes[2], shrink=0.8)
    return save_figure(fig, path)


def readout_histograms(readouts: np.ndarray, U: np.ndarray, path, *, labels=None):
    """Histogram of each readout component a^r (pooled over neurons and samples) against the
    theoretical marginal N(0, U_rr)."""
    readouts = np.asarray(readouts).reshape(-1, U.shape[0])
    m = U.shape[0]
    fig, axes = new_figure(1, m, figsize=(3.6 * m, 3.2), squeeze=False)
    for r in range(m):
        ax = axes[0, r]
        a = readouts[:, r]
        sd = np.sqrt(U[r, r])
        lim = 4.5 * sd
        ax.hist(a, bins=60, range=(-lim, lim), density=True, color="0.7", label="samples")
        x = np.linspace(-lim, lim, 400)
        ax.plot(x, np.exp(-0.5 * x**2 / U[r, r]) / np.sqrt(2 * np.pi * U[r, r]), "C3",
                label="theory N(0, U)")
        ax.set_xlabel(f"readout a^{r}" if labels is None else labels[r])
        ax.set_ylabel("density")
        if r == 0:
            ax.legend(frameon=False, fontsize=8)
    return save_figure(fig, path)
