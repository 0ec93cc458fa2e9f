"""One pass over a module's statements that records every binding the provenance guess reads.

Names (assignments, loop targets, parameters, imports, definitions), ``self.<attr>`` per class (assignments in
any method, ``register_buffer``, class-level ``attr: Tensor`` declarations), writes into containers
(``xs.append(v)``, ``d[k] = v``), and ``isinstance(x, torch.Tensor)`` narrowing inside the ``if`` it guards.
Bindings made inside expressions (comprehensions, ``:=``, lambdas) are added by the linter's walk.
"""

from __future__ import annotations

import ast
from dataclasses import replace

from synchunt.lint.provenance.syntax import asserted_checks, device_check
from synchunt.lint.scopes import (
    ITER,
    Binding,
    ClassInfo,
    Content,
    Scope,
    add_content,
    bind_target,
    function_scope,
    root_key,
    subscript_root,
)
from synchunt.lint.walk import FastVisitor
from synchunt.lint.where import Where, annotation_where, name_where

_ADDERS = {"append": False, "add": False, "appendleft": False, "extend": True, "update": True}


def build_scopes(tree: ast.Module) -> dict[int, Scope]:
    """Scopes keyed by ``id()`` of their function node; the module's scope under ``id(tree)``."""
    module = Scope("<module>")
    scopes: dict[int, Scope] = {id(tree): module}
    ScopeBuilder(module, scopes, prefix="").visit_body(tree.body)
    return scopes


def _plain_name(checked: tuple[str, Where] | None) -> tuple[str, Where] | None:
    """Only plain names are narrowed here (dotted ones: synchunt.lint.provenance.asserted)."""
    return checked if checked is not None and "." not in checked[0] else None


def _is_device(node: ast.expr) -> bool:
    """``torch.device(...)`` or a name for a device (``device``, ``self.device``, ``target_device``); not
    ``torch.cuda.device(i)``, which picks the current GPU and leaves the default device alone."""
    if isinstance(node, ast.Call):
        return ast.unparse(node.func) in {"torch.device", "device"}
    return isinstance(node, (ast.Name, ast.Attribute)) and ast.unparse(node).rsplit(".", 1)[-1].endswith("device")


def _under_default_device(scope: Scope, device: ast.expr, start: int, end: int) -> None:
    """Mark what the block's statements bound: a host tensor they build is on ``device``."""
    for name, bindings in scope.bindings.items():
        scope.bindings[name] = [replace(binding, default_device=device) if binding.value is not None
                                and start <= binding.line <= end else binding for binding in bindings]
    if scope.klass is not None:
        for attribute, pairs in scope.klass.attributes.items():
            scope.klass.attributes[attribute] = [
                (replace(binding, default_device=device), owner) if owner is scope and binding.value is not None
                and start <= binding.line <= end else (binding, owner) for binding, owner in pairs]


def exits_block(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))


def _is_array_check(test: ast.expr) -> str | None:
    """The name that ``isinstance(name, np.ndarray)`` (or ``(int, float)``, ``list``…) proves not a tensor."""
    if not (isinstance(test, ast.Call) and len(test.args) == 2 and isinstance(test.args[0], ast.Name)
            and isinstance(test.func, ast.Name) and test.func.id == "isinstance"):
        return None
    kinds = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
    names = [ast.unparse(kind).rsplit(".", 1)[-1] for kind in kinds]
    plain = {"ndarray", "int", "float", "bool", "list", "tuple", "str", "Number", "Integral", "generic"}
    return test.args[0].id if names and all(name in plain for name in names) else None


def _is_tensor_check(test: ast.expr) -> tuple[str, bool] | None:
    """The name that ``isinstance(name, torch.Tensor)`` / ``torch.is_tensor(name)`` proves a tensor, and whether
    failing it proves the name no tensor (not for a subclass: a plain tensor fails ``isinstance(x, DTensor)``)."""
    if not (isinstance(test, ast.Call) and test.args and isinstance(test.args[0], ast.Name)):
        return None
    func = ast.unparse(test.func)
    if func == "isinstance" and len(test.args) == 2 and ast.unparse(test.args[1]).endswith("Tensor"):
        return test.args[0].id, ast.unparse(test.args[1]) in {"torch.Tensor", "Tensor"}
    return (test.args[0].id, True) if func.endswith("is_tensor") and len(test.args) == 1 else None


