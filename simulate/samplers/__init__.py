"""Posterior samplers as pure ``init`` / ``step`` pairs and the one driver that owns the loop
(burn-in, thinning, progress, atomic checkpoints and exact resume, divergence detection).

* ``_langevin``   unadjusted Langevin (ULA), the paper's dynamics
* ``_philox``     counter-based Gaussian noise (Philox4x32-10 + Box-Muller) for the CPU step
* ``_mala``, ``_hmc``  Metropolis-adjusted Langevin and Hamiltonian Monte Carlo (exact on any
  target), with per-chain step sizes adapted by dual averaging during warm-up (``_mh``)
* ``_tempering``  replica exchange over a ladder of likelihood weights in the ensemble dimension
* ``_gibbs``      the exact Gaussian conditional of the readout (blocked Gibbs)
* ``_gibbs_linear`` the exact conditionals of the hidden layers of a linear network (a Gibbs
  sweep with every block exact)
* ``_scale_move`` exact moves along the neuron rescaling symmetry of linear and ReLU networks
* ``_annealing``, ``_annealing_stats``  population annealing (tempered SMC) over G populations in
  the ensemble dimension: adaptive schedule, log evidence, family diagnostics
* ``_driver``     ``run_chain``: burn-in, thinning, checkpoints, divergence / low acceptance
* ``_checkpoint`` atomic writes and the checkpoint file format that ``run_chain`` resumes from
"""

from ._annealing import AnnealingRun, population_annealing
from ._annealing_stats import (
    AnnealedMean,
    AnnealingDiagnostics,
    annealed_mean,
    annealing_diagnostics,
)
from ._driver import (
    ChainRun,
    CheckpointDiscardedWarning,
    LowAcceptanceError,
    SamplerDivergedError,
    atomic_torch_save,
    atomic_write,
    clean_orphaned_temp_files,
    run_chain,
)
from ._gibbs import (
    ReadoutConditional,
    gibbs_readout_step,
    readout_conditional,
    sample_readout,
)
from ._gibbs_linear import gibbs_linear_step, sample_linear_layer
from ._hmc import hmc_init, hmc_step
from ._langevin import (
    LangevinState,
    LangevinWorkspace,
    Potential,
    langevin_init,
    langevin_step,
    paper_step_size,
)
from ._mala import mala_init, mala_step
from ._mh import ExactPotential, MCMCState, mcmc_end_adaptation, mcmc_refresh
from ._neuron_move import CODE_MOVE_MAX_M, sample_neuron_codes
from ._philox import philox_normal_
from ._scale_move import HOMOGENEOUS_ACTIVATIONS, sample_neuron_scales
from ._tempering import (
    ladder_betas,
    make_replica_exchange_step,
    replica_exchange_swap,
    target_rows,
    temperature_ladder,
)

__all__ = [
    "ChainRun",
    "SamplerDivergedError",
    "atomic_torch_save",
    "atomic_write",
    "clean_orphaned_temp_files",
    "CheckpointDiscardedWarning",
    "run_chain",
    "LangevinState",
    "LangevinWorkspace",
    "Potential",
    "langevin_init",
    "langevin_step",
    "paper_step_size",
    "philox_normal_",
    "ReadoutConditional",
    "gibbs_readout_step",
    "readout_conditional",
    "sample_readout",
    "sample_linear_layer",
    "gibbs_linear_step",
    "HOMOGENEOUS_ACTIVATIONS",
    "sample_neuron_scales",
    "sample_neuron_codes",
    "CODE_MOVE_MAX_M",
    "LowAcceptanceError",
    "ExactPotential",
    "MCMCState",
    "mcmc_end_adaptation",
    "mcmc_refresh",
    "mala_init",
    "mala_step",
    "hmc_init",
    "hmc_step",
    "temperature_ladder",
    "ladder_betas",
    "target_rows",
    "replica_exchange_swap",
    "make_replica_exchange_step",
    "population_annealing",
    "AnnealingRun",
    "annealed_mean",
    "AnnealedMean",
    "annealing_diagnostics",
    "AnnealingDiagnostics",
]
