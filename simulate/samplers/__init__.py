"""Posterior samplers as pure ``init`` / ``step`` pairs and the one driver that owns the loop
(burn-in, thinning, progress, atomic checkpoints and exact resume, divergence detection).
"""

from ._driver import (
    ChainRun,
    SamplerDivergedError,
    atomic_torch_save,
    atomic_write,
    run_chain,
)
from ._gibbs import (
    ReadoutConditional,
    gibbs_readout_step,
    readout_conditional,
    sample_readout,
)
from ._langevin import (
    LangevinState,
    Potential,
    langevin_init,
    langevin_step,
    paper_step_size,
)

__all__ = [
    "ChainRun",
    "SamplerDivergedError",
    "atomic_torch_save",
    "atomic_write",
    "run_chain",
    "LangevinState",
    "Potential",
    "langevin_init",
    "langevin_step",
    "paper_step_size",
    "ReadoutConditional",
    "gibbs_readout_step",
    "readout_conditional",
    "sample_readout",
]
