"""The target code as this process imported it: a digest of each module file when it was (re)loaded.

Python keeps the first module it imports under a name. In a long-lived process (a notebook, a test session), a
file edited after that still runs as it was, under the new file's line numbers; a capture must refuse that, and
its source map must record the file as it ran, not as it is when the capture ends. Every module a target's
import loads is remembered with the digest of its file at that moment; a reload (IPython's ``%autoreload``)
gives the module a new spec, and the digest is taken again.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

from synchunt.errors import TargetError
from synchunt.source_map import file_digest

# absolute file → (module name, id of the module's spec when the digest was taken, digest)
_SEEN: dict[str, tuple[str, int, str]] = {}


def remember(names: Iterable[str]) -> None:
    """Record the files of these loaded modules as they are now."""
    for name in names:
        module = sys.modules.get(name)
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and file.endswith(".py"):
            digest = file_digest(file)
            if digest is not None:
                _SEEN[os.path.abspath(file)] = (name, id(getattr(module, "__spec__", None)), digest)


def check_unedited(package: str | None = None, folder: Path | None = None) -> None:
    """Refuse to run code a package (its top-level name), or the modules of a folder, had when edited since this
    process imported it; a module reloaded since is taken as it is now."""
    for file, (name, spec, digest) in list(_SEEN.items()):
        module = sys.modules.get(name)
        current = getattr(module, "__file__", None)
        if not isinstance(current, str) or os.path.abspath(current) != file:
            continue  # no longer the module loaded under that name
        if not (name.split(".", 1)[0] == package or (folder is not None and Path(file).parent == folder)):
            continue
        if id(getattr(module, "__spec__", None)) != spec:  # reloaded: what runs is what was read then
            remember([name])
            continue
        now = file_digest(file)
        if now is not None and now != digest:
            raise TargetError(f"{file} was edited after this process imported it (as {name!r}): the code in memory "
                              "is the old one; run synchunt in a fresh process")


def digests_as_imported() -> dict[str, str]:
    """Absolute file → its digest when imported, for the files remembered (what a capture's source map records
    of them)."""
    return {file: digest for file, (_, _, digest) in _SEEN.items()}
