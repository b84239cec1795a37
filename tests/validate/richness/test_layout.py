"""Layout of the richness measures and the equality / richness case modules after the split."""

import subprocess
import sys

import numpy as np
import pytest


def test_richness_package_names_are_the_validate_exports():
    import richlazy.validate as v
    from richlazy.validate import richness

    for name in richness.__all__:
        assert getattr(richness, name) is getattr(v, name)


def test_richness_sweep_stderr():
    from richlazy.validate import RichnessSweep

    M = np.array([[0.1, 0.2, 0.4], [0.5, np.nan, 0.7], [1.0, 1.0, 1.0]])
    se = RichnessSweep("k", np.arange(3.0), M).stderr
    assert se[0] == pytest.approx(np.std(M[0], ddof=1) / np.sqrt(3))
    assert np.isnan(se[1]) and se[2] == 0.0
    assert np.isnan(RichnessSweep("k", np.arange(2.0), np.ones((2, 1))).stderr).all()


@pytest.mark.slow
def test_equality_case_modules_register_every_case():
    # in a fresh interpreter: other tests swap the registry dict while modules first import
    code = ("import importlib; from richlazy.validate.core import _registry as r; "
            "[importlib.import_module('richlazy.validate.cases.equality.' + m) "
            "for m in ('_rich', '_lazy', '_noisy', '_vision')]; "
            "print('\\n'.join(sorted(r._CASES.specs)))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    expected = {"equality/rich-accuracy-vs-L", "equality/weight-alignment",
                "equality/dimension-dependence", "equality/ntk-vs-lazy",
                "equality/activation-change", "equality/noisy-bayes", "equality/vision"}
    assert set(out.stdout.split()) == expected
