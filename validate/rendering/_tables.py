"""Render the symbolic scaling tables (:func:`richlazy.theory.scaling_tables`)
as Markdown, LaTeX, CSV or JSON.  Pure string building; the CLI prints the result."""

from __future__ import annotations

import csv
import io
import json

import sympy as sp
from richlazy.theory import parse_table_expression

__all__ = ["render_tables", "TABLE_FORMATS"]

TABLE_FORMATS = ("md", "latex", "csv", "json")

_COLUMNS = (
    "model",
    "scaling",
    "pattern",
    "energy",
    "parameters",
    "P_star",
    "wins_when",
    "validity",
    "limit",
    "P_star_limit",
    "provenance",
)


def _as_dict(row) -> dict:
    if isinstance(row, dict):
        d = row
    elif hasattr(row, "to_dict"):
        d = row.to_dict()
    else:
        raise TypeError(f"rows must contain TableRow objects or dicts, got {type(row).__name__}")
    missing = [k for k in ("model", "scaling", "pattern", "P_star") if k not in d]
    if missing:
        raise ValueError(f"table row is missing the fields {missing}")
    return d


def _params_text(p: dict, sep: str = ", ") -> str:
    return sep.join(f"{k} ∝ {v}" for k, v in p.items()) if p else "–"


def _md_escape(s: str) -> str:
    return s.replace("|", "\\|")


def _render_md(rows: list[dict]) -> str:
    head = (
        "model",
        "scaling",
        "pattern",
        "energy (scaling form)",
        "minimising parameters",
        "P_* ∝",
        "wins when",
        "valid when",
        "limit",
        "P_* in limit",
        "provenance",
    )
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [
            r["model"],
            r["scaling"],
            r["pattern"],
            f"`{r.get('energy', '')}`",
            _params_text(r.get("parameters", {})),
            f"`{r['P_star']}`",
            "; ".join(r.get("wins_when", [])) or "–",
            "; ".join(r.get("validity", [])) or "–",
            r.get("limit", ""),
            f"`{r.get('P_star_limit', '')}`",
            r.get("provenance", ""),
        ]
        out.append("| " + " | ".join(_md_escape(str(c)) for c in cells) + " |")
    return "\n".join(out) + "\n"


def _tex(expr: str) -> str:
    try:
        return "$" + sp.latex(parse_table_expression(expr)) + "$"
    except (sp.SympifyError, TypeError, SyntaxError):
        return expr.replace("_", r"\_")


def _tex_text(s: str) -> str:
    for a, b in (
        ("\\", r"\textbackslash{}"),
        ("_", r"\_"),
        ("&", r"\&"),
        ("%", r"\%"),
        ("#", r"\#"),
        ("∝", r"$\propto$"),
    ):
        s = s.replace(a, b)
    return s


def _tex_condition(cond: str) -> str:
    # "vs GP: N < d**5" -> "vs GP: $N < d^{5}$"
    label, sep, rel = cond.rpartition(": ")
    if sep and rel and not rel.startswith("tie"):
        try:
            return _tex_text(label) + ": $" + sp.latex(parse_table_expression(rel)) + "$"
        except (sp.SympifyError, TypeError, SyntaxError):
            pass
    return _tex_text(cond)


def _render_latex(rows: list[dict]) -> str:
    lines = [
        r"\begin{tabular}{lllllll}",
        r"\hline",
        r"model & scaling & pattern & $\tilde E$ & minimising parameters & $P_*\propto$ & "
        r"wins when \\",
        r"\hline",
    ]
    for r in rows:
        params = (
            ", ".join(
                f"${sp.latex(sp.Symbol(k))}\\propto {sp.latex(parse_table_expression(v))}$"
                for k, v in r.get("parameters", {}).items()
            )
            or "--"
        )
        wins = "; ".join(_tex_condition(c) for c in r.get("wins_when", [])) or "--"
        lines.append(
            " & ".join(
                [
                    _tex_text(r["model"]),
                    _tex_text(r["scaling"]),
                    _tex_text(r["pattern"]),
                    _tex(r.get("energy", "")),
                    params,
                    _tex(r["P_star"]),
                    wins,
                ]
            )
            + r" \\"
        )
    lines += [r"\hline", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def _render_csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(_COLUMNS)
    for r in rows:
        vals = []
        for c in _COLUMNS:
            v = r.get(c, "")
            if isinstance(v, dict):
                v = "; ".join(f"{k}={x}" for k, x in v.items())
            elif isinstance(v, list):
                v = "; ".join(str(x) for x in v)
            vals.append(v)
        w.writerow(vals)
    return buf.getvalue()


def render_tables(rows, fmt: str = "md") -> str:
    """Render scaling-table rows (``TableRow`` objects or their ``to_dict()``) as ``fmt``:

    * ``"md"``: a Markdown table (one line per row);
    * ``"latex"``: a ``tabular`` environment with SymPy-LaTeX expressions;
    * ``"csv"``: header + one line per row (dict/list fields joined with "; ");
    * ``"json"``: a JSON list of row dicts (fields of ``TableRow.to_dict``).
    """
    if fmt not in TABLE_FORMATS:
        raise ValueError(f"fmt must be one of {TABLE_FORMATS}, got {fmt!r}")
    try:
        items = list(rows)
    except TypeError:
        raise TypeError(
            f"rows must be an iterable of table rows, got {type(rows).__name__}"
        ) from None
    dicts = [_as_dict(r) for r in items]
    if fmt == "json":
        return json.dumps(dicts, indent=2, ensure_ascii=False) + "\n"
    if fmt == "csv":
        return _render_csv(dicts)
    if fmt == "latex":
        return _render_latex(dicts)
    return _render_md(dicts)
