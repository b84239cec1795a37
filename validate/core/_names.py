"""One registry mechanism for the named things of richlazy.validate: validation cases
(``register_case``), sweep experiments (``register_sweep``) and benchmarks
(``register_benchmark``) are each a :class:`Registry` of name -> spec.

A registry holds what the decorators register and knows the modules that register into it (a
tuple of dotted names). It imports them on the first lookup, not before: importing a registry is
cheap, and ``richlazy --help`` imports no case. Its rules, the same for all three:

- a name registered twice with a different object is refused (ValueError naming it); the same
  object again (a decorator applied twice to one function) replaces the spec;
- an unknown name is a ValueError that names it, suggests the closest registered names
  (``difflib``) and lists them all;
- a listed module that does not exist is skipped (its names are then missing; the tests check
  that every listed module exists), while an error raised inside one propagates.

Only the standard library is imported here.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

__all__ = ["Registry", "import_modules"]

S = TypeVar("S")


def import_modules(modules: Iterable[str]) -> None:
    """Import the modules of ``modules`` that exist (a missing one is skipped; an import error
    inside one is raised)."""
    for mod in modules:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:
                raise


class Registry(Generic[S]):
    """Named specs of one kind (``kind``: "case", "sweep experiment", "benchmark"), registered by
    the modules ``modules``, which are imported on the first lookup.

    A spec is any object; the object it registers, whose identity decides whether a repeated
    name is a second registration, is its ``fn`` attribute (the decorated function) where it has
    one, else the spec itself.
    """

    def __init__(self, kind: str, modules: Iterable[str] = ()):
        self.kind = kind
        self.modules = tuple(modules)
        self.specs: dict[str, S] = {}  # registered so far, in order; lookups go through all()/get()
        self._loaded = False

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {len(self.specs)} registered, {len(self.modules)} modules)"

    def add(self, name: str, spec: S) -> S:
        """Register ``spec`` under ``name`` (ValueError when the name holds another object)."""
        old = self.specs.get(name)
        if old is not None and _registered(old) is not _registered(spec):
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self.specs[name] = spec
        return spec

    def load(self) -> None:
        """Import the registering modules (once; again after a failed import)."""
        if not self._loaded:
            import_modules(self.modules)
            self._loaded = True

    def all(self) -> dict[str, S]:
        """Every registered spec by name, in registration order (a copy)."""
        self.load()
        return dict(self.specs)

    def get(self, name: str) -> S:
        """The spec registered as ``name`` (TypeError unless a str; ValueError when unknown)."""
        if not isinstance(name, str):
            raise TypeError(f"name must be a {self.kind} name (str), got {type(name).__name__}")
        self.load()
        if name not in self.specs:
            raise ValueError(self.unknown(name))
        return self.specs[name]

    def unknown(self, name) -> str:
        """The message for an unknown ``name``: the closest registered names, then all of them."""
        self.load()
        names = sorted(self.specs)
        close = difflib.get_close_matches(str(name), names, n=3, cutoff=0.6)
        hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
        return f"unknown {self.kind} name {name!r}{hint}; registered: {', '.join(names) or '(none)'}"

    @contextlib.contextmanager
    def scratch(self, *, empty: bool = False) -> Iterator[dict[str, S]]:
        """A block whose registrations go to a copy of the registry (an empty one with ``empty``)
        that is dropped afterwards, for tests. The registering modules are imported first: one
        first imported inside the block would register into the copy and be lost after it."""
        self.load()
        saved = self.specs
        self.specs = {} if empty else dict(saved)
        try:
            yield self.specs
        finally:
            self.specs = saved


def _registered(spec):
    return getattr(spec, "fn", spec)
