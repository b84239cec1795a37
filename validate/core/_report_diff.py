"""Statistical comparison of two validation reports: the same cases run twice (for example on the
CPU and on CUDA, or before and after a change) should give simulations that differ only by their
standard errors.

For each quantity present in both reports, with simulations x_A ± s_A and x_B ± s_B,

    z = (x_A − x_B) / sqrt(s_A² + s_B²),

which is standard normal when the two runs sample the same law independently (different random
streams, e.g. torch's CPU and CUDA generators). Across n such quantities about 0.27 % of |z| exceed
3 and the root mean square of z is about 1; a larger spread, or many |z| > 3 in one case, says the
two runs do not sample the same thing. Quantities without a standard error (deterministic fits,
pass/fail checks) are listed with their difference only.
"""

from __future__ import annotations

import json
import math
import pathlib
from dataclasses import dataclass

__all__ = ["QuantityDiff", "CaseDiff", "ReportDiff", "load_report_cases", "diff_reports"]


def _rms(z) -> float | None:
    """Root mean square of the values z (None when there are none)."""
    return math.sqrt(sum(v * v for v in z) / len(z)) if z else None


@dataclass(frozen=True)
class QuantityDiff:
    """One quantity of one case in both reports: simulations ``a``, ``b``, their combined
    standard error ``se`` = sqrt(s_A² + s_B²) (None when either has none) and ``z`` = (a − b)/se
    (None without a standard error)."""

    name: str
    a: float
    b: float
    se: float | None
    z: float | None


@dataclass(frozen=True)
class CaseDiff:
    """The quantities of one case found in both reports; ``only_a``/``only_b`` name those found
    in one report only (their names differ, e.g. a name that quotes a run-dependent number)."""

    case: str
    quantities: tuple[QuantityDiff, ...]
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]
    seconds_a: float | None
    seconds_b: float | None
    device_a: str | None
    device_b: str | None

    @property
    def z(self) -> tuple[float, ...]:
        """The finite z of the case's quantities."""
        return tuple(q.z for q in self.quantities if q.z is not None and math.isfinite(q.z))

    @property
    def rms_z(self) -> float | None:
        return _rms(self.z)

    @property
    def max_abs_z(self) -> float | None:
        return max((abs(v) for v in self.z), default=None)

    def n_beyond(self, k: float) -> int:
        """How many quantities have |z| > k."""
        return sum(abs(v) > k for v in self.z)


@dataclass(frozen=True)
class ReportDiff:
    """Every case present in both reports, and the cases present in one only."""

    cases: tuple[CaseDiff, ...]
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]

    @property
    def z(self) -> tuple[float, ...]:
        return tuple(v for c in self.cases for v in c.z)

    @property
    def rms_z(self) -> float | None:
        return _rms(self.z)

    def n_beyond(self, k: float) -> int:
        return sum(c.n_beyond(k) for c in self.cases)

    def expected_beyond(self, k: float) -> float:
        """The expected number of |z| > k among the compared quantities if both runs sample the
        same law: n · erfc(k/√2)."""
        return len(self.z) * math.erfc(k / math.sqrt(2.0))


def load_report_cases(path, *, name: str = "path") -> dict[str, dict]:
    """The cases of a report, by case name: ``path`` is a report.json, a report folder, or a
    folder of report folders (every ``*/report.json`` below it is read; a case found twice raises
    ValueError)."""
    p = pathlib.Path(path)
    if p.is_file():
        files = [p]
    elif p.is_dir():
        files = [p / "report.json"] if (p / "report.json").is_file() else sorted(p.rglob("report.json"))
    else:
        raise ValueError(f"{name} must be a report.json or a folder holding one, got {str(path)!r} "
                         "(no such file or folder)")
    if not files:
        raise ValueError(f"{name}: no report.json in {str(path)!r} or below it")
    cases: dict[str, dict] = {}
    for f in files:
        try:
            data = json.loads(f.read_text())
        except (OSError, ValueError):
            raise ValueError(f"{name}: {str(f)!r} is not a richlazy report.json (not readable "
                             "JSON)") from None
        problem = _structure_problem(data)
        if problem:
            raise ValueError(f"{name}: {str(f)!r} is not a richlazy report.json ({problem})")
        for c in data["cases"]:
            if c["name"] in cases:
                raise ValueError(f"{name}: case {c['name']!r} appears twice under {str(path)!r}")
            cases[c["name"]] = c
    return cases


def _structure_problem(data) -> str | None:
    """What keeps ``data`` from being read as a report (None when it can be): an object with a
    list "cases" of objects, each with a string "name" and a list "quantities" (may be absent)
    of objects with a string "name"."""
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        return 'no list "cases"'
    for i, c in enumerate(data["cases"]):
        if not isinstance(c, dict) or not isinstance(c.get("name"), str):
            return f'case {i} is not an object with a string "name"'
        qs = c.get("quantities", [])
        if not isinstance(qs, list):
            return f'case {c["name"]!r}: "quantities" is {type(qs).__name__}, not a list'
        for j, q in enumerate(qs):
            if not isinstance(q, dict) or not isinstance(q.get("name"), str):
                return f'case {c["name"]!r}: quantity {j} is not an object with a string "name"'
    return None


def _number(v) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v)


def _quantity(name: str, qa: dict, qb: dict) -> QuantityDiff | None:
    a, b = _number(qa.get("simulation")), _number(qb.get("simulation"))
    if a is None or b is None:
        return None
    sa, sb = _number(qa.get("stderr")), _number(qb.get("stderr"))
    se = math.hypot(sa, sb) if sa is not None and sb is not None else None
    if se is None:
        z = None
    elif se > 0:
        z = (a - b) / se
    else:
        z = 0.0 if a == b else math.copysign(math.inf, a - b)
    return QuantityDiff(name, a, b, se, z)


def _case(name: str, ca: dict, cb: dict) -> CaseDiff:
    qa = {q["name"]: q for q in ca.get("quantities", [])}
    qb = {q["name"]: q for q in cb.get("quantities", [])}
    rows = tuple(d for n in qa if n in qb if (d := _quantity(n, qa[n], qb[n])) is not None)
    return CaseDiff(name, rows, tuple(n for n in qa if n not in qb), tuple(n for n in qb if n not in qa),
                    _number(ca.get("seconds")), _number(cb.get("seconds")), ca.get("device"),
                    cb.get("device"))


def diff_reports(a, b, *, names: tuple[str, str] = ("a", "b")) -> ReportDiff:
    """Compare the simulations of two reports quantity by quantity (module docstring: z of the
    difference over the combined standard error). ``a`` and ``b`` are what
    :func:`load_report_cases` reads; cases and quantities are matched by name. ``names`` are what
    error messages call the two reports (the command line passes REPORT_A, REPORT_B)."""
    ca, cb = load_report_cases(a, name=names[0]), load_report_cases(b, name=names[1])
    cases = tuple(_case(n, ca[n], cb[n]) for n in sorted(ca) if n in cb)
    return ReportDiff(cases, tuple(sorted(n for n in ca if n not in cb)),
                      tuple(sorted(n for n in cb if n not in ca)))
