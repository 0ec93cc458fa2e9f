"""Name bindings per function (and module), and `self.<attr>` bindings per class, for the provenance guess."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from synchunt.lint.walk import FastVisitor
from synchunt.lint.where import Where, annotation_where, name_where

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


@dataclass(frozen=True)
class Binding:
    """``name = value`` at ``line``; ``element`` when the name is one element of ``value`` (a loop target,
    tuple unpacking); ``fixed`` when the provenance is known without a value (parameters, imports)."""

    line: int
    value: ast.expr | None = None
    element: bool = False
    fixed: Where | None = None
    module: bool = False  # an imported name: its functions may return anything


ClassAttributes = dict[str, list[tuple[Binding, "Scope"]]]


@dataclass(eq=False)
class Scope:
    qualname: str
    parent: Scope | None = None
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    class_attributes: ClassAttributes | None = None  # set for methods whose first parameter is `self`

    def bind(self, name: str, binding: Binding) -> None:
        self.bindings.setdefault(name, []).append(binding)

    def lookup(self, name: str, line: int) -> tuple[Binding, Scope] | None:
        """The binding of ``name`` nearest before ``line``, here or in an enclosing function or the module."""
        scope: Scope | None = self
        while scope is not None:
            candidates = scope.bindings.get(name)
            if candidates:
                before = [binding for binding in candidates if binding.line < line]
                return (before[-1] if before else candidates[0]), scope
            scope = scope.parent
        return None

    def self_attributes(self) -> ClassAttributes:
        return self.class_attributes or {}


def build_scopes(tree: ast.Module) -> dict[int, Scope]:
    """Scopes keyed by ``id()`` of their function node; the module's scope under ``id(tree)``."""
    module = Scope("<module>")
    scopes: dict[int, Scope] = {id(tree): module}
    _ScopeBuilder(module, scopes, prefix="").visit_body(tree.body)
    return scopes


def bind_target(scope: Scope, target: ast.expr, value: ast.expr | None, line: int, element: bool = False) -> None:
    """Bind the names of an assignment target (``a``, ``a, *b``, ``self.attr`` in a method)."""
    if isinstance(target, ast.Name):
        scope.bind(target.id, Binding(line, value, element=element))
    elif isinstance(target, (ast.Tuple, ast.List)):
        for item in target.elts:
            bind_target(scope, item, value, line, element=True)
    elif isinstance(target, ast.Starred):
        bind_target(scope, target.value, value, line, element=element)
    elif (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"
          and scope.class_attributes is not None and value is not None):
        scope.class_attributes.setdefault(target.attr, []).append((Binding(line, value, element), scope))


def function_scope(node: FunctionNode, qualname: str, parent: Scope | None,
                   class_attributes: ClassAttributes | None = None) -> Scope:
    """A function's scope with its parameters bound (from annotations and names)."""
    scope = Scope(qualname, parent=parent)
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    if class_attributes is not None and positional and positional[0].arg == "self":
        scope.class_attributes = class_attributes
    for argument in [*positional, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]:
        if argument is not None:
            fixed = annotation_where(argument.annotation) or name_where(argument.arg)
            scope.bind(argument.arg, Binding(node.lineno, fixed=fixed))
    return scope


class _ScopeBuilder(FastVisitor):
    """Collects the bindings statements make in one scope; nested functions and classes get builders of
    their own. Bindings inside expressions (comprehensions, ``:=``, lambdas) are added by the linter's
    walk when it reaches them, so this pass reads statements only.

    ``methods_of`` is set when the body being read is a class body: methods defined in it that take
    ``self`` record their ``self.<attr> = value`` assignments there.
    """

    def __init__(self, scope: Scope, scopes: dict[int, Scope], prefix: str,
                 methods_of: ClassAttributes | None = None) -> None:
        super().__init__()
        self.scope = scope
        self.scopes = scopes
        self.prefix = prefix
        self.methods_of = methods_of

    def visit_body(self, body: list[ast.stmt]) -> None:
        for statement in body:
            self.visit(statement)

    def generic_visit(self, node: ast.AST) -> None:
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            nested = getattr(node, name, None)
            if type(nested) is list:
                for item in nested:
                    self.visit(item)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.scope.bind(node.name, Binding(node.lineno, fixed=Where.VALUE))
        qualname = f"{self.prefix}{node.name}"
        # Class bodies are not enclosing scopes for the functions defined in them.
        parent = self.scope.parent if self.methods_of is not None else self.scope
        scope = function_scope(node, qualname, parent, self.methods_of)
        self.scopes[id(node)] = scope
        _ScopeBuilder(scope, self.scopes, qualname + ".").visit_body(node.body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.scope.bind(node.name, Binding(node.lineno, fixed=Where.VALUE))
        class_body = Scope("<class>", parent=self.scope)
        _ScopeBuilder(class_body, self.scopes, f"{self.prefix}{node.name}.", methods_of={}).visit_body(node.body)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            bind_target(self.scope, target, node.value, node.lineno)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            bind_target(self.scope, node.target, node.value, node.lineno)
        elif isinstance(node.target, ast.Name):
            fixed = annotation_where(node.annotation) or name_where(node.target.id)
            self.scope.bind(node.target.id, Binding(node.lineno, fixed=fixed))

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        bind_target(self.scope, node.target, node.iter, node.lineno, element=True)
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                for name in ast.walk(item.optional_vars):
                    if isinstance(name, ast.Name):
                        self.scope.bind(name.id, Binding(node.lineno, fixed=name_where(name.id)))
        self.generic_visit(node)

    visit_AsyncWith = visit_With

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.scope.bind(node.name, Binding(node.lineno, fixed=Where.VALUE))
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        for alias in node.names:
            self.scope.bind(alias.asname or alias.name.split(".")[0],
                            Binding(node.lineno, fixed=Where.VALUE, module=True))

    visit_ImportFrom = visit_Import
