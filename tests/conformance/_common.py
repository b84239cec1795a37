"""Shared pieces of the example tables (see _examples.py): the Example record and tiny data.

One small, valid example call per public callable of richlazy.theory, richlazy.simulate and
richlazy.validate, with the kind of each argument the conformance suite mutates.

An entry is keyed ``"<package>.<name>"`` (``"theory.nngp_kernel"``); methods of public classes
may be added as ``"<package>.<Class>.<method>"`` with a ``call``. ``make(tmp)`` returns the keyword
arguments of the valid call (fresh objects on every call; ``tmp`` is a scratch folder).
``kinds`` maps an argument name to one of the kinds of :data:`KINDS` (see test_public_api.py);
arguments not listed are never mutated. ``ex(make, "a b", c="kind")`` declares ``a`` and ``b`` with
their kind of :data:`DEFAULT_KINDS` (by argument name) and ``c`` with its own. ``accepted`` lists
(argument, mutation) pairs that are valid inputs by design, with the reason.

Sizes are tiny: every valid call runs in milliseconds to a few tenths of a second.
"""

from __future__ import annotations

import dataclasses
import gzip
import pathlib
from collections.abc import Callable

import numpy as np
import torch


@dataclasses.dataclass(frozen=True)
class Example:
    make: Callable[[pathlib.Path], dict]
    kinds: dict
    call: Callable | None = None
    accepted: dict = dataclasses.field(default_factory=dict)
    nan_ok: str = ""


# the kind an argument of this name has unless its example says otherwise (kind -> names)
_DEFAULT_KINDS_BY_KIND = dict(
    pos_int=(
        "batch_size block_rows C chunk d degree depth eval_every in_dim L m maxiter N n N0 n_batches "
        "n_bins n_classes n_ladders n_leapfrog n_members n_net n_nodes n_seeds n_steps n_tasks n_test "
        "n_train n_units P patch_size quad_nodes seeds threads width"
    ),
    nonneg_int="n_max n_random n_starts",
    count2="n_patches n_symbols",
    sign="readout_sign",
    pos_float=(
        "alpha alpha0 atol beta beta_target bound chi d_eff epsabs fd_step k kappa lam_target lr "
        "n_neurons overlap2 points_per_width q rho rkhs_norm_value rtol sigma_a2 sigma_w2 step_size "
        "y_norm2"
    ),
    nonneg_float="c11 c22 n_plus noise ridge sigma2 T tau var",
    nonpos_float="log_prior_prob",
    energy="energy",
    real="mean y_minus y_plus",
    prob="eps",
    prob_pos="target_accept",
    offdiag="c12",
    array="a dW samples W W0 x",
    vector="y_values",
    nonneg_array="K_diag weight",
    matrix="class_targets K_tilde t test_x train_x X1 X2 Y z1 z2",
    psd_matrix="K K0",
    features="features outputs",
    labels="labels train_y y",
    ratios="ratios",
    grid="h w_par y_minus_values z",
    nonneg_grid="D",
    tensor="symbols values X x_test",
    pos_tensor="gamma",
    theta="theta",
    choice="activation fn kernel method model name perp suite",
    callable="f",
    device="device",
    dtype="dtype",
    generator="generator",
    seed="seed",
)
DEFAULT_KINDS: dict[str, str] = {
    name: kind for kind, names in _DEFAULT_KINDS_BY_KIND.items() for name in names.split()
}


def ex(make, args: str = "", *, call=None, accepted=None, nan_ok="", **kinds) -> Example:
    """An example: ``args`` names (space-separated) the mutated arguments that have their default
    kind (:data:`DEFAULT_KINDS`); ``kinds`` gives the kind of the others (the exceptions)."""
    declared = {}
    for name in args.split():
        if name not in DEFAULT_KINDS:
            raise KeyError(f"{name!r} has no default kind: give it as {name}=<kind>")
        declared[name] = DEFAULT_KINDS[name]
    for name, kind in kinds.items():
        if name in declared:
            raise ValueError(f"{name!r} is given both in args and as {name}={kind!r}")
        if DEFAULT_KINDS.get(name) == kind:
            raise ValueError(f"{name}={kind!r} is the default kind: list {name!r} in args instead")
        declared[name] = kind
    return Example(make=make, kinds=declared, call=call, accepted=accepted or {}, nan_ok=nan_ok)


