"""Branches on device values: a check becomes `torch._assert_async`, a two-way assignment `torch.where`."""

from __future__ import annotations

import ast

from synchunt.fixes.model import CheckSpec, Feed
from synchunt.fixes.patterns import Site, pattern
from synchunt.fixes.source import Module, dotted


def _test_feeds(test: ast.expr) -> tuple[tuple[str, Feed], ...]:
    """The test's names and attributes as 0-dim integer tensors: a Python branch needs a one-element value, and
    small integers make it go both ways across cases."""
    paths = []
    callees = {id(node.func) for node in ast.walk(test) if isinstance(node, ast.Call)}
    for node in ast.walk(test):
        path = dotted(node)
        if path is not None and isinstance(node, ast.Name | ast.Attribute) and id(node) not in callees \
                and path not in paths and not any(path.startswith(other + ".") for other in paths):
            paths.append(path)
    roots = [path for path in paths if not any(path != other and path.startswith(other + ".") for other in paths)]
    return tuple((path, Feed("scalar_tensor", dtype="int")) for path in roots)


def _enclosing_test(module: Module, node: ast.AST, kinds: tuple[type[ast.AST], ...]) -> ast.AST | None:
    """The nearest ``kinds`` ancestor (``if``, ``assert``, ``a if t else b``) whose test holds ``node``."""
    child = node
    for item in (node, *module.ancestors(node)):
        if isinstance(item, kinds) and item is not node and getattr(item, "test", None) is child:
            return item
        if isinstance(item, ast.stmt) and not isinstance(item, kinds):
            return None
        child = item
    return None


def _device_condition(test: ast.expr) -> bool:
    """A test that is one tensor expression (no Python ``and``/``or`` mixing host values in)."""
    inner = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
    return not any(isinstance(item, ast.BoolOp | ast.IfExp | ast.NamedExpr | ast.Await) for item in ast.walk(inner)) \
        and not (isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.Not))


def _unwrapped(test: ast.expr) -> ast.expr:
    """The tensor under an explicit ``bool(...)``: the device can test ``t.any()`` itself."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _unwrapped(test.operand)
        return test if inner is test.operand else ast.copy_location(ast.UnaryOp(ast.Not(), inner), test)
    if (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "bool"
            and len(test.args) == 1 and not test.keywords):
        return test.args[0]
    return test


def _message(module: Module, node: ast.AST | None) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return ", " + module.segment(node)
    return ""


@pattern("assert-async", "a device-side check `torch._assert_async(ok)` instead of `if bad: raise`", ast.expr)
def assert_async(site: Site) -> object:
    """`if <tensor test>: raise ...` (no `else`) or `assert <tensor test>`: the host no longer waits to branch;
    the device checks the condition. Equivalent when the check guards an invariant that holds in normal runs:
    a failure then surfaces later, as a device-side assert that ends the process, not as this exception."""
    node, module, torch = site.node, site.module, site.torch
    statement = _enclosing_test(module, node, (ast.If, ast.Assert))
    if torch is None or statement is None or not _device_condition(statement.test):  # type: ignore[attr-defined]
        return None
    if isinstance(statement, ast.If):
        if statement.orelse or len(statement.body) != 1 or not isinstance(statement.body[0], ast.Raise):
            return None
        raised = statement.body[0].exc
        test = _unwrapped(statement.test)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            ok = module.segment(test.operand)
        else:
            ok = f"{torch}.logical_not({module.segment(test)})"
        message = _message(module, raised.args[0] if isinstance(raised, ast.Call) and raised.args else None)
        error = module.segment(raised.func if isinstance(raised, ast.Call) else raised) if raised else "the error"
        original_check = f"if {module.segment(test)}:\n    raise AssertionError"
    else:
        assert isinstance(statement, ast.Assert)
        ok, error = module.segment(_unwrapped(statement.test)), "AssertionError"
        message = _message(module, statement.msg)
        original_check = f"assert {ok}"
    replacement = f"{torch}._assert_async({ok}{message})"
    check = CheckSpec(original=original_check, rewritten=replacement, results=(), compare="raises",
                      feeds=_test_feeds(statement.test), inputs="values that pass and fail the check",
                      torch_name=torch)
    condition = (f"the check guards an invariant: a failure surfaces later, as a device-side assert that ends "
                 f"the process, not as `{error}` here")
    return site.proposal("assert-async", statement, replacement, condition=condition, check=check)


def _kept_feed(target: str | None, choice: ast.AST) -> tuple[tuple[str, Feed], ...]:
    """Without an ``else`` the target's old value is the other side: one 0-dim value, like the test's."""
    if target is None or getattr(choice, "orelse", None):
        return ()
    return ((target, Feed("scalar_tensor", dtype="float")),)


@pattern("branch-to-where", "a device-side choice `x = torch.where(t, a, b)` instead of branching on `t`", ast.expr)
def branch_to_where(site: Site) -> object:
    """`if t: x = a` / `else: x = b` (each branch one assignment to the same target; without `else`, `b` is
    `x`), or `a if t else b`: both sides are computed and the device picks. Equivalent when both sides can be
    computed without side effects or errors and have one shape; the result is then a tensor."""
    node, module, torch = site.node, site.module, site.torch
    choice = _enclosing_test(module, node, (ast.If, ast.IfExp))
    if torch is None or choice is None or not _device_condition(choice.test):  # type: ignore[attr-defined]
        return None
    test = _unwrapped(choice.test)  # type: ignore[attr-defined]
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    condition_text = module.segment(test.operand if negated else test)
    if isinstance(choice, ast.IfExp):
        yes, no = module.segment(choice.body), module.segment(choice.orelse)
        target = None
    else:
        assert isinstance(choice, ast.If)
        branches = [choice.body, choice.orelse] if choice.orelse else [choice.body]
        if not all(len(branch) == 1 and isinstance(branch[0], ast.Assign) and len(branch[0].targets) == 1
                   for branch in branches):
            return None
        targets = [branch[0].targets[0] for branch in branches]
        if not isinstance(targets[0], ast.Name | ast.Attribute) or any(
                ast.dump(item) != ast.dump(targets[0]) for item in targets):
            return None
        target = module.segment(targets[0])
        yes = module.segment(choice.body[0].value)  # type: ignore[attr-defined]
        no = module.segment(choice.orelse[0].value) if choice.orelse else target  # type: ignore[attr-defined]
    if negated:
        yes, no = no, yes
    where = f"{torch}.where({condition_text}, {yes}, {no})"
    replacement = where if target is None else f"{target} = {where}"
    bound = f"; `{target}` is bound before the `if`" if target is not None and not choice.orelse else ""
    condition = (f"`{' '.join(yes.split())}` and `{' '.join(no.split())}` can both be computed, with no side "
                 f"effect or error, and have one shape; the result is a tensor{bound}")
    if target is None:
        original, rewritten = f"result = ({module.segment(choice)})", f"result = ({replacement})"
    else:
        original = f"if {module.segment(test)}:\n    {target} = {module.segment(choice.body[0].value)}\n"  # type: ignore[attr-defined]
        if choice.orelse:  # type: ignore[attr-defined]
            original += f"else:\n    {target} = {module.segment(choice.orelse[0].value)}\n"  # type: ignore[attr-defined]
        original += f"result = {target}"
        rewritten = f"{replacement}\nresult = {target}"
    check = CheckSpec(original=original, rewritten=rewritten, compare="number", torch_name=torch,
                      feeds=_test_feeds(test) + _kept_feed(target, choice),
                      inputs="0-dim tensors on both sides of the test")
    return site.proposal("branch-to-where", choice, replacement, condition=condition, check=check)
