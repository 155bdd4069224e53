"""`kata interviewer`: what a person needs to interview someone else on a kata, on the session
layer (harness.session).

script (the sheet per level, read from both metadata files and the mutants), suite (the hidden
tests' titles by level), mistakes (which classic mistakes a failing title points at), watch (the
live view of the open session), timeline and report (the candidate's feedback), document (both
as one document: on the terminal, or one HTML page) and commands (the CLI). `say` speaks the
catalogue's `interviewer` section."""

from __future__ import annotations

from harness import words


def say(key: str, lang: str | None = None, **fields: object) -> str:
    return words.say(f"interviewer.{key}", lang, **fields)
