"""The reproduce catalogue: every main-text figure and table of the four papers, each key once,
statuses from the allowed set and consistent with the committed reports, implemented entries
naming registered cases and figure files those cases write."""

import ast
import pathlib
import re

import pytest
from richlazy.validate.reproduce import _run
from richlazy.validate.reproduce._catalogue import CATALOGUE, PAPER_TITLES, STATUSES

ROOT = pathlib.Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"

#: the main-text figures and tables of the seed texts (appendix items left out), each covered by
#: the key itself or by panel keys (``003:fig1`` -> ``003:fig1a`` ... ``003:fig1f``)
MAIN_TEXT = {
    "000": ["fig1", "table1", "fig2", "fig3", "fig4", "fig5", "fig6", "fig7"],
    "002": ["fig1", "fig2", "fig3", "table1"],
    "003": ["fig1", "fig2", "fig3"],
    "004": ["fig1", "table1", "table2", "table3", "fig2", "fig3", "fig4", "fig5"],
}


def test_keys_unique_well_formed_and_statuses_allowed():
    keys = [e.key for e in CATALOGUE]
    assert len(keys) == len(set(keys))
    for e in CATALOGUE:
        assert re.fullmatch(r"\d{3}:(fig|table)\d+[a-h]?", e.key), e.key
        assert e.key.startswith(e.paper + ":") and e.paper in PAPER_TITLES
        assert e.status in STATUSES and e.what
        if e.status == "not implemented":
            assert not e.producers and e.note, e.key  # a reason
        else:
            assert e.producers, e.key


def test_every_main_text_figure_and_table_is_catalogued():
    keys = {e.key for e in CATALOGUE}
    for paper, items in MAIN_TEXT.items():
        for item in items:
            key = f"{paper}:{item}"
            assert key in keys or any(re.fullmatch(re.escape(key) + "[a-h]", k) for k in keys), key
    # nothing beyond the main text, and no seed 001 (a summary of 000)
    listed = {re.sub(r"[a-h]$", "", k) for k in keys}
    assert listed == {f"{p}:{i}" for p, items in MAIN_TEXT.items() for i in items}


def test_main_text_list_matches_the_seed_captions():
    """The figure and table numbers of the main texts, read from the captions in the seeds."""
    seeds = ROOT.parent / "shared" / "seeds"
    if not seeds.is_dir():  # a clone without ../shared beside it (CI and the dev setup have it)
        pytest.skip("seed texts not present")
    # 000: captions "Fig. N |" and "Table N |" before the Methods' "Figure N:" parameter lists
    text = (next(seeds.glob("000_*.txt"))).read_text()
    figs = sorted({int(n) for n in re.findall(r"^Fig\. (\d+) \|", text, re.M)})
    tables = sorted({int(n) for n in re.findall(r"^Table (\d+) \|", text, re.M)})
    assert [f"fig{n}" for n in figs] + [f"table{n}" for n in tables] == sorted(
        MAIN_TEXT["000"], key=lambda s: (s.startswith("table"), int(s[-1])))
    # 003: the main text has Figures 1-3 (appendix figures are lettered: C3, F1, ...)
    text = (next(seeds.glob("003_*.txt"))).read_text()
    assert sorted({int(n) for n in re.findall(r"^Figure (\d+):", text, re.M)}) == [1, 2, 3]
    # 004: Figures 1-5 and Tables 1-3 precede the appendices (Figure 6, Table 4 onwards)
    text = (next(seeds.glob("004_*.txt"))).read_text()
    main = text[:text.index("Figure 6:")]
    assert sorted({int(n) for n in re.findall(r"^Figure (\d+):", main, re.M)}) == [1, 2, 3, 4, 5]
    assert sorted({int(n) for n in re.findall(r"^Table (\d+):", main, re.M)}) == [1, 2, 3]


