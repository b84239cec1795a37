"""docs/build_gallery.py: the committed gallery is what the script builds from the committed runs,
and a key drawn by cases outside the quick suite comes from `richlazy reproduce`'s run folder."""

from __future__ import annotations

import importlib.util
import json
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
REPRODUCED = DOCS / "report" / "reproduce"


@pytest.fixture(scope="module")
def gallery():
    spec = importlib.util.spec_from_file_location("build_gallery", DOCS / "build_gallery.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow  # imports every case module
def test_the_committed_gallery_is_built_from_the_committed_runs(gallery, tmp_path):
    text = gallery.build(gallery.KEYS, tmp_path, pathlib.Path("docs/report"),
                         pathlib.Path("docs/report/reproduce"))
    assert text == (DOCS / "gallery.md").read_text(encoding="utf-8"), (
        "docs/gallery.md is stale: run `python docs/build_gallery.py --from-report docs/report "
        "--reproduced docs/report/reproduce`")
    built = sorted(p.name for p in (tmp_path / "gallery").iterdir())
    assert built == sorted(p.name for p in (DOCS / "gallery").iterdir())
    for name in built:
        assert (tmp_path / "gallery" / name).read_bytes() == (DOCS / "gallery" / name).read_bytes()
    assert all(gallery.KEYS.values()), "every paper has a figure in the gallery"


@pytest.mark.slow  # imports every case module
def test_a_full_suite_figure_comes_from_its_reproduce_run(gallery, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    report = pathlib.Path("docs/report")
    with pytest.raises(SystemExit, match=r"002:fig2b is drawn by cases outside the quick suite only; "
                                         r"give --reproduced DIR with DIR/002_fig2b"):
        gallery.export_from_report("002:fig2b", report, tmp_path / "a")
    figures, table, verdicts = gallery.export_from_report(
        "002:fig2b", report, tmp_path / "b", pathlib.Path("docs/report/reproduce"))
    run = json.loads((REPRODUCED / "002_fig2b" / "run" / "report.json").read_text())
    (case,) = run["cases"]
    assert verdicts == {"ldt/pstar-exponent": case["verdict"]}
    assert [f.name for f in figures] == ["002_fig2b.png"]
    assert table.read_text() == (REPRODUCED / "002_fig2b" / "002_fig2b.csv").read_text()
    # a key with a quick-suite case and a full-suite one, without a reproduce run: the quick
    # suite's case only
    _, table, verdicts = gallery.export_from_report("003:fig1c", report, tmp_path / "c",
                                                    pathlib.Path("docs/report/reproduce"))
    assert list(verdicts) == ["equality/gamma-vs-L"]


def test_the_committed_reproduce_run_is_the_catalogues_disagreement():
    """The committed quick-size run of Fig. 2b holds the disagreement the catalogue records."""
    from richlazy.validate.reproduce import _run

    (case,) = json.loads((REPRODUCED / "002_fig2b" / "run" / "report.json").read_text())["cases"]
    assert case["name"] == "ldt/pstar-exponent" and case["suite"] == "quick"
    assert case["verdict"] == "disagrees"
    assert _run.lookup("002:fig2b").status == "disagreement"
    (q,) = case["quantities"]
    assert f"{q['simulation']:.2f} +- {q['stderr']:.2f} vs {q['theory']:.2f}" in \
        _run.lookup("002:fig2b").producers[0].recorded
    assert not (REPRODUCED / "002_fig2b" / "run" / "checkpoints").exists()
