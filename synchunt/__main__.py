"""``python -m synchunt`` runs the command-line interface."""

from synchunt.cli import entry

entry()
