"""The two programs of a check, made runnable here: devices lowered to the check's device, free names found and
their uses read (to feed the names no pattern feeds), and code the checker must not run refused."""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field

DEVICE = "__synchunt_device__"
# Builtins a checked expression may call: pure, no I/O, no reflection.
SAFE_BUILTINS = frozenset({"abs", "all", "any", "bool", "dict", "divmod", "enumerate", "float", "int", "isinstance",
                           "len", "list", "max", "min", "pow", "range", "reversed", "round", "set", "sorted", "sum",
                           "tuple", "zip", "AssertionError", "ValueError", "RuntimeError", "TypeError",
                           "IndexError", "KeyError", "Exception", "True", "False", "None"})
# torch namespaces a check never enters: processes, files, the network, global state, compilation.
_REFUSED = frozenset({"distributed", "save", "load", "hub", "_C", "ops", "utils", "multiprocessing", "cuda",
                      "backends", "jit", "compile", "library", "testing", "set_default_device", "manual_seed",
                      "set_default_dtype", "use_deterministic_algorithms", "cpu", "mps", "xpu", "accelerator"})


class Refused(Exception):
    """The programs do something a check must not run, or name something it cannot feed."""


@dataclass
class Use:
    """How a program uses a free name or attribute path."""

    tensor: bool = False  # a tensor attribute or method is read from it, or it is subscripted
    scalar: bool = False  # `.item()` is read from it directly
    called: bool = False
    index: bool = False  # it is an index
    attributes: set[str] = field(default_factory=set)


def lower(code: str, torch_name: str) -> ast.Module:
    """``code`` parsed, with every device it names replaced by the check's device (``device=``, ``.cuda()``,
    ``.to("cuda")``, ``torch.device(...)``); ``"cpu"`` as a copy's target stays."""
    tree = ast.parse(code)
    _Lower(torch_name).visit(tree)
    return ast.fix_missing_locations(tree)


class _Lower(ast.NodeTransformer):
    def __init__(self, torch_name: str) -> None:
        self.torch_name = torch_name

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        for keyword in node.keywords:
            if keyword.arg == "device" and not _is_cpu(keyword.value):
                keyword.value = ast.Name(DEVICE, ast.Load())
        function = node.func
        if isinstance(function, ast.Attribute) and function.attr == "cuda":
            function.attr, node.args = "to", [ast.Name(DEVICE, ast.Load())]
            node.keywords = [keyword for keyword in node.keywords if keyword.arg == "non_blocking"]
        elif isinstance(function, ast.Attribute) and function.attr == "to" and node.args and _device_argument(
                node.args[0]):
            node.args[0] = ast.Name(DEVICE, ast.Load())
        elif (isinstance(function, ast.Attribute) and function.attr == "device" and isinstance(function.value, ast.Name)
              and function.value.id == self.torch_name and node.args and not _is_cpu(node.args[0])):
            return ast.Name(DEVICE, ast.Load())
        return node


