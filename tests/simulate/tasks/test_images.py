"""simulate/tasks/_images.py: average pooling of the image tasks, with and without test images."""

from __future__ import annotations

import numpy as np
import pytest
from richlazy.simulate import load_image_classification


@pytest.mark.parametrize("n_test", [0, 4])
def test_pooling_averages_blocks_with_or_without_test_images(n_test):
    """2x2 pooling of scikit-learn's 8x8 digits: each pooled pixel is the mean of its block of the
    unpooled image, for the training images and for the test images (none when n_test = 0)."""
    kw = dict(classes=(0, 1, 2), n_train=9, n_test=n_test, seed=3, center=False, unit_norm=False)
    raw = load_image_classification("digits", **kw)
    pooled = load_image_classification("digits", downsample=2, **kw)
    assert pooled.X_train.shape == (9, 16) and pooled.X_test.shape == (n_test, 16)
    for X, Xp in ((raw.X_train, pooled.X_train), (raw.X_test, pooled.X_test)):
        blocks = X.reshape(-1, 4, 2, 4, 2).mean(axis=(2, 4)).reshape(X.shape[0], 16)
        np.testing.assert_allclose(Xp, blocks, rtol=0, atol=1e-15)
