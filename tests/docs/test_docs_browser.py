"""The built site in a real browser: headless Debian Chromium driven by Playwright's Python package.

Serves the site on 127.0.0.1, opens every page in both languages, switches language with the
header's switcher, searches in each language, and fails on any console error or any request that
leaves the machine. With $KATA_DOCS_SCREENSHOTS set, screenshots of every page go there.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import struct
import subprocess
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from .conftest import DOCS, LANGS, source_pages, url

CHROMIUM = os.environ.get("KATA_CHROMIUM", "/usr/bin/chromium")
# Browser downloads are impossible here: Playwright drives the distribution's Chromium.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright's Python package is not installed (pip install "
    "playwright; never `playwright install`: the browser comes from apt's chromium)")
pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).is_file(),
    reason=f"no Chromium at {CHROMIUM} (apt-get install chromium fonts-noto-cjk, or set "
           "KATA_CHROMIUM)")

PAGES = source_pages()
OTHER = {"en": "zh-TW", "zh-TW": "en"}
SEARCHES = {  # a word per language, and the page it must find
    "en": [("preemption", "katas/prefill_decode_scheduler/"),
           ("leakage", "katas/rolling_feature_leakage/")],
    "zh-TW": [("搶佔", "zh-TW/katas/prefill_decode_scheduler/"),
              ("洩漏", "zh-TW/katas/rolling_feature_leakage/")],
}
CJK = re.compile(r"[\u4e00-\u9fff]")
# Material draws each diagram inside a closed shadow root; opening them lets the test measure the
# labels, and changes nothing that is drawn.
OPEN_SHADOW_ROOTS = ("const attach = Element.prototype.attachShadow;"
                     "Element.prototype.attachShadow = function (init) {"
                     "  return attach.call(this, {...init, mode: 'open'}); };")
MIN_TEXT_PX = 10  # the smallest diagram text, as drawn at 1280 px, that reads without zooming
# Benchmark plots are matplotlib figures whose smallest text is its default 10 pt; scaled down to
# the column, it must stay this tall.
FIGURE_TEXT_PT, MIN_FIGURE_TEXT_PX = 10, 9
# Each label of each drawn diagram: its text, its box on the page and its font size as drawn (the
# CSS size times the scale of its SVG, which shrinks to the column).
LABELS_JS = """() => [...document.querySelectorAll('div.mermaid')].map(div => {
  const svg = div.shadowRoot.querySelector('svg');
  const box = svg.viewBox.baseVal;
  const scale = box && box.width ? svg.getBoundingClientRect().width / box.width : 1;
  const seen = new Set();
  return [...svg.querySelectorAll('.edgeLabel .label, .nodeLabel, text')]
    .filter(e => !e.querySelector('.nodeLabel'))
    .map(e => { const r = e.getBoundingClientRect();
                return {text: (e.textContent || '').trim(), x: r.x, y: r.y, w: r.width,
                        h: r.height, px: parseFloat(getComputedStyle(e).fontSize) * scale}; })
    .filter(l => l.text && l.w > 0 && l.h > 0)
    .filter(l => { const key = [l.text, l.x, l.y].join(); const again = seen.has(key);
                   seen.add(key); return !again; });
})"""
# Every block of the open page that scrolls sideways or sticks out of the article, folds opened
# first (a closed `???` fold hides its code, but a reader opens it). Tables count once, not once
# more for Material's wrapper around them.
OVERFLOW_JS = """() => {
  document.querySelectorAll('article details').forEach(d => { d.open = true; });
  const article = document.querySelector('article');
  const edge = article.getBoundingClientRect().right;
  return [...article.querySelectorAll('pre > code, table, img, div.mermaid, math')].map(e => {
    const r = e.getBoundingClientRect();
    const style = getComputedStyle(e);
    const wider = e.scrollWidth > e.clientWidth + 1;
    return {kind: e.tagName.toLowerCase() === 'code' ? 'pre' : e.tagName.toLowerCase(),
            text: (e.textContent || e.getAttribute('alt') || '').trim().slice(0, 60),
            scrolls: wider && ['auto', 'scroll'].includes(style.overflowX),
            cut: r.width > 0 && (r.right > edge + 1 || (wider && style.overflowX === 'hidden'))};
  }).filter(b => b.scrolls || b.cut);
}"""
IMAGES_JS = """() => [...document.querySelectorAll('article img')].map(
  img => ({src: img.src, natural: img.naturalWidth, shown: img.getBoundingClientRect().width}))"""


def mermaid_fences(page: Path) -> int:
    return len(re.findall(r"^```mermaid\s*$", (DOCS / page).read_text(encoding="utf-8"), re.M))


def cjk_font_missing() -> bool:
    """Without a CJK font Chromium draws Chinese as boxes; only fontconfig can tell."""
    if shutil.which("fc-list") is None:
        return False
    found = subprocess.run(["fc-list", ":lang=zh-tw", "family"], capture_output=True, text=True)
    return not found.stdout.strip()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def base_url(site):
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site.folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def context():
    """One browser and one context for the module: pages share the HTTP cache, as for a reader."""
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        context = chromium.new_context(viewport={"width": 1280, "height": 900})
        context.add_init_script(OPEN_SHADOW_ROOTS)
        context.set_default_timeout(30_000)  # generous: CI machines may be busy
        yield context
        context.close()
        chromium.close()


@pytest.fixture(scope="module")
def shots() -> Path | None:
    """Where screenshots go for a person to look at; None (none taken) unless asked for."""
    chosen = os.environ.get("KATA_DOCS_SCREENSHOTS")
    if not chosen:
        return None
    Path(chosen).mkdir(parents=True, exist_ok=True)
    return Path(chosen)


class Tab:
    """One browser page that records console errors, page errors and requests leaving the host."""

    def __init__(self, context, base_url: str) -> None:
        self.base = base_url
        self.page = context.new_page()
        self.problems: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        self.page.on("request", self._request)

    def _console(self, message) -> None:
        if message.type != "error":
            return
        source = message.location.get("url", "")
        # Material fetches sitemap.xml next to each alternate-language link to map pages between
        # languages; the i18n plugin points those links at the translated page itself, so the
        # fetch 404s. Material handles the miss and the switcher still lands on the translated
        # page (checked below), so this one message is expected noise.
        if message.text.startswith("Failed to load resource") and source.endswith("/sitemap.xml"):
            return
        self.problems.append(f"console error: {message.text} ({source})")

    def _request(self, request) -> None:
        if not request.url.startswith((self.base, "data:", "blob:", "about:")):
            self.problems.append(f"request leaves the machine: {request.url}")

    def goto(self, path: str):
        response = self.page.goto(self.base + path)
        assert response is not None and response.ok, f"{path}: HTTP {response and response.status}"
        return response

    def path(self) -> str:
        return urlsplit(self.page.url).path.lstrip("/")

    def assert_clean(self) -> None:
        assert not self.problems, "\n".join(self.problems)


@pytest.fixture
def tab(context, base_url):
    opened = Tab(context, base_url)
    yield opened
    opened.page.close()


def check_page(tab: Tab, shots: Path, page: Path, lang: str) -> None:
    """The page in `lang` is open: its language, title and diagrams are right; take a screenshot."""
    assert tab.path() == url(page, lang)
    assert tab.page.locator("html").get_attribute("lang") == lang
    title = tab.page.locator("article h1").first.inner_text()
    assert title.strip()
    if lang == "zh-TW":
        assert CJK.search(title), f"the Chinese page's title has no Chinese: {title!r}"
    # Material swaps each Mermaid block for a div whose closed shadow root holds the SVG, so the
    # test waits for as many drawn (non-empty) divs as the page has diagrams.
    expected = mermaid_fences(page)
    if expected:
        tab.page.wait_for_function(
            "n => [...document.querySelectorAll('div.mermaid')].filter("
            "d => d.getBoundingClientRect().height > 40).length === n", arg=expected)
    assert tab.page.locator("div.mermaid").count() == expected
    if shots:
        name = f"{lang}-{page.with_suffix('').as_posix().replace('/', '-')}.png"
        tab.page.screenshot(path=shots / name)
    wide = tab.page.evaluate(OVERFLOW_JS)
    assert not wide, f"{url(page, lang)}: blocks scroll sideways or are cut at 1280 px: {wide}"


def switch_language(tab: Tab, page: Path, to: str, *, wait_until: str = "load") -> None:
    """Pick `to` in the header's language menu and land on the same page in that language."""
    tab.page.locator(".md-header .md-select").first.hover()
    tab.page.locator(f'a.md-select__link[hreflang="{to}"]').first.click()
    # Material may drop the trailing slash and let the server redirect; the redirect ends here.
    tab.page.wait_for_url(re.compile(re.escape(tab.base + url(page, to)) + "$"),
                          wait_until=wait_until)


