"""Sweepable experiments: named functions of a configuration, registered with typed parameters.

An experiment is ``fn(ctx: SweepContext, **config) -> Mapping[str, float]``: it receives one grid
point (every declared parameter, grid values over defaults) and returns its metrics, numbers keyed
by name; a key ``"<metric>_se"`` is the standard error of ``<metric>``. Register it with
:func:`register_sweep`, declaring each parameter as a :class:`Param` (type, default, help, bounds
or choices), so a grid is checked completely before anything runs.

Randomness: the task (experiment, configuration, replicate r, base seed) owns the streams
``SeedSequence([seed, crc32(experiment), crc32(configuration JSON), r, k])``; they do not depend on
the executor, the order of the tasks or the other grid points, so a point's row is the same
whichever executor ran it.
"""

from __future__ import annotations

import json
import math
import numbers
import pathlib
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from ..core._names import Registry
from ..core._registry import SeedStreams, check_stream
from ._store import RESERVED_COLUMNS, check_column_name

__all__ = ["Param", "SweepContext", "SweepSpec", "register_sweep", "get_sweep", "all_sweeps",
           "check_grid", "config_json", "grid_points"]

# Modules that register experiments; imported on the first lookup (all_sweeps(), get_sweep()).
# Add new ones here.
_SWEEP_MODULES = (
    "richlazy.validate.sweeps.experiments._selftest",
    "richlazy.validate.sweeps.experiments._equality",
    "richlazy.validate.sweeps.experiments._coding",
    "richlazy.validate.sweeps.experiments._coding_data",
    "richlazy.validate.sweeps.experiments._ldt",
)

_TYPES = (int, float, str, bool)


@dataclass(frozen=True)
class Param:
    """One parameter of a sweepable experiment.

    kind : int, float, str or bool     the value type (an int is accepted where a float is asked).
    default : the value when the grid does not vary this parameter.
    help : one line shown by ``richlazy sweep NAME --help-params``.
    minimum, maximum : optional bounds (numbers); choices : optional allowed values.
    """

    kind: type
    default: object
    help: str = ""
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple | None = None

    def __post_init__(self):
        if self.kind not in _TYPES:
            raise TypeError(f"Param kind must be one of int, float, str, bool, got {self.kind!r}")

    def check(self, key: str, value):
        """``value`` converted to this parameter's type; ValueError/TypeError naming ``key``."""
        k = self.kind
        if k is bool:
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"grid key {key!r} takes booleans, got {value!r}")
            value = bool(value)
        elif k is int:
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"grid key {key!r} takes integers, got {value!r} "
                                f"({type(value).__name__})")
            value = int(value)
        elif k is float:
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"grid key {key!r} takes numbers, got {value!r} "
                                f"({type(value).__name__})")
            value = float(value)
            if not math.isfinite(value):
                raise ValueError(f"grid key {key!r} takes finite numbers, got {value!r}")
        else:
            if not isinstance(value, str):
                raise TypeError(f"grid key {key!r} takes strings, got {value!r}")
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"grid key {key!r} must be one of {list(self.choices)}, got {value!r}")
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"grid key {key!r} must be >= {self.minimum}, got {value!r}")
        if self.maximum is not None and value > self.maximum:
            raise ValueError(f"grid key {key!r} must be <= {self.maximum}, got {value!r}")
        return value

    def parse(self, key: str, text: str):
        """A command-line value (text) converted and checked; ValueError naming ``key``."""
        text = text.strip()
        k = self.kind
        try:
            if k is bool:
                low = text.lower()
                if low not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError
                value = low in ("true", "1", "yes")
            elif k is int:
                value = int(text)
            elif k is float:
                value = float(text)
            else:
                value = text
        except ValueError:
            raise ValueError(f"grid key {key!r} takes {k.__name__} values, got {text!r}") from None
        return self.check(key, value)


@dataclass(frozen=True)
class SweepSpec:
    """A registered experiment: name, description, parameters, metric names and its function.

    uses_gpu : whether a task may run on CUDA (and then asks a Dask worker for the ``GPU``
    resource); theory-only experiments say False and always run on the CPU.
    metrics : the metric names the function returns (documentation and table column order).
    figures : default figures, tuples ``(kind, metric, x, y_or_hue)`` with kind "heatmap" or
    "curves" (see :func:`richlazy.validate.sweeps.sweep_figures`).
    """

    name: str
    description: str
    params: Mapping[str, Param]
    fn: Callable
    uses_gpu: bool = False
    metrics: tuple[str, ...] = ()
    figures: tuple = ()


_SWEEPS: Registry[SweepSpec] = Registry("sweep experiment", _SWEEP_MODULES)


