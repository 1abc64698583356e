"""Every page of the built site in headless Chromium: images rendered, no console errors, no broken links."""

from __future__ import annotations

import functools
import http.server
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not (CHROMIUM and CHROMEDRIVER),
        reason="needs Debian's chromium and chromium-driver (invoke setup installs them)",
    ),
]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def site_url(committed_site: Path) -> Iterator[str]:
    """The committed site served on a free loopback port for the browser."""
    handler = functools.partial(QuietHandler, directory=str(committed_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-quic",
        "--no-first-run",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1400,1000",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


def pages(site: Path) -> list[str]:
    return sorted(
        str(path.relative_to(site))
        for path in site.rglob("*.html")
        if not path.relative_to(site).parts[0].startswith("_")
    )


def test_every_page_renders_its_images_logs_no_errors_and_links_only_to_pages_that_exist(
    committed_site: Path,
    site_url: str,
    browser: object,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    screenshots = tmp_path_factory.mktemp("screenshots")
    checked = pages(committed_site)
    assert {"index.html", "verdicts.html", "recipes/cherrypy-speed.html"} <= set(checked)
    problems = []
    for page in checked:
        url = urljoin(site_url, page)
        browser.get(url)
        browser.save_screenshot(str(screenshots / (page.replace("/", "_") + ".png")))
        broken_images = browser.execute_script(
            "return [...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)"
        )
        problems += [f"{page}: image did not render: {src}" for src in broken_images]
        problems += [
            f"{page}: console {entry['level']}: {entry['message']}"
            for entry in browser.get_log("browser")
            if entry["level"] == "SEVERE"
        ]
        for href in browser.execute_script("return [...document.querySelectorAll('a[href]')].map(a => a.href)"):
            target = urlparse(href)
            if not href.startswith(site_url) or not target.path:
                continue
            local = committed_site / target.path.removeprefix(urlparse(site_url).path)
            if target.path.endswith("/"):
                local = local / "index.html"
            if not local.exists():
                problems.append(f"{page}: broken link {href}")
            elif target.fragment and not has_anchor(local, unquote(target.fragment)):
                problems.append(f"{page}: link to a missing anchor {href}")  # a section moved into details keeps it
    assert not problems, "\n".join(problems)
    assert len(list(screenshots.iterdir())) == len(checked)


@functools.cache
def anchors_of(page: Path) -> frozenset[str]:
    return frozenset(re.findall(r'\bid="([^"]+)"', page.read_text()))


def has_anchor(page: Path, fragment: str) -> bool:
    return page.suffix != ".html" or fragment in anchors_of(page)


RECIPE_PAGES = ("cherrypy-speed", "bottle-adapters", "wsgi-servers", "http-clients", "cherokee-vs-apache")
# A window per width (a laptop, a phone), and how many of its screens a recipe page may fill with its details
# closed: the card, the results, latency and memory, and a line for each part opened on demand.
WINDOWS = {1400: 1000, 420: 900}
SCREENS = {1400: 5, 420: 8}
FIRST_VERDICT = (  # a verdict, or the answer to a page's own question where it has one (which server?)
    "const e = document.querySelector('[data-bench-pick], [data-bench-ranking], [data-bench-state]');"
    "return e ? e.getBoundingClientRect().top + window.scrollY : null;"
)


@pytest.mark.parametrize("width", [420, 1400])
def test_the_first_screen_shows_a_verdict_and_a_recipe_page_fits_its_screens(
    committed_site: Path, site_url: str, browser: object, width: int
) -> None:
    browser.set_window_rect(width=width, height=WINDOWS[width])
    viewport = browser.execute_script("return window.innerHeight")
    problems = []
    for page in ["index.html", *(f"recipes/{name}.html" for name in RECIPE_PAGES)]:
        browser.get(urljoin(site_url, page))
        first = browser.execute_script(FIRST_VERDICT)
        if first is None or first > viewport - 20:
            problems.append(f"{page} at {width} px: the first verdict is at {first} px, below the first screen")
        height = browser.execute_script("return document.documentElement.scrollHeight")
        if page.startswith("recipes/") and height > SCREENS[width] * viewport:
            problems.append(f"{page} at {width} px: {height / viewport:.1f} screens, over {SCREENS[width]}")
    browser.set_window_rect(width=1400, height=1000)
    assert not problems, "\n".join(problems)


def test_no_page_is_wider_than_a_phone(committed_site: Path, site_url: str, browser: object) -> None:
    browser.set_window_rect(width=420, height=WINDOWS[420])
    problems = []
    try:
        for page in pages(committed_site):
            browser.get(urljoin(site_url, page))
            wide, seen = browser.execute_script(
                "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
            )
            if wide > seen:
                problems.append(f"{page}: {wide} px wide on a {seen} px screen")
    finally:
        browser.set_window_rect(width=1400, height=1000)
    assert not problems, "\n".join(problems)


OVERLAPPING_TEXT = """
const boxes = [...document.querySelectorAll('text')]
  .map(t => ({text: t.textContent.trim(), box: t.getBoundingClientRect()}))
  .filter(t => t.text && t.box.width > 0);
const pairs = [];
for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
  const a = boxes[i].box, b = boxes[j].box;
  const dx = Math.min(a.right, b.right) - Math.max(a.left, b.left);
  const dy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
  if (dx > 1 && dy > 1) pairs.push(boxes[i].text + ' / ' + boxes[j].text);
}
return [boxes.length, pairs];
"""


def test_no_two_labels_of_a_chart_overlap(committed_site: Path, site_url: str, browser: object) -> None:
    charts = sorted((committed_site / "_images").glob("bench-*.svg"))
    assert len(charts) >= 10
    problems = []
    for chart in charts:
        browser.get(urljoin(site_url, f"_images/{chart.name}"))
        count, overlaps = browser.execute_script(OVERLAPPING_TEXT)
        assert count > 5, chart.name  # the SVG's text is text (svg.fonttype none), so the check sees it
        problems += [f"{chart.name}: {pair}" for pair in overlaps]
    assert not problems, "\n".join(problems)


# Each text of a chart whose box lies past the edge of the drawing (the browser would cut it off).
TEXT_PAST_EDGES = """
const svg = document.documentElement; const edge = svg.getBoundingClientRect(); const past = [];
for (const text of svg.querySelectorAll('text')) {
  const box = text.getBoundingClientRect();
  if (box.width && (box.left < edge.left - 0.5 || box.top < edge.top - 0.5 ||
                    box.right > edge.right + 0.5 || box.bottom > edge.bottom + 0.5))
    past.push(text.textContent.slice(0, 60));
}
return [svg.querySelectorAll('text').length, past];
"""


def test_no_chart_draws_text_past_its_edges(committed_site: Path, site_url: str, browser: object) -> None:
    charts = sorted((committed_site / "_images").glob("bench-*.svg"))
    assert len(charts) >= 10
    problems = []
    for chart in charts:
        browser.get(urljoin(site_url, f"_images/{chart.name}"))
        count, past = browser.execute_script(TEXT_PAST_EDGES)
        assert count > 5, chart.name  # its text is text (svg.fonttype none): the check sees it
        problems += [f"{chart.name}: {text}" for text in past]
    assert not problems, "\n".join(problems)


# Each chart's image on the page: its file name and the width it is shown at.
CHART_IMAGES = """
return [...document.querySelectorAll('figure.bench-chart img')]
  .map(i => [decodeURIComponent(i.currentSrc.split('/').pop()), i.getBoundingClientRect().width]);
"""
SMALLEST_CHART_TEXT_PX = 9


def test_no_chart_text_is_smaller_than_9_px_on_a_420_px_phone(
    committed_site: Path, site_url: str, browser: object
) -> None:
    browser.set_window_rect(width=420, height=WINDOWS[420])
    problems, seen = [], 0
    try:
        for page in pages(committed_site):
            if "bench-chart" not in (committed_site / page).read_text():
                continue
            browser.get(urljoin(site_url, page))
            for name, width in browser.execute_script(CHART_IMAGES):
                svg = (committed_site / "_images" / name).read_text()
                found = re.search(r'viewBox="0 0 ([\d.]+) ', svg)
                assert found is not None, name
                sizes = [float(size) for size in re.findall(r"font-size: ([\d.]+)px", svg)]
                assert sizes, f"{name}: no text size found"
                shown = min(sizes) * width / float(found.group(1))  # the SVG's units scaled to the image's width
                seen += 1
                if shown < SMALLEST_CHART_TEXT_PX:
                    problems.append(f"{page}: {name} shown {width:.0f} px wide, its smallest text {shown:.1f} px")
    finally:
        browser.set_window_rect(width=1400, height=1000)
    assert seen >= 20 and not problems, "\n".join(problems)


def test_no_table_needs_sideways_scrolling_at_1400_px(committed_site: Path, site_url: str, browser: object) -> None:
    problems = []
    for page in pages(committed_site):
        if page.startswith("raw/"):
            continue  # raw listings are preformatted report text, scrolled on purpose
        browser.get(urljoin(site_url, page))
        wide = browser.execute_script(
            "return [...document.querySelectorAll('table.bench-table')]"
            ".filter(t => t.parentElement.scrollWidth > t.parentElement.clientWidth + 1)"
            ".map(t => t.querySelector('th') ? t.querySelector('th').textContent : '?')"
        )
        problems += [f"{page}: table starting {header!r} is wider than its column" for header in wide]
    assert not problems, "\n".join(problems)


CHART_BOXES = """
document.querySelectorAll('details').forEach(d => { d.open = true; });
return [...document.querySelectorAll('figure.bench-chart img')].map(i => {
  const box = i.getBoundingClientRect();
  return [i.currentSrc, box.left, box.right, box.width, i.naturalWidth, document.documentElement.clientWidth];
});
"""


def test_at_420_px_every_chart_is_drawn_narrow_and_lies_whole_on_screen(
    committed_site: Path, site_url: str, browser: object
) -> None:
    """A phone gets each chart's narrow drawing (legend under it, titles wrapped), inside the viewport with no
    sideways scrolling and its text shrunk by at most a quarter; that no text of a drawing lies past its edges
    is checked for every SVG, the narrow ones included, by the test above."""
    browser.set_window_rect(width=420, height=WINDOWS[420])
    problems, seen = [], 0
    for page in pages(committed_site):
        browser.get(urljoin(site_url, page))
        for src, left, right, width, natural, viewport in browser.execute_script(CHART_BOXES):
            seen += 1
            name = src.rsplit("/", 1)[-1]
            if not name.endswith("-narrow.svg"):
                problems.append(f"{page}: {name} is not the narrow drawing")
            if left < 0 or right > viewport + 0.5:
                problems.append(f"{page}: {name} spans {left:.0f}-{right:.0f} px of a {viewport} px viewport")
            if width < 0.75 * natural:
                problems.append(f"{page}: {name} shrunk to {width:.0f} of its {natural} px")
    browser.set_window_rect(width=1400, height=1000)
    assert seen >= 20 and not problems, "\n".join(problems)
