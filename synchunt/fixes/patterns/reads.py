"""Host reads of device values (`.item()`, `int(t)`, `.tolist()`): read once before the loop, batch the reads
after it, or keep the value on the device."""

from __future__ import annotations

import ast

from synchunt.fixes.model import CheckSpec, Feed
from synchunt.fixes.patterns import Site, pattern
from synchunt.fixes.patterns.common import expression_check, operand
from synchunt.fixes.source import Module, dotted, is_pure, written_in

_CONVERSIONS = ("int", "float", "bool")
_HOST_READS = ("item", "tolist", "cpu", "numpy")
_SUFFIX = {"item": "value", "tolist": "list", "cpu": "host", "numpy": "host", "int": "value", "float": "value"}


def read_of(node: ast.AST) -> tuple[ast.expr, str] | None:
    """``(receiver, how)`` for ``receiver.item()``/``.tolist()``/``.cpu()``/``.numpy()`` and ``int(receiver)``,
    ``float(receiver)``, ``bool(receiver)``."""
    if not isinstance(node, ast.Call) or node.keywords:
        return None
    if isinstance(node.func, ast.Attribute) and node.func.attr in _HOST_READS and not node.args:
        return node.func.value, node.func.attr
    if isinstance(node.func, ast.Name) and node.func.id in _CONVERSIONS and len(node.args) == 1:
        return node.args[0], node.func.id
    return None


def receiver_text(module: Module, call: ast.Call, receiver: ast.expr) -> str:
    """The receiver as written before ``.item()``, its parentheses kept: ``(a + b)`` of ``(a + b).item()``."""
    if not isinstance(call.func, ast.Attribute):
        return operand(module, receiver)
    text = module.segment(call)
    line, column = module.span(call)[:2]

    def offset(end_line: int, end_column: int) -> int:
        lines = text.split("\n")
        return sum(len(item) + 1 for item in lines[:end_line - line]) + end_column - (
            column if end_line == line else 1)

    receiver_end = offset(*module.span(receiver)[2:])
    attribute_end = offset(*module.span(call.func)[2:])
    between = text[receiver_end:attribute_end]
    return text[:receiver_end] + between[:between.rindex(".")].rstrip(" \t")


@pattern("read-once-before-loop", "one `t.tolist()` before the loop instead of `t[i].item()` in every iteration",
         ast.Call)
def indexed_read(site: Site) -> object:
    """`t[i].item()`, `int(t[i])`, `float(t[i])` or `t[i].tolist()` in a `for` loop over `i`, `t` a name or
    attribute the loop does not change: one `t_list = t.tolist()` above the loop, `t_list[i]` inside it.
    Equivalent when `t` is 1-D (for `.item()`) and nothing changes it in the loop."""
    node, module = site.node, site.module
    found = read_of(node)
    if found is None or found[1] in ("cpu", "numpy", "bool"):
        return None
    receiver, how = found
    loop = module.loop(node)
    if not (isinstance(receiver, ast.Subscript) and isinstance(receiver.slice, ast.Name)
            and isinstance(loop, ast.For | ast.AsyncFor)):
        return None
    table, index = dotted(receiver.value), receiver.slice.id
    if table is None or index not in _targets(loop) or written_in(loop, table) or table.split(".")[0] in _targets(loop):
        return None
    listed = module.fresh_name(node, f"{table.split('.')[-1]}_list")
    read = f"{listed}[{index}]"
    span_node, replacement = (node, read) if how in ("item", "tolist") else (receiver, read)
    hoisted = f"{listed} = {module.segment(receiver.value)}.tolist()"
    original = module.segment(node)
    rewritten = read if span_node is node else original.replace(module.segment(receiver), read, 1)
    check = CheckSpec(
        original=f"result = [{original} for {index} in range(len({table}))]",
        rewritten=f"{hoisted}\nresult = [{rewritten} for {index} in range(len({table}))]",
        feeds=((table, Feed("tensor", dtype="int" if how == "int" else None)),), allowed_syncs=1,
        inputs="1-D tensors of every length from empty up", torch_name=module.torch or "torch")
    one_d = f"`{table}` is 1-D and " if how != "tolist" else ""
    condition = (f"{one_d}nothing changes `{table}` inside the loop (it is read once, before the loop, even when "
                 "the loop runs zero times)")
    return site.proposal("read-once-before-loop", span_node, replacement, condition=condition, check=check,
                         extra=(module.insert_before(loop, hoisted),))