@pytest.mark.parametrize("page", PAGES, ids=[p.with_suffix("").as_posix() for p in PAGES])
def test_every_page_renders_in_both_languages_and_switches(tab, shots, site, page: Path):
    """Each language in turn: the page, then its figures (Chinese text measured in its font)."""
    if cjk_font_missing():
        pytest.skip("no CJK font installed (apt-get install fonts-noto-cjk): Chinese would render "
                    "as boxes")
    tab.goto(url(page, "en"))
    check_page(tab, shots, page, "en")
    check_figures(tab, site, page, "en")
    switch_language(tab, page, "zh-TW")
    check_page(tab, shots, page, "zh-TW")
    check_figures(tab, site, page, "zh-TW")
    switch_language(tab, page, "en", wait_until="commit")  # the English page is checked above
    tab.assert_clean()


def search(tab: Tab, word: str) -> None:
    box = tab.page.locator("input.md-search__input")
    box.click()
    box.fill(word)
    box.press("End")  # Material searches on keyup; fill() alone types no key


def results(tab: Tab) -> list[str]:
    return [urlsplit(a.get_attribute("href")).path for a in
            tab.page.locator("a.md-search-result__link").all()]


@pytest.mark.parametrize("lang", LANGS)
def test_search_finds_words_in_each_language(tab, shots, lang: str):
    tab.goto(url(Path("index.md"), lang))
    for word, wanted in SEARCHES[lang]:
        search(tab, word)
        try:
            tab.page.wait_for_function(
                "path => [...document.querySelectorAll('a.md-search-result__link')]"
                ".some(a => new URL(a.href).pathname === path)", arg="/" + wanted)
        except sync_api.TimeoutError:
            pytest.fail(f"searching {word!r} did not find /{wanted}; results: {results(tab)}")
        if shots:
            name = f"{lang}-search-{wanted.strip('/').replace('/', '-')}.png"
            tab.page.screenshot(path=shots / name)
        found = results(tab)
        if lang == "zh-TW":
            assert all(p.startswith("/zh-TW/") for p in found), f"{word!r} found English: {found}"
        else:
            assert not any(p.startswith("/zh-TW/") for p in found), f"{word!r} found: {found}"
    tab.assert_clean()


