"""Cases as declarations: what a case compares, stated as data.

A declared case states, on one screen,

* its **sizes**: :class:`Sizes`, a ``quick`` and a ``full`` instance of one frozen dataclass whose
  annotated fields are the case's typed parameters (checked when the case is declared); a case
  that samples with :func:`~richlazy.validate.recipes.sample_posterior` extends
  :class:`ChainBudget`, the sampler's temperature, step and run lengths;
* its **theory**: ``theory(ctx, cfg) -> object``, the solver calls (left out when the theory
  values are stated in the rows or computed with the simulation: ``run.theory`` is then None);
* its **simulation**: ``simulation(ctx, cfg, theory) -> object``, the sampler or trainer run
  (usually a recipe of :mod:`richlazy.validate.recipes`);
* its **compared quantities**: a tuple of :class:`Compared` rows, each a name, the theory value,
  the estimate and the rule that turns them into a :class:`~richlazy.validate.Quantity`
  (tolerance kind and size, ergodicity class), optionally repeated over an index set;
* optionally its **figures** (``figures(run)``: drawn through ``run.ctx.figure``, or written into
  ``run.ctx.out_dir`` and their file names returned), **notes** (``notes(run) -> str``) and
  **extra parameters** for the report (``params(run) -> dict``, after the configuration's).

:func:`declare_case` registers the declaration under its name like
:func:`~richlazy.validate.register_case` and returns it. The runner calls it with a
:class:`~richlazy.validate.CaseContext`; it evaluates theory, then simulation, then the
compared rows in their declared order, then the figures and notes (:class:`CaseRun` carries
``ctx``, ``cfg``, ``theory`` and ``simulation`` between them).
"""

from __future__ import annotations

import dataclasses
import numbers
import sys
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ._compare import Quantity
from ._registry import SUITES, CaseContext, CaseOutcome, register_case

__all__ = ["Sizes", "ChainBudget", "Compared", "CaseRun", "CaseDeclaration", "declare_case"]


def _field_ok(value, hint) -> bool:
    """Whether ``value`` has the annotated type ``hint`` (int, float (ints accepted), str, bool,
    a tuple of them, or ``X | None``)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return any(_field_ok(value, a) for a in args)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_field_ok(v, args[0]) for v in value)
        return len(args) == len(value) and all(_field_ok(v, a) for v, a in zip(value, args, strict=True))
    if hint is tuple:
        return isinstance(value, tuple)
    raise TypeError(f"unsupported parameter annotation {hint!r} (use int, float, str, bool, tuples "
                    "of them or X | None)")


@dataclass(frozen=True)
class Sizes:
    """A case's two configurations: ``quick`` (the quick suite, minutes on a CPU) and ``full``
    (the full suite, paper sizes), instances of the same frozen dataclass whose fields are typed
    with int, float, str, bool, tuples of them or ``X | None``. TypeError when the two differ in
    class or a field's value does not have its annotated type."""

    quick: object
    full: object

    def __post_init__(self):
        for size in SUITES:
            cfg = getattr(self, size)
            if not dataclasses.is_dataclass(cfg) or isinstance(cfg, type):
                raise TypeError(f"Sizes.{size} must be a dataclass instance, got {cfg!r}")
        if type(self.quick) is not type(self.full):
            raise TypeError(f"Sizes.quick and Sizes.full must be instances of one class, got "
                            f"{type(self.quick).__name__} and {type(self.full).__name__}")
        hints = typing.get_type_hints(type(self.quick))
        for size in SUITES:
            cfg = getattr(self, size)
            for f in dataclasses.fields(cfg):
                value = getattr(cfg, f.name)
                if not _field_ok(value, hints[f.name]):
                    raise TypeError(f"Sizes.{size}.{f.name} must be {hints[f.name]}, got {value!r}")

    def __getitem__(self, size: str):
        if size not in SUITES:
            raise ValueError(f"size must be one of {SUITES}, got {size!r}")
        return getattr(self, size)

    def params(self, size: str) -> dict:
        """The configuration of ``size`` as a plain dict (field order), for the report."""
        cfg = self[size]
        return {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)}


