"""``sd-accuracy``: one γ-MLP trained on the same-different task of seed 003 (Tong & Pehlevan),
its best and final test accuracy against the rich-regime formula Eq. (3)/(C.18).

One task = one network (grid point × replicate) trained with the structured SD step
(:func:`richlazy.simulate.train_gamma_mlp_sd`; the dense step when σ² > 0). ``protocol`` picks
richlazy's evaluation (fixed test set of ``n_test`` pairs every ``eval_every`` steps, untruncated
init, balanced batches) or the published code's (a fresh batch of ``n_test`` pairs every
``eval_every`` steps, truncated-normal init, Bernoulli labels; with ``n_test``/``eval_every`` 0
meaning the published 1024 / 1000). ``lazy=True`` replaces γ by the seed's lazy stand-in
γ = 10⁻⁵/√d (§3.3).
"""

from __future__ import annotations

from richlazy.simulate import lazy_gamma, sd_symbols, sd_test_batch, train_gamma_mlp_sd
from richlazy.theory import rich_accuracy

from ...stats import binomial_se
from .._registry import Param, SweepContext, register_sweep


@register_sweep(
    "sd-accuracy",
    description="seed 003 same-different task: best/final test accuracy of one gamma-MLP vs L, d, "
                "gamma (or lazy), sigma2, width, steps and the evaluation protocol (richlazy or "
                "published), with Eq. (3)",
    params={
        "L": Param(int, 8, "number of training symbols", minimum=2),
        "d": Param(int, 64, "symbol dimension (inputs are 2d)", minimum=1),
        "gamma": Param(float, 1.0, "richness gamma (1 = rich)", minimum=1e-12),
        "lazy": Param(bool, False, "use the lazy stand-in gamma = 1e-5/sqrt(d) instead of gamma"),
        "sigma2": Param(float, 0.0, "input noise variance sigma^2 (per d)", minimum=0.0),
        "width": Param(int, 256, "hidden units m", minimum=1),
        "steps": Param(int, 2000, "SGD steps", minimum=1),
        "batch": Param(int, 128, "pairs per batch", minimum=2),
        "alpha0": Param(float, 0.1, "base learning rate alpha_0", minimum=1e-12),
        "protocol": Param(str, "richlazy", "evaluation/initialisation protocol",
                          choices=("richlazy", "published")),
        "n_test": Param(int, 0, "test pairs per evaluation (0: 1000 richlazy / 1024 published)",
                        minimum=0),
        "eval_every": Param(int, 0, "steps between evaluations (0: steps/20 richlazy / 1000 "
                            "published)", minimum=0),
    },
    uses_gpu=True,
    metrics=("best_accuracy", "best_accuracy_se", "final_accuracy", "final_accuracy_se",
             "eq3_accuracy", "best_minus_eq3"),
    figures=(("heatmap", "best_accuracy", "L", "d"), ("curves", "best_accuracy", "L", "gamma"),
             ("curves", "best_minus_eq3", "L", "protocol"), ("curves", "best_accuracy", "L", "d")),
)
def sd_accuracy(ctx: SweepContext, *, L, d, gamma, lazy, sigma2, width, steps, batch, alpha0,
                protocol, n_test, eval_every):
    g = ctx.generator(0)
    gam = lazy_gamma(d) if lazy else gamma
    S = sd_symbols(1, L, d, generator=g)
    if protocol == "richlazy":
        n = n_test or 1000
        every = eval_every or max(steps // 20, 1)
        xt, yt = sd_test_batch(1, n, d, sigma2=sigma2, generator=g)
        res = train_gamma_mlp_sd(S, xt, yt, gam, batch_size=batch, width=width, alpha0=alpha0,
                                 n_steps=steps, eval_every=every, sigma2=sigma2, generator=g)
    else:
        n = n_test or 1024
        res = train_gamma_mlp_sd(S, None, None, gam, batch_size=batch, width=width,
                                 alpha0=alpha0, n_steps=steps, eval_every=eval_every or None,
                                 n_test=n, sigma2=sigma2, protocol="published", generator=g)
    if bool(res.diverged.any()):
        raise FloatingPointError(f"training diverged (gamma={gam:g}, alpha0={alpha0:g}); "
                                 "reduce alpha0")
    best = float(res.best_accuracy[0])
    final = float(res.final_accuracy[0])
    eq3 = float(rich_accuracy(L))
    return {"best_accuracy": best, "best_accuracy_se": binomial_se(best, n),
            "final_accuracy": final, "final_accuracy_se": binomial_se(final, n),
            "eq3_accuracy": eq3, "best_minus_eq3": best - eq3}
