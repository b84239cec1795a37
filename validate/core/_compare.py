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

Implausible standard errors. Cases often widen a "rel" or "abs" tolerance by a few standard errors
(``3/N + 4 SE/|theory|``), and a "z" tolerance is a number of standard errors: an exploding SE
(damaged checkpoint, diverged chain) would pass any estimate. So a quantity of kind "z", "rel" or
"abs" does not pass when ``stderr > 0.5 · |theory| + 0.05`` (``SE_MAX_REL``, ``SE_MAX_ABS``: a
standard error of more than half the theory value, or 0.05 on a quantity whose theory value is 0,
says the estimate has no information at the scale being tested), whatever its tolerance; its
``note`` says so. A "gt" claim is exempt (a larger SE only makes it harder to pass). A non-finite
``stderr`` is rejected and a non-finite estimate never passes.

Mixing. A quantity estimated from Markov chains carries the convergence diagnostics of the
per-chain series it was computed from (``compare(..., mixing=...)``; see
:mod:`richlazy.validate._diagnostics`): rank-normalised split-R-hat ``rhat``, ``ess_bulk``,
``ess_tail`` and ``mixed = rhat <= RHAT_MAX`` (1.01). Quantities not estimated from chains
(deterministic, trained networks, independent draws, averages over independent chains) have
``None`` there.

Ergodicity class. A sampled quantity declares, from the theory, whether chains can be expected
to mix on it (``compare(..., ergodicity=..., reason=...)``, the reason one line):

