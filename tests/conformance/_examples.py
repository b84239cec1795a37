"""The example table of the conformance suite: one small, valid example call per public callable
of richlazy.theory, richlazy.simulate and richlazy.validate, with the kind of each argument that
the suite mutates (tables per package in _examples_<package>.py, shared pieces in _common.py).

An entry is keyed ``"<package>.<name>"`` (``"theory.nngp_kernel"``); methods of public classes
may be added as ``"<package>.<Class>.<method>"`` with a ``call``. ``make(tmp)`` returns the keyword
arguments of the valid call (fresh objects on every call; ``tmp`` is a scratch folder).
``kinds`` maps an argument name to one of the kinds of ``KINDS`` (test_public_api.py); arguments
not listed are never mutated. ``accepted`` lists (argument, mutation) pairs that are valid
inputs by design, with the reason.
"""

from ._common import Example
from ._examples_simulate import SIMULATE
from ._examples_theory import THEORY
from ._examples_validate import VALIDATE

EXAMPLES: dict[str, Example] = {**THEORY, **SIMULATE, **VALIDATE}

__all__ = ["EXAMPLES", "Example"]
