"""``python -m richlazy``: the ``richlazy`` command line (the same ``main`` as the console script)."""

import sys

from richlazy.validate.cli import main

if __name__ == "__main__":
    sys.exit(main())
