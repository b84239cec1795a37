"""Tasks and data: the orthogonal toy task, Gaussian inputs with Hermite targets, same-different,
PSVRT and Pentomino generators, digits, Fashion-MNIST and MNIST loaders, and the exact prior sampler of
two-layer erf networks with importance sampling of rare alignments (seed 002; numpy).
"""

from ._hermite import hermite_target_data
from ._images import (
    DatasetUnavailableError,
    ImageClassificationData,
    load_image_classification,
    one_hot_targets,
    read_idx,
)
from ._pentomino import (
    PENTOMINO_PATCH,
    one_sided_pentominoes,
    pentomino_batch,
    pentomino_canonical_id,
    split_pentominoes,
)
from ._prior_sampler import (
    PriorRareEventEstimate,
    TiltedProposal,
    direct_mc_log_z1,
    direct_mc_probability,
    neuron_g2,
    prior_log_density,
    prior_rare_event_is,
    weighted_mean_se,
    weighted_ratio_se,
)
from ._psvrt import (
    psvrt_batch,
    psvrt_patterns,
    psvrt_test_batch,
)
from ._same_different import (
    sd_symbols,
    sd_test_batch,
    sd_train_batch,
)
from ._toy import (
    ToyTask,
    class_correlated_toy_task,
    orthogonal_toy_task,
)

__all__ = [
    "DatasetUnavailableError",
    "ImageClassificationData",
    "load_image_classification",
    "one_hot_targets",
    "read_idx",
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
    "ToyTask",
    "class_correlated_toy_task",
    "orthogonal_toy_task",
    "hermite_target_data",
    "TiltedProposal",
    "direct_mc_log_z1",
    "direct_mc_probability",
    "neuron_g2",
    "prior_log_density",
    "PriorRareEventEstimate",
    "prior_rare_event_is",
    "weighted_mean_se",
    "weighted_ratio_se",
]
