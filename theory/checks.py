"""Input checks for :mod:`richlazy.theory` (numpy): run before any numerics.

Every message names the public argument, the value given and what is required. numpy scalars
are accepted wherever a Python number is (``np.float32(0.02)`` is a real number). The torch twin
of this module is :mod:`richlazy.simulate.checks`; the two never import each other.
"""

from __future__ import annotations

import functools
import inspect
import numbers
import warnings

import numpy as np

MAX_ALLOC_BYTES = 2**34  # 16 GiB: the most one call may allocate for the arrays a size argument asks for
MAX_DEPTH = 1000  # largest network depth the solvers and deep kernels accept (one kernel per layer)

__all__ = [
    "MAX_ALLOC_BYTES",
    "MAX_DEPTH",
    "as_float_array",
    "as_float_matrix",
    "as_psd_matrix",
    "as_rng",
    "broadcast_named",
    "check_alloc",
    "check_depth",
    "check_int",
    "check_nonneg_float",
    "check_pos_float",
    "check_real",
    "check_symmetric",
    "renamed_argument",
    "renamed_option",
]


def as_float_array(name: str, x, *, ndim: int | None = None, finite: bool = True) -> np.ndarray:
    """``x`` as a float64 array (torch tensors accepted without importing torch)."""
    if hasattr(x, "detach"):  # torch tensors from users, without importing torch
        x = x.detach().cpu().numpy()
    if np.iscomplexobj(x):
        raise TypeError(f"{name} must be real, got a complex array")
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real numeric array, got {type(x).__name__}") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (found NaN or inf)")
    return arr


def as_float_matrix(name: str, x, *, allow_1d: bool = False) -> np.ndarray:
    """``x`` as a non-empty finite 2-D float64 array (a 1-D array as one column if ``allow_1d``)."""
    arr = as_float_array(name, x)
    if allow_1d and arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
    return arr


def as_psd_matrix(name: str, x, *, rtol: float = 1e-8) -> np.ndarray:
    """``x`` as a symmetric positive semi-definite (n, n) float64 matrix (a kernel / Gram matrix).

    Symmetry is checked to ``1e-10`` relative to the largest entry; positive semi-definiteness
    allows round-off: the smallest eigenvalue must be ``>= -rtol * max|eigenvalue|``. The message
    of an indefinite matrix gives its smallest eigenvalue. Returns the symmetrised matrix.
    """
    arr = check_symmetric(name, as_float_matrix(name, x), what="a kernel matrix")
    lam = np.linalg.eigvalsh(arr)
    if lam[0] < -rtol * max(float(np.max(np.abs(lam))), np.finfo(float).tiny):
        raise ValueError(f"{name} must be positive semi-definite (a kernel matrix); its smallest "
                         f"eigenvalue is {lam[0]:.6g} (largest {lam[-1]:.6g})")
    return arr


def check_symmetric(name: str, arr: np.ndarray, *, what: str = "a symmetric matrix") -> np.ndarray:
    """The square float matrix ``arr`` checked to be symmetric to ``1e-10`` relative to its
    largest entry (ValueError naming ``name`` and ``what`` it is otherwise); returns the exactly
    symmetrised matrix ``(arr + arr.T) / 2``."""
    n = arr.shape[0]
    if arr.ndim != 2 or arr.shape != (n, n):
        raise ValueError(f"{name} must be square (n x n), got shape {arr.shape}")
    scale = float(np.max(np.abs(arr))) if arr.size else 0.0
    if not np.allclose(arr, arr.T, rtol=1e-10, atol=1e-12 * scale):
        asym = float(np.max(np.abs(arr - arr.T)))
        raise ValueError(f"{name} must be symmetric ({what}), got max |{name} - {name}^T| = "
                         f"{asym:.3g} (largest entry {scale:.3g})")
    return 0.5 * (arr + arr.T)


