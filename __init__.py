"""richlazy: theory of rich (feature-learning) vs lazy (kernel) learning in neural networks.

The package is its three subpackages, imported on demand (this module imports none of them):
``richlazy.theory`` (solvers), ``richlazy.simulate`` (torch sampler and trainers) and
``richlazy.validate`` (theory-vs-simulation cases, reports, the ``richlazy`` CLI).

``__version__`` is the installed distribution's version; the one place it is written is
``version`` in ``pyproject.toml``.
"""

from __future__ import annotations

__all__ = ["__version__"]


def _installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("richlazy")
    except PackageNotFoundError:  # pragma: no cover  (imported from a source tree, not installed)
        return "unknown"


__version__ = _installed_version()
