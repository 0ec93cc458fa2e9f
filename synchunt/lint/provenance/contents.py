"""Following values into containers: what a loop target, an unpacked name or ``xs[i]`` holds.

A *path* says how to get from a value to the part in question: ``ITER`` takes one element (a loop, a
comprehension), an int takes that component (``a, b = pair``), ``None`` any element (``d[key]``). Literals
say what they hold, ``zip``/``enumerate``/``.items()`` route each component to its source, ``.tolist()``
and shapes hold plain values, a name holds what it was bound to plus what was written into it
(``xs.append(t)``, ``d[k] = t``), and a function of this module holds what it returns. A tensor holds
tensors all the way down. No evidence at all is ``None`` (an empty ``[]`` says nothing about what comes).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from synchunt.lint.provenance.syntax import self_attributes
from synchunt.lint.provenance.tables import HOST_CONTAINER_ATTRIBUTES, HOST_CONTAINER_METHODS, PASS_THROUGH_BUILTINS
from synchunt.lint.scopes import ITER, Binding, Content, Key, Scope, Step
from synchunt.lint.where import Where, annotation_part_where, join

if TYPE_CHECKING:
    from synchunt.lint.provenance import Classifier

Path = tuple[Step, ...]
_EMPTY_FACTORIES = frozenset({"list", "dict", "set", "tuple", "defaultdict", "OrderedDict", "deque", "Counter"})


def key_step(index: ast.expr) -> Step:
    """The step ``x[index]`` takes: a constant int picks a component, a constant string that key's entry,
    anything else any element."""
    if isinstance(index, ast.Constant) and isinstance(index.value, int) and not isinstance(index.value, bool):
        return index.value
    if isinstance(index, ast.Constant) and isinstance(index.value, str):
        return Key(index.value)
    return None


MAX_DEPTH = 4  # containers nested deeper than this are not followed (recursive code grows paths without end)


def follow(c: Classifier, node: ast.expr, path: Path, scope: Scope, line: int) -> Where:
    """Where the part of ``node`` that ``path`` reaches lives (``UNKNOWN`` without evidence)."""
    if not path:
        return c.where(node, scope, line)
    if len(path) > MAX_DEPTH:
        return Where.UNKNOWN
    found = c.guarded(("follow", id(node), path, line), lambda: _follow(c, node, path, scope, line))
    return Where.UNKNOWN if found is None else found


def _join(parts: list[Where | None]) -> Where | None:
    known = [part for part in parts if part is not None]
    return join(known) if known else None


def _follow(c: Classifier, node: ast.expr, path: Path, scope: Scope, line: int) -> Where | None:
    step, rest = path[0], path[1:]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return _sequence(c, node.elts, step, rest, scope, line)
    if isinstance(node, ast.Dict):
        if step == ITER:
            return Where.VALUE  # iterating a dict gives its keys
        if isinstance(step, Key):
            return _dict_entry(c, node, step, rest, scope, line)
        return _join([_part(c, value, rest, scope, line) for value in node.values if value is not None])
    if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
        return _part(c, node.elt, rest, scope, node.elt.lineno)
    if isinstance(node, ast.DictComp):
        return Where.VALUE if step == ITER else _part(c, node.value, rest, scope, node.value.lineno)
    if isinstance(node, (ast.Constant, ast.JoinedStr)):
        return Where.VALUE
    found = c.where(node, scope, line)
    if found.is_tensor:
        return found  # rows, elements and the outputs of tuple-returning ops are tensors too
    if isinstance(node, ast.Subscript):
        if isinstance(node.slice, ast.Slice):
            return _part(c, node.value, path, scope, line)
        return _part(c, node.value, (key_step(node.slice), *path), scope, line)
    if isinstance(node, ast.Name):
        return _name(c, node, path, scope, line)
    if isinstance(node, ast.Attribute):
        return _attribute(c, node, path, scope, line)
    if isinstance(node, ast.Call):
        return _call(c, node, step, rest, scope, line)
    if isinstance(node, ast.BinOp):
        sides = [node.left, node.right]
        if isinstance(node.op, ast.Mult):  # `[0] * n`: the elements are the sequence's
            sides = [side for side in sides if isinstance(side, (ast.List, ast.Tuple, ast.ListComp))] or sides
        return _join([_part(c, side, path, scope, line) for side in sides])
    if isinstance(node, ast.IfExp):
        return _join([_part(c, side, path, scope, line) for side in (node.body, node.orelse)])
    if isinstance(node, ast.BoolOp):
        return _join([_part(c, side, path, scope, line) for side in node.values])
    if isinstance(node, (ast.NamedExpr, ast.Await, ast.Starred)):
        return _part(c, node.value, path, scope, line)
    return Where.UNKNOWN


def _dict_entry(c: Classifier, node: ast.Dict, key: Key, rest: Path, scope: Scope, line: int) -> Where | None:
    """The entry ``key`` of a dict literal: the values under that constant key, and those whose key could be
    it (a computed key, a ``**spread``: followed to the same key); an entry under another constant key is
    another value (``{"mask": t, "done": False}["done"]`` is a bool)."""
    parts: list[Where | None] = []
    for name, value in zip(node.keys, node.values, strict=True):
        if name is None:
            parts.append(_part(c, value, (key, *rest), scope, line))
        elif not (isinstance(name, ast.Constant) and isinstance(name.value, str)) or name.value == key.name:
            parts.append(_part(c, value, rest, scope, line))
    return _join(parts)


def _part(c: Classifier, node: ast.expr, path: Path, scope: Scope, line: int) -> Where | None:
    if not path:
        return c.where(node, scope, line)
    if len(path) > MAX_DEPTH:
        return Where.UNKNOWN
    return c.guarded(("follow", id(node), path, line), lambda: _follow(c, node, path, scope, line))


def _builds_record(func: ast.Name, scope: Scope, line: int) -> bool:
    """``func`` names a class of this module, or the builtin ``dict``."""
    found = scope.lookup(func.id, line)
    if found is None:
        return func.id == "dict"
    return found[0].kind == "class"


def _sequence(c: Classifier, elements: list[ast.expr], step: Step, rest: Path, scope: Scope,
              line: int) -> Where | None:
    starred = any(isinstance(element, ast.Starred) for element in elements)
    if isinstance(step, int) and not starred and -len(elements) <= step < len(elements):
        return _part(c, elements[step], rest, scope, line)
    return _join([_part(c, element.value, (ITER, *rest), scope, line) if isinstance(element, ast.Starred)
                  else _part(c, element, rest, scope, line) for element in elements])


def _name(c: Classifier, node: ast.Name, path: Path, scope: Scope, line: int) -> Where | None:
    parts: list[Where | None] = []
    found = scope.lookup(node.id, line)
    if found is not None:
        binding, owner = found
        if binding.fixed is not None:
            parts.append(_fixed_part(binding, path))
        elif binding.value is not None:
            parts.append(_part(c, binding.value, (*binding.path, *path), owner, binding.line))
        elif binding.parameter and binding.function is not None:
            from synchunt.lint.provenance.calls import parameter_where  # calls imports this module

            passed = parameter_where(c, binding.function, binding.parameter, path)
            parts.append(binding.hint if passed is Where.UNKNOWN and binding.hint is not None else passed)
    written = scope.contents_of(node.id)
    if written is not None:
        parts.extend(_written(c, [(content, written[1]) for content in written[0]], path))
    return _join(parts)


def _attribute(c: Classifier, node: ast.Attribute, path: Path, scope: Scope, line: int) -> Where | None:
    if node.attr in HOST_CONTAINER_ATTRIBUTES:
        return Where.VALUE
    attributes = self_attributes(node, scope)
    parts: list[Where | None] = []
    for binding, owner in attributes or ():
        if binding.fixed is not None:
            parts.append(_fixed_part(binding, path))
        elif binding.value is not None:
            parts.append(_part(c, binding.value, (*binding.path, *path), owner, binding.line))
    if scope.klass is not None and isinstance(node.value, ast.Name) and node.value.id == "self":
        parts.extend(_written(c, scope.klass.contents.get(node.attr, []), path))
    return _join(parts) if parts else Where.UNKNOWN


def _fixed_part(binding: Binding, path: Path) -> Where | None:
    """A part of a value known without its source: from the annotation, else a tensor's rows are tensors."""
    declared = annotation_part_where(binding.annotation, path)
    if declared is not None:
        return declared
    assert binding.fixed is not None
    return binding.fixed if binding.fixed.is_tensor else Where.UNKNOWN


