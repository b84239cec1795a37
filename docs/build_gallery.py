"""Build the site's gallery (docs/gallery.md + docs/gallery/*.png, *.csv): for a few catalogued
figures per paper that ``richlazy reproduce`` draws at quick size, the figure(s) and the numbers
behind them, with the paper's published value beside richlazy's where the paper prints one.

    python docs/build_gallery.py --from-report docs/report --reproduced docs/report/reproduce
                                                                # from committed runs (CI)
    python docs/build_gallery.py                                # runs `richlazy reproduce KEY`
    python docs/build_gallery.py --keys 004:table3 --out DIR    # some keys, elsewhere

Without ``--from-report`` each key runs ``richlazy reproduce KEY --size quick --out TMP`` (minutes
per key on a CPU). With ``--from-report DIR`` (the folder ``richlazy validate --suite quick --out
DIR`` writes; docs/report/ is the committed one) nothing runs: the figures and quantities of the
key's cases are taken from DIR/report.json through the same export ``richlazy reproduce`` uses
(richlazy.validate.reproduce._run: the key's producers, their figure files and exported names,
and the CSV of their quantities). A key drawn by cases outside the quick suite (002:fig2b, whose
case is in the full suite) is taken from ``--reproduced DIR``: ``DIR/<key>/run`` is the run folder
``richlazy reproduce KEY --size quick --out DIR/<key>`` writes (``:`` written ``_``; CI reruns it,
and docs/report/reproduce/ holds the committed one without its checkpoints).
"""

from __future__ import annotations

import argparse
import csv
import pathlib
import shutil
import subprocess
import sys
import tempfile

from richlazy.validate.rendering._report import read_report_cases
from richlazy.validate.reproduce import _run
from richlazy.validate.reproduce._catalogue import PAPER_TITLES

DOCS = pathlib.Path(__file__).resolve().parent

#: the gallery's figures, by paper (every paper has a section)
KEYS = {
    "000": ("000:fig6",),
    "002": ("002:fig2b",),
    "003": ("003:fig2", "003:fig1c"),
    "004": ("004:table2", "004:table3"),
}

NOT_PRINTED = "not printed"

#: (key, quantity-name prefix) -> the value the paper prints, with where and what it is
PUBLISHED = {
    ("004:table2", "D_LR(α=4) − D_LR(α=0.25)"):
        "0.51 = 0.56 − 0.049, at α = 20 vs 0.2 (Table 2; other α)",
    ("004:table2", "D_LR(α=1) − D_LR(α=0.25)"):
        "0.061 = 0.11 − 0.049, at α = 2 vs 0.2 (Table 2; other α)",
    ("004:table2", "D_LR(α=4) − D_LR(α=1)"):
        "0.45 = 0.56 − 0.11, at α = 20 vs 2 (Table 2; other α)",
    ("004:table2", "train accuracy"): "1.0 (100 % at every α, Table 2)",
    ("004:table3", "D_LR(last layer only) − D_LR(full backprop)"):
        "0.467 = 0.51 − 0.043 (Table 3, MNIST CNN; richlazy: an MLP)",
}

#: paper -> what the gallery says about it besides the figures
PAPER_NOTES = {
    "000": "The paper plots Fig. 6 without printing its numbers; richlazy's theory column is the "
           "non-lazy theory the paper's black circles show.",
    "002": "Fig. 2b comes from `ldt/pstar-exponent`, a case of the full suite: at its quick sizes "
           "(`richlazy reproduce 002:fig2b --size quick`, under a minute on a CPU; CI reruns it) the "
           "exponent fitted to exact Langevin chains disagrees with the exact LDT's, classified as "
           "a theory or reconstruction error (`docs/validation_classes.json`). It stays out of the "
           "quick suite because that suite is the README's first command, which exits 1 on a "
           "disagreement. The paper's text lost the exponent it prints (the math of the seed was "
           "stripped). The quick suite's checks of this paper's theory, `ldt/prior-rate` and "
           "`ldt/posterior-bound`, are on the [Validation results](validation.md) page.",
    "003": "Fig. 2's text states that rich models attain the Bayes-optimal accuracy under the "
           "generalising prior after enough training symbols; it prints no accuracies. Fig. 1c "
           "prints none either.",
    "004": "Table 2 prints D_LR at α = 0.2, 2, 20 (0.049, 0.11, 0.56); the quick case trains at "
           "α = 0.25, 1, 4, so the differences beside richlazy's are at the paper's α.",
}


