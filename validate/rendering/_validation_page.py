"""The generated results page (docs/validation.md): one section per report.json, then every case
that does not agree with the failing, unmixed or not-equilibrated quantities behind its verdict
and how it is classified.

Reports are read as plain JSON (:func:`read_report_cases` for the cases); the classifications
are a plain JSON object, case name -> ``{"kind": one of CLASSIFICATION_KINDS, "evidence": str}``
(:func:`read_classifications`). The page holds no time but those in the reports, so the same
files always give the same page.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import re

from ..core._compare import VERDICTS
from ._report import CaseResult, read_report_cases

__all__ = ["render_validation_page", "read_classifications", "CLASSIFICATION_KINDS"]

CLASSIFICATION_KINDS = ("agreement once equilibrated", "theory or reconstruction error", "open")
_CLASS_KEYS = {"kind", "evidence"}

# verdict -> (word for one case, word for several): "1 agrees", "14 agree"
_COUNT_WORDS = {"agrees": ("agrees", "agree"), "disagrees": ("disagrees", "disagree"),
                "not mixed": ("not mixed", "not mixed"),
                "not equilibrated": ("not equilibrated", "not equilibrated"),
                "error": ("error", "errors")}

# the header fields of a report.json shown per report, with their JSON types
_HEADER_FIELDS = {"suite": (str,), "seed": (int,), "device": (str, type(None)),
                  "richlazy_version": (str,), "created": (str,)}


# --------------------------------------------------------------------------------------------
# reading
# --------------------------------------------------------------------------------------------


def _read_report(path) -> tuple[dict, list[CaseResult]]:
    """The header fields (``_HEADER_FIELDS``, None when absent) and the cases of the report.json
    at ``path``; ValueError naming the path when it cannot be read or is not a report."""
    try:
        cases = read_report_cases(path)
        data = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"report {str(path)!r} cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise ValueError(f"report {str(path)!r} is not a richlazy report.json ({exc})") from None
    header = {}
    for key, kinds in _HEADER_FIELDS.items():
        v = data.get(key)
        if v is not None and (not isinstance(v, kinds) or isinstance(v, bool)):
            raise ValueError(f"report {str(path)!r} is not a richlazy report.json ({key} is {v!r})")
        header[key] = v
    return header, cases


def read_classifications(path) -> dict:
    """The classifications in the JSON file at ``path`` (an object, case name -> {"kind",
    "evidence"}), checked; ValueError naming the path when it cannot be read or is not one."""
    try:
        data = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"classifications {str(path)!r} cannot be read "
                         f"({exc.strerror or exc})") from None
    except ValueError as exc:
        raise ValueError(f"classifications {str(path)!r} are not JSON ({exc})") from None
    try:
        checked = _check_classifications(data)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"classifications {str(path)!r}: {exc}") from None
    return {case: {"kind": kind, "evidence": evidence} for case, (kind, evidence) in checked.items()}


def _check_classifications(classifications) -> dict:
    """``classifications`` as {case: (kind, evidence)}; TypeError/ValueError naming the case."""
    if classifications is None:
        return {}
    if not isinstance(classifications, dict):
        raise TypeError(f"classifications must be a dict (case name -> dict(kind=..., "
                        f"evidence=...)), got {type(classifications).__name__}")
    out = {}
    for case, entry in classifications.items():
        if not isinstance(case, str) or not case:
            raise TypeError(f"classifications keys must be case names, got {case!r}")
        if not isinstance(entry, dict):
            raise TypeError(f"classification of case {case!r} must be a dict with kind and "
                            f"evidence, got {type(entry).__name__}")
        extra = sorted(set(entry) - _CLASS_KEYS, key=str)
        if extra:
            raise ValueError(f"classification of case {case!r} has unknown keys {extra}; it "
                             "takes kind and evidence")
        kind, evidence = entry.get("kind"), entry.get("evidence", "")
        if kind not in CLASSIFICATION_KINDS:
            raise ValueError(f"classification of case {case!r}: kind must be one of "
                             f"{CLASSIFICATION_KINDS}, got {kind!r}")
        if not isinstance(evidence, str):
            raise TypeError(f"classification of case {case!r}: evidence must be a string, got "
                            f"{type(evidence).__name__}")
        out[case] = (kind, evidence.strip())
    return out


def _check_reports(reports) -> list[tuple[str | None, str]]:
    """``reports`` as a list of (label or None, path as text); TypeError/ValueError naming it."""
    if isinstance(reports, (str, bytes, os.PathLike)) or not hasattr(reports, "__iter__"):
        raise TypeError(f"reports must be a list of (label, path) pairs, got {type(reports).__name__}")
    out = []
    for item in reports:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise TypeError(f"reports must hold (label, path) pairs, got {item!r}")
        label, path = item
        if label is not None and (not isinstance(label, str) or not label.strip()):
            raise ValueError(f"report label must be a non-empty string or None, got {label!r}")
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"report path must be a str or path, got {type(path).__name__}")
        out.append((label, os.fspath(path)))
    if not out:
        raise ValueError("reports must name at least one report.json")
    return out


# --------------------------------------------------------------------------------------------
# formatting
# --------------------------------------------------------------------------------------------


def _num(v) -> str:
    """A number in 4 significant digits ("—" for None, "inf"/"nan" as such)."""
    if v is None:
        return "—"
    v = float(v)
    return f"{v:.4g}" if math.isfinite(v) else str(v)


def _seconds(v: float) -> str:
    """Seconds with one decimal ("—" when not known)."""
    return f"{v:.1f}" if math.isfinite(v) else "—"


def _cell(text) -> str:
    """Text for one Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _code(text) -> str:
    """``text`` as an inline code span (a fence longer than any run of backticks in it)."""
    text = " ".join(str(text).split())
    runs = [len(r) for r in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _verdict_counts(cases) -> str:
    """"N cases: 14 agree, 6 not mixed" (verdicts in the order of VERDICTS)."""
    parts = []
    for v in VERDICTS:
        n = sum(c.verdict == v for c in cases)
        if n:
            parts.append(f"{n} {_COUNT_WORDS[v][n != 1]}")
    n = len(cases)
    return f"{n} case{'s' if n != 1 else ''}: {', '.join(parts) or 'none'}"


# --------------------------------------------------------------------------------------------
# per-case numbers
# --------------------------------------------------------------------------------------------


def _class_counts(case: CaseResult) -> tuple[int, int, int]:
    """How many quantities of ``case`` are declared mixing, frozen, or not declared."""
    classes = [q.ergodicity for q in case.quantities]
    return classes.count("mixing"), classes.count("frozen"), classes.count(None)


def _max_rhat_not_frozen(case: CaseResult) -> float | None:
    """The largest split-R-hat over the quantities of ``case`` that are not declared frozen
    (None when none of them carries one)."""
    r = [q.rhat for q in case.quantities if q.rhat is not None and not q.frozen]
    return max(r) if r else None


def _frozen_equilibrated(case: CaseResult) -> str:
    """"k/n": the frozen quantities of ``case`` that equilibrated, of all frozen ones ("—")."""
    frozen = [q for q in case.quantities if q.frozen]
    if not frozen:
        return "—"
    return f"{sum(q.equilibrated is True for q in frozen)}/{len(frozen)}"


def _flagged(q) -> list[str]:
    """Why a quantity stands behind an inconclusive or disagreeing verdict ([] when it does not):
    it failed, its chains have not mixed (not frozen), or it is frozen and not equilibrated."""
    why = []
    if not q.passed:
        why.append("failed")
    if q.mixed is False and not q.frozen:
        why.append("not mixed")
    if q.frozen and not q.equilibrated:
        why.append("not equilibrated")
    return why


# --------------------------------------------------------------------------------------------
# sections
# --------------------------------------------------------------------------------------------

_CASE_HEAD = ("| case | paper | verdict | quantities | mixing | frozen | undeclared | "
              "max R̂ (not frozen) | frozen equilibrated | seconds |")
_CASE_RULE = "|---|---|---|---|---|---|---|---|---|---|"


def _case_row(c: CaseResult) -> str:
    """One row of a report's case table."""
    mixing, frozen, undeclared = _class_counts(c)
    return (f"| {_cell(_code(c.name))} | {_cell(c.paper)} | {c.verdict} | {len(c.quantities)} | "
            f"{mixing} | {frozen} | {undeclared} | {_num(_max_rhat_not_frozen(c))} | "
            f"{_frozen_equilibrated(c)} | {_seconds(c.seconds)} |")


def _report_section(label: str, path: str, header: dict, cases) -> list[str]:
    """The lines of one report's section: where it came from, its verdict counts, its cases."""
    def field(key):
        v = header[key]
        return "—" if v is None else str(v)

    lines = ["", f"## {label}", "",
             f"Report {_code(path)} · suite {_code(field('suite'))} · seed {field('seed')} · "
             f"device {_code(field('device'))} · richlazy {field('richlazy_version')} · "
             f"created {field('created')}", "",
             f"**{_verdict_counts(cases)}.**"]
    if cases:
        lines += ["", _CASE_HEAD, _CASE_RULE, *(_case_row(c) for c in cases)]
    return lines


def _quantity_row(q) -> str:
    """One row of an inconclusive case's quantity table."""
    note = q.equilibration_note if q.frozen else ""
    return (f"| {_cell(q.name)} | {', '.join(_flagged(q))} | {_num(q.theory)} | "
            f"{_num(q.simulation)} | {_num(q.stderr)} | {_num(q.rhat)} | "
            f"{q.ergodicity or '—'} | {_cell(note) or '—'} |")


def _classification_line(name: str, classes: dict) -> str:
    """How ``name`` is classified: kind and evidence, or "unclassified"."""
    if name not in classes:
        return "Classification: unclassified."
    kind, evidence = classes[name]
    return f"Classification: **{kind}**" + (f" — {evidence}" if evidence else ".")


def _inconclusive_case(label: str, c: CaseResult, classes: dict) -> list[str]:
    """The lines of one case that does not agree."""
    lines = ["", f"### {_code(c.name)} ({label})", "",
             f"Verdict: **{c.verdict}** · paper {c.paper} · seed {c.seed} · device "
             f"{_code(c.device if c.device is not None else '—')}", "",
             _classification_line(c.name, classes)]
    if c.error:
        last = c.error.rstrip().splitlines()[-1] if c.error.strip() else ""
        lines += ["", f"Error: {_code(last)}"]
    flagged = [q for q in c.quantities if _flagged(q)]
    if flagged:
        lines += ["", "| quantity | why | theory | simulation | stderr | R̂ | class | "
                  "equilibration note |", "|---|---|---|---|---|---|---|---|"]
        lines += [_quantity_row(q) for q in flagged]
    return lines


def _inconclusive_section(loaded, classes: dict) -> list[str]:
    """Every case of every report whose verdict is not "agrees"."""
    lines = ["", "## Inconclusive and disagreeing cases"]
    found = False
    for label, _path, _header, cases in loaded:
        for c in cases:
            if c.verdict != "agrees":
                found = True
                lines += _inconclusive_case(label, c, classes)
    if not found:
        lines += ["", "None: every case of every report agrees."]
    return lines


_INTRO = ("Per report, a table of its cases: the verdict (*agrees*, *disagrees*, *not mixed*, "
          "*not equilibrated*, *error*; docs/report_format.md), the number of compared "
          "quantities, how many declare the ergodicity class *mixing* or *frozen* and how many "
          "declare none (reports written before classes existed), the largest split-R̂ over "
          "the quantities not declared frozen, how many frozen quantities population annealing "
          "equilibrated, and the seconds the case ran.")


def render_validation_page(reports, *, classifications=None) -> str:
    """The Markdown results page of ``reports``, a list of ``(label, path)`` pairs (``path`` a
    report.json; ``label`` the section title, None for the report's suite): a section per
    report with its header and case table, then every case whose verdict is not "agrees" with
    the quantities behind it and its classification from ``classifications`` (case name ->
    dict(kind=one of CLASSIFICATION_KINDS, evidence=str); "unclassified" when absent).

    ValueError names a report path that cannot be read or is not a report.json, and a case
    whose classification has an unknown kind; TypeError names a malformed argument."""
    pairs = _check_reports(reports)
    classes = _check_classifications(classifications)
    loaded = []
    for label, path in pairs:
        header, cases = _read_report(path)
        loaded.append((label if label is not None else (header["suite"] or path), path, header,
                       cases))
    listed = ", ".join(_code(path) for _label, path in pairs)
    lines = ["# Validation results", "",
             f"This page is generated by `richlazy validation-page` from {listed} and must not "
             "be edited by hand (dated measurement logs: docs/notes/validation_log.md).", "",
             _INTRO]
    for label, path, header, cases in loaded:
        lines += _report_section(label, path, header, cases)
    lines += _inconclusive_section(loaded, classes)
    return "\n".join(lines) + "\n"
