"""MkDocs hook of the documentation site (mkdocs.yml ``hooks:``; not imported by richlazy).

mkdocstrings' python handler (griffe) looks for the package ``richlazy`` on ``sys.path``. Run as
the ``mkdocs`` console script, ``sys.path[0]`` is the scripts folder (``venv/bin``), which holds
the ``richlazy`` console script: griffe takes that file for the package and finds none of its
names. The repository root is the package root (pyproject's package-dir maps ``richlazy`` to
``.``), so no folder named ``richlazy`` exists for griffe's ``paths`` option to point at; griffe
finds the package through the editable install instead, once the scripts folder is out of its way.
"""

from __future__ import annotations

import pathlib
import sys


def _shadows_package(entry: str) -> bool:
    candidate = pathlib.Path(entry or ".") / "richlazy"
    return candidate.is_file()  # a console script, not a package folder or module


def on_startup(**_kwargs) -> None:
    sys.path[:] = [p for p in sys.path if not _shadows_package(p)]


def on_config(config, **_kwargs):
    """Lists every docs/notes/*.md under the nav's "Lab notes" (those mkdocs.yml names keep their
    titles and order; a note added later is appended, titled by its file name)."""
    notes = pathlib.Path(config["docs_dir"]) / "notes"
    for item in config["nav"] or []:
        if isinstance(item, dict) and isinstance(item.get("Lab notes"), list):
            section = item["Lab notes"]
            listed = {v for entry in section for v in (entry.values() if isinstance(entry, dict)
                                                        else [entry])}
            for path in sorted(notes.glob("*.md")):
                rel = f"notes/{path.name}"
                if rel not in listed:
                    section.append({path.stem.replace("_", " ").capitalize(): rel})
    return config
