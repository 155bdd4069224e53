"""`mkdocs build --strict` succeeds, builds every page in both languages, needs no network, indexes
Chinese words for search, and shows each kata's metadata and every benchmark result present."""

from __future__ import annotations

import html
import importlib.util
import json
import re
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest

from .conftest import DOCS, LANGS, ROOT, source_pages, url

PAGES = source_pages()


def load_hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "tools" / "docs_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def text_of(path: Path) -> str:
    """The visible text of a built page, roughly: tags dropped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8")))


def test_strict_build_builds_every_page_in_both_languages(site):
    for page in PAGES:
        for lang in LANGS:
            built = site.folder / url(page, lang) / "index.html"
            assert built.is_file(), f"{page} was not built for {lang}"
            page_lang = re.search(r'<html lang="([^"]+)"', built.read_text(encoding="utf-8"))
            assert page_lang and page_lang.group(1) == lang, f"{built} is not marked as {lang}"


def test_site_loads_nothing_from_the_network(site):
    assert (site.folder / "assets" / "javascripts" / "mermaid.min.js").is_file()
    remote = re.compile(r'<(?:script|link|img)\b[^>]*\b(?:src|href)="(?:https?:)?//[^"]*"')
    for built in site.folder.rglob("*.html"):
        found = remote.findall(built.read_text(encoding="utf-8"))
        assert not found, f"{built.relative_to(site.folder)} loads {found} from the network"


def test_each_language_has_its_own_search_index_and_chinese_is_cut_into_words(site):
    index = "search/search_index.json"
    english = json.loads((site.folder / index).read_text("utf-8"))
    chinese = json.loads((site.folder / "zh-TW" / index).read_text("utf-8"))
    assert english["docs"] and chinese["docs"]
    assert not [d for d in english["docs"] if re.search(r"[\u4e00-\u9fff]", d["title"])]
    assert not [d for d in chinese["docs"] if d["location"].startswith("zh-TW/")], \
        "the Chinese index's locations are relative to the Chinese site"
    assert "zh" in chinese["config"]["lang"]
    assert "\\u200b" in chinese["config"]["separator"]  # the regex escape mkdocs.yml has
    # jieba marks word boundaries with U+200B; the Traditional dictionary keeps these whole.
    words = {w for d in chinese["docs"] for w in d["text"].split("\u200b")}
    for word in ("練習題", "隱藏測試", "線上", "成績單", "批次"):
        assert word in words, f"{word} is not one word in the Chinese search index"


@pytest.mark.parametrize("page", PAGES, ids=[p.as_posix() for p in PAGES])
def test_chinese_pages_read_the_chinese_index_and_theme_strings_in_chinese(site, page):
    """Material finds the search index under the page's `base`; the theme's tooltips and labels
    (attributes that are the same on the English page, and not a name) are Chinese."""
    en = (site.folder / url(page, "en") / "index.html").read_text(encoding="utf-8")
    zh = (site.folder / url(page, "zh-TW") / "index.html").read_text(encoding="utf-8")
    base = re.search(r'"base": "([^"]*)"', zh).group(1)
    depth = len(url(page, "zh-TW").strip("/").split("/"))
    assert base == "/".join([".."] * depth + ["zh-TW/"]), base
    names = {t[lang] for t in kata_titles().values() for lang in LANGS}
    attrs = re.compile(r'\b(?:title|aria-label|placeholder|data-clipboard-text)="([^"]*)"')
    shared = set(attrs.findall(en)) & set(attrs.findall(zh))
    english = sorted(a for a in shared if re.search(r"[A-Za-z]{3}", a) and a not in names
                     and not re.search(r"[\u4e00-\u9fff]", a))
    assert not english, f"theme strings left in English on {url(page, 'zh-TW')}: {english}"


def letters(text: str) -> str:
    """Only letters and digits: Markdown may restyle quotes, code and emphasis, never the words."""
    return re.sub(r"[\W_]+", "", text)


def test_kata_pages_show_their_metadata(site):
    for path in sorted((ROOT / "katas").glob("*/kata.toml")):
        with open(path, "rb") as f:
            meta = tomllib.load(f)
        page = Path("katas") / f"{path.parent.name}.md"
        for lang in LANGS:
            text = letters(text_of(site.folder / url(page, lang) / "index.html"))
            for item in meta.get("levels", []) + meta.get("questions", []):
                wanted = item["title" if "title" in item else "ask"][lang]
                assert letters(wanted) in text, f"{page} ({lang}) lacks {wanted!r}"


def test_benchmarks_page_shows_every_result_present(site):
    hooks = load_hooks()
    folder = DOCS / "benchmarks"
    tables = sorted(folder.rglob("*.md")) if folder.is_dir() else []
    plots = sorted(p for p in folder.rglob("*.png") if ".zh-TW" not in p.name) \
        if folder.is_dir() else []
    for lang in LANGS:
        built = site.folder / url(Path("benchmarks.md"), lang) / "index.html"
        page = built.read_text(encoding="utf-8")
        text = letters(text_of(built))
        for table in tables:
            first = table.read_text(encoding="utf-8").strip().splitlines()[0]
            title = first[2:] if first.startswith("# ") else table.stem
            if table.stem in kata_titles():  # a kata's results go under the kata's one title
                title = kata_titles()[table.stem][lang]
            elif lang != "en":  # the Chinese page titles it in Chinese (harness/bench.zh-TW.toml)
                title = hooks.bench_chinese(f"# {title}", hooks._group(table))[2:]
            assert letters(title) in text, f"{table.name} is missing from the {lang} page"
        for plot in plots:
            assert re.search(rf'<img [^>]*src="[^"]*{re.escape(plot.name)}"', page), plot.name
            src = re.search(rf'<img [^>]*src="([^"]*{re.escape(plot.name)})"', page).group(1)
            assert (built.parent / src).resolve().is_file(), f"{src} does not resolve ({lang})"
        if not tables and not plots:
            assert "docs/benchmarks/" in text_of(built)


@pytest.mark.parametrize("lang", LANGS)
def test_hook_folds_in_benchmark_files_and_tolerates_none(tmp_path, lang):
    hooks = load_hooks()
    assert "docs/benchmarks/" in hooks._benchmarks(tmp_path, lang)  # no folder at all
    (tmp_path / "benchmarks" / "gpu").mkdir(parents=True)
    assert "docs/benchmarks/" in hooks._benchmarks(tmp_path, lang)  # empty folders
    (tmp_path / "benchmarks" / "toylm.md").write_text(
        "# ToyLM tokens/s\n\nMeasured 2026-01-01, x86_64.\n\n| a |\n| --- |\n| 1 |\n")
    (tmp_path / "benchmarks" / "gpu" / "toylm-cuda.md").write_text("On an H200.\n\n| b |\n")
    (tmp_path / "benchmarks" / "auc_roc-speed.png").write_bytes(b"")
    out = hooks._benchmarks(tmp_path, lang)
    assert "### ToyLM tokens/s" in out and "| 1 |" in out
    assert "### toylm-cuda\n\nOn an H200." in out, "a table without a title is named after its file"
    assert "### auc_roc" in out and "](benchmarks/auc_roc-speed.png)" in out
    assert out.index("auc_roc") < out.index("ToyLM"), "katas come in the site's order"


def test_hook_explains_a_missing_kata_file():
    hooks = load_hooks()
    page = SimpleNamespace(file=SimpleNamespace(src_uri="katas/nope.zh-TW.md"))
    out = hooks.on_page_markdown("<!-- kata:levels no_such_kata -->\n", page, {"docs_dir": "."},
                                 None)
    assert "katas/no_such_kata/kata.toml" in out and "!!! note" in out


def kata_titles() -> dict[str, dict[str, str]]:
    titles = {}
    for path in sorted((ROOT / "katas").glob("*/kata.toml")):
        with open(path, "rb") as f:
            titles[path.parent.name] = tomllib.load(f)["title"]
    return titles


@pytest.mark.parametrize("lang", LANGS)
def test_each_kata_has_one_title_on_its_page_in_the_nav_and_on_the_home_page(site, lang):
    """kata.toml's title, the one `kata list` prints, is the page's H1 and <title>, its nav
    entry (every kata is in the nav, none listed by hand) and its row of the home table."""
    home = (site.folder / url(Path("index.md"), lang) / "index.html").read_text(encoding="utf-8")
    table = home[home.index("<table>"):home.index("</table>")]
    for name, title in kata_titles().items():
        built = (site.folder / url(Path("katas") / f"{name}.md", lang) / "index.html")
        page = built.read_text(encoding="utf-8")
        shown = html.escape(title[lang], quote=False)
        assert re.search(rf'<h1 id="[^"]*">{re.escape(shown)}<a', page), (name, lang)
        assert f"<title>{shown} - " in page, (name, lang)
        nav = re.search(rf'<a href="[^"]*katas/{name}/"[^>]*>\s*<span class="md-ellipsis">\s*'
                        rf'{re.escape(shown)}\s*</span>', home)
        assert nav, f"the {lang} nav lacks {name} titled {title[lang]!r}"
        assert re.search(rf'href="katas/{name}/">{re.escape(shown)}</a>', table), (name, lang)


def test_formulas_are_mathml_built_into_the_page(site):
    for lang in LANGS:
        page = (site.folder / url(Path("katas/speculative_sampling.md"), lang) / "index.html")
        text = page.read_text(encoding="utf-8")
        assert "<math" in text and 'class="arithmatex"' not in text, lang


def test_every_plot_is_drawn_in_both_languages_and_each_page_shows_its_own(site):
    """`name.png` is English, `name.zh-TW.png` Chinese (harness.bench.save_plots); the Chinese
    benchmarks page's image is the Chinese file."""
    plots = sorted(p for p in (DOCS / "benchmarks").rglob("*.png") if ".zh-TW" not in p.name)
    assert plots, "no plots in docs/benchmarks"
    for lang in LANGS:
        built = site.folder / url(Path("benchmarks.md"), lang) / "index.html"
        page = built.read_text(encoding="utf-8")
        for plot in plots:
            chinese = plot.with_name(f"{plot.stem}.zh-TW.png")
            assert chinese.is_file(), f"{plot.name} has no Chinese copy {chinese.name}"
            src = re.search(rf'<img [^>]*src="([^"]*{re.escape(plot.name)})"', page).group(1)
            shown = (built.parent / src).resolve().read_bytes()
            wanted = (chinese if lang == "zh-TW" else plot).read_bytes()
            assert shown == wanted, f"the {lang} page shows the wrong copy of {plot.name}"


