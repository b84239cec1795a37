"""Test configuration: hypothesis draws a fixed, reproducible sequence of examples (CI runs must
not depend on luck); set HYPOTHESIS_PROFILE=explore to search with fresh random examples."""

import os

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, max_examples=500)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def one_torch_thread():
    """Run a test with one torch intra-op thread (restored after): tiny tensors, where threads
    only add contention on a shared 2-core machine. Use with ``pytest.mark.usefixtures``."""
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
