"""The documentation site: the generated API pages are current (fast), and the site builds with
``mkdocs build --strict`` and passes the browser check docs/check_site.py (slow; skipped without
mkdocs or chromium)."""

from __future__ import annotations

import importlib.util
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
from richlazy.validate.rendering import _api_pages

ROOT = pathlib.Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api"


def _documented(text: str, module: str) -> list[str]:
    """The public names a page documents under ``## `module` `` (the heading option when the
    block reads the name from its defining module, else the block's last dotted part)."""
    section = text.split(f"\n## `{module}`\n", 1)[1].split("\n## ", 1)[0]
    names = []
    for block in re.split(r"\n(?=::: )", section)[1:]:
        heading = re.search(r'^\s+heading: "([^"]+)"$', block, re.M)
        names.append(heading.group(1) if heading else block.split()[1].rsplit(".", 1)[1])
    return names


@pytest.mark.parametrize("stem", sorted(_api_pages.PAGES))
def test_api_pages_list_exactly_the_public_names(stem):
    text = (API / f"{stem}.md").read_text(encoding="utf-8")
    for module in _api_pages.PAGES[stem][2]:
        assert _documented(text, module) == _api_pages.public_names(module), (
            f"docs/api/{stem}.md is stale for {module}: run "
            "`python -m richlazy.validate.rendering._api_pages docs/api`")
    assert text == _api_pages.render_page(stem), (
        f"docs/api/{stem}.md differs from the generator's output: run "
        "`python -m richlazy.validate.rendering._api_pages docs/api`")


@pytest.mark.slow
def test_site_builds_strict_and_passes_the_browser_check(tmp_path):
    # the site's tools are the optional docs extra and Debian packages (README, "Documentation
    # site"); the README's two commands install neither, CI installs both (.ci/run)
    for mod in ("mkdocs", "mkdocstrings_handlers.python", "selenium"):
        if importlib.util.find_spec(mod.split(".")[0]) is None or importlib.util.find_spec(mod) is None:
            pytest.skip(f"{mod} is not installed (pip install -e '.[docs]')")
    if not (shutil.which("chromium") or shutil.which("chromium-browser")) or not shutil.which("chromedriver"):
        pytest.skip("chromium / chromedriver not found (apt-get install chromium chromium-driver)")
    site = tmp_path / "site"
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                            "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)],
                           cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, f"mkdocs build --strict failed:\n{build.stdout}\n{build.stderr}"
    check = subprocess.run([sys.executable, str(ROOT / "docs" / "check_site.py"), str(site)],
                           cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert check.returncode == 0, f"docs/check_site.py failed:\n{check.stdout}\n{check.stderr}"