@pattern("batch-reads-after-loop", "keep each value on the device in the loop and read them all once after it",
         ast.Call)
def batched_reads(site: Site) -> object:
    """`values.append(t.item())` in a loop: append the 0-dim tensor and read the list once after the loop
    (`values = torch.stack(values).tolist()`). Equivalent when `values` holds only this loop's reads, is read
    only after the loop, and the appended values are 0-dim tensors of one dtype."""
    node, module, torch = site.node, site.module, site.torch
    found = read_of(node)
    loop = module.loop(node)
    if torch is None or found is None or found[1] != "item" or loop is None:
        return None
    append, statement = module.parent(node), module.statement(node)
    if not (isinstance(append, ast.Call) and isinstance(append.func, ast.Attribute) and append.func.attr == "append"
            and isinstance(append.func.value, ast.Name) and append.args == [node]
            and isinstance(statement, ast.Expr) and statement.value is append and statement in loop.body):
        return None
    values = append.func.value.id
    uses = [item for item in ast.walk(loop) if isinstance(item, ast.Name) and item.id == values]
    if len(uses) != 1 or any(isinstance(item, ast.Return | ast.Yield | ast.YieldFrom) for item in ast.walk(loop)):
        return None
    receiver = receiver_text(module, node, found[0])
    after = f"{values} = {torch}.stack({values}).tolist() if {values} else []"
    check = None
    names = sorted({item.id for item in ast.walk(found[0]) if isinstance(item, ast.Name)} - {torch})
    if names and all(dotted(item) is not None or not isinstance(item, ast.Attribute) for item in ast.walk(found[0])):
        columns = ", ".join(f"{name}_rows" for name in names)
        rows = columns if len(names) == 1 else f"zip({columns})"
        head = f"{values} = []\nfor {', '.join(names)} in {rows}:\n"
        original = f"{head}    {values}.append({module.segment(node)})\nresult = {values}"
        rewritten = f"{head}    {values}.append({receiver})\n{after}\nresult = {values}"
        feeds = [(f"{names[0]}_rows", Feed("scalar_rows"))]
        feeds += [(f"{name}_rows", Feed("scalar_rows", like=f"{names[0]}_rows")) for name in names[1:]]
        check = CheckSpec(original=original, rewritten=rewritten, feeds=tuple(feeds), allowed_syncs=1,
                          inputs="loops of 0 to 16 iterations over 0-dim tensors", torch_name=torch)
    condition = (f"`{values}` holds only this loop's reads and is read only after the loop; `{receiver}` is a "
                 "0-dim tensor of one dtype")
    return site.proposal("batch-reads-after-loop", node, receiver, condition=condition, check=check,
                         extra=(module.insert_after(loop, after),))


@pattern("hoist-loop-invariant", "read a value the loop does not change once, before the loop", ast.Call)
def loop_invariant(site: Site) -> object:
    """A host read (`.tolist()`, `.item()`, `.cpu()`, `.numpy()`, `int(t)`, `float(t)`) in a loop of values the
    loop never assigns: `name = <read>` above the loop, `name` inside. Equivalent when nothing the read depends
    on changes inside the loop (checked for assignments; calls in the loop could still change it)."""
    node, module, torch = site.node, site.module, site.torch
    found = read_of(node)
    loop = module.loop(node)
    if found is None or found[1] == "bool" or loop is None or not _invariant(module, node, loop, torch):
        return None
    parent = module.parent(node)
    if isinstance(parent, ast.keyword) and parent.arg:
        wanted = parent.arg
    else:
        roots = [dotted(item) for item in ast.walk(node) if dotted(item) is not None and dotted(item) != torch]
        wanted = f"{(roots[0] or 'value').split('.')[-1]}_{_SUFFIX[found[1]]}"
    name = module.fresh_name(node, wanted)
    text = module.segment(node)
    check = expression_check(module, text, name, inputs="generated inputs", allowed_syncs=1)
    check = CheckSpec(original=check.original, rewritten=f"{name} = {text}\n{check.rewritten}", compare="exact",
                      allowed_syncs=1, inputs="tensors of several sizes", torch_name=check.torch_name)
    condition = (f"nothing `{' '.join(text.split())}` reads changes inside the loop (it is read once, before the "
                 "loop, even when the loop runs zero times)")
    return site.proposal("hoist-loop-invariant", node, name, condition=condition, check=check,
                         extra=(module.insert_before(loop, f"{name} = {text}"),))


