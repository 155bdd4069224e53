"""Move the interviewer-only text of katas/KATA/kata.toml to harness/suites/KATA/interviewer.toml.

    python tools/split_interviewer.py KATA [KATA ...]     # or --all

The candidate keeps, in kata.toml, the prompt and the questions as asked; each question gains an
`id` (derived from its English text, as harness.metadata derives it for the older layout) and a
`level = 1` placeholder for its author to correct. Its answer moves to `[answers.<id>]`, and the
`[hints.*]`, `[[followups]]` and `[selfcheck]` tables move whole. Text is moved byte for byte (the
TOML source of every value, not a re-serialisation), and the split is written only once both files
load, through harness.metadata, into exactly what the old file held.
"""

from __future__ import annotations

import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness import metadata  # noqa: E402  (the checkout's harness, whatever is installed)

HEADER = ("# The interviewer's side of katas/{name}/kata.toml: what a candidate must not read\n"
          "# before earning it (see harness/metadata.py). Answers are keyed by question ids.\n")
# The old first line of every kata.toml, and what it says once the kata is split.
OLD_COMMENT = ("# One file drives the CLI, the prompts, the mock interview and the docs for this "
               "kata.\n")
NEW_COMMENT = ("# The candidate's side of this kata: the prompt, the briefs and the questions as "
               "asked. The\n# interviewer's side (answers, hints, follow-ups) is "
               "harness/suites/{name}/interviewer.toml.\n")
MOVED_TABLES = ("hints", "followups", "selfcheck")


@dataclass
class Chunk:
    """A run of lines that parses alone: a table header, one key = value, or blanks and comments."""
    text: str
    header: str | None = None  # the table's name for a header: "questions", "hints.ties"
    key: str | None = None  # the dotted key of a key = value

    @property
    def blank(self) -> bool:
        return self.header is None and self.key is None


def chunks(text: str) -> list[Chunk]:
    out, pending = [], ""
    for line in text.splitlines(keepends=True):
        pending += line
        stripped = pending.strip()
        if not stripped or stripped.startswith("#"):
            out.append(Chunk(pending))
            pending = ""
            continue
        if stripped.startswith("["):
            out.append(Chunk(pending, header=stripped.strip("[]").strip()))
            pending = ""
            continue
        try:
            tomllib.loads(pending)
        except tomllib.TOMLDecodeError:
            continue  # a value that spans lines: read on
        out.append(Chunk(pending, key=pending.split("=", 1)[0].strip()))
        pending = ""
    if pending.strip():
        raise ValueError(f"unterminated value at the end: {pending[:80]!r}")
    return out


def split(name: str, text: str) -> tuple[str, str]:
    """(the new kata.toml, interviewer.toml) for the text of an old-layout kata.toml."""
    ids = [q["id"] for q in metadata.load_text(text)["questions"]]
    candidate, moved, answers = [], [], [[] for _ in ids]
    table, question = "", -1
    for chunk in chunks(text):
        if chunk.header is not None:
            table = chunk.header
            if table.split(".")[0] in ("answers", "rubric"):
                raise ValueError(f"{name}: kata.toml already has [{table}]: split already?")
        top = table.split(".")[0]
        if top in MOVED_TABLES:
            moved.append(chunk.text)
        elif top == "questions" and chunk.header is not None:
            question += 1
            candidate.append(f'{chunk.text}id = "{ids[question]}"\nlevel = 1\n')
        elif top == "questions" and chunk.key in ("id", "level"):
            raise ValueError(f"{name}: a question has an {chunk.key} already: split already?")
        elif top == "questions" and (chunk.key or "").startswith("answer."):
            answers[question].append(chunk.text.removeprefix("answer."))
        else:
            candidate.append(NEW_COMMENT.format(name=name) if chunk.text == OLD_COMMENT
                             else chunk.text)
    hidden = [HEADER.format(name=name)]
    for qid, texts in zip(ids, answers, strict=True):
        hidden.append(f"\n[answers.{qid}]\n" + "".join(texts))
    hidden.append("\n" + "".join(moved))
    return _tidy("".join(candidate)), _tidy("".join(hidden))


def _tidy(text: str) -> str:
    return text.rstrip("\n") + "\n"


def run(name: str) -> None:
    candidate_path = ROOT / "katas" / name / "kata.toml"
    hidden_path = ROOT / "harness" / "suites" / name / "interviewer.toml"
    if hidden_path.exists():
        raise ValueError(f"{name}: {hidden_path.relative_to(ROOT)} exists already")
    text = candidate_path.read_text(encoding="utf-8")
    new_candidate, new_hidden = split(name, text)
    expected = metadata.load_text(text)
    for q in expected["questions"]:
        q["level"] = 1
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp) / "kata.toml", Path(tmp) / "interviewer.toml"
        a.write_text(new_candidate, encoding="utf-8")
        b.write_text(new_hidden, encoding="utf-8")
        if metadata.load(a, b) != expected:
            raise ValueError(f"{name}: the split would not load as the old file did; nothing "
                             "written")
    candidate_path.write_text(new_candidate, encoding="utf-8")
    hidden_path.write_text(new_hidden, encoding="utf-8")
    print(f"{name}: {len(expected['questions'])} answers, the hints, follow-ups and self-check "
          f"moved to {hidden_path.relative_to(ROOT)}")


def main(argv: list[str]) -> int:
    names = sorted(p.parent.name for p in (ROOT / "katas").glob("*/kata.toml")) \
        if argv == ["--all"] else argv
    if not names:
        print(__doc__)
        return 2
    for name in names:
        if (ROOT / "harness" / "suites" / name / "interviewer.toml").exists() and argv == ["--all"]:
            continue  # split already
        run(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