* ``"mixing"``: the theory says the posterior is explored on the sampled time scale (the readout,
  a linear network's kernels, a code above its critical temperature). Its verdict needs the
  chains' diagnostics (``mixing=``): split-R-hat <= 1.01, as above.
* ``"frozen"``: the quantity depends on which metastable state a network sits in (sigmoid
  feature-layer codes and ReLU outlier identities below T_c: barriers O(P)). No chain crosses
  them, so R-hat can never certify it, and a chain average says nothing about the weights of the
  states. Its estimate must come from population annealing, whose diagnostics
  (:class:`Equilibration`: weight ESS at every stage, surviving families, agreement between
  independent populations) decide ``equilibrated``; without them it is not equilibrated.

Quantities with no class (``ergodicity=None``) are treated as ``"mixing"`` when they carry chain
diagnostics (the rule before classes were declared).

Case verdict (:func:`case_verdict`), first rule that applies:

1. ``"error"``: the case raised, or it compared no quantity;
2. ``"disagrees"``: a quantity failed that longer sampling cannot rescue: one neither sampled
   nor frozen (``mixed is None``) or one whose theory value is not finite (a theory that failed);
3. ``"not mixed"``: some quantity that is not frozen has ``mixed is False``: the chains it was
   estimated from have not converged to one distribution, so its value and standard error (and so
   agreement *or* disagreement) are not established;
4. ``"not equilibrated"``: some frozen quantity has ``equilibrated is False`` (its note names the
   failing diagnostic);
5. ``"agrees"``: every quantity passed;
6. ``"disagrees"``: some (mixed or equilibrated) quantity failed.

A case passes iff its verdict is ``"agrees"``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass

import numpy as np

from .._diagnostics import Mixing, chain_diagnostics

__all__ = ["Quantity", "Equilibration", "compare", "case_verdict", "max_rhat", "min_ess", "VERDICTS",
           "ERGODICITY", "SE_MAX_REL", "SE_MAX_ABS"]

#: the possible case verdicts (see the module doc for the rule)
VERDICTS = ("agrees", "disagrees", "not mixed", "not equilibrated", "error")

#: the ergodicity classes a sampled quantity declares (see the module doc)
ERGODICITY = ("mixing", "frozen")

_KINDS = ("z", "rel", "abs", "gt")

#: a standard error above SE_MAX_REL · |theory| + SE_MAX_ABS fails a "z", "rel" or "abs" quantity
SE_MAX_REL = 0.5
SE_MAX_ABS = 0.05


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
    rhat, ess_bulk, ess_tail : float or None
        Convergence diagnostics of the simulated series (rank-normalised split-R-hat, bulk and
        tail ESS over all chains; ESS NaN when undefined); None when not estimated from chains.
    mixed : bool or None
        ``rhat <= RHAT_MAX``; None when not estimated from chains.
    ergodicity : {"mixing", "frozen"} or None
        The declared ergodicity class (module doc); None when not declared.
    ergodicity_reason : str
        Why that class, from the theory (one line).
    equilibrated : bool or None
        Frozen quantities only: whether population annealing's diagnostics hold
        (:class:`Equilibration`); None otherwise.
    equilibration_note : str
        Frozen quantities: the failing diagnostic, or what was checked.
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
    rhat: float | None = None
    ess_bulk: float | None = None
    ess_tail: float | None = None
    mixed: bool | None = None
    ergodicity: str | None = None
    ergodicity_reason: str = ""
    equilibrated: bool | None = None
    equilibration_note: str = ""

    @property
    def frozen(self) -> bool:
        """Whether the quantity is declared frozen (its verdict rests on equilibration)."""
        return self.ergodicity == "frozen"

    @property
    def sampled(self) -> bool:
        """Whether the quantity carries chain diagnostics."""
        return self.rhat is not None

    def to_dict(self) -> dict:
        d = asdict(self)
        for key in ("theory", "simulation", "stderr", "z", "rel_error", "tolerance", "rhat",
                    "ess_bulk", "ess_tail"):
            v = d[key]
            if v is not None and not math.isfinite(v):
                d[key] = None if math.isnan(v) else (math.inf if v > 0 else -math.inf)
        return d

    @classmethod
    def from_dict(cls, d) -> Quantity:
        """The quantity a report.json entry describes (``to_dict`` as written: NaN as null,
        infinities as "inf"/"-inf"); ValueError naming the field when it is not one."""
        if not isinstance(d, dict):
            raise ValueError(f"a quantity must be a JSON object, got {type(d).__name__}")
        name = d.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"a quantity needs a non-empty string 'name', got {name!r}")
        if d.get("tolerance_kind") not in _KINDS:
            raise ValueError(f"quantity {name!r}: tolerance_kind must be one of {_KINDS}, got "
                             f"{d.get('tolerance_kind')!r}")
        for key in ("passed", "mixed"):
            if not isinstance(d.get(key), bool) and not (key == "mixed" and d.get(key) is None):
                raise ValueError(f"quantity {name!r}: {key} must be true or false, got {d.get(key)!r}")
        note = d.get("note", "")
        if not isinstance(note, str):
            raise ValueError(f"quantity {name!r}: note must be a string, got {note!r}")
        num = {k: _json_number(name, k, d.get(k)) for k in
               ("theory", "simulation", "stderr", "z", "rel_error", "tolerance", "rhat",
                "ess_bulk", "ess_tail")}
        for k in ("theory", "simulation", "tolerance"):  # never absent: null was a NaN
            num[k] = math.nan if num[k] is None else num[k]
        if num["rhat"] is not None and num["ess_bulk"] is None:
            num["ess_bulk"] = math.nan  # sampled, constant series ("n/a")
        if num["rhat"] is not None and num["ess_tail"] is None:
            num["ess_tail"] = math.nan
        erg = _ergodicity_fields(name, d)
        return cls(name, num["theory"], num["simulation"], num["stderr"], num["z"],
                   num["rel_error"], d["tolerance_kind"], num["tolerance"], d["passed"], note,
                   num["rhat"], num["ess_bulk"], num["ess_tail"], d.get("mixed"), **erg)


def _ergodicity_fields(name: str, d: dict) -> dict:
    """The ergodicity fields of a report.json quantity (absent in reports written before
    classes were declared: no class)."""
    erg, eq = d.get("ergodicity"), d.get("equilibrated")
    if erg is not None and erg not in ERGODICITY:
        raise ValueError(f"quantity {name!r}: ergodicity must be one of {ERGODICITY} or null, got {erg!r}")
    if eq is not None and not isinstance(eq, bool):
        raise ValueError(f"quantity {name!r}: equilibrated must be true, false or null, got {eq!r}")
    texts = {k: d.get(k, "") for k in ("ergodicity_reason", "equilibration_note")}
    for k, v in texts.items():
        if not isinstance(v, str):
            raise ValueError(f"quantity {name!r}: {k} must be a string, got {v!r}")
    return dict(ergodicity=erg, equilibrated=eq, **texts)


