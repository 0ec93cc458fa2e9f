"""Module names and imports: which module of the files linted together an imported name comes from.

A file's dotted name follows its package folders (those holding ``__init__.py``) up from it:
``sglang/srt/layers/sampler.py`` is ``sglang.srt.layers.sampler`` when ``sglang/`` and ``srt/`` are packages.
An import names a module (``import a.b as m``, ``from a import b`` where ``a.b`` is a module) or a name in one
(``from a.b import f``); relative imports are resolved against the importing module's package.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import NamedTuple

NAMESPACE_LEVELS = 12  # folders above a file's packages that may be namespace packages (PEP 420)
_PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def module_name(path: str | Path) -> tuple[str, bool]:
    """The dotted name of the module a file defines by its ``__init__.py`` folders, and whether it is a
    package's ``__init__``."""
    name, is_package, _ = module_names(path)
    return name, is_package


def module_aliases(path: str | Path) -> list[str]:
    """Longer names the module may be imported by, shortest first (see :func:`module_names`)."""
    return module_names(path)[2]


def module_names(path: str | Path) -> tuple[str, bool, list[str]]:
    """The module's name by its ``__init__.py`` folders, whether it is an ``__init__``, and the longer names
    it may be imported by, shortest first: the folders above its packages may be namespace packages (no
    ``__init__.py``: ``sglang/srt/layers/sampler.py`` is ``sglang.srt.layers.sampler``), so each folder name
    above is a possible prefix, up to the project's root (a folder with a ``pyproject.toml``, ``setup.py``,
    ``setup.cfg`` or ``.git``, which holds the packages) or a name that cannot be a package's."""
    parts, is_package, folder = _name_parts(Path(os.path.abspath(path)))  # `kv.py` from inside its package
    name = ".".join(parts)
    aliases = []
    for _ in range(NAMESPACE_LEVELS):
        if not folder.name.isidentifier() or _is_project_root(folder):
            break
        parts = [folder.name, *parts]
        aliases.append(".".join(parts))
        folder = folder.parent
    return name, is_package, aliases


def _is_project_root(folder: Path) -> bool:
    try:
        return any((folder / marker).exists() for marker in _PROJECT_MARKERS)
    except OSError:
        return True


def _name_parts(path: Path) -> tuple[list[str], bool, Path]:
    """The module's name parts, whether it is an ``__init__``, and the folder above its top package."""
    is_package = path.stem == "__init__"
    parts = [] if is_package else [path.stem]
    folder = path.parent
    try:
        while (folder / "__init__.py").is_file() and folder.name:
            parts.append(folder.name)
            folder = folder.parent
    except OSError:  # an unreadable folder ends the package: the name is what was found below it
        pass
    if not parts:  # an `__init__.py` outside any package folder chain
        parts = [path.parent.name or path.stem]
        folder = path.parent.parent
    return list(reversed(parts)), is_package, folder


class Imported(NamedTuple):
    """What a local name was imported as: ``module`` and, for ``from module import attr``, ``attr`` (which
    may itself be a submodule: :meth:`ProgramIndex.resolve` decides)."""

    module: str
    attr: str | None = None


def record_import(table: dict[str, Imported], node: ast.Import | ast.ImportFrom, module: str,
                  is_package: bool) -> None:
    """Add the names an import statement binds to ``table`` (a later import of a name wins, as it would at
    run time for the code after it; function-level imports name the same modules)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                table[alias.asname] = Imported(alias.name)
            else:  # `import a.b.c` binds `a`; `a.b.c.f(...)` is resolved from the chain
                root = alias.name.split(".")[0]
                table[root] = Imported(root)
        return
    base = absolute_module(module, is_package, node.module, node.level)
    if base is None:
        return
    for alias in node.names:
        if alias.name != "*":
            table[alias.asname or alias.name] = Imported(base, alias.name)


def modules_named(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """Every module an import statement may load: ``import a.b.c`` → ``a.b.c``; ``from a import b, *`` → ``a``
    and ``a.b`` (perhaps a submodule)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = absolute_module(module, is_package, node.module, node.level)
    if base is None:
        return []
    return [base, *(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")]


def absolute_module(module: str, is_package: bool, target: str | None, level: int) -> str | None:
    """The absolute name of ``from <level dots><target> import ...`` written in ``module``."""
    if level == 0:
        return target
    parts = module.split(".")
    package = parts if is_package else parts[:-1]
    if level - 1 > len(package):
        return None
    base = package[: len(package) - (level - 1)]
    if target:
        base = [*base, *target.split(".")]
    return ".".join(base) if base else None