def register_sweep(name: str, *, description: str, params: Mapping[str, Param],
                   uses_gpu: bool = False, metrics=(), figures=()):
    """Decorator registering ``fn(ctx, **config) -> {metric: value}`` as experiment ``name``."""
    if not isinstance(name, str) or not name or any(c.isspace() for c in name):
        raise ValueError(f"sweep name must be a non-empty string without spaces, got {name!r}")
    for k, p in params.items():
        if not isinstance(p, Param):
            raise TypeError(f"params[{k!r}] must be a Param, got {type(p).__name__}")
        p.check(k, p.default)
    # a metric or parameter named like a column of the table's own would overwrite it (a metric
    # "status" once turned every finished task of a sweep into a failure)
    clash = sorted(RESERVED_COLUMNS & (set(params) | set(metrics)))
    if clash:
        raise ValueError(f"sweep {name!r}: parameter or metric names {clash} are reserved for the "
                         f"table's own columns {sorted(RESERVED_COLUMNS)}; rename them")

    def deco(fn):
        _SWEEPS.add(name, SweepSpec(name, description, dict(params), fn, bool(uses_gpu),
                                    tuple(metrics), tuple(figures)))
        return fn

    return deco


def all_sweeps() -> dict[str, SweepSpec]:
    """All registered experiments by name, sorted (imports the experiment modules that exist)."""
    return dict(sorted(_SWEEPS.all().items()))


def get_sweep(name) -> SweepSpec:
    """The registered experiment ``name`` (ValueError suggesting close names and listing all
    when unknown)."""
    if not isinstance(name, str):
        raise TypeError(f"name must be an experiment name (str), got {type(name).__name__}")
    return _SWEEPS.get(name)


def check_grid(grid, params: Mapping[str, Param] | None) -> dict[str, list]:
    """The grid ``{key: [values]}`` checked and converted, before anything runs.

    With ``params`` (a registered experiment) every key must be a declared parameter and every
    value of its type; without (a plain function) values must be int, float, str or bool.
    ValueError/TypeError name the key: unknown key, empty value list, wrong type, out of bounds,
    repeated value.
    """
    if not isinstance(grid, Mapping):
        raise TypeError(f"grid must be a mapping key -> list of values, got {type(grid).__name__}")
    out = {}
    for key, values in grid.items():
        check_column_name(key, "grid key", "grid keys")
        if params is not None and key not in params:
            raise ValueError(f"unknown grid key {key!r}; this experiment takes: "
                             f"{', '.join(params) or '(none)'}")
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            values = [values]
        values = list(values.tolist() if hasattr(values, "tolist") else values)
        if not values:
            raise ValueError(f"grid key {key!r} has no values; give at least one")
        if params is not None:
            conv = [params[key].check(key, v) for v in values]
        else:
            conv = []
            for v in values:
                if isinstance(v, np.generic):
                    v = v.item()
                if not isinstance(v, _TYPES):
                    raise TypeError(f"grid key {key!r} takes int, float, str or bool values, "
                                    f"got {v!r} ({type(v).__name__})")
                conv.append(v)
        if len({json.dumps(v) for v in conv}) != len(conv):
            raise ValueError(f"grid key {key!r} repeats a value: {conv!r}")
        out[key] = conv
    return out


def grid_points(grid: Mapping[str, list], params: Mapping[str, Param] | None) -> list[dict]:
    """The Cartesian product of a checked grid, as full configurations (defaults filled in),
    in row-major order of the grid's keys."""
    base = {k: p.default for k, p in (params or {}).items()}
    points = [dict(base)]
    for key, values in grid.items():
        points = [dict(p, **{key: v}) for p in points for v in values]
    return points


def config_json(config: Mapping) -> str:
    """Canonical JSON of a configuration (sorted keys): the identity of a grid point."""
    return json.dumps(dict(config), sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class SweepContext(SeedStreams):
    """What an experiment gets for one task (grid point × replicate).

    experiment : str        the experiment's name.
    config : dict           the full configuration of this point.
    replicate : int         the replicate (seed) index r = 0, 1, ...
    seed : int              the sweep's base seed.
    device : str            resolved torch device ("cpu" or "cuda...") the task must use.
    checkpoint_dir : pathlib.Path   a folder for this task's checkpoints (exists), or None when
                            the sweep keeps no files; a resumed task finds what it wrote there.
    progress : bool         whether the task may report progress on stderr.

    Streams: :meth:`seed_sequence` ``(k)`` is ``SeedSequence([seed, crc32(experiment),
    crc32(config_json(config)), replicate, k])``; :meth:`generator`, :meth:`rng` and
    :meth:`child_seed` derive torch / numpy / int seeds from it (the rule of every case's
    ``CaseContext``, shared through ``SeedStreams``).
    """

    experiment: str
    config: dict
    replicate: int
    seed: int
    device: str = "cpu"
    checkpoint_dir: pathlib.Path | None = None
    progress: bool = False
    extra: dict = field(default_factory=dict, compare=False, repr=False)

    def seed_sequence(self, k: int = 0) -> np.random.SeedSequence:
        return np.random.SeedSequence([int(self.seed), zlib.crc32(self.experiment.encode()),
                                       zlib.crc32(config_json(self.config).encode()),
                                       int(self.replicate), check_stream(k)])
