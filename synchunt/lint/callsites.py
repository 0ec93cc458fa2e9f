"""Who calls each function of a module, and with what: the evidence for parameters that say nothing.

``def clip(grads, total_norm)`` tells nothing about ``total_norm``; ``self.clip(g, norm.sum())`` elsewhere in
the module does. One walk finds the calls to the module's functions (``f(...)``) and to its classes' methods
through ``self`` (``self.m(...)``); :func:`argument_of` maps a call's arguments to a parameter.
"""

from __future__ import annotations

import ast

from synchunt.lint.scopes import Scope
from synchunt.lint.walk import FastVisitor

FunctionDef = ast.FunctionDef | ast.AsyncFunctionDef
CallSite = tuple[ast.Call, Scope, bool]  # the call, the scope it is in, whether it passes `self` implicitly
NOT_PASSED = ast.Constant(value=None)  # an argument that cannot be matched (after `*args`, in `**kwargs`)


def index_calls(tree: ast.Module, scopes: dict[int, Scope]) -> dict[int, list[CallSite]]:
    """Call sites keyed by ``id()`` of the called function's node."""
    finder = _CallFinder(scopes, scopes[id(tree)])
    finder.visit(tree)
    return finder.sites


class _CallFinder(FastVisitor):
    def __init__(self, scopes: dict[int, Scope], module: Scope) -> None:
        super().__init__()
        self.scopes = scopes
        self.scope = module
        self.sites: dict[int, list[CallSite]] = {}

    def visit_FunctionDef(self, node: FunctionDef) -> None:
        outer = self.scope
        self.scope = self.scopes.get(id(node), outer)
        self.generic_visit(node)
        self.scope = outer

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        target: FunctionDef | None = None
        through_self = False
        if isinstance(func, ast.Name):
            found = self.scope.lookup(func.id, node.lineno)
            target = found[0].defined if found is not None else None
        elif (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"
              and self.scope.klass is not None):
            target = self.scope.klass.methods.get(func.attr)
            through_self = target is not None and not is_static(target)  # `self.check(w)` of a staticmethod
            if target is None:
                target = self._submodule_forward(func.attr, node.lineno)
                through_self = target is not None
        if target is not None:
            self.sites.setdefault(id(target), []).append((node, self.scope, through_self))
        self.generic_visit(node)


    def _submodule_forward(self, attribute: str, line: int) -> FunctionDef | None:
        """``self.projector(x)`` where every assignment of ``self.projector`` builds the same class of this
        module: that class's ``forward`` (what ``nn.Module.__call__`` runs), called with ``x``."""
        klass = self.scope.klass
        bindings = klass.attributes.get(attribute, []) if klass is not None else []
        built: set[int] = set()
        forward: FunctionDef | None = None
        for binding, owner in bindings:
            value = binding.value
            if binding.path or not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
                return None
            found = owner.lookup(value.func.id, binding.line)
            if found is None or found[0].kind != "class" or found[0].klass is None:
                return None
            built.add(id(found[0].klass))
            forward = found[0].klass.methods.get("forward")
        return forward if len(built) == 1 else None


def is_static(function: FunctionDef) -> bool:
    return any(isinstance(item, ast.Name) and item.id == "staticmethod" for item in function.decorator_list)


def argument_of(call: ast.Call, function: FunctionDef, parameter: str, through_self: bool) -> ast.expr:
    """The expression ``call`` passes for ``parameter`` (its default when omitted), or :data:`NOT_PASSED`."""
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    if through_self and positional:
        positional = positional[1:]
    names = [argument.arg for argument in positional]
    for keyword in call.keywords:
        if keyword.arg == parameter:
            return keyword.value
    if parameter in names:
        index = names.index(parameter)
        for position, value in enumerate(call.args):
            if isinstance(value, ast.Starred):
                return NOT_PASSED
            if position == index:
                return value
        if any(keyword.arg is None for keyword in call.keywords):
            return NOT_PASSED  # perhaps inside `**kwargs`
        defaults = arguments.defaults
        offset = index - (len(names) - len(defaults))
        if 0 <= offset < len(defaults):
            return defaults[offset]
        return NOT_PASSED
    for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        if argument.arg == parameter and default is not None:
            return default
    return NOT_PASSED
