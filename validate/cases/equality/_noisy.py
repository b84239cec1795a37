"""Noisy same-different case of seed 003: rich networks vs the Bayes-optimal classifiers.

* ``equality/noisy-bayes``  rich networks vs the Bayes-optimal accuracy under the generalising
  prior, with the memorising prior for contrast (Fig. 2, App. E); the full size also trains with
  the published code's protocol.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from richlazy.simulate import sd_symbols, sd_test_batch, train_gamma_mlp_sd
from richlazy.theory import bayes_accuracy, bayes_generalising_accuracy

from ...core._compare import compare
from ...core._registry import CaseContext, CaseOutcome, case_threads, register_case
from ...stats import mean_se
from ._common import Z, errorbar, train_sd

_BAYES_CFG = {
    "quick": dict(d=16, sigma2s=[1.0, 4.0], Ls=[4, 64, 1024], seeds=3, width=128, steps=4000,
                  n_test=1000, protocols=["richlazy"]),
    # the full size also trains with the published code's protocol (truncated-normal init,
    # Bernoulli labels, best of fresh 1024-pair test batches every 1000 steps)
    "full": dict(d=64, sigma2s=[0.5, 1.0, 2.0, 4.0], Ls=[2, 4, 16, 64, 256, 1024, 4096],
                 seeds=6, width=1024, steps=25000, n_test=2048, protocols=["richlazy", "published"]),
}


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


@register_case("equality/noisy-bayes",
               description="noisy SD: rich networks vs the Bayes-optimal accuracy under the "
                           "generalising and memorising priors (Fig. 2, App. E)")
def case_noisy_bayes(ctx: CaseContext) -> CaseOutcome:
    cfg = _BAYES_CFG[ctx.size]
    d, Ls, seeds = cfg["d"], cfg["Ls"], cfg["seeds"]
    net = np.zeros((len(cfg["sigma2s"]), len(Ls), seeds))
    mem = np.zeros_like(net)
    gen = []
    with case_threads(ctx):
        for i, s2 in enumerate(cfg["sigma2s"]):
            members = [L for L in Ls for _ in range(seeds)]
            res, S, xt, yt = train_sd(ctx, 300 + i, d, [1.0] * len(members), members,
                                      width=cfg["width"], steps=cfg["steps"], sigma2=s2,
                                      n_test=cfg["n_test"], eval_every=max(cfg["steps"] // 20, 1))
            net[i] = res.best_accuracy.numpy().reshape(len(Ls), seeds)
            gen.append(bayes_generalising_accuracy(d, s2).accuracy)
            for e, L in enumerate(members):
                x = xt[e].double().numpy()
                r = bayes_accuracy(x[:, :d], x[:, d:], yt[e].numpy(), prior="memorising",
                                   sigma2=s2, symbols=S[e, :L].double().numpy())
                mem.flat[i * len(Ls) * seeds + e] = r.accuracy
    pub = {}  # published protocol: (net, mem) arrays shaped like net
    if "published" in cfg["protocols"]:
        with case_threads(ctx):
            pnet, pmem = np.zeros_like(net), np.zeros_like(net)
            for i, s2 in enumerate(cfg["sigma2s"]):
                members = [L for L in Ls for _ in range(seeds)]
                a, b = _published(ctx, 400 + i, d, members, s2, width=cfg["width"],
                                  steps=cfg["steps"], n_test=cfg["n_test"])
                pnet[i], pmem[i] = a.reshape(len(Ls), seeds), b.reshape(len(Ls), seeds)
        pub = {"net": pnet, "mem": pmem}
    q = []
    for i, s2 in enumerate(cfg["sigma2s"]):
        if pub:
            m, se = mean_se(pub["net"][i, -1])
            se_tot = math.sqrt(se**2 + gen[i] * (1 - gen[i]) / 1024)
            q.append(compare(f"rich best accuracy vs Bayes (generalising), sigma2={s2:g}, "
                             f"L={Ls[-1]} (published protocol)", gen[i], m, stderr=se_tot,
                             kind="z", tol=Z,
                             note="as the richlazy-protocol quantity; the network's accuracy is "
                                  "the best over fresh 1024-pair batches"))
            dm, dse = mean_se(pub["net"][i, 0] - pub["mem"][i, 0])
            q.append(compare(f"rich minus memorising-Bayes accuracy, sigma2={s2:g}, L={Ls[0]} "
                             "(published protocol, > 0)", 0.0, dm, stderr=dse, kind="gt", tol=Z,
                             note="per member on different test pairs (fresh batches for the "
                                  "network, a fixed set for the Bayes classifier); one-sided 3 SE"))
        m, se = mean_se(net[i, -1])
        se_tot = math.sqrt(se**2 + gen[i] * (1 - gen[i]) / cfg["n_test"])
        q.append(compare(f"rich best accuracy vs Bayes (generalising), sigma2={s2:g}, "
                         f"L={Ls[-1]}", gen[i], m, stderr=se_tot, kind="z", tol=Z,
                         note="Fig. 2: rich networks reach the generalising-prior Bayes accuracy "
                              "at large L; SE = seed-to-seed plus the binomial test-set error "
                              "(best-over-training is selected on the same test set)"))
        mm, sm = mean_se(net[i, 0] - mem[i, 0])
        q.append(compare(f"rich minus memorising-Bayes accuracy, sigma2={s2:g}, L={Ls[0]} (> 0)",
                         0.0, mm, stderr=sm, kind="gt", tol=Z,
                         note="Fig. 2: rich networks generalise beyond the memorising prior "
                              "(paired per seed on the same test pairs); one-sided 3-SE test"))
    n_panels = len(cfg["sigma2s"])
    with ctx.figure("noisy_bayes.png", 1, n_panels, figsize=(3.2 * n_panels, 3.2), sharey=True,
                    squeeze=False) as (_fig, axes):
        axes = axes[0]
        for i, s2 in enumerate(cfg["sigma2s"]):
            ax = axes[i]
            errorbar(ax, Ls, net[i], "o-", label="rich γ=1 (best)", capsize=0)
            if pub:
                errorbar(ax, Ls, pub["net"][i], "s--", label="rich γ=1, published protocol",
                         capsize=0)
            ax.axhline(gen[i], color="r", ls="--", label="Bayes gen")
            ax.plot(Ls, mem[i].mean(-1), "b--", label="Bayes mem")
            ax.set_xscale("log", base=2)
            ax.set_title(f"σ² = {s2:g}, d = {d}", fontsize=9)
            ax.set_xlabel("# symbols L")
        axes[0].set_ylabel("test accuracy")
        axes[0].legend(fontsize=7)
    params = dict(cfg, net=net.mean(-1).tolist(), bayes_mem=mem.mean(-1).tolist(),
                  bayes_gen=gen)
    if pub:
        params.update(net_published=pub["net"].mean(-1).tolist(),
                      bayes_mem_published=pub["mem"].mean(-1).tolist())
    return CaseOutcome(q, [], params,
                       "Bayes-generalising accuracy is exact (1-D quadrature); Bayes-memorising "
                       "is evaluated on the networks' own test pairs and training symbols.")
