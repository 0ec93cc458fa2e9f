"""Write the original trace plus the synchunt track, without touching the source and never half a file.

The original events go through as they are, byte for byte: the top-level object is split into its members
with ``msgspec.Raw`` (no event is decoded), the synchunt events are spliced in before ``traceEvents`` closes,
and the result is written, gzip-compressed when the output name ends in ``.gz``, to a temporary file beside
the output that is renamed over it once complete.
"""

from __future__ import annotations

import gzip
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from synchunt.annotate.model import SyncMark
from synchunt.annotate.track import track_events
from synchunt.errors import TraceError, UsageError
from synchunt.files import output_mode
from synchunt.trace.decode import read_bytes

_TOP = msgspec.json.Decoder(dict[str, msgspec.Raw])


class _FlowId(msgspec.Struct):
    ph: Any = None
    id: Any = None


_FLOW_IDS = msgspec.json.Decoder(list[_FlowId])
_CHUNK = 1 << 22


def write_annotated(source: Path, out: Path, marks: Sequence[SyncMark], *, force: bool = False) -> Path:
    """Write ``source``'s events plus the synchunt track for ``marks`` to ``out``; return ``out``.

    ``UsageError`` when ``out`` is the source (never overwritten), a folder, or exists without ``force``;
    ``TraceError`` when the source is not a trace-event JSON object.
    """
    source, out = Path(source), Path(out)
    _check_target(source, out, force=force)
    data = read_bytes(source)
    try:
        members = _TOP.decode(data)
    except msgspec.DecodeError as error:
        raise TraceError(f"{source}: not a trace-event JSON object ({error})") from None
    raw_events = members.get("traceEvents")
    if raw_events is None:
        raise TraceError(f"{source}: not a Kineto trace (no traceEvents)")
    body = bytes(raw_events).rstrip()
    if not body.startswith(b"[") or not body.endswith(b"]"):
        raise TraceError(f"{source}: traceEvents is not a list")
    added = msgspec.json.encode(track_events(marks, _first_free_flow_id(body)))[1:-1]
    inner = body[1:-1].strip()
    events = b"[" + inner + (b"," if inner and added else b"") + added + b"]"
    _write_atomically(out, _assemble(members, events))
    return out


def _check_target(source: Path, out: Path, *, force: bool) -> None:
    if out.resolve() == source.resolve() or (out.exists() and source.exists() and os.path.samefile(out, source)):
        raise UsageError(f"{out} is the source trace; choose another output name (the source is never replaced)")
    if out.is_dir():
        raise UsageError(f"{out} is a folder; give the annotated trace a file name")
    if out.exists() and not force:
        raise UsageError(f"{out} exists; pass --force to replace it, or choose another name")


def _first_free_flow_id(events: bytes) -> int:
    """One above the largest integer flow id in the trace (Kineto's launch arrows use correlation ids)."""
    try:
        parsed = _FLOW_IDS.decode(events)
    except msgspec.DecodeError as error:
        raise TraceError(f"not a trace-event list ({error})") from None
    ids = [e.id for e in parsed if e.ph in ("s", "t", "f") and isinstance(e.id, int) and not isinstance(e.id, bool)]
    return max(ids, default=0) + 1


def _assemble(members: dict[str, msgspec.Raw], events: bytes) -> list[bytes]:
    parts = [b"{"]
    for number, (key, value) in enumerate(members.items()):
        parts.append((b"," if number else b"") + msgspec.json.encode(key) + b":")
        parts.append(events if key == "traceEvents" else bytes(value))
    parts.append(b"}")
    return parts


def _write_atomically(out: Path, parts: list[bytes]) -> None:
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    except OSError as error:
        raise UsageError(f"cannot write {out}: {error.strerror or error}") from None
    try:
        with os.fdopen(handle, "wb") as raw:
            stream: Any = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) \
                if out.name.endswith(".gz") else raw
            for part in parts:
                for start in range(0, len(part), _CHUNK):
                    stream.write(part[start:start + _CHUNK])
            if stream is not raw:
                stream.close()
        os.chmod(temporary, output_mode(out))  # as every other output: not the temporary file's owner-only mode
        os.replace(temporary, out)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise UsageError(f"cannot write {out}: {error.strerror or error}") from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
