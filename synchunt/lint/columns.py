"""Columns of a finding: from ``ast``'s UTF-8 byte offsets to 1-based characters."""

from __future__ import annotations


def first_column(lines: list[str], line: int) -> int:
    """The byte offset of a line's first non-blank character."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    stripped = text.lstrip()
    return len(text[: len(text) - len(stripped)].encode("utf-8"))


def character_column(line: str, byte_offset: int) -> int:
    """1-based character column from ``ast``'s UTF-8 byte offset."""
    return len(line.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore")) + 1
