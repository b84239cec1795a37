"""Noisy same-different case of seed 003: rich networks vs the Bayes-optimal classifiers.

* ``equality/noisy-bayes``  rich networks vs the Bayes-optimal accuracy under the generalising
  prior, with the memorising prior for contrast (Fig. 2, App. E); the full size also trains with
  the published code's protocol.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import torch
from richlazy.simulate import sd_symbols, sd_test_batch, train_gamma_mlp_sd
from richlazy.theory import bayes_accuracy, bayes_generalising_accuracy
from richlazy.validate import Compared, Sizes, declare_case

from ...recipes import case_threads, train_sd
from ...stats import mean_se
from ._common import compared, errorbar


@dataclass(frozen=True)
class NoisyBayesSize:
    d: int
    sigma2s: tuple[float, ...]  # noise variances of the symbols
    Ls: tuple[int, ...]  # training symbols
    seeds: int
    width: int
    steps: int
    n_test: int
    protocols: tuple[str, ...]  # "richlazy" and, optionally, "published"


SIZES = Sizes(
    quick=NoisyBayesSize(d=16, sigma2s=(1.0, 4.0), Ls=(4, 64, 1024), seeds=3, width=128, steps=4000,
                         n_test=1000, protocols=("richlazy",)),
    # the full size also trains with the published code's protocol (truncated-normal init,
    # Bernoulli labels, best of fresh 1024-pair test batches every 1000 steps)
    full=NoisyBayesSize(d=64, sigma2s=(0.5, 1.0, 2.0, 4.0), Ls=(2, 4, 16, 64, 256, 1024, 4096),
                        seeds=6, width=1024, steps=25000, n_test=2048,
                        protocols=("richlazy", "published")),
)

#: the quantities per noise level, in order: key -> (name template, tolerance kind, note); the
#: "published" ones only when the size trains with the published protocol
_ROWS = {
    "published-gen": (
        "rich best accuracy vs Bayes (generalising), sigma2={s2:g}, L={L} (published protocol)",
        "z", "as the richlazy-protocol quantity; the network's accuracy is the best over fresh "
             "1024-pair batches"),
    "published-mem": (
        "rich minus memorising-Bayes accuracy, sigma2={s2:g}, L={L} (published protocol, > 0)",
        "gt", "per member on different test pairs (fresh batches for the network, a fixed set "
              "for the Bayes classifier); one-sided 3 SE"),
    "gen": (
        "rich best accuracy vs Bayes (generalising), sigma2={s2:g}, L={L}",
        "z", "Fig. 2: rich networks reach the generalising-prior Bayes accuracy at large L; SE = "
             "seed-to-seed plus the binomial test-set error (best-over-training is selected on "
             "the same test set)"),
    "mem": (
        "rich minus memorising-Bayes accuracy, sigma2={s2:g}, L={L} (> 0)",
        "gt", "Fig. 2: rich networks generalise beyond the memorising prior (paired per seed on "
              "the same test pairs); one-sided 3-SE test"),
}

CASE = declare_case(
    "equality/noisy-bayes",
    description="noisy SD: rich networks vs the Bayes-optimal accuracy under the generalising and "
                "memorising priors (Fig. 2, App. E)",
    sizes=SIZES,
    theory=lambda ctx, cfg: [bayes_generalising_accuracy(cfg.d, s2).accuracy for s2 in cfg.sigma2s],
    simulation=lambda ctx, cfg, gen: _simulation(ctx, cfg),
    compared=(
        Compared(lambda run, i, key: _ROWS[key][0].format(
                     s2=run.cfg.sigma2s[i], L=run.cfg.Ls[-1 if key.endswith("gen") else 0]),
                 theory=lambda run, i, key: run.theory[i] if key.endswith("gen") else 0.0,
                 estimate=lambda run, i, key: _estimate(run, i, key), rule=compared,
                 over=lambda run: [(i, key) for i in range(len(run.cfg.sigma2s)) for key in _ROWS
                                   if run.simulation.pub or not key.startswith("published")],
                 options=lambda run, i, key: dict(kind=_ROWS[key][1], note=_ROWS[key][2])),
    ),
    figures=lambda run: _figure(run),
    params=lambda run: _params(run),
    notes=lambda run: ("Bayes-generalising accuracy is exact (1-D quadrature); Bayes-memorising is "
                       "evaluated on the networks' own test pairs and training symbols."),
)


# ---- the stages ------------------------------------------------------------------------------


def _published(ctx, k, d, Ls, s2, *, width, steps, n_test):
    """Best accuracies of γ=1 networks trained with the published protocol (one member per
    entry of ``Ls``) and the memorising-prior Bayes accuracy on a fixed test set of ``n_test``
    fresh pairs drawn with each member's symbols (stream ``k``)."""
    g = ctx.generator(k)
    S = sd_symbols(len(Ls), max(Ls), d, generator=g)
    res = train_gamma_mlp_sd(S, None, None, 1.0, n_symbols=torch.tensor(Ls, device=ctx.device),
                             width=width, n_steps=steps, sigma2=s2, protocol="published",
                             n_test=1024, generator=g)
    if bool(res.diverged.any()):
        raise FloatingPointError("published-protocol training diverged; reduce alpha0")
    xt, yt = sd_test_batch(len(Ls), n_test, d, sigma2=s2, generator=g)
    xt, yt, S = xt.cpu(), yt.cpu(), S.cpu()
    mem = np.array([bayes_accuracy(xt[e, :, :d].double().numpy(), xt[e, :, d:].double().numpy(),
                                   yt[e].numpy(), prior="memorising", sigma2=s2,
                                   symbols=S[e, :L].double().numpy()).accuracy
                    for e, L in enumerate(Ls)])
    return res.best_accuracy.numpy(), mem


