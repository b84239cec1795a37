"""Result helpers shared by :mod:`richlazy.simulate` (the twin of ``richlazy.theory._results``'s
:class:`DeprecatedDictAccess`; simulate and theory never import each other).

Results that used to be plain dicts mix in :class:`DeprecatedDictAccess`: for one release
``result["key"]`` still returns the field, with a ``DeprecationWarning`` naming it.
"""

from __future__ import annotations

import dataclasses
import warnings

__all__ = ["DeprecatedDictAccess"]


class DeprecatedDictAccess:
    """Mixin for a frozen dataclass result that used to be a plain dict (kept for one release).

    ``result["key"]`` returns the field the old key maps to and emits ``DeprecationWarning
    ("result['key'] is deprecated; use result.field")``; ``keys()``, ``items()``, ``in`` and
    iteration see the old keys (``keys()``/``items()``/iteration warn too). The old keys are the
    field names unless the class overrides :meth:`_old_keys` (``{old key: field name}``).
    """

    def _old_keys(self) -> dict[str, str]:
        return {f.name: f.name for f in dataclasses.fields(self)}

    def __getitem__(self, key):
        field = self._old_keys().get(key) if isinstance(key, str) else None
        if field is None:
            raise KeyError(key)
        warnings.warn(f"result[{key!r}] is deprecated; use result.{field}", DeprecationWarning,
                      stacklevel=2)
        return getattr(self, field)

    def __contains__(self, key) -> bool:
        return key in self._old_keys()

    def _warn_mapping(self, what: str) -> None:
        warnings.warn(f"result.{what} is deprecated (the result is no longer a dict); use its "
                      f"fields {tuple(self._old_keys().values())}", DeprecationWarning, stacklevel=3)

    def keys(self):
        """The old dict keys (deprecated)."""
        self._warn_mapping("keys()")
        return self._old_keys().keys()

    def items(self):
        """``(old key, value)`` pairs as the dict had them (deprecated)."""
        self._warn_mapping("items()")
        return [(k, getattr(self, f)) for k, f in self._old_keys().items()]

    def __iter__(self):
        self._warn_mapping("__iter__()")
        return iter(self._old_keys())
