"""What ``synchunt lint --fix`` does to one file: choose the rewrites it may apply, apply their edits, lint the
result to confirm each finding is gone, and write the file back — atomically, through ``synchunt.files``, and
never over a file that changed since it was read.

A rewrite is applied only when it was checked (equal results on generated inputs, no sync under the guard) and
either has no condition or conditional rewrites were asked for (``unsafe``). Each edit touches only its span.
"""

from __future__ import annotations

import dataclasses
import difflib
import io
import os
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec

from synchunt.errors import UsageError
from synchunt.files import write_output
from synchunt.findings import Edit, Finding, Rewrite
from synchunt.fixes.source import split_lines
from synchunt.fixes.tailor import tailor_findings

Relint = Callable[[str, str], list[Finding]]  # (text, path) → the findings in that text


@dataclass(frozen=True)
class FileFix:
    """The outcome for one file: its text before and after, the findings fixed, the rewrites left (with why),
    and the findings the fixed text still has. ``error`` is set when the file could not be read or written."""

    path: str
    before: str
    after: str
    fixed: tuple[Finding, ...] = ()
    left: tuple[tuple[Finding, str], ...] = ()
    remaining: tuple[Finding, ...] = ()
    written: bool = False
    error: str | None = None
    unwanted: tuple[Finding, ...] = ()  # the file's findings left out by ``wanted`` (a baseline's, say)

    @property
    def changed(self) -> bool:
        return self.after != self.before

    def diff(self) -> str:
        """The unified diff from ``before`` to ``after`` (empty when unchanged)."""
        if not self.changed:
            return ""
        return "".join(difflib.unified_diff(split_lines(self.before), split_lines(self.after),
                                            fromfile=f"a/{self.path}", tofile=f"b/{self.path}"))


def fix_file(path: str, relint: Relint, *, unsafe: bool = False, write: bool = True,
             wanted: Callable[[Finding], bool] | None = None) -> FileFix:
    """Lint ``path`` (with ``relint``), tailor and check its findings' rewrites, apply those allowed, confirm
    with ``relint`` that each fixed finding is gone, and write the result when ``write`` (else: a preview).
    ``wanted``: which of the file's findings may be fixed (those reported: not one a baseline accepted)."""
    # A link's target is the file to fix (the atomic writer would replace the link itself with a plain file)
    target = Path(os.path.realpath(path))
    try:
        raw = target.read_bytes()
        text = raw.decode("utf-8")
        links = target.stat().st_nlink
    except (OSError, UnicodeDecodeError) as error:
        return FileFix(path, "", "", error=f"cannot read {path}: {error}")
    if write and links > 1:  # a new file renamed into place would leave the other names with the old text
        return FileFix(path, text, text, error=f"{path} has {links} hard links: rewriting it would split them; "
                                               "apply the fixes by hand (--fix-diff shows them)")
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    source = text[len(bom):]
    linted = relint(source, path)
    found = [finding for finding in linted if wanted is None or wanted(finding)]
    unwanted = tuple(finding for finding in linted if wanted is not None and not wanted(finding))
    findings = tailor_findings(found, lambda _: source, check=True)
    excluded: set[int] = set()
    comments = comment_starts(source)
    for _ in range(3):  # a rewrite whose finding survives is left out, and the rest applied again
        chosen, left = choose(findings, unsafe=unsafe, excluded=excluded, comments=comments)
        after = apply_edits(source, [edit for finding in chosen for edit in finding.fix.edits])  # type: ignore[union-attr]
        remaining = relint(after, path) if chosen else findings
        survivors = [finding for finding in chosen if _survives(finding, chosen, source, after, remaining)]
        if not survivors:
            break
        excluded |= {id(finding) for finding in survivors}
    else:
        chosen, after, remaining = [], source, findings
    left += [(finding, "the lint still flags the rewritten code") for finding in findings if id(finding) in excluded]
    result = FileFix(path, bom + source, bom + after, tuple(chosen), tuple(left), tuple(remaining),
                     unwanted=unwanted)
    if not write or not result.changed:
        return result
    try:
        write_output(target, result.after, force=True, expected=raw)
    except UsageError as error:
        return dataclasses.replace(result, error=str(error), remaining=tuple(findings))
    return dataclasses.replace(result, written=True)


