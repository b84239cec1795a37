"""Case registry: named theory-vs-simulation comparisons grouped into suites.

A case is a function ``fn(ctx: CaseContext) -> CaseOutcome`` registered under a name
``"<paper>/<name>"`` where ``<paper>`` is one of ``coding``, ``ldt``, ``equality``, ``richness``.
Cases never print; they may report progress through ``ctx.progress`` (a bool the case passes on to
the sampler driver) and write figures into ``ctx.out_dir``.

The registry is a :class:`Registry` (``_names``), the one mechanism of cases, sweep experiments
and benchmarks: the case modules of ``_CASE_MODULES`` are imported on the first lookup, and a
name registered twice with another function is refused.
"""

from __future__ import annotations

import contextlib
import fnmatch
import numbers
import pathlib
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from richlazy.theory.checks import check_int

from ._compare import Quantity
from ._names import Registry

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
    "limit_threads",
]

PAPERS = ("coding", "ldt", "equality", "richness")
SUITES = ("quick", "full")

# Modules that define cases; imported on the first lookup (all_cases()). Add new case modules here.
_CASE_MODULES = (
    "richlazy.validate.cases.coding._linear",
    "richlazy.validate.cases.coding._sigmoid",
    "richlazy.validate.cases.coding._temperature",
    "richlazy.validate.cases.coding._relu",
    "richlazy.validate.cases.coding._relu_correlated",
    "richlazy.validate.cases.coding._relu_widths",
    "richlazy.validate.cases.coding._images",
    "richlazy.validate.cases.coding._persistence",
    "richlazy.validate.cases.coding._deep",
    "richlazy.validate.cases.coding._deep_annealed",
    "richlazy.validate.cases.coding._deep_linear",
    "richlazy.validate.cases.coding._deep_relu",
    "richlazy.validate.cases.ldt._posterior",
    "richlazy.validate.cases.ldt._prior",
    "richlazy.validate.cases.equality._rich",
    "richlazy.validate.cases.equality._lazy",
    "richlazy.validate.cases.equality._noisy",
    "richlazy.validate.cases.equality._vision",
    "richlazy.validate.cases.equality._figures",
    "richlazy.validate.cases.richness._trained",
    "richlazy.validate.cases.richness._posterior",
    "richlazy.validate.cases.richness._gamma",
)


class SeedStreams:
    """Streams ``k = 0, 1, ...`` derived from ``self.seed_sequence(k)`` (defined by the subclass):
    one rule for cases and sweep tasks."""

    def seed_sequence(self, k: int = 0) -> np.random.SeedSequence:  # pragma: no cover
        raise NotImplementedError

    def child_seed(self, k: int = 0) -> int:
        """A 63-bit int seed for stream ``k`` (for functions that take ``seed=int``)."""
        hi, lo = self.seed_sequence(k).generate_state(2, dtype=np.uint32)
        return (int(hi) << 31) ^ int(lo)

    def rng(self, k: int = 0) -> np.random.Generator:
        """A numpy Generator on stream ``k``."""
        return np.random.default_rng(self.seed_sequence(k))

    def generator(self, k: int = 0, device=None):
        """A ``torch.Generator`` on stream ``k``, on ``device`` (default: ``self.device``)."""
        import torch

        g = torch.Generator(device=self.device if device is None else device)
        g.manual_seed(self.child_seed(k))
        return g


