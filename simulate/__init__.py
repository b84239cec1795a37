"""richlazy.simulate — compact torch simulator: batched networks, Langevin posterior sampler,
sampling driver, tasks and data. Never imports richlazy.theory.

Randomness is always explicit (``torch.Generator`` / seeds); device ``"auto"`` picks CUDA when
available.
"""


from . import models, samplers, tasks
from ._device import make_generator, resolve_device, resolve_dtype
from ._divergence import DivergedError
from .models import *  # noqa: F403  (names listed in models.__all__)
from .samplers import *  # noqa: F403
from .tasks import *  # noqa: F403

# The public surface is the union of the subpackages' explicit lists plus device and seed helpers.
__all__ = [
    "DivergedError",
    "make_generator",
    "resolve_device",
    "resolve_dtype",
    *models.__all__,
    *samplers.__all__,
    *tasks.__all__,
]
