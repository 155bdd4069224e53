"""The interviewer's HTML pages (the script and the report) in the browser that tests the docs:
each loads nothing from anywhere, its text is large enough to read, nothing runs past the page's
width, and no two blocks overlap, at a desktop and a phone width, in both languages."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest

from harness import catalog
from harness.interviewer import document, report, script, suite
from harness.session import rubric
from harness.session.log import Kind, Mode, Reason, Sessions
from harness.store import Store

from .test_docs_browser import CHROMIUM, FLAGS, Tab, _Quiet, cjk_font_missing, sync_api

AUC = catalog.get("auc_roc")
MIN_TEXT_PX = 12
WIDTHS = (1280, 390)
# Every element that holds text of its own, with its font size; whether the page is wider than
# the window (something runs past the edge); and each pair of sibling blocks where the second
# starts above the end of the first.
MEASURE_JS = """(minPx) => {
  const own = [...document.querySelectorAll('main *')].filter(e =>
    [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()));
  const small = own.map(e => [parseFloat(getComputedStyle(e).fontSize), e.textContent.trim()])
    .filter(([px]) => px < minPx).map(([px, t]) => px + 'px: ' + t.slice(0, 40));
  const overlaps = [];
  const parents = document.querySelectorAll('main, main section, main div, main ol, main ul');
  for (const parent of parents) {
    const kids = [...parent.children].filter(e => getComputedStyle(e).display !== 'inline');
    for (let i = 1; i < kids.length; i++) {
      const a = kids[i - 1].getBoundingClientRect(), b = kids[i].getBoundingClientRect();
      if (a.height && b.height && b.top < a.bottom - 1)
        overlaps.push(kids[i - 1].textContent.trim().slice(0, 30) + ' / '
                      + kids[i].textContent.trim().slice(0, 30));
    }
  }
  return {small, wide: document.documentElement.scrollWidth > window.innerWidth, overlaps};
}"""
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).is_file(), reason=f"no Chromium at {CHROMIUM}")


def write_pages(folder, lang: str) -> list[str]:
    """The script of auc_roc and the report of a scored pair session, as the CLI writes them."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KATA_HOME", str(folder / "home"))
        built = script.build(AUC, lang, suite.hidden_tests(AUC))
        page = document.page(document.script(built))
        (folder / f"script-{lang}.html").write_text(page, encoding="utf-8")
        store = Store()
        sessions = Sessions(store)
        session = sessions.start("auc_roc", "/tmp/auc.py", lang, 3, 40, 1000.0, Mode.PAIR)
        failures = [[1, "tied scores must count one half", "ties", "wrong answer"]]
        sessions.record(session, 1100.0, (Kind.SUBMIT, 1, {
            "hidden": [9, 11], "counts": {"1": [9, 11]}, "failures": failures,
            "import_error": None}))
        sessions.record(session, 1200.0, (Kind.HINT, 1, {"category": "ties", "step": 0}))
        sessions.finish(session, Reason.ENDED, 1500.0)
        rubric.Scores(store).record(session.id, 1600.0, [
            (d.id, 3, "a line of evidence that is long enough to wrap on a phone screen")
            for d in rubric.dimensions()] + [(rubric.point_item(1, 1), 1, "")])
        page = document.page(report.build(store, sessions.get(session.id), AUC, lang))
        (folder / f"report-{lang}.html").write_text(page, encoding="utf-8")
    return [f"script-{lang}.html", f"report-{lang}.html"]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("interviewer-pages")
    names = [name for lang in catalog.LANGS for name in write_pages(folder, lang)]
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", names
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    if cjk_font_missing():
        pytest.skip("no CJK font installed (apt-get install fonts-noto-cjk): Chinese text would "
                    "be measured in a fallback font")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_pages_read_well_and_fetch_nothing(browser, served, width):
    base, names = served
    context = browser.new_context(viewport={"width": width, "height": 900})
    context.set_default_timeout(30_000)
    try:
        for name in names:
            tab = Tab(context, base)
            tab.goto(name)
            found = tab.page.evaluate(MEASURE_JS, MIN_TEXT_PX)
            where = f"{name} at {width} px"
            assert not found["small"], f"{where}: text under {MIN_TEXT_PX} px: {found['small']}"
            assert not found["wide"], f"{where}: something runs past the window's width"
            assert not found["overlaps"], f"{where}: blocks overlap: {found['overlaps']}"
            tab.assert_clean()
            tab.page.close()
    finally:
        context.close()
