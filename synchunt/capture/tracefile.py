"""Where a capture's trace goes (a new file per run, named after the target) and how its metadata is spliced in."""

from __future__ import annotations

import datetime as _dt
import gzip
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from synchunt.capture.frame_names import rename_frame_files
from synchunt.errors import TargetError
from synchunt.trace.vocab import SYNCHUNT_METADATA_KEY

TRACE_SUFFIX = ".pt.trace.json.gz"


def trace_stem(title: str) -> str:
    """``hicache-dcp masked`` → ``hicache-dcp-masked``; ``myserve.sched:step`` → ``myserve.sched.step``."""
    stem = title.replace(" ", "-").replace(":", ".")
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", stem).strip("._-") or "target"


def unique_trace_path(out_dir: Path, title: str, now: _dt.datetime | None = None) -> Path:
    """``<out>/<stem>-<YYYYmmdd-HHMMSS>.pt.trace.json.gz``, with ``-1``, ``-2`` … rather than overwrite a capture."""
    stamp = (now or _dt.datetime.now()).strftime("%Y%m%d-%H%M%S")
    base = f"{trace_stem(title)}-{stamp}"
    candidate = out_dir / f"{base}{TRACE_SUFFIX}"
    counter = 1
    while candidate.exists():
        candidate = out_dir / f"{base}-{counter}{TRACE_SUFFIX}"
        counter += 1
    return candidate


def write_gzip_with_metadata(raw_path: Path, final: Path, metadata: dict[str, Any],
                             frame_files: Callable[[str], str] | None = None) -> None:
    """Splice synchunt's key in as the first member of the trace's top-level object (no re-serializing);
    ``frame_files`` renames the files of the Python frame events (see `synchunt.capture.frame_names`)."""
    body = raw_path.read_bytes().lstrip()
    if frame_files is not None:
        body = rename_frame_files(body, frame_files)
    if not body.startswith(b"{"):
        raise TargetError("the profiler wrote an unexpected trace layout")
    try:
        encoded = json.dumps(metadata, allow_nan=False).encode()
    except ValueError as error:  # strict JSON: a NaN option value would make the trace unreadable elsewhere
        raise TargetError(f"capture metadata is not plain JSON: {error}") from None
    header = b'{"' + SYNCHUNT_METADATA_KEY.encode() + b'": ' + encoded + b",\n"
    with gzip.open(final, "xb", compresslevel=6) as handle:  # "x": never overwrite an earlier capture
        handle.write(header)
        handle.write(body[1:])