def _written(c: Classifier, items: list[tuple[Content, Scope]], path: Path) -> list[Where | None]:
    """What writes into a container say about the part ``path`` reaches (writes deeper than it: nothing)."""
    parts: list[Where | None] = []
    for content, owner in items:
        if content.depth > len(path):
            continue
        if content.key is not None and isinstance(path[0], Key) and path[0].name != content.key:
            continue  # `d["done"] = False` says nothing about `d["mask"]`
        remaining = path[content.depth:]
        if content.spread:
            remaining = (ITER, *remaining)
        parts.append(_part(c, content.value, remaining, owner, content.line))
    return parts


def _call(c: Classifier, node: ast.Call, step: Step, rest: Path, scope: Scope, line: int) -> Where | None:
    from synchunt.lint.provenance import passing  # imports this module

    path = (step, *rest)
    func = node.func
    function = passing.called_function(func, scope, line)
    if function is not None:
        return passing.returns_at(c, function[0], node, scope, line, function[1], path)
    if isinstance(func, ast.Attribute):
        method, receiver = func.attr, func.value
        if method in HOST_CONTAINER_METHODS or c.numpy_root(func):
            return Where.VALUE
        if method == "items" and step == ITER:
            if rest and rest[0] == 0:
                return Where.VALUE  # the keys
            return _part(c, receiver, (None, *rest[1:]), scope, line)
        if method == "values" and step == ITER:
            return _part(c, receiver, (None, *rest), scope, line)
        if method == "copy":
            return _part(c, receiver, path, scope, line)
        return Where.UNKNOWN
    if not isinstance(func, ast.Name):
        return Where.UNKNOWN
    name, arguments = func.id, node.args
    if isinstance(step, Key) and _builds_record(func, scope, line):
        # `Inputs(num_patches=n)["num_patches"]`, `dict(lens=l)["lens"]`: a record built here holds under
        # each field what its keyword passed (a TypedDict or schema class of the module, or `dict`)
        passed = next((item.value for item in node.keywords if item.arg == step.name), None)
        spread = [item.value for item in node.keywords if item.arg is None]
        parts = [_part(c, passed, rest, scope, line) if passed is not None else None]
        parts.extend(_part(c, value, path, scope, line) for value in spread)
        return _join(parts)
    if name in _EMPTY_FACTORIES and not arguments:
        return None  # `defaultdict(list)`, `[]`-like: what comes in is what was written
    if name == "range":
        return Where.VALUE
    if name == "zip" and step == ITER:
        if rest and isinstance(rest[0], int) and rest[0] < len(arguments):
            return _part(c, arguments[rest[0]], (ITER, *rest[1:]), scope, line)
        return _join([_part(c, argument, (ITER, *rest[1:]), scope, line) for argument in arguments])
    if name == "enumerate" and step == ITER and arguments:
        if rest and rest[0] == 0:
            return Where.VALUE
        return _part(c, arguments[0], (ITER, *rest[1:]), scope, line)
    if name in PASS_THROUGH_BUILTINS and arguments:
        return _part(c, arguments[-1] if name == "filter" else arguments[0], path, scope, line)
    return Where.UNKNOWN

