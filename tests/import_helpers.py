"""Helpers shared by the architecture and layering tests (on sys.path through pytest's
``pythonpath``)."""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]  # the package root, imported as richlazy


def import_targets(path: pathlib.Path, source: str | None = None):
    """(module, module.name, lineno) for every import of ``path`` (a file below ROOT; its text
    ``source`` when given), relative imports resolved against the module's own dotted name
    (``richlazy.<folder>...``): for ``from X import n`` both X and X.n (a name may be a
    submodule), for ``import X`` X and X."""
    rel = path.relative_to(ROOT).with_suffix("")
    parts = ["richlazy", *rel.parts]
    package = parts[:-1]  # an __init__'s package is its folder, a module's the folder it is in
    tree = ast.parse(path.read_text() if source is None else source, filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            for a in node.names:
                yield mod, f"{mod}.{a.name}", node.lineno
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, a.name, node.lineno