def _is_cpu(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and node.value == "cpu":
        return True
    return isinstance(node, ast.Call) and bool(node.args) and _is_cpu(node.args[0])


def _device_argument(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return not node.value.startswith("cpu")
    if isinstance(node, ast.Name):
        return node.id == DEVICE or "dev" in node.id.lower()
    if isinstance(node, ast.Attribute):
        return node.attr in ("device",) or "dev" in node.attr.lower()
    return False


def free_uses(trees: list[ast.Module], torch_name: str, tensor_attributes: frozenset[str], *,
              setup: ast.Module | None = None) -> dict[str, Use]:
    """The free names (as attribute paths up to the first tensor attribute) of the programs and their uses;
    names the ``setup`` binds are not free in the others. Raises :class:`Refused` for a refused torch namespace
    or builtin."""
    uses: dict[str, Use] = {}
    made = {node.id for node in ast.walk(setup) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
            } if setup is not None else set()
    for tree in trees:
        if any(isinstance(node, ast.Import | ast.ImportFrom | ast.Global | ast.Nonlocal) for node in ast.walk(tree)):
            raise Refused("imports")
        parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in _free_loads(tree.body, set() if tree is setup else set(made)):
            if node.id == DEVICE:
                continue
            if node.id == torch_name:
                _check_torch(node, parents)
                continue
            if node.id in SAFE_BUILTINS:
                continue
            if hasattr(builtins, node.id):
                raise Refused(f"calls `{node.id}`")
            path, top = _path(node, parents, tensor_attributes)
            use = uses.setdefault(path, Use())
            _read_use(top, parents, use, torch_name)
    return uses


def _free_loads(statements: list[ast.stmt], bound: set[str]) -> list[ast.Name]:
    """The names read before the program binds them, in order (``x = f(x)`` reads a free ``x``)."""
    found: list[ast.Name] = []
    for statement in statements:
        if isinstance(statement, ast.Assign | ast.AugAssign | ast.AnnAssign):
            found += _loads(statement.value, bound) if statement.value is not None else []
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                if isinstance(statement, ast.AugAssign) or not isinstance(target, ast.Name):
                    found += _loads(target, bound)
            bound |= {item.id for target in targets for item in ast.walk(target)
                      if isinstance(item, ast.Name) and isinstance(item.ctx, ast.Store)}
        elif isinstance(statement, ast.For):
            found += _loads(statement.iter, bound)
            bound |= {item.id for item in ast.walk(statement.target) if isinstance(item, ast.Name)}
            found += _free_loads(statement.body + statement.orelse, bound)
        elif isinstance(statement, ast.If | ast.While):
            found += _loads(statement.test, bound)
            found += _free_loads(statement.body + statement.orelse, bound)
        else:
            found += _loads(statement, bound)
    return found


def _loads(node: ast.AST, bound: set[str]) -> list[ast.Name]:
    """Free name reads in an expression; comprehension variables are local to it."""
    local = {item.id for comprehension in ast.walk(node) if isinstance(comprehension, ast.comprehension)
             for item in ast.walk(comprehension.target) if isinstance(item, ast.Name)}
    return [item for item in ast.walk(node) if isinstance(item, ast.Name) and isinstance(item.ctx, ast.Load)
            and item.id not in bound and item.id not in local]


def _check_torch(node: ast.Name, parents: dict[int, ast.AST]) -> None:
    parent = parents.get(id(node))
    if isinstance(parent, ast.Attribute) and parent.attr in _REFUSED:
        raise Refused(f"uses `{node.id}.{parent.attr}`")


def _path(node: ast.Name, parents: dict[int, ast.AST], tensor_attributes: frozenset[str]) -> tuple[str, ast.AST]:
    parts, top = [node.id], node
    parent = parents.get(id(top))
    while isinstance(parent, ast.Attribute) and parent.value is top and parent.attr not in tensor_attributes:
        parts.append(parent.attr)
        top, parent = parent, parents.get(id(parent))
    return ".".join(parts), top


def _read_use(top: ast.AST, parents: dict[int, ast.AST], use: Use, torch_name: str) -> None:
    parent = parents.get(id(top))
    if isinstance(parent, ast.Attribute) and parent.value is top:
        use.tensor = True
        use.attributes.add(parent.attr)
        call = parents.get(id(parent))
        if parent.attr == "item" and isinstance(call, ast.Call):
            use.scalar = True
    elif isinstance(parent, ast.Subscript):
        if parent.value is top:
            use.tensor = True
        else:
            use.index = True
    elif isinstance(parent, ast.Call) and parent.func is top:
        use.called = True
    elif (isinstance(parent, ast.Call) and top in parent.args and isinstance(parent.func, ast.Attribute)
          and isinstance(parent.func.value, ast.Name) and parent.func.value.id == torch_name):
        use.tensor = True  # an argument of a torch function