def _targets(loop: ast.For | ast.AsyncFor | ast.While) -> set[str]:
    if isinstance(loop, ast.While):
        return set()
    return {item.id for item in ast.walk(loop.target) if isinstance(item, ast.Name)}


def _invariant(module: Module, node: ast.Call, loop: ast.For | ast.AsyncFor | ast.While, torch: str | None) -> bool:
    """Whether ``node`` reads only names and attributes the loop never assigns, through tensor methods and
    ``torch`` functions alone (no other call, which could change state)."""
    if not is_pure_calls(node, torch):
        return False
    targets = _targets(loop)
    for item in ast.walk(node):
        path = dotted(item)
        if path is None or path == torch or (torch and path.startswith(torch + ".")):
            continue
        if path.split(".")[0] in targets or written_in(loop, path) or written_in(loop, path.split(".")[0]):
            return False
    return True


def is_pure_calls(node: ast.AST, torch: str | None) -> bool:
    """No call but methods on values (``t.sum(dim=1)``) and ``torch`` functions; no assignment expression."""
    for item in ast.walk(node):
        if isinstance(item, ast.NamedExpr | ast.Await | ast.Yield | ast.Lambda):
            return False
        if isinstance(item, ast.Call):
            function = item.func
            if isinstance(function, ast.Name):
                if function.id not in ("int", "float", "len"):
                    return False
            elif isinstance(function, ast.Attribute):
                root = dotted(function.value)
                if root is not None and "." in (dotted(function) or "") and root != torch and is_pure(function.value):
                    continue  # a method on a value
                if root == torch or (torch and (root or "").startswith(torch + ".")):
                    continue
                if root is None:
                    continue  # a method on the result of another call: checked there
                return False
            else:
                return False
    return True


@pattern("keep-on-device", "keep the value on the device: drop the host read (`.item()`, `int(t)`, `float(t)`)",
         ast.Call)
def keep_on_device(site: Site) -> object:
    """`t.item()`, `int(t)`, `float(t)` or `bool(t)` whose value is only computed with and stored (assigned,
    accumulated, returned): drop the read and keep the 0-dim tensor. Equivalent when whatever reads the result
    later takes a 0-dim tensor (reading it there still syncs, once, where it is needed)."""
    node, module = site.node, site.module
    found = read_of(node)
    if found is None or found[1] not in ("item", *_CONVERSIONS):
        return None
    receiver, how = found
    top, parent = node, module.parent(node)
    while how != "bool" and isinstance(parent, ast.BinOp | ast.UnaryOp) and not isinstance(
            getattr(parent, "op", None), ast.Not):
        top, parent = parent, module.parent(parent)
    if isinstance(parent, ast.Assign | ast.AnnAssign | ast.AugAssign) and parent.value is top:
        target = parent.targets[0] if isinstance(parent, ast.Assign) else parent.target
        if _read_as_python_value(module, node, target):
            return None  # `if total > budget:` below would read the tensor there: the sync would only move
        reader = f"whatever reads `{module.segment(target)}`"
    elif isinstance(parent, ast.Return) and parent.value is top:
        reader = "the caller"
    else:
        return None
    if how == "item":
        replacement = receiver_text(module, node, receiver)
    else:  # `int(t)`: the bare operand where it stands alone, in parentheses inside an operation
        replacement = module.segment(receiver) if top is node else operand(module, receiver)
    # A number read is a copy; the tensor kept instead may be the buffer itself or a view of it (`seq_lens[-1]`,
    # `.long()`, `.contiguous()`), which later code anywhere may change in place: it is kept as a copy of its own,
    # unless it is a result of its own already (a reduction, an operation: `n - t[0]`)
    if top is node and not _fresh(receiver):
        replacement = f"{operand(module, receiver) if how != 'item' else replacement}.clone()"
    kind = {"int": " (an integer tensor)", "float": " (a floating-point tensor)", "bool": " (a bool tensor)"}
    condition = f"{reader} takes a 0-dim tensor{kind.get(how, '')}: the value stays on the device"
    if how != "bool":
        condition += " and is computed in its dtype rather than in double"
    line, column = module.span(node)[:2]
    top_line, top_column = module.span(top)[:2]
    top_text = module.segment(top)
    start = _offset(top_text, line - top_line, column - (top_column if line == top_line else 1))
    rewritten = top_text[:start] + replacement + top_text[start + len(module.segment(node)):]
    feeds = _receiver_feeds(receiver, {"int": "int", "bool": "bool"}.get(how, "float"))
    check = expression_check(module, top_text, rewritten, feeds, compare="number",
                             inputs="0-dim tensors and numbers")
    return site.proposal("keep-on-device", node, replacement, condition=condition, check=check)


