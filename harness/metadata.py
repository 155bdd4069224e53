"""What a complete kata.toml holds, in both languages; the CLI and the meta-tests both check it."""

from __future__ import annotations

from harness.catalog import LANGS

LEVEL_KEYS = ("title", "prompt")
QUESTION_KEYS = ("ask", "answer")
FOLLOWUP_KEYS = ("question", "points")


def _bilingual(where: str, value: object, kind: type) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where} must be a table with {' and '.join(LANGS)}"]
    problems = []
    for lang in LANGS:
        text = value.get(lang)
        if not isinstance(text, kind) or not text:
            problems.append(f"{where}.{lang} is missing or empty")
    return problems


def problems(meta: dict, hint_categories: set[str] = frozenset()) -> list[str]:
    """Everything missing or malformed in one kata's metadata (empty when complete)."""
    found = []
    for key, kind in (("module", str), ("minutes", int)):
        if not isinstance(meta.get(key), kind):
            found.append(f"{key} must be a {kind.__name__}")
    found += _bilingual("title", meta.get("title"), str)
    for section, keys, minimum in (("levels", LEVEL_KEYS, 1), ("questions", QUESTION_KEYS, 1),
                                   ("followups", FOLLOWUP_KEYS, 1)):
        entries = meta.get(section, [])
        if len(entries) < minimum:
            found.append(f"[[{section}]] needs at least {minimum} entry")
        for i, entry in enumerate(entries):
            for key in keys:
                kind = list if key == "points" else str
                found += _bilingual(f"{section}[{i}].{key}", entry.get(key), kind)
    found += _bilingual("selfcheck", meta.get("selfcheck"), list)
    hints = meta.get("hints", {})
    for category in sorted(hint_categories - set(hints)):
        found.append(f"[hints.{category}] is used by a hidden test but missing")
    for category, texts in hints.items():
        found += _bilingual(f"hints.{category}", texts, list)
        for lang in LANGS:
            if len(texts.get(lang, [])) != 2:
                found.append(f"hints.{category}.{lang} needs exactly two hints: a nudge, a pointer")
    return found
