"""Importing a target's code: ``package.module:function`` or ``path/to/file.py:function``.

Both forms of one file give the same module (a file inside a package is imported as its dotted module, with the
package's parent on ``sys.path``), so its frames, its call sites and the trace's name agree either way.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synchunt.capture import as_imported
from synchunt.errors import TargetError
from synchunt.files import same_file


@dataclass(frozen=True)
class LoadedModule:
    module: Any
    name: str  # the dotted module name, or the file's stem for a standalone file
    file: Path | None  # its source file, when it has one


def is_file_spec(module_part: str) -> bool:
    return module_part.endswith(".py") or "/" in module_part or "\\" in module_part


def load_module(module_part: str) -> LoadedModule:
    """Import ``myserve.sched`` (from the working directory or ``sys.path``) or ``myserve/sched.py``."""
    if is_file_spec(module_part):
        return _load_file(Path(module_part))
    parts = module_part.split(".")
    imported_before = any(".".join(parts[:end]) in sys.modules for end in range(1, len(parts) + 1))
    loaded = _import(module_part)
    here = _source_in(Path(os.getcwd()), module_part)
    if here is not None and loaded.file is not None and not same_file(loaded.file, here):
        # The working directory's module is what `python -m` would run; Python handed back another one: profiling
        # it would measure other code than the user's.
        why = ("a module or package of that name was imported earlier in this process (another project's, in a "
               "notebook or a test session); run synchunt in a fresh process") if imported_before else (
               "an earlier sys.path entry holds that name; put the working directory first on sys.path")
        raise TargetError(f"{module_part!r} imports from {loaded.file}, but the working directory holds {here}: "
                          f"{why}")
    return loaded


def _source_in(folder: Path, dotted: str) -> Path | None:
    """The source file ``dotted`` names inside ``folder`` (``a/b.py`` or ``a/b/__init__.py``), if there is one."""
    base = folder.joinpath(*dotted.split("."))
    for candidate in (base / "__init__.py", base.with_suffix(".py")):  # a package wins, as in Python's finder
        if candidate.is_file():
            return Path(os.path.abspath(candidate))
    return None


def package_root(file: Path) -> tuple[Path, str | None]:
    """(the folder to import from, the dotted module name) for a file; no name for a file outside a package."""
    folder = file.parent
    parts = [file.stem] if file.name != "__init__.py" else []
    while (folder / "__init__.py").exists() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    dotted = ".".join(parts)
    if file.parent == folder or not all(p.isidentifier() for p in parts):
        return file.parent, None
    return folder, dotted


def _on_path(folder: Path) -> None:
    entry = str(folder)
    if not any(os.path.abspath(p or os.curdir) == entry for p in sys.path):
        sys.path.insert(0, entry)


def _import(name: str) -> LoadedModule:
    _on_path(Path(os.getcwd()))  # as `python -m` has it: the working directory's packages are importable
    loaded_before = set(sys.modules)
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as error:
        top = name.split(".", 1)[0]
        hint = ""
        if error.name == top or error.name == name:
            hint = (f" (looked in the working directory {os.getcwd()} and on sys.path; run synchunt from the folder "
                    f"that holds {top}/, or name the file: path/to/{name.replace('.', '/')}.py:FUNCTION)")
        raise TargetError(f"cannot import {name!r}: {error}{hint}") from None
    except Exception as error:
        raise TargetError(f"importing {name} failed: {type(error).__name__}: {error}") from None
    as_imported.remember(set(sys.modules) - loaded_before)
    as_imported.check_unedited(package=name.split(".", 1)[0])
    file = getattr(module, "__file__", None)
    return LoadedModule(module, name, Path(os.path.abspath(file)) if isinstance(file, str) else None)


def _load_file(path: Path) -> LoadedModule:
    if not path.is_file():
        raise TargetError(f"no such file: {path}")
    absolute = Path(os.path.abspath(path))
    folder, dotted = package_root(absolute)
    if dotted is not None:
        _on_path(folder)
        loaded = _import(dotted)
        if loaded.file != absolute:
            raise TargetError(f"{path} imports as {dotted!r} from {folder}, but that name is {loaded.file}")
        return loaded
    module_name = "synchunt_target_" + re.sub(r"\W", "_", absolute.stem)
    spec = importlib.util.spec_from_file_location(module_name, absolute)
    if spec is None or spec.loader is None:
        raise TargetError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    # The file's folder on sys.path, as `python file.py` would have it, for its sibling imports.
    _on_path(absolute.parent)
    loaded_before = set(sys.modules)
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        raise TargetError(f"importing {path} failed: {type(error).__name__}: {error}") from None
    # The file itself runs anew each time; its siblings (`import helper`) are the modules Python keeps.
    as_imported.remember([*(set(sys.modules) - loaded_before), module_name])
    as_imported.check_unedited(folder=absolute.parent)
    return LoadedModule(module, absolute.stem, absolute)
