"""Batched-ensemble trainer for the γ-parametrised, centred two-layer ReLU MLP of seed 003.

Model (seed 003 Eq. 1, App. F, App. G.1), one independent network per ensemble member e:

    f(x; θ) = (1/(γ_e √d)) Σ_i a_i φ(w_i·x),   φ = ReLU, no biases,
    f̃(x; θ) = f(x; θ) − f(x; θ(0))            (centring, App. F),

with μP-style initialisation w_i ~ N(0, I/m), a_i ~ N(0, 1/m), prediction ŷ = σ(f̃), binary
cross-entropy loss, plain SGD with learning rate α_e = γ_e² d α₀ (γ_e <= 1) or γ_e √d α₀
(γ_e > 1). Small γ is lazy (the lazy limit is approximated by γ = 10⁻⁵/√d, §3.3), γ = 1 rich.
For image tasks (PSVRT, Pentomino) the 1/√d factor is dropped (App. G.3/G.4): pass ``d_eff=1``
(then α = γ² α₀ for γ <= 1, exactly as App. F prescribes without the prefactor).

Implementation notes
* All E networks live in tensors W (E, m, D), a (E, m) and are advanced with ``torch.bmm``;
  a sweep over seeds × γ × L (each member with its own task instance) is one tensor program.
* The parameters are stored as the initial values (W0, a0) plus the displacements (ΔW, Δa),
  and the centred output is evaluated as s Σ_i [Δa_i φ(h_i) + a0_i (φ(h_i) − φ(h0_i))] with
  φ(h) − φ(h0) computed from Δh = ΔW·x directly (max(Δh, −h0) if h0 > 0, else φ(h0 + Δh)).
  This keeps the lazy limit (s = 1/(γ√d) ~ 10⁵) free of cancellation in float32.
* Gradients are written out by hand (no autograd): with g_b = (σ(f̃_b) − y_b)/B,
  ∂/∂a_i = s Σ_b g_b φ(h_bi),  ∂/∂w_i = s Σ_b g_b a_i φ'(h_bi) x_b.
* Test accuracy is measured on a fixed test set every ``eval_every`` steps; both the *final*
  accuracy and the *best over training* (the quantity the seed reports, App. G.1) are returned.
  The best is selected on the same test set and is therefore biased upward by the maximum of
  the evaluation noise.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from .._divergence import DivergedError, member_list, nonfinite_members
from ..checks import (
    as_real_tensor,
    check_alloc,
    check_float_dtype,
    check_generator,
    check_int,
    check_pos_float,
    renamed_argument,
    same_device,
)

__all__ = ["GammaMLPResult", "gamma_learning_rate", "gamma_mlp_output", "init_gamma_mlp",
           "lazy_gamma", "train_gamma_mlp"]


def lazy_gamma(d: float) -> float:
    """γ = 10⁻⁵/√d, the seed's numerical stand-in for the lazy limit γ → 0 (§3.3)."""
    return 1e-5 / math.sqrt(check_pos_float("d", d))


def _check_gamma(gamma) -> torch.Tensor:
    """``gamma`` as a float64 tensor of finite values > 0 (TypeError for complex input)."""
    g = as_real_tensor("gamma", gamma, finite=False).to(torch.float64)
    if torch.any(~torch.isfinite(g)) or torch.any(g <= 0):
        raise ValueError(f"gamma must be finite and > 0, got {gamma!r}")
    return g


def gamma_learning_rate(gamma, d_eff: float, alpha0: float):
    """α = γ² d α₀ for γ <= 1 and γ √d α₀ for γ > 1 (App. G.1); elementwise over ``gamma``."""
    g = _check_gamma(gamma)
    d_eff = check_pos_float("d_eff", d_eff)
    alpha0 = check_pos_float("alpha0", alpha0)
    return torch.where(g <= 1, g**2 * d_eff * alpha0, g * math.sqrt(d_eff) * alpha0)


