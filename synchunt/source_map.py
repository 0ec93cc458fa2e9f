"""Where the files of a run live, and one canonical path per file (standard library only).

A file is library code because of where it lives (the standard library, a site-packages folder) or because its
module belongs to a skipped package, never because of its name: a user's ``myserve/queue.py`` is user code.
The canonical path of a file is relative to the project root (``myserve/sched.py``), so a target named as a
module or as a file, and the trace and the runtime guard, all name it the same.

The capture records a :class:`SourceMap` in the trace's ``synchunt`` metadata: the project root, the import
search path with the kind of each entry, and the trace's names of the user's files (with their modules).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import site
import sys
import sysconfig
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

STDLIB = "stdlib"
SITE_PACKAGES = "site-packages"
USER = "user"
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
SOURCE_MAP_KEY = "sources"  # under the trace's synchunt metadata


class SearchEntry(msgspec.Struct, frozen=True):
    """One folder that file names are made relative to (a ``sys.path`` entry or the project root)."""

    path: str
    kind: str  # STDLIB, SITE_PACKAGES or USER


@functools.cache
def _stdlib_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple(sorted({os.path.abspath(paths["stdlib"]), os.path.abspath(paths["platstdlib"])}))


@functools.cache
def _site_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    found = {paths["purelib"], paths["platlib"], site.getusersitepackages()}
    with contextlib.suppress(AttributeError):  # some embedded or old virtualenv layouts lack it
        found.update(site.getsitepackages())
    return tuple(sorted(os.path.abspath(p) for p in found))


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def location_kind(path: str) -> str:
    """STDLIB, SITE_PACKAGES or USER for an absolute file or folder, by where it lives."""
    path = os.path.abspath(path)
    parts = Path(path).parts
    if "site-packages" in parts or "dist-packages" in parts or any(_under(path, d) for d in _site_dirs()):
        return SITE_PACKAGES
    if any(_under(path, d) for d in _stdlib_dirs()) or path.endswith(".zip"):
        return STDLIB
    return USER


def search_entries(paths: Iterable[str]) -> tuple[SearchEntry, ...]:
    """Absolute, de-duplicated entries with their kinds, longest first (as the profiler tries them)."""
    unique = sorted({os.path.abspath(p or os.curdir) for p in paths}, reverse=True)
    return tuple(SearchEntry(p, location_kind(p)) for p in unique)


def profiler_search_path() -> list[str]:
    """The folders torch.profiler strips from frame file names: ``sys.path``, the site folders, torch's parent."""
    extra = [*_site_dirs(), site.getuserbase()]
    torch = sys.modules.get("torch")
    torch_file = getattr(torch, "__file__", None)
    if isinstance(torch_file, str):
        extra.append(os.path.dirname(os.path.dirname(torch_file)))
    return [p for p in [*sys.path, *extra] if isinstance(p, str)]


def naming_path(project_root: str, entries: Sequence[SearchEntry]) -> list[str]:
    """The ``sys.path`` to name frames by: library folders, user folders outside the project, the project root.

    User folders inside the project (a file target's own folder, ``src/``) are left out, so every project file is
    named relative to the root, whichever way it was imported.
    """
    root = os.path.abspath(project_root)
    kept = [e.path for e in entries if e.kind != USER or not _under(e.path, root) or e.path == root]
    return [*kept, root]


def trace_name(file: str, prefixes: Iterable[str]) -> str:
    """A file as the profiler names it: relative to the longest prefix that contains it, else absolute."""
    file = os.path.abspath(file)
    best = max((p for p in prefixes if _under(file, p) and file != p), key=len, default=None)
    name = file if best is None else file[len(best.rstrip(os.sep)) + 1:]
    return name.replace(os.sep, "/")


def canonical_path(file: str, project_root: str, entries: Sequence[SearchEntry]) -> str:
    """The name outputs use for a live file (e.g. from the runtime guard): the trace's name for it."""
    if not file or file.startswith("<"):
        return file
    return trace_name(file, naming_path(project_root, entries))


_LINE_BREAKS = re.compile(r"\r\n|\r|\n")


def parser_lines(source: str) -> list[str]:
    """``source``'s lines as the Python parser numbers them (`str.splitlines` also splits at form feeds and other
    separators, which would shift every line number after one)."""
    return _LINE_BREAKS.split(source)


