"""Input checks for :mod:`richlazy.simulate` (torch): run before any tensor is touched.

The torch twin of :mod:`richlazy.theory.checks` (the two packages never import each other).
Messages name the public argument, the value given and what is required; numpy scalars are
accepted wherever a Python number is.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import warnings

import numpy as np
import torch

__all__ = [
    "MAX_ALLOC_BYTES",
    "as_generator",
    "as_real_tensor",
    "check_alloc",
    "check_count",
    "check_device",
    "check_float_dtype",
    "check_generator",
    "check_generator_device",
    "check_int",
    "check_nonneg_float",
    "check_pos_float",
    "check_real",
    "check_seed",
    "check_theta",
    "renamed_argument",
    "same_device",
]

MAX_ALLOC_BYTES = 2**34  # 16 GiB: the most one call may allocate for the arrays a size argument asks for
_FLOAT_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def _scalar(v):
    """A 0-d tensor or 0-d numpy array as the Python scalar it holds; anything else unchanged."""
    if isinstance(v, torch.Tensor) or (hasattr(v, "ndim") and hasattr(v, "item")
                                       and not isinstance(v, numbers.Number)):
        if getattr(v, "ndim", None) == 0:
            return v.item()
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


def check_int(name: str, v, *, minimum: int | None = None) -> int:
    """``v`` as an int (numpy integers and 0-d integer tensors accepted, bools rejected),
    optionally ``>= minimum``."""
    v = _scalar(v)
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {v!r} ({type(v).__name__})")
    v = int(v)
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    return v


def check_count(name: str, v, *, minimum: int = 0, maximum: int | None = None) -> int:
    """``v`` as an int ``>= minimum`` for counts (steps, sizes, intervals): a value of the wrong
    type or below ``minimum`` raises ValueError "``name`` must be an int >= ``minimum``"; one
    above ``maximum`` (when given) "``name`` must be an int in [``minimum``, ``maximum``]"."""
    v = _scalar(v)
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or int(v) < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {v!r}")
    if maximum is not None and int(v) > maximum:
        raise ValueError(f"{name} must be an int in [{minimum}, {maximum}], got {int(v)}")
    return int(v)


def _as_float(name: str, v, requirement: str) -> float:
    v = _scalar(v)
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{name} must be {requirement}, got {v!r} ({type(v).__name__})")
    return float(v)


def check_real(name: str, v) -> float:
    """``v`` as a finite float (numpy scalars, 0-d arrays and 0-d tensors accepted, bools and
    complex numbers rejected)."""
    v = _as_float(name, v, "a real number")
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    return v


def check_pos_float(name: str, v, *, noun: str = "real number") -> float:
    """``v`` as a finite float ``> 0`` (the message says "``name`` must be a finite ``noun`` > 0")."""
    v = _as_float(name, v, f"a finite {noun} > 0")
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a finite {noun} > 0, got {v}")
    return v


def check_nonneg_float(name: str, v) -> float:
    """``v`` as a finite float ``>= 0``."""
    v = _as_float(name, v, "a finite real number >= 0")
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"{name} must be a finite real number >= 0, got {v}")
    return v


def check_seed(seed, *, name: str = "seed") -> int:
    """``seed`` as a non-negative int (numpy integers accepted)."""
    seed = _scalar(seed)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"{name} must be a non-negative int, got {seed!r} ({type(seed).__name__})")
    if int(seed) < 0:
        raise ValueError(f"{name} must be a non-negative int, got {int(seed)}")
    return int(seed)


def check_generator(generator, *, name: str = "generator") -> torch.Generator:
    """``generator`` checked to be a ``torch.Generator`` (``None`` rejected: richlazy never draws
    from torch's global stream)."""
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"{name} must be a torch.Generator (explicit randomness), "
                        f"got {type(generator).__name__}")
    return generator


