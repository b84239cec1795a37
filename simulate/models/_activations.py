"""Activation functions and their derivatives for the torch networks (seed 000 §1.1)."""

from __future__ import annotations

import math

import torch

__all__ = ["ACTIVATIONS", "activation_pair", "activation_inplace"]

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


# -- in-place forms for the allocation-free gradient (NetworkPosterior.grad) --------------------
# phi_into(z, out) -> phi(z), written into ``out`` (linear: returns z itself, no copy);
# dphi_mul_(g, z, tmp) multiplies g in place by phi'(z), using ``tmp`` (same shape as z, of the
# dtype returned by :func:`activation_inplace`'s third item) as scratch.
_LN_HALF = math.log(0.5)
_LN_2_SQRT_PI = math.log(2.0 / math.sqrt(math.pi))


def _lin_into(z, out):
    return z


def _lin_dmul(g, z, tmp):
    return g


def _sig_into(z, out):
    torch.mul(z, _SQRT_PI_2, out=out)
    return out.erf_().add_(1.0).mul_(0.5)


def _sig_dmul(g, z, tmp):  # g *= exp(-pi z^2 / 4 + ln 1/2)
    torch.mul(z, z, out=tmp)
    tmp.mul_(-math.pi / 4.0).add_(_LN_HALF).exp_()
    return g.mul_(tmp)


def _erf_into(z, out):
    return torch.erf(z, out=out)


def _erf_dmul(g, z, tmp):  # g *= exp(-z^2 + ln 2/sqrt(pi))
    torch.mul(z, z, out=tmp)
    tmp.neg_().add_(_LN_2_SQRT_PI).exp_()
    return g.mul_(tmp)


def _relu_into(z, out):
    return torch.clamp(z, min=0.0, out=out)


def _relu_dmul(g, z, tmp):  # tmp: bool scratch
    torch.le(z, 0.0, out=tmp)
    return g.masked_fill_(tmp, 0.0)


_INPLACE = {
    "linear": (_lin_into, _lin_dmul, None),
    "sigmoid_erf": (_sig_into, _sig_dmul, "float"),
    "erf": (_erf_into, _erf_dmul, "float"),
    "relu": (_relu_into, _relu_dmul, "bool"),
}


def activation_inplace(name: str):
    """``(phi_into, dphi_mul_, scratch)`` for an activation name: ``phi_into(z, out)`` returns
    phi(z) written into ``out`` (the linear activation returns ``z`` itself);
    ``dphi_mul_(g, z, tmp)`` multiplies ``g`` in place by phi'(z) and returns it, with ``tmp`` a
    scratch tensor shaped like ``z`` whose kind ``scratch`` is None (not needed), "float" (z's
    dtype) or "bool". The same functions as :func:`activation_pair`, rounded differently
    (tested against them)."""
    if name not in _INPLACE:
        raise ValueError(f"name must be one of the activations {ACTIVATIONS}, got {name!r}")
    return _INPLACE[name]
