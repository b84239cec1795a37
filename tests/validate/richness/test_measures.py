"""Tests of the richness measures of seed 004 (CKA, D_LR, Nyström, D_eff, NC1/NC2, baselines)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from richlazy.validate import (
    RichnessSweep,
    cka,
    class_statistics,
    dlr,
    effective_dimension,
    eigen_curves,
    linear_cka,
    nc1,
    nc2_etf,
    nystrom_eigen,
    parameter_norm_sq,
    s_init,
)


def _centred_orthonormal(rng, n, k):
    """n x k matrix with orthonormal columns, each orthogonal to the constant vector."""
    M = rng.standard_normal((n, k))
    M -= M.mean(axis=0)
    return np.linalg.qr(M)[0]


def _orthogonal(rng, k):
    return np.linalg.qr(rng.standard_normal((k, k)))[0]


# ----------------------------------------------------------------------------- D_LR exact values


@pytest.mark.parametrize("with_constant", [False, True])
def test_dlr_zero_when_features_span_output_space(with_constant):
    """T = T_MP (Definition 1): features are an isotropic basis of the learned-function space
    Ĥ (plus, optionally, the constant function); D_LR = 0 in both B forms."""
    rng = np.random.default_rng(0)
    n, C, p = 200, 4, 12
    Q = _centred_orthonormal(rng, n, C)
    F = 3.0 * Q @ _orthogonal(rng, C)  # isotropic outputs
    W = np.linalg.qr(rng.standard_normal((p, C)))[0].T * 2.5  # C x p, orthonormal rows
    Phi = Q @ W
    if with_constant:
        F = F + 0.7  # Ĥ contains the constant function
        Phi = Phi + rng.standard_normal(p)  # the constant function is a feature direction
    assert abs(dlr(Phi, F)) < 1e-12
    assert abs(dlr(Phi, F, whiten_outputs=True)) < 1e-12
    # Definition 1 needs only span(F) = Ĥ: anisotropic outputs give 0 in the whitened form ...
    F_aniso = Q @ rng.standard_normal((C, C)) + (0.7 if with_constant else 0.0)
    assert abs(dlr(Phi, F_aniso, whiten_outputs=True)) < 1e-12
    # ... but not in the App. E.1 form B = F F^T, which assumes isotropic outputs.
    assert dlr(Phi, F_aniso) > 1e-3


def test_dlr_closed_form_for_one_extra_feature_direction():
    """c(A) = P_k + s^4-weighted extra direction v ⟂ Ĥ, B = P_k:
    CKA = k / (sqrt(k + s^4) sqrt(k)), so D_LR = 1 - sqrt(k / (k + s^4))."""
    rng = np.random.default_rng(1)
    n, k = 150, 3
    B = _centred_orthonormal(rng, n, k + 1)
    Q, v = B[:, :k], B[:, k]
    for s in (0.3, 1.0, 2.0):
        Phi = np.hstack([Q, s * v[:, None]]) @ _orthogonal(rng, k + 1)
        expect = 1.0 - math.sqrt(k / (k + s**4))
        assert dlr(Phi, Q) == pytest.approx(expect, rel=1e-12, abs=1e-14)


def test_dlr_matches_naive_gram_formula_and_is_blocked_exactly():
    rng = np.random.default_rng(2)
    Phi = np.abs(rng.standard_normal((90, 7)))
    F = Phi[:, :3] @ rng.standard_normal((3, 3)) + 0.3 * rng.standard_normal((90, 3))
    H = np.eye(90) - 1.0 / 90
    A, B = H @ Phi @ Phi.T @ H, H @ F @ F.T @ H
    naive = 1.0 - np.sum(A * B) / (np.linalg.norm(A) * np.linalg.norm(B))
    assert dlr(Phi, F) == pytest.approx(naive, rel=1e-12)
    for rows in (1, 7, 89, 1000):
        assert dlr(Phi, F, block_rows=rows) == pytest.approx(naive, rel=1e-12)
    # float32 storage, float64 accumulation: only the float32 rounding of the inputs remains
    assert dlr(Phi.astype(np.float32), F) == pytest.approx(naive, rel=1e-5)


def test_dlr_batched_equals_looped_and_broadcasts():
    rng = np.random.default_rng(3)
    Phi = rng.standard_normal((4, 60, 5))
    F = rng.standard_normal((4, 60, 2))
    batched = dlr(Phi, F)
    assert batched.shape == (4,)
    np.testing.assert_allclose(batched, [dlr(Phi[e], F[e]) for e in range(4)], rtol=1e-13)
    shared = dlr(Phi, F[0])
    np.testing.assert_allclose(shared, [dlr(Phi[e], F[0]) for e in range(4)], rtol=1e-13)
    wb = dlr(Phi, F, whiten_outputs=True)
    np.testing.assert_allclose(wb, [dlr(Phi[e], F[e], whiten_outputs=True) for e in range(4)], rtol=1e-13)


def test_cka_batched_broadcast_equals_looped():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((3, 30, 4))
    Y = X[0, :, :2] + rng.standard_normal((30, 2))
    K = np.einsum("eij,ekj->eik", X, X)
    for deb in (False, True):
        looped = [linear_cka(X[e], Y, debiased=deb) for e in range(3)]
        np.testing.assert_allclose(linear_cka(X, Y, debiased=deb), looped, rtol=1e-12)
        np.testing.assert_allclose(cka(K, Y @ Y.T, debiased=deb), looped, rtol=1e-9)


def test_dlr_accepts_torch_tensors():
    g = torch.Generator()
    g.manual_seed(0)
    Phi = torch.randn((50, 6), generator=g, requires_grad=True)
    F = torch.randn((50, 3), generator=g)
    ref = dlr(Phi.detach().numpy().astype(np.float64), F.numpy().astype(np.float64))
    assert dlr(Phi, F) == pytest.approx(ref, rel=1e-12)


# ----------------------------------------------------------------------------- invariances


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    scale=st.floats(1e-3, 1e3),
    shift=st.floats(-10.0, 10.0),
)
def test_dlr_invariant_to_scaling_rotation_and_shift(seed, scale, shift):
    rng = np.random.default_rng(seed)
    Phi = np.abs(rng.standard_normal((40, 6)))
    F = Phi @ rng.standard_normal((6, 3)) + rng.standard_normal((40, 3))
    base = dlr(Phi, F)
    assert 0.0 <= base <= 1.0 + 1e-12
    O = _orthogonal(rng, 6)
    assert dlr(scale * Phi @ O + shift, F) == pytest.approx(base, rel=1e-9, abs=1e-12)
    # outputs: global scale and right-orthogonal mixing leave F F^T invariant
    assert dlr(Phi, F @ _orthogonal(rng, 3) / scale) == pytest.approx(base, rel=1e-9, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), debiased=st.booleans())
def test_cka_symmetric_bounded_and_equal_to_gram_form(seed, debiased):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 40))
    X = rng.standard_normal((n, int(rng.integers(1, 8))))
    Y = X[:, :1] * rng.standard_normal() + rng.standard_normal((n, int(rng.integers(1, 5))))
    a, b = linear_cka(X, Y, debiased=debiased), linear_cka(Y, X, debiased=debiased)
    assert a == pytest.approx(b, rel=1e-12, abs=1e-14)
    if not debiased:
        assert 0.0 <= a <= 1.0 + 1e-12
    assert cka(X @ X.T, Y @ Y.T, debiased=debiased) == pytest.approx(a, rel=1e-9, abs=1e-12)
    assert cka(X @ X.T, X @ X.T, debiased=debiased) == pytest.approx(1.0, rel=1e-12)


def test_cka_of_independent_gaussians_biased_vs_debiased():
    """Independent isotropic X (n x p), Y (n x q): the plug-in CKA concentrates at
    sqrt(pq / ((n+p)(n+q))) (leading-order moments of Wishart products), the debiased one at 0
    with standard deviation ~ sqrt(2)/n."""
    rng = np.random.default_rng(5)
    n, p, q, reps = 400, 40, 30, 20
    X = rng.standard_normal((reps, n, p))
    Y = rng.standard_normal((reps, n, q))
    biased = linear_cka(X, Y)
    unbiased = linear_cka(X, Y, debiased=True)
    expect = math.sqrt(p * q / ((n + p) * (n + q)))
    # relative fluctuation of each biased value ~ sqrt(2/(pq)); mean of 20 values
    assert biased.mean() == pytest.approx(expect, rel=0.05)
    sd = math.sqrt(2.0) / n
    assert abs(unbiased.mean()) < 4 * sd / math.sqrt(reps)
    assert unbiased.std() < 3 * sd


# ----------------------------------------------------------------------------- Nyström


def test_nystrom_exact_when_samples_are_the_distribution():
    """Uniform grid on [0, 2π) is the whole input distribution: Φ = [c, a_k cos kx, b_k sin kx]
    has eigenfunctions 1, √2 cos kx, √2 sin kx with eigenvalues c², a_k²/2, b_k²/2."""
    n = 64
    x = 2 * np.pi * np.arange(n) / n
    a, b = np.array([3.0, 2.0, 1.2]), np.array([2.5, 1.5, 0.8])
    c = 4.0
    cols = [np.full(n, c)]
    exact_funcs = [np.ones(n)]
    exact_vals = [c**2]
    for k in range(3):
        cols += [a[k] * np.cos((k + 1) * x), b[k] * np.sin((k + 1) * x)]
        exact_funcs += [math.sqrt(2) * np.cos((k + 1) * x), math.sqrt(2) * np.sin((k + 1) * x)]
        exact_vals += [a[k] ** 2 / 2, b[k] ** 2 / 2]
    Phi = np.column_stack(cols) @ _orthogonal(np.random.default_rng(0), 7)  # rotate features
    eig = nystrom_eigen(Phi)
    order = np.argsort(exact_vals)[::-1]
    np.testing.assert_allclose(eig.eigenvalues[0], np.array(exact_vals)[order], rtol=1e-12)
    e = eig.eigenfunctions(Phi)
    for j, idx in enumerate(order):
        overlap = abs(e[:, j] @ exact_funcs[idx]) / n  # <e_j | exact>
        assert overlap == pytest.approx(1.0, abs=1e-10)


def test_nystrom_eigenvalues_converge_on_known_gaussian_spectrum():
    """App. J setup: Φ ~ N(0, diag(ρ)), ρ_k = k^-1.5. For well separated leading eigenvalues the
    Nyström estimate s_k has relative fluctuation sqrt(2/n) (chi-square), bias O(p/n)."""
    rng = np.random.default_rng(7)
    p, n = 10, 40_000
    rho = np.arange(1, p + 1) ** -1.5
    Phi = rng.standard_normal((n, p)) * np.sqrt(rho)
    eig = nystrom_eigen(Phi @ _orthogonal(rng, p))
    rel = np.abs(eig.eigenvalues[0, :4] - rho[:4]) / rho[:4]
    assert np.all(rel < 5 * math.sqrt(2 / n) + 0.01)
    # eigenfunctions are functions: on fresh samples they stay orthonormal up to O(1/sqrt(n))
    rot = _orthogonal(np.random.default_rng(99), p)
    eig = nystrom_eigen(Phi @ rot)
    fresh = (rng.standard_normal((n, p)) * np.sqrt(rho)) @ rot
    e = eig.eigenfunctions(fresh)[:, :4]
    np.testing.assert_allclose(e.T @ e / n, np.eye(4), atol=10 / math.sqrt(n))


def test_effective_dimension_values():
    assert effective_dimension(np.array([5.0, 1.0, 1.0, 1.0, 0.0])) == pytest.approx(4.0)
    assert effective_dimension(np.array([1.0, 1.0, 1.0]), drop_first=False) == pytest.approx(3.0)
    # two unequal eigenvalues after the first: exp of the Shannon entropy
    pr = np.array([0.75, 0.25])
    expect = 1 + math.exp(-np.sum(pr * np.log(pr)))
    assert effective_dimension(np.array([9.0, 3.0, 1.0])) == pytest.approx(expect)
    batched = effective_dimension(np.array([[5.0, 1.0, 1.0], [5.0, 1.0, 0.0]]))
    np.testing.assert_allclose(batched, [3.0, 2.0])
    with pytest.raises(ValueError, match="eigenvalues must be non-negative"):
        effective_dimension(np.array([1.0, -0.5]))


def test_eigen_curves_mp_operator_and_monotonicity():
    rng = np.random.default_rng(11)
    n, C, p = 120, 4, 10
    labels = np.repeat(np.arange(C), n // C)
    Y = np.eye(C)[labels]
    # MP features: constant + isotropic class indicators, rotated into p dimensions
    base = np.hstack([np.ones((n, 1)), math.sqrt(C) * Y])
    Phi = base @ np.linalg.qr(rng.standard_normal((p, C + 1)))[0].T
    c = eigen_curves(Phi, Y, Y)
    assert c.learned_power[0, C - 1] == pytest.approx(1.0, abs=1e-12)  # first C span Ĥ
    assert c.target_power[0, C - 1] == pytest.approx(1.0, abs=1e-12)
    assert c.d_eff[0] == pytest.approx(C)
    assert c.rank[0] == C
    # lazy-looking features: random, full rank; curves are non-decreasing, in [0, 1], end at 1
    R = np.abs(rng.standard_normal((n, 30)))
    c2 = eigen_curves(R, Y, R[:, :C] @ rng.standard_normal((C, C)))
    for curve in (c2.target_power[0], c2.learned_power[0]):
        assert np.all(np.diff(curve) >= -1e-12) and curve.min() >= 0
    # Ĥ lies in the span of the features: Π̂(p) = 1. H* does not: Π*(p) = tr(P_Φ P_H*) / dim H*
    assert c2.learned_power[0, -1] == pytest.approx(1.0, abs=1e-9)
    Q_phi, Q_t = np.linalg.qr(R)[0], np.linalg.qr(Y)[0]
    expect = np.linalg.norm(Q_t.T @ Q_phi) ** 2 / C
    assert c2.target_power[0, -1] == pytest.approx(expect, rel=1e-9)
    assert expect < 0.9  # the check is not trivial
    # eigenpairs fitted elsewhere can be reused (e.g. evaluation on test samples)
    c3 = eigen_curves(R, Y, R[:, :C], eig=nystrom_eigen(R))
    np.testing.assert_allclose(c3.eigenvalues, c2.eigenvalues)


# ----------------------------------------------------------------------------- baselines


def test_nc1_zero_under_collapse_and_closed_form():
    rng = np.random.default_rng(12)
    C, m, p = 3, 10, 5
    labels = np.repeat(np.arange(C), m)
    means = rng.standard_normal((C, p))
    assert nc1(means[labels], labels) == pytest.approx(0.0, abs=1e-20)
    assert nc1(means[labels], labels, ridge=0.0) == pytest.approx(0.0, abs=1e-20)
    # C = 2 in 2-d: means ±M e1, within-class residuals ±t along e1 and ±s along e2 (each class
    # half +, half -). Σ_b = M² e1e1^T, Σ_W = 2 diag(t², s²):
    # NC1(pinv) = 2t²/M²; NC1(ridge λ) = 2t²/(M²+λ) + 2s²/λ.
    M, t, s, lam = 2.0, 0.3, 0.1, 1e-2
    pts, lab = [], []
    for cls, sign in ((0, -1.0), (1, 1.0)):
        for r1 in (t, -t):
            for r2 in (s, -s):
                pts.append([sign * M + r1, r2])
                lab.append(cls)
    pts, lab = np.array(pts), np.array(lab)
    assert nc1(pts, lab, ridge=0.0) == pytest.approx(2 * t**2 / M**2, rel=1e-12)
    assert nc1(pts, lab, ridge=lam) == pytest.approx(2 * t**2 / (M**2 + lam) + 2 * s**2 / lam, rel=1e-12)
    st_ = class_statistics(pts, lab)
    np.testing.assert_allclose(st_.sigma_w[0], 2 * np.diag([t**2, s**2]), atol=1e-15)
    np.testing.assert_allclose(st_.sigma_b[0], np.diag([M**2, 0.0]), atol=1e-15)


def test_nc2_simplex_and_non_simplex():
    rng = np.random.default_rng(13)
    C, m = 4, 5
    labels = np.repeat(np.arange(C), m)
    etf = (np.eye(C) - 1.0 / C) @ np.linalg.qr(rng.standard_normal((7, C)))[0].T * 3 + 1.0
    r = nc2_etf(etf[labels] + 0.0, labels)
    assert r.max_cosine_deviation[0] < 1e-12 and r.norm_cv[0] < 1e-12
    assert r.etf_distance[0] < 1e-12 and r.etf_cosine == pytest.approx(-1 / 3)
    # three means at angles 0, 90, 180 degrees around the origin on a circle plus their mean:
    ang = np.deg2rad([0.0, 90.0, 180.0])
    pts = np.column_stack([np.cos(ang), np.sin(ang)])
    lab3 = np.arange(3)
    cen = pts - pts.mean(axis=0)
    cos01 = cen[0] @ cen[1] / np.linalg.norm(cen[0]) / np.linalg.norm(cen[1])
    cos02 = cen[0] @ cen[2] / np.linalg.norm(cen[0]) / np.linalg.norm(cen[2])
    r3 = nc2_etf(pts, lab3)
    assert r3.cosines[0, 0, 1] == pytest.approx(cos01)
    expect = max(abs(cos01 + 0.5), abs(cos02 + 0.5))
    assert r3.max_cosine_deviation[0] == pytest.approx(expect, rel=1e-12)


def test_s_init_and_parameter_norm():
    rng = np.random.default_rng(14)
    F0 = rng.standard_normal((30, 4))
    assert s_init(F0, 2 * F0 @ _orthogonal(rng, 4)) == pytest.approx(1.0)
    F1 = rng.standard_normal((30, 4))
    assert s_init(F0, F1) == pytest.approx(linear_cka(F0, F1))
    lin = torch.nn.Linear(3, 2)
    expect = float((lin.weight.detach() ** 2).sum() + (lin.bias.detach() ** 2).sum())
    assert parameter_norm_sq(lin) == pytest.approx(expect, rel=1e-6)
    assert parameter_norm_sq([np.ones((2, 3)), np.full(4, 2.0)]) == pytest.approx(22.0)
    np.testing.assert_allclose(
        parameter_norm_sq([np.ones((2, 3)), np.arange(4.0).reshape(2, 2)], batched=True),
        [3.0 + 1.0, 3.0 + 13.0],
    )


def test_richness_sweep_stats():
    sw = RichnessSweep("alpha", np.array([1.0, 2.0]), np.array([[0.1, 0.3], [0.5, 0.5]]))
    np.testing.assert_allclose(sw.mean, [0.2, 0.5])
    np.testing.assert_allclose(sw.stderr, [math.sqrt(0.02) / math.sqrt(2), 0.0])


# ----------------------------------------------------------------------------- validation


def test_input_validation_messages():
    X = np.zeros((5, 3))
    X[:, 0] = np.arange(5)
    with pytest.raises(ValueError, match=r"features must have shape \(n, k\) or \(E, n, k\)"):
        dlr(np.zeros(5), X)
    with pytest.raises(ValueError, match="features needs at least 2 samples .* got n=1"):
        dlr(np.zeros((1, 3)), np.zeros((1, 2)))
    with pytest.raises(ValueError, match="same number of samples n, got 5 and 4"):
        dlr(X, np.zeros((4, 2)))
    with pytest.raises(ValueError, match=r"ensemble sizes of features \(2\) and outputs \(3\)"):
        dlr(np.zeros((2, 5, 3)), np.zeros((3, 5, 2)))
    bad = X.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="features contains NaN or infinite values"):
        dlr(bad, X)
    with pytest.raises(ValueError, match="outputs contains NaN or infinite values"):
        dlr(X, bad, whiten_outputs=True)
    with pytest.raises(ValueError, match="X needs at least 4 samples"):
        linear_cka(X[:3], X[:3], debiased=True)
    with pytest.raises(TypeError, match="X must be a real numeric array"):
        linear_cka(X.astype(complex), X)
    with pytest.raises(ValueError, match="block_rows must be a positive int"):
        dlr(X, X, block_rows=0)
    with pytest.raises(ValueError, match=r"K must be square"):
        cka(np.zeros((3, 4)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="K must be symmetric"):
        cka(np.triu(np.ones((4, 4))), np.eye(4))
    with pytest.raises(ValueError, match="labels must have shape"):
        nc1(X, np.zeros(4, dtype=int))
    with pytest.raises(ValueError, match="labels must be non-negative integers"):
        nc1(X, np.array([0, 1, 0.5, 1, 0]))
    with pytest.raises(ValueError, match=r"every class in 0\.\.2 needs at least one sample"):
        nc1(X, np.array([0, 1, 0, 1, 0]), n_classes=3)
    with pytest.raises(ValueError, match="ridge must be a finite number >= 0"):
        nc1(X, np.array([0, 1, 0, 1, 0]), ridge=-1.0)
    with pytest.raises(ValueError, match="rtol must be in"):
        nystrom_eigen(X, rtol=2.0)
    with pytest.raises(ValueError, match="targets must have the same number of samples"):
        eigen_curves(X, np.zeros((4, 2)), X)
    with pytest.raises(ValueError, match=r"features must have shape \(n, 3\)"):
        nystrom_eigen(X).eigenfunctions(np.zeros((5, 4)))
    with pytest.raises(TypeError, match="params must be an array"):
        parameter_norm_sq(3.0)
    with pytest.raises(ValueError, match="params is empty"):
        parameter_norm_sq([])


def test_constant_features_give_nan_not_crash():
    X = np.ones((6, 2))
    assert math.isnan(dlr(X, np.arange(12.0).reshape(6, 2)))


# ----------------------------------------------------------------------------- bench, plots, cases


def test_bench_dlr_small_run_agrees_with_naive():
    from richlazy.validate.benchmarks._richness import bench_dlr, format_bench_dlr

    r = bench_dlr(n=400, p=24, C=5, naive_n=150, seed=1)
    assert r["agreement"] < 1e-12
    assert r["naive_full_gram_bytes"] == 2 * 8 * 400 * 400
    assert r["input_bytes"] == 400 * 24 * 4 + 400 * 5 * 8
    assert 0.0 < r["fast"]["value"] < 1.0
    text = format_bench_dlr(r)
    assert "n=400, p=24, C=5" in text and "tracemalloc" in text
    with pytest.raises(ValueError, match="naive_n must be <= n"):
        bench_dlr(n=10, p=3, C=2, naive_n=20)
    with pytest.raises(ValueError, match="p must be an int >= 2"):
        bench_dlr(n=10, p=1, C=2, naive_n=5)


def test_plots_write_png(tmp_path):
    from richlazy.validate import plot_dlr_vs_knob, plot_eigen_curves

    rng = np.random.default_rng(20)
    Phi = np.abs(rng.standard_normal((3, 80, 12)))
    Y = np.eye(3)[rng.integers(0, 3, 80)]
    c = eigen_curves(Phi, Y, Phi[:, :, :3])
    out = plot_eigen_curves([c, c], tmp_path / "e.png", labels=["a", "b"], d_lr=[0.1, 0.2])
    assert out.exists() and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    sw = RichnessSweep("alpha", np.array([0.5, 1.0, 2.0]), rng.uniform(size=(3, 4)))
    out2 = plot_dlr_vs_knob(sw, tmp_path / "k.png")
    assert out2.exists() and out2.stat().st_size > 1000
    with pytest.raises(ValueError, match="labels has 1 entries for 2 curve sets"):
        plot_eigen_curves([c, c], tmp_path / "x.png", labels=["a"])
    with pytest.raises(TypeError, match="sweep must be a RichnessSweep"):
        plot_dlr_vs_knob({"a": 1}, tmp_path / "y.png")


def test_one_sided_trend_quantity():
    from richlazy.validate.cases.richness._trained import _one_sided

    d = [0.2, 0.25, 0.22, 0.21]
    q = _one_sided("d", d, note="n")
    se = np.std(d, ddof=1) / 2
    assert q.passed and q.tolerance_kind == "gt" and q.tolerance == 3.0
    assert q.name == "d > 0" and q.theory == 0.0 and q.simulation == pytest.approx(0.22)
    assert q.stderr == pytest.approx(se)
    assert not _one_sided("d", [-0.2, -0.25, -0.22], note="").passed  # wrong sign fails
    assert not _one_sided("d", [0.3, -0.2, 0.1, -0.1], note="").passed  # within noise fails
    assert not _one_sided("d", [0.5, 0.5, 0.5], note="").passed  # zero spread: s.e. undefined


def test_nc_min_projection_case_passes(tmp_path):
    from richlazy.validate.cases.richness._trained import case_nc_min_projection
    from richlazy.validate.core._registry import CaseContext

    out = case_nc_min_projection(CaseContext("quick", "cpu", 3, tmp_path, tmp_path, False))
    assert len(out.quantities) == 11
    failed = [q.name for q in out.quantities if not q.passed]
    assert not failed, failed
