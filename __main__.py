"""``python -m richlazy``: the ``richlazy`` command line (the same ``main`` as the console script)."""

import sys

from richlazy.validate.core._cli import main

if __name__ == "__main__":
    sys.exit(main())
