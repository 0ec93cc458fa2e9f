"""The binding model of the provenance guess: what each name, ``self`` attribute and container was given.

A :class:`Binding` says "``name`` got ``value`` at ``line``", optionally through a *path*: ``for a, b in x``
binds ``a`` to component 0 of one element of ``x`` (path ``(ITER, 0)``). A :class:`Content` records a write
*into* a container (``xs.append(v)``, ``d[k] = v``, ``d[k].append(v)``) so that reading an element back
(``xs[i]``, ``for v in xs``) knows what was put there. Methods taking ``self`` share one :class:`ClassInfo`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Literal

from synchunt.lint.where import ITER as ITER  # re-exported: the path step
from synchunt.lint.where import Where, annotation_where, name_where

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


@dataclass(frozen=True)
class Key:
    """The path step ``d["name"]``: the entry of a string key. A dict literal or a keyed write that names
    another key says nothing about this one (``{"mask": t, "done": False}["done"]`` is a Python bool, not the
    tensor beside it); an entry whose key is not a constant could be any, and is read for every key."""

    name: str


Step = int | None | Literal["iter"] | Key  # "iter": one element of an iterable; an int: that component; None: any


@dataclass(frozen=True)
class Binding:
    """``name = value`` at ``line`` through ``path``; ``fixed`` when the provenance is known without a value
    (parameters, imports), ``annotation`` for what a fixed container holds (``List[int]``: values).
    ``kind`` is ``"module"``, ``"function"`` or ``"class"`` for imports and definitions; ``until`` bounds a
    binding that holds only inside a block (``if isinstance(x, torch.Tensor):``)."""

    line: int
    value: ast.expr | None = None
    path: tuple[Step, ...] = ()
    fixed: Where | None = None
    annotation: ast.expr | None = None
    kind: str = ""
    function: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    until: int | None = None
    parameter: str = ""  # for a parameter that says nothing itself: its name (its callers may say more)
    hint: Where | None = None  # what the parameter's annotation says when its callers say nothing
    klass: ClassInfo | None = None  # for a class of the module: its methods
    at_least: Where | None = None  # what the value is when it says less (`isinstance(x, Tensor)`: a tensor)
    default_device: ast.expr | None = None  # bound under `with torch.device(d):`: host factories build on `d`

    @property
    def module(self) -> bool:
        return self.kind == "module"

    @property
    def defined(self) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The function this name is a ``def`` of (a parameter's ``function`` is the one it belongs to: calling
        the parameter, ``run(config)``, does not call that)."""
        return self.function if self.kind == "function" else None


@dataclass(frozen=True)
class Content:
    """``value`` was put ``depth`` levels inside a container at ``line``; ``spread``: its elements were
    (``xs.extend(ys)``)."""

    line: int
    value: ast.expr
    depth: int = 1
    spread: bool = False
    key: str | None = None  # the string key written at the container's first level (`d["k"] = v`), if constant


@dataclass(eq=False)
class ClassInfo:
    """What the methods of one class do to ``self``: attributes assigned, containers filled, methods."""

    attributes: dict[str, list[tuple[Binding, Scope]]] = field(default_factory=dict)
    contents: dict[str, list[tuple[Content, Scope]]] = field(default_factory=dict)
    methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)


@dataclass(eq=False)
class Scope:
    qualname: str
    parent: Scope | None = None
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    contents: dict[str, list[Content]] = field(default_factory=dict)
    klass: ClassInfo | None = None  # set for methods whose first parameter is `self`
    node: FunctionNode | None = None

    def bind(self, name: str, binding: Binding) -> None:
        self.bindings.setdefault(name, []).append(binding)

    def lookup(self, name: str, line: int) -> tuple[Binding, Scope] | None:
        """The binding of ``name`` nearest before ``line``, here or in an enclosing function or the module."""
        scope: Scope | None = self
        while scope is not None:
            candidates = [binding for binding in scope.bindings.get(name, ())
                          if binding.until is None or binding.line <= line <= binding.until]
            if candidates:
                before = [binding for binding in candidates if binding.line < line]
                return (before[-1] if before else candidates[0]), scope
            scope = scope.parent
        return None

    def contents_of(self, name: str) -> tuple[list[Content], Scope] | None:
        """The writes into container ``name``, in the scope that binds it."""
        scope: Scope | None = self
        while scope is not None:
            if name in scope.bindings or name in scope.contents:
                return scope.contents.get(name, []), scope
            scope = scope.parent
        return None


