"""Structured training step of the γ-MLP on the noise-free same-different task, and the
published evaluation protocol of seed 003 beside richlazy's own.

Structured step (seed 003 §2 with σ² = 0, App. G.1-G.2). A training input is x = (s_u; s_v)
with u, v indices into the member's L fixed symbols S (L, d). Split every first-layer weight
into its two slots, W = [W¹ | W²] (each m × d); then every pre-activation of the batch is

    h_b = W¹ s_{u_b} + W² s_{v_b} = P¹[:, u_b] + P²[:, v_b],    Pᵏ = Wᵏ Sᵀ  (m × L),

and the hidden-weight gradient ∂L/∂w_i = a_i Σ_b G_bi x_b (G_bi = g_b φ'(h_bi), see
``_gamma_mlp._bce_backward``) collapses onto per-symbol sums,

    ∂L/∂Wᵏ = a ⊙ (Aᵏ S),   A¹_il = Σ_{b: u_b = l} G_bi,   A²_il = Σ_{b: v_b = l} G_bi,

accumulated by ``index_add`` in O(B·m). When L² <= B the batch holds at most L² distinct pairs:
the step then evaluates the grid of all L² ordered pairs once, h_uv = P¹_u + P²_v, weights each
pair's loss term by how often it was drawn (c_uv; the label is u = v), and sums the grid rows and
columns into A¹, A² (O(L²·m) instead of O(B·m)). W0 and ΔW are kept apart as in the dense trainer
(centred output from Δh, lazy-limit safe in float32): the W0 tables P0ᵏ = W0ᵏ Sᵀ are computed
once, and the ΔW tables one of two ways:

* ``"gram"``: ΔW stays in the span of the symbols, ΔWᵏ = Cᵏ S with coefficients C (m × L)
  updated by C ← C − α a ⊙ Aᵏ; the tables are ΔPᵏ = Cᵏ K with the Gram matrix K = S Sᵀ.
  Cost per step O(m L²) + O(B m), independent of d. ΔW = C S is formed only to evaluate.
* ``"slots"``: ΔW is stored (as the dense trainer does) and updated by ΔWᵏ ← ΔWᵏ − α a ⊙ (Aᵏ S);
  the tables ΔPᵏ = ΔWᵏ Sᵀ are recomputed every step. Cost per step O(m L d) + O(B m).

The dense step costs O(B m d) (three products of B × 2d inputs with m × 2d weights). With
``method="auto"`` the cheapest of 2L² (gram), 4Ld (slots) and 6Bd (dense) multiply-adds per unit
is used. All three follow the same trajectory as :func:`train_gamma_mlp` with a
:func:`~richlazy.simulate.sd_train_batch` closure: the same generator draws in the same order,
hence the same batches; results agree to floating-point rounding. With σ² > 0 the inputs are no
longer functions of (u, v) and ``method="auto"`` falls back to the dense step.

Protocols (seed 003 App. G.1 says "select the best test accuracy from the model's history"):

* ``"richlazy"``: a fixed test set (x_test, y_test), evaluated at step 0 and every
  ``eval_every`` (default 100) steps; init w ~ N(0, I/m), a ~ N(0, 1/m); exactly balanced
  training batches.
* ``"published"``: what the authors' experiment code does: a freshly drawn batch of ``n_test``
  (default 1024) fresh-symbol test pairs with Bernoulli(½) labels at every evaluation, every
  ``eval_every`` (default 1000) steps and after the last (no step-0 evaluation); first-layer
  weights from a normal of nominal std 1/√m truncated at ±2 std without variance correction
  (actual std 0.8796/√m), readouts from a ±2 std truncated normal rescaled to variance exactly
  1/m; training labels i.i.d. Bernoulli(½). Its "best" is the maximum over evaluations of
  different test batches, so it is biased upward by the evaluation noise.
"""

from __future__ import annotations

import math

import torch

