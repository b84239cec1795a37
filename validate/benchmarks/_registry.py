"""Benchmark registry: every benchmark is ``fn(*, device, min_time) -> BenchResult``.

A benchmark measures ratios in one run (against a roofline or a straightforward baseline), so the
numbers it prints mean something on a noisy, shared machine. Register with
:func:`register_benchmark`; run by name with :func:`run_benchmark` (it checks the arguments, so
the CLI does not).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from richlazy.theory.checks import check_int, check_pos_float

from ..core._names import Registry

__all__ = ["BenchResult", "BenchSpec", "benchmark_device", "benchmarks", "register_benchmark",
           "run_benchmark"]

# Modules that register benchmarks; imported on the first lookup (benchmarks(), run_benchmark()).
# Add new benchmark modules here.
BENCH_MODULES = (
    "richlazy.validate.benchmarks._sampler",
    "richlazy.validate.benchmarks._mcmc",
    "richlazy.validate.benchmarks._coding",
    "richlazy.validate.benchmarks._richness",
    "richlazy.validate.benchmarks._ldt",
    "richlazy.validate.benchmarks._equality",
    "richlazy.validate.benchmarks._sigmoid_data",
    "richlazy.validate.benchmarks._relu_data",
    "richlazy.validate.benchmarks._relu_search",
    "richlazy.validate.benchmarks._relu_block",
    "richlazy.validate.benchmarks._code_moves",
)


@dataclass(frozen=True)
class BenchResult:
    """One benchmark's measurements (``data``, JSON-serialisable) and their rendering (``text``)."""

    name: str
    data: dict = field(repr=False)
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class BenchSpec:
    name: str
    devices: tuple[str, ...]  # device types it runs on ("cpu", "cuda")
    description: str
    fn: Callable[..., BenchResult]


_BENCHMARKS: Registry[BenchSpec] = Registry("benchmark", BENCH_MODULES)


def register_benchmark(name: str, *, description: str, devices: tuple[str, ...] = ("cpu", "cuda")):
    """Decorator registering ``fn(*, device, min_time) -> BenchResult`` under ``name``.

    ``devices`` lists the device types the benchmark can run on; theory benchmarks are CPU only.
    """
    def deco(fn):
        _BENCHMARKS.add(name, BenchSpec(name, tuple(devices), description, fn))
        return fn

    return deco


def benchmarks() -> dict[str, BenchSpec]:
    """All registered benchmarks, in registration order (imports the benchmark modules)."""
    return _BENCHMARKS.all()


def benchmark_device(name: str, device: str = "auto") -> str:
    """The device benchmark ``name`` runs on for the request ``device`` ("auto": CUDA when present
    and supported by the benchmark, else CPU).

    Raises ValueError for an unknown name (suggesting close names) or a device the benchmark (or
    this machine) does not support - never a silent fallback to another device. Nothing runs, so a
    command can check all its benchmarks before it starts the first.
    """
    spec = _BENCHMARKS.get(name)
    from richlazy.simulate import resolve_device

    if device == "auto":
        dev = resolve_device("auto")
        if dev.type not in spec.devices:
            dev = resolve_device("cpu")
    else:
        dev = resolve_device(device)
        if dev.type not in spec.devices:
            raise ValueError(f"benchmark {name!r} runs on {'/'.join(spec.devices)} only, got device "
                             f"{device!r}")
    return str(dev)


def run_benchmark(name: str, *, device: str = "auto", min_time: float = 1.0,
                  threads: int | None = None) -> BenchResult:
    """Run benchmark ``name`` on ``device`` ("auto": CUDA when present and supported, else CPU).

    ``threads``: CPU threads for torch and for the BLAS/OpenMP pools during the run (restored
    afterwards); None leaves them as they are. The command line passes 1 unless told otherwise:
    on a shared machine extra threads mostly measure contention.

    Raises ValueError for an unknown name, a non-positive ``min_time`` or ``threads``, or a device
    the benchmark (or this machine) does not support - never a silent fallback to another device.
    """
    dev = benchmark_device(name, device)
    min_time = check_pos_float("min_time", min_time)
    spec = _BENCHMARKS.get(name)
    if threads is None:
        res = spec.fn(device=dev, min_time=min_time)
    else:
        from ..core._registry import limit_threads

        with limit_threads(check_int("threads", threads, minimum=1)):
            res = spec.fn(device=dev, min_time=min_time)
    if not isinstance(res, BenchResult):
        raise TypeError(f"benchmark {name!r} returned {type(res).__name__}, not BenchResult")
    return res
