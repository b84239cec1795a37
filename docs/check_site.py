"""Check the built documentation site in a headless browser: serve SITE over http on localhost,
open every page in headless Chromium (through selenium and the system chromedriver; nothing is
downloaded) and check that every <img> loaded (naturalWidth > 0) and that every internal link
answers HTTP 200 (anchors ignored). Exit 1 with the list of failures, 2 when the browser cannot
be started.

    mkdocs build --strict && python docs/check_site.py site
    python docs/check_site.py site --chromium /usr/bin/chromium --chromedriver /usr/bin/chromedriver
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import os
import pathlib
import shutil
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

# every <img> (its resolved src, whether it finished loading, its natural width) and every <a href>
_JS = """
return {
  images: Array.from(document.images).map(i => [i.currentSrc || i.src, i.complete, i.naturalWidth]),
  links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
};
"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], ConnectionError):  # the browser dropped a request
            super().handle_error(request, client_address)


@contextlib.contextmanager
def serve(folder: pathlib.Path):
    """An http server for ``folder`` on a free localhost port, in a thread; yields its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def pages(site: pathlib.Path) -> list[str]:
    """Every HTML page of the site, as URL paths relative to its root (``index.html`` of a folder
    as the folder, the way mkdocs links it); the 404 page is left out."""
    out = []
    for path in sorted(site.rglob("*.html")):
        rel = path.relative_to(site).as_posix()
        if rel == "404.html":
            continue
        out.append(rel[: -len("index.html")] if rel.endswith("index.html") else rel)
    return out


def status(url: str) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="GET"), timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


def find_browser(chromium: str | None, chromedriver: str | None) -> tuple[str | None, str | None]:
    chromium = chromium or shutil.which("chromium") or shutil.which("chromium-browser")
    chromedriver = chromedriver or shutil.which("chromedriver")
    return chromium, chromedriver


def make_driver(chromium: str, chromedriver: str):
    os.environ.setdefault("SE_OFFLINE", "true")  # selenium manager: never download a driver
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,1024", "--no-first-run", "--disable-extensions"):
        opts.add_argument(arg)
    return webdriver.Chrome(service=Service(executable_path=chromedriver), options=opts)


def check(site: pathlib.Path, chromium: str, chromedriver: str, verbose: bool = False):
    """(number of pages, images, internal links checked, failures)."""
    failures: list[str] = []
    link_status: dict[str, int] = {}
    n_images = 0
    with serve(site) as base:
        driver = make_driver(chromium, chromedriver)
        try:
            driver.set_page_load_timeout(60)
            paths = pages(site)
            for rel in paths:
                url = base + rel
                if status(url) != 200:
                    failures.append(f"{rel or '/'}: the page itself answers HTTP {status(url)}")
                    continue
                driver.get(url)
                deadline = time.monotonic() + 30
                while (driver.execute_script("return document.readyState") != "complete"
                       and time.monotonic() < deadline):
                    time.sleep(0.05)
                found = driver.execute_script(_JS)
                for src, complete, width in found["images"]:
                    n_images += 1
                    if not complete or not width:
                        failures.append(f"{rel or '/'}: image did not load: {src}")
                for href in found["links"]:
                    target = urllib.parse.urldefrag(href).url
                    if not target.startswith(base):
                        continue  # external (or mailto:, javascript:): not checked
                    if target not in link_status:
                        link_status[target] = status(target)
                    if link_status[target] != 200:
                        failures.append(f"{rel or '/'}: link {target[len(base) - 1:]} answers "
                                        f"HTTP {link_status[target]}")
                if verbose:
                    print(f"  {rel or '/'}: {len(found['images'])} images, {len(found['links'])} links")
        finally:
            driver.quit()
    return len(paths), n_images, len(link_status), failures


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("site", nargs="?", default="site", type=pathlib.Path,
                    help="the built site folder (default site/)")
    ap.add_argument("--chromium", default=None, help="the Chromium binary (default: chromium on PATH)")
    ap.add_argument("--chromedriver", default=None,
                    help="the chromedriver binary (default: chromedriver on PATH)")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per page")
    args = ap.parse_args(argv)
    if not (args.site / "index.html").is_file():
        print(f"check_site: {args.site}/index.html not found: build the site first "
              "(mkdocs build --strict)", file=sys.stderr)
        return 2
    chromium, chromedriver = find_browser(args.chromium, args.chromedriver)
    if not chromium or not chromedriver:
        print("check_site: needs chromium and chromedriver (Debian: apt-get install chromium "
              "chromium-driver)", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    n_pages, n_images, n_links, failures = check(args.site, chromium, chromedriver, args.verbose)
    print(f"check_site: {n_pages} pages, {n_images} images, {n_links} distinct internal links, "
          f"{len(failures)} failures ({time.monotonic() - t0:.1f} s)")
    for f in failures:
        print(f"  FAIL {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