from ..checks import (
    check_alloc,
    check_float_dtype,
    check_generator,
    check_int,
    check_nonneg_float,
    check_pos_float,
    renamed_argument,
    same_device,
)
from ..tasks._pairs import member_counts, pair_indices
from ..tasks._same_different import check_symbols, sd_batch_from_indices, sd_test_batch
from ._gamma_mlp import (
    GammaMLPResult,
    _bce_backward,
    _centred_from_preacts,
    _check_weight_sizes,
    _check_x_test,
    _check_y_test,
    _fixed_test_evaluator,
    _initial_params,
    _loss_and_grads,
    _make_result,
    _member_gamma,
    _sgd_loop,
    gamma_learning_rate,
    gamma_mlp_output,
    init_gamma_mlp,
)

__all__ = ["init_gamma_mlp_published", "train_gamma_mlp_sd", "truncated_normal", "truncated_normal_std"]

PROTOCOLS = ("richlazy", "published")
METHODS = ("auto", "gram", "slots", "dense")


def _choice(name: str, value, options) -> str:
    if not (isinstance(value, str) and value in options):
        raise ValueError(f"{name} must be one of {options}, got {value!r}")
    return value


def truncated_normal_std(bound: float = 2.0) -> float:
    """Standard deviation of N(0, 1) conditioned on |z| <= b:

        √(1 − 2 b φ(b) / (2Φ(b) − 1)),   φ the standard normal density (0.879626 for b = 2).
    """
    b = check_pos_float("bound", bound)
    mass = math.erf(b / math.sqrt(2.0))  # 2Φ(b) − 1
    return math.sqrt(1.0 - 2.0 * b * math.exp(-0.5 * b * b) / math.sqrt(2.0 * math.pi) / mass)


def _shape(size) -> tuple[int, ...]:
    if isinstance(size, (list, tuple, torch.Size)):
        return tuple(check_int("size", s, minimum=0) for s in size)
    return (check_int("size", size, minimum=0),)


def _truncated_normal64(shape, bound: float, generator) -> torch.Tensor:
    """float64 draws of N(0, 1) | |z| <= bound by the inverse CDF: z = Φ⁻¹(Φ(−b) + (1 − 2Φ(−b)) u)."""
    p_lo = 0.5 * math.erfc(bound / math.sqrt(2.0))
    u = torch.rand(shape, generator=generator, device=generator.device, dtype=torch.float64)
    z = torch.special.ndtri(u.mul_(1.0 - 2.0 * p_lo).add_(p_lo))
    return z.clamp_(-bound, bound)


def truncated_normal(size, *, generator, bound: float = 2.0, dtype=torch.float32) -> torch.Tensor:
    """Standard normal draws truncated to [−bound, bound] (not rescaled: their std is
    :func:`truncated_normal_std`), by the inverse CDF from one uniform per entry of the explicit
    ``generator`` (drawn in float64, on the generator's device, then cast to ``dtype``)."""
    g = check_generator(generator)
    shape = _shape(size)
    b = check_pos_float("bound", bound)
    dtype = check_float_dtype(dtype)
    return _truncated_normal64(shape, b, g).to(dtype)


def init_gamma_mlp_published(n_members: int, in_dim: int, width: int, *, generator,
                             dtype=torch.float32):
    """Initial weights (W0 (E, m, D), a0 (E, m)) of the published experiment code of seed 003:

    W0 = z/√m with z ~ N(0, 1) truncated at ±2 (no variance correction: std 0.8796/√m, support
    ±2/√m); a0 = z/(c√m) with c = :func:`truncated_normal_std` (2) (variance exactly 1/m, support
    ±2/(c√m)). App. G.1 prints w ~ N(0, I/m), a ~ N(0, 1/m), which is richlazy's
    :func:`~richlazy.simulate.init_gamma_mlp`. W0 is drawn before a0, both in float64. Sizes
    whose float64 draws exceed 16 GiB raise ValueError.
    """
    E = check_int("n_members", n_members, minimum=1)
    D = check_int("in_dim", in_dim, minimum=1)
    m = check_int("width", width, minimum=1)
    g = check_generator(generator)
    dtype = check_float_dtype(dtype)
    _check_weight_sizes(E, D, m, 8, copies=3)
    c = truncated_normal_std(2.0)
    W0 = _truncated_normal64((E, m, D), 2.0, g).div_(math.sqrt(m))
    a0 = _truncated_normal64((E, m), 2.0, g).div_(c * math.sqrt(m))
    return W0.to(dtype), a0.to(dtype)


