"""Validation reports: one folder per run with ``report.json``, ``report.md`` and figures.

``report.json`` layout::

    {"richlazy_version": ..., "suite": "quick", "created": ISO time, "device": ..., "seed": ...,
     "passed": bool (every case agrees), "ok": bool (no case disagrees or errors: exit code 0),
     "verdicts": {verdict: number of cases}, "cases": [
        {"name", "paper", "description", "passed", "seconds", "device", "seed", "suite",
         "quantities": [{name, theory, simulation, stderr, z, rel_error, tolerance_kind,
                         tolerance, passed, note, rhat, ess_bulk, ess_tail, mixed,
                         ergodicity, ergodicity_reason, equilibrated, equilibration_note}, ...],
         "figures": [relative paths], "params": {...}, "notes": str, "error": str | null,
         "verdict": "agrees" | "disagrees" | "not mixed" | "not equilibrated" | "error",
         "finished": ISO time,
         "max_rhat": float | null, "min_ess_bulk": float | null}]}

``rhat``/``ess_bulk``/``ess_tail``/``mixed`` are null for quantities not estimated from chains; an
infinite R-hat (stuck chains) is written as the string "inf". The verdict rule is that of
:func:`richlazy.validate.core._compare.case_verdict`; ``passed`` is ``verdict == "agrees"``.

A folder collects the cases of every run into it: :func:`merge_cases` keeps the cases of the
report already there (read as plain JSON by :func:`read_report_cases`) and replaces those run
again. Each case carries its own ``suite``, ``seed``, ``device``, ``seconds`` (how long it ran)
and ``finished`` (when); the top-level ``suite``, ``device``, ``seed`` and ``created`` are those
of the latest run, ``passed``, ``ok`` and ``verdicts`` count every case in the file.
"""

from __future__ import annotations

import json
import math
import pathlib
from dataclasses import asdict, dataclass, field

from ..core._compare import VERDICTS, Quantity, case_verdict, max_rhat, min_ess

__all__ = ["CaseResult", "Report", "write_report", "render_markdown", "atomic_write_text",
           "render_case_line", "render_case_table", "read_report_cases", "merge_cases",
           "ReportWarning"]


class ReportWarning(RuntimeWarning):
    """Something about a report folder worth one line (the CLI prints it as a warning)."""


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
    verdict: str = ""
    finished: str = ""  # when the case ended (ISO 8601, UTC); "" when not known

    def __post_init__(self):
        # "" = derive it from the quantities and the error (case_verdict)
        if self.verdict == "":
            object.__setattr__(self, "verdict", case_verdict(self.quantities, self.error))
        elif self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")

    @property
    def max_rhat(self) -> float | None:
        """Largest R-hat over the sampled quantities (None if none is sampled)."""
        return max_rhat(self.quantities)

    @property
    def min_ess_bulk(self) -> float | None:
        """Smallest (defined) bulk ESS over the sampled quantities (None if none)."""
        return min_ess(self.quantities)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["quantities"] = [q.to_dict() for q in self.quantities]
        d["max_rhat"] = self.max_rhat
        d["min_ess_bulk"] = self.min_ess_bulk
        return d

    @classmethod
    def from_dict(cls, d) -> CaseResult:
        """The case a report.json entry describes (ValueError naming what is wrong)."""
        if not isinstance(d, dict) or not isinstance(d.get("name"), str) or not d["name"]:
            raise ValueError("a case must be a JSON object with a non-empty string 'name'")
        name = d["name"]
        for key, kinds in _CASE_FIELDS.items():
            if not isinstance(d.get(key), kinds) or isinstance(d.get(key), bool) != (bool in kinds):
                raise ValueError(f"case {name!r}: {key} is {d.get(key)!r}")
        if not all(isinstance(f, str) for f in d["figures"]):
            raise ValueError(f"case {name!r}: figures must be strings")
        seconds = math.nan if d["seconds"] is None else float(d["seconds"])
        qs = [Quantity.from_dict(q) for q in d["quantities"]]
        try:
            return cls(name, d["paper"], d["description"], d["passed"], seconds, d["device"],
                       d["seed"], d["suite"], qs, list(d["figures"]), dict(d["params"]),
                       d["notes"], d["error"], d["verdict"], d.get("finished") or "")
        except (TypeError, ValueError) as exc:
            raise ValueError(f"case {name!r}: {exc}") from None