def published(key: str, quantity: str) -> str:
    for (k, prefix), text in PUBLISHED.items():
        if k == key and quantity.startswith(prefix):
            return text
    return NOT_PRINTED


# ---- getting a key's figures, CSV and case verdicts ---------------------------------------------


def _report_folder(key, producers, report_dir: pathlib.Path, reproduced: pathlib.Path | None):
    """(report folder, producers taken from it) for ``key``: the run folder of ``richlazy
    reproduce KEY`` under ``reproduced`` when there is one (all producers), else ``report_dir``
    with the producers of the quick suite (SystemExit when the key has none)."""
    run = reproduced / _run.safe_key(key) / "run" if reproduced is not None else None
    if run is not None and (run / "report.json").exists():
        return run, producers
    outside = _run.outside_suite(producers, "quick")
    inside = [p for p in producers if p not in outside]
    if not inside:
        raise SystemExit(f"build_gallery: {key} is drawn by cases outside the quick suite only; "
                         f"give --reproduced DIR with DIR/{_run.safe_key(key)} from `richlazy "
                         f"reproduce {key} --size quick --out DIR/{_run.safe_key(key)}`")
    return report_dir, inside


def export_from_report(key: str, report_dir: pathlib.Path, out: pathlib.Path,
                       reproduced: pathlib.Path | None = None):
    """(figures, csv, {case: verdict}) of ``key`` from an existing quick-suite report folder (or,
    for a key drawn by cases outside the quick suite, from ``richlazy reproduce``'s run folder
    under ``reproduced``), exported by ``richlazy reproduce``'s own export function."""
    entry = _run.lookup(key)
    runnable, skipped = _run.runnable_producers(entry, "quick")
    report_dir, producers = _report_folder(key, runnable, report_dir, reproduced)
    skipped = skipped + [p for p in runnable if p not in producers]
    cases = {c.name: c for c in read_report_cases(report_dir / "report.json")}
    missing = [p.name for p in producers if p.name not in cases]
    if missing:
        raise SystemExit(f"build_gallery: {report_dir}/report.json has no case {', '.join(missing)} "
                         f"(needed for {key})")
    results = {p.name: cases[p.name] for p in producers}
    out.mkdir(parents=True, exist_ok=True)
    rep = _run._export(entry, "quick", out, report_dir, results, skipped)
    if rep.missing:
        raise SystemExit(f"build_gallery: {key}: figures missing in {report_dir}: {rep.missing}")
    return [f for f, _, _ in rep.figures], rep.table, {n: r.verdict for n, r in results.items()}


def export_by_running(key: str, out: pathlib.Path):
    """(figures, csv, {case: verdict}) of ``key`` from ``richlazy reproduce KEY --size quick``."""
    cmd = ["richlazy", "reproduce", key, "--size", "quick", "--out", str(out), "--quiet"]
    print("build_gallery: running", " ".join(cmd), file=sys.stderr, flush=True)
    rc = subprocess.run(cmd).returncode
    table = out / f"{_run.safe_key(key)}.csv"
    if rc not in (0, 1) or not table.exists():  # 1: ran, but a case does not agree
        raise SystemExit(f"build_gallery: `{' '.join(cmd)}` failed (exit {rc})")
    entry = _run.lookup(key)
    names = [name for _, _, name in _run.figure_targets(entry)]
    figures = [out / n for n in names if (out / n).exists()]
    verdicts = {c.name: c.verdict for c in read_report_cases(out / "run" / "report.json")}
    return figures, table, verdicts


# ---- the page ----------------------------------------------------------------------------------


def _num(text: str) -> str:
    if text == "":
        return ""
    try:
        return f"{float(text):.4g}"
    except ValueError:
        return text


def _table(key: str, table: pathlib.Path) -> str:
    rows = list(csv.DictReader(table.open(encoding="utf-8")))
    out = ["| case | quantity | theory | richlazy (± se) | verdict | paper |",
           "|---|---|---|---|---|---|"]
    for r in rows:
        sim = _num(r["simulation"]) + (f" ± {_num(r['se'])}" if r["se"] else "")
        cells = (f"`{r['case']}`", r["quantity"], _num(r["theory"]), sim, r["verdict"],
                 published(key, r["quantity"]))
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(out) + "\n"