@pytest.mark.parametrize("lang, word", [("zh-TW", "練習題"), ("zh-TW", "隱藏測試"),
                                        ("zh-TW", "成績單"), ("en", "deadline")])
def test_search_keeps_to_the_page_language_and_finds_words_whole(tab, lang: str, word: str):
    """Each language has its own index; a Traditional Chinese word is one token, so the result
    highlights it whole (a Simplified dictionary cut 練習題 as 練習|題 and marked only 練)."""
    tab.goto(url(Path("index.md"), lang))
    search(tab, word)
    tab.page.wait_for_selector("a.md-search-result__link")
    found = results(tab)
    other = [p for p in found if p.startswith("/zh-TW/") != (lang == "zh-TW")]
    assert not other, f"searching {word!r} on the {lang} site found the other language: {other}"
    marks = tab.page.locator(".md-search-result mark").all_inner_texts()
    assert marks and all(m == word for m in marks if CJK.search(m)), (word, sorted(set(marks)))
    tab.assert_clean()


def png_dpi(path: Path) -> float:
    """The resolution a PNG was saved at (its pHYs chunk), 72 when it does not say."""
    data = path.read_bytes()
    at = data.find(b"pHYs")
    if at < 0:
        return 72.0
    per_metre, _, unit = struct.unpack(">IIB", data[at + 4:at + 13])
    return per_metre * 0.0254 if unit == 1 else 72.0


def overlapping(labels: list[dict], slack: float = 1.0) -> list[tuple[str, str]]:
    return [(a["text"], b["text"]) for i, a in enumerate(labels) for b in labels[i + 1:]
            if a["x"] + slack < b["x"] + b["w"] and b["x"] + slack < a["x"] + a["w"]
            and a["y"] + slack < b["y"] + b["h"] and b["y"] + slack < a["y"] + a["h"]]


def check_figures(tab: Tab, site, page: Path, lang: str) -> None:
    """The open page's diagrams: labels apart and readable; its plots' text readable as shown."""
    if mermaid_fences(page):
        tab.page.wait_for_function(
            "n => [...document.querySelectorAll('div.mermaid')].filter("
            "d => d.shadowRoot && d.shadowRoot.querySelector('svg')).length === n",
            arg=mermaid_fences(page))
    for n, labels in enumerate(tab.page.evaluate(LABELS_JS), start=1):
        where = f"{url(page, lang)}, diagram {n}"
        assert labels, f"{where}: no label found to measure"
        if lang == "zh-TW":
            assert any(CJK.search(label["text"]) for label in labels), f"{where}: no Chinese label"
        assert not overlapping(labels), f"{where}: labels overlap: {overlapping(labels)}"
        small = sorted({(round(label["px"], 1), label["text"][:30]) for label in labels
                        if label["px"] < MIN_TEXT_PX})
        assert not small, f"{where}: text under {MIN_TEXT_PX} px at 1280 px wide: {small}"
    for image in tab.page.evaluate(IMAGES_JS):
        path = site.folder / urlsplit(image["src"]).path.lstrip("/")
        px = FIGURE_TEXT_PT / 72 * png_dpi(path) * image["shown"] / image["natural"]
        assert px >= MIN_FIGURE_TEXT_PX, (
            f"{url(page, lang)}: {path.name} is drawn {image['natural']} px wide and shown "
            f"{image['shown']:.0f} px wide: its {FIGURE_TEXT_PT} pt text is {px:.1f} px")