def test_a_wide_benchmark_table_is_split_keeping_its_row_names_and_ratios_in_place():
    hooks = load_hooks()
    head = ["load", "policy", "p50 ms", "vs best", "p99 ms", "vs best", "batch", "busy %",
            "calls", "calls / baseline"]
    table = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head),
             "| " + " | ".join(str(i) for i in range(len(head))) + " |"]
    parts = [p.splitlines() for p in hooks._fitted("\n".join(table)).split("\n\n")]
    assert len(parts) == 2 and all(len(p) == 3 for p in parts)
    heads = [[c.strip() for c in p[0].strip("|").split("|")] for p in parts]
    assert all(h[:2] == ["load", "policy"] and len(h) <= hooks.WIDEST for h in heads)
    assert sum(len(h) - 2 for h in heads) == len(head) - 2, "every column is shown once"
    for h in heads:
        for i, name in enumerate(h):
            if name.startswith("vs ") or name.endswith("/ baseline"):
                assert i > 2, f"{name} is separated from the column it compares"


def test_a_kata_page_with_its_own_title_is_refused():
    hooks = load_hooks()
    page = SimpleNamespace(file=SimpleNamespace(src_uri="katas/auc_roc.md"))
    with pytest.raises(ValueError, match="kata.toml"):
        hooks.on_page_markdown("# My own title\n\nText.\n", page, {"docs_dir": "."}, None)
    out = hooks.on_page_markdown("Text.\n", page, {"docs_dir": "."}, None)
    assert out.startswith(f"# {kata_titles()['auc_roc']['en']}\n")
