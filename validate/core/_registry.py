"""Case registry: named theory-vs-simulation comparisons grouped into suites.

A case is a function ``fn(ctx: CaseContext) -> CaseOutcome`` registered under a name
``"<paper>/<name>"`` where ``<paper>`` is one of ``coding``, ``ldt``, ``equality``, ``richness``.
Cases never print; they may report progress through ``ctx.progress`` (a bool the case passes on to
the sampler driver) and write figures into ``ctx.out_dir``.
"""

from __future__ import annotations

import contextlib
import fnmatch
import importlib
import pathlib
from collections.abc import Callable
from dataclasses import dataclass, field

from ._compare import Quantity

__all__ = [
    "PAPERS",
    "SUITES",
    "CaseContext",
    "CaseOutcome",
    "CaseSpec",
    "register_case",
    "get_cases",
    "all_cases",
    "case_threads",
]

PAPERS = ("coding", "ldt", "equality", "richness")
SUITES = ("quick", "full")

# Modules that define cases; imported lazily by all_cases(). Add new case modules here.
_CASE_MODULES = (
    "richlazy.validate.cases.coding._linear",
    "richlazy.validate.cases.coding._sigmoid",
    "richlazy.validate.cases.coding._relu",
    "richlazy.validate.cases.coding._images",
    "richlazy.validate.cases.coding._persistence",
    "richlazy.validate.cases.ldt._posterior",
    "richlazy.validate.cases.ldt._prior",
    "richlazy.validate.cases.equality._cases",
    "richlazy.validate.cases.richness._trained",
    "richlazy.validate.cases.richness._posterior",
    "richlazy.validate.cases.richness._gamma",
)


@dataclass(frozen=True)
class CaseContext:
    """What a case gets from the runner.

    size : {"quick", "full"}  which configuration to run (the suite being run).
    device : str              resolved torch device string ("cpu" or "cuda"/"cuda:0").
    seed : int                base seed; cases derive all generators from it.
    out_dir : pathlib.Path    folder (exists) for this case's figures and data files.
    checkpoint_dir : pathlib.Path  folder (exists) for resumable checkpoints of long runs.
    progress : bool           whether long loops may show a progress bar (on stderr).
    """

    size: str
    device: str
    seed: int
    out_dir: pathlib.Path
    checkpoint_dir: pathlib.Path
    progress: bool = True


@dataclass(frozen=True)
class CaseOutcome:
    """What a case returns: compared quantities, figure file names (relative to out_dir),
    the parameters it ran with (JSON-serialisable) and free-text notes."""

    quantities: list[Quantity]
    figures: list[str] = field(default_factory=list)
    params: dict = field(default_factory=dict)
    notes: str = ""


@dataclass(frozen=True)
class CaseSpec:
    name: str
    paper: str
    suites: tuple[str, ...]
    description: str
    fn: Callable[[CaseContext], CaseOutcome]


_REGISTRY: dict[str, CaseSpec] = {}


def register_case(name: str, *, description: str, suites: tuple[str, ...] = SUITES):
    """Decorator registering ``fn(ctx) -> CaseOutcome`` as validation case ``name``."""
    paper, _, short = name.partition("/")
    if paper not in PAPERS or not short:
        raise ValueError(f"case name must be '<paper>/<name>' with paper in {PAPERS}, got {name!r}")
    bad = [s for s in suites if s not in SUITES]
    if bad or not suites:
        raise ValueError(f"suites must be a non-empty subset of {SUITES}, got {suites!r}")

    def deco(fn):
        if name in _REGISTRY and _REGISTRY[name].fn is not fn:
            raise ValueError(f"case {name!r} is registered twice")
        _REGISTRY[name] = CaseSpec(name, paper, tuple(suites), description, fn)
        return fn

    return deco


def all_cases() -> dict[str, CaseSpec]:
    """All registered cases (imports the case modules that exist)."""
    for mod in _CASE_MODULES:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:
                raise
    return dict(sorted(_REGISTRY.items()))


def get_cases(suite: str, only: str | None = None) -> list[CaseSpec]:
    """Cases of ``suite`` whose name matches the glob ``only`` (all when None)."""
    if suite not in SUITES:
        raise ValueError(f"suite must be one of {SUITES}, got {suite!r}")
    cases = [c for c in all_cases().values() if suite in c.suites]
    if only is not None:
        cases = [c for c in cases if fnmatch.fnmatchcase(c.name, only)]
    return cases


@contextlib.contextmanager
def case_threads(ctx: CaseContext, n: int = 1):
    """Run a case body with ``n`` torch threads on the CPU (restored afterwards).

    The quick cases work on small tensors (widths of 10^2), where OpenMP threading buys little
    and, on a machine whose cores are shared, the thread barriers can slow matrix products down
    by 10x or more. On CUDA devices nothing is changed.
    """
    import torch

    old = torch.get_num_threads()
    if str(ctx.device).startswith("cpu"):
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)
