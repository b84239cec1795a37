"""Image same-different case of seed 003: PSVRT and Pentomino, rich vs lazy.

* ``equality/vision``  accuracy vs the number of training patterns / shapes (Fig. 3b, 3e).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from richlazy.simulate import (
    pentomino_batch,
    psvrt_batch,
    psvrt_patterns,
    psvrt_test_batch,
    split_pentominoes,
    train_gamma_mlp,
)
from richlazy.validate import Compared, Sizes, declare_case

from ...recipes import case_threads
from ...stats import mean_se
from ._common import errorbar, rule


@dataclass(frozen=True)
class VisionSize:
    psvrt_patch: int  # PSVRT patch side
    psvrt_patches: int  # patches per image side
    psvrt_ns: tuple[int, ...]  # training patterns
    pento_patches: int
    pento_ns: tuple[int, ...]  # training shapes
    seeds: int  # PSVRT networks per (γ, n)
    pento_seeds: int  # Pentomino networks per (γ, n)
    width: int
    steps: int
    n_test: int


SIZES = Sizes(
    quick=VisionSize(psvrt_patch=4, psvrt_patches=3, psvrt_ns=(8, 32, 128), pento_patches=2,
                     pento_ns=(4, 10), seeds=3, pento_seeds=5, width=128, steps=1500, n_test=500),
    full=VisionSize(psvrt_patch=5, psvrt_patches=5, psvrt_ns=(16, 32, 64, 128, 256, 512, 1024),
                    pento_patches=2, pento_ns=(2, 4, 8, 10, 12, 14, 16), seeds=6, pento_seeds=6,
                    width=512, steps=100000, n_test=1024),
)
_GAMMAS = (1.0, 1e-5)  # rich, lazy
_TASKS = ("psvrt", "pentomino")

CASE = declare_case(
    "equality/vision",
    description="PSVRT and Pentomino same-different: rich vs lazy accuracy vs the number of "
                "training patterns / shapes (Fig. 3b, 3e)",
    sizes=SIZES,
    simulation=lambda ctx, cfg, th: _simulation(ctx, cfg),
    compared=(
        # the claim holds at every n: average the paired rich-lazy gap over the n grid per seed
        Compared(lambda run, task: (f"{task}: rich minus lazy best accuracy, mean over n = "
                                    f"{list(run.simulation[task][0])} (> 0)"),
                 theory=lambda run, task: 0.0,
                 estimate=lambda run, task: mean_se((run.simulation[task][1][0]
                                                     - run.simulation[task][1][1]).mean(0)),
                 rule=rule("gt", "Fig. 3b/3e: richer models learn with fewer training patterns / "
                                 "shapes; per-seed gap averaged over the n grid, one-sided 3-SE test",
                           floor=1e-3),
                 over=lambda run: _TASKS),
    ),
    figures=lambda run: _figure(run),
    params=lambda run: {f"{t}_best": a.mean(-1).tolist() for t, (_, a) in run.simulation.items()},
    notes=lambda run: ("Image tasks drop the 1/sqrt(d) factor (d_eff = 1, alpha = gamma^2 alpha0, "
                       "alpha0 = 0.5). Pentomino members use the first n of their training shapes; "
                       "test images use the 18 - max(n) shapes never trained on."),
)


# ---- the stages ------------------------------------------------------------------------------


def _best_accuracy(ctx, k, members, sample, xt, yt, cfg, shape):
    """Train the ensemble (member e has richness members[e][0]) on stream ``k``; best accuracy
    reshaped to ``shape``. Image tasks drop the 1/sqrt(d) factor (d_eff = 1, alpha0 = 0.5)."""
    r = train_gamma_mlp(sample, xt, yt, torch.tensor([m[0] for m in members], dtype=torch.float64),
                        d_eff=1.0, width=cfg.width, alpha0=0.5, n_steps=cfg.steps,
                        eval_every=max(cfg.steps // 20, 1), generator=ctx.generator(k))
    return r.best_accuracy.numpy().reshape(shape)


def _psvrt(ctx, cfg):
    """Every member its own training pattern set; test patterns exclude all of them."""
    ps, npch, ns, seeds = cfg.psvrt_patch, cfg.psvrt_patches, cfg.psvrt_ns, cfg.seeds
    members = [(gm, n) for gm in _GAMMAS for n in ns for _ in range(seeds)]
    E = len(members)
    g = ctx.generator(600)
    pats = psvrt_patterns(E * max(ns), ps, generator=g).reshape(E, max(ns), ps, ps)
    n_pat = torch.tensor([n for _, n in members], device=ctx.device)
    used = torch.cat([pats[e, :n] for e, (_, n) in enumerate(members)])
    xt, yt = psvrt_test_batch(E, cfg.n_test, patch_size=ps, n_patches=npch, exclude=used,
                              generator=g)
    acc = _best_accuracy(ctx, 601, members,
                         lambda gg: psvrt_batch(pats, 128, n_patches=npch, n_patterns=n_pat,
                                                generator=gg),
                         xt, yt, cfg, (len(_GAMMAS), len(ns), seeds))
    return ns, acc


def _pentomino(ctx, cfg):
    """Held-out shapes; blur on training images only. Test images use the shapes never trained
    on (18 - max(ns) held out per member)."""
    ns, npch, seeds = cfg.pento_ns, cfg.pento_patches, cfg.pento_seeds
    members = [(gm, n) for gm in _GAMMAS for n in ns for _ in range(seeds)]
    g = ctx.generator(700)
    train_ids, test_ids = [], []
    for _ in range(len(ns) * seeds):
        tr, te = split_pentominoes(max(ns), generator=g)
        train_ids.append(tr)
        test_ids.append(te)
    train_ids = torch.stack(train_ids * len(_GAMMAS))
    test_ids = torch.stack(test_ids * len(_GAMMAS))
    n_sh = torch.tensor([n for _, n in members], device=ctx.device)
    xt, yt = pentomino_batch(test_ids, cfg.n_test, n_patches=npch, generator=g)
    acc = _best_accuracy(ctx, 701, members,
                         lambda gg: pentomino_batch(train_ids, 128, n_patches=npch, n_shapes=n_sh,
                                                    blur_sigma=0.5, generator=gg),
                         xt, yt, cfg, (len(_GAMMAS), len(ns), seeds))
    return ns, acc


def _simulation(ctx, cfg):
    """task -> (n grid, best accuracies (γ, n, seed))."""
    with case_threads(ctx):
        return {"psvrt": _psvrt(ctx, cfg), "pentomino": _pentomino(ctx, cfg)}


def _figure(run):
    with run.ctx.figure("vision.png", 1, 2, figsize=(7, 3), sharey=True) as (_fig, axes):
        for ax, (task, (ns, acc)) in zip(axes, run.simulation.items(), strict=True):
            for i, lab in enumerate(("rich γ=1", "lazy γ=1e-5")):
                errorbar(ax, ns, acc[i], "o-", label=lab)
            ax.set_xscale("log", base=2)
            ax.set_title(task, fontsize=9)
            ax.set_xlabel("# training patterns" if task == "psvrt" else "# training shapes")
            ax.axhline(0.5, color="gray", lw=0.6)
        axes[0].set_ylabel("test accuracy (best)")
        axes[0].legend(fontsize=7)