_STRAIGHT = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Assert, ast.Import, ast.ImportFrom, ast.Pass)


class ScopeBuilder(FastVisitor):
    """Collects the bindings statements make in one scope; nested functions and classes get builders of
    their own. ``klass`` is set when the body being read is a class body."""

    def __init__(self, scope: Scope, scopes: dict[int, Scope], prefix: str, klass: ClassInfo | None = None) -> None:
        super().__init__()
        self.scope = scope
        self.scopes = scopes
        self.prefix = prefix
        self.klass = klass

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
        self.scope.bind(node.name, Binding(node.lineno, fixed=Where.VALUE, kind="function", function=node))
        qualname = f"{self.prefix}{node.name}"
        # Class bodies are not enclosing scopes for the functions defined in them.
        parent = self.scope.parent if self.klass is not None else self.scope
        if self.klass is not None:
            self.klass.methods[node.name] = node
        scope = function_scope(node, qualname, parent, self.klass)
        self.scopes[id(node)] = scope
        ScopeBuilder(scope, self.scopes, qualname + ".").visit_body(node.body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        klass = ClassInfo()
        self.scope.bind(node.name, Binding(node.lineno, fixed=Where.VALUE, kind="class", klass=klass))
        class_body = Scope("<class>", parent=self.scope)
        ScopeBuilder(class_body, self.scopes, f"{self.prefix}{node.name}.", klass=klass).visit_body(node.body)

    def visit_Assign(self, node: ast.Assign) -> None:
        # The new binding holds after the statement: a multi-line right side still reads the old one.
        for target in node.targets:
            bind_target(self.scope, target, node.value, node.end_lineno or node.lineno)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Subscript):  # `totals[k] += v` puts what `v` is into `totals`
            root, depth = subscript_root(node.target)
            if depth:
                add_content(self.scope, root, Content(node.lineno, node.value, depth, key=root_key(node.target)))

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            bind_target(self.scope, node.target, node.value, node.end_lineno or node.lineno)
        elif isinstance(node.target, ast.Name):
            fixed = annotation_where(node.annotation) or name_where(node.target.id)
            binding = Binding(node.lineno, fixed=fixed, annotation=node.annotation)
            self.scope.bind(node.target.id, binding)
            if self.klass is not None and fixed is not Where.UNKNOWN:  # a dataclass field: `seq_lens: Tensor`
                self.klass.attributes.setdefault(node.target.id, []).append((binding, self.scope))

    def visit_Expr(self, node: ast.Expr) -> None:
        call = node.value
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.args):
            return
        method, receiver = call.func.attr, call.func.value
        if method in _ADDERS:
            root, depth = subscript_root(receiver)
            add_content(self.scope, root, Content(node.lineno, call.args[-1], depth + 1, spread=_ADDERS[method],
                                                  key=root_key(receiver)))
        elif method == "register_buffer" and isinstance(receiver, ast.Name) and receiver.id == "self" and (
                self.scope.klass is not None and isinstance(call.args[0], ast.Constant) and len(call.args) > 1):
            # A buffer follows the module to its device: a tensor, wherever it was built.
            binding = Binding(node.lineno, fixed=Where.TENSOR)
            self.scope.klass.attributes.setdefault(str(call.args[0].value), []).append((binding, self.scope))

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        bind_target(self.scope, node.target, node.iter, node.lineno, (ITER,))
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_If(self, node: ast.If) -> None:
        end = max(statement.end_lineno or statement.lineno for statement in node.body)
        negated = isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not)
        checked = _is_tensor_check(node.test.operand if negated else node.test)  # type: ignore[attr-defined]
        if checked is not None:
            self._narrow_tensor(node, *checked, negated, end)
        name = _is_array_check(node.test)
        if name is not None:  # `if isinstance(x, np.ndarray):` x is a numpy array there
            self.scope.bind(name, Binding(node.lineno, fixed=Where.VALUE, until=end))
        checked = _plain_name(device_check(node.test))
        if checked is not None:
            name, inside = checked
            outside = Where.DEVICE if inside is Where.CPU else Where.CPU
            self.scope.bind(name, Binding(node.lineno, fixed=inside, until=end))
            if node.orelse:
                start = node.orelse[0].lineno
                self.scope.bind(name, Binding(start - 1, fixed=outside,
                                              until=max(item.end_lineno or item.lineno for item in node.orelse)))
            elif exits_block(node.body) and self.scope.node is not None:
                # `if x.is_cuda: return ...`: below, x is on the other side (until the function ends)
                self.scope.bind(name, Binding(end, fixed=outside, until=self.scope.node.end_lineno))
        self.generic_visit(node)

    def _narrow_tensor(self, node: ast.If, name: str, exact: bool, negated: bool, end: int) -> None:
        """``if isinstance(x, torch.Tensor):`` x is a tensor in the body (where it lives is what was known before
        the check) and, for ``torch.Tensor`` itself (``exact``), not one in the ``else``, or below an ``if`` of
        the function's own statements whose body returns; ``not`` swaps the two."""
        known = ast.copy_location(ast.Name(id=name, ctx=ast.Load()), node.test)
        tensor = Binding(node.lineno, known, at_least=Where.TENSOR)
        other = Binding(node.lineno, fixed=Where.VALUE) if exact else None
        inside, outside = (other, tensor) if negated else (tensor, other)
        if inside is not None:
            self.scope.bind(name, replace(inside, until=end))
        if outside is None:
            return
        if node.orelse:
            start = node.orelse[0].lineno
            self.scope.bind(name, replace(outside, line=start - 1, until=max(
                item.end_lineno or item.lineno for item in node.orelse)))
        elif exits_block(node.body) and self._own_position(node) is not None:
            self.scope.bind(name, replace(outside, line=end, until=self.scope.node.end_lineno))  # type: ignore[union-attr]

    def visit_Assert(self, node: ast.Assert) -> None:
        position = self._own_position(node)
        if position is None:
            return  # only an assertion every path through the function meets says where a value is
        function = self.scope.node
        assert function is not None
        # straight-line statements before it: every call that reaches them reaches the assertion
        straight = all(isinstance(statement, _STRAIGHT) for statement in function.body[:position])
        for name, where in asserted_checks(node):
            if "." in name:
                continue  # a dotted name: synchunt.lint.provenance.asserted
            # `assert x.device.type == "cpu"`: below, x is where the assertion says; of a parameter not bound
            # again before it, it says where the argument was from the start
            known = self.scope.lookup(name, node.lineno)
            start = function.lineno if straight and known is not None and known[1] is self.scope and (
                known[0].parameter or known[0].line == function.lineno) else node.lineno
            self.scope.bind(name, Binding(start, fixed=where, until=function.end_lineno))

    def _own_position(self, node: ast.stmt) -> int | None:
        """Where ``node`` is among the statements of the function this scope is (None when it is nested in a
        block, or at module or class level)."""
        function = self.scope.node
        if function is None or self.klass is not None:
            return None
        return next((index for index, statement in enumerate(function.body) if statement is node), None)

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                for name in ast.walk(item.optional_vars):
                    if isinstance(name, ast.Name):
                        self.scope.bind(name.id, Binding(node.lineno, fixed=name_where(name.id)))
        device = next((item.context_expr for item in node.items if _is_device(item.context_expr)), None)
        self.generic_visit(node)
        if device is not None:  # `with torch.device(d):` factories without `device=` build on `d`
            _under_default_device(self.scope, device, node.lineno, node.end_lineno or node.lineno)

    visit_AsyncWith = visit_With

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.scope.bind(node.name, Binding(node.lineno, fixed=Where.VALUE))
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        for alias in node.names:
            self.scope.bind(alias.asname or alias.name.split(".")[0],
                            Binding(node.lineno, fixed=Where.VALUE, kind="module"))

    visit_ImportFrom = visit_Import