def subscript_root(target: ast.expr) -> tuple[ast.expr, int] | None:
    """``d[a][b]`` → ``(d, 2)``; slices do not count (``x[1:] = v`` writes elements of ``x`` itself)."""
    depth = 0
    while isinstance(target, ast.Subscript):
        if not isinstance(target.slice, ast.Slice):
            depth += 1
        target = target.value
    return target, depth


def root_key(target: ast.expr) -> str | None:
    """The constant string key of the subscript applied to the root container: ``d["k"][i]`` → ``"k"``."""
    key = None
    while isinstance(target, ast.Subscript):
        if not isinstance(target.slice, ast.Slice):
            index = target.slice
            key = index.value if isinstance(index, ast.Constant) and isinstance(index.value, str) else None
        target = target.value
    return key


def add_content(scope: Scope, container: ast.expr, content: Content) -> None:
    """Record a write into ``name``/``self.attr`` (``content.depth`` counts from the root container)."""
    if isinstance(container, ast.Name):
        scope.contents.setdefault(container.id, []).append(content)
    elif (isinstance(container, ast.Attribute) and isinstance(container.value, ast.Name)
          and container.value.id == "self" and scope.klass is not None):
        scope.klass.contents.setdefault(container.attr, []).append((content, scope))


def bind_target(scope: Scope, target: ast.expr, value: ast.expr | None, line: int,
                path: tuple[Step, ...] = ()) -> None:
    """Bind the names of an assignment target (``a``, ``a, *b``, ``self.attr``, ``d[k]`` in a method)."""
    if isinstance(target, ast.Name):
        scope.bind(target.id, Binding(line, value, path))
    elif isinstance(target, (ast.Tuple, ast.List)):
        starred = False
        for index, item in enumerate(target.elts):
            starred = starred or isinstance(item, ast.Starred)
            bind_target(scope, item, value, line, (*path, None if starred else index))
    elif isinstance(target, ast.Starred):
        bind_target(scope, target.value, value, line, path)
    elif isinstance(target, ast.Subscript) and value is not None and not path:
        root, depth = subscript_root(target)
        if depth:
            add_content(scope, root, Content(line, value, depth, key=root_key(target)))
    elif (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"
          and scope.klass is not None and value is not None):
        scope.klass.attributes.setdefault(target.attr, []).append((Binding(line, value, path), scope))


def parameter_binding(argument: ast.arg, line: int, function: FunctionNode | None = None) -> Binding:
    """A parameter's provenance from its annotation, else from its name, else (for a ``def``) from what
    the module's calls pass it."""
    fixed = annotation_where(argument.annotation) or name_where(argument.arg)
    is_def = isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
    if fixed is Where.UNKNOWN and is_def:
        # no annotation, or one that says nothing here (`video: VideoPixelInputs`, a schema class of the
        # package): what the module's calls pass says more
        return Binding(line, kind="parameter", function=function, parameter=argument.arg,
                       annotation=argument.annotation)
    if fixed is Where.TENSOR and is_def:  # `lengths: Tensor`: the module's callers may say which device
        return Binding(line, kind="parameter", function=function, parameter=argument.arg, hint=fixed,
                       annotation=argument.annotation)
    return Binding(line, fixed=fixed, annotation=argument.annotation)


def function_scope(node: FunctionNode, qualname: str, parent: Scope | None,
                   klass: ClassInfo | None = None) -> Scope:
    """A function's scope with its parameters bound (from annotations and names)."""
    scope = Scope(qualname, parent=parent, node=node)
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    if klass is not None and positional and positional[0].arg == "self":
        scope.klass = klass
    for argument in [*positional, *arguments.kwonlyargs]:
        scope.bind(argument.arg, parameter_binding(argument, node.lineno, node))
    for argument in (arguments.vararg, arguments.kwarg):
        if argument is not None:  # `*args`, `**kwargs`: a tuple and a dict
            each = argument.annotation  # `*args: Tensor`: a tuple of tensors
            annotation = ast.Subscript(ast.Name("tuple"), ast.Tuple([each, ast.Constant(...)])) if each else None
            scope.bind(argument.arg, Binding(node.lineno, fixed=Where.VALUE, annotation=annotation))
    return scope
