"""richlazy.validate.recipes — the reusable science of the validation cases.

Simulations (seeded ReLU ensembles, the erf ensembles of the ldt cases), problems (the Fig. 6
image data, the correlated-class ReLU task, the deep networks' toy task) and observables and
comparisons on samples (outliers and bulk of ReLU networks, code persistence, code populations
of sigmoid networks, the linear network's comparison rule, the deep sigmoid theory side) that
more than one case, a sweep, a benchmark or a test uses. Cases, sweeps and benchmarks import
them from here, never from another case module; the standard-error rules live in
:mod:`richlazy.validate.stats`.

Grouped by object in small private modules: ``_images``, ``_relu`` (seeding, sampling and
reading outliers), ``_relu_comparison``, ``_relu_block`` (correlated classes, width
extrapolation), ``_persistence``, ``_code_rows``, ``_linear``, ``_deep``, ``_deep_theory``,
``_ensembles``.
"""

# what a case's stages use from the floors below: the posterior sampler and its estimates,
# population annealing, the per-case thread count, and the standard figures
from ..core._annealing import anneal_posterior, frozen_estimate
from ..core._registry import case_threads
from ..core._sampling import estimates_from_run, linearised_series, sample_posterior
from ..rendering._plots import kernel_heatmaps, readout_histograms
from ..rendering._sweep_plots import plot_heatmap
from ._code_rows import (
    code_fraction_estimate,
    code_readout_estimate,
    code_readout_indices,
    code_readout_name,
    code_readout_rule,
    fraction_outside_estimate,
    fraction_rule,
)
from ._deep import DEEP_TOY_RATIOS, DeepToySize, deep_toy_setup
from ._deep_rows import deep_theory_pieces, deep_theory_rows
from ._deep_theory import (
    FEATURE_FROZEN,
    LOWER_CONDITIONED,
    LOWER_MIXING,
    NOT_ANNEALED,
    layer_code_keys,
    theory_class_codes,
)
from ._ensembles import erf_ensemble
from ._equality import train_sd
from ._images import (
    NONLINEARITIES,
    center_and_normalise,
    conditional_mean_activation,
    load_fig6_data,
    random_class_triple,
)
from ._linear import READOUT_COVARIANCE_ROW, compare_linear, element_estimate, finite_width_rule
from ._network_size import NetworkSize
from ._persistence import (
    PERSISTENCE_TOL_NOTE,
    lagged_persistence,
    lagged_set_persistence,
    mixing_value,
    origin_series,
    persistence_curve,
    persistence_rule,
)
from ._relu import (
    OUTLIER_THRESHOLD,
    RELU_TOY_SIZES,
    outlier_summary,
    relu_class_observer,
    run_seeded,
    seed_single_class_outliers,
    seeded_relu_samples,
)
from ._relu_block import CLASS_COVARIANCE, Y_MINUS, Y_PLUS, BlockView, correlated_problem, fit_inverse_width
from ._relu_rows import RELU_ROWS, RELU_SIZES, ReluToySize, relu_figures, relu_notes, relu_seeded_simulation

__all__ = [
    # sampling, annealing, threads and standard figures (from the floors below)
    "anneal_posterior", "case_threads", "estimates_from_run", "frozen_estimate", "kernel_heatmaps",
    "linearised_series", "plot_heatmap", "readout_histograms", "sample_posterior",
    # deep networks on the toy task
    "DEEP_TOY_RATIOS", "DeepToySize", "deep_toy_setup",
    # the size of a sampled network (the base of the sampling cases' sizes)
    "NetworkSize",
    "FEATURE_FROZEN", "LOWER_CONDITIONED", "LOWER_MIXING", "NOT_ANNEALED", "layer_code_keys",
    "theory_class_codes",
    # seed 002 erf ensembles
    "erf_ensemble",
    # seed 003 same-different ensembles
    "train_sd",
    # Fig. 6 images
    "NONLINEARITIES", "center_and_normalise", "conditional_mean_activation", "load_fig6_data",
    "random_class_triple",
    # linear networks
    "READOUT_COVARIANCE_ROW", "compare_linear", "element_estimate", "finite_width_rule",
    # code persistence
    "PERSISTENCE_TOL_NOTE", "lagged_persistence", "lagged_set_persistence", "mixing_value",
    "origin_series", "persistence_curve", "persistence_rule",
    # ReLU outliers and bulk
    "OUTLIER_THRESHOLD", "RELU_TOY_SIZES", "outlier_summary", "relu_class_observer", "run_seeded",
    "seed_single_class_outliers", "seeded_relu_samples",
    "CLASS_COVARIANCE", "Y_MINUS", "Y_PLUS", "BlockView", "correlated_problem", "fit_inverse_width",
    # sigmoid code populations as compared rows of declared cases
    "code_fraction_estimate", "code_readout_estimate", "code_readout_indices", "code_readout_name",
    "code_readout_rule", "fraction_outside_estimate", "fraction_rule",
    # the seeded ReLU comparison as the stages and rows of declared cases
    "RELU_ROWS", "RELU_SIZES", "ReluToySize", "relu_figures", "relu_notes", "relu_seeded_simulation",
    # the deep sigmoid theory side as pieces and rows of declared cases
    "deep_theory_pieces", "deep_theory_rows",
]