# the fields of a report.json case and their JSON types (read back by CaseResult.from_dict)
_CASE_FIELDS = {"paper": (str,), "description": (str,), "passed": (bool,),
                "seconds": (int, float, type(None)), "device": (str, type(None)), "seed": (int,),
                "suite": (str,), "quantities": (list,), "figures": (list,), "params": (dict,),
                "notes": (str,), "error": (str, type(None)), "verdict": (str,)}


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
        """Every case agrees."""
        return all(c.passed for c in self.cases)

    @property
    def ok(self) -> bool:
        """No case disagrees and none errored: what ``richlazy validate`` turns into exit code 0.
        A *not mixed* or *not equilibrated* case is inconclusive, not a failure (its diagnostics
        say the comparison is not yet evidence either way); it is counted and listed separately."""
        return all(c.verdict in ("agrees", "not mixed", "not equilibrated") for c in self.cases)

    def to_dict(self) -> dict:
        return {
            "richlazy_version": self.version,
            "suite": self.suite,
            "created": self.created,
            "device": self.device,
            "seed": self.seed,
            "passed": self.passed,
            "ok": self.ok,
            "verdicts": {v: sum(c.verdict == v for c in self.cases) for v in VERDICTS},
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


_VERDICT_MD = {"agrees": "agrees", "disagrees": "**DISAGREES**", "not mixed": "**NOT MIXED**",
               "not equilibrated": "**NOT EQUILIBRATED**", "error": "**ERROR**"}


def _rhat_fmt(v) -> str:
    if v is None:
        return "—"
    return f"{v:.3f}" if math.isfinite(v) else str(v)


def _rhat_md(q: Quantity) -> str:
    txt = _rhat_fmt(q.rhat)
    return txt if q.rhat is None or q.mixed else f"**{txt}**"


def _class_md(q: Quantity) -> str:
    """The ergodicity class cell: the class, and for a frozen quantity whether population
    annealing equilibrated it (bold when not)."""
    if q.ergodicity is None:
        return "—"
    if not q.frozen:
        return q.ergodicity
    return "frozen, equilibrated" if q.equilibrated else "**frozen, not equilibrated**"


def _class_legend(quantities) -> str:
    """One paragraph: each declared class with its reason, and each frozen quantity's
    equilibration note."""
    reasons = sorted({f"*{q.ergodicity}*: {q.ergodicity_reason}" for q in quantities
                      if q.ergodicity is not None})
    eq = sorted({f"{q.name}: {q.equilibration_note}" for q in quantities
                 if q.frozen and q.equilibration_note})
    text = "Ergodicity classes (from the theory): " + " ".join(reasons)
    return text + (" Equilibration: " + "; ".join(eq) + "." if eq else "")


def _ess_fmt(v) -> str:
    if v is None:
        return "—"
    return "n/a" if isinstance(v, float) and math.isnan(v) else f"{v:.0f}"


def render_markdown(report: Report) -> str:
    counts = ", ".join(f"{v}: {n}" for v in VERDICTS
                       if (n := sum(c.verdict == v for c in report.cases)))
    lines = [
        f"# richlazy validation report — suite `{report.suite}`",
        "",
        f"richlazy {report.version} · device `{report.device}` · seed {report.seed} · {report.created}",
        "",
        f"**{sum(c.passed for c in report.cases)} of {len(report.cases)} cases passed** "
        f"({counts or 'no cases'}).",
        "",
        "Verdict: *agrees* = every compared quantity passed; *disagrees* = some quantity failed; "
        "*not mixed* = the chains of some sampled quantity have not mixed (rank-normalised "
        "split-R̂ > 1.01, Vehtari et al. 2021), so agreement is not established either way; "
        "*not equilibrated* = a quantity the theory says is frozen (it depends on which metastable "
        "state a network sits in) lacks population-annealing diagnostics that hold; "
        "*error* = the case raised or compared nothing. Only *agrees* passes; `richlazy validate` "
        "exits with 1 when a case disagrees or errors (a *not mixed* or *not equilibrated* case is "
        "inconclusive and does not change the exit code).",
        "",
        "| case | verdict | quantities passed | max R̂ | min bulk ESS | seconds |",
        "|---|---|---|---|---|---|",
    ]
    for c in report.cases:
        nq = len(c.quantities)
        npass = sum(q.passed for q in c.quantities)
        mr = c.max_rhat
        lines.append(f"| `{c.name}` | {_VERDICT_MD[c.verdict]} | {npass}/{nq} | "
                     f"{_rhat_fmt(mr)} | {_ess_fmt(c.min_ess_bulk)} | "
                     f"{c.seconds:.1f} |")
    for c in report.cases:
        lines += ["", f"## `{c.name}` — {c.verdict}", "", c.description, "",
                  f"Suite `{c.suite}` · seed {c.seed} · device `{c.device}` · "
                  f"{c.seconds:.1f} s · finished {c.finished or '—'}", ""]
        if c.error:
            lines += ["**Error:**", "", "```", c.error, "```", ""]
        if c.params:
            lines.append("Parameters: " + ", ".join(f"{k}={_fmt(v)}" for k, v in c.params.items()))
            lines.append("")
        if c.quantities:
            sampled = any(q.rhat is not None for q in c.quantities)
            classed = any(q.ergodicity is not None for q in c.quantities)
            head = "| quantity | theory | simulation | stderr | z | rel. error | tolerance | passed |"
            rule = "|---|---|---|---|---|---|---|---|"
            if sampled:
                head += " R̂ | bulk ESS | tail ESS |"
                rule += "---|---|---|"
            if classed:
                head += " class |"
                rule += "---|"
            lines += [head, rule]
            for q in c.quantities:
                if q.tolerance_kind == "gt":
                    tol = f"sim − theory ≥ {_fmt(q.tolerance, 3)} SE"
                else:
                    tol = f"{q.tolerance_kind} ≤ {_fmt(q.tolerance, 3)}"
                ok = "yes" if q.passed else "**NO**"
                row = (f"| {q.name} | {_fmt(q.theory)} | {_fmt(q.simulation)} | {_fmt(q.stderr, 2)} | "
                       f"{_fmt(q.z, 3)} | {_fmt(q.rel_error, 3)} | {tol} | {ok} |")
                if sampled:
                    row += f" {_rhat_md(q)} | {_ess_fmt(q.ess_bulk)} | {_ess_fmt(q.ess_tail)} |"
                if classed:
                    row += f" {_class_md(q)} |"
                lines.append(row)
            notes = sorted({q.note for q in c.quantities if q.note})
            if notes:
                lines += ["", "Tolerances: " + " ".join(notes)]
            if classed:
                lines += ["", _class_legend(c.quantities)]
            if sampled:
                lines += ["", "R̂: rank-normalised split-R̂ (max of bulk and folded) over the "
                          "chains of the series each quantity is estimated from; bold when above "
                          "1.01 (not mixed). ESS: bulk and tail effective sample sizes over all "
                          "chains (n/a: constant series). — : not estimated from chains."]
        if c.notes:
            lines += ["", c.notes]
        for fig in c.figures:
            lines += ["", f"![{fig}]({fig})"]
    return "\n".join(lines) + "\n"


_VERDICT_WORD = {"agrees": "AGREES", "disagrees": "DISAGREES", "not mixed": "NOT MIXED",
                 "not equilibrated": "NOT EQUILIBRATED", "error": "ERROR"}


def _diag_text(res: CaseResult) -> str:
    mr = res.max_rhat
    if mr is None:
        return "not sampled"
    ess = res.min_ess_bulk
    return f"max R̂ {_rhat_fmt(mr)}, min ESS {_ess_fmt(ess)}"


def render_case_line(res: CaseResult) -> str:
    """One terminal line for a finished case: verdict word, name, quantities passed, max R̂ and
    min bulk ESS over its sampled quantities, seconds."""
    nq = len(res.quantities)
    npass = sum(q.passed for q in res.quantities)
    return (f"{_VERDICT_WORD[res.verdict]:<9}  {res.name}  ({npass}/{nq} quantities, "
            f"{_diag_text(res)}, {res.seconds:.1f} s)")


def render_case_table(report: Report) -> str:
    """A fixed-width terminal table of the cases of ``report``: case, verdict, quantities
    passed, max R̂, min bulk ESS, seconds."""
    head = ("case", "verdict", "passed", "max R̂", "min ESS", "seconds")
    rows = []
    for c in report.cases:
        mr = c.max_rhat
        rows.append((c.name, c.verdict, f"{sum(q.passed for q in c.quantities)}/{len(c.quantities)}",
                     _rhat_fmt(mr), _ess_fmt(c.min_ess_bulk),
                     f"{c.seconds:.1f}"))
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    out = [fmt.format(*head), fmt.format(*("-" * w for w in widths))]
    out += [fmt.format(*r) for r in rows]
    return "\n".join(line.rstrip() for line in out) + "\n"


def read_report_cases(path) -> list[CaseResult]:
    """The cases of the report.json at ``path``, read as plain JSON (never unpickled).

    OSError when it cannot be read; ValueError when it is not a richlazy report.json (not JSON,
    or a field of the wrong type)."""
    text = pathlib.Path(path).read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise ValueError("no list of cases")
    return [CaseResult.from_dict(c) for c in data["cases"]]


def merge_cases(earlier, new) -> list[CaseResult]:
    """The cases of an earlier report with those of a new run: a case in both takes the new
    entry at the earlier one's place; the other new cases follow in their order."""
    by_name = {c.name: c for c in new}
    merged = [by_name.pop(c.name, c) for c in earlier]
    return merged + list(by_name.values())


def write_report(report: Report, out_dir: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """Write ``report.json`` and ``report.md`` atomically into ``out_dir``."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    jpath = out_dir / "report.json"
    mpath = out_dir / "report.md"
    atomic_write_text(jpath, json.dumps(_clean(report.to_dict()), indent=2, default=_json_default) + "\n")
    atomic_write_text(mpath, render_markdown(report))
    return jpath, mpath
