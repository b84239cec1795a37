"""Task generators of seed 003: SD, PSVRT, Pentomino."""

import numpy as np
import pytest
import torch
from richlazy.simulate import tasks
from richlazy.simulate.tasks._pentomino import _blur
from sim_helpers import seeded_generator as _g

# ------------------------------------------------------------------ SD


def test_sd_train_batch_balanced_and_uses_only_each_members_symbols():
    g = _g(1)
    S = tasks.sd_symbols(3, 6, 5, generator=g, dtype=torch.float64)
    n_sym = [2, 4, 6]
    x, y = tasks.sd_train_batch(S, 64, n_symbols=n_sym, generator=g)
    assert x.shape == (3, 64, 10) and y.shape == (3, 64)
    assert torch.all(y.sum(1) == 32)
    for e, L in enumerate(n_sym):
        z1, z2 = x[e, :, :5], x[e, :, 5:]
        # every component is one of the member's first L symbols
        assert torch.all((z1[:, None, :] == S[e, None, :L]).all(-1).any(1))
        assert torch.all((z2[:, None, :] == S[e, None, :L]).all(-1).any(1))
        same = torch.all(z1 == z2, dim=1)
        assert torch.equal(same, y[e] == 1)
    # all L(L-1) ordered different pairs occur for L = 4 over many draws
    x, y = tasks.sd_train_batch(S, 2000, n_symbols=n_sym, generator=g)
    idx1 = torch.cdist(x[1, :, :5], S[1, :4]).argmin(1)
    idx2 = torch.cdist(x[1, :, 5:], S[1, :4]).argmin(1)
    pairs = {(int(a), int(b)) for a, b, lab in zip(idx1, idx2, y[1], strict=True) if lab == 0}
    assert len(pairs) == 12


def test_sd_test_pairs_use_fresh_symbols_and_noise_has_variance_sigma2_over_d():
    g = _g(2)
    d = 8
    S = tasks.sd_symbols(1, 5, d, generator=g)
    x, y = tasks.sd_test_batch(1, 400, d, generator=g)
    assert torch.all(y.sum(1) == 200)
    assert torch.cdist(x[0, :, :d], S[0]).min() > 1e-3  # no test symbol is a training symbol
    assert torch.equal(x[0, :200, :d], x[0, :200, d:])
    sigma2 = 0.5
    xn, _ = tasks.sd_train_batch(S.double(), 20000, sigma2=sigma2, generator=g)
    x0, _ = tasks.sd_train_batch(S.double(), 20000, sigma2=0.0, generator=_g(3))
    # noise of a same pair: z1 − z2 = η1 − η2 has variance 2σ²/d per coordinate
    diff = (xn[0, :10000, :d] - xn[0, :10000, d:]).flatten()
    var = diff.var().item()
    n = diff.numel()
    assert abs(var - 2 * sigma2 / d) < 5 * (2 * sigma2 / d) * (2 / n) ** 0.5
    assert torch.all(x0[0, :10000, :d] == x0[0, :10000, d:])


def test_sd_generators_are_deterministic_given_the_generator():
    a = tasks.sd_train_batch(tasks.sd_symbols(2, 4, 3, generator=_g(7)), 16, generator=_g(8))
    b = tasks.sd_train_batch(tasks.sd_symbols(2, 4, 3, generator=_g(7)), 16, generator=_g(8))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


def test_sd_validation():
    S = tasks.sd_symbols(2, 4, 3, generator=_g())
    with pytest.raises(ValueError, match="L must be >= 2"):
        tasks.sd_symbols(2, 1, 3, generator=_g())
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        tasks.sd_train_batch(S, 8, generator=0)
    with pytest.raises(ValueError, match="n_symbols must lie in"):
        tasks.sd_train_batch(S, 8, n_symbols=[1, 4], generator=_g())
    with pytest.raises(ValueError, match="n_symbols must be 2 integers"):
        tasks.sd_train_batch(S, 8, n_symbols=[2, 3, 4], generator=_g())
    with pytest.raises(ValueError, match="sigma2 must be a finite real number >= 0"):
        tasks.sd_test_batch(1, 4, 3, sigma2=-1.0, generator=_g())
    with pytest.raises(ValueError, match="batch_size must be >= 2"):
        tasks.sd_train_batch(S, 1, generator=_g())


# ------------------------------------------------------------------ PSVRT


def _patches(img, p, n_p):
    E, B = img.shape[:2]
    return img.reshape(E, B, n_p, p, n_p, p).permute(0, 1, 2, 4, 3, 5).reshape(E, B, n_p * n_p,
                                                                                 p, p)


def test_psvrt_images_two_patch_aligned_patterns_same_iff_equal():
    g = _g(4)
    ps, n_p = 4, 3
    train = tasks.psvrt_patterns(10, ps, generator=g)
    assert len({tuple(t.flatten().tolist()) for t in train}) == 10
    x, y = tasks.psvrt_batch(train[None].repeat(2, 1, 1, 1), 32, n_patches=n_p, generator=g,
                       flatten=False)
    assert torch.all(y.sum(1) == 16)
    P = _patches(x, ps, n_p)
    occupied = P.abs().sum((-1, -2)) > 0
    assert torch.all(occupied.sum(-1) == 2)
    for e in range(2):
        for b in range(32):
            a, c = P[e, b][occupied[e, b]] * ps
            assert torch.all(a.abs() == 1)
            assert torch.equal(a, c) == bool(y[e, b] == 1)
            assert (torch.abs(train - a).sum((-1, -2)) == 0).any()
    assert torch.allclose(x.flatten(-2).norm(dim=-1), torch.tensor(2.0).sqrt())


