"""richlazy.simulate — compact torch simulator: batched networks, Langevin posterior sampler,
sampling driver, tasks and data. Never imports richlazy.theory.

Randomness is always explicit (``torch.Generator`` / seeds); device ``"auto"`` picks CUDA when
available.
"""

from ._activations import ACTIVATIONS, activation_pair
from ._datasets import (
    DatasetUnavailableError,
    ImageClassificationData,
    load_image_classification,
    one_hot_targets,
    read_idx,
)
from ._device import make_generator, resolve_device, resolve_dtype
from ._driver import ChainRun, SamplerDivergedError, atomic_torch_save, run_chain
from ._equality_mlp import (
    GammaMLPResult,
    gamma_learning_rate,
    gamma_mlp_output,
    init_gamma_mlp,
    lazy_gamma,
    train_gamma_mlp,
)
from ._equality_tasks import (
    PENTOMINO_PATCH,
    one_sided_pentominoes,
    pentomino_batch,
    pentomino_canonical_id,
    psvrt_batch,
    psvrt_patterns,
    psvrt_test_batch,
    sd_symbols,
    sd_test_batch,
    sd_train_batch,
    split_pentominoes,
)
from ._langevin import LangevinState, Potential, langevin_init, langevin_step, paper_step_size
from ._ldt_nets import TwoLayerErfPosterior, hermite_target_data
from ._mlp import MLPParams, MLPTrainResult, init_mlp_ensemble, mlp_forward, train_mlp_ensemble
from ._networks import REGIMES, NetworkPosterior, NetworkSpec
from ._tasks import ToyTask, orthogonal_toy_task

__all__ = [
    "GammaMLPResult",
    "gamma_learning_rate",
    "gamma_mlp_output",
    "init_gamma_mlp",
    "lazy_gamma",
    "train_gamma_mlp",
    "PENTOMINO_PATCH",
    "one_sided_pentominoes",
    "pentomino_batch",
    "pentomino_canonical_id",
    "psvrt_batch",
    "psvrt_patterns",
    "psvrt_test_batch",
    "sd_symbols",
    "sd_test_batch",
    "sd_train_batch",
    "split_pentominoes",
    "TwoLayerErfPosterior",
    "hermite_target_data",
    "DatasetUnavailableError",
    "ImageClassificationData",
    "MLPParams",
    "MLPTrainResult",
    "init_mlp_ensemble",
    "load_image_classification",
    "mlp_forward",
    "one_hot_targets",
    "read_idx",
    "train_mlp_ensemble",
    "ACTIVATIONS",
    "REGIMES",
    "ChainRun",
    "LangevinState",
    "NetworkPosterior",
    "NetworkSpec",
    "Potential",
    "SamplerDivergedError",
    "ToyTask",
    "activation_pair",
    "atomic_torch_save",
    "langevin_init",
    "langevin_step",
    "make_generator",
    "orthogonal_toy_task",
    "paper_step_size",
    "resolve_device",
    "resolve_dtype",
    "run_chain",
]