def _pick_method(method: str, sigma2: float, L: int, d: int, B: int) -> str:
    """The step to use: ``method`` unless "auto", else the cheapest by multiply-adds per unit."""
    if sigma2 > 0:
        if method in ("gram", "slots"):
            raise ValueError(f"sigma2 = {sigma2} > 0: noisy inputs are not functions of the symbol "
                             f"indices, so method={method!r} cannot be used; use method='auto' or "
                             "'dense' (the dense step)")
        return "dense"
    if method != "auto":
        return method
    costs = {"gram": 2 * L * L, "slots": 4 * L * d, "dense": 6 * B * d}
    return min(costs, key=costs.get)


class _DenseSD:
    """The dense step of :func:`train_gamma_mlp` on SD batches (same draws as sd_train_batch)."""

    def __init__(self, W0, a0, s, lr, symbols, n, B, labels, sigma2, g, dtype):
        E, m, _ = W0.shape
        self.Wcat = torch.cat([W0, torch.zeros_like(W0)], dim=1)
        self.W0, self.dW = self.Wcat[:, :m], self.Wcat[:, m:]
        self.a0, self.da, self.s, self.lr = a0, torch.zeros_like(a0), s, lr
        self.symbols, self.n, self.B, self.labels, self.sigma2, self.g = symbols, n, B, labels, sigma2, g
        self.dtype = dtype

    def step(self, record):
        E = self.n.shape[0]
        u, v, y = pair_indices(self.n, E, self.B, self.g, self.symbols.device, self.labels)
        x, y = sd_batch_from_indices(self.symbols, u, v, y, self.sigma2, self.g)
        loss, _f, grad_a, grad_W = _loss_and_grads(x.to(self.dtype), y.to(self.dtype), self.W0,
                                                   self.a0, self.dW, self.da, self.s, Wcat=self.Wcat,
                                                   with_loss=record)
        self.da.sub_(self.lr[:, None] * grad_a)
        self.dW.sub_(self.lr[:, None, None] * grad_W)
        return loss

    def delta_W(self):
        return self.dW

    def params(self):
        return self.da, self.dW


