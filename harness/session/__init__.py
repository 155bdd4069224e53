"""The session layer both front ends stand on: `mock/` (the candidate's commands and screens) and
`interviewer/` (the interviewer's) import it and never each other.

log (the session and its append-only event log in the progress store), interview (start, submit
and unlock, hints, questions, and the clock `now`), matcher (a free-text question to the
interviewer's known questions), rubric (the anchored scale and a pair session's scores)."""
