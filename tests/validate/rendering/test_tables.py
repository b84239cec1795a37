"""Tests for richlazy.validate.rendering._tables (Markdown / LaTeX / CSV / JSON scaling tables)."""

import csv
import io
import json

import pytest
from richlazy.theory import parse_table_expression, scaling_tables
from richlazy.validate.rendering._tables import TABLE_FORMATS, render_tables


@pytest.fixture(scope="module")
def rows():
    return scaling_tables(model="fcn*")


@pytest.mark.slow
def test_json_round_trips_the_rows(rows):
    back = json.loads(render_tables(rows, "json"))
    assert back == [r.to_dict() for r in rows]
    assert all(parse_table_expression(r["P_star"]) is not None for r in back)


def test_csv_has_header_and_one_line_per_row(rows):
    recs = list(csv.DictReader(io.StringIO(render_tables(rows, "csv"))))
    assert len(recs) == len(rows)
    assert [r["P_star"] for r in recs] == [r.P_star for r in rows]
    gfl = next(
        r
        for r in recs
        if r["model"] == "fcn2-erf-He3" and r["pattern"] == "GFL" and r["scaling"] == "standard"
    )
    assert gfl["parameters"].startswith("D=")


def test_markdown_table_shape(rows):
    lines = render_tables(rows, "md").strip().splitlines()
    assert len(lines) == len(rows) + 2
    ncols = lines[0].count("|")
    assert all(line.count("|") - line.count("\\|") == ncols for line in lines)


def test_latex_table(rows):
    tex = render_tables(rows, "latex")
    assert tex.startswith(r"\begin{tabular}") and tex.rstrip().endswith(r"\end{tabular}")
    assert tex.count(r"\\") == len(rows) + 1
    assert r"\sqrt[3]{N_{1}} \sqrt[3]{N_{2}} \sqrt[3]{d}" in tex  # Sp.-Mag. row of Table 1
    assert r"\beta" in tex


def test_dict_rows_accepted_and_formats_listed(rows):
    dicts = [r.to_dict() for r in rows]
    assert render_tables(dicts, "md") == render_tables(rows, "md")
    assert TABLE_FORMATS == ("md", "latex", "csv", "json")


@pytest.mark.parametrize(
    ("args", "exc", "msg"),
    [
        (([], "html"), ValueError, "fmt must be one of"),
        ((3, "md"), TypeError, "rows must be an iterable"),
        (([1], "md"), TypeError, "rows must contain TableRow"),
        (([{"model": "x"}], "json"), ValueError, "missing the fields"),
    ],
)
def test_input_validation(args, exc, msg):
    with pytest.raises(exc, match=msg):
        render_tables(*args)