class _StructuredSD:
    """The structured step ("gram" or "slots", see the module docstring)."""

    def __init__(self, W0, a0, s, lr, S, n, B, labels, g, method):
        E, L, d = S.shape
        m = W0.shape[1]
        self.E, self.L, self.d, self.m, self.B = E, L, d, m, B
        self.a0, self.da, self.s, self.lr = a0, torch.zeros_like(a0), s, lr
        self.n, self.labels, self.g, self.method = n, labels, g, method
        self.S4 = S[:, None]  # (E, 1, L, d): broadcast over the two slots
        # tables of the initial weights, row k·L + l of member e: W0ᵏ s_l (m values)
        W0s = W0.reshape(E, m, 2, d).permute(0, 2, 1, 3)  # (E, 2, m, d): the two slots
        self.Q0 = torch.matmul(self.S4, W0s.transpose(-1, -2)).reshape(E * 2 * L, m)
        self.base = (torch.arange(E, device=S.device) * (2 * L))[:, None]
        # few symbols: evaluate the grid of all L² pairs once, weighted by their batch counts
        self.grid = L * L <= B
        if self.grid:
            self.pair_base = (torch.arange(E, device=S.device) * (L * L))[:, None]
            eye = torch.eye(L, device=S.device, dtype=S.dtype).reshape(1, L * L)
            self.y_grid = eye.expand(E, L * L).contiguous()  # "same" iff u = v (noise-free)
        if method == "gram":
            self.K = torch.matmul(self.S4, self.S4.transpose(-1, -2))  # (E, 1, L, L)
            self.C = torch.zeros(E, 2, L, m, device=S.device, dtype=S.dtype)  # ΔWᵏ = Cᵏᵀ S
        else:
            self.dWs = torch.zeros(E, 2, m, d, device=S.device, dtype=S.dtype)

    def _delta_tables(self):
        """ΔW tables (E·2L, m): row k·L + l of member e holds ΔWᵏ s_l."""
        if self.method == "gram":
            dQ = torch.matmul(self.K, self.C)
        else:
            dQ = torch.matmul(self.S4, self.dWs.transpose(-1, -2))
        return dQ.reshape(self.E * 2 * self.L, self.m)

    def step(self, record):
        E, B = self.E, self.B
        u, v, y = pair_indices(self.n, E, B, self.g, self.S4.device, self.labels)
        dQ = self._delta_tables()
        if self.grid:
            A, grad_a, loss = self._grid_grads(u, v, dQ, record)
        else:
            A, grad_a, loss = self._batch_grads(u, v, y, dQ, record)
        # α a_i A_il with the readouts before this step's update (as in the dense step)
        A.mul_((self.lr[:, None] * (self.a0 + self.da))[:, None, None, :])
        self.da.sub_(self.lr[:, None] * grad_a)
        if self.method == "gram":
            self.C.sub_(A)
        else:
            self.dWs.sub_(torch.matmul(A.transpose(-1, -2), self.S4))
        return loss

    def _batch_grads(self, u, v, y, dQ, record):
        """Per-example evaluation: gather the B pre-activations, scatter G into symbol sums."""
        E, L, m, B = self.E, self.L, self.m, self.B
        i1 = (self.base + u).reshape(-1)
        i2 = (self.base + (v + L)).reshape(-1)
        h0 = self.Q0.index_select(0, i1).add_(self.Q0.index_select(0, i2)).view(E, B, m)
        dh = dQ.index_select(0, i1).add_(dQ.index_select(0, i2)).view(E, B, m)
        f, _h, phi = _centred_from_preacts(h0, dh, self.a0, self.da, self.s)
        loss, grad_a, G = _bce_backward(f, phi, y.to(f.dtype), self.s, with_loss=record)
        Gf = G.view(E * B, m)
        A = torch.zeros(E * 2 * L, m, device=Gf.device, dtype=Gf.dtype)
        A.index_add_(0, i1, Gf).index_add_(0, i2, Gf)
        return A.view(E, 2, L, m), grad_a, loss

    def _grid_grads(self, u, v, dQ, record):
        """All L² ordered pairs (u, v) at once, weighted by how often each occurs in the batch
        (used when L² <= B): h_uv = P¹_u + P²_v, A¹_u = Σ_v G_uv, A²_v = Σ_u G_uv."""
        E, L, m, B = self.E, self.L, self.m, self.B
        flat = (self.pair_base + u * L + v).reshape(-1)
        counts = torch.zeros(E * L * L, device=flat.device, dtype=self.s.dtype)
        counts.index_add_(0, flat, torch.ones_like(flat, dtype=counts.dtype))
        Q0 = self.Q0.view(E, 2, L, m)
        dQ = dQ.view(E, 2, L, m)
        h0 = (Q0[:, 0, :, None] + Q0[:, 1, None]).view(E, L * L, m)
        dh = (dQ[:, 0, :, None] + dQ[:, 1, None]).view(E, L * L, m)
        f, _h, phi = _centred_from_preacts(h0, dh, self.a0, self.da, self.s)
        loss, grad_a, G = _bce_backward(f, phi, self.y_grid, self.s, with_loss=record,
                                        counts=counts.view(E, L * L), batch=B)
        G = G.view(E, L, L, m)
        return torch.stack([G.sum(2), G.sum(1)], dim=1), grad_a, loss

    def delta_W(self):
        """ΔW (E, m, 2d) = [ΔW¹ | ΔW²]."""
        dWs = torch.matmul(self.C.transpose(-1, -2), self.S4) if self.method == "gram" else self.dWs
        return dWs.permute(0, 2, 1, 3).reshape(self.E, self.m, 2 * self.d)

    def params(self):
        return self.da, (self.C if self.method == "gram" else self.dWs)


