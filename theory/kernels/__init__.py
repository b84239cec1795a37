"""Gaussian integrals and kernels: activations and Gauss-Hermite expectations, NNGP / NTK
closed forms per layer, tilted single-neuron integrals (numba kernels behind validating wrappers).
"""

from . import _gauss, _nngp, _tilted
from ._gauss import *  # noqa: F403  (the names of _gauss.__all__)
from ._nngp import *  # noqa: F403  (the names of _nngp.__all__)
from ._tilted import *  # noqa: F403  (the names of _tilted.__all__)

__all__ = [*_gauss.__all__, *_nngp.__all__, *_tilted.__all__]
