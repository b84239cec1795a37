"""Gaussian integrals and kernels: activations and Gauss-Hermite expectations, NNGP / NTK
closed forms per layer, tilted single-neuron integrals (numba kernels behind validating wrappers).
"""

from ._gauss import (
    ACTIVATIONS,
    gauss_hermite_nodes,
    gaussian_expectation,
    gaussian_pair_expectation,
    phi,
    phi_prime,
)
from ._nngp import (
    deep_nngp_cross_kernel,
    deep_nngp_kernel,
    derivative_expectation,
    mean_activation,
    nngp_cross_kernel,
    nngp_expectation,
    nngp_kernel,
    relu_ntk,
    relu_ntk_unit_sphere,
    two_layer_ntk,
)
from ._tilted import (
    TILTED_ACTIVATIONS,
    saddle_moments,
    tilted_density,
    tilted_moments,
    tilted_moments_quad,
)

__all__ = [
    "ACTIVATIONS",
    "gauss_hermite_nodes",
    "gaussian_expectation",
    "gaussian_pair_expectation",
    "phi",
    "phi_prime",
    "deep_nngp_cross_kernel",
    "deep_nngp_kernel",
    "derivative_expectation",
    "mean_activation",
    "nngp_cross_kernel",
    "nngp_expectation",
    "nngp_kernel",
    "relu_ntk",
    "relu_ntk_unit_sphere",
    "two_layer_ntk",
    "TILTED_ACTIVATIONS",
    "saddle_moments",
    "tilted_density",
    "tilted_moments",
    "tilted_moments_quad",
]