def _check_weight_sizes(E, D, m, itemsize, *, copies):
    """ValueError (naming width, n_members and in_dim) when ``copies`` of the (E, m, D + 1)
    weights and readouts would exceed 16 GiB (training keeps ~6: W0, [W0; ΔW], the gradient and
    the work arrays of a step)."""
    check_alloc(f"width={m} with n_members={E} and in_dim={D}", copies * E * m * (D + 1),
                itemsize=itemsize, what="the (E, width, in_dim) weights" + (
                    f" ({copies} copies)" if copies > 1 else ""))


def init_gamma_mlp(n_members: int, in_dim: int, width: int, *, generator, dtype=torch.float32):
    """Initial weights W0 (E, m, D) ~ N(0, 1/m) and readouts a0 (E, m) ~ N(0, 1/m) (App. G.1).
    Sizes whose weights exceed 16 GiB raise ValueError."""
    E = check_int("n_members", n_members, minimum=1)
    D = check_int("in_dim", in_dim, minimum=1)
    m = check_int("width", width, minimum=1)
    dev = check_generator(generator).device
    dtype = check_float_dtype(dtype)
    _check_weight_sizes(E, D, m, dtype.itemsize, copies=1)
    W0 = torch.randn(E, m, D, generator=generator, device=dev, dtype=dtype) / math.sqrt(m)
    a0 = torch.randn(E, m, generator=generator, device=dev, dtype=dtype) / math.sqrt(m)
    return W0, a0


def _centred_from_preacts(h0, dh, a0, da, s):
    """Centred output f̃ (E, B), pre-activations h = h0 + Δh and φ(h) (E, B, m) from the initial
    pre-activations h0 = W0·x and their displacement Δh = ΔW·x (each (E, B, m)).

    f̃ = s Σ_i [Δa_i φ(h_i) + a0_i (φ(h0_i + Δh_i) − φ(h0_i))]; shared by the dense step (h0, Δh
    from a matrix product with x) and the structured SD step (gathered from per-symbol tables)."""
    h = h0 + dh
    phi = torch.relu(h)
    # φ(h0 + Δh) − φ(h0) without cancellation: max(Δh, −h0) for h0 > 0, φ(h0 + Δh) otherwise,
    # written branch-free as max(Δh + min(h0, 0), −max(h0, 0)) (no mask tensors)
    dphi = torch.maximum(dh + h0.clamp(max=0), h0.clamp(min=0).neg_())
    f = s[:, None] * (torch.bmm(phi, da[:, :, None]) + torch.bmm(dphi, a0[:, :, None]))[..., 0]
    return f, h, phi


def _forward(x, W0, a0, dW, da, s, Wcat=None):
    """Centred output f̃ (E, B) and the post-update pre-activations h (E, B, m).

    ``Wcat`` (E, 2m, D), if given, is the buffer [W0; ΔW] whose halves W0 and dW are views
    (saves the concatenation in the training loop)."""
    m = W0.shape[1]
    if Wcat is None:
        Wcat = torch.cat([W0, dW], dim=1)
    hh = torch.bmm(x, Wcat.transpose(1, 2))
    return _centred_from_preacts(hh[..., :m], hh[..., m:], a0, da, s)


def _bce_backward(f, phi, y, s, *, with_loss=True, counts=None, batch=None):
    """Mean BCE loss (E,) (None unless ``with_loss``), ∂L/∂a (E, m) and the per-example hidden
    factor G_bi = g_b φ'(h_bi) (E, B, m), g_b = (σ(f̃_b) − y_b) s/B, so that
    ∂L/∂w_i = a_i Σ_b G_bi x_b (the contraction with x is left to the caller: a matrix product
    in the dense step, per-symbol sums in the structured SD step).

    ``counts`` (E, P), if given, says how often each of the P rows of f occurs in a batch of
    ``batch`` examples (the structured step's grid of distinct pairs): g_p = c_p (σ(f̃_p) − y_p) s/B
    and the loss is Σ_p c_p BCE_p / B."""
    B = f.shape[1] if batch is None else batch
    g = torch.sigmoid(f) - y
    if counts is not None:
        g.mul_(counts)
    g = g * (s[:, None] / B)
    grad_a = torch.bmm(g[:, None, :], phi)[:, 0]
    # φ' = sign(φ) for ReLU (φ >= 0)
    G = torch.sign(phi).mul_(g[:, :, None])
    loss = None
    if with_loss:
        bce = torch.nn.functional.binary_cross_entropy_with_logits(f, y, reduction="none")
        loss = bce.mean(1) if counts is None else (bce * counts).sum(1) / B
    return loss, grad_a, G