@dataclass(frozen=True)
class Equilibration:
    """The verdict of population annealing's diagnostics on a frozen quantity's estimate.

    equilibrated : bool
        Every diagnostic fixed before the run holds (weight ESS at every stage, surviving
        ancestral families, agreement between independent populations).
    diagnostic : str
        The failing diagnostic with its numbers when not equilibrated (what was checked
        otherwise).
    """

    equilibrated: bool
    diagnostic: str = ""

    def __post_init__(self):
        if not isinstance(self.equilibrated, (bool, np.bool_)):
            raise TypeError(f"equilibrated must be True or False, got {self.equilibrated!r}")
        if not isinstance(self.diagnostic, str):
            raise TypeError(f"diagnostic must be a str, got {type(self.diagnostic).__name__}")
        if not self.equilibrated and not self.diagnostic:
            raise ValueError("diagnostic must name the failing diagnostic when equilibrated is False")


_NO_ANNEALING = ("no population-annealing diagnostics: chains started from the prior keep the "
                 "metastable state they fell into, so their average does not weigh the states")


def _ergodicity(name: str, ergodicity, reason, mix, equilibration) -> dict:
    """The ergodicity fields of a new quantity, checked (ValueError/TypeError naming the
    argument)."""
    if ergodicity is None:
        if equilibration is not None:
            raise ValueError(f"equilibration is given for quantity {name!r} but ergodicity is not "
                             "'frozen'; declare ergodicity='frozen'")
        return {}
    if ergodicity not in ERGODICITY:
        raise ValueError(f"ergodicity must be one of {ERGODICITY} or None, got {ergodicity!r}")
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError(f"reason must say, in one line, why quantity {name!r} is {ergodicity!r}, "
                         f"got {reason!r}")
    out = dict(ergodicity=ergodicity, ergodicity_reason=reason.strip())
    if ergodicity == "mixing":
        if mix is None:
            raise ValueError(f"ergodicity='mixing' needs the chains' diagnostics (mixing=) for "
                             f"quantity {name!r}")
        if equilibration is not None:
            raise ValueError(f"equilibration is for frozen quantities; {name!r} is 'mixing'")
        return out
    if equilibration is None:
        return {**out, "equilibrated": False, "equilibration_note": _NO_ANNEALING}
    if not isinstance(equilibration, Equilibration):
        raise TypeError(f"equilibration must be an Equilibration, got {type(equilibration).__name__}")
    return {**out, "equilibrated": bool(equilibration.equilibrated),
            "equilibration_note": equilibration.diagnostic}


def _json_number(name: str, key: str, v) -> float | None:
    """A number of a report.json quantity: a JSON number, null, or "inf"/"-inf"."""
    if v is None:
        return None
    if v in ("inf", "-inf"):
        return float(v)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"quantity {name!r}: {key} must be a number, null or \"inf\", got {v!r}")
    return float(v)


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
    mixing=None,
    ergodicity: str | None = None,
    reason: str = "",
    equilibration: Equilibration | None = None,
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
    the quantity then does not pass. Nor does a "z", "rel" or "abs" quantity with an implausible
    standard error, ``stderr > 0.5 · |theory| + 0.05`` (``SE_MAX_REL``, ``SE_MAX_ABS``), whatever
    its tolerance (which may grow with the SE); ``note`` then says so.
    note : str
        Rationale for the tolerance.
    mixing : Mixing or array (S, E), optional
        Convergence diagnostics of the per-chain series the simulated value was estimated from:
        a scalar :class:`richlazy.validate.stats.Mixing`, or the series itself, S >= 4 draws of
        E >= 2 chains (diagnosed with :func:`richlazy.validate.stats.chain_diagnostics`). Fills
        ``rhat``, ``ess_bulk``, ``ess_tail`` and ``mixed``; leave None for quantities that are
        not estimated from chains. ``mixed`` does not change ``passed``; it enters the case
        verdict (:func:`case_verdict`). ValueError/TypeError naming ``mixing`` otherwise.
    ergodicity : {"mixing", "frozen"}, optional
        The quantity's ergodicity class from the theory (module doc), with ``reason`` (one line,
        required with a class). "mixing" needs ``mixing``; a "frozen" quantity's ``mixed`` does
        not enter the verdict.
    equilibration : Equilibration, optional
        Frozen quantities: population annealing's verdict on the estimate; without it the
        quantity is not equilibrated. Like ``mixed``, it enters the case verdict, not ``passed``.
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
    if _implausible_se(kind, theory, stderr):
        passed = False
        note = _se_note(note, theory, stderr)
    mix = _mixing(mixing, name)
    diag = {} if mix is None else dict(rhat=float(mix.rhat), ess_bulk=float(mix.ess_bulk),
                                       ess_tail=float(mix.ess_tail), mixed=bool(mix.mixed))
    diag.update(_ergodicity(name, ergodicity, reason, mix, equilibration))
    return Quantity(name, theory, simulation, stderr, z, rel, kind, float(tol), bool(passed), note,
                    **diag)


