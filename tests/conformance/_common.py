"""Shared pieces of the example tables (see _examples.py): the Example record and tiny data.

One small, valid example call per public callable of richlazy.theory, richlazy.simulate and
richlazy.validate, with the kind of each argument the conformance suite mutates.

An entry is keyed ``"<package>.<name>"`` (``"theory.nngp_kernel"``); methods of public classes
may be added as ``"<package>.<Class>.<method>"`` with a ``call``. ``make(tmp)`` returns the keyword
arguments of the valid call (fresh objects on every call; ``tmp`` is a scratch folder).
``kinds`` maps an argument name to one of the kinds of :data:`KINDS` (see test_public_api.py);
arguments not listed are never mutated. ``accepted`` lists (argument, mutation) pairs that are
valid inputs by design, with the reason.

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


def ex(make, *, call=None, accepted=None, nan_ok="", **kinds) -> Example:
    return Example(make=make, kinds=kinds, call=call, accepted=accepted or {}, nan_ok=nan_ok)


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

        _registry.all_cases()  # case modules register into the real registry, not the copy
        saved = _registry._REGISTRY
        _registry._REGISTRY = dict(saved)
        try:
            register_case(_TINY_CASE, description="conformance fixture", suites=("quick",))(
                lambda ctx: CaseOutcome([compare("x", 1.0, 1.05, stderr=0.1, tol=3.0)])
            )
            return fn(**kw)
        finally:
            _registry._REGISTRY = saved

    return call


def _chernoff_cgf(t):
    return 0.5 * np.asarray(t) ** 2
