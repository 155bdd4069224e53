"""`python -m harness`: the `kata` command, for a checkout whose package is not installed."""

from harness.cli import app

app(prog_name="kata")