def _published_evaluator(E, n_test, d, sigma2, eval_gen, W0, a0, stepper, gam, d_eff, eval_chunk, dtype):
    """evaluate() on a fresh batch of n_test fresh-symbol pairs (Bernoulli(½) labels) per call."""
    g = gam.to(W0.device, dtype)

    def evaluate():
        xt, yt = sd_test_batch(E, n_test, d, sigma2=sigma2, generator=eval_gen, device=W0.device,
                               dtype=dtype, labels="bernoulli")
        f = gamma_mlp_output(xt, W0, a0, stepper.delta_W(), stepper.da, g, d_eff, chunk=eval_chunk)
        is_same = yt > 0.5
        correct = ((f > 0) == is_same).to(dtype)
        return correct.mean(1), correct, is_same

    return evaluate


@renamed_argument(steps="n_steps")
def train_gamma_mlp_sd(
    symbols: torch.Tensor,
    x_test: torch.Tensor | None,
    y_test: torch.Tensor | None,
    gamma,
    *,
    n_symbols=None,
    batch_size: int = 128,
    d_eff: float | None = None,
    width: int = 1024,
    alpha0: float = 0.1,
    n_steps: int = 2000,
    eval_every: int | None = None,
    n_test: int | None = None,
    sigma2: float = 0.0,
    protocol: str = "richlazy",
    method: str = "auto",
    generator: torch.Generator,
    dtype=torch.float32,
    eval_chunk: int = 2048,
    init=None,
    throw: bool = False,
) -> GammaMLPResult:
    """Train E centred γ-MLPs (seed 003 Eq. 1, App. F, G.1) on same-different batches drawn from
    each member's fixed symbols (§2, App. G.2), with the structured step for σ² = 0.

    ``symbols`` (E, L_max, d) (e.g. :func:`~richlazy.simulate.sd_symbols`), ``n_symbols`` (E,)
    the L_e <= L_max symbols member e uses (default all). Each step draws one batch of
    ``batch_size`` pairs per member exactly as :func:`~richlazy.simulate.sd_train_batch` (same
    generator draws, same order) and applies SGD on the BCE of the centred output
    f̃ = (1/(γ√d)) Σ_i [a_i φ(w_i·x) − a0_i φ(w0_i·x)] with α = γ² d α₀ (γ <= 1), γ√d α₀ (γ > 1).

    ``method``: "auto" (default: the cheapest step, dense when σ² > 0), "gram", "slots" (the
    structured steps; ValueError when σ² > 0) or "dense" (the step of :func:`train_gamma_mlp`);
    see the module docstring for the formulas and costs. With ``protocol="richlazy"`` the run
    follows the trajectory of :func:`train_gamma_mlp` with the closure
    ``lambda g: sd_train_batch(symbols, batch_size, n_symbols=..., sigma2=..., generator=g)`` to
    floating-point rounding, whatever the method.

    ``protocol``: "richlazy" — evaluate the fixed test set ``x_test`` (E, n, 2d), ``y_test`` (E, n)
    at step 0 and every ``eval_every`` (default 100) steps; ``n_test`` must be None. "published"
    — the authors' code: ``x_test`` and ``y_test`` must be None; a fresh batch of ``n_test``
    (default 1024) fresh-symbol pairs with Bernoulli(½) labels every ``eval_every`` (default
    1000) steps and after the last; truncated-normal init (:func:`init_gamma_mlp_published`);
    Bernoulli(½) training labels. Its test batches come from a stream seeded by one draw from
    ``generator`` after the initialisation, so the training trajectory does not depend on
    ``eval_every``. ``init = (W0, a0)`` replaces either protocol's initialisation.

    ``d_eff`` defaults to d (the SD convention). Divergence handling (``throw``) and the result
    are those of :func:`train_gamma_mlp` (``result.protocol`` and ``result.method`` say what ran),
    and so is the bound on ``width``; a ``batch_size`` whose step arrays exceed 16 GiB raises
    ValueError.
    """
    dev = check_generator(generator).device
    dtype = check_float_dtype(dtype)
    if not isinstance(throw, bool):
        raise TypeError(f"throw must be a bool, got {throw!r}")
    protocol = _choice("protocol", protocol, PROTOCOLS)
    method = _choice("method", method, METHODS)
    E, Lmax, d = check_symbols(symbols)
    if not same_device(symbols.device, dev):
        raise ValueError(f"symbols must be on the generator's device {dev}, got {symbols.device}")
    B = check_int("batch_size", batch_size, minimum=2)
    sigma2 = check_nonneg_float("sigma2", sigma2)
    n = member_counts("n_symbols", n_symbols, E, Lmax, 2, dev)
    if protocol == "richlazy":
        if n_test is not None:
            raise ValueError(f"n_test={n_test!r} applies to protocol='published' (a fresh test batch "
                             "of n_test pairs per evaluation); protocol='richlazy' evaluates the "
                             "given x_test, y_test: pass n_test=None")
        E_t, _, D_t = _check_x_test(x_test)
        if E_t != E or D_t != 2 * d:
            raise ValueError(f"x_test must have shape (E, n, 2d) = ({E}, n, {2 * d}) to match symbols, "
                             f"got {tuple(x_test.shape)}")
        _check_y_test(y_test, x_test, dev)
        eval_every = 100 if eval_every is None else eval_every
    else:
        if x_test is not None or y_test is not None:
            raise ValueError("x_test and y_test must be None with protocol='published' (it draws a "
                             "fresh test batch at every evaluation); use protocol='richlazy' to "
                             "evaluate a fixed test set")
        eval_every = 1000 if eval_every is None else eval_every
        n_test = check_int("n_test", 1024 if n_test is None else n_test, minimum=2)
    gam = _member_gamma(gamma, E)
    d_eff = float(d) if d_eff is None else check_pos_float("d_eff", d_eff)
    alpha0 = check_pos_float("alpha0", alpha0)
    alpha = gamma_learning_rate(gam, d_eff, alpha0)
    m = check_int("width", width, minimum=1)
    _check_weight_sizes(E, 2 * d, m, dtype.itemsize, copies=6)
    check_alloc(f"batch_size={B} with n_members={E} and width={m}", E * B * (6 * m + 4 * d + 8),
                itemsize=8, what="one step's (E, batch_size, width) activations and the batch")
    steps = check_int("n_steps", n_steps, minimum=1)
    eval_every = check_int("eval_every", eval_every, minimum=1)
    eval_chunk = check_int("eval_chunk", eval_chunk, minimum=1)
    method = _pick_method(method, sigma2, Lmax, d, B)

    published = protocol == "published"
    W0, a0 = _initial_params(init, E, 2 * d, m, generator=generator, dtype=dtype,
                             init_fn=init_gamma_mlp_published if published else init_gamma_mlp)
    s = (1.0 / (gam * math.sqrt(d_eff))).to(device=dev, dtype=dtype)
    lr = alpha.to(device=dev, dtype=dtype)
    labels = "bernoulli" if published else "balanced"
    if method == "dense":
        stepper = _DenseSD(W0, a0, s, lr, symbols, n, B, labels, sigma2, generator, dtype)
    else:
        stepper = _StructuredSD(W0, a0, s, lr, symbols.to(dtype), n, B, labels, generator, method)

    if published:
        seed = int(torch.randint(0, 2**62, (1,), generator=generator, device=dev).item())
        eval_gen = torch.Generator(device=dev).manual_seed(seed)
        evaluate = _published_evaluator(E, n_test, d, sigma2, eval_gen, W0, a0, stepper, gam, d_eff,
                                        eval_chunk, dtype)
    else:
        evaluate = _fixed_test_evaluator(x_test, y_test, W0, a0, stepper.delta_W, stepper.da, gam,
                                         d_eff, eval_chunk, dtype)
    hist = _sgd_loop(stepper.step, evaluate, stepper.params, E=E, steps=steps, eval_every=eval_every,
                     eval_at_start=not published, throw=throw, who="train_gamma_mlp_sd", dev=dev,
                     dtype=dtype)
    return _make_result(hist, W0, a0, stepper.delta_W(), stepper.da, gam, alpha, d_eff, alpha0, steps,
                        protocol=protocol, method=method)