def check_generator_on(generator, device, *, what: str) -> torch.Generator:
    """``generator`` checked to be a ``torch.Generator`` on the device type of ``device`` (where
    ``what`` - e.g. "theta", "the posterior" - lives); ValueError saying how to create one
    otherwise (torch draws on the generator's device)."""
    check_generator(generator)
    dev_type = torch.device(device).type
    if generator.device.type != dev_type:
        raise ValueError(f"generator lives on {generator.device.type!r} but {what} on {dev_type!r}; "
                         f"create it with torch.Generator(device={dev_type!r})")
    return generator


def same_device(a, b) -> bool:
    """Whether two devices (``torch.device`` or strings) name the same device. A CUDA device without
    an index (``"cuda"``, as a ``torch.Generator(device="cuda")`` reports it) is the current CUDA
    device, so it equals ``"cuda:0"`` there; a plain ``!=`` between the two would be True."""
    a, b = torch.device(a), torch.device(b)
    if a.type != b.type:
        return False
    if a.type != "cuda" or (a.index is not None and b.index is not None):
        return a.index == b.index
    current = torch.cuda.current_device()
    return (current if a.index is None else a.index) == (current if b.index is None else b.index)


def as_generator(seed, device, *, name: str = "seed") -> torch.Generator:
    """``seed`` (non-negative int or ``torch.Generator``) as a generator on ``device``.

    A Generator is returned as given after checking it lives on ``device``'s type; an int seeds a
    fresh one. ``None`` is rejected: richlazy never draws from torch's global stream.
    """
    device = check_device(device)
    if isinstance(seed, torch.Generator):
        if seed.device.type != device.type:
            raise ValueError(f"{name} is a generator on {seed.device.type!r} but the tensors live on "
                             f"{device.type!r}; create it with torch.Generator(device={device.type!r})")
        return seed
    s = check_seed(seed, name=name)
    g = torch.Generator(device=device)
    g.manual_seed(s)
    return g


def check_device(device, *, name: str = "device") -> torch.device:
    """``device`` (``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:K"`` or a ``torch.device``) as a
    ``torch.device``: ``"auto"`` is CUDA when available, else the CPU. Asking for CUDA on a
    machine without it raises ValueError naming ``name`` (never a silent fallback, never torch's
    AssertionError)."""
    if isinstance(device, torch.device):
        dev = device
    elif isinstance(device, str):
        if device == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        try:
            dev = torch.device(device)
        except RuntimeError:
            raise ValueError(f"{name} must be 'auto', 'cpu' or 'cuda[:K]', got {device!r}") from None
    else:
        raise TypeError(f"{name} must be a str or torch.device, got {device!r} ({type(device).__name__})")
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"{name} must be 'auto', 'cpu' or 'cuda[:K]', got {device!r}")
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"{name}={device!r} requested but CUDA is not available; use 'cpu' or 'auto'")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(f"{name}={device!r} requested but only {torch.cuda.device_count()} CUDA "
                             "device(s) are available")
    return dev


def check_float_dtype(dtype, *, name: str = "dtype") -> torch.dtype:
    """``dtype`` (``torch.float32``/``torch.float64`` or the strings ``"float32"``/``"float64"``)
    as a torch dtype; anything else (integer, half or complex dtypes) raises ValueError."""
    if isinstance(dtype, torch.dtype) and dtype in _FLOAT_DTYPES.values():
        return dtype
    if isinstance(dtype, str) and dtype in _FLOAT_DTYPES:
        return _FLOAT_DTYPES[dtype]
    raise ValueError(f"{name} must be torch.float32 or torch.float64 (or 'float32'/'float64'), "
                     f"got {dtype!r}")


def check_generator_device(generator, device, *, name: str = "device") -> torch.device:
    """The device to draw on: ``device`` (checked as :func:`check_device`) or, when None, the
    generator's device; a device of another type than the generator's raises ValueError (torch
    draws on the generator's device)."""
    check_generator(generator)
    if device is None:
        return generator.device
    dev = check_device(device, name=name)
    if dev.type != generator.device.type:
        raise ValueError(f"{name}={device!r} but the generator lives on {generator.device.type!r}; "
                         f"create it with torch.Generator(device={dev.type!r}) or pass {name}=None")
    return dev


