"""What one module offers and uses, read in one walk: its functions and classes, the calls it makes by name,
and every name it refers to.

The summary is small (no syntax tree is kept) and is all the program index needs to say who calls a
function: a call written ``f(...)``, ``mod.f(...)``, ``Class(...)``, ``Class.method(...)`` or
``self.method(...)`` is recorded as the chain of names it is written with, resolved once every module is
summarized. The references count every other way a name is used: a callback handed on, a string that spells it
(``getattr(obj, "name")``, ``collective_rpc("execute_model")``), an unresolvable ``obj.method(...)``; a name
built at run time (``getattr(obj, f"get_{kind}")``) is kept as a pattern. A function whose every reference is a
call the index resolved has no other caller in these files.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple

from synchunt.lint.program.names import Imported, modules_named, record_import
from synchunt.lint.provenance.syntax import dotted_name

_TYPE_CHECKS = frozenset({"isinstance", "issubclass"})
# decorators that wrap a function and register it nowhere: it is still called by its name
_PLAIN_DECORATORS = frozenset({"staticmethod", "classmethod", "lru_cache", "cache", "wraps", "no_grad",
                               "inference_mode", "enable_grad", "contextmanager", "asynccontextmanager", "override",
                               "final"})
_LOOKUPS = frozenset({"getattr", "hasattr"})  # a name looked up at run time
_MIN_LITERAL = 3  # letters a name built at run time must spell out to be followed


class FunctionSummary(NamedTuple):
    """A module-level function or a method of a module-level class (``qualname`` ``f`` or ``C.m``)."""

    qualname: str
    decorated: bool = False  # by anything but staticmethod/classmethod (a registry may call it)


class ClassSummary(NamedTuple):
    bases: tuple[tuple[str, ...], ...]  # each base as the chain of names it is written with; () when not one
    methods: frozenset[str]


class CallSummary(NamedTuple):
    """(The fields of each of a module's ``calls``.) A call by name: ``chain`` as written (``("self", "m")``,
    ``("mod", "f")``), and the class whose method it is in (what ``self``/``cls`` are)."""

    chain: tuple[str, ...]
    klass: str | None
    caller: str | None = None  # the module-level function or method it is in (None: module or class level)


@dataclass
class ModuleSummary:
    name: str
    path: str
    is_package: bool
    aliases: tuple[str, ...] = ()  # longer names it may be imported by (namespace packages above it)
    imports: dict[str, Imported] = field(default_factory=dict)
    functions: dict[str, FunctionSummary] = field(default_factory=dict)
    classes: dict[str, ClassSummary] = field(default_factory=dict)
    # each a plain tuple in CallSummary's order: the collector stops tracking tuples of plain values, and a
    # package has a few hundred thousand calls kept until the index is built
    calls: list[tuple[tuple[str, ...], str | None, str | None]] = field(default_factory=list)
    references: Counter[str] = field(default_factory=Counter)
    # names used as the object of an attribute (`f.cache`, `Class.method`): that reads the object, it does not
    # call it (a class's `__init__` and an import's use count them; a function's closure does not)
    owners: Counter[str] = field(default_factory=Counter)
    # names used in type positions, counted here only (annotations, `isinstance` types, bases): they call
    # nothing, but an import used so is the module's own use, not a re-export (a quoted annotation counts only
    # when it is a bare name, `"Coordinator"`, as a string that spells a name does)
    typed_uses: Counter[str] = field(default_factory=Counter)
    # names looked up at run time: `getattr(self, f"forward_{mode}")` → the pattern "forward_\\w*"
    dynamic_names: set[str] = field(default_factory=set)
    loads: set[str] = field(default_factory=set)  # every module its imports may load (some outside the program)


def summarize(tree: ast.Module, name: str, path: str, is_package: bool, aliases: tuple[str, ...] = ()) -> ModuleSummary:
    summary = ModuleSummary(name, path, is_package, aliases)
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            summary.functions[statement.name] = _function(statement, statement.name)
        elif isinstance(statement, ast.ClassDef):
            methods = [item for item in statement.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]
            for method in methods:
                qualname = f"{statement.name}.{method.name}"
                summary.functions[qualname] = _function(method, qualname)
            summary.classes[statement.name] = ClassSummary(
                tuple(name_chain(base) or () for base in statement.bases),
                frozenset(method.name for method in methods))
    _Uses(summary).walk(tree)
    return summary


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str) -> FunctionSummary:
    names = [name_chain(item.func if isinstance(item, ast.Call) else item) for item in node.decorator_list]
    return FunctionSummary(qualname, decorated=any(not chain or chain[-1] not in _PLAIN_DECORATORS for chain in names))


def name_chain(node: ast.expr) -> tuple[str, ...] | None:
    """``a.b.c`` → ``("a", "b", "c")``; None for anything but names and attributes of names."""
    dotted = dotted_name(node)
    return tuple(dotted.split(".")) if dotted is not None else None


class _Uses:
    """The calls and references of a module: one explicit-stack walk (deep expressions stay off the C stack).
    Each node is visited with the class whose method it is in (what ``self`` is), the module-level function
    or method it runs in (``None``: at import), and whether it is a type position (annotations, ``isinstance``
    types, bases: they name a class without using it)."""

    def __init__(self, summary: ModuleSummary) -> None:
        self.summary = summary

    def walk(self, tree: ast.Module) -> None:
        stack: list[_Item] = [(tree, None, None, False)]
        references = self.summary.references
        owners = self.summary.owners
        typed_uses = self.summary.typed_uses
        while stack:
            item = stack.pop()
            node, klass, caller, typed = item
            kind = type(node)
            if kind is ast.Name:
                if typed:
                    typed_uses[node.id] += 1  # type: ignore[attr-defined]
                elif type(node.ctx) is ast.Load:  # type: ignore[attr-defined]
                    references[node.id] += 1  # type: ignore[attr-defined]
                continue
            if kind is ast.Attribute and not typed:
                if type(node.ctx) is ast.Load:  # type: ignore[attr-defined]
                    references[node.attr] += 1  # type: ignore[attr-defined]
                if type(node.value) is ast.Name:  # type: ignore[attr-defined]
                    if node.attr.startswith("__"):  # type: ignore[attr-defined]
                        references[node.value.id] += 1  # type: ignore[attr-defined]  (`f.__get__(obj)`: handed on)
                    else:
                        owners[node.value.id] += 1  # type: ignore[attr-defined]
                    continue
            elif kind is ast.Constant:
                value = node.value  # type: ignore[attr-defined]
                if type(value) is str and value.isidentifier():
                    # a name that may be looked up: `getattr(obj, "name")`, `collective_rpc("execute_model")`
                    references[value] += 1
                continue
            elif kind is ast.Call:
                self._call(node, klass, caller, stack)  # type: ignore[arg-type]
                continue
            elif kind is ast.ClassDef:
                self._class(node, caller, stack)  # type: ignore[arg-type]
                continue
            elif kind in (ast.FunctionDef, ast.AsyncFunctionDef):
                self._function(node, klass, caller, stack)  # type: ignore[arg-type]
                continue
            elif kind is ast.AnnAssign:
                stack.append((node.annotation, klass, caller, True))  # type: ignore[attr-defined]
                for child in (node.target, node.value):  # type: ignore[attr-defined]
                    if child is not None:
                        stack.append((child, klass, caller, typed))
                continue
            elif kind is ast.Assign and _declares_exports(node):  # type: ignore[arg-type]
                continue  # `__all__ = [...]` declares what is public, it uses nothing
            elif kind is ast.Expr and isinstance(node.value, ast.Constant):  # type: ignore[attr-defined]
                continue  # a docstring
            elif kind is ast.Import or kind is ast.ImportFrom:
                record_import(self.summary.imports, node, self.summary.name,  # type: ignore[arg-type]
                              self.summary.is_package)
                self.summary.loads.update(modules_named(node, self.summary.name,  # type: ignore[arg-type]
                                                        self.summary.is_package))
                continue
            for child in ast.iter_child_nodes(node):
                stack.append((child, klass, caller, typed))

    def _call(self, node: ast.Call, klass: str | None, caller: str | None, stack: list[_Item]) -> None:
        chain = name_chain(node.func)
        if chain is not None:
            self.summary.calls.append((chain, klass, caller))
            looked_up = node.args[1] if chain[-1] in _LOOKUPS and len(node.args) > 1 else None
            if isinstance(looked_up, ast.JoinedStr):
                self._dynamic(looked_up)
            # `getattr(obj, name)` of a variable: read as an attribute lookup (most are fields and options),
            # not as a call of every method there is
        stack.append((node.func, klass, caller, False))
        typed_from = 1 if chain is not None and chain[-1] in _TYPE_CHECKS else None
        for index, argument in enumerate(node.args):
            stack.append((argument, klass, caller, typed_from is not None and index >= typed_from))
        for keyword in node.keywords:
            stack.append((keyword.value, klass, caller, False))

    def _class(self, node: ast.ClassDef, caller: str | None, stack: list[_Item]) -> None:
        for base in node.bases:  # a base names a class without calling anything of it (see the index)
            stack.append((base, None, caller, True))
        for keyword in node.keywords:
            stack.append((keyword.value, None, caller, False))
        for item in (*node.decorator_list, *node.body):
            stack.append((item, node.name, caller, False))

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, klass: str | None, caller: str | None,
                  stack: list[_Item]) -> None:
        arguments = node.args
        for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg,
                         arguments.kwarg):
            if argument is not None and argument.annotation is not None:
                stack.append((argument.annotation, klass, caller, True))
        for default in (*arguments.defaults, *arguments.kw_defaults, *node.decorator_list):  # run at definition
            if default is not None:
                stack.append((default, klass, caller, False))
        if node.returns is not None:
            stack.append((node.returns, klass, caller, True))
        # the body runs when the function does; `self` inside a nested function still names the method's object
        inner = caller if caller is not None else f"{klass}.{node.name}" if klass else node.name
        for item in node.body:
            stack.append((item, klass, inner, False))

    def _dynamic(self, node: ast.JoinedStr) -> None:
        """``getattr(model, f"get_{modality}_feature")``: any name of that shape may be meant (a pattern with
        ``\\w*`` for each field). A name made of fields alone (``f"{prefix}_{name}"``) says too little to be
        followed: it is left out (a limit of the index, see docs/lint.md)."""
        literal = "".join(value.value for value in node.values
                          if isinstance(value, ast.Constant) and isinstance(value.value, str))
        if len(literal.replace("_", "")) < _MIN_LITERAL or not literal.replace("_", "a").isalnum():
            return
        self.summary.dynamic_names.add("".join(
            re.escape(value.value) if isinstance(value, ast.Constant) and isinstance(value.value, str) else r"\w*"
            for value in node.values))


_Item = tuple[ast.AST, "str | None", "str | None", bool]  # node, class, caller, type position


def _declares_exports(node: ast.Assign) -> bool:
    return any(isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets)
