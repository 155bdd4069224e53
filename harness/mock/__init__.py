"""`kata mock`: a timed mock interview on one kata, with levels that unlock in order."""