def choose(findings: list[Finding], *, unsafe: bool, excluded: set[int] = frozenset(),  # type: ignore[assignment]
           comments: Sequence[tuple[int, int]] = ()) -> tuple[list[Finding], list[tuple[Finding, str]]]:
    """The findings whose rewrites may be applied together, and the others with the reason. Safe rewrites come
    first; a rewrite whose edits overlap one already chosen is left, and so is one whose edits would replace a
    comment (``comments``: where each starts, line and 1-based column)."""
    chosen: list[Finding] = []
    left: list[tuple[Finding, str]] = []
    taken: list[tuple[tuple[int, int], tuple[int, int]]] = []
    candidates = [finding for finding in findings if finding.fix is not None and id(finding) not in excluded]
    for finding in sorted(candidates, key=lambda f: (f.fix.safety != "safe", f.sort_key)):  # type: ignore[union-attr]
        rewrite: Rewrite = finding.fix  # type: ignore[assignment]
        if not rewrite.checked:
            left.append((finding, f"a suggestion only: {rewrite.check}"))
        elif rewrite.safety != "safe" and not unsafe:
            left.append((finding, f"conditional ({rewrite.condition}): apply with --unsafe-fixes"))
        elif any(_overlaps(edit, other) for edit in rewrite.edits for other in taken):
            left.append((finding, "overlaps another fix"))
        elif any((edit.line, edit.column) <= comment < (edit.end_line, edit.end_column)
                 for edit in rewrite.edits for comment in comments):
            left.append((finding, "it would drop a comment inside the code it replaces"))
        else:
            chosen.append(finding)
            taken += [((edit.line, edit.column), (edit.end_line, edit.end_column)) for edit in rewrite.edits
                      if (edit.line, edit.column) != (edit.end_line, edit.end_column)]
    return chosen, left


def comment_starts(source: str) -> list[tuple[int, int]]:
    """Where each comment of ``source`` starts (line, 1-based column); none when it does not tokenize."""
    try:
        return [(token.start[0], token.start[1] + 1) for token in tokenize.generate_tokens(io.StringIO(source).readline)
                if token.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        return []


def _overlaps(edit: Edit, span: tuple[tuple[int, int], tuple[int, int]]) -> bool:
    start, end = (edit.line, edit.column), (edit.end_line, edit.end_column)
    if start == end:  # an insertion conflicts only strictly inside a replaced span
        return span[0] < start < span[1]
    return start < span[1] and span[0] < end


def apply_edits(text: str, edits: list[Edit]) -> str:
    """``text`` with ``edits`` applied (non-overlapping; identical insertions at one place count once)."""
    lines = split_lines(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, column: int) -> int:
        if line > len(lines):
            return len(text)
        return starts[line - 1] + column - 1

    unique = list(dict.fromkeys(edits))
    spans = sorted(((offset(e.line, e.column), offset(e.end_line, e.end_column), position, e.text)
                    for position, e in enumerate(unique)), key=lambda item: (item[0], item[2]))
    result, cursor = [], 0
    for start, end, _, replacement in spans:
        result.append(text[cursor:start])
        result.append(replacement)
        cursor = max(cursor, end)
    result.append(text[cursor:])
    return "".join(result)


def _survives(finding: Finding, chosen: list[Finding], before: str, after: str, remaining: list[Finding]) -> bool:
    """Whether a finding of the same rule is still where this rewrite wrote its replacement."""
    rewrite: Rewrite = finding.fix  # type: ignore[assignment]
    marker = apply_edits(before, [edit for other in chosen for edit in other.fix.edits  # type: ignore[union-attr]
                                  if other is not finding] + [
        msgspec.structs.replace(edit, text="\0" + edit.text + "\0") if _is_main(edit, rewrite) else edit
        for edit in rewrite.edits])
    start, end = marker.index("\0"), marker.rindex("\0") - 1
    lines = split_lines(after)
    positions = [0]
    for line in lines:
        positions.append(positions[-1] + len(line))
    for other in remaining:
        if other.code != finding.code or other.is_problem or other.line > len(lines):
            continue
        at = positions[other.line - 1] + other.column - 1
        if start <= at < max(end, start + 1):
            return True
    return False


def _is_main(edit: Edit, rewrite: Rewrite) -> bool:
    return (edit.line, edit.column, edit.end_line, edit.end_column) == (
        rewrite.line, rewrite.column, rewrite.end_line, rewrite.end_column)
