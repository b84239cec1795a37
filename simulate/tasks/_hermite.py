"""Gaussian inputs with a Hermite target (seed 002, App. B.3 and App. F: the Fig. 2 task).

``x ~ N(0, I_d)`` and ``y(x) = He_m(w*.x)/sqrt(m!)`` with teacher direction ``w* = e_1``, so that
``E y^2 = 1`` (probabilists' Hermite polynomials).
"""

from __future__ import annotations

import math

import torch

from ..checks import check_alloc, check_float_dtype, check_generator_device, check_int

__all__ = ["hermite_target_data"]

# He_m(z)/sqrt(m!) for the supported degrees
_HERMITE = {
    1: lambda z: z,
    3: lambda z: (z**3 - 3 * z) / math.sqrt(6),
    5: lambda z: (z**5 - 10 * z**3 + 15 * z) / math.sqrt(120),
}


def hermite_target_data(P: int, d: int, *, generator: torch.Generator, degree: int = 3,
                        n_sets: int | None = None, device="cpu", dtype=torch.float64):
    """Gaussian inputs ``X ~ N(0, I)`` and targets ``He_degree(x_1)/sqrt(degree!)`` (teacher
    direction ``w* = e_1``; seed 002, App. B.3).  Shapes ``(P, d)``/``(P,)``, or
    ``(n_sets, P, d)``/``(n_sets, P)`` for one independent training set per chain.  Supported
    degrees: 1, 3, 5.  ``generator`` is the ``torch.Generator`` the inputs are drawn from.
    Inputs above 16 GiB raise ValueError."""
    P = check_int("P", P, minimum=1)
    d = check_int("d", d, minimum=2)
    if degree not in _HERMITE:
        raise ValueError(f"degree must be 1, 3 or 5, got {degree!r}")
    device = check_generator_device(generator, device)
    dtype = check_float_dtype(dtype)
    shape = (P, d) if n_sets is None else (check_int("n_sets", n_sets, minimum=1), P, d)
    check_alloc(f"P={P} with d={d}" + ("" if n_sets is None else f" and n_sets={shape[0]}"),
                math.prod(shape), itemsize=dtype.itemsize, what="the inputs X")
    X = torch.randn(shape, generator=generator, device=device, dtype=dtype)
    return X, _HERMITE[degree](X[..., 0])