def _declared_figures(case_name, spec):
    """Figure file names the module (or the recipe it calls) of a case writes: string literals
    ending in .png in the case's module and in validate/recipes."""
    import sys

    names = set()
    files = [pathlib.Path(sys.modules[spec.fn.__module__].__file__)]
    files += sorted((ROOT / "validate" / "recipes").glob("*.py"))
    for f in files:
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                names.update(re.findall(r"[\w.-]+\.png", node.value))
            if isinstance(node, ast.JoinedStr):  # f"ldt_prior_rate_{tag}.png": the literal tail
                names.update(v.value for v in node.values
                             if isinstance(v, ast.Constant) and str(v.value).endswith(".png"))
    return names


@pytest.mark.slow  # imports every case module
def test_producers_are_registered_cases_with_their_figures():
    from richlazy.validate.core._registry import all_cases
    from richlazy.validate.sweeps._registry import all_sweeps

    cases = all_cases()
    for e in CATALOGUE:
        for p in e.producers:
            assert p.kind in ("case", "sweep"), e.key
            assert p.suite in ("quick", "full")
            if p.kind == "sweep":
                assert p.name in all_sweeps(), (e.key, p.name)
                continue
            assert p.name in cases, (e.key, p.name)
            spec = cases[p.name]
            # the smallest suite the case runs in
            assert p.suite == ("quick" if "quick" in spec.suites else "full"), (e.key, p.name)
            assert p.figures, (e.key, p.name)
            declared = _declared_figures(p.name, spec)
            for fig in p.figures:
                assert fig in declared, (e.key, p.name, fig)


def test_figures_named_in_committed_reports_exist_there():
    """Where a committed report holds a producing case, it lists the catalogued figure files."""
    import json

    for path in (DOCS / "report" / "report.json", DOCS / "report" / "full" / "report.json"):
        cases = {c["name"]: c for c in json.loads(path.read_text())["cases"]}
        for e in CATALOGUE:
            for p in e.producers:
                if p.name in cases and cases[p.name]["verdict"] != "error":
                    written = {pathlib.PurePath(f).name for f in cases[p.name]["figures"]}
                    assert set(p.figures) <= written, (e.key, p.name, set(p.figures) - written)
                    names = [q["name"] for q in cases[p.name]["quantities"]]
                    for prefix in p.quantities:
                        assert any(n.startswith(prefix) for n in names), (e.key, p.name, prefix)


def test_statuses_follow_the_committed_reports():
    """No invented agreement: each status is what the committed reports (and the recorded
    disagreements of full-suite cases without a report) give by the catalogue's rule."""
    quick = _run.committed_verdicts(DOCS / "report" / "report.json")
    full = _run.committed_verdicts(DOCS / "report" / "full" / "report.json")
    assert quick and full
    for e in CATALOGUE:
        assert e.status == _run.derived_status(e, quick, full), e.key
        if e.status == "disagreement":  # with its classification
            assert "open" in e.note or "(b)" in e.note or "correction" in e.note, e.key
        for p in e.producers:
            if p.recorded:  # recorded results only stand in for cases without a committed report
                assert p.name not in quick and p.name not in full, (e.key, p.name)


def test_disagreeing_committed_cases_are_classified():
    import json

    classes = json.loads((DOCS / "validation_classes.json").read_text())
    quick = _run.committed_verdicts(DOCS / "report" / "report.json")
    for e in CATALOGUE:
        for p in e.producers:
            if quick.get(p.name, "agrees") != "agrees":
                assert p.name in classes, p.name
                assert f"{p.name} {quick[p.name]}" in e.note, (e.key, p.name)


def test_lookup_and_close_matches():
    assert _run.lookup("000:FIG6").key == "000:fig6"
    assert _run.close_keys("003:fig1")[:2] == ["003:fig1a", "003:fig1b"]
    assert "004:table2" in _run.close_keys("004:tabel2")
    with pytest.raises(ValueError, match="unknown figure '002:table3'.*002:table1"):
        _run.lookup("002:table3")


def test_figure_targets_numbering():
    (single,) = _run.figure_targets(_run.lookup("003:fig2"))
    assert single[1:] == ("noisy_bayes.png", "003_fig2.png")
    names = [n for _, _, n in _run.figure_targets(_run.lookup("000:fig6"))]
    assert names == ["000_fig6_1.png", "000_fig6_2.png"]
