"""richlazy.validate.sweeps — parameter grids as first-class runs.

:func:`sweep` runs a registered experiment (or any ``fn(ctx, **config)``) over a grid × replicates
on an executor (sequential, a Dask LocalCluster, or any Dask scheduler), resumably, and writes a
tidy table (CSV and Parquet) with the standard figures. Experiments are registered with
:func:`register_sweep` and typed :class:`Param` declarations; ``richlazy sweep --list`` shows them.
"""

from ._registry import Param, SweepContext, SweepSpec, all_sweeps, get_sweep, register_sweep
from ._run import SweepResult, sweep

__all__ = ["Param", "SweepContext", "SweepResult", "SweepSpec", "all_sweeps", "get_sweep",
           "register_sweep", "sweep"]
