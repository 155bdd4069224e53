"""`kata mock`: the candidate's commands and screens, on the session layer (harness.session)."""
