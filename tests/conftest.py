"""Test configuration: hypothesis draws a fixed, reproducible sequence of examples (CI runs must
not depend on luck); set HYPOTHESIS_PROFILE=explore to search with fresh random examples."""

import os

import numpy as np
import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, max_examples=500)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config):
    """Under pytest-xdist (``-n N``, the default: see pyproject.toml) each worker process gets
    one torch and one BLAS/OpenMP thread, so N workers share N cores instead of oversubscribing
    them (the tests' matrices are small; two threads per worker on a 2-core machine can be
    many times slower). The environment variables reach the BLAS libraries loaded later (scipy
    ships its own) and the tests' subprocesses; threadpoolctl limits those already loaded."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = "1"
        import scipy.linalg  # noqa: F401  (loads scipy's BLAS under the limit)
        import torch
        from threadpoolctl import threadpool_limits

        torch.set_num_threads(1)
        threadpool_limits(limits=1)


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one worker per usable core, at most 8 (each worker imports torch)."""
    from richlazy.validate.cli._common import usable_cores

    return min(usable_cores(), 8)


@pytest.fixture
def scratch_registry():
    """The case registry swapped for a copy for one test (restored after), so that cases a test
    registers vanish with it. Every case module is imported into the real registry first
    (``Registry.scratch``): a module first imported while the copy is active would register into
    the throw-away copy and be missing for later tests in the same process (which tests those are
    depends on the order, e.g. under pytest-xdist)."""
    from richlazy.validate.core import _registry

    with _registry._CASES.scratch() as specs:
        yield specs


@pytest.fixture
def one_torch_thread():
    """Run a test with one torch intra-op thread (restored after): tiny tensors, where threads
    only add contention on a shared 2-core machine. Use with ``pytest.mark.usefixtures``."""
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _linear_exact(K0, y, N, T, v):
    """Exact posterior of the L = 1 non-lazy linear network with m = 1 (sigma_w2 = 1).

    Given the readout a the preactivations z_i = W x / sqrt(N0) are N(0, K0) i.i.d. over
    neurons, so F = a^T Z / N ~ N(0, (u/N^2) K0) with u = |a|^2, and integrating W out leaves
    p(y | a) = N(y; 0, C(u) + (T/N) I), C(u) = u K0 / N^2. The readout prior makes u/v a
    chi-square with N degrees of freedom, so the posterior is a one-dimensional Gaussian scale
    mixture over u. Returns U = E[u]/N and the expected loss E[|y - F|^2 / 2] (given u, F | y is
    Gaussian with mean C (C + s2)^-1 y and covariance s2 C (C + s2)^-1, s2 = T/N), both by
    quadrature in t = log u."""
    lam, Q = np.linalg.eigh(K0)
    yk2 = (Q.T @ y) ** 2
    s2 = T / N

    def logw(t):
        c = np.exp(t)[:, None] * lam / N**2
        return (N / 2) * t - np.exp(t) / (2 * v) - 0.5 * np.log(c + s2).sum(1) - 0.5 * (yk2 / (c + s2)).sum(1)

    coarse = np.linspace(-30, 15, 4001)
    t0 = coarse[np.argmax(logw(coarse))]
    t = np.linspace(t0 - 12, t0 + 12, 100_001)
    lw = logw(t)
    w = np.exp(lw - lw.max())
    w /= np.trapezoid(w, t)
    u = np.exp(t)
    c = u[:, None] * lam / N**2
    loss = 0.5 * ((s2**2 * yk2 / (c + s2) ** 2) + s2 * c / (c + s2)).sum(1)
    return np.trapezoid(w * u, t) / N, np.trapezoid(w * loss, t)


@pytest.fixture
def linear_exact():
    """The exact finite-N posterior of the L = 1 linear network by quadrature (see
    ``_linear_exact``): a reference for samplers (tests/simulate/samplers/test_gibbs.py,
    tests/validate/core/test_sampling.py)."""
    return _linear_exact