def find_project_root(file: str | os.PathLike[str], *, module: str | None = None,
                      cwd: str | os.PathLike[str] | None = None) -> Path:
    """The project a source file belongs to, independent of how it was named.

    The nearest folder above it holding ``pyproject.toml``, ``setup.py``, ``setup.cfg`` or ``.git``; else the
    folder its top-level package is imported from (from the dotted ``module`` name, or the chain of
    ``__init__.py`` folders); else, for a file outside any package, the working directory when the file is
    inside it, or the file's own folder.
    """
    path = Path(os.path.abspath(file))
    for folder in path.parents:
        if any((folder / marker).exists() for marker in PROJECT_MARKERS):
            return folder
    if module and "." in module:
        depth = module.count(".") + (1 if path.name == "__init__.py" else 0)
        return path.parents[min(depth, len(path.parents) - 1)]
    folder = path.parent
    while (folder / "__init__.py").exists() and folder.parent != folder:
        folder = folder.parent
    if folder != path.parent:
        return folder
    here = Path(os.path.abspath(cwd if cwd is not None else os.getcwd()))
    return here if here in path.parents else path.parent


class SourceMap(msgspec.Struct, frozen=True):
    """What a capture knew about its files: project root, search path, the user's files by trace name, and a
    digest of each as it was when captured (a file edited since then no longer says what ran)."""

    project_root: str
    search_path: tuple[SearchEntry, ...] = ()
    user_files: Mapping[str, str] = msgspec.field(default_factory=dict)  # trace name → module name
    digests: Mapping[str, str] = msgspec.field(default_factory=dict)  # trace name → file_digest at capture

    def module_of(self, name: str) -> str | None:
        return self.user_files.get(name)

    def kind_of(self, name: str) -> str | None:
        """USER for the capture's user files; else the kind of the first search folder (longest first, as the
        profiler strips the longest prefix) that holds a file of that name on this machine; None when none does
        (the trace was moved): the caller then judges by name."""
        if name in self.user_files:
            return USER
        if os.path.isabs(name):
            return location_kind(name)
        for entry in self.search_path:
            if os.path.isfile(os.path.join(entry.path, name)):
                return entry.kind
        return None

    def canonical(self, file: str) -> str:
        return canonical_path(file, self.project_root, self.search_path)

    def to_json(self) -> dict[str, Any]:
        return {"project_root": self.project_root,
                "search_path": [{"path": e.path, "kind": e.kind} for e in self.search_path],
                "user_files": dict(sorted(self.user_files.items())),
                "digests": dict(sorted(self.digests.items()))}

    @classmethod
    def from_metadata(cls, synchunt_metadata: Mapping[str, Any] | None) -> SourceMap | None:
        """The map a capture stored under ``synchunt.sources``; None for traces without one (or a malformed one)."""
        data = (synchunt_metadata or {}).get(SOURCE_MAP_KEY)
        if not isinstance(data, dict) or not isinstance(data.get("project_root"), str):
            return None
        files = data.get("user_files")
        entries = data.get("search_path")
        if not isinstance(files, dict) or not isinstance(entries, list):
            return None
        search = tuple(SearchEntry(str(e["path"]), str(e["kind"])) for e in entries
                       if isinstance(e, dict) and "path" in e and "kind" in e)
        digests = data.get("digests")
        digests = {str(k): v for k, v in digests.items() if isinstance(v, str)} if isinstance(digests, dict) else {}
        return cls(data["project_root"], search, {str(k): str(v) for k, v in files.items()}, digests)


