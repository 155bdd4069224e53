"""Every word `kata` shows, in both languages, from one catalogue (words.toml): `say(key)`.

One TOML file rather than gettext catalogues: two languages side by side under one short key each
are read and reviewed together, a test checks that every key has both, and nothing needs
compiling. `--help` texts are the one exception to short keys: the commands keep their English
help where they are defined, and the catalogue keys its Chinese by that English, as gettext does.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from harness import tomlfile
from harness.lang import lang as default_lang

CATALOGUE = Path(__file__).with_name("words.toml")


@cache  # read once per process
def catalogue() -> dict[str, dict[str, str]]:
    """section.key -> {lang: text}."""
    data = tomlfile.read(CATALOGUE)
    return {f"{section}.{key}": texts for section, table in data.items()
            for key, texts in table.items() if key != "text"}


def say(key: str, lang: str | None = None, **fields: object) -> str:
    """The text `key` (`section.key`) in `lang` (default: the learner's), its fields filled in."""
    return catalogue()[key][lang or default_lang()].format(**fields)


def key(text: str) -> str:
    """A help text as the catalogue keys it: its words, whatever the wrapping."""
    return " ".join(text.split())


@cache
def translations() -> dict[str, str]:
    """--help: the English text (as `key` gives it) -> its Chinese."""
    return {key(t["en"]): t["zh-TW"].strip() for t in tomlfile.read(CATALOGUE)["help"]["text"]}