def _simulation(ctx, cfg):
    """Best accuracies of the rich networks and the memorising-prior Bayes accuracies on their
    test pairs, (sigma2, L, seed), in richlazy's protocol and (``pub``, when the size asks for
    it) in the published one."""
    d, Ls, seeds = cfg.d, cfg.Ls, cfg.seeds
    net = np.zeros((len(cfg.sigma2s), len(Ls), seeds))
    mem = np.zeros_like(net)
    with case_threads(ctx):
        for i, s2 in enumerate(cfg.sigma2s):
            members = [L for L in Ls for _ in range(seeds)]
            res, S, xt, yt = train_sd(ctx, 300 + i, d, [1.0] * len(members), members,
                                      width=cfg.width, steps=cfg.steps, sigma2=s2,
                                      n_test=cfg.n_test, eval_every=max(cfg.steps // 20, 1))
            net[i] = res.best_accuracy.numpy().reshape(len(Ls), seeds)
            for e, L in enumerate(members):
                x = xt[e].double().numpy()
                r = bayes_accuracy(x[:, :d], x[:, d:], yt[e].numpy(), prior="memorising",
                                   sigma2=s2, symbols=S[e, :L].double().numpy())
                mem.flat[i * len(Ls) * seeds + e] = r.accuracy
    pub = {}  # published protocol: (net, mem) arrays shaped like net
    if "published" in cfg.protocols:
        with case_threads(ctx):
            pnet, pmem = np.zeros_like(net), np.zeros_like(net)
            for i, s2 in enumerate(cfg.sigma2s):
                members = [L for L in Ls for _ in range(seeds)]
                a, b = _published(ctx, 400 + i, d, members, s2, width=cfg.width, steps=cfg.steps,
                                  n_test=cfg.n_test)
                pnet[i], pmem[i] = a.reshape(len(Ls), seeds), b.reshape(len(Ls), seeds)
        pub = {"net": pnet, "mem": pmem}
    return SimpleNamespace(net=net, mem=mem, pub=pub)


def _estimate(run, i, key):
    """(mean, se) of quantity ``key`` at noise level i: the best accuracy at the largest L (SE =
    seed-to-seed plus the binomial error of the test set) or the network's advantage over the
    memorising Bayes classifier at the smallest L."""
    gen = run.theory[i]
    if key.startswith("published"):
        net, mem, n_test = run.simulation.pub["net"], run.simulation.pub["mem"], 1024
    else:
        net, mem, n_test = run.simulation.net, run.simulation.mem, run.cfg.n_test
    if key.endswith("mem"):
        return mean_se(net[i, 0] - mem[i, 0])
    m, se = mean_se(net[i, -1])
    return m, math.sqrt(se**2 + gen * (1 - gen) / n_test)


def _figure(run):
    cfg, gen, net, mem, pub = run.cfg, run.theory, run.simulation.net, run.simulation.mem, run.simulation.pub
    n_panels = len(cfg.sigma2s)
    with run.ctx.figure("noisy_bayes.png", 1, n_panels, figsize=(3.2 * n_panels, 3.2), sharey=True,
                        squeeze=False) as (_fig, axes):
        axes = axes[0]
        for i, s2 in enumerate(cfg.sigma2s):
            ax = axes[i]
            errorbar(ax, cfg.Ls, net[i], "o-", label="rich γ=1 (best)", capsize=0)
            if pub:
                errorbar(ax, cfg.Ls, pub["net"][i], "s--", label="rich γ=1, published protocol",
                         capsize=0)
            ax.axhline(gen[i], color="r", ls="--", label="Bayes gen")
            ax.plot(cfg.Ls, mem[i].mean(-1), "b--", label="Bayes mem")
            ax.set_xscale("log", base=2)
            ax.set_title(f"σ² = {s2:g}, d = {cfg.d}", fontsize=9)
            ax.set_xlabel("# symbols L")
        axes[0].set_ylabel("test accuracy")
        axes[0].legend(fontsize=7)


def _params(run):
    sim = run.simulation
    params = dict(net=sim.net.mean(-1).tolist(), bayes_mem=sim.mem.mean(-1).tolist(),
                  bayes_gen=run.theory)
    if sim.pub:
        params.update(net_published=sim.pub["net"].mean(-1).tolist(),
                      bayes_mem_published=sim.pub["mem"].mean(-1).tolist())
    return params
