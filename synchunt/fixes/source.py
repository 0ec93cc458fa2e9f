"""One parsed module as the patterns see it: the text of any node, its parents, its loop and function, the names
bound in a region, and spans in the findings' coordinates (1-based character columns, end exclusive)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property

from synchunt.findings import Edit

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def split_lines(text: str) -> tuple[str, ...]:
    """Lines as Python numbers them (``\n``, ``\r\n`` and ``\r`` end a line; a form feed does not), ends kept."""
    return tuple(_LINE.findall(text))
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


@dataclass(frozen=True)
class Module:
    """A module's source and syntax tree. Build it with :meth:`parse` (``None`` for source that does not parse)."""

    text: str
    tree: ast.Module
    lines: tuple[str, ...] = field(repr=False)

    @classmethod
    def parse(cls, text: str) -> Module | None:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        return cls.of(text, tree)

    @classmethod
    def of(cls, text: str, tree: ast.Module) -> Module:
        """A module from a tree already parsed from ``text`` (the lint's, say: no second parse)."""
        return cls(text, tree, split_lines(text))

    @cached_property
    def _parents(self) -> dict[int, ast.AST]:
        return {}

    @cached_property
    def _starts(self) -> dict[int, list[ast.AST]]:
        return {}

    @cached_property
    def _indexed(self) -> set[int]:
        return set()

    def nodes_on(self, line: int) -> list[ast.AST]:
        """The nodes that start on ``line``. Only the region around the line is indexed (its innermost function,
        else its top-level statement, and the statements leading down to it): a finding never needs the rest
        of a large module."""
        region = self._region(line)
        if id(region) not in self._indexed:
            self._indexed.add(id(region))
            stack = [region]
            while stack:
                node = stack.pop()
                start = getattr(node, "lineno", None)
                if start is not None:
                    self._starts.setdefault(start, []).append(node)
                for child in ast.iter_child_nodes(node):
                    self._parents[id(child)] = node
                    stack.append(child)
        return self._starts.get(line, [])

    def _region(self, line: int) -> ast.AST:
        """The innermost function holding ``line`` (else the top-level statement holding it), linking each
        statement on the way down to its parent."""
        node: ast.AST = self.tree
        region: ast.AST = self.tree
        while True:
            inner = next((child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt)
                          and child.lineno <= line <= (child.end_lineno or child.lineno)), None)
            if inner is None:
                return region
            self._parents[id(inner)] = node
            if node is self.tree or isinstance(inner, _FUNCTIONS):
                region = inner
            node = inner

    @property
    def parents(self) -> dict[int, ast.AST]:
        return self._parents

    @cached_property
    def torch(self) -> str | None:
        """The name the module binds ``torch`` to (``import torch``, ``import torch as th``), if any: at the top
        level first, else anywhere (an import inside a function)."""
        for nodes in (self.tree.body, ast.walk(self.tree)):
            for node in nodes:
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.name == "torch":
                            return alias.asname or "torch"
                        if alias.name.startswith("torch.") and alias.asname is None:
                            return "torch"
        return None

    @cached_property
    def newline(self) -> str:
        first = self.lines[0] if self.lines else "\n"
        return "\r\n" if first.endswith("\r\n") else "\n"

    def spanning(self, line: int) -> list[ast.AST]:
        """The expressions and statements that span ``line`` without starting on it, innermost first."""
        found = [node for node in ast.walk(self.tree) if isinstance(node, ast.expr | ast.stmt)
                 and node.lineno < line <= (node.end_lineno or node.lineno)]
        return sorted(found, key=lambda node: (node.end_lineno or 0) - node.lineno)

    # -- text --------------------------------------------------------------------------------------------------
    def _bytes(self, line: int) -> bytes:
        return self.lines[line - 1].encode("utf-8") if 0 < line <= len(self.lines) else b""

    def segment(self, node: ast.AST) -> str:
        """The node's exact source text (its own parentheses excluded, as ``ast`` spans it)."""
        line, end_line = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        start, end = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if line is None or end_line is None or start is None or end is None:
            return ast.unparse(node)
        if line == end_line:
            return self._bytes(line)[start:end].decode("utf-8", errors="replace")
        parts = [self._bytes(line)[start:].decode("utf-8", errors="replace")]
        parts += [self.lines[number - 1] for number in range(line + 1, end_line)]
        parts.append(self._bytes(end_line)[:end].decode("utf-8", errors="replace"))
        return "".join(parts).replace("\r\n", "\n").replace("\r", "\n")

    def column(self, line: int, byte_offset: int) -> int:
        """1-based character column of ``ast``'s UTF-8 byte offset on ``line``."""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return len(text.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore")) + 1

    def span(self, node: ast.AST) -> tuple[int, int, int, int]:
        line, end_line = node.lineno, node.end_lineno or node.lineno  # type: ignore[attr-defined]
        return (line, self.column(line, node.col_offset),  # type: ignore[attr-defined]
                end_line, self.column(end_line, node.end_col_offset or 0))  # type: ignore[attr-defined]

    def replace(self, node: ast.AST, text: str) -> Edit:
        """An edit writing ``text`` over the node, its line breaks in the file's own style."""
        return Edit(*self.span(node), text.replace("\n", self.newline) if self.newline != "\n" else text)

    def indent(self, statement: ast.stmt) -> str:
        line = self.lines[statement.lineno - 1]
        return line[: len(line) - len(line.lstrip())]

    def insert_before(self, statement: ast.stmt, code: str) -> Edit:
        """A line of ``code`` inserted above ``statement``, at its indentation."""
        return Edit(statement.lineno, 1, statement.lineno, 1, self.indent(statement) + code + self.newline)

    def insert_after(self, statement: ast.stmt, code: str) -> Edit:
        """A line of ``code`` inserted below ``statement`` (and its whole body), at its indentation."""
        end = (statement.end_lineno or statement.lineno) + 1
        if end > len(self.lines):  # the last line of the file: add a line after it
            last = self.lines[-1]
            ending = "" if last.endswith(("\n", "\r")) else self.newline
            column = len(last.rstrip("\r\n")) + 1
            return Edit(len(self.lines), column, len(self.lines), column,
                        ending + self.indent(statement) + code + (self.newline if not ending else ""))
        return Edit(end, 1, end, 1, self.indent(statement) + code + self.newline)

    # -- structure ---------------------------------------------------------------------------------------------
    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(id(node))

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        current = self.parent(node)
        while current is not None:
            yield current
            current = self.parent(current)

    def statement(self, node: ast.AST) -> ast.stmt | None:
        if isinstance(node, ast.stmt):
            return node
        return next((item for item in self.ancestors(node) if isinstance(item, ast.stmt)), None)

    def loop(self, node: ast.AST) -> ast.For | ast.AsyncFor | ast.While | None:
        """The innermost loop whose body (not its header) holds ``node``, within the same function."""
        child = node
        for item in self.ancestors(node):
            if isinstance(item, _FUNCTIONS):
                return None
            if isinstance(item, _LOOPS) and child in item.body:
                return item
            child = item
        return None

    def function(self, node: ast.AST) -> ast.AST:
        """The innermost function holding ``node``, else the module."""
        return next((item for item in self.ancestors(node) if isinstance(item, _FUNCTIONS)), self.tree)

    @cached_property
    def _scopes(self) -> dict[int, _Scope]:
        return {}

    def _scope(self, function: ast.AST) -> _Scope:
        """What a function binds, walked once: a module with thousands of findings in one function asks per
        finding (a walk each was quadratic)."""
        scope = self._scopes.get(id(function))
        if scope is None:
            scope = self._scopes[id(function)] = _Scope.of(function)
        return scope

    def names_in_function(self, node: ast.AST) -> set[str]:
        return self._scope(self.function(node)).names

    def fresh_name(self, node: ast.AST, wanted: str) -> str:
        """``wanted``, or ``wanted_2``… when the function already uses that name."""
        taken = self.names_in_function(node)
        name, number = wanted, 2
        while name in taken:
            name, number = f"{wanted}_{number}", number + 1
        return name

    def assignments_before(self, name: str, node: ast.AST) -> list[ast.Assign]:
        """``name = ...`` statements of ``node``'s function that end before ``node`` starts, in order."""
        return [item for item in self._scope(self.function(node)).assignments.get(name, ())
                if (item.end_lineno or 0) < node.lineno]  # type: ignore[attr-defined]

    def binding(self, name: str, node: ast.AST) -> ast.expr | None:
        """The value ``name`` was last assigned before ``node`` in its function, when that is the only
        binding of ``name`` there (no other assignment, loop target, augmented assignment or parameter)."""
        scope = self._scope(self.function(node))
        assignments = self.assignments_before(name, node)
        if len(assignments) != 1 or scope.stores.get(name, 0) != 1 or name in scope.parameters:
            return None
        return assignments[0].value


@dataclass(frozen=True)
class _Scope:
    """The names a function (or the module) uses, its single-name assignments in line order, how often each name
    is stored or deleted, and its parameters."""

    names: set[str]
    assignments: dict[str, list[ast.Assign]]
    stores: dict[str, int]
    parameters: frozenset[str]

    @classmethod
    def of(cls, function: ast.AST) -> _Scope:
        names: set[str] = set()
        assignments: dict[str, list[ast.Assign]] = {}
        stores: dict[str, int] = {}
        for item in ast.walk(function):
            if isinstance(item, ast.Name):
                names.add(item.id)
                if isinstance(item.ctx, ast.Store | ast.Del):
                    stores[item.id] = stores.get(item.id, 0) + 1
            elif (isinstance(item, ast.Assign) and len(item.targets) == 1
                  and isinstance(item.targets[0], ast.Name)):
                assignments.setdefault(item.targets[0].id, []).append(item)
        for found in assignments.values():
            found.sort(key=lambda item: item.lineno)
        parameters = frozenset(argument.arg for argument in ast.walk(function.args)
                               if isinstance(argument, ast.arg)) if isinstance(function, _FUNCTIONS) else frozenset()
        return cls(names, assignments, stores, parameters)


def written_in(region: ast.AST, root: str) -> bool:
    """Whether ``region`` may change what ``root`` (a name, or ``self.x``) holds: assigns it, assigns into it
    (``root[i] = ...``, ``root.x = ...``) or calls an in-place method on it (``root.add_(...)``)."""
    for item in ast.walk(region):
        if isinstance(item, ast.Name | ast.Attribute | ast.Subscript) and isinstance(item.ctx, ast.Store | ast.Del):
            target = item
            while isinstance(target, ast.Attribute | ast.Subscript):
                if dotted(target) == root:
                    return True
                target = target.value
            if dotted(target) == root:
                return True
        if isinstance(item, ast.Call) and isinstance(item.func, ast.Attribute) and item.func.attr.endswith("_") \
                and not item.func.attr.startswith("_") and dotted(item.func.value) == root:
            return True
    return False


def dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a name or an attribute chain on a name, else ``None``."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def same(a: ast.AST, b: ast.AST) -> bool:
    """Whether two expressions are the same code (ignoring positions and context)."""
    return ast.dump(a) == ast.dump(b)


def is_pure(node: ast.AST) -> bool:
    """A name, an attribute chain, a constant, or arithmetic and subscripts of those (no call): evaluating it
    twice or not at all changes nothing."""
    return all(not isinstance(item, ast.Call | ast.NamedExpr | ast.Await | ast.Yield | ast.YieldFrom
                              | ast.Lambda | ast.ListComp | ast.GeneratorExp | ast.SetComp | ast.DictComp)
               for item in ast.walk(node))
