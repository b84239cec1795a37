"""Reproduce one catalogued figure or table: run its case(s) through the validation runner
(:func:`richlazy.validate.core._runner.run_suite`, the function ``richlazy validate --only NAME``
uses, with its checkpoints, so a rerun resumes) and export the figure(s) and the numbers behind
them; and render the catalogue as a table (plain text or Markdown).

Nothing is computed here: the figures are the case's own files, copied, and the CSV holds the
quantities of the case's report.
"""

from __future__ import annotations

import csv
import dataclasses
import difflib
import io
import json
import pathlib
import shutil

from ._catalogue import CATALOGUE, PAPER_TITLES, STATUSES, Entry, Producer

__all__ = [
    "SIZES",
    "entries",
    "lookup",
    "close_keys",
    "safe_key",
    "derived_status",
    "committed_verdicts",
    "figure_targets",
    "format_catalogue",
    "runnable_producers",
    "outside_suite",
    "reproduce",
    "Reproduction",
]

#: --size -> the suite whose sizes a reproduction runs at
SIZES = {"quick": "quick", "paper": "full"}

# weakest first: an entry takes the weakest status of its producers
_ORDER = ("disagreement", "not run", "reduced size", "paper size")


def entries() -> dict[str, Entry]:
    """The catalogue by key, in catalogue order."""
    return {e.key: e for e in CATALOGUE}


def close_keys(key: str, n: int = 5) -> list[str]:
    """Catalogue keys close to ``key``: the panels of a figure key (``000:fig1`` -> ``000:fig1a``),
    then the nearest spellings, those of the same paper first."""
    keys = list(entries())
    low = key.strip().lower()
    panels = [k for k in keys if k.startswith(low) and k != low]
    paper = low.partition(":")[0]
    near = sorted(difflib.get_close_matches(low, keys, n=n, cutoff=0.6),
                  key=lambda k: not k.startswith(paper + ":"))
    return list(dict.fromkeys(panels + near))[:n]


def lookup(key: str) -> Entry:
    """The entry of ``key`` (case-insensitive); ValueError listing close matches if unknown."""
    found = entries().get(key.strip().lower())
    if found is not None:
        return found
    close = close_keys(key)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise ValueError(f"unknown figure {key!r}{hint} (see `richlazy reproduce --list`)")


def safe_key(key: str) -> str:
    """``key`` as a file and folder name: ``000:fig6`` -> ``000_fig6``."""
    return key.replace(":", "_")


def committed_verdicts(path) -> dict[str, str]:
    """Case name -> verdict of the report.json at ``path`` ({} when there is none)."""
    from ..rendering._report import read_report_cases

    path = pathlib.Path(path)
    if not path.exists():
        return {}
    return {c.name: c.verdict for c in read_report_cases(path)}


def _producer_status(p: Producer, quick: dict[str, str], full: dict[str, str]) -> str:
    if p.name in full:
        return "paper size" if full[p.name] == "agrees" else "disagreement"
    if p.name in quick:
        return "reduced size" if quick[p.name] == "agrees" else "disagreement"
    return "disagreement" if p.recorded else "not run"


def derived_status(entry: Entry, quick: dict[str, str], full: dict[str, str]) -> str:
    """The status the catalogue's rule gives ``entry`` from the verdicts of the committed quick
    and full reports (case name -> verdict) and the disagreements recorded on its producers."""
    if not entry.producers:
        return "not implemented"
    return min((_producer_status(p, quick, full) for p in entry.producers), key=_ORDER.index)


def figure_targets(entry: Entry) -> list[tuple[Producer, str, str]]:
    """(producer, figure file of its case, exported file name) for every figure of ``entry``:
    ``<key>.png`` for a single figure, else ``<key>_<n>.png`` numbered over all of the entry's
    figures (the numbers do not change when some producers are skipped)."""
    figs = [(p, f) for p in entry.producers for f in p.figures]
    base = safe_key(entry.key)
    if len(figs) == 1:
        return [(figs[0][0], figs[0][1], f"{base}.png")]
    return [(p, f, f"{base}_{n}.png") for n, (p, f) in enumerate(figs, 1)]


