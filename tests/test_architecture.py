"""The structure the code promises: imports flow one way along the pipeline, modules stay small, and no stage
outside the catalogue spells a rule code or an aten op."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "synchunt"

DOC = PACKAGE.parent / "docs" / "architecture.md"


def _doc_table() -> tuple[set[str], dict[str, set[str]]]:
    """The leaves and the import table docs/architecture.md promises (its "Who may import whom" section)."""
    section = DOC.read_text(encoding="utf-8").split("## Who may import whom", 1)[1].split("\n## ", 1)[0]
    intro, table = section.split("| part |", 1)
    leaves = set(re.findall(r"`(\w+)`", intro.split("each part imports only")[0])) | {"synchunt"}
    allowed: dict[str, set[str]] = {}
    for row in table.splitlines()[2:]:
        if not row.startswith("|"):
            break
        part, may, _why = (cell.strip() for cell in row.strip("|").split("|"))
        names = set(re.findall(r"`(\w+)`", may))
        allowed[part.strip("`")] = {"*"} if may == "everything" else names
    return leaves, allowed


LEAVES, ALLOWED = _doc_table()


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


def test_the_table_is_tight() -> None:
    """Every edge the page allows is used: a stale allowance would hide the next one."""
    used: dict[str, set[str]] = {}
    for part, path in _modules():
        used.setdefault(part.removesuffix(".py"), set()).update(_imports(path))
    for part, allowed in ALLOWED.items():
        unused = allowed - {"*"} - used.get(part, set())
        assert not unused, f"docs/architecture.md lets {part} import {sorted(unused)}, which it does not"
    assert set(ALLOWED) | LEAVES >= set(used), sorted(set(used) - set(ALLOWED) - LEAVES)


def test_leaf_modules_import_only_leaves() -> None:
    for part, path in _modules():
        name = part.removesuffix(".py")
        if name in LEAVES and name != "synchunt":
            assert _imports(path) <= LEAVES, f"{path.name} imports {sorted(_imports(path) - LEAVES)}"


# A module a reader can hold in mind, but not fragments: below TINY lines a module is a renderer (one per format,
# found by the registry) or one of these.
TINY = 20
_TINY_ON_PURPOSE = {
    "__main__.py": "python -m synchunt",
    "modes.py": "the one Mode enum, a leaf both detect and the CLI import (start-up must not import detect)",
    "rules/catalogue/refs.py": "the documentation links four catalogue series cite; none of them owns them",
}


def test_modules_neither_too_big_nor_fragments() -> None:
    sizes = {path: len(path.read_text(encoding="utf-8").splitlines()) for _, path in _modules()}
    assert max(sizes.values()) <= 400, max(sizes, key=sizes.get)
    fragments = [str(path.relative_to(PACKAGE)) for path, size in sizes.items()
                 if size < TINY and path.name != "__init__.py"
                 and str(path.relative_to(PACKAGE)) not in _TINY_ON_PURPOSE
                 and "RENDERER = Renderer(" not in path.read_text(encoding="utf-8")]
    assert not fragments, f"fold these into the module a reader would look in: {fragments}"


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


# A rule code in help text as an example of the syntax the user types is not a private rule list.
_SYNTAX_EXAMPLE = re.compile(r"\(e\.g\. SH[0-9]{3}\)|\(SH[0-9]{3}, SH[0-9]\)")


@pytest.mark.parametrize("path", [p for _, p in _modules() if p.relative_to(PACKAGE).parts[0] != "rules"],
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_rule_code_or_op_name_outside_the_catalogue(path: Path) -> None:
    for text in _code_strings(path):
        assert not _RULE_CODE.search(_SYNTAX_EXAMPLE.sub("", text)), f"{path.name} spells a rule code: {text!r}"
        assert not _ATEN_OP.search(text), f"{path.name} spells an aten op: {text!r}"


# Renderers lay out what the models hold; grouping (per site, scope, thread, context) belongs to the model.
# These two group what is only layout: JUnit suites per file, and the timeline's drawing lanes.
_LAYOUT_GROUPING = {"render/junit_xml.py", "render/html/timeline.py"}
_GROUPING = re.compile(r"\.setdefault\(|\bdefaultdict\(|\.groupby\(|\bitertools\.groupby\b")


@pytest.mark.parametrize("path", sorted((PACKAGE / "render").rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_renderers_group_nothing(path: Path) -> None:
    if str(path.relative_to(PACKAGE)) in _LAYOUT_GROUPING:
        return
    found = [line for line in path.read_text(encoding="utf-8").splitlines() if _GROUPING.search(line)]
    assert not found, f"{path.relative_to(PACKAGE)} groups in the renderer (give the model the grouping): {found}"
