"""Conformance suite for the public API (in the spirit of scikit-learn's estimator checks).

For every public name of ``richlazy.theory``, ``richlazy.simulate`` and ``richlazy.validate``
(their ``__all__``, so new names are picked up automatically):

* callables have one small valid example call (``_examples.EXAMPLES``) that must succeed, return
  no NaN, and leave numpy's and torch's global RNG state untouched; names that are not callables
  with inputs (constants, exceptions, result containers, protocols) are listed in ``EXEMPT``
  with the reason. A public callable with neither fails ``test_every_public_name_is_covered``;
* numpy scalars (``np.float32``, ``np.int64``) are accepted wherever a Python number is;
* hypothesis-generated bad inputs, substituted one argument at a time according to the
  argument's kind (``KINDS``), raise ValueError or TypeError whose message names the argument,
  never another exception, never a silent return, and never touch global RNG state.

Cases that still fail are listed in ``KNOWN_FAILURES`` with what happens; they are checked to
still fail, so fixing one makes the suite fail until its entry is removed (``KNOWN_SLOW``: the
same, for calls that run for seconds on the bad input; those are not run). To list every
problem at once, run with ``RICHLAZY_CONFORMANCE_LOG=<file>``: problems go to ``<file>.problems``.
The whole suite takes about 35 s on one core (hypothesis: 2 derandomized examples, no shrinking).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import os
import pathlib
import tempfile
import time
import types
import warnings

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from ._examples import EXAMPLES

PACKAGES = ("theory", "simulate", "validate", "validate.stats", "validate.sweeps")

# public names that are not callables with inputs to check, and why
_RESULT = "result container built and returned by the library; its fields are outputs, not inputs"
EXEMPT: dict[str, str] = {
    # constants
    "theory.ACTIVATIONS": "constant tuple of activation names",
    "theory.TILTED_ACTIVATIONS": "constant tuple of activation names",
    "theory.MODELS": "constant tuple of model descriptions",
    "theory.TABLE_SYMBOLS": "constant dict of sympy symbols",
    "theory.EQ3_READOUT_RATIO": "constant float",
    "simulate.ACTIVATIONS": "constant tuple of activation names",
    "simulate.REGIMES": "constant tuple of regime names",
    "simulate.HOMOGENEOUS_ACTIVATIONS": "constant tuple of activation names",
    "simulate.CODE_MOVE_MAX_M": "constant int (largest m for the default start readouts)",
    "simulate.PENTOMINO_PATCH": "constant int",
    "validate.PAPERS": "constant tuple of paper names",
    "validate.SUITES": "constant tuple of suite names",
    "validate.VERDICTS": "constant tuple of case verdicts",
    "validate.ERGODICITY": "constant tuple of ergodicity classes",
    "validate.Equilibration": "verdict record of population annealing's diagnostics on a frozen "
    "quantity (its own checks are tested in tests/validate/core/test_ergodicity.py)",
    "validate.RHAT_MAX": "constant float (the R-hat threshold 1.01)",
    "validate.stats.RHAT_MAX": "constant float (the R-hat threshold 1.01)",
    "validate.stats": "public module: its own __all__ is checked as package 'validate.stats'",
    # exceptions and enums
    "theory.SolverError": "exception class",
    "theory.Status": "enum of solver outcomes",
    "simulate.DivergedError": "exception class",
    "simulate.SamplerDivergedError": "exception class",
    "simulate.LowAcceptanceError": "exception class",
    "simulate.CheckpointDiscardedWarning": "exception class (warning category)",
    "simulate.DatasetUnavailableError": "exception class",
    # protocols
    "theory.CodingPredictor": "typing.Protocol (interface description, not instantiated)",
    "simulate.Potential": "typing.Protocol (interface description, not instantiated)",
    "simulate.ExactPotential": "typing.Protocol (interface description, not instantiated)",
    # result containers
    **{
        f"theory.{n}": _RESULT
        for n in (
            "SolverStatus",
            "GPPosterior",
            "LinearNetworkSolution",
            "LinearSaddleResiduals",
            "ReLUBlockSolution",
            "ReLUDualMargin",
            "ReLUOutlierSolution",
            "ReLUToySolution",
            "SigmoidGeneralSolution",
            "SigmoidFirstLayerSolution",
            "SigmoidTwoLayerSolution",
            "SigmoidMiddleLayerSolution",
            "SigmoidDeepSolution",
            "SigmoidSweep",
            "TemperatureSweep",
            "SigmoidToySolution",
            "SigmoidPopulationSolution",
            "AKResult",
            "ChernoffResult",
            "LDTResult",
            "Crossover",
            "TableRow",
            "MarkovWalkerResult",
            "BayesAccuracy",
            "MaxMarginSolution",
            "KernelAccuracy",
            "Theorem2Bound",
            "MaxMarginAccuracy",
            "SymmetricMaxMargin",
            "CodeTransition",
            "LocatedCodeTransition",
            "CriticalTemperature",
            "FeaturePropagationRKHS",
            "PatternEnergies",
        )
    },
    **{
        f"simulate.{n}": _RESULT
        for n in (
            "GammaMLPResult",
            "MLPParams",
            "MLPTrainResult",
            "ChainRun",
            "AnnealingRun",
            "AnnealedMean",
            "AnnealingDiagnostics",
            "LangevinState",
            "MCMCState",
            "ImageClassificationData",
            "ToyTask",
            "PriorRareEventEstimate",
        )
    },
    **{
        f"validate.{n}": _RESULT
        for n in (
            "ClassStatistics",
            "EigenCurves",
            "NC2Result",
            "NystromEigen",
            "RichnessSweep",
            "CaseOutcome",
            "CaseResult",
            "CaseSpec",
            "Quantity",
            "Report",
        )
    },
    "validate.CaseContext": "services handed to a case by run_suite (built by the runner, not by users)",
    "validate.sweeps": "public subpackage: its own __all__ is checked as package 'validate.sweeps'",
    **{f"{pkg}.SweepContext": "services handed to an experiment by sweep (built by the runner)"
       for pkg in ("validate", "validate.sweeps")},
    **{f"{pkg}.{n}": _RESULT for pkg in ("validate", "validate.sweeps")
       for n in ("SweepResult",)},
    "validate.sweeps.SweepSpec": _RESULT,
    "validate.stats.Estimate": _RESULT,
}

# argument kind -> mutations (each names a way of making the argument invalid)
_ARRAY = ("nan", "inf", "complex", "str", "empty")
KINDS: dict[str, tuple[str, ...]] = {
    "pos_float": ("nan", "inf", "neg", "zero", "str", "complex"),
    "nonneg_float": ("nan", "inf", "neg", "str", "complex"),
    "nonpos_float": ("nan", "pinf", "pos", "str", "complex"),  # -inf: a log-probability of 0
    "energy": ("nan", "ninf", "neg", "str", "complex"),  # +inf: an impossible event
    "real": ("nan", "inf", "str", "complex"),
    "prob": ("nan", "inf", "neg", "above_one", "str", "complex"),
    "prob_pos": ("nan", "inf", "neg", "zero", "above_one", "str", "complex"),
    "corr": ("nan", "inf", "above_one", "str", "complex"),
    "offdiag": ("nan", "inf", "str", "complex", "nonpsd"),
    "pos_int": ("zero", "neg", "float", "str"),
    "nonneg_int": ("neg", "float", "str"),
    "count2": ("one", "neg", "float", "str"),
    "sign": ("zero", "two", "float", "str"),
    "int_list": ("neg_item", "float_item"),  # grids: an empty grid gives an empty table
    "int_list2": ("one_item", "float_item"),
    "array": _ARRAY,
    "vector": _ARRAY + ("ndim",),
    "nonneg_array": _ARRAY + ("neg",),
    "pos_array": _ARRAY + ("neg", "zero"),
    # a grid of parameter values a function is vectorised over (an empty grid is a valid input)
    "grid": ("nan", "inf", "complex", "str"),
    "nonneg_grid": ("nan", "inf", "complex", "str", "neg"),
    "pos_grid": ("nan", "inf", "complex", "str", "neg", "zero"),
    "pos_tensor_grid": ("nan", "inf", "complex", "neg"),
    "ratios": ("nan", "neg", "str", "empty"),
    "labels": ("nan", "str", "empty"),
    "matrix": _ARRAY + ("ndim",),
    "features": _ARRAY + ("ndim", "zeros"),
    "psd_matrix": _ARRAY + ("ndim", "indefinite", "asym", "nonsquare"),
    "tensor": ("nan", "inf", "complex", "empty"),
    "pos_tensor": ("nan", "inf", "complex", "empty", "neg"),
    "theta": ("shape", "complex", "str"),
    "device": ("cuda", "bogus"),
    "generator": ("none", "str"),
    "seed": ("neg", "float", "str", "none"),
    "choice": ("bogus",),
    "callable": ("notcallable",),
    "dtype": ("int64", "bogus"),
    "expr": ("syntax", "notstr"),
    "suites": ("bogus",),
}
_FLOAT_KINDS = {
    "pos_float",
    "nonneg_float",
    "nonpos_float",
    "energy",
    "real",
    "prob",
    "prob_pos",
    "corr",
    "offdiag",
}
_INT_KINDS = {"pos_int", "nonneg_int", "count2", "sign"}

# (example key, argument, mutation) -> what happens today. Checked to still fail: fixing one
# fails the suite until its entry is removed here. See the conformance report for the exact calls.
# Empty since issue 53: inputs that are valid by design are listed with the reason in their
# example's ``accepted`` (tests/conformance/_examples_*.py), not here.
KNOWN_FAILURES: dict[tuple[str, str, str], str] = {}
# calls that are not rejected up front and run for seconds on the bad input (listed, not run)
KNOWN_SLOW: dict[tuple[str, str, str], str] = {}


# --- resolving public names -------------------------------------------------------------------


def _package(pkg: str):
    return importlib.import_module(f"richlazy.{pkg}")


def _public() -> dict[str, object]:
    out = {}
    for pkg in PACKAGES:
        mod = _package(pkg)
        for name in mod.__all__:
            out[f"{pkg}.{name}"] = getattr(mod, name)
    return out


def _target(key: str):
    ex = EXAMPLES[key]
    if ex.call is not None:
        return ex.call
    pkg, name = key.rsplit(".", 1)
    return getattr(_package(pkg), name)


# --- global RNG guard ------------------------------------------------------------------------


def _rng_states():
    return np.random.get_state(), torch.random.get_rng_state().clone()


def _same_np_state(a, b) -> bool:
    return a[0] == b[0] and np.array_equal(a[1], b[1]) and tuple(a[2:]) == tuple(b[2:])


# exploration aid (never set in CI): append each bad call's time and every problem found to files
_LOG = os.environ.get("RICHLAZY_CONFORMANCE_LOG", "")


def _call(key: str, kwargs: dict):
    np_before, torch_before = _rng_states()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return _target(key)(**kwargs)
    finally:
        np_after, torch_after = _rng_states()
        assert _same_np_state(np_before, np_after), f"{key} advanced numpy's global RNG state"
        assert torch.equal(torch_before, torch_after), f"{key} advanced torch's global RNG state"


def _has_nan(obj, depth=0) -> bool:
    if depth > 4:
        return False
    if isinstance(obj, torch.Tensor):
        return bool(obj.is_floating_point() and torch.isnan(obj).any())
    if isinstance(obj, np.ndarray):
        return bool(obj.dtype.kind in "fc" and np.isnan(obj).any())
    if isinstance(obj, float):
        return math.isnan(obj)
    if isinstance(obj, dict):
        return any(_has_nan(v, depth + 1) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return any(_has_nan(v, depth + 1) for v in obj[:50])
    if hasattr(obj, "__dataclass_fields__"):
        return any(_has_nan(getattr(obj, f), depth + 1) for f in obj.__dataclass_fields__)
    return False


# --- mutations -------------------------------------------------------------------------------


def _is_array(v) -> bool:
    return isinstance(v, (np.ndarray, torch.Tensor, list, tuple))


def _set_one(good, draw, value):
    """``good`` (array-like) with one drawn element replaced by ``value``."""
    is_t = isinstance(good, torch.Tensor)
    arr = good.detach().cpu().numpy() if is_t else np.asarray(good)
    out = arr.astype(np.result_type(arr.dtype, np.asarray(value).dtype, np.float64)).copy()
    i = draw(st.integers(0, out.size - 1))
    out.reshape(-1)[i] = value
    return (
        torch.as_tensor(out, dtype=good.dtype if is_t and not np.iscomplexobj(out) else None) if is_t else out
    )


def _mutate(mutation: str, good, draw):
    arr = _is_array(good)
    is_t = isinstance(good, torch.Tensor)
    pos = draw(st.floats(1e-3, 1e3))
    if mutation == "nan":
        return _set_one(good, draw, np.nan) if arr else float("nan")
    if mutation == "inf":
        v = draw(st.sampled_from([np.inf, -np.inf]))
        return _set_one(good, draw, v) if arr else v
    if mutation in ("pinf", "ninf"):
        return np.inf if mutation == "pinf" else -np.inf
    if mutation == "neg":
        if isinstance(good, (int, np.integer)) and not isinstance(good, bool):
            return -draw(st.integers(1, 100))
        return _set_one(good, draw, -pos) if arr else -pos
    if mutation == "pos":
        return pos
    if mutation == "zero":
        if arr:
            return _set_one(good, draw, 0.0)
        return 0 if isinstance(good, int) else 0.0
    if mutation == "above_one":
        v = 1.0 + pos
        return _set_one(good, draw, v) if arr else v
    if mutation == "str":
        if arr:
            return np.full(np.shape(good), "abc")
        return draw(st.sampled_from(["abc", "x"]))
    if mutation == "complex":
        im = 1j * pos
        if is_t:
            return good.to(torch.complex128) + im
        return np.asarray(good) + im if arr else complex(good) + im
    if mutation == "empty":
        if is_t:
            return good.new_empty((0,) + tuple(good.shape[1:]))
        a = np.asarray(good)
        return np.empty((0,) + a.shape[1:], dtype=a.dtype if a.dtype.kind in "iuf" else float)
    if mutation == "ndim":
        return good[None, None] if is_t else np.asarray(good)[None, None]
    if mutation == "zeros":
        return np.zeros_like(np.asarray(good, dtype=float))
    if mutation == "indefinite":
        K = np.asarray(good, dtype=float)
        w, V = np.linalg.eigh(K)
        w = w.copy()
        w[0] = -draw(st.floats(0.1, 2.0)) * w.max()
        return (V * w) @ V.T
    if mutation == "asym":  # an antisymmetric perturbation: the symmetric part stays PSD
        K = np.asarray(good, dtype=float).copy()
        eps = draw(st.floats(0.1, 1.0)) * max(1.0, abs(K).max())
        K[0, -1] += eps
        K[-1, 0] -= eps
        return K
    if mutation == "nonsquare":
        return np.asarray(good)[:, :-1]
    if mutation == "nonpsd":
        return 5.0 + pos
    if mutation == "float":
        return good + 0.5
    if mutation == "one":
        return 1
    if mutation == "two":
        return 2
    if mutation in ("neg_item", "one_item", "float_item"):
        out = list(good)
        out[draw(st.integers(0, len(out) - 1))] = {"neg_item": -1, "one_item": 1, "float_item": 2.5}[mutation]
        return out
    if mutation == "shape":
        return good[..., :-1]
    if mutation == "cuda":
        return "cuda"
    if mutation == "bogus":
        return "no-such-" + draw(st.sampled_from(["thing", "choice"]))
    if mutation == "none":
        return None
    if mutation == "notcallable":
        return 3.0
    if mutation == "int64":
        return torch.int64
    if mutation == "syntax":
        return draw(st.sampled_from(["1/0 +", "N**", "(d"]))
    if mutation == "notstr":
        return 3
    raise AssertionError(f"unknown mutation {mutation!r}")


# --- parameter lists -------------------------------------------------------------------------


def _mutations(key: str, arg: str) -> list[str]:
    ex = EXAMPLES[key]
    out = []
    for mutation in KINDS[ex.kinds[arg]]:
        if (arg, mutation) in ex.accepted:
            continue
        if mutation == "cuda" and torch.cuda.is_available():
            continue
        out.append(mutation)
    return out


def _bad_cases():
    return [
        pytest.param(key, arg, id=f"{key}-{arg}") for key in sorted(EXAMPLES) for arg in EXAMPLES[key].kinds
    ]


def _scalar_cases():
    cases = []
    for key in sorted(EXAMPLES):
        ex = EXAMPLES[key]
        for arg, kind in ex.kinds.items():
            if kind in _FLOAT_KINDS or kind in _INT_KINDS:
                cases.append(pytest.param(key, arg, kind, id=f"{key}-{arg}"))
    return cases


# no shrinking: a failing case is reported as drawn (shrinking would rerun slow calls on bad input)
_SETTINGS = settings(
    max_examples=2,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


# --- the checks ------------------------------------------------------------------------------


def test_every_public_name_is_covered():
    public = _public()
    missing = []
    for key, obj in public.items():
        if key in EXEMPT or key in EXAMPLES:
            continue
        if isinstance(obj, types.ModuleType):
            missing.append(f"{key}: a public module; add it to PACKAGES (or EXEMPT with the reason)")
        elif callable(obj):
            pkg = key.split(".")[0]
            missing.append(f"add a valid example call for {key} to tests/conformance/_examples_{pkg}.py")
        else:
            missing.append(f"{key}: a public constant; list it in EXEMPT with the reason")
    assert not missing, "\n".join(missing)


def test_tables_are_not_stale():
    public = _public()
    stale = [k for k in EXEMPT if k not in public]
    stale += [k for k in EXAMPLES if k not in public and k.rsplit(".", 1)[0] not in public]
    assert not stale, f"entries for names that are no longer public: {stale}"
    for key in {**KNOWN_FAILURES, **KNOWN_SLOW}:
        assert key[0] in EXAMPLES and key[1] in EXAMPLES[key[0]].kinds, f"stale KNOWN_FAILURES entry {key}"
        assert key[2] in KINDS[EXAMPLES[key[0]].kinds[key[1]]], f"stale KNOWN_FAILURES entry {key}"


@pytest.mark.parametrize("key", sorted(EXAMPLES))
def test_example_kinds_name_real_parameters(key):
    ex = EXAMPLES[key]
    params = inspect.signature(_target(key)).parameters
    has_var_kw = any(p.kind is p.VAR_KEYWORD for p in params.values())
    for arg, kind in ex.kinds.items():
        assert kind in KINDS, f"{key}: unknown kind {kind!r} for {arg}"
        assert arg in params or has_var_kw, f"{key}: {arg} is not a parameter"


@pytest.mark.parametrize("key", sorted(EXAMPLES))
def test_valid_example(key, tmp_path):
    out = _call(key, EXAMPLES[key].make(tmp_path))
    if not EXAMPLES[key].nan_ok:
        assert not _has_nan(out), f"{key}: the valid example returned NaN"


@pytest.mark.parametrize(("key", "arg", "kind"), _scalar_cases())
def test_numpy_scalars_accepted(key, arg, kind, tmp_path):
    kwargs = EXAMPLES[key].make(tmp_path)
    good = kwargs[arg] if arg in kwargs else inspect.signature(_target(key)).parameters[arg].default
    if isinstance(good, bool) or not isinstance(good, (int, float)):
        # the example's value is only known once it is built (it may need tmp_path); an argument
        # classed as a scalar whose example is an array (e.g. rho of the toy solvers, a vector of
        # class ratios) has no Python number to convert, and its array forms are covered by the
        # bad-input tests above
        pytest.skip(f"{arg} of the example is not a Python number")
    scalar = np.int64(good) if kind in _INT_KINDS else np.float32(good)
    out = _call(key, {**kwargs, arg: scalar})
    # the same value as a Python number gives the same result, bit for bit
    (tmp_path / "ref").mkdir()  # a fresh folder: an output folder of the first call would resume
    ref = _call(key, {**EXAMPLES[key].make(tmp_path / "ref"), arg: scalar.item()})
    assert _same_result(out, ref), f"{key}: {arg}={scalar!r} ({type(scalar).__name__}) changed the result"


_CLOCK_WORDS = ("time", "seconds", "elapsed", "wall")


def _same_result(a, b, depth=0) -> bool:
    """Exact equality of two results (NaN equal to NaN), fields of dataclasses, mappings and
    sequences compared recursively; fields that hold clock readings are skipped."""
    if depth > 5:
        return True
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(
            any(w in f.name for w in _CLOCK_WORDS)
            or _same_result(getattr(a, f.name), getattr(b, f.name), depth + 1)
            for f in dataclasses.fields(a))
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(torch.nan_to_num(a.cpu(), nan=7.7),
                                                           torch.nan_to_num(b.cpu(), nan=7.7))
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.shape == b.shape and (
            np.array_equal(a, b, equal_nan=a.dtype.kind in "fc") if a.dtype != object
            else all(_same_result(x, y, depth + 1) for x, y in zip(a.ravel(), b.ravel(), strict=True)))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            any(w in str(k) for w in _CLOCK_WORDS) or _same_result(a[k], b[k], depth + 1) for k in a)
    if isinstance(a, (list, tuple)):
        return (isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(_same_result(x, y, depth + 1) for x, y in zip(a, b, strict=True)))
    if isinstance(a, os.PathLike) and isinstance(b, os.PathLike):  # written into another folder
        return pathlib.Path(a).name == pathlib.Path(b).name
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (a != a and b != b)
    if callable(a) and not hasattr(a, "__dict__") or inspect.isfunction(a) or inspect.ismethod(a):
        return type(a) is type(b)  # a built step function: its behaviour is tested elsewhere
    if type(a).__eq__ is object.__eq__ and hasattr(a, "__dict__"):  # a plain object: its state
        return type(a) is type(b) and _same_result(vars(a), vars(b), depth + 1)
    try:
        return bool(a == b)
    except Exception:  # objects without a meaningful equality (generators)
        return type(a) is type(b)


@pytest.mark.parametrize(("key", "arg"), _bad_cases())
@_SETTINGS
@given(data=st.data())
def test_bad_input_is_rejected(key, arg, data):
    """Every mutation of ``arg`` raises ValueError/TypeError naming ``arg`` (the cases listed in
    KNOWN_FAILURES and KNOWN_SLOW are checked by ``test_known_failures_still_fail``)."""
    problems = []
    for mutation in _mutations(key, arg):
        if (key, arg, mutation) in KNOWN_FAILURES or (key, arg, mutation) in KNOWN_SLOW:
            continue
        problem = _check_rejected(key, arg, mutation, data.draw)
        if problem:
            problems.append(problem)
    if _LOG and problems:
        with open(_LOG + ".problems", "a") as f:
            f.write("".join(p + "\n" for p in problems))
    assert not problems, "\n".join(problems)


def _first_draw(strategy):
    """The simplest value of ``strategy`` (deterministic, no @given needed)."""
    return find(strategy, lambda _: True, settings=settings(database=None))


@pytest.mark.parametrize("case", sorted(KNOWN_FAILURES))
def test_known_failures_still_fail(case):
    """Each listed case still fails; once fixed, remove it from KNOWN_FAILURES."""
    key, arg, mutation = case
    assert _check_rejected(key, arg, mutation, _first_draw) is not None, (
        f"{case} is now rejected properly: remove it from KNOWN_FAILURES"
    )


def _check_rejected(key, arg, mutation, draw) -> str | None:
    with tempfile.TemporaryDirectory() as tmp:
        kwargs = EXAMPLES[key].make(pathlib.Path(tmp))
        good = kwargs[arg] if arg in kwargs else inspect.signature(_target(key)).parameters[arg].default
        if good is None and mutation not in ("cuda", "bogus", "none", "str", "int64", "notcallable"):
            return f"{key}: the example must give {arg} a value to mutate"
        bad = _mutate(mutation, good, draw)
        kwargs[arg] = bad
        where = f"{key}({arg}={_short(bad)}) [{mutation}]"
        t0 = time.perf_counter()
        try:
            out = _call(key, kwargs)
        except (ValueError, TypeError) as exc:
            if arg not in str(exc):
                msg = _short(str(exc), 150)
                return f"{where}: the message does not name {arg!r}: {type(exc).__name__}: {msg}"
            return None
        except AssertionError as exc:  # the global RNG guard
            return f"{where}: {exc}"
        except Exception as exc:  # noqa: BLE001 - any other type is the finding
            return f"{where}: raised {type(exc).__name__} (not ValueError/TypeError): {_short(str(exc), 150)}"
        else:
            return f"{where}: returned without an error{' (NaN in the result)' if _has_nan(out) else ''}"
        finally:
            if _LOG:  # exploration only: which bad calls are not rejected up front
                with open(_LOG, "a") as f:
                    f.write(f"{time.perf_counter() - t0:.3f} {key} {arg} {mutation}\n")


def _short(v, n: int = 60) -> str:
    r = (v if isinstance(v, str) and n > 60 else repr(v)).replace("\n", " ")
    return r if len(r) <= n else r[: n - 3] + "..."
