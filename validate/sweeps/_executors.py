"""Executors: where the tasks of a sweep (or the cases of a suite) run.

* ``"sequential"`` — in this process, one task after another (the default; needs no extra).
* ``"dask-local"`` — a Dask ``LocalCluster`` of ``workers`` processes, one thread each.
* a scheduler address (``"tcp://host:8786"``) — an existing Dask cluster (``dask scheduler`` +
  ``dask worker`` processes, or ``dask-jobqueue`` on Slurm/PBS). ``tcp://`` is plain TCP without
  authentication; for ``tls://`` pass a ``distributed.Security`` (:func:`load_security` reads one
  from a JSON file). A scheduler not reached within ``CONNECT_TIMEOUT_S`` seconds raises
  :class:`SchedulerUnreachable` (a ValueError) before anything else happens.
* a ``dask.distributed.Client`` — the caller's own client (left open afterwards).

Every task is one call of a module-level function on a small picklable description, so the
result depends only on the task, never on the executor. GPU tasks ask Dask for the worker
resource ``GPU`` (start GPU workers with ``--resources GPU=1``); CPU tasks run anywhere with one
torch/BLAS thread. A worker that dies mid-task has its task rerun by the scheduler; after
``allowed-failures`` deaths the task is reported failed (``KilledWorker``) and the rest go on.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator

__all__ = ["Executor", "open_executor", "check_executor", "connect_scheduler", "load_security",
           "SchedulerUnreachable", "EXECUTOR_NAMES", "CONNECT_TIMEOUT_S"]

EXECUTOR_NAMES = ("sequential", "dask-local")
_ADDRESS_PREFIXES = ("tcp://", "tls://", "inproc://", "ucx://", "ws://", "wss://")
CONNECT_TIMEOUT_S = 10.0  # seconds to reach a scheduler before giving up
SECURITY_KEYS = ("tls_ca_file", "tls_client_cert", "tls_client_key")
ALLOWED_FAILURES = 2  # a task is rerun after its worker dies; the third death marks it failed
# (2, not 1: two workers dying at once can briefly be handed a rescheduled task before the
# scheduler notices the second death)


def _is_client(obj) -> bool:
    return type(obj).__name__ == "Client" and type(obj).__module__.startswith("distributed")


def check_executor(executor, workers) -> None:
    """ValueError/TypeError naming ``executor`` or ``workers`` before anything starts."""
    if _is_client(executor):
        pass
    elif not isinstance(executor, str):
        raise TypeError(f"executor must be 'sequential', 'dask-local', a Dask scheduler address "
                        f"or a dask.distributed.Client, got {type(executor).__name__}")
    elif executor not in EXECUTOR_NAMES and not executor.startswith(_ADDRESS_PREFIXES):
        raise ValueError(f"executor must be 'sequential', 'dask-local' or a Dask scheduler address "
                         f"such as 'tcp://127.0.0.1:8786', got {executor!r}")
    if workers is not None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be a positive int, got {workers!r}")
        if executor != "dask-local":
            raise ValueError(f"workers={workers} needs executor='dask-local', got {executor!r}")
    if executor != "sequential":
        _import_distributed(executor)


class SchedulerUnreachable(ValueError):
    """A Dask scheduler could not be reached (refused, timed out, TLS handshake failed)."""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def connect_scheduler(address: str, *, timeout: float | None = None, security=None):
    """A ``distributed.Client`` connected to the scheduler at ``address`` within ``timeout``
    seconds (default ``CONNECT_TIMEOUT_S``), with ``security`` (a ``distributed.Security``, for
    ``tls://``). :class:`SchedulerUnreachable` with a one-line reason otherwise."""
    from distributed import Client

    timeout = CONNECT_TIMEOUT_S if timeout is None else float(timeout)
    kw = {} if security is None else {"security": security}
    try:
        return Client(address, timeout=f"{timeout}s", **kw)
    except Exception as exc:  # OSError, TimeoutError, ssl.SSLError, a bad address
        raise SchedulerUnreachable(f"cannot connect to the Dask scheduler at {address!r} within "
                                   f"{timeout:g} s ({_first_line(exc)})") from None


def load_security(path):
    """A ``distributed.Security`` for TLS from the JSON file ``path``: an object with the keys
    ``tls_ca_file`` (required), ``tls_client_cert`` and ``tls_client_key``, each the path of an
    existing PEM file (relative paths are taken from the file's folder). Read as plain JSON;
    ValueError naming what is wrong otherwise."""
    import pathlib

    path = pathlib.Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read {str(path)!r} ({exc.strerror or type(exc).__name__})"
                         ) from None
    except ValueError:
        raise ValueError(f"{str(path)!r} is not a JSON file") from None
    if not isinstance(data, dict) or "tls_ca_file" not in data:
        raise ValueError(f"{str(path)!r} must hold a JSON object with the keys "
                         f"{', '.join(SECURITY_KEYS)} (tls_ca_file required)")
    unknown = sorted(set(data) - set(SECURITY_KEYS))
    if unknown:
        raise ValueError(f"{str(path)!r} has unknown keys {unknown}; allowed: "
                         f"{', '.join(SECURITY_KEYS)}")
    files = {}
    for key, value in data.items():
        if not isinstance(value, str) or not value:
            raise ValueError(f"{str(path)!r}: {key} must be a file path, got {value!r}")
        f = path.parent / value
        if not f.is_file():
            raise ValueError(f"{str(path)!r}: {key} {value!r} is not a file")
        files[key] = str(f)
    _import_distributed("tls://")
    from distributed import Security

    return Security(require_encryption=True, **files)


