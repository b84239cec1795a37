"""The ``richlazy`` command line, the top floor of richlazy.validate: ``main`` parses the
arguments, runs one command and returns its exit code (the console script ``richlazy`` and
``python -m richlazy`` call it).

The commands are thin layers over library functions of the floors below (``core``, ``sweeps``,
``reproduce``, ``rendering``, ``benchmarks``), which never import this package. They live in
private modules: ``_main`` (the parser, the dispatch and its usage text), ``_validate``
(validate, list, info, bench), ``_sweep`` (sweep), ``_reports`` (diff, validation-page, tables),
``_reproduce`` (reproduce) and ``_common`` (the checks and options they share). Only the
standard library is imported up front; a command imports what it needs when it runs.
"""

from ._main import main

__all__ = ["main"]
