"""Comparison records: one theory-vs-simulation quantity with its tolerance and verdict.

Every quantity a validation case reports is a :class:`Quantity`. Four kinds of tolerance exist
and each quantity states which one decides ``passed``:

* ``"z"``: pass iff ``|theory - simulation| <= z_tol * stderr``, where ``stderr`` is the standard
  error of the simulated value (autocorrelation-aware; see :mod:`richlazy.validate.stats`). Used
  when the statistical error dominates.
* ``"rel"``: pass iff ``|theory - simulation| <= rel_tol * |theory|``. Used when a known systematic
  effect dominates (finite width N, finite temperature T, finite step size), with the tolerance
  stated in advance from the expected order of that effect.
* ``"abs"``: pass iff ``|theory - simulation| <= abs_tol`` (for quantities whose theory value is 0).
* ``"gt"``: a one-sided trend claim ("simulation exceeds theory"): pass iff
  ``simulation - theory >= tol * stderr``; ``theory`` is then the null value of the claim (e.g. 0
  for "lazy D_LR minus non-lazy D_LR is positive") and ``tol`` the required number of standard
  errors.

Both ``z`` and ``rel_error`` are always recorded when they are defined, so a reader sees the
statistical and the relative picture whatever decided the verdict.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["Quantity", "compare"]

_KINDS = ("z", "rel", "abs", "gt")


@dataclass(frozen=True)
class Quantity:
    """One compared quantity.

    Attributes
    ----------
    name : str
        What is compared, e.g. ``"U[0,0]"`` or ``"kernel block (c0,c1)"``.
    theory, simulation : float
        Theory prediction and simulated estimate.
    stderr : float or None
        Standard error of ``simulation`` (None when the simulation is deterministic).
    z : float or None
        ``(theory - simulation) / stderr``; None when ``stderr`` is None or 0.
    rel_error : float or None
        ``(simulation - theory) / |theory|``; None when ``theory == 0``.
    tolerance_kind : {"z", "rel", "abs", "gt"}
        Which criterion decides ``passed``.
    tolerance : float
        The threshold for that criterion.
    passed : bool
    note : str
        Why this tolerance (e.g. "finite-N bias O(1/N) with N=64").
    """

    name: str
    theory: float
    simulation: float
    stderr: float | None
    z: float | None
    rel_error: float | None
    tolerance_kind: str
    tolerance: float
    passed: bool
    note: str = ""

    def to_dict(self) -> dict:
        d = asdict(self)
        for key in ("theory", "simulation", "stderr", "z", "rel_error", "tolerance"):
            v = d[key]
            if v is not None and not math.isfinite(v):
                d[key] = None if math.isnan(v) else (math.inf if v > 0 else -math.inf)
        return d


def _real(arg: str, v) -> float:
    """``v`` as a float: Python or numpy real scalars, 0-d arrays and one-element tensors;
    bools, strings and complex numbers are rejected."""
    bad = isinstance(v, (bool, str, bytes, numbers.Complex)) and not isinstance(v, numbers.Real)
    if isinstance(v, (bool, np.bool_)) or bad or np.iscomplexobj(v):
        raise TypeError(f"{arg} must be a real number, got {v!r} ({type(v).__name__})")
    try:
        return float(v)
    except (TypeError, ValueError):
        raise TypeError(f"{arg} must be a real number, got {v!r} ({type(v).__name__})") from None


def compare(
    name: str,
    theory: float,
    simulation: float,
    *,
    stderr: float | None = None,
    kind: str = "z",
    tol: float,
    note: str = "",
) -> Quantity:
    """Build a :class:`Quantity` and decide ``passed`` with the stated tolerance.

    Parameters
    ----------
    name : str
    theory, simulation : float
    stderr : float, optional
        Finite and >= 0; required (and > 0) when ``kind`` is ``"z"`` or ``"gt"``. An infinite
        standard error is rejected (it would pass any difference).
    kind : {"z", "rel", "abs", "gt"}
    tol : float
        Finite threshold (> 0): number of standard errors ("z", "gt"), relative error or
        absolute error.

    Raises ValueError/TypeError naming the argument for an unknown ``kind``, a non-real,
    non-finite or non-positive ``tol``, a negative or non-finite ``stderr``, or a missing
    ``stderr`` for "z"/"gt". ``theory`` and ``simulation`` may be NaN or inf (a failed estimate);
    the quantity then does not pass.
    note : str
        Rationale for the tolerance.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty str, got {name!r}")
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
    # theory/simulation may be NaN or inf (a failed estimate): the quantity then fails.
    theory = _real("theory", theory)
    simulation = _real("simulation", simulation)
    tol = _real("tol", tol)
    if not (math.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a finite number > 0, got {tol!r}")
    if stderr is not None:
        stderr = _real("stderr", stderr)
        # an infinite (or NaN) standard error would make every z-test pass: reject it
        if not (math.isfinite(stderr) and stderr >= 0):
            raise ValueError(f"stderr must be >= 0 and finite (or None), got {stderr!r} for "
                             f"quantity {name!r}")
    if kind in ("z", "gt") and not stderr:
        raise ValueError(f"kind={kind!r} needs a positive stderr for quantity {name!r}, got {stderr!r}")
    if kind == "rel" and theory == 0.0:
        raise ValueError(f"kind='rel' needs a non-zero theory value for quantity {name!r}")
    diff = theory - simulation
    z = diff / stderr if stderr else None
    rel = (simulation - theory) / abs(theory) if theory != 0.0 else None
    if kind == "z":
        passed = abs(z) <= tol
    elif kind == "rel":
        passed = abs(rel) <= tol
    elif kind == "gt":
        passed = (simulation - theory) >= tol * stderr
    else:
        passed = abs(diff) <= tol
    if not (math.isfinite(theory) and math.isfinite(simulation)):
        passed = False
    return Quantity(name, theory, simulation, stderr, z, rel, kind, float(tol), bool(passed), note)