def build(keys_by_paper: dict, out_dir: pathlib.Path, report_dir: pathlib.Path | None,
          reproduced: pathlib.Path | None = None) -> str:
    gallery = out_dir / "gallery"
    if gallery.exists():
        shutil.rmtree(gallery)
    gallery.mkdir(parents=True)
    source = (f"the committed quick-suite report (`{report_dir.as_posix()}`)" if report_dir
              else "`richlazy reproduce KEY --size quick`")
    if report_dir and reproduced:
        source += (" and, for figures of cases outside the quick suite, the committed runs of "
                   f"`richlazy reproduce KEY --size quick` (`{reproduced.as_posix()}`)")
    md = ["# Gallery\n\n",
          "One or two main-text figures per paper as `richlazy reproduce KEY --size quick` draws "
          "them (quick-suite sizes, a few minutes each on a CPU), with the numbers behind each "
          "figure: richlazy's theory and simulation (± its standard error), the quantity's verdict, "
          "and the value the paper prints where it prints one (for a claim '… > 0' the theory column is "
          "the bound 0). Built by `docs/build_gallery.py` "
          f"from {source}; [Reproducing the papers](reproduce.md) lists every figure and its "
          "status.\n"]
    for paper, keys in keys_by_paper.items():
        md.append(f"\n## {paper}: {PAPER_TITLES[paper]}\n\n{PAPER_NOTES[paper]}\n")
        for key in keys:
            entry = _run.lookup(key)
            with tempfile.TemporaryDirectory() as tmp:
                tmp = pathlib.Path(tmp) / _run.safe_key(key)
                figures, table, verdicts = (export_from_report(key, report_dir, tmp, reproduced)
                                            if report_dir else export_by_running(key, tmp))
                names = []
                for f in figures:
                    shutil.copyfile(f, gallery / f.name)
                    names.append(f.name)
                csv_name = table.name
                shutil.copyfile(table, gallery / csv_name)
                rows = _table(key, table)
            cases = ", ".join(f"`{c}` ({v})" for c, v in verdicts.items())
            md.append(f"\n### `{key}`: {entry.what}\n\n")
            md.append(f"Catalogue status: {entry.status}. Cases: {cases}. "
                      f"Run it: `richlazy reproduce {key} --size quick`.")
            if entry.note:
                md.append(f" Note: {entry.note}.")
            md.append("\n\n")
            for n in names:
                md.append(f"![{key}: {entry.what}](gallery/{n})\n\n")
            md.append(rows)
            md.append(f"\nThe numbers as CSV (with the cases' parameters): "
                      f"[{csv_name}](gallery/{csv_name}).\n")
    text = "".join(md)
    (out_dir / "gallery.md").write_text(text, encoding="utf-8")
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--from-report", metavar="DIR", type=pathlib.Path, default=None,
                    help="take the figures and quantities from this quick-suite report folder "
                         "(report.json + figures/) instead of running `richlazy reproduce`")
    ap.add_argument("--reproduced", metavar="DIR", type=pathlib.Path, default=None,
                    help="with --from-report: where the keys drawn by cases outside the quick suite "
                         "were reproduced (DIR/<key>/run from `richlazy reproduce KEY --size quick "
                         "--out DIR/<key>`)")
    ap.add_argument("--out", metavar="DIR", type=pathlib.Path, default=DOCS,
                    help="where gallery.md and gallery/ go (default: docs/)")
    ap.add_argument("--keys", nargs="+", metavar="KEY", default=None,
                    help="only these catalogue keys (default: the gallery's)")
    args = ap.parse_args(argv)
    keys = KEYS
    if args.keys:
        wanted = [_run.lookup(k).key for k in args.keys]
        keys = {p: tuple(k for k in wanted if k.startswith(p + ":")) for p in KEYS}
        keys = {p: ks for p, ks in keys.items() if ks}
    build(keys, args.out, args.from_report, args.reproduced)
    print(f"build_gallery: wrote {args.out / 'gallery.md'} and {args.out / 'gallery'}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
