"""The same-different task's ensembles (seed 003): one gamma-MLP ensemble trained on its own
seeded stream, used by the equality cases and by ``richness/gamma-equality``."""

from __future__ import annotations

import torch
from richlazy.simulate import sd_symbols, sd_test_batch, sd_train_batch, train_gamma_mlp

from ..core._registry import CaseContext

__all__ = ["train_sd"]


def train_sd(ctx: CaseContext, k: int, d: int, gammas, Ls, *, width: int, steps: int,
             alpha0: float = 0.1, sigma2: float = 0.0, n_test: int = 1000, batch: int = 128,
             eval_every: int = 100):
    """Train one γ-MLP ensemble on stream ``k``: member e has richness gammas[e] and its own
    L = Ls[e] training symbols. Returns ``(result, symbols, x_test, y_test)`` (data on the CPU)."""
    g = ctx.generator(k)
    E = len(gammas)
    S = sd_symbols(E, max(Ls), d, generator=g)
    n_sym = torch.tensor(Ls, device=ctx.device)
    xt, yt = sd_test_batch(E, n_test, d, sigma2=sigma2, generator=g)
    res = train_gamma_mlp(
        lambda gg: sd_train_batch(S, batch, n_symbols=n_sym, sigma2=sigma2, generator=gg),
        xt, yt, torch.tensor(gammas, dtype=torch.float64), d_eff=d, width=width, alpha0=alpha0,
        n_steps=steps, eval_every=eval_every, generator=g)
    return res, S.cpu(), xt.cpu(), yt.cpu()