def module_files(modules: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Absolute source file → module name for every loaded module that has one."""
    found: dict[str, str] = {}
    for name, module in list((modules if modules is not None else sys.modules).items()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and file.endswith(".py"):
            found.setdefault(os.path.abspath(file), name)
    return found


def build_source_map(project_root: str, *, library_packages: Sequence[str], user_packages: Sequence[str] = (),
                     search_path: Iterable[str] | None = None, modules: Mapping[str, Any] | None = None,
                     as_imported: Mapping[str, str] | None = None) -> SourceMap:
    """The map for the files loaded now: each is user code unless it lives in the standard library or a
    site-packages folder (a ``user_packages`` package counts as user code wherever it is installed) or its
    module belongs to ``library_packages``. ``as_imported``: absolute file → its digest when its module was
    imported (what ran), preferred to the file's digest now."""
    entries = search_entries([*(search_path if search_path is not None else profiler_search_path()), project_root])
    prefixes = naming_path(project_root, entries)

    def top(module: str) -> str:
        return module.split(".", 1)[0]

    user: dict[str, str] = {}
    digests: dict[str, str] = {}
    for file, module in module_files(modules).items():
        # synchunt's own files are never the user's, whatever module name they run under (the capture's child
        # process runs synchunt.capture.isolated as __main__).
        if top(module) in library_packages or _under(file, _SYNCHUNT_PACKAGE):
            continue
        if location_kind(file) != USER and top(module) not in user_packages:
            continue
        name = trace_name(file, prefixes)
        user[name] = module
        digest = (as_imported or {}).get(file) or file_digest(file)
        if digest is not None:
            digests[name] = digest
    return SourceMap(os.path.abspath(project_root), entries, user, digests)


_SYNCHUNT_PACKAGE = os.path.dirname(os.path.abspath(__file__))
MAX_SOURCE_BYTES = 4 << 20  # a source file, not a data file named .py


def source_roots(metadata: Iterable[Mapping[str, Any]]) -> list[str]:
    """The folders captures named their files relative to: each project root, then its search path."""
    roots: list[str] = []
    for meta in metadata:
        sources = SourceMap.from_metadata(meta)
        if sources is not None:
            roots += [sources.project_root, *(entry.path for entry in sources.search_path)]
    return list(dict.fromkeys(roots))


def find_source(name: str, roots: Iterable[str] = (), recorded: Collection[str] | None = None) -> str | None:
    """The readable ``.py`` file a trace's frame name stands for: as named, under one of ``roots``, or under the
    working directory; ``None`` otherwise (a trace from another machine, a file that moved, not Python source).
    Only regular ``.py`` files up to :data:`MAX_SOURCE_BYTES` qualify, so a hostile trace cannot make synchunt
    read arbitrary local files. ``recorded``: the digests the captures took of the file (`recorded_digests`);
    when given, a file whose content is none of them is edited since, and its lines are not the ones that ran."""
    if not name.endswith(".py") or name.startswith("<"):
        return None
    candidates = [name] if os.path.isabs(name) else [*(os.path.join(root, name) for root in roots), name]
    for candidate in candidates:
        try:
            if os.path.isfile(candidate) and os.path.getsize(candidate) <= MAX_SOURCE_BYTES:
                if recorded and file_digest(candidate) not in recorded:
                    continue
                return os.path.abspath(candidate)
        except OSError:
            continue
    return None


class CapturedSources(NamedTuple):
    """Where captures' files are read from (``roots``) and what each held when captured (``digests``)."""

    roots: tuple[str, ...] = ()
    digests: Mapping[str, Collection[str]] = {}

    def find(self, name: str) -> str | None:
        """The file a frame name stands for, as it was when captured (`find_source`)."""
        return find_source(name, self.roots, self.digests.get(name))


def captured_sources(metadata: Iterable[Mapping[str, Any]]) -> CapturedSources:
    listed = list(metadata)
    return CapturedSources(tuple(source_roots(listed)), recorded_digests(listed))


def recorded_digests(metadata: Iterable[Mapping[str, Any]]) -> dict[str, set[str]]:
    """Trace name → the digests the captures recorded of that file (empty for traces without them)."""
    found: dict[str, set[str]] = {}
    for meta in metadata:
        sources = SourceMap.from_metadata(meta)
        if sources is not None:
            for name, digest in sources.digests.items():
                found.setdefault(name, set()).add(digest)
    return found


def file_digest(path: str) -> str | None:
    """A digest of a source file's bytes (``None`` when it cannot be read, or is no source file's size)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if info.st_size > MAX_SOURCE_BYTES:
        return None
    return _digest(os.path.abspath(path), info.st_mtime_ns, info.st_size)


@functools.lru_cache(maxsize=4096)
def _digest(path: str, mtime_ns: int, size: int) -> str | None:  # keyed by the file's state: read once per state
    try:
        with open(path, "rb") as handle:
            return hashlib.blake2b(handle.read(MAX_SOURCE_BYTES + 1), digest_size=16).hexdigest()
    except OSError:
        return None