def broadcast_named(arrays: dict, *, message: str | None = None) -> list[np.ndarray]:
    """Broadcast the named arrays against each other; on failure raise ValueError with
    ``message`` (default: "the shapes of <names> must be broadcastable") and the shapes."""
    try:
        return list(np.broadcast_arrays(*arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k}{np.shape(v)}" for k, v in arrays.items())
        msg = message or f"the shapes of {', '.join(arrays)} must be broadcastable"
        raise ValueError(f"{msg}; got {shapes}") from None


def check_int(name: str, v, *, minimum: int | None = None) -> int:
    """``v`` as an int (numpy integers accepted, bools rejected), optionally ``>= minimum``."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {v!r} ({type(v).__name__})")
    v = int(v)
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    return v


def check_alloc(name: str, n_items: int, *, itemsize: int = 8, what: str = "the arrays it sizes") -> None:
    """Refuse up front a size argument ``name`` whose arrays (``n_items`` items of ``itemsize``
    bytes; ``what`` says which) would exceed ``MAX_ALLOC_BYTES`` (16 GiB): ValueError naming it,
    instead of a MemoryError (or an allocator error) after the work has started."""
    nbytes = int(n_items) * int(itemsize)
    if nbytes > MAX_ALLOC_BYTES:
        gib = nbytes / 2**30 if nbytes.bit_length() < 1000 else float("inf")  # no OverflowError
        raise ValueError(f"{name} is too large: {what} would take {gib:.3g} GiB, above "
                         f"the {MAX_ALLOC_BYTES // 2**30} GiB limit on one call's arrays")


def check_depth(name: str, v) -> int:
    """``v`` as a network depth: an int in ``[1, MAX_DEPTH]`` (solvers keep one kernel per layer)."""
    v = check_int(name, v, minimum=1)
    if v > MAX_DEPTH:
        raise ValueError(f"{name} must be <= {MAX_DEPTH} (a network depth; one kernel is computed "
                         f"and kept per layer), got {v}")
    return v


def check_real(name: str, v) -> float:
    """``v`` as a finite float (numpy scalars accepted, bools and complex rejected)."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {v!r} ({type(v).__name__})")
    v = float(v)
    if not np.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    return v


def check_pos_float(name: str, v) -> float:
    """``v`` as a finite float ``> 0``."""
    v = check_real(name, v)
    if v <= 0:
        raise ValueError(f"{name} must be > 0, got {v}")
    return v


def check_nonneg_float(name: str, v) -> float:
    """``v`` as a finite float ``>= 0``."""
    v = check_real(name, v)
    if v < 0:
        raise ValueError(f"{name} must be >= 0, got {v}")
    return v


def as_rng(seed, *, name: str = "seed") -> np.random.Generator:
    """``seed`` (a non-negative int or a ``numpy.random.Generator``) as a Generator.

    A Generator is returned as given (the caller's stream advances); an int seeds a fresh one.
    ``None`` is rejected: richlazy never draws from an unseeded or global stream.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"{name} must be a non-negative int or a numpy.random.Generator, got "
                        f"{seed!r} ({type(seed).__name__})")
    if int(seed) < 0:
        raise ValueError(f"{name} must be >= 0, got {int(seed)}")
    return np.random.default_rng(int(seed))


def renamed_option(new: str, new_value, old: str, old_value, *, default=None, stacklevel: int = 3):
    """Value of option ``new`` given that ``old`` is its deprecated spelling.

    Passing ``old`` warns with a ``DeprecationWarning`` (kept for one release); passing both
    raises ``TypeError``. ``default`` is what ``new`` means when neither is given.
    """
    if old_value is None:
        return default if new_value is None else new_value
    if new_value is not None:
        raise TypeError(f"pass {new}= only; {old}= is its deprecated spelling")
    warnings.warn(f"{old}= is deprecated and will be removed in the next release; use {new}=",
                  DeprecationWarning, stacklevel=stacklevel)
    return old_value


def renamed_argument(**renames: str):
    """Decorator: each keyword ``old=new`` makes ``old=`` the deprecated keyword spelling of the
    function's parameter ``new`` (kept for one release), e.g. ``@renamed_argument(L="n_symbols")``.
    The signature shows the new names only; a call with an old spelling warns a
    ``DeprecationWarning`` naming the new one (through :func:`renamed_option`) and calls with the
    new one; passing both, by position or keyword, raises ``TypeError``."""

    def decorate(fn):
        params = list(inspect.signature(fn).parameters.values())
        names = [p.name for p in params]
        where = {}  # new -> index of its positional slot, or None (keyword-only)
        for old, new in renames.items():
            if new not in names or old in names:
                raise AssertionError(f"{fn.__name__}: cannot rename {old} to {new}")  # a coding error
            i = names.index(new)
            where[new] = i if params[i].kind in (params[i].POSITIONAL_ONLY,
                                                 params[i].POSITIONAL_OR_KEYWORD) else None

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            for old, new in renames.items():
                if old not in kwargs:
                    continue
                old_value = kwargs.pop(old)
                if where[new] is not None and len(args) > where[new]:  # new given by position
                    if old_value is not None:
                        raise TypeError(f"pass {new}= only; {old}= is its deprecated spelling")
                    continue
                value = renamed_option(new, kwargs.pop(new, None), old, old_value)
                if value is not None:
                    kwargs[new] = value
            return fn(*args, **kwargs)

        notes = "".join(f"\n    Deprecated: ``{old}=`` is the old spelling of ``{new}=`` (it warns; removed "
                        "in the next release)." for old, new in renames.items())
        wrapper.__doc__ = (fn.__doc__ or "").rstrip() + "\n" + notes + "\n"
        return wrapper

    return decorate
