"""Test configuration: hypothesis draws a fixed, reproducible sequence of examples (CI runs must
not depend on luck); set HYPOTHESIS_PROFILE=explore to search with fresh random examples."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, max_examples=500)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
