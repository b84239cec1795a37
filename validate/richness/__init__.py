"""Richness measures (seed 004, Nam et al., *Decoupling Dynamical Richness from Representation
Learning*, arXiv 2410.04264) and the weight statistics of seed 003, for any network, on numpy
arrays or torch tensors.

Notation (seed 004 Sec. 2): a network is a feature map Φ: x -> R^p (post-activations of the
penultimate layer) followed by a linear last layer giving outputs f̂(x) in R^C. From n samples we
hold the feature matrix Φ (n x p) and the output matrix F (n x C). The empirical inner product is
<f|g> = (1/n) Σ_x f(x) g(x) (App. B.1 with q = the empirical distribution).

Modules
-------
* ``_cka``: :func:`linear_cka`, :func:`cka` -- centred kernel alignment, eq. (7)/(58), biased (the
  paper's) or debiased (unbiased HSIC U-statistic); :func:`s_init` (Sec. 4.1).
* ``_dlr``: :func:`dlr` -- D_LR = 1 - CKA(T, T_MP), eq. (4), computed from Φ and F (App. E.1)
  without ever forming an n x n matrix.
* ``_eigen``: :func:`nystrom_eigen`, :func:`eigen_curves` -- Nyström eigenpairs (Sec. 5.2, eq. 6,
  Algorithm 1) and the curves Π*(k), Π̂(k), ρ_k/ρ_1 of eq. (5); :func:`effective_dimension`,
  D_eff, eq. (9) (eq. (8) with ``drop_first=False``).
* ``_collapse``: :func:`class_statistics`, :func:`nc1`, :func:`nc2_etf` (neural collapse, Sec. 4.1).
* ``_baselines``: :func:`parameter_norm_sq` (Sec. 4.1) and :class:`RichnessSweep`.
* ``_weights``: weight alignment, readout ratio and relative changes of seed 003's networks.
* ``_arrays``: the shared array plumbing (conversion, (E, n, k) stacks, blockwise moments).

Conventions: float64 internally; torch tensors are accepted (moved with
``x.detach().cpu().numpy()``; torch is never imported by the measures). Every function taking
(n, p) matrices also takes a stack (E, n, p) of E networks and then returns one value per network;
arrays are processed in row blocks of ``block_rows`` so float32 inputs of benchmark size are never
copied to float64 in full.
"""

from ._baselines import RichnessSweep, parameter_norm_sq
from ._cka import cka, linear_cka, s_init
from ._collapse import ClassStatistics, NC2Result, class_statistics, nc1, nc2_etf
from ._dlr import dlr
from ._eigen import EigenCurves, NystromEigen, effective_dimension, eigen_curves, nystrom_eigen
from ._weights import (
    alignment_by_readout_sign,
    alignment_of_top_units,
    readout_ratio,
    relative_activation_change,
    relative_weight_change,
    weight_alignment,
)

__all__ = [
    "ClassStatistics",
    "EigenCurves",
    "NC2Result",
    "NystromEigen",
    "RichnessSweep",
    "alignment_by_readout_sign",
    "alignment_of_top_units",
    "cka",
    "class_statistics",
    "dlr",
    "effective_dimension",
    "eigen_curves",
    "linear_cka",
    "nc1",
    "nc2_etf",
    "nystrom_eigen",
    "parameter_norm_sq",
    "readout_ratio",
    "relative_activation_change",
    "relative_weight_change",
    "s_init",
    "weight_alignment",
]