# ---- the catalogue as a table ----------------------------------------------------------------


def _how(entry: Entry) -> str:
    parts = [f"{p.name} [{p.suite}] {', '.join(p.figures)}" for p in entry.producers]
    if entry.note:
        parts.append(entry.note)
    return "; ".join(parts)


def format_catalogue(markdown: bool = False) -> str:
    """The catalogue as a table grouped by paper: key, status, what, how (the producing cases
    with their suite and figure files, then the note). ``markdown``: Markdown tables with a
    heading per paper and the counts per status (the table of docs/reproduce.md)."""
    by_paper: dict[str, list[Entry]] = {}
    for e in CATALOGUE:
        by_paper.setdefault(e.paper, []).append(e)
    out = io.StringIO()
    if markdown:
        counts = ", ".join(f"{sum(e.status == s for e in CATALOGUE)} {s}" for s in STATUSES)
        out.write(f"{len(CATALOGUE)} figures and tables: {counts}.\n")
    for paper, rows in by_paper.items():
        if markdown:
            out.write(f"\n### {paper}: {PAPER_TITLES[paper]}\n\n")
            out.write("| key | status | what | how |\n|---|---|---|---|\n")
            for e in rows:
                cells = (f"`{e.key}`", e.status, e.what, _how(e))
                out.write("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |\n")
        else:
            out.write(f"{paper}  {PAPER_TITLES[paper]}\n")
            for e in rows:
                out.write(f"  {e.key:<11} {e.status:<16} {e.what}\n")
                out.write(f"  {'':<11} {'':<16} how: {_how(e)}\n")
    return out.getvalue()


# ---- running ----------------------------------------------------------------------------------


def runnable_producers(entry: Entry, size: str) -> tuple[list[Producer], list[Producer]]:
    """(producers that run at ``size``, producers skipped at ``size``). A declared case runs at
    either size, whichever suite it belongs to (its declaration has both configurations); only a
    case registered as a plain function outside the size's suite is skipped. ValueError for a
    not-implemented entry, a sweep producer, or nothing to run."""
    from ..core._registry import all_cases, is_declared

    if size not in SIZES:
        raise ValueError(f"--size must be one of {', '.join(SIZES)}, got {size!r}")
    if entry.status == "not implemented":
        raise ValueError(f"{entry.key} is not implemented: {entry.note}")
    suite = SIZES[size]
    cases = all_cases()
    run, skipped = [], []
    for p in entry.producers:
        if p.kind != "case":
            raise ValueError(f"{entry.key} is drawn by the sweep {p.name}; run it with "
                             f"`richlazy sweep {p.name}` (see `richlazy sweep {p.name} --describe`)")
        if p.name not in cases:  # pragma: no cover - the tests check the catalogue
            raise ValueError(f"{entry.key}: case {p.name} is not registered")
        spec = cases[p.name]
        (run if suite in spec.suites or is_declared(spec) else skipped).append(p)
    if not run:
        names = ", ".join(p.name for p in skipped)
        raise ValueError(f"{entry.key} runs only at paper size ({names}: full suite); "
                         "use --size paper")
    return run, skipped


def outside_suite(producers, size: str) -> list[Producer]:
    """The ``producers`` whose case is not a member of the suite of ``size``: they run at the
    configuration their declaration gives for it (e.g. a full-suite case at its quick sizes)."""
    from ..core._registry import all_cases

    cases = all_cases()
    return [p for p in producers if SIZES[size] not in cases[p.name].suites]


@dataclasses.dataclass(frozen=True)
class Reproduction:
    """What :func:`reproduce` wrote: figures (exported path, case, case's figure file), the CSV,
    the runner's report folder, the cases' results, the producers skipped at this size and the
    declared figures a case did not write."""

    entry: Entry
    size: str
    figures: list[tuple[pathlib.Path, str, str]]
    table: pathlib.Path
    run_dir: pathlib.Path
    results: dict
    skipped: list[Producer]
    missing: list[tuple[str, str]]

    @property
    def ok(self) -> bool:
        return all(r.verdict == "agrees" for r in self.results.values())


