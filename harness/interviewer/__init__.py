"""`kata interviewer`: interviewing someone else on a kata, on the session layer. script (a sheet
per level, with the kata's mutants as its classic mistakes), suite (the hidden tests by level),
watch (the live view), timeline and report (the feedback), document (on the terminal, or one HTML
page) and commands (the CLI). `say` speaks the catalogue's `interviewer` section."""

from __future__ import annotations

from harness import words


def say(key: str, lang: str | None = None, **fields: object) -> str:
    return words.say(f"interviewer.{key}", lang, **fields)
