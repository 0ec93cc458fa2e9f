"""The structure the code promises: imports flow one way along the pipeline, modules stay small, and no stage
outside the catalogue spells a rule code or an aten op."""

from __future__ import annotations

import ast
import re
import statistics
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "synchunt"

# What each part of synchunt may import (besides itself and the leaf modules every layer shares).
LEAVES = {"errors", "files", "library_code", "source_map", "sites", "findings", "executor", "progress", "synchunt",
          "config", "printable", "units", "modes", "process"}
ALLOWED: dict[str, set[str]] = {
    "rules": set(),
    "trace": set(),
    "detect": {"rules", "trace"},
    "impact": {"rules", "trace", "detect"},
    "attribute": {"rules", "trace", "detect", "impact", "lint", "fixes"},  # lint: exact lines; fixes: rewrites
    "compare": {"attribute"},
    "report": {"trace", "attribute", "compare"},
    "gate": {"rules", "attribute"},
    "shadow": set(),
    "guard": {"rules", "shadow"},
    "lint": {"rules"},
    "fixes": {"rules", "guard"},  # guard: a rewrite is checked for syncs under the runtime guard
    "capture": {"trace", "guard", "shadow"},
    "audit": {"rules", "capture", "attribute", "guard"},
    "annotate": {"rules", "trace", "attribute"},
    "render": {"rules", "trace", "attribute", "compare", "report", "gate", "audit", "impact"},
    "cli": {"*"},
    "pytest_plugin": {"guard", "shadow"},
    "__main__": {"cli"},
}


def _modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        found.append((parts[0] if len(parts) > 1 or parts[0] != "__init__" else "synchunt", path))
    return found


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {name.split(".")[1] for name in names if name.startswith("synchunt.")}


@pytest.mark.parametrize(("part", "path"), _modules(), ids=lambda value: str(value))
def test_imports_flow_one_way(part: str, path: Path) -> None:
    part = part.removesuffix(".py")
    allowed = ALLOWED.get(part)
    if allowed is None:
        assert part in LEAVES, f"{part} is neither a pipeline stage nor a leaf module: add it to this test"
        allowed = set()
    if "*" in allowed:
        return
    wrong = {name for name in _imports(path) if name != part and name not in allowed and name not in LEAVES}
    assert not wrong, f"{path.relative_to(PACKAGE.parent)} imports {sorted(wrong)}, above its layer"


def test_leaf_modules_import_only_leaves() -> None:
    for part, path in _modules():
        name = part.removesuffix(".py")
        if name in LEAVES and name != "synchunt":
            assert _imports(path) <= LEAVES, f"{path.name} imports {sorted(_imports(path) - LEAVES)}"


def test_modules_stay_small() -> None:
    sizes = {path: len(path.read_text(encoding="utf-8").splitlines()) for _, path in _modules()}
    assert max(sizes.values()) <= 350, max(sizes, key=sizes.get)
    assert statistics.median(sizes.values()) <= 120


_RULE_CODE = re.compile(r"\bSH[0-9]{3}\b")
_ATEN_OP = re.compile(r"\baten::\w+")


def _code_strings(path: Path) -> list[str]:
    """String constants that are not docstrings (comments and docs may name ops; code must not)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docstrings]


@pytest.mark.parametrize("stage", ["detect", "trace", "attribute", "impact", "guard", "gate", "report", "compare",
                                   "fixes"])
def test_no_rule_code_or_op_name_outside_the_catalogue(stage: str) -> None:
    for path in sorted((PACKAGE / stage).rglob("*.py")):
        for text in _code_strings(path):
            assert not _RULE_CODE.search(text), f"{path.name} spells a rule code: {text!r}"
            assert not _ATEN_OP.search(text), f"{path.name} spells an aten op: {text!r}"
