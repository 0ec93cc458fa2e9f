"""The trace's Python frame names made canonical after torch wrote them.

torch names a frame's file relative to the longest ``sys.path`` entry that holds it, from a prefix list it reads
once per process, at the first profiled window with Python stacks (``ValueCache::trimPrefixes`` keeps it in a
function-local static). The capture sets ``sys.path`` to its naming path around the profiler's calls
(`synchunt.capture.native`), which holds only when no profiler ran earlier in the process: after a notebook cell,
a test or another capture profiled with other entries on ``sys.path``, the trace names ``sched.py`` a file the
runtime guard and the source map name ``myserve/sched.py``. The two then disagree on every sync: the guard's
lines are set aside as another path's, and the trace's files are not the project's.

So after the profiler wrote its trace, each distinct file its ``python_function`` events name is checked. A name
that is some loaded file's canonical name stays. Any other is resolved to the one loaded module file it ends with,
the user's files first (library folders are on every ``sys.path``, so mostly the project's names go stale), and
renamed to that file's canonical name. A name two files could end with is left as it is.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable

from synchunt.source_map import USER, location_kind

# A Python frame event as Kineto writes it: category, then name ``file(line): function``; the file runs to the
# last ``(line): `` of the name, as the trace's readers split it (`synchunt.sites.Frame.from_kineto_name`).
_PYTHON_FRAME = re.compile(rb'("cat":\s*"python_function",\s*"name":\s*")((?:[^"\\]|\\.)*)(\(\d+\): )')


def frame_file_resolver(loaded_files: Iterable[str], canonical: Callable[[str], str]) -> Callable[[str], str]:
    """A function from a file name as the trace gives it to the name the capture's outputs use.

    ``loaded_files``: absolute files of the modules loaded; ``canonical``: an absolute file's canonical name
    (`synchunt.source_map.SourceMap.canonical`)."""
    files = [os.path.abspath(file) for file in loaded_files]
    named = {canonical(file) for file in files}  # what a fresh prefix list names the loaded files
    user = _by_tail(file for file in files if location_kind(file) == USER)
    every = _by_tail(files)

    def resolve(name: str) -> str:
        if not name or name.startswith("<"):
            return name
        if os.path.isabs(name):
            return canonical(name)
        if name in named:  # a loaded file's own name (`textwrap.py` of the standard library): not stale
            return name
        tail = name.replace(os.sep, "/")
        found = user.get(tail) or every.get(tail) or set()
        return canonical(next(iter(found))) if len(found) == 1 else name

    return resolve


def _by_tail(files: Iterable[str]) -> dict[str, set[str]]:
    """Each file under every name a prefix list could leave of it (``a/b/c.py``: ``b/c.py``, ``c.py``, …)."""
    tails: dict[str, set[str]] = {}
    for file in files:
        parts = file.replace(os.sep, "/").split("/")
        for start in range(1, len(parts)):
            tails.setdefault("/".join(parts[start:]), set()).add(file)
    return tails


def rename_frame_files(body: bytes, rename: Callable[[str], str]) -> bytes:
    """``body`` (a Kineto JSON trace) with each ``python_function`` event's file renamed by ``rename``; the same
    bytes when no name changes."""
    names = {match[2] for match in _PYTHON_FRAME.finditer(body)}
    replaced: dict[bytes, bytes] = {}
    for raw in names:
        try:
            file = json.loads(b'"' + raw + b'"')
        except ValueError:
            continue
        new = rename(file)
        if new != file:
            replaced[raw] = json.dumps(new)[1:-1].encode()
    if not replaced:
        return body
    return _PYTHON_FRAME.sub(lambda m: m[1] + replaced.get(m[2], m[2]) + m[3], body)
