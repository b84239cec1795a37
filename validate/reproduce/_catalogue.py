"""The main-text figures and tables of the four papers, and how richlazy reproduces each (data only).

One :class:`Entry` per figure or table of a paper's main text (appendix figures are left out),
keyed ``"<seed>:fig<n>"`` / ``"<seed>:table<n>"``, or ``"<seed>:fig<n><panel>"`` where a panel
is a target of its own (another experiment, another status). Seeds: 000 coding schemes (van
Meegen & Sompolinsky), 002 curse of detail (Rubin, Davidovich & Ringel), 003 equality reasoning
(Tong & Pehlevan), 004 richness measure (Nam et al.); seed 001 summarises 000 and adds nothing.

Status (one of :data:`STATUSES`), taken from the committed reports (``docs/report/report.json``,
quick suite; ``docs/report/full/report.json``, full suite) and, for full-suite cases without a
committed report, from the measurements recorded in ``docs/notes/validation_log.md``:

* ``paper size``: every producing case agrees in the committed full-suite report.
* ``reduced size``: every producing case agrees in a committed report, but only at the quick
  suite's (reduced) sizes.
* ``disagreement``: some producing case does not agree (verdict disagrees, not mixed or not
  equilibrated in a committed report, classified in ``docs/validation_classes.json``; or an open
  disagreement recorded for a full-suite case); :attr:`Entry.note` gives the classification.
* ``not run``: implemented by full-suite cases that have neither a committed report nor a recorded
  result (meant for a GPU).
* ``not implemented``: :attr:`Entry.note` says why.

The rule is :func:`richlazy.validate.reproduce._run.derived_status`; the tests check every status
against the committed reports with it. Numbers always come from the runs, never from this file.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["STATUSES", "PAPER_TITLES", "Producer", "Entry", "CATALOGUE"]

STATUSES = ("paper size", "reduced size", "disagreement", "not run", "not implemented")

PAPER_TITLES = {
    "000": "van Meegen & Sompolinsky, Coding schemes in neural networks learning classification tasks",
    "002": "Rubin, Davidovich & Ringel, Mitigating the Curse of Detail",
    "003": "Tong & Pehlevan, Learning richness modulates equality reasoning in neural networks",
    "004": "Nam et al., Decoupling Dynamical Richness from Representation Learning",
}


@dataclass(frozen=True)
class Producer:
    """A registered case (or sweep experiment) that draws (part of) a figure.

    kind : "case" or "sweep".
    name : its registered name (``richlazy list`` / ``richlazy sweep --list``).
    suite : the smallest suite it runs in ("quick" or "full").
    figures : figure files of the case's report folder that draw the target.
    quantities : name prefixes of the case's compared quantities behind the target (empty: all).
    recorded : for a full-suite case without a committed report, the disagreement recorded for
        it in ``docs/notes/validation_log.md`` ("" when none is recorded).
    """

    kind: str
    name: str
    suite: str
    figures: tuple[str, ...]
    quantities: tuple[str, ...] = ()
    recorded: str = ""


@dataclass(frozen=True)
class Entry:
    """One figure or table of a paper's main text.

    key : ``"000:fig6"``; paper : ``"000"``; what : the caption in a few words;
    status : one of :data:`STATUSES`; producers : the cases drawing it (none when not
    implemented); note : why not implemented, the classification of a disagreement, or which part
    of the target the producers cover.
    """

    key: str
    paper: str
    what: str
    status: str
    producers: tuple[Producer, ...] = ()
    note: str = ""


def _case(name, suite, figures, quantities=(), recorded=""):
    return Producer("case", name, suite, tuple(figures), tuple(quantities), recorded)


_OPEN = "open (docs/validation_classes.json)"
_LOG = "docs/notes/validation_log.md"

CATALOGUE: tuple[Entry, ...] = (
    # ---- 000: coding schemes ------------------------------------------------------------------
    Entry("000:fig1", "000", "lazy vs non-lazy regimes: sketch, feature spaces, kernels",
          "not implemented",
          note="an overview illustration (L = 1, m = 1, N = P = 500); no case draws its lazy vs "
               "non-lazy feature-space and kernel panels"),
    Entry("000:table1", "000", "glossary of neural coding terminology", "not implemented",
          note="terminology only: no numbers to reproduce"),
    Entry("000:fig2", "000", "coding schemes of the feature layer (linear, sigmoid, ReLU): "
          "readouts, activations, outputs", "disagreement",
          (_case("coding/linear-toy", "quick", ("readouts.png",), ("U[",)),
           _case("coding/sigmoid-toy", "full",
                 ("readouts_vs_codes.png", "activation_raster.png", "code_fractions.png"),
                 recorded="open disagreement: class-0 readouts of codes 0-1-1 and 1-1-1 below "
                          f"the conditional theory ({_LOG})"),
           _case("coding/relu-toy", "quick", ("readouts.png", "activation_raster.png"))),
          note=f"coding/relu-toy not mixed, {_OPEN}; coding/sigmoid-toy open ({_LOG})"),
    Entry("000:fig3", "000", "lower-layer activations and kernels of L = 3 networks "
          "(linear, sigmoid, ReLU)", "disagreement",
          (_case("coding/deep-linear", "full", ("kernel_K3.png",),
                 recorded="disagrees at N = P by a finite-width correction (U 9 % low, learned "
                          f"kernels 5-18 % high) that shrinks with N ({_LOG})"),
           _case("coding/deep-sigmoid-3", "quick", ("persistence_by_layer.png", "codes_over_time.png")),
           _case("coding/deep-relu", "full",
                 ("strong_neurons_by_layer.png", "feature_layer_outliers.png",
                  "top_neurons_by_layer.png"),
                 recorded=f"open disagreement: theory z and a 7-16 % above the samples ({_LOG})")),
          note=f"coding/deep-sigmoid-3 not equilibrated, {_OPEN}; coding/deep-linear finite-width "
               f"correction and coding/deep-relu open ({_LOG})"),
    Entry("000:fig4", "000", "feature-layer readout and preactivation posteriors vs theory, "
          "and their sampling dynamics", "disagreement",
          (_case("coding/linear-toy", "quick", ("readouts.png",), ("U[",)),
           _case("coding/sigmoid-toy", "full", ("readouts_vs_codes.png",),
                 recorded="open disagreement: class-0 readouts of codes 0-1-1 and 1-1-1 below "
                          f"the conditional theory ({_LOG})"),
           _case("coding/relu-toy", "quick", ("readouts.png", "outlier_readouts.png")),
           _case("coding/persistence", "quick", ("code_persistence.png",))),
          note=f"coding/relu-toy not mixed and coding/persistence not equilibrated, {_OPEN}"),
    Entry("000:fig5", "000", "first-layer code switching of an L = 2 sigmoid network",
          "disagreement",
          (_case("coding/deep-sigmoid", "quick", ("codes_over_time.png", "persistence_by_layer.png")),
           _case("coding/deep-sigmoid-annealed", "full", ("annealing_diagnostics.png",))),
          note=f"coding/deep-sigmoid not mixed, {_OPEN}; its population annealing "
               "(coding/deep-sigmoid-annealed, full report) not equilibrated"),
    Entry("000:fig6", "000", "MNIST, L = 1: activations, kernels, mean predictor, per-class "
          "generalisation error vs theory and GP", "disagreement",
          (_case("coding/real-images", "quick", ("fig6_panels.png", "generalisation_errors.png")),),
          note=f"coding/real-images not equilibrated (sigmoid and ReLU chains frozen), {_OPEN}; "
               "MNIST digits 0-2 at P = 30 in the quick suite"),
    Entry("000:fig7", "000", "CIFAR-10, L = 2 sigmoid network: activations, readouts, predictor",
          "not implemented",
          note="needs the CIFAR-10 training set (not shipped; no network access) and sampling at "
               "N = 1000, P = 50 000"),
    # ---- 002: curse of detail -----------------------------------------------------------------
    Entry("002:fig1", "002", "schematic of the approach (alignment bound, prior vs posterior)",
          "not implemented", note="a schematic: no data"),
    Entry("002:fig2a", "002", "two-layer erf net: posterior overlap histogram vs the LDT tilted "
          "density", "disagreement",
          (_case("ldt/tilted-histogram", "full", ("ldt_tilted_histogram.png",),
                 recorded="agrees at P = 240, disagrees at P = 480 (1.008 vs 1.52 outliers per "
                          f"network; class (b), {_LOG})"),),
          note=f"(a) at P = 240, (b) theory/reconstruction error at P = 480 ({_LOG})"),
    Entry("002:fig2b", "002", "two-layer erf net: sample complexity P_* vs d", "disagreement",
          (_case("ldt/pstar-exponent", "full", ("ldt_pstar_exponent.png",),
                 recorded="paper size not run; at the quick size the fitted exponent 0.86 +- 0.09 "
                          f"vs 1.45 (class (b), {_LOG})"),),
          note="(b) theory or reconstruction error at the quick size (docs/validation_classes.json; "
               f"exact chains move the exponent away from the LDT's); paper size not run ({_LOG})"),
    Entry("002:fig2c", "002", "two-layer erf net: specialists vs width, M ∝ sqrt(N/d)", "not run",
          (_case("ldt/specialists-width", "full", ("ldt_specialists_width.png",)),),
          note="the case has not been run (meant for a GPU); an exploration with exact chains "
               f"found the exponent 0.54 +- 0.05 vs 1/2 ({_LOG})"),
    Entry("002:fig3a", "002", "three-layer erf net: alignment vs P/d for several d",
          "not implemented",
          note="no three-layer network simulation (the theory's scaling row: `richlazy tables`)"),
    Entry("002:fig3b", "002", "softmax attention: alignment and test MSE vs P/sqrt(L)",
          "not implemented",
          note="no attention model or sampler (the theory's scaling row: `richlazy tables`)"),
    Entry("002:fig3c", "002", "three-layer erf net: layer-1/layer-2 overlap histograms vs N_1",
          "not implemented", note="no three-layer network simulation"),
    Entry("002:table1", "002", "P_* scaling of the three-layer FCN's feature-learning patterns",
          "not implemented",
          note="a symbolic table, printed by `richlazy tables --model fcn3-erf-He3` (richlazy's "
               "reconstruction; theory only, no case compares it with a simulation)"),
    # ---- 003: equality reasoning --------------------------------------------------------------
    Entry("003:fig1a", "003", "rich model: hidden-weight alignment vs readout weight",
          "disagreement",
          (_case("equality/weight-alignment", "full", ("weight_alignment.png",), ("rich",),
                 recorded="readout-weighted alignment +-0.92 vs the max-margin +-1 (top-10 % "
                          f"units pass; {_LOG})"),),
          note=f"open ({_LOG}, docs/equality.md)"),
    Entry("003:fig1b", "003", "rich model: test accuracy over d and training symbols L",
          "reduced size",
          (_case("equality/phase-diagram", "quick", ("phase_diagram.png",), ("rich",)),),
          note="quick: d = 8-64, L = 2-1024, m = 128 (paper: m = 4096, d up to 256)"),
    Entry("003:fig1c", "003", "test accuracy vs L for several richness gamma, with the rich "
          "theory (Eq. 3)", "disagreement",
          (_case("equality/gamma-vs-L", "quick", ("gamma_vs_L.png",)),
           _case("equality/rich-accuracy-vs-L", "full", ("rich_accuracy_vs_L.png",),
                 recorded="open disagreement: rich networks 1.5-7 points below Eq. (3) for "
                          f"L >= 3 ({_LOG})")),
          note="the trends agree at the quick size (equality/gamma-vs-L); the comparison with "
               f"Eq. (3) is an open disagreement ({_LOG}, docs/equality.md)"),
    Entry("003:fig1d", "003", "lazy model: hidden-weight alignment vs readout weight",
          "disagreement",
          (_case("equality/weight-alignment", "full", ("weight_alignment.png",), ("lazy",),
                 recorded="the lazy alignment agrees (-0.0005 +- 0.007 vs 0); the case's rich "
                          f"alignment does not ({_LOG})"),),
          note=f"the case is an open disagreement through its rich half ({_LOG})"),
    Entry("003:fig1e", "003", "lazy model: test accuracy over d and L, boundary L ∝ d^2",
          "reduced size",
          (_case("equality/phase-diagram", "quick", ("phase_diagram.png",), ("lazy",)),),
          note="quick: d = 8-64, m = 128, 2000 steps (paper: m = 4096, 50 000 steps)"),
    Entry("003:fig1f", "003", "test accuracy vs input dimension for several gamma",
          "reduced size",
          (_case("equality/dimension-dependence", "quick", ("dimension_dependence.png",)),),
          note="rich vs lazy only"),
    Entry("003:fig2", "003", "noisy same-different: accuracy vs L against the Bayes-optimal "
          "classifiers", "reduced size",
          (_case("equality/noisy-bayes", "quick", ("noisy_bayes.png",)),),
          note="quick: d = 16, m = 128 (paper: d = 64, m = 1024)"),
    Entry("003:fig3a", "003", "PSVRT example images", "not implemented",
          note="the PSVRT generator exists (richlazy.simulate.psvrt_batch) but no case draws "
               "examples"),
    Entry("003:fig3b", "003", "PSVRT: accuracy vs training bit-patterns", "reduced size",
          (_case("equality/vision", "quick", ("vision.png",), ("psvrt",)),),
          note="rich vs lazy; quick: 4-pixel patches on a 3 x 3 grid, 1500 steps"),
    Entry("003:fig3c", "003", "PSVRT: accuracy vs image width", "not implemented",
          note="equality/vision varies the number of patterns, not the image width"),
    Entry("003:fig3d", "003", "Pentomino example images", "not implemented",
          note="the Pentomino generator exists (richlazy.simulate.pentomino_batch) but no case "
               "draws examples"),
    Entry("003:fig3e", "003", "Pentomino: accuracy vs training shapes", "reduced size",
          (_case("equality/vision", "quick", ("vision.png",), ("pentomino",)),),
          note="rich vs lazy; quick: 2 x 2 patches, 1500 steps"),
    Entry("003:fig3f", "003", "Pentomino: accuracy vs image width", "not implemented",
          note="equality/vision varies the number of shapes, not the image width"),
    Entry("003:fig3g", "003", "CIFAR-100 same-different example images", "not implemented",
          note="needs CIFAR-100, which is not shipped (no network access)"),
    Entry("003:fig3h", "003", "CIFAR-100 same-different: accuracy vs training classes",
          "not implemented",
          note="needs CIFAR-100 and ImageNet-pretrained VGG-16 weights, neither shipped"),
    # ---- 004: richness measure ----------------------------------------------------------------
    Entry("004:fig1", "004", "label-encoded MNIST: rich (full backprop) vs lazy (last layer), "
          "D_LR and eigen-visualisation", "not implemented",
          note="the label-encoded MNIST task is not implemented; richness/last-layer-vs-full "
               "compares the two trainings on plain images (004:table3)"),
    Entry("004:table1", "004", "richness metrics under weight decay with a negligible learning "
          "rate", "not implemented", note="no case trains this setting"),
    Entry("004:table2", "004", "richness metrics vs target downscaling alpha", "reduced size",
          (_case("richness/target-scale", "quick", ("dlr_vs_alpha.png", "eigen_alpha.png"),
                 ("D_LR",)),),
          note="the D_LR trend only (alpha = 0.25, 1, 4; ReLU MLP ensembles on Fashion-MNIST or "
               "digits); not the S_init, parameter-norm and NC1 rows"),
    Entry("004:table3", "004", "D_LR and accuracy across setups (grokking, ResNet18, VGG16, CNN)",
          "reduced size",
          (_case("richness/last-layer-vs-full", "quick", ("eigen_last_layer_vs_full.png",)),),
          note="only the last-layer-only vs full-backprop row (an MLP on images); the other rows "
               "need ResNet18/VGG16 on CIFAR or a transformer on modular division"),
    Entry("004:fig2", "004", "ResNet18 on CIFAR-10: learning curves and D_LR vs data size",
          "not implemented", note="needs CIFAR-10 (not shipped) and ResNet18 training"),
    Entry("004:fig3", "004", "VGG16 on CIFAR-100 with and without batch normalisation",
          "not implemented", note="needs CIFAR-100 (not shipped) and VGG16 training"),
    Entry("004:fig4", "004", "ResNet18 on CIFAR-100: role of the learning rate",
          "not implemented", note="needs CIFAR-100 (not shipped) and ResNet18 training"),
    Entry("004:fig5", "004", "feature quality, utilisation and intensity over training "
          "(ResNet18, CIFAR-100)", "not implemented",
          note="needs CIFAR-100 (not shipped) and ResNet18 training"),
)