@dataclass(frozen=True)
class ChainBudget:
    """The Langevin (or Gibbs) run of a case that samples the network posterior, the base of its
    size dataclass: rescaled temperature ``T`` (seed 000's T -> T/N), step size ``dt`` (unused by
    the exact Gibbs sweep), ``n_chains`` independent chains of ``n_steps`` steps each, the first
    ``burn_in`` discarded and every ``thin``-th kept. A subclass adds the case's own fields after
    these (dataclass inheritance), so they come first in the report's parameters."""

    T: float
    dt: float
    n_chains: int
    n_steps: int
    burn_in: int
    thin: int

    def chain_options(self) -> dict:
        """``T, dt, n_chains, n_steps, burn_in, thin`` as keyword arguments of
        :func:`~richlazy.validate.recipes.sample_posterior`."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(ChainBudget)}


@dataclass(frozen=True)
class CaseRun:
    """What the stages of a declared case share: the context, the configuration of the size being
    run, and the results of the theory and simulation stages."""

    ctx: CaseContext
    cfg: object
    theory: object
    simulation: object


@dataclass(frozen=True)
class Compared:
    """One compared quantity, or a family of them over an index set.

    name : str or callable     a ``str.format`` template filled with the index (``"U[{0},{1}]"``),
                               or ``name(run, *index) -> str``.
    theory : callable          ``theory(run, *index) -> float``: the theory value.
    estimate : callable        ``estimate(run, *index)``: the simulation's estimate, in whatever
                               form ``rule`` takes (a float, ``(mean, stderr)``, an estimate
                               with its chain series, ...).
    rule : callable            ``rule(run, name, theory, estimate, **options) -> Quantity``: the
                               tolerance rule (kind, size, standard error, ergodicity class),
                               e.g. :func:`richlazy.validate.compare` with fixed arguments.
    over : callable or None    ``over(run) -> iterable`` of indices (each a value or a tuple);
                               None for a single quantity.
    options : callable or None ``options(run, *index) -> dict``: keyword arguments of ``rule``
                               that depend on the index (e.g. the natural scale of an absolute
                               tolerance where the theory value is zero).
    """

    name: str | Callable
    theory: Callable
    estimate: Callable
    rule: Callable[..., Quantity]
    over: Callable[[CaseRun], Iterable] | None = None
    options: Callable | None = None

    def __post_init__(self):
        for arg in ("theory", "estimate", "rule"):
            if not callable(getattr(self, arg)):
                raise TypeError(f"Compared.{arg} must be callable, got {getattr(self, arg)!r}")
        if not (isinstance(self.name, str) or callable(self.name)):
            raise TypeError(f"Compared.name must be a str template or a callable, got {self.name!r}")
        for arg in ("over", "options"):
            if getattr(self, arg) is not None and not callable(getattr(self, arg)):
                raise TypeError(f"Compared.{arg} must be callable or None, got {getattr(self, arg)!r}")

    def indices(self, run: CaseRun) -> list[tuple]:
        """The index tuples this row is compared at (``[()]`` for a single quantity)."""
        if self.over is None:
            return [()]
        return [k if isinstance(k, tuple) else (k,) for k in self.over(run)]

    def quantities(self, run: CaseRun) -> list[Quantity]:
        """The quantities of this row, in the order of :meth:`indices`."""
        out = []
        for k in self.indices(run):
            name = self.name.format(*k) if isinstance(self.name, str) else self.name(run, *k)
            options = {} if self.options is None else self.options(run, *k)
            out.append(self.rule(run, name, self.theory(run, *k), self.estimate(run, *k), **options))
        return out


def _nothing(run):
    return None


def no_theory(ctx, cfg):
    """The theory stage of a case whose theory values are stated in its compared rows (a sign or
    a constant, e.g. "the slope is 0") or computed with its simulation: none (``None``)."""
    return None


@dataclass(frozen=True)
class CaseDeclaration:
    """A validation case stated as data (see the module docstring); callable as the registered
    case function ``fn(ctx) -> CaseOutcome``."""

    name: str
    description: str
    sizes: Sizes
    theory: Callable
    simulation: Callable
    compared: tuple[Compared, ...]
    figures: Callable = _nothing
    notes: Callable = _nothing
    params: Callable = _nothing
    suites: tuple[str, ...] = SUITES

    def __post_init__(self):
        if not isinstance(self.sizes, Sizes):
            raise TypeError(f"sizes of case {self.name!r} must be a Sizes, got {self.sizes!r}")
        if not self.compared or not all(isinstance(c, Compared) for c in self.compared):
            raise TypeError(f"compared of case {self.name!r} must be a non-empty tuple of Compared "
                            f"rows, got {self.compared!r}")
        for arg in ("theory", "simulation", "figures", "notes", "params"):
            if not callable(getattr(self, arg)):
                raise TypeError(f"{arg} of case {self.name!r} must be callable, got "
                                f"{getattr(self, arg)!r}")

    def __call__(self, ctx: CaseContext) -> CaseOutcome:
        cfg = self.sizes[ctx.size]
        theory = self.theory(ctx, cfg)
        run = CaseRun(ctx, cfg, theory, self.simulation(ctx, cfg, theory))
        quantities = [q for row in self.compared for q in row.quantities(run)]
        figures = list(self.figures(run) or ())
        params = {**self.sizes.params(ctx.size), **(self.params(run) or {})}
        return CaseOutcome(quantities=quantities, figures=figures, params=params,
                           notes=self.notes(run) or "")


def declare_case(name: str, *, description: str, sizes: Sizes, theory: Callable = no_theory,
                 simulation: Callable, compared: tuple[Compared, ...], figures: Callable = _nothing,
                 notes: Callable = _nothing, params: Callable = _nothing,
                 suites: tuple[str, ...] = SUITES) -> CaseDeclaration:
    """Declare and register the validation case ``name`` (see the module docstring); returns the
    :class:`CaseDeclaration`. The case's checkpoints are keyed by the source file of the module
    that calls this (as for :func:`~richlazy.validate.register_case`)."""
    decl = CaseDeclaration(name, description, sizes, theory, simulation, tuple(compared), figures,
                           notes, params, tuple(suites))

    def case(ctx: CaseContext) -> CaseOutcome:
        return decl(ctx)

    case.__module__ = sys._getframe(1).f_globals.get("__name__", __name__)
    case.__qualname__ = case.__name__ = name.replace("/", "_").replace("-", "_")
    case.declaration = decl
    register_case(name, description=description, suites=suites)(case)
    return decl
