"""The learner's language: English, or Traditional Chinese when `KATA_LANG` (or the locale:
`LC_ALL`, `LC_MESSAGES`, `LANG`) says zh-TW. Every `--lang` left out defaults to it."""

from __future__ import annotations

import os
import re

LANGS = ("en", "zh-TW")


def lang() -> str:
    """zh-TW when KATA_LANG or the locale asks for Traditional Chinese, else en."""
    if os.environ.get("KATA_LANG") in LANGS:
        return os.environ["KATA_LANG"]
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if value := os.environ.get(var):
            return "zh-TW" if re.match(r"zh[_-](TW|HK|Hant)", value) else "en"
    return "en"
