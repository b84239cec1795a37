"""Batched ensembles of small ReLU MLPs trained with (minibatch) gradient descent on MSE.

E independent networks live in one set of tensors with a leading ensemble axis and run as one
tensor program (``torch.bmm``), so a sweep over seeds, target scales α or training modes is one
call. Architecture (NTK parametrisation, depth L = number of weight layers, 2 or 3):

    h_0 = x,   h_l = relu( h_{l-1} W_l * gain / sqrt(fan_in_l) )      l = 1 .. L-1
    f(x) = output_scale * h_{L-1} W_L / sqrt(width)

with all weights drawn N(0, 1). The penultimate post-activations Φ(x) = h_{L-1} are the
"features" of seed 004 (Sec. 2) and f the outputs. Loss per network e (MSE on scaled targets,
seed 004 Sec. 4.1 "target downscaling" y -> y/α):

    L_e = (1 / 2b) Σ_{i in batch} || f_e(x_i) - y_i / α_e ||^2 .

Options: per-network α and learning rate; last-layer-only training per network (hidden weights
frozen at initialisation: a linear model on random features, the lazy reference of seed 004
Table 3); ``zero_output=True`` (antisymmetric initialisation: the last hidden layer is built from
pairs of identical units with opposite readout weights, so f ≡ 0 at initialisation while the
output stays linear in the features); plain (stochastic) gradient descent with optional L2 weight
decay. All randomness comes from an explicit ``torch.Generator``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import torch

from .._divergence import DivergedError, member_list
from ..checks import (
    as_real_tensor,
    check_alloc,
    check_count,
    check_float_dtype,
    check_generator_device,
    check_generator_on,
    check_nonneg_float,
    check_pos_float,
    renamed_argument,
)

__all__ = ["MLPParams", "MLPTrainResult", "init_mlp_ensemble", "mlp_forward", "train_mlp_ensemble"]


@dataclass(frozen=True)
class MLPParams:
    """Weights of an ensemble of E MLPs.

    weights : tuple of tensors, W_1 (E, d, N), ..., W_L (E, N, C) (readout last).
    gain : hidden-layer gain (sqrt(2) keeps ReLU pre-activations O(1)).
    output_scale : prefactor of the readout (small -> richer, large -> lazier; Chizat et al.).
    """

    weights: tuple[torch.Tensor, ...]
    gain: float
    output_scale: float

    @property
    def n_members(self) -> int:
        return self.weights[0].shape[0]

    @property
    def depth(self) -> int:
        return len(self.weights)

    @property
    def width(self) -> int:
        return self.weights[-1].shape[1]

    def detach_clone(self) -> MLPParams:
        return MLPParams(tuple(w.detach().clone() for w in self.weights), self.gain, self.output_scale)

    def repeat_members(self, repeats: int) -> MLPParams:
        """Each member repeated ``repeats`` times consecutively (E -> E * repeats), e.g. to train
        the same initialisations under several target scales."""
        return MLPParams(
            tuple(w.repeat_interleave(repeats, dim=0) for w in self.weights),
            self.gain,
            self.output_scale,
        )


def init_mlp_ensemble(
    n_members: int,
    d_in: int,
    width: int,
    n_out: int,
    *,
    depth: int = 2,
    generator: torch.Generator,
    gain: float = math.sqrt(2.0),
    output_scale: float = 1.0,
    zero_output: bool = False,
    dtype: torch.dtype = torch.float32,
    device: str | torch.device = "cpu",
) -> MLPParams:
    """Draw E = ``n_members`` independent MLPs (all weights N(0, 1), NTK parametrisation).

    ``generator`` must live on ``device`` (torch draws on the generator's device).
    ``zero_output=True`` needs an even width: units j and j + width/2 of the last hidden layer
    get identical incoming weights and opposite readout weights, so f = 0 at initialisation.
    Sizes whose weights exceed 16 GiB raise ValueError.
    """
    for name, v in (("n_members", n_members), ("d_in", d_in), ("width", width), ("n_out", n_out)):
        if not (_is_int(v) and v >= 1):
            raise ValueError(f"{name} must be a positive int, got {v!r}")
    n_members, d_in, width, n_out = int(n_members), int(d_in), int(width), int(n_out)
    if not (_is_int(depth) and depth in (2, 3)):
        raise ValueError(f"depth must be 2 or 3 (weight layers), got {depth!r}")
    if zero_output and width % 2:
        raise ValueError(f"zero_output=True needs an even width, got width={width}")
    gain = check_pos_float("gain", gain)
    output_scale = check_pos_float("output_scale", output_scale)
    device = check_generator_device(generator, device)
    dtype = check_float_dtype(dtype)
    dims = [d_in] + [width] * (depth - 1) + [n_out]
    check_alloc(f"n_members={n_members}, d_in={d_in}, width={width}, n_out={n_out}",
                2 * n_members * sum(a * b for a, b in zip(dims[:-1], dims[1:], strict=True)),
                itemsize=dtype.itemsize, what="the weights (and their draws)")
    ws = []
    for layer, (a, b) in enumerate(zip(dims[:-1], dims[1:], strict=True)):
        last_hidden = layer == depth - 2
        readout = layer == depth - 1
        cols = b // 2 if zero_output and last_hidden else b
        rows = a // 2 if zero_output and readout else a
        w = torch.randn((n_members, rows, cols), generator=generator, dtype=dtype, device=device)
        if zero_output and last_hidden:
            w = torch.cat([w, w], dim=2)
        if zero_output and readout:
            w = torch.cat([w, -w], dim=1)
        ws.append(w.contiguous())
    return MLPParams(tuple(ws), float(gain), float(output_scale))


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _as_inputs(X, E: int, params: MLPParams) -> torch.Tensor:
    w0 = params.weights[0]
    X = as_real_tensor("X", X, dtype=w0.dtype, device=w0.device, finite=False, nonempty=False)
    if X.ndim == 2:
        X = X.unsqueeze(0).expand(E, -1, -1)
    if X.ndim != 3 or X.shape[0] != E or X.shape[2] != w0.shape[1]:
        raise ValueError(
            f"X must have shape (n, {w0.shape[1]}) or ({E}, n, {w0.shape[1]}), got {tuple(X.shape)}"
        )
    if X.shape[1] < 1:
        raise ValueError(f"X must hold at least one input, got shape {tuple(X.shape)}")
    if not bool(torch.isfinite(X).all()):
        raise ValueError("X must be finite (it contains NaN or inf)")
    return X


def _forward(weights, X, gain, output_scale):
    h = X
    for w in weights[:-1]:
        h = torch.relu(torch.bmm(h, w) * (gain / math.sqrt(w.shape[1])))
    out = torch.bmm(h, weights[-1]) * (output_scale / math.sqrt(weights[-1].shape[1]))
    return h, out


def mlp_forward(params: MLPParams, X) -> tuple[torch.Tensor, torch.Tensor]:
    """Features Φ (E, n, width) and outputs f (E, n, n_out) on inputs X (n, d) or (E, n, d)."""
    Xb = _as_inputs(X, params.n_members, params)
    with torch.no_grad():
        return _forward(params.weights, Xb, params.gain, params.output_scale)


@dataclass(frozen=True)
class MLPTrainResult:
    """Outcome of :func:`train_mlp_ensemble`.

    params, init_params : trained and initial weights.
    loss_history : (R, E) full-data training loss (targets scaled by 1/α) at ``record_steps``.
    record_steps : (R,) step indices of the records (0 = before training, last = ``steps``).
    final_loss : (E,) last recorded loss.  diverged : (E,) bool, non-finite loss seen (that
    member's updates were stopped; the policy of every simulate result, see ``throw``).
    steps : number of steps taken (the ``n_steps`` of the call).
    """

    params: MLPParams
    init_params: MLPParams
    loss_history: torch.Tensor
    record_steps: torch.Tensor
    final_loss: torch.Tensor
    diverged: torch.Tensor
    steps: int


def _per_member(value, E, name, dtype, device, *, positive=True):
    t = as_real_tensor(name, value, dtype=dtype, device=device, finite=False)
    if t.ndim == 0:
        t = t.expand(E)
    if t.shape != (E,):
        raise ValueError(f"{name} must be a scalar or have shape ({E},), got {tuple(t.shape)}")
    if not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if positive and not bool(torch.all(t > 0)):
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return t


def _loss(weights, X, Yt, gain, output_scale):
    _, out = _forward(weights, X, gain, output_scale)
    return 0.5 * ((out - Yt) ** 2).sum(dim=(1, 2)) / X.shape[1]


@renamed_argument(steps="n_steps")
def train_mlp_ensemble(
    params: MLPParams,
    X,
    Y,
    *,
    lr,
    n_steps: int,
    alpha=1.0,
    batch_size: int | None = None,
    last_layer_only=False,
    weight_decay: float = 0.0,
    generator: torch.Generator | None = None,
    record_every: int | None = None,
    num_threads: int | None = None,
    throw: bool = False,
) -> MLPTrainResult:
    """Train every member of the ensemble by (minibatch) gradient descent on its own MSE loss.

    Parameters
    ----------
    params : MLPParams   initial weights (not modified).
    X : (n, d) shared or (E, n, d) per-member inputs.  Y : (n, C) or (E, n, C) targets.
    lr : float or (E,)   learning rate (per step, on the loss L_e above).
    n_steps : int        number of gradient steps (>= 0; 0 trains nothing: the result holds the
        initial parameters and their loss).
    alpha : float or (E,) target downscaling: members fit Y / alpha.
    batch_size : int, optional   minibatch size (per member, reshuffled every epoch with
        ``generator``); None = full-batch gradient descent (no generator needed).
    last_layer_only : bool or (E,) bools   freeze the hidden layers of these members.
    weight_decay : float   adds (weight_decay / 2) ||θ||^2 to every member's loss.
    record_every : int, optional   record the full-data loss every so many steps (default
        ~50 records).
    num_threads : int, optional   torch intra-op threads while training (restored afterwards).
        Small CPU ensembles (matrices of a few hundred rows) run fastest with 1: thread
        start-up dominates, and on a loaded machine OpenMP waits can cost milliseconds per op.
    throw : bool   raise :class:`~richlazy.simulate.DivergedError` at the first step with a
        non-finite loss; by default (False) such members are flagged in ``result.diverged``, their
        updates stop and the others train on.
    """
    E = params.n_members
    w0 = params.weights[0]
    dtype, device = w0.dtype, w0.device
    Xb = _as_inputs(X, E, params)
    n = Xb.shape[1]
    Yb = as_real_tensor("Y", Y, dtype=dtype, device=device, finite=False, nonempty=False)
    if Yb.ndim == 2:
        Yb = Yb.unsqueeze(0).expand(E, -1, -1)
    C = params.weights[-1].shape[2]
    if Yb.shape != (E, n, C):
        raise ValueError(f"Y must have shape ({n}, {C}) or ({E}, {n}, {C}), got {tuple(Yb.shape)}")
    if not bool(torch.isfinite(Xb).all()) or not bool(torch.isfinite(Yb).all()):
        raise ValueError("X and Y must be finite")
    steps = check_count("n_steps", n_steps, minimum=0)
    lr_t = _per_member(lr, E, "lr", dtype, device)
    alpha_t = _per_member(alpha, E, "alpha", dtype, device)
    frozen = torch.as_tensor(last_layer_only, device=device)
    if frozen.dtype != torch.bool:
        raise ValueError(f"last_layer_only must be a bool or ({E},) bools, got {last_layer_only!r}")
    if frozen.ndim == 0:
        frozen = frozen.expand(E)
    if frozen.shape != (E,):
        raise ValueError(f"last_layer_only must be a bool or have shape ({E},)")
    weight_decay = check_nonneg_float("weight_decay", weight_decay)
    if batch_size is not None:
        if not (_is_int(batch_size) and 1 <= batch_size <= n):
            raise ValueError(f"batch_size must be an int in [1, {n}] or None, got {batch_size!r}")
        batch_size = int(batch_size)
        check_generator_on(generator, device, what="the ensemble")
    if record_every is None:
        record_every = max(1, steps // 50)
    record_every = check_count("record_every", record_every, minimum=1)
    if not isinstance(throw, bool):
        raise TypeError(f"throw must be a bool, got {throw!r}")
    if num_threads is not None:
        if not (_is_int(num_threads) and num_threads >= 1):
            raise ValueError(f"num_threads must be a positive int or None, got {num_threads!r}")
        num_threads = int(num_threads)
    previous = torch.get_num_threads()
    if num_threads is not None:
        torch.set_num_threads(num_threads)
    try:
        return _gd_loop(
            params,
            Xb,
            Yb / alpha_t[:, None, None],
            lr_t,
            frozen,
            weight_decay,
            steps,
            batch_size,
            generator,
            record_every,
            throw,
        )
    finally:
        if num_threads is not None:
            torch.set_num_threads(previous)


def _gd_loop(
    params, Xb, Yt, lr_t, frozen, weight_decay, steps, batch_size, generator, record_every, throw
) -> MLPTrainResult:
    E, n = Xb.shape[0], Xb.shape[1]
    dtype, device = Xb.dtype, Xb.device
    g, s_out = params.gain, params.output_scale
    init = params.detach_clone()
    ws = [w.detach().clone().requires_grad_(True) for w in params.weights]
    hidden_mask = (~frozen).to(dtype)[:, None, None]
    alive = torch.ones(E, dtype=dtype, device=device)
    diverged = torch.zeros(E, dtype=torch.bool, device=device)
    rec_steps, rec_loss = [], []
    ar = torch.arange(E, device=device)[:, None]

    def record(step):
        with torch.no_grad():
            rec_steps.append(step)
            rec_loss.append(_loss(ws, Xb, Yt, g, s_out).detach().clone())

    record(0)
    perm, pos = None, n
    for step in range(1, steps + 1):
        if batch_size is None:
            xb, yb = Xb, Yt
        else:
            if pos + batch_size > n:
                perm = torch.argsort(torch.rand((E, n), generator=generator, device=device), dim=1)
                pos = 0
            idx = perm[:, pos : pos + batch_size]
            pos += batch_size
            xb, yb = Xb[ar, idx], Yt[ar, idx]
        loss = _loss(ws, xb, yb, g, s_out)
        bad = ~torch.isfinite(loss)
        if throw and bool(bad.any()):
            raise DivergedError(f"train_mlp_ensemble: non-finite loss at step {step} in "
                                f"{member_list(bad)}; reduce lr or the input scale")
        diverged |= bad
        alive = alive * (~bad).to(dtype)
        grads = torch.autograd.grad(torch.where(bad, 0.0, loss).sum(), ws)
        with torch.no_grad():
            scale = (lr_t * alive)[:, None, None]
            for i, (w, gr) in enumerate(zip(ws, grads, strict=True)):
                upd = torch.nan_to_num(gr) + weight_decay * w
                if i < len(ws) - 1:
                    upd = upd * hidden_mask
                w -= scale * upd
        if step % record_every == 0 or step == steps:
            record(step)
    final = MLPParams(tuple(w.detach() for w in ws), g, s_out)
    hist = torch.stack(rec_loss)
    return MLPTrainResult(final, init, hist, torch.tensor(rec_steps), hist[-1], diverged, steps)
