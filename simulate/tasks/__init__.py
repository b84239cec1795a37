"""Tasks and data: the orthogonal toy task, Gaussian inputs with Hermite targets, same-different,
PSVRT and Pentomino generators, digits and Fashion-MNIST loaders.
"""

from ._images import (
    DatasetUnavailableError,
    ImageClassificationData,
    load_image_classification,
    one_hot_targets,
    read_idx,
)
from ._same_different import (
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
from ._toy import (
    ToyTask,
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
    "orthogonal_toy_task",
]
