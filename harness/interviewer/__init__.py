"""`kata interviewer`: what a person needs to interview someone else on a kata.

script (the sheet per level, read from both metadata files and the mutants), suite (the hidden
tests' titles by level), mistakes (which classic mistakes a failing title points at), rubric
(the anchored scale and the scores kept in the progress store), watch (the live view of the open
session), report (the candidate's feedback), screens and html (the two ways they are shown), text
(every sentence, in both languages) and commands (the CLI)."""
