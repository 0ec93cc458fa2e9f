"""What a module imports: ``torch`` aliases and functions, host-array modules (numpy, pandas, …)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

_HOST_ARRAY_MODULES = frozenset({"numpy", "pandas", "polars", "pyarrow"})


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement, nested ones included, without visiting expressions."""
    for statement in body:
        yield statement
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            nested = getattr(statement, field, None)
            if nested:
                for item in nested:
                    yield from _statements([item] if isinstance(item, ast.stmt) else item.body)


def module_imports(tree: ast.Module) -> tuple[dict[str, str], set[str], dict[str, str]]:
    """``torch`` module aliases (alias → dotted prefix: ``dist`` → ``"distributed."``), ``numpy`` aliases,
    and functions imported from ``torch`` by name."""
    torch_aliases: dict[str, str] = {}
    numpy_aliases: set[str] = set()
    torch_functions: dict[str, str] = {}
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                root, _, rest = alias.name.partition(".")
                if root == "torch":
                    if alias.asname:
                        torch_aliases[alias.asname] = rest + "." if rest else ""
                    else:
                        torch_aliases["torch"] = ""
                elif root in _HOST_ARRAY_MODULES:  # their arrays and frames never live on an accelerator
                    numpy_aliases.add(alias.asname or root)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "torch":
            prefix = node.module.partition(".")[2]
            for alias in node.names:
                dotted = f"{prefix}.{alias.name}" if prefix else alias.name
                if alias.name[:1].islower() and prefix in {"", "nn.functional"}:
                    torch_functions[alias.asname or alias.name] = dotted
                else:  # a submodule or a class: `from torch import distributed as dist`
                    torch_aliases[alias.asname or alias.name] = dotted + "."
    return torch_aliases, numpy_aliases, torch_functions


def imports_torch_helpers(tree: ast.Module) -> bool:
    """``from ..utils.torch_utils import device_synchronize``: torch code that reaches torch through helpers."""
    return any(isinstance(node, ast.ImportFrom) and node.module and "torch" in node.module
               for node in _statements(tree.body))
