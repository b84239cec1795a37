"""richlazy.validate.recipes: the width extrapolation x(N) = x_inf + b/N of the correlated-class
ReLU cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from richlazy.validate.recipes import fit_inverse_width


def test_width_fit_recovers_an_exact_inverse_width_law():
    N = np.array([100.0, 200.0, 400.0])
    x_inf, se_inf, b, chi2 = fit_inverse_width(0.55 - 3.0 / N, [0.01, 0.01, 0.01], N)
    assert x_inf == pytest.approx(0.55, abs=1e-12)
    assert b == pytest.approx(-3.0, abs=1e-9)
    assert chi2 == pytest.approx(0.0, abs=1e-20)
    # equal weights: SE(x_inf)^2 = se^2 sum(u^2) / (n sum(u^2) - (sum u)^2), u = 1/N
    u = 1.0 / N
    expect = 0.01 * math.sqrt(np.sum(u**2) / (3 * np.sum(u**2) - np.sum(u) ** 2))
    assert se_inf == pytest.approx(expect, rel=1e-12)


def test_width_fit_error_and_chi2_are_calibrated_by_monte_carlo():
    """Gaussian data on x_inf + b/N with unequal errors: the fitted x_inf scatters with the
    reported SE, and chi^2 (one degree of freedom) has mean 1."""
    rng = np.random.default_rng(3)
    N = np.array([100.0, 200.0, 400.0])
    se = np.array([0.004, 0.006, 0.009])
    fits = np.array([fit_inverse_width(0.5 + 2.0 / N + se * rng.standard_normal(3), se, N)
                     for _ in range(4000)])
    z = (fits[:, 0] - 0.5) / fits[:, 1]
    assert abs(z.mean()) < 0.06 and abs(z.std() - 1.0) < 0.04
    assert abs(fits[:, 3].mean() - 1.0) < 0.08


def test_width_fit_rejects_bad_input():
    with pytest.raises(ValueError, match="se"):
        fit_inverse_width([1.0, 2.0], [0.1, 0.0], [100, 200])
    with pytest.raises(ValueError, match="N must be distinct"):
        fit_inverse_width([1.0, 2.0], [0.1, 0.1], [100, 100])
    with pytest.raises(ValueError, match="length >= 2"):
        fit_inverse_width([1.0], [0.1], [100])
