"""Cases for seed 003 (equality reasoning, Tong & Pehlevan).

* ``_rich``   equality/rich-accuracy-vs-L, equality/weight-alignment (rich regime, App. C)
* ``_lazy``   equality/dimension-dependence, equality/ntk-vs-lazy, equality/activation-change
              (lazy regime and γ / d scaling, App. D, F)
* ``_noisy``  equality/noisy-bayes (Bayes-optimal classifiers, App. E)
* ``_vision`` equality/vision (PSVRT and Pentomino, Fig. 3)
* ``_figures`` equality/phase-diagram, equality/gamma-vs-L (Fig. 1b/1e and 1c/C3 as sweeps of
              the sd-accuracy experiment, richlazy's and the published protocol)
* ``_common`` ensemble training, NTK-machine references, the Eq. (C.18) accuracy band, the
              comparison rules of the declarations, error-bar plotting

Accuracies are "best over training" (the seed's measure, App. G.1: the maximum of the test
accuracy over the evaluations, selected on the test set itself) unless a quantity says "final".
Standard errors are seed-to-seed (one ensemble member per seed). On a CPU the cases run with one
torch thread: the tensors are small and intra-op threads mostly add contention on a 2-core box.
"""