# Methods and torch functions whose result is a tensor of its own, never an alias of their input
_FRESH = frozenset({"sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "std", "var", "norm",
                    "any", "all", "count_nonzero", "numel", "dot", "matmul", "logsumexp", "median", "clone"})


def _fresh(receiver: ast.expr) -> bool:
    """Whether ``receiver`` is a tensor of its own: an operation, or a reduction (`lens.sum()`,
    `torch.max(x)`), not a name, an attribute, an index or a method that may return its input's memory."""
    if isinstance(receiver, ast.BinOp | ast.UnaryOp | ast.Compare):
        return True
    return isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) and (
        receiver.func.attr in _FRESH)


_PYTHON_READERS = frozenset({"range", "int", "float", "bool", "len", "print", "str", "format", "round", "min", "max",
                             "abs", "sum", "divmod", "repr"})


def _read_as_python_value(module: Module, node: ast.AST, target: ast.expr) -> bool:
    """Whether the function reads the assigned name where a tensor is read back to the host anyway: a branch or
    loop test (`if total > budget`, `while used < n`), an assert, a slice or index bound, `range`, `int`, `print`
    and the like."""
    name = dotted(target)
    if name is None:
        return False
    for item in ast.walk(module.function(node)):
        if item is target or dotted(item) != name or not isinstance(getattr(item, "ctx", None), ast.Load):
            continue
        child: ast.AST = item
        for ancestor in module.ancestors(item):
            if isinstance(ancestor, ast.If | ast.While | ast.IfExp | ast.Assert) and ancestor.test is child:
                return True
            if isinstance(ancestor, ast.comprehension) and child in ancestor.ifs:
                return True
            if (isinstance(ancestor, ast.Subscript) and ancestor.slice is child) or isinstance(ancestor, ast.Slice):
                return True
            if isinstance(ancestor, ast.Call) and isinstance(ancestor.func, ast.Name) and (
                    ancestor.func.id in _PYTHON_READERS) and child in ancestor.args:
                return True
            if isinstance(ancestor, ast.JoinedStr | ast.FormattedValue | ast.BoolOp):
                return True  # an f-string; `total > n and ...`, which calls bool() on the tensor
            if isinstance(ancestor, ast.UnaryOp) and isinstance(ancestor.op, ast.Not):
                return True
            if isinstance(ancestor, ast.Call) and isinstance(ancestor.func, ast.Attribute) and (
                    ancestor.func.attr == "format"):
                return True  # `"{}".format(total)`
            if isinstance(ancestor, ast.BinOp) and isinstance(ancestor.op, ast.Mod) and isinstance(
                    ancestor.left, ast.Constant) and isinstance(ancestor.left.value, str):
                return True  # `"%d" % total`
            if isinstance(ancestor, ast.stmt):
                break
            child = ancestor
    return False


def _receiver_feeds(receiver: ast.expr, dtype: str) -> list[tuple[str, Feed]]:
    """The receiver's tensors, of the dtype its conversion implies: itself 0-dim when it is a name or
    attribute; a 1-D tensor long enough for a constant index (`norms[0]`, `offsets[-1]`)."""
    if dotted(receiver) is not None:
        return [(dotted(receiver) or "", Feed("scalar_tensor", dtype=dtype))]
    if isinstance(receiver, ast.Subscript) and dotted(receiver.value) is not None:
        index = receiver.slice
        if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
            index = index.operand
        if isinstance(index, ast.Constant) and type(index.value) is int:
            return [(dotted(receiver.value) or "", Feed("tensor", dtype=dtype, ndim=1, min_size=index.value + 1))]
    return []


def _offset(text: str, line: int, column: int) -> int:
    lines = text.split("\n")
    return sum(len(item) + 1 for item in lines[:line]) + column
