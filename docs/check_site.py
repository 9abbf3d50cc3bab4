"""Check the built documentation site: every internal link and image resolves, and the pages
open in a real headless Chromium without console errors.

    python docs/check_site.py docs/_build/html

Internal references (relative ``href`` and ``src``, with their ``#fragment``) must name an
existing file and, for a fragment, an element with that id in it.  Then Debian's chromium
(``/usr/bin/chromium`` with ``/usr/bin/chromedriver``, through selenium) opens the landing
page, the MILO page, an example of the gallery and an API page, and each must show its title
and log no error.  Exit status 1 with one line per problem; the browser part is skipped,
saying so, where chromium is not installed.
"""

from __future__ import annotations

import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
PAGES = ["index.html", "baselines.html", "auto_examples/read_a_tree.html", "api/srtopt.estimators.milo.html"]


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        for key in ("href", "src"):
            if attrs.get(key) and not (tag == "link" and attrs.get("rel") == "preload"):
                self.links.append(attrs[key])


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    return page


def broken_links(site: Path) -> list[str]:
    pages = {path: _parse(path) for path in site.rglob("*.html") if "_static" not in path.relative_to(site).parts}
    problems = []
    for path, page in pages.items():
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:", "data:")):
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                problems.append(f"{path.relative_to(site)}: {link} -> missing file")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    problems.append(f"{path.relative_to(site)}: {link} -> no id {parts.fragment!r}")
    return problems


def headless_chromium():
    """A selenium driver of Debian's chromium, headless, logging the browser console (the flags
    keep it off the network: this machine's is closed); also the browser tests' driver."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1400,1000",
                 f"--user-data-dir={tempfile.mkdtemp(prefix='srtopt-chromium-')}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)


def browser_problems(site: Path) -> list[str]:
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        print("check_site: chromium/chromedriver not installed: the browser check is skipped", file=sys.stderr)
        return []
    driver = headless_chromium()
    problems = []
    try:
        for name in PAGES:
            driver.get((site / name).resolve().as_uri())
            heading = driver.find_elements("css selector", "h1")
            if not heading or not heading[0].text.strip():
                problems.append(f"{name}: no title shown")
            errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
            problems += [f"{name}: console error: {message}" for message in errors]
    finally:
        driver.quit()
    return problems


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    site = Path(args[0] if args else "docs/_build/html").resolve()
    if not (site / "index.html").exists():
        print(f"check_site: no built site in {site} (run sphinx-build first)", file=sys.stderr)
        return 1
    problems = broken_links(site) + browser_problems(site)
    for problem in problems:
        print(f"check_site: {problem}", file=sys.stderr)
    print(f"check_site: {len(list(site.rglob('*.html')))} pages, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
