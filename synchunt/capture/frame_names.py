"""The trace's Python frame names made canonical after torch wrote them.

torch names a frame's file relative to the longest ``sys.path`` entry that holds it, from a prefix list it reads
once per process, at the first profiled window with Python stacks (``ValueCache::trimPrefixes`` keeps it in a
function-local static). The capture sets ``sys.path`` to its naming path around the profiler's calls
(`synchunt.capture.native`), which holds only when no profiler ran earlier in the process: after a notebook cell,
a test or another capture profiled with other entries on ``sys.path``, the trace names ``sched.py`` a file the
runtime guard and the source map name ``myserve/sched.py``. The two then disagree on every sync: the guard's
lines are set aside as another path's, and the trace's files are not the project's.

So after the profiler wrote its trace, each distinct file its ``python_function`` events name is checked: a name
the naming path gives back unchanged stays; any other is resolved to the one loaded module file it ends with (or
taken as it is when absolute) and renamed to that file's canonical name.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Sequence

# A Python frame event as Kineto writes it: category, then name ``file(line): function``.
_PYTHON_FRAME = re.compile(rb'("cat":\s*"python_function",\s*"name":\s*")((?:[^"\\]|\\.)*?)(\(\d+\): )')


def frame_file_resolver(naming: Sequence[str], loaded_files: Iterable[str],
                        canonical: Callable[[str], str]) -> Callable[[str], str]:
    """A function from a file name as the trace gives it to the name the capture's outputs use.

    ``naming``: the folders torch was asked to name files relative to; ``loaded_files``: absolute files of the
    modules loaded; ``canonical``: an absolute file's canonical name (`synchunt.source_map.SourceMap.canonical`).
    A name that no loaded file ends with, or that two do, is left as it is."""
    tails: dict[str, list[str]] = {}
    for file in loaded_files:
        parts = os.path.abspath(file).replace(os.sep, "/").split("/")
        for start in range(1, len(parts)):
            tails.setdefault("/".join(parts[start:]), []).append(file)

    def resolve(name: str) -> str:
        if not name or name.startswith("<"):
            return name
        if os.path.isabs(name):
            return canonical(name)
        # Named as the naming path names it: joined back onto an entry, it is a file with this very name.
        if any(os.path.isfile(path) and canonical(path) == name
               for path in (os.path.join(entry, name) for entry in naming)):
            return name
        found = tails.get(name.replace(os.sep, "/"), [])
        return canonical(found[0]) if len(set(found)) == 1 else name

    return resolve


def rename_frame_files(body: bytes, rename: Callable[[str], str]) -> bytes:
    """``body`` (a Kineto JSON trace) with each ``python_function`` event's file renamed by ``rename``; the same
    bytes when no name changes."""
    names = {raw for _, raw, _ in _PYTHON_FRAME.findall(body)}
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