def _loss_and_grads(x, y, W0, a0, dW, da, s, *, Wcat=None, with_loss=True):
    """Mean BCE loss (E,) (None unless ``with_loss``), output f̃ (E, B) and the gradients
    (∂/∂a (E, m), ∂/∂W (E, m, D)).

    ∂L/∂a_i = s Σ_b g_b φ(h_bi) and ∂L/∂w_i = s Σ_b g_b a_i φ'(h_bi) x_b with
    g_b = (σ(f̃_b) − y_b)/B (hand-written; checked against autograd in the tests).
    """
    f, _h, phi = _forward(x, W0, a0, dW, da, s, Wcat)
    loss, grad_a, G = _bce_backward(f, phi, y, s, with_loss=with_loss)
    # a_i is applied after the contraction over the batch
    grad_W = torch.bmm(G.transpose(1, 2), x).mul_((a0 + da)[:, :, None])
    return loss, f, grad_a, grad_W


def gamma_mlp_output(x, W0, a0, dW, da, gamma, d_eff: float, *, chunk: int = 2048):
    """Centred outputs f̃(x) (E, n) for inputs x (E, n, D) of networks given as (W0, a0, ΔW, Δa)."""
    if not (isinstance(x, torch.Tensor) and x.ndim == 3 and x.shape[0] == W0.shape[0]
            and x.shape[2] == W0.shape[2]):
        shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
        raise ValueError(f"x must be a tensor of shape (E, n, D) = ({W0.shape[0]}, n, {W0.shape[2]}), "
                         f"got {shape}")
    as_real_tensor("x", x, nonempty=False)
    d_eff = check_pos_float("d_eff", d_eff)
    chunk = check_int("chunk", chunk, minimum=1)
    g = _check_gamma(gamma)
    s = 1.0 / (g.to(dtype=x.dtype, device=x.device) * math.sqrt(d_eff))
    outs = [_forward(x[:, i:i + chunk], W0, a0, dW, da, s)[0] for i in range(0, x.shape[1], chunk)]
    return torch.cat(outs, dim=1)


@dataclass(frozen=True)
class GammaMLPResult:
    """Outcome of :func:`train_gamma_mlp` and :func:`~richlazy.simulate.train_gamma_mlp_sd`
    (all tensors on the CPU).

    final_accuracy : (E,)        test accuracy after the last step.
    best_accuracy : (E,)         best test accuracy over the evaluations (the seed's number).
    best_step : (E,)             step at which the best accuracy was reached.
    final_accuracy_same, final_accuracy_different : (E,)   class-conditional final accuracies.
    eval_steps : (n_eval,)       steps at which the test set was evaluated (0 = initialisation;
                                 the "published" protocol does not evaluate at step 0).
    test_accuracy : (n_eval, E)  the accuracy history; train_loss : (n_eval, E) mean BCE of the
                                 preceding training batch.
    W0, a0, dW, da               initial parameters and final displacements (W = W0 + dW).
    gamma, alpha : (E,)          richness and learning rate of each member; d_eff, alpha0, steps
                                 (the ``n_steps`` of the call).
    diverged : (E,) bool         members with a non-finite training loss or parameters at an
                                 evaluation step (the policy of every simulate result; see the
                                 ``throw`` argument of :func:`train_gamma_mlp`).
    protocol : str               "richlazy" (fixed test set, the default) or "published" (fresh
                                 test batch at every evaluation; see ``train_gamma_mlp_sd``).
    method : str                 the training step used: "dense" (a matrix product with the
                                 inputs), or the structured SD steps "gram" / "slots".
    """

    final_accuracy: torch.Tensor
    best_accuracy: torch.Tensor
    best_step: torch.Tensor
    final_accuracy_same: torch.Tensor
    final_accuracy_different: torch.Tensor
    eval_steps: torch.Tensor
    test_accuracy: torch.Tensor
    train_loss: torch.Tensor
    W0: torch.Tensor
    a0: torch.Tensor
    dW: torch.Tensor
    da: torch.Tensor
    gamma: torch.Tensor
    alpha: torch.Tensor
    d_eff: float
    alpha0: float
    steps: int
    diverged: torch.Tensor
    protocol: str = "richlazy"
    method: str = "dense"

    @property
    def W(self) -> torch.Tensor:
        return self.W0 + self.dW

    @property
    def a(self) -> torch.Tensor:
        return self.a0 + self.da


