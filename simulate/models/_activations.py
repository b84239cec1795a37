"""Activation functions and their derivatives for the torch networks (seed 000 §1.1)."""

from __future__ import annotations

import math

import torch

__all__ = ["ACTIVATIONS", "activation_pair"]

ACTIVATIONS = ("linear", "sigmoid_erf", "erf", "relu")
_SQRT_PI_2 = math.sqrt(math.pi) / 2.0


def _lin(z):
    return z


def _lin_d(z):
    return torch.ones_like(z)


def _sig(z):  # phi(z) = 1/2 [1 + erf(sqrt(pi) z / 2)]
    return 0.5 * (1.0 + torch.erf(_SQRT_PI_2 * z))


def _sig_d(z):  # phi'(z) = 1/2 exp(-pi z^2 / 4)
    return 0.5 * torch.exp(-(math.pi / 4.0) * z * z)


def _erf_d(z):
    return (2.0 / math.sqrt(math.pi)) * torch.exp(-z * z)


def _relu_d(z):
    return (z > 0).to(z.dtype)


_TABLE = {
    "linear": (_lin, _lin_d),
    "sigmoid_erf": (_sig, _sig_d),
    "erf": (torch.erf, _erf_d),
    "relu": (torch.relu, _relu_d),
}


def activation_pair(name: str):
    """``(phi, phi_prime)`` torch functions for an activation name in :data:`ACTIVATIONS`."""
    if name not in _TABLE:
        raise ValueError(f"name must be one of the activations {ACTIVATIONS}, got {name!r}")
    return _TABLE[name]
