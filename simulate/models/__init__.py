"""Batched network ensembles: the network posterior of seed 000 (linear / nonlinear, non-lazy and
lazy scaling), the two-layer erf posterior of seed 002, the MLP trainer and the gamma-MLP trainers
of seed 003 (dense, and structured for the same-different task).
"""

from ._activations import (
    ACTIVATIONS,
    activation_pair,
)
from ._erf_posterior import TwoLayerErfPosterior
from ._gamma_mlp import (
    GammaMLPResult,
    gamma_learning_rate,
    gamma_mlp_output,
    init_gamma_mlp,
    lazy_gamma,
    train_gamma_mlp,
)
from ._mlp import (
    MLPParams,
    MLPTrainResult,
    init_mlp_ensemble,
    mlp_forward,
    train_mlp_ensemble,
)
from ._network_posterior import (
    REGIMES,
    NetworkPosterior,
    NetworkSpec,
)
from ._sd_structured import (
    init_gamma_mlp_published,
    train_gamma_mlp_sd,
    truncated_normal,
    truncated_normal_std,
)

__all__ = [
    "ACTIVATIONS",
    "activation_pair",
    "GammaMLPResult",
    "gamma_learning_rate",
    "gamma_mlp_output",
    "init_gamma_mlp",
    "lazy_gamma",
    "train_gamma_mlp",
    "init_gamma_mlp_published",
    "train_gamma_mlp_sd",
    "truncated_normal",
    "truncated_normal_std",
    "TwoLayerErfPosterior",
    "MLPParams",
    "MLPTrainResult",
    "init_mlp_ensemble",
    "mlp_forward",
    "train_mlp_ensemble",
    "REGIMES",
    "NetworkPosterior",
    "NetworkSpec",
]