# ---- pieces shared by the dense trainer and the structured SD trainer (``_sd_structured``) ----


def _check_x_test(x_test) -> tuple[int, int, int]:
    """(E, n, D) of a test-input tensor x_test (E, n, D) with every size >= 1 and finite entries."""
    if not (isinstance(x_test, torch.Tensor) and x_test.ndim == 3):
        raise ValueError("x_test must be a tensor of shape (E, n, D)")
    E, n_test, D = x_test.shape
    if E < 1 or n_test < 1 or D < 1:
        raise ValueError(f"x_test must have at least one member, test input and dimension, got shape "
                         f"{tuple(x_test.shape)}")
    as_real_tensor("x_test", x_test)
    return E, n_test, D


def _check_y_test(y_test, x_test, dev) -> None:
    """y_test (E, n) of labels in {0, 1}; x_test and y_test on the generator's device ``dev``."""
    E, n_test = x_test.shape[:2]
    if not (isinstance(y_test, torch.Tensor) and y_test.shape == (E, n_test)):
        raise ValueError(f"y_test must be a tensor of shape {(E, n_test)}")
    if not (same_device(x_test.device, dev) and same_device(y_test.device, dev)):
        raise ValueError(f"x_test and y_test must be on the generator's device {dev}")
    if not bool(((y_test == 0) | (y_test == 1)).all()):
        raise ValueError("y_test must hold labels in {0, 1}")


def _member_gamma(gamma, E: int) -> torch.Tensor:
    """``gamma`` as a float64 tensor (E,) (a scalar is broadcast to every member)."""
    gam = as_real_tensor("gamma", gamma, finite=False).to(torch.float64).flatten()
    if gam.numel() == 1:
        gam = gam.expand(E).clone()
    if gam.shape != (E,):
        raise ValueError(f"gamma must be a scalar or have one entry per member ({E}), got {gamma!r}")
    return gam


def _initial_params(init, E, D, m, *, generator, dtype, init_fn=None):
    """(W0, a0): ``init`` checked against the shapes (E, m, D), (E, m), or drawn by ``init_fn``
    (default :func:`init_gamma_mlp`)."""
    dev = generator.device
    if init is None:
        return (init_fn or init_gamma_mlp)(E, D, m, generator=generator, dtype=dtype)
    W0, a0 = (t.to(device=dev, dtype=dtype).clone() for t in init)
    if W0.shape != (E, m, D) or a0.shape != (E, m):
        raise ValueError(f"init must be (W0, a0) with shapes {(E, m, D)} and {(E, m)}, "
                         f"got {tuple(W0.shape)} and {tuple(a0.shape)}")
    return W0, a0