def check_stream(k) -> int:
    """``k`` as a stream index (ValueError naming ``k`` unless a non-negative int)."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 0:
        raise ValueError(f"k must be a non-negative int, got {k!r}")
    return int(k)


@dataclass(frozen=True)
class CaseContext(SeedStreams):
    """What a case gets from the runner: its configuration and the services every case needs.

    size : {"quick", "full"}  which configuration to run (the suite being run).
    device : str              resolved torch device string ("cpu" or "cuda"/"cuda:0").
    seed : int                base seed of the run.
    out_dir : pathlib.Path    folder (exists) for this case's figures and data files.
    checkpoint_dir : pathlib.Path  folder (exists) for resumable checkpoints of long runs; the
                              runner gives each (case, suite, seed, device, version, case
                              source) its own folder, so file names need not encode them.
    progress : bool           whether long loops may show a progress bar (on stderr).
    name : str                the case's registered name (part of its seed streams).
    cache : dict              shared by all cases of one run: an expensive simulation that two
                              cases compare against is computed once (key it by its configuration).
    figures : list[str]       figure files written through :meth:`figure` (the runner adds them to
                              the case's outcome).

    Randomness: stream ``k`` of a case is ``SeedSequence([seed, crc32(name), k])``, so streams
    differ between cases and between ``k`` and never depend on the order cases run in. Use
    :meth:`generator` for torch, :meth:`rng` for numpy and :meth:`child_seed` for APIs that take
    an int seed.
    """

    size: str
    device: str
    seed: int
    out_dir: pathlib.Path
    checkpoint_dir: pathlib.Path
    progress: bool = True
    name: str = ""
    cache: dict = field(default_factory=dict, compare=False, repr=False)
    figures: list = field(default_factory=list, compare=False, repr=False)

    def seed_sequence(self, k: int = 0) -> np.random.SeedSequence:
        """The ``SeedSequence([seed, crc32(name), k])`` behind stream ``k`` of this case."""
        return np.random.SeedSequence([int(self.seed), zlib.crc32(self.name.encode()),
                                       check_stream(k)])


    @contextlib.contextmanager
    def figure(self, filename: str, nrows: int = 1, ncols: int = 1, **kw):
        """Create a figure, yield ``(fig, axes)``, then save it as ``out_dir/filename``, release
        it and record it in :attr:`figures`. Keyword arguments go to ``new_figure``."""
        from ..rendering._figures import new_figure, save_figure

        fig, axes = new_figure(nrows, ncols, **kw)
        yield fig, axes
        save_figure(fig, self.out_dir / filename)
        if filename not in self.figures:
            self.figures.append(filename)


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


_CASES: Registry[CaseSpec] = Registry("case", _CASE_MODULES)


def register_case(name: str, *, description: str, suites: tuple[str, ...] = SUITES):
    """Decorator registering ``fn(ctx) -> CaseOutcome`` as validation case ``name``."""
    paper, _, short = name.partition("/")
    if paper not in PAPERS or not short:
        raise ValueError(f"case name must be '<paper>/<name>' with paper in {PAPERS}, got {name!r}")
    bad = [s for s in suites if s not in SUITES]
    if bad or not suites:
        raise ValueError(f"suites must be a non-empty subset of {SUITES}, got {suites!r}")

    def deco(fn):
        _CASES.add(name, CaseSpec(name, paper, tuple(suites), description, fn))
        return fn

    return deco


def all_cases() -> dict[str, CaseSpec]:
    """All registered cases by name, sorted (imports the case modules that exist)."""
    return dict(sorted(_CASES.all().items()))


def is_declared(spec: CaseSpec) -> bool:
    """Whether ``spec`` was registered by :func:`~richlazy.validate.declare_case` (it then has a
    configuration for every suite, whichever suites it belongs to)."""
    return hasattr(spec.fn, "declaration")


def get_cases(suite: str, only: str | None = None, *, outside_suite: bool = False) -> list[CaseSpec]:
    """Cases of ``suite`` whose name matches the glob ``only`` (all when None). With
    ``outside_suite`` also the declared cases of other suites (they run at the configuration
    they declare for ``suite``)."""
    if suite not in SUITES:
        raise ValueError(f"suite must be one of {SUITES}, got {suite!r}")
    cases = [c for c in all_cases().values()
             if suite in c.suites or (outside_suite and is_declared(c))]
    if only is not None:
        cases = [c for c in cases if fnmatch.fnmatchcase(c.name, only)]
    return cases


@contextlib.contextmanager
def limit_threads(n: int = 1):
    """Run a block with ``n`` CPU threads for torch and for the BLAS/OpenMP pools (restored after).

    One setting for every thread pool a case or a benchmark touches: torch's intra-op threads
    (``torch.set_num_threads``) and, through ``threadpoolctl``, the OpenBLAS/MKL/OpenMP pools of
    numpy, scipy and torch. Numba is not threaded here (no ``parallel=True`` kernel), so its
    threads are left alone. threadpoolctl limits only libraries already loaded, so numpy's and
    scipy's BLAS are loaded first (the theory solvers load scipy's anyway).
    """
    n = check_int("threads", n, minimum=1)
    import scipy.linalg  # noqa: F401  (loads scipy's BLAS so that the limit reaches it)
    import torch
    from threadpoolctl import threadpool_limits

    old = torch.get_num_threads()
    with threadpool_limits(limits=n):
        torch.set_num_threads(n)
        try:
            yield
        finally:
            torch.set_num_threads(old)


@contextlib.contextmanager
def case_threads(ctx: CaseContext, n: int = 1):
    """Run a case body with ``n`` CPU threads for torch and BLAS/OpenMP (see :func:`limit_threads`).

    The quick cases work on small tensors (widths of 10^2) and small theory solves, where
    threading buys little and, on a machine whose cores are shared, the thread barriers slow
    matrix products down by 10x or more (a scipy sigmoid solve: 40 s with one BLAS thread, 200 s
    with the default under load). The limit applies on CUDA devices too: there it governs the
    theory solves and the CPU-side bookkeeping.
    """
    with limit_threads(n):
        yield
