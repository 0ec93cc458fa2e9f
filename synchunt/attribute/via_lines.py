"""Exact lines for the user's frame that led into a library, where the trace names only its function's first line.

In a trace the frame just inside the user's frame is the function it called (a library's ``generate``), so the
user's line is the line of that function's body calling a function of that name (``model.generate(...)``): when
exactly one line does, that is the line (``line_source: exact``). A call the name does not show (an
``nn.Module`` called through ``__call__``) or several such lines leave the first line, with its note.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

import msgspec

from synchunt.attribute.model import CallSite, Sync
from synchunt.sites import Frame, FrameFilter
from synchunt.source_map import CapturedSources, captured_sources
from synchunt.trace import Trace


def exact_via_lines(records: Sequence[Sync], trace: Trace, frame_filter: FrameFilter) -> tuple[Sync, ...]:
    """``records`` with each def-line ``via`` resolved to the line calling the next frame, where the source shows
    exactly one such line."""
    asked: dict[str, dict[tuple[int, str, str], None]] = {}  # per file: (def line, function, callee) once each
    callee_of: list[str | None] = []
    for record in records:
        callee = _callee(record, frame_filter)
        callee_of.append(callee)
        via = record.via
        if callee is not None and via is not None:
            asked.setdefault(via.file, {})[(via.def_line or via.line, via.function, callee)] = None
    if not asked:
        return tuple(records)
    sources = captured_sources([trace.synchunt])
    lines = {(file, question): line for file, questions in asked.items()
             for question, line in _answers(file, sources, list(questions)).items()}
    out = []
    for record, callee in zip(records, callee_of, strict=True):
        via = record.via
        line = None if via is None or callee is None else lines.get(
            (via.file, (via.def_line or via.line, via.function, callee)))
        if line is None:
            out.append(record)
            continue
        exact = CallSite(via.file, line, via.function, def_line=via.def_line or via.line, line_source="exact",
                         user=via.user)
        stack = tuple(Frame(frame.file, line, frame.function)
                      if (frame.file, frame.line, frame.function) == (via.file, via.line, via.function) else frame
                      for frame in record.stack)
        out.append(msgspec.structs.replace(record, via=exact, stack=stack))
    return tuple(out)


def _callee(record: Sync, frame_filter: FrameFilter) -> str | None:
    """The function the ``via`` frame called, when it is a frame of its own (not torch's ``__call__`` machinery)."""
    via = record.via
    if via is None or via.line_source != "def":
        return None
    for inner, frame in zip(record.stack, record.stack[1:], strict=False):
        if frame.file == via.file and frame.function == via.function:
            return None if frame_filter.is_internal(inner.file) else inner.function.rsplit(".", 1)[-1]
    return None


def _answers(file: str, sources: CapturedSources, questions: list[tuple[int, str, str]],
             ) -> dict[tuple[int, str, str], int]:
    path = sources.find(file)
    if path is None:
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), filename=path)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    found = {}
    for def_line, function, callee in questions:
        body = _function_at(tree, def_line, function.rsplit(".", 1)[-1])
        if body is None:
            continue
        calls = {node.lineno for node in _own_nodes(body) if isinstance(node, ast.Call) and _named(node.func, callee)}
        if len(calls) == 1:
            found[(def_line, function, callee)] = calls.pop()
    return found


def _named(func: ast.expr, name: str) -> bool:
    return (isinstance(func, ast.Name) and func.id == name) or (isinstance(func, ast.Attribute) and func.attr == name)


def _function_at(tree: ast.Module, def_line: int, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
            if def_line in (node.lineno, first):
                return node
    return None


def _own_nodes(function: ast.AST) -> list[ast.AST]:
    """The function's nodes, not those of functions, lambdas or classes nested in it (frames of their own)."""
    nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    found: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, nested):
            continue
        found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found