def _fixed_test_evaluator(x_test, y_test, W0, a0, dW_fn, da, gam, d_eff, eval_chunk, dtype):
    """evaluate() -> (accuracy (E,), correct (E, n), is_same (E, n)) on the fixed test set;
    ``dW_fn()`` returns the current ΔW (E, m, D)."""
    dev = W0.device
    x_test = x_test.to(dtype)
    is_same = y_test.to(dtype) > 0.5
    g = gam.to(dev, dtype)

    def evaluate():
        f = gamma_mlp_output(x_test, W0, a0, dW_fn(), da, g, d_eff, chunk=eval_chunk)
        correct = ((f > 0) == is_same).to(dtype)
        return correct.mean(1), correct, is_same

    return evaluate


def _sgd_loop(step, evaluate, params, *, E, steps, eval_every, eval_at_start, throw, who, dev, dtype):
    """Run ``steps`` SGD steps and the evaluations of one training run.

    ``step(record) -> loss`` advances every member by one step (the loss (E,) is needed only when
    ``record``); ``evaluate() -> (accuracy (E,), correct (E, n), is_same (E, n))``; ``params()``
    the tensors checked for non-finite entries. Evaluations happen at step 0 (if
    ``eval_at_start``), every ``eval_every`` steps and after the last step. Returns
    (eval steps, accuracies (n_eval, E), losses (n_eval, E), last evaluation, diverged (E,))."""
    hist_steps, hist_acc, hist_loss = [], [], []
    last = None
    if eval_at_start:
        last = evaluate()
        hist_steps.append(0)
        hist_acc.append(last[0])
        hist_loss.append(torch.full((E,), math.log(2.0), device=dev, dtype=dtype))
    diverged = torch.zeros(E, dtype=torch.bool, device=dev)
    for t in range(1, steps + 1):
        record = t % eval_every == 0 or t == steps
        loss = step(record)
        if record:
            bad = nonfinite_members(E, loss, *params())
            if throw and bool(bad.any()):
                raise DivergedError(f"{who}: non-finite loss or parameters at step {t} in "
                                    f"{member_list(bad)}; reduce alpha0 or the input scale")
            diverged |= bad.to(dev)
            last = evaluate()
            hist_steps.append(t)
            hist_acc.append(last[0])
            hist_loss.append(loss)
    return hist_steps, torch.stack(hist_acc), torch.stack(hist_loss), last, diverged


def _make_result(hist, W0, a0, dW, da, gam, alpha, d_eff, alpha0, steps, *, protocol, method):
    """Assemble a :class:`GammaMLPResult` (on the CPU) from the output of :func:`_sgd_loop`."""
    hist_steps, acc, loss, (acc_final, correct, is_same), diverged = hist
    best, best_idx = acc.max(0)
    steps_t = torch.tensor(hist_steps)
    cpu = torch.device("cpu")
    return GammaMLPResult(
        final_accuracy=acc_final.to(cpu),
        best_accuracy=best.to(cpu),
        best_step=steps_t[best_idx.to(cpu)],
        final_accuracy_same=(correct * is_same).sum(1).div(is_same.sum(1)).to(cpu),
        final_accuracy_different=(correct * ~is_same).sum(1).div((~is_same).sum(1)).to(cpu),
        eval_steps=steps_t,
        test_accuracy=acc.to(cpu),
        train_loss=loss.to(cpu),
        W0=W0.contiguous().to(cpu), a0=a0.to(cpu), dW=dW.contiguous().to(cpu), da=da.to(cpu),
        gamma=gam.clone(), alpha=alpha.clone(), d_eff=d_eff, alpha0=alpha0, steps=steps,
        diverged=diverged.to(cpu), protocol=protocol, method=method,
    )


