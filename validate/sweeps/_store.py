"""On-disk layout of a sweep folder, and the tidy table.

    <out>/sweep.json            what was asked: experiment, grid, replicates, base seed, version
    <out>/points/<key>.json     one finished task (grid point × replicate): its row, written
                                atomically when the task ends; its presence means "done"
    <out>/checkpoints/<key>/    the task's own checkpoints (a restarted task resumes from them)
    <out>/table.csv, table.parquet   every row of the requested grid, rewritten atomically after
                                each finished task (Parquet when pyarrow is installed)
    <out>/figures/              the standard figures

A row is a flat dict: ``experiment, point, replicate, seed, key, <config keys>, status,
<metrics and their _se>, wall_s, device, worker, error``. ``status`` is "ok" or "failed"; a failed
row carries the last line of the error (its traceback is in the point file) and NaN metrics.
Nothing half-written is ever read back: point files are complete JSON or absent, and a point file
that does not parse or belongs to another configuration is ignored (and recomputed).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import pathlib

__all__ = ["point_key", "read_point", "write_point", "write_table", "table_columns",
           "read_table_csv", "check_column_name", "FIXED_COLUMNS", "RESERVED_COLUMNS"]

FIXED_COLUMNS = ("experiment", "point", "replicate", "seed", "key")
TAIL_COLUMNS = ("status", "wall_s", "device", "worker", "error")
RESERVED_COLUMNS = frozenset(FIXED_COLUMNS + TAIL_COLUMNS)  # no metric or parameter may use these


def check_column_name(name, what: str, plural: str) -> None:
    """``name`` of a column of the table (``what``: "metric", "grid key"; ``plural`` for the
    message: "metric names"): TypeError unless it is a non-empty string, ValueError when it is
    reserved (it would overwrite the table's own column of that name)."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"{plural} must be non-empty strings, got {name!r}")
    if name in RESERVED_COLUMNS:
        raise ValueError(f"{what} {name!r} is reserved for the table's own column of that name "
                         f"(reserved: {sorted(RESERVED_COLUMNS)}); rename it")


def point_key(experiment: str, config_text: str, replicate: int, seed: int) -> str:
    """The 16-hex-digit identity of a task: experiment, canonical configuration, replicate, seed."""
    text = json.dumps([experiment, config_text, int(replicate), int(seed)])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _atomic_bytes(path: pathlib.Path, data: bytes) -> None:
    from richlazy.simulate import atomic_write

    atomic_write(path, lambda fh: fh.write(data))


def _json_safe(v):
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)  # "nan", "inf", "-inf": JSON has no literal for them
    return v


def _from_json(v):
    if v in ("nan", "inf", "-inf"):
        return float(v)
    return v


def write_point(out: pathlib.Path, row: dict, traceback_text: str | None = None) -> None:
    """Write one finished task's row as ``points/<key>.json`` (atomically)."""
    doc = {"row": {k: _json_safe(v) for k, v in row.items()}, "traceback": traceback_text}
    _atomic_bytes(out / "points" / f"{row['key']}.json",
                  (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode())


def read_point(out: pathlib.Path, key: str) -> dict | None:
    """The row stored for ``key``, or None when absent or unreadable."""
    path = out / "points" / f"{key}.json"
    try:
        doc = json.loads(path.read_text())
        row = doc["row"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(row, dict) or row.get("key") != key:
        return None
    return {k: _from_json(v) for k, v in row.items()}


def table_columns(config_keys, metric_names) -> list[str]:
    """Column order of the tidy table."""
    return [*FIXED_COLUMNS, *config_keys, "status", *metric_names, *TAIL_COLUMNS[1:]]


def _csv_bytes(rows, columns) -> bytes:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow(["" if r.get(c) is None else (repr(r[c]) if isinstance(r.get(c), float)
                                                 else r[c]) for c in columns])
    return buf.getvalue().encode()


def _parquet_bytes(rows, columns) -> bytes | None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return None
    data = {}
    for c in columns:
        vals = [r.get(c) for r in rows]
        kinds = {type(v) for v in vals if v is not None}
        if kinds and kinds <= {int, float} and float in kinds:
            vals = [None if v is None else float(v) for v in vals]
        elif len(kinds) > 1:
            vals = [None if v is None else str(v) for v in vals]
        data[c] = vals
    table = pa.table(data)
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def write_table(out: pathlib.Path, rows: list[dict], columns: list[str]) -> list[str]:
    """Write ``table.csv`` and, when pyarrow is installed, ``table.parquet`` (each atomically).
    Returns the file names written."""
    written = ["table.csv"]
    _atomic_bytes(out / "table.csv", _csv_bytes(rows, columns))
    pq = _parquet_bytes(rows, columns)
    if pq is not None:
        _atomic_bytes(out / "table.parquet", pq)
        written.append("table.parquet")
    else:  # without pyarrow: never leave a Parquet table of an earlier run beside the new CSV
        (out / "table.parquet").unlink(missing_ok=True)
    return written


def read_table_csv(path) -> list[dict]:
    """Rows of a ``table.csv`` with numbers parsed back (int, float, bool; empty -> None)."""
    def parse(text):
        if text == "":
            return None
        if text in ("True", "False"):
            return text == "True"
        for kind in (int, float):
            try:
                return kind(text)
            except ValueError:
                pass
        return text

    with open(path, newline="") as fh:
        return [{k: parse(v) for k, v in r.items()} for r in csv.DictReader(fh)]