def as_real_tensor(name: str, x, *, dtype: torch.dtype | None = None, device=None,
                   finite: bool = True, nonempty: bool = True) -> torch.Tensor:
    """``x`` (tensor, array, sequence or number) as a real tensor of ``dtype`` on ``device``:
    complex, boolean and non-numeric input raises TypeError naming ``name``; NaN/inf (when
    ``finite``) and empty input (when ``nonempty``) raise ValueError."""
    if not isinstance(x, torch.Tensor):
        try:
            arr = np.asarray(x)
            if arr.dtype.kind not in "iuf":
                raise TypeError
            # convert straight to ``dtype``: a Python float must not pass through float32
            x = torch.as_tensor(arr, dtype=dtype, device=device)
        except (TypeError, ValueError, RuntimeError):
            raise TypeError(f"{name} must be a real number, array or tensor, "
                            f"got {x!r:.80} ({type(x).__name__})") from None
    if x.is_complex() or x.dtype == torch.bool or not (x.dtype.is_floating_point or x.dtype in (
            torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)):
        raise TypeError(f"{name} must hold real numbers, got dtype {x.dtype}")
    if nonempty and x.numel() == 0:
        raise ValueError(f"{name} must not be empty, got shape {tuple(x.shape)}")
    if finite and x.dtype.is_floating_point and not bool(torch.isfinite(x).all()):
        raise ValueError(f"{name} must be finite (it contains NaN or inf)")
    if dtype is not None or device is not None:
        x = x.to(dtype=dtype or x.dtype, device=device if device is not None else x.device)
    return x


def check_theta(theta, D: int, *, dtype: torch.dtype | None = None, device=None,
                name: str = "theta") -> torch.Tensor:
    """``theta`` checked to be a floating tensor of shape (E, D) with E >= 1 (and, when given, of
    ``dtype`` and on ``device``); the message names ``name`` and the expected shape."""
    if not isinstance(theta, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of shape (E, {D}), got {type(theta).__name__}")
    if theta.ndim != 2 or theta.shape[1] != D or theta.shape[0] < 1:
        raise ValueError(f"{name} must have shape (E, D) = (E, {D}) with E >= 1, got {tuple(theta.shape)}")
    if not theta.dtype.is_floating_point:
        raise ValueError(f"{name} must be a floating-point tensor, got dtype {theta.dtype}")
    if dtype is not None and theta.dtype != dtype:
        raise ValueError(f"{name} must have dtype {dtype} (the dtype of the model), got {theta.dtype}")
    if device is not None:
        device = device if isinstance(device, torch.device) else torch.device(device)
        if theta.device.type != device.type:
            raise ValueError(f"{name} must live on {device} (the model's device), got {theta.device}")
    return theta


def renamed_argument(**renames: str):
    """Decorator: each keyword ``old=new`` makes ``old=`` the deprecated keyword spelling of the
    function's parameter ``new`` (kept for one release), e.g. ``@renamed_argument(steps="n_steps")``
    (the twin of :func:`richlazy.theory.checks.renamed_argument`). The signature shows the new
    names only; a call with an old spelling warns a ``DeprecationWarning`` naming the new one and
    calls with the new one; passing both, by position or keyword, raises ``TypeError``."""

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
                by_position = where[new] is not None and len(args) > where[new]
                if old_value is None:
                    continue
                if by_position or kwargs.get(new) is not None:
                    raise TypeError(f"pass {new}= only; {old}= is its deprecated spelling")
                warnings.warn(f"{old}= is deprecated and will be removed in the next release; use {new}=",
                              DeprecationWarning, stacklevel=2)
                kwargs[new] = old_value
            return fn(*args, **kwargs)

        notes = "".join(f"\n    Deprecated: ``{old}=`` is the old spelling of ``{new}=`` (it warns; removed "
                        "in the next release)." for old, new in renames.items())
        wrapper.__doc__ = (fn.__doc__ or "").rstrip() + "\n" + notes + "\n"
        return wrapper

    return decorate
