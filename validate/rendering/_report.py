"""Validation reports: one folder per run with ``report.json``, ``report.md`` and figures.

``report.json`` layout::

    {"richlazy_version": ..., "suite": "quick", "created": ISO time, "device": ..., "seed": ...,
     "passed": bool, "cases": [
        {"name", "paper", "description", "passed", "seconds", "device", "seed", "suite",
         "quantities": [{name, theory, simulation, stderr, z, rel_error, tolerance_kind,
                         tolerance, passed, note}, ...],
         "figures": [relative paths], "params": {...}, "notes": str, "error": str | null}]}
"""

from __future__ import annotations

import json
import math
import pathlib
from dataclasses import asdict, dataclass, field

from ..core._compare import Quantity

__all__ = ["CaseResult", "Report", "write_report", "render_markdown", "atomic_write_text"]


@dataclass(frozen=True)
class CaseResult:
    name: str
    paper: str
    description: str
    passed: bool
    seconds: float
    device: str
    seed: int
    suite: str
    quantities: list[Quantity] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
    params: dict = field(default_factory=dict)
    notes: str = ""
    error: str | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["quantities"] = [q.to_dict() for q in self.quantities]
        return d


@dataclass(frozen=True)
class Report:
    suite: str
    device: str
    seed: int
    created: str
    version: str
    cases: list[CaseResult]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.cases)

    def to_dict(self) -> dict:
        return {
            "richlazy_version": self.version,
            "suite": self.suite,
            "created": self.created,
            "device": self.device,
            "seed": self.seed,
            "passed": self.passed,
            "cases": [c.to_dict() for c in self.cases],
        }


def atomic_write_text(path: pathlib.Path, text: str) -> None:
    """Write UTF-8 text atomically (see :func:`richlazy.simulate.atomic_write`), mode 0644."""
    from richlazy.simulate import atomic_write  # here, not at import: rendering needs no torch

    atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))


def _json_default(o):
    if hasattr(o, "tolist"):
        return o.tolist()
    if isinstance(o, pathlib.Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def _clean(o):
    """Replace non-finite floats (not valid JSON) by None / strings."""
    if isinstance(o, float):
        if math.isnan(o):
            return None
        if math.isinf(o):
            return "inf" if o > 0 else "-inf"
        return o
    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    return o


def _fmt(v, digits=4):
    if v is None:
        return "—"
    if isinstance(v, float):
        if not math.isfinite(v):
            return str(v)
        return f"{v:.{digits}g}"
    return str(v)


def render_markdown(report: Report) -> str:
    lines = [
        f"# richlazy validation report — suite `{report.suite}`",
        "",
        f"richlazy {report.version} · device `{report.device}` · seed {report.seed} · {report.created}",
        "",
        f"**{sum(c.passed for c in report.cases)} of {len(report.cases)} cases passed.**",
        "",
        "| case | passed | quantities passed | seconds |",
        "|---|---|---|---|",
    ]
    for c in report.cases:
        nq = len(c.quantities)
        npass = sum(q.passed for q in c.quantities)
        lines.append(f"| `{c.name}` | {'yes' if c.passed else '**NO**'} | {npass}/{nq} | {c.seconds:.1f} |")
    for c in report.cases:
        lines += ["", f"## `{c.name}` — {'passed' if c.passed else 'FAILED'}", "", c.description, ""]
        if c.error:
            lines += ["**Error:**", "", "```", c.error, "```", ""]
        if c.params:
            lines.append("Parameters: " + ", ".join(f"{k}={_fmt(v)}" for k, v in c.params.items()))
            lines.append("")
        if c.quantities:
            lines += [
                "| quantity | theory | simulation | stderr | z | rel. error | tolerance | passed |",
                "|---|---|---|---|---|---|---|---|",
            ]
            for q in c.quantities:
                if q.tolerance_kind == "gt":
                    tol = f"sim − theory ≥ {_fmt(q.tolerance, 3)} SE"
                else:
                    tol = f"{q.tolerance_kind} ≤ {_fmt(q.tolerance, 3)}"
                lines.append(
                    f"| {q.name} | {_fmt(q.theory)} | {_fmt(q.simulation)} | {_fmt(q.stderr, 2)} | "
                    f"{_fmt(q.z, 3)} | {_fmt(q.rel_error, 3)} | {tol} | {'yes' if q.passed else '**NO**'} |"
                )
            notes = sorted({q.note for q in c.quantities if q.note})
            if notes:
                lines += ["", "Tolerances: " + " ".join(notes)]
        if c.notes:
            lines += ["", c.notes]
        for fig in c.figures:
            lines += ["", f"![{fig}]({fig})"]
    return "\n".join(lines) + "\n"


def write_report(report: Report, out_dir: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """Write ``report.json`` and ``report.md`` atomically into ``out_dir``."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    jpath = out_dir / "report.json"
    mpath = out_dir / "report.md"
    atomic_write_text(jpath, json.dumps(_clean(report.to_dict()), indent=2, default=_json_default) + "\n")
    atomic_write_text(mpath, render_markdown(report))
    return jpath, mpath
