"""Exact lines for trace call sites: Kineto names a frame by its function's first line, so a trace sync points at
the ``def``; where the source is readable, the lint's own form matchers find the line inside that function that
matches the sync's rule (``line_source: exact``). Ambiguous or unreadable: the first line stays (``def``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import msgspec

from synchunt.attribute.model import CallSite, Sync
from synchunt.sites import Frame
from synchunt.source_map import CapturedSources, captured_sources
from synchunt.trace import Trace
from synchunt.trace.vocab import GUARD_PASS_KEY

if TYPE_CHECKING:  # the lint's matchers load only for a call site whose source is found (most traces have none)
    from synchunt.lint.locate import Located

# What is asked of one function: (its def line, its name, the rule codes); a `synchunt.lint.locate.Query`'s fields.
Asked = tuple[int, str, tuple[str, ...]]


def exact_lines(records: Sequence[Sync], trace: Trace, *, guard_lines: bool = True) -> tuple[Sync, ...]:
    """``records`` with each ``def``-line call site resolved to its syncing line where the source shows it.

    Not for a trace whose capture ran the whole guard pass (``guard_lines``: its lines were used): there the guard
    saw every sync a form can match, with its line, so a trace sync it did not see happens inside an op no form
    names (a kernel's own host read), and the form's line would be another sync's."""
    guard = trace.synchunt.get(GUARD_PASS_KEY)
    if guard_lines and isinstance(guard, dict) and not guard.get("error"):
        return tuple(_unresolved(record, GUARD_DID_NOT_SEE) for record in records)
    sources = captured_sources([trace.synchunt])
    queries: dict[str, dict[Asked, None]] = {}  # per file: every function and rule asked about, each once
    for record in records:
        site = record.call_site
        if site is not None and site.line_source == "def" and site.line:
            queries.setdefault(site.file, {})[_query(record)] = None
    if not queries:
        return tuple(records)
    answers = {(file, query): located for file, asked in queries.items()
               for query, located in _located(file, sources, list(asked)).items()}
    readable = {file for file, _ in answers}
    resolved = []
    for record in records:
        site = record.call_site
        if site is None or site.line_source != "def" or not site.line:
            resolved.append(record)
            continue
        found = answers.get((site.file, _query(record)))
        if found is None or found.line_source != "exact" or len(found.lines) != 1:
            note = _why_def(site.function, record.rule, readable=site.file in readable)
            resolved.append(msgspec.structs.replace(record, call_site=msgspec.structs.replace(site, line_note=note)))
            continue
        exact = msgspec.structs.replace(site, line=found.lines[0], def_line=site.def_line or site.line,
                                        line_source="exact", line_note=_from_source(site.function, record.rule))
        resolved.append(msgspec.structs.replace(record, call_site=exact, stack=_with_line(record.stack, site, exact)))
    return tuple(resolved)


GUARD_DID_NOT_SEE = ("the trace names only the function's first line, and the runtime guard did not see this sync "
                     "(it happens inside another op's own code)")


def _unresolved(record: Sync, note: str) -> Sync:
    site = record.call_site
    if site is None or site.line_source != "def":
        return record
    return msgspec.structs.replace(record, call_site=msgspec.structs.replace(site, line_note=note))


def _with_line(stack: tuple[Frame, ...], was: CallSite, now: CallSite) -> tuple[Frame, ...]:
    """The stack with the call site's frame at its exact line (the trace named its function's first line)."""
    return tuple(Frame(frame.file, now.line, frame.function)
                 if (frame.file, frame.line, frame.function) == (was.file, was.line, was.function) else frame
                 for frame in stack)


def _from_source(function: str, rule: str) -> str:
    """What a line found in the source rests on: no signal saw it, the forms found no other in the function."""
    return (f"line from the source: the one line of {function}() matching {rule}'s forms (the trace names only the "
            f"function; a sync at a line no form matches is counted here too)")


def _why_def(function: str, rule: str, *, readable: bool) -> str:
    """Why a call site keeps its function's first line: what the trace names, and what the source could not say."""
    if not readable:
        return "the trace names only the function's first line, and its source could not be read here"
    return (f"the trace names only the function's first line, and no single line of {function}() matches "
            f"{rule}'s forms")


def _query(record: Sync) -> Asked:
    site = record.call_site
    assert site is not None
    return (site.def_line or site.line, site.function, (record.rule,))


def _located(file: str, sources: CapturedSources, asked: list[Asked]) -> dict[Asked, Located]:
    """One read and one lint of ``file`` for all its queries; nothing when its source cannot be read."""
    path = sources.find(file)
    if path is None:
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
    except (OSError, UnicodeDecodeError):
        return {}
    from synchunt.lint.locate import Query, locate_all

    queries = [Query(*question) for question in asked]
    answers = locate_all(source, path, queries)
    return {question: answers[query] for question, query in zip(asked, queries, strict=True)}