def test_psvrt_train_and_test_patterns_are_disjoint():
    g = _g(5)
    ps, n_p = 2, 2  # only 16 possible patterns: collisions would be frequent without exclusion
    train = tasks.psvrt_patterns(6, ps, generator=g)
    x, y = tasks.psvrt_test_batch(3, 40, patch_size=ps, n_patches=n_p, exclude=train, generator=g,
                            flatten=False)
    P = _patches(x, ps, n_p) * ps
    occ = P.abs().sum((-1, -2)) > 0
    pats = P[occ]
    assert pats.shape[0] == 3 * 40 * 2
    codes_train = {tuple(t.flatten().tolist()) for t in train}
    assert all(tuple(p.flatten().tolist()) not in codes_train for p in pats)
    assert torch.all(y.sum(1) == 20)


def test_psvrt_validation():
    with pytest.raises(ValueError, match="n must be <= half"):
        tasks.psvrt_patterns(9, 2, generator=_g())
    with pytest.raises(ValueError, match="n_patterns must lie in"):
        tasks.psvrt_batch(torch.ones(1, 3, 2, 2), 4, n_patterns=[1], generator=_g())
    with pytest.raises(ValueError, match="n_patches must be >= 2"):
        tasks.psvrt_batch(torch.ones(1, 3, 2, 2), 4, n_patches=1, generator=_g())


# ------------------------------------------------------------------ Pentomino


def test_pentomino_counts_and_rotation_classes():
    shapes = tasks.one_sided_pentominoes()
    assert len(shapes) == 18
    assert sum(len(r) for r in shapes) == 63  # the fixed pentominoes
    # symmetric shapes: X (1 rotation), I, Z and its mirror S (2 rotations)
    assert sorted(len(r) for r in shapes)[:4] == [1, 2, 2, 2]

    def mirror(cells):
        return [(r, -c) for r, c in cells]

    free = {min(tasks.pentomino_canonical_id(c), tasks.pentomino_canonical_id(mirror(c)))
            for rots in shapes for c in rots}
    assert len(free) == 12  # the 12 free pentominoes
    for i, rots in enumerate(shapes):
        for cells in rots:
            assert len(cells) == 5
            assert tasks.pentomino_canonical_id([(c, -r) for r, c in cells]) == i  # rotation-closed


def _decode(img, n_p):
    p = tasks.PENTOMINO_PATCH
    P = img.reshape(n_p, p, n_p, p).permute(0, 2, 1, 3).reshape(n_p * n_p, p, p)
    ids = []
    for patch in P:
        cells = (patch > 0.1).nonzero().tolist()
        if cells:
            ids.append(tasks.pentomino_canonical_id(cells))
    return ids


def test_pentomino_same_iff_same_shape_up_to_rotation_and_held_out_split():
    g = _g(6)
    train, test = tasks.split_pentominoes(12, generator=g)
    assert set(train.tolist()).isdisjoint(test.tolist()) and len(test) == 6
    x, y = tasks.pentomino_batch(train[None].repeat(2, 1), 40, n_patches=3, generator=g, flatten=False)
    assert torch.all(y.sum(1) == 20)
    vals = torch.unique(x)
    assert torch.allclose(vals, torch.tensor([0.0, 5**-0.5]))  # no blur on these images
    rotated_same = 0
    for e in range(2):
        for b in range(40):
            ids = _decode(x[e, b], 3)
            assert len(ids) == 2 and set(ids) <= set(train.tolist())
            assert (ids[0] == ids[1]) == bool(y[e, b] == 1)
            if y[e, b] == 1:
                P = x[e, b].reshape(3, 7, 3, 7).permute(0, 2, 1, 3).reshape(9, 7, 7)
                occ = P.sum((-1, -2)) > 0
                a, c = P[occ]
                rotated_same += int(not torch.equal(a, c))
    assert rotated_same > 10  # same-shape pairs usually appear in different rotations


def test_pentomino_blur_only_when_asked_and_matches_scipy_gaussian_filter():
    g = _g(7)
    ids = torch.arange(18)[None]
    xb, _ = tasks.pentomino_batch(ids, 64, blur_sigma=0.8, generator=g)
    x0, _ = tasks.pentomino_batch(ids, 64, generator=_g(7))
    assert (xb.unique().numel() > 2) and x0.unique().numel() == 2
    assert torch.all(xb.norm(dim=-1) <= 2**0.5 + 1e-5)
    # the blur itself: zero-padded Gaussian filter with per-image width
    ndimage = pytest.importorskip("scipy.ndimage")
    img = x0.reshape(64, 14, 14)[:3].double()
    sig = torch.tensor([0.0, 0.3, 0.8], dtype=torch.float64)
    out = _blur(img, sig)
    for k in range(3):
        ref = img[k].numpy() if sig[k] == 0 else ndimage.gaussian_filter(
            img[k].numpy(), float(sig[k]), mode="constant", cval=0.0, truncate=30.0)
        np.testing.assert_allclose(out[k].numpy(), ref, atol=1e-12)


def test_pentomino_validation():
    with pytest.raises(ValueError, match="shape_ids must be an integer tensor"):
        tasks.pentomino_batch(torch.tensor([[0, 18]]), 4, generator=_g())
    with pytest.raises(ValueError, match="n_train must be <= 16"):
        tasks.split_pentominoes(17, generator=_g())
    with pytest.raises(ValueError, match="blur_sigma must be"):
        tasks.pentomino_batch(torch.tensor([[0, 1]]), 4, blur_sigma=-1.0, generator=_g())
    with pytest.raises(ValueError, match="do not form a pentomino"):
        tasks.pentomino_canonical_id([(0, 0), (0, 1)])