@renamed_argument(steps="n_steps")
def train_gamma_mlp(
    sample_batch: Callable[[torch.Generator], tuple[torch.Tensor, torch.Tensor]],
    x_test: torch.Tensor,
    y_test: torch.Tensor,
    gamma,
    *,
    d_eff: float,
    width: int = 1024,
    alpha0: float = 0.1,
    n_steps: int = 2000,
    eval_every: int = 100,
    generator: torch.Generator,
    dtype=torch.float32,
    eval_chunk: int = 2048,
    init=None,
    throw: bool = False,
) -> GammaMLPResult:
    """Train E centred γ-MLPs with SGD on BCE in one batched tensor program (seed 003 App. G).

    ``sample_batch(generator) -> (x, y)`` returns one training batch per member, x (E, B, D),
    y (E, B) in {0, 1} (e.g. a closure over :func:`~richlazy.simulate.sd_train_batch`).
    ``x_test`` (E, n, D), ``y_test`` (E, n) is each member's fixed test set. ``gamma`` (E,) the
    richness of each member; ``d_eff`` the d in the output scale 1/(γ√d) and in the learning-rate
    rule (the SD input dimension, or 1 for image tasks). The device is the generator's device;
    all data must live there. ``init = (W0, a0)`` replaces the random initialisation (e.g. to
    train the same networks batched and one by one). Returns a :class:`GammaMLPResult`. A
    ``width`` whose training arrays (~6 copies of the (E, width, D) weights) exceed 16 GiB
    raises ValueError.

    Divergence (checked at every evaluation step: non-finite training loss or parameters) is
    flagged per member in ``result.diverged``; ``throw=True`` raises
    :class:`~richlazy.simulate.DivergedError` at the first such check instead. Members are
    independent, so a diverged member does not affect the others.

    For the noise-free SD task, :func:`~richlazy.simulate.train_gamma_mlp_sd` follows the same
    trajectory with a step whose cost does not grow with the batch's input dimension.
    """
    dev = check_generator(generator).device
    dtype = check_float_dtype(dtype)
    if not isinstance(throw, bool):
        raise TypeError(f"throw must be a bool, got {throw!r}")
    E, n_test, D = _check_x_test(x_test)
    if not callable(sample_batch):
        raise TypeError("sample_batch must be callable generator -> (x, y), got "
                        f"{type(sample_batch).__name__}")
    _check_y_test(y_test, x_test, dev)
    gam = _member_gamma(gamma, E)
    d_eff = check_pos_float("d_eff", d_eff)
    alpha0 = check_pos_float("alpha0", alpha0)
    alpha = gamma_learning_rate(gam, d_eff, alpha0)
    m = check_int("width", width, minimum=1)
    _check_weight_sizes(E, D, m, dtype.itemsize, copies=6)
    steps = check_int("n_steps", n_steps, minimum=1)
    eval_every = check_int("eval_every", eval_every, minimum=1)

    W0, a0 = _initial_params(init, E, D, m, generator=generator, dtype=dtype)
    Wcat = torch.cat([W0, torch.zeros_like(W0)], dim=1)  # [W0; ΔW], halves are views
    W0, dW = Wcat[:, :m], Wcat[:, m:]
    da = torch.zeros_like(a0)
    s = (1.0 / (gam * math.sqrt(d_eff))).to(device=dev, dtype=dtype)
    lr = alpha.to(device=dev, dtype=dtype)

    def step(record):
        x, y = sample_batch(generator)
        if x.shape[0] != E or x.shape[2] != D or y.shape != x.shape[:2]:
            raise ValueError(f"sample_batch must return x (E={E}, B, D={D}) and y (E, B), "
                             f"got {tuple(x.shape)} and {tuple(y.shape)}")
        loss, _f, grad_a, grad_W = _loss_and_grads(x.to(dtype), y.to(dtype), W0, a0, dW, da, s,
                                                   Wcat=Wcat, with_loss=record)
        da.sub_(lr[:, None] * grad_a)
        dW.sub_(lr[:, None, None] * grad_W)
        return loss

    evaluate = _fixed_test_evaluator(x_test, y_test, W0, a0, lambda: dW, da, gam, d_eff, eval_chunk,
                                     dtype)
    hist = _sgd_loop(step, evaluate, lambda: (da, dW), E=E, steps=steps, eval_every=eval_every,
                     eval_at_start=True, throw=throw, who="train_gamma_mlp", dev=dev, dtype=dtype)
    return _make_result(hist, W0, a0, dW, da, gam, alpha, d_eff, alpha0, steps, protocol="richlazy",
                        method="dense")