def _se_limit(theory: float) -> float:
    """The largest plausible standard error of an estimate of ``theory``."""
    return SE_MAX_REL * abs(theory) + SE_MAX_ABS


def _implausible_se(kind: str, theory: float, stderr: float | None) -> bool:
    """Whether ``stderr`` is too large for a "z", "rel" or "abs" verdict to mean anything."""
    if kind == "gt" or stderr is None or not math.isfinite(theory):
        return False
    return stderr > _se_limit(theory)


def _se_note(note: str, theory: float, stderr: float) -> str:
    why = (f"Failed: implausible standard error {stderr:.4g} > {SE_MAX_REL} |theory| + "
           f"{SE_MAX_ABS} = {_se_limit(theory):.4g}.")
    return f"{note} {why}" if note else why


def _mixing(mixing, name: str) -> Mixing | None:
    """``mixing`` of :func:`compare` as a scalar Mixing (or None)."""
    if mixing is None:
        return None
    if isinstance(mixing, Mixing):
        if mixing.shape:
            raise ValueError(f"mixing must describe one quantity, got a Mixing of shape "
                             f"{mixing.shape} for quantity {name!r} (index it: mixing[idx])")
        return mixing
    if isinstance(mixing, (str, bytes, bool, numbers.Number)):
        raise TypeError(f"mixing must be a Mixing or a per-chain series (S, E), got "
                        f"{type(mixing).__name__} for quantity {name!r}")
    if hasattr(mixing, "detach"):  # a torch tensor
        mixing = mixing.detach().cpu().double().numpy()
    arr = np.asarray(mixing)
    if arr.ndim != 2:
        raise ValueError(f"mixing must be a per-chain series of shape (S, E) (S draws of E chains), "
                         f"got shape {arr.shape} for quantity {name!r}")
    try:
        return chain_diagnostics(arr, layout="draw_chain")
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"mixing of quantity {name!r}: {exc}") from None


def case_verdict(quantities, error: str | None = None) -> str:
    """The verdict of a case from its compared ``quantities`` and its ``error`` (traceback or
    None): ``"error"``, ``"not mixed"``, ``"not equilibrated"``, ``"agrees"`` or ``"disagrees"``
    by the rule of the module doc (``mixed is False`` on a quantity that is not frozen makes a
    case ``"not mixed"``; ``equilibrated is False`` on a frozen one ``"not equilibrated"``;
    ``mixed is None``, a quantity not estimated from chains, never does)."""
    qs = list(quantities)
    for q in qs:
        if not isinstance(q, Quantity):
            raise TypeError(f"quantities must be Quantity records, got {type(q).__name__}")
    if error is not None or not qs:
        return "error"
    if any(not q.passed and ((q.mixed is None and not q.frozen) or not math.isfinite(q.theory))
           for q in qs):
        return "disagrees"
    if any(q.mixed is False and not q.frozen for q in qs):
        return "not mixed"
    if any(q.frozen and not q.equilibrated for q in qs):
        return "not equilibrated"
    return "agrees" if all(q.passed for q in qs) else "disagrees"


def max_rhat(quantities) -> float | None:
    """Largest R-hat over the sampled ``quantities`` (None when none is sampled)."""
    r = [q.rhat for q in quantities if q.rhat is not None]
    return max(r) if r else None


def min_ess(quantities) -> float | None:
    """Smallest bulk ESS over the sampled ``quantities`` (NaN values, constant quantities,
    ignored; None when none is defined)."""
    e = [q.ess_bulk for q in quantities if q.ess_bulk is not None and not math.isnan(q.ess_bulk)]
    return min(e) if e else None

