"""Errors that carry the exit code the CLI turns them into (one red line, never a traceback)."""

from __future__ import annotations


class SynchuntError(Exception):
    """Base of synchunt's user-facing errors."""

    exit_code: int = 2


class UsageError(SynchuntError):
    """Bad arguments or options (exit 2)."""


class TraceError(SynchuntError):
    """A trace that cannot be read or understood (exit 2)."""


class TargetError(SynchuntError):
    """A profile target that cannot be resolved or run (exit 2)."""