def reproduce(key: str, *, size: str = "quick", device: str = "auto", out=None, seed: int = 0,
              threads: int = 1, progress: bool = False, on_case_start=None,
              on_case_end=None) -> Reproduction:
    """Run the case(s) drawing ``key`` at ``size`` ("quick": the quick suite's sizes, "paper":
    the full suite's; a case outside that suite runs at the configuration it declares for it)
    through :func:`run_suite` into ``out/run`` (report.json, figures,
    checkpoints: a rerun with the same arguments resumes), then write ``out/<key>.png`` (or
    ``<key>_<n>.png``) and ``out/<key>.csv``. ``out`` defaults to ``reproduce/<key>``
    (``:`` written ``_``). ValueError for an unknown or not-implemented key or a size its cases
    do not run at."""
    from ..core._runner import run_suite

    entry = lookup(key)
    producers, skipped = runnable_producers(entry, size)
    out = pathlib.Path("reproduce") / safe_key(entry.key) if out is None else pathlib.Path(out)
    run_dir = out / "run"
    results = {}
    for p in producers:
        rep = run_suite(SIZES[size], only=p.name, device=device, out_dir=run_dir, seed=seed,
                        progress=progress, on_case_start=on_case_start, on_case_end=on_case_end,
                        threads=threads, outside_suite=True)
        (res,) = rep.cases
        results[p.name] = res
    return _export(entry, size, out, run_dir, results, skipped)


def _export(entry, size, out, run_dir, results, skipped) -> Reproduction:
    figures, missing = [], []
    for p, fig, name in figure_targets(entry):
        res = results.get(p.name)
        if res is None:  # skipped at this size
            continue
        src = next((run_dir / f for f in res.figures if pathlib.PurePath(f).name == fig), None)
        if src is None or not src.exists():
            missing.append((p.name, fig))
            continue
        dst = out / name
        shutil.copyfile(src, dst)
        figures.append((dst, p.name, fig))
    table = out / f"{safe_key(entry.key)}.csv"
    _write_table(table, entry, results)
    return Reproduction(entry, size, figures, table, run_dir, results, skipped, missing)


def _flat_params(params: dict, prefix: str = "") -> dict[str, object]:
    """Scalar parameters (and short lists of scalars, as JSON) of a case, nested dicts flattened
    with dotted keys; long or nested arrays are left out (they are in report.json)."""
    flat: dict[str, object] = {}
    for k, v in params.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict):
            flat.update(_flat_params(v, f"{name}."))
        elif v is None or isinstance(v, (bool, int, float, str)):
            flat[name] = v
        elif (isinstance(v, (list, tuple)) and len(v) <= 16
              and all(x is None or isinstance(x, (bool, int, float, str)) for x in v)):
            flat[name] = json.dumps(list(v))
    return flat


def _selected(p: Producer, quantities) -> list:
    return [q for q in quantities if not p.quantities or q.name.startswith(p.quantities)]


def _cell(v) -> str:
    return "" if v is None else repr(v) if isinstance(v, float) else str(v)


def _write_table(path: pathlib.Path, entry: Entry, results: dict) -> None:
    """One row per quantity behind the figure: case, quantity, theory, simulation, se, verdict
    (the case verdict rule applied to that quantity alone), then the case's parameters."""
    from ..core._compare import case_verdict
    from ..rendering._report import atomic_write_text

    rows, columns = [], {}
    for p in entry.producers:
        res = results.get(p.name)
        if res is None:
            continue
        params = _flat_params(res.params)
        columns.update(dict.fromkeys(f"param:{k}" for k in params))
        for q in _selected(p, res.quantities):
            row = {"case": p.name, "quantity": q.name, "theory": q.theory,
                   "simulation": q.simulation, "se": q.stderr,
                   "verdict": case_verdict([q], res.error)}
            row.update({f"param:{k}": v for k, v in params.items()})
            rows.append(row)
    header = ["case", "quantity", "theory", "simulation", "se", "verdict", *columns]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for row in rows:
        w.writerow([_cell(row.get(h)) for h in header])
    atomic_write_text(path, buf.getvalue())
