"""The coding/deep-linear case (full suite only) end to end at a tiny size."""

import dataclasses

import numpy as np
from cli_helpers import resize_case, validate_one
from richlazy.simulate import orthogonal_toy_task
from richlazy.theory import input_kernel, solve_linear_network
from richlazy.validate.cases.coding import _deep_linear


def test_deep_linear_case_runs_at_a_tiny_size(tmp_path, monkeypatch):
    tiny = dataclasses.replace(_deep_linear.SIZES.full, L=3, N=10, P=12, N0=16, n_chains=2, T=0.05,
                               n_steps=120, burn_in=40, thin=2, y_minus=-0.5)
    resize_case(monkeypatch, _deep_linear.CASE, full=tiny)
    out = tmp_path / "rep"
    _, case = validate_one(out, "coding/deep-linear", suite="full", seed=1)
    assert case["error"] is None
    qs = {q["name"]: q for q in case["quantities"]}
    assert len(qs) == 6 + 3 * (3 + 6) + 9
    U00 = qs["U[0,0] (readout variance)"]
    assert U00["simulation"] > 0 and U00["stderr"] > 0
    # the theory column is solve_linear_network's: on the orthogonal toy task K0 = I and Y are
    # fixed by the class ratios, so the task seed does not change it
    t = orthogonal_toy_task(12, 16, y_plus=1.0, y_minus=-0.5, seed=0)
    sol = solve_linear_network(input_kernel(t.X), t.Y, L=3, sigma_a2=12 ** (-1 / 3))
    assert np.isclose(U00["theory"], sol.U[0, 0], rtol=1e-10)
    K1b = qs["K_1 block (0,0) (learned part)"]["theory"]
    assert np.isclose(K1b, sol.kernels[0][0, 1], rtol=1e-10)  # inputs 0, 1 are both class 0
    assert (out / "figures" / "coding_deep-linear" / "kernel_K3.png").exists()