def _import_distributed(executor):
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ValueError(f"executor {executor!r} needs Dask: pip install 'richlazy[distributed]'"
                         ) from None


class Executor:
    """Runs ``fn(task)`` for each task and calls ``on_done(task, result, error_text)``.

    ``gpu`` : whether a GPU is there for tasks that can use one (sequential: CUDA available
    here; Dask: some worker advertises the ``GPU`` resource)."""

    name = "sequential"
    gpu = False

    def map(self, fn: Callable, tasks: list, on_done: Callable, *, gpu_flags=None) -> None:
        for task in tasks:
            on_done(task, fn(task), None)


class _SequentialExecutor(Executor):
    def __init__(self):
        import torch

        self.gpu = bool(torch.cuda.is_available())


class _DaskExecutor(Executor):
    def __init__(self, client, name):
        self.client = client
        self.name = name
        info = client.scheduler_info()
        self.gpu = any(w.get("resources", {}).get("GPU", 0) >= 1
                       for w in info.get("workers", {}).values())

    def _slots(self) -> int:
        workers = self.client.scheduler_info().get("workers", {}).values()
        return max(1, sum(int(w.get("nthreads", 1)) for w in workers))

    def map(self, fn, tasks, on_done, *, gpu_flags=None):
        """Submit tasks as worker threads free up (at most one task per worker thread in
        flight, re-counted as workers join or leave), so a worker that dies takes only the task
        it was running with it."""
        from distributed import wait

        flags = list(gpu_flags or [False] * len(tasks))
        pending = list(zip(tasks, flags, strict=True))[::-1]
        futures: dict = {}
        try:
            while pending or futures:
                slots = self._slots()
                while pending and len(futures) < slots:
                    task, gpu = pending.pop()
                    fut = self.client.submit(fn, task, pure=False,
                                             resources={"GPU": 1} if gpu else None,
                                             key=f"richlazy-{getattr(task, 'key', id(task))}")
                    futures[fut] = task
                try:
                    done, _ = wait(list(futures), timeout=2.0, return_when="FIRST_COMPLETED")
                except TimeoutError:  # nothing finished: look for new workers, wait again
                    continue
                for fut in done:
                    task = futures.pop(fut)
                    try:
                        result, error = fut.result(), None
                    except Exception as exc:  # KilledWorker, a lost worker, a pickling error
                        result, error = None, f"{type(exc).__name__}: {exc}"
                    on_done(task, result, error)
        except BaseException:
            self.client.cancel(list(futures), force=True)
            raise


@contextlib.contextmanager
def open_executor(executor="sequential", *, workers: int | None = None) -> Iterator[Executor]:
    """The executor described by ``executor``/``workers``, closed (cluster stopped) afterwards."""
    check_executor(executor, workers)
    if executor == "sequential":
        yield _SequentialExecutor()
        return
    import dask
    from distributed import Client, LocalCluster

    if _is_client(executor):
        yield _DaskExecutor(executor, f"dask ({executor.scheduler.address})")
        return
    # one task at a time per worker thread (worker-saturation 1.0), so a dying worker takes only
    # the task it was running with it, and that task is rerun ALLOWED_FAILURES times
    with dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES,
                          "distributed.scheduler.worker-saturation": 1.0}):
        if executor == "dask-local":
            import torch

            n = workers or 2
            res = {"GPU": 1} if torch.cuda.is_available() else None
            cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                   dashboard_address=None, resources=res)
            client = Client(cluster)
            try:
                yield _DaskExecutor(client, f"dask-local ({n} workers)")
            finally:
                client.close()
                cluster.close()
        else:
            client = connect_scheduler(executor)
            try:
                yield _DaskExecutor(client, f"dask ({executor})")
            finally:
                client.close()