# --- shared tiny data -----------------------------------------------------------------------


def _rng(seed=0):
    return np.random.default_rng(seed)


def _g(seed=0):
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def _spd(n=4, seed=0):
    A = _rng(seed).standard_normal((n, n + 3))
    return A @ A.T / (n + 3) + 0.2 * np.eye(n)


def _X(N0=6, P=4, seed=0):
    return _rng(seed).standard_normal((N0, P))


def _Y(P=4, m=2):
    lab = np.arange(P) % m
    return np.eye(m)[lab]


RHO = (0.5, 0.25, 0.25)


def _toy_targets():
    from richlazy.theory import toy_class_targets

    return toy_class_targets(3, y_minus=-0.5)


def _lin_solution():
    from richlazy.theory import solve_linear_network

    return solve_linear_network(_spd(4), _Y(4, 2), L=1)


def _relu_toy():
    from richlazy.theory import solve_relu_toy

    return solve_relu_toy([0.5, 0.5], [[1.0], [-1.0]])


def _sig_toy():
    from richlazy.theory import solve_sigmoid_toy, toy_class_targets

    return solve_sigmoid_toy(RHO, toy_class_targets(3, y_minus=0.4), n_random=2)


def _task():
    from richlazy.simulate import orthogonal_toy_task

    return orthogonal_toy_task(6, 8, seed=0)


def _spec(**kw):
    from richlazy.simulate import NetworkSpec

    return NetworkSpec(N0=8, N=5, **kw)


def _posterior():
    from richlazy.simulate import NetworkPosterior

    t = _task()
    return NetworkPosterior(_spec(m=3), t.X, t.Y, T=0.1, sigma_a2=1.0)


def _erf_post():
    from richlazy.simulate import TwoLayerErfPosterior, hermite_target_data

    X, y = hermite_target_data(10, 4, generator=_g(0))
    return TwoLayerErfPosterior(X, y, N=3, kappa=0.5)


def _mlp():
    from richlazy.simulate import init_mlp_ensemble

    return init_mlp_ensemble(2, 3, 4, 1, generator=_g(1), dtype=torch.float64)


def _gamma_setup():
    from richlazy.simulate import sd_symbols, sd_test_batch, sd_train_batch

    S = sd_symbols(2, 3, 2, generator=_g(1))
    xt, yt = sd_test_batch(2, 8, 2, generator=_g(2))
    return (lambda g: sd_train_batch(S, 8, generator=g)), xt, yt


def _sd_pairs(n=6, d=3, seed=0):
    from richlazy.theory import sd_test_pairs

    return sd_test_pairs(n, d, sigma2=0.1, seed=seed)


def _idx_file(tmp: pathlib.Path) -> pathlib.Path:
    arr = np.arange(6, dtype=np.uint8).reshape(2, 3)
    header = bytes([0, 0, 0x08, arr.ndim]) + np.asarray(arr.shape, dtype=">u4").tobytes()
    path = tmp / "tiny-idx1-ubyte.gz"
    with gzip.open(path, "wb") as f:
        f.write(header + arr.tobytes())
    return path


def _report():
    from richlazy.validate import Report

    return Report(suite="quick", device="cpu", seed=0, created="2024-01-01T00:00:00", version="0", cases=[])


def _sweep():
    from richlazy.validate import RichnessSweep

    return RichnessSweep(
        knob="gamma", values=np.array([0.1, 1.0]), measure=np.array([[1.0, 2.0], [1.5, 2.5]])
    )


def _curves():
    from richlazy.validate import eigen_curves

    F = _rng(3).standard_normal((12, 4))
    return eigen_curves(F, F[:, :2], F[:, :2])


_TINY_CASE = "richness/zz-conformance-tiny"


def _with_tiny_case(fn):
    """``fn`` run with a trivial case registered (the registry is restored afterwards)."""

    def call(**kw):
        from richlazy.validate import CaseOutcome, compare, register_case
        from richlazy.validate.core import _registry

        with _registry._CASES.scratch():  # case modules register into the real registry first
            register_case(_TINY_CASE, description="conformance fixture", suites=("quick",))(
                lambda ctx: CaseOutcome([compare("x", 1.0, 1.05, stderr=0.1, tol=3.0)])
            )
            return fn(**kw)

    return call


def _chernoff_cgf(t):
    return 0.5 * np.asarray(t) ** 2
