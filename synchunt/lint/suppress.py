"""Inline suppressions: ``# synchunt: ignore[SH101, SH2] -- reason`` (or a bare ``# synchunt: ignore``).

A suppression applies to findings on the lines its comment's line belongs to; codes may be prefixes.
The reason, after ``--`` or ``:``, is for readers only.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass

_PATTERN = re.compile(r"#\s*synchunt:\s*ignore(?:\[(?P<codes>[^\]]*)\])?(?:\s*(?:--|:)\s*(?P<reason>.*))?",
                      re.IGNORECASE)


@dataclass(frozen=True)
class Suppression:
    line: int
    codes: tuple[str, ...]  # empty: every code
    reason: str | None = None

    def covers(self, code: str) -> bool:
        return not self.codes or any(code.startswith(prefix) for prefix in self.codes)


def parse_comment(comment: str, line: int) -> Suppression | None:
    match = _PATTERN.search(comment)
    if match is None:
        return None
    codes = tuple(code.strip().upper() for code in (match.group("codes") or "").split(",") if code.strip())
    reason = (match.group("reason") or "").strip() or None
    return Suppression(line, codes, reason)


def find_suppressions(source: str) -> dict[int, Suppression]:
    """Suppressions by line, read from real comments (not from strings that look like them)."""
    found: dict[int, Suppression] = {}
    # A comment that matches is a piece of the source: a source no match is found in has none to tokenize for
    # (the tokenizer's own pattern costs more to compile than most one-file lints take to read their file).
    if "synchunt" not in source.lower() or _PATTERN.search(source) is None:
        return found
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                suppression = parse_comment(token.string, token.start[0])
                if suppression is not None:
                    found[token.start[0]] = suppression
    except (tokenize.TokenError, SyntaxError):
        pass  # the file parsed with `ast`; a tokenizer quirk only costs suppressions after it
    return found


def is_suppressed(code: str, first_line: int, last_line: int, suppressions: dict[int, Suppression]) -> bool:
    return any(suppressions[line].covers(code) for line in range(first_line, last_line + 1) if line in suppressions)
