"""The bare decodes every decode benchmark measures synchunt against (one definition, imported by
parse_speed.py and by scale_analyze.py's child processes).

``bare_decode``: the fields synchunt keeps, its ``args`` decoded into structs (the project's own baseline).
``strict_decode``: every event's ``args`` kept raw (``msgspec.Raw``): the floor under any decoder that must at
least find each event's fields.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec


class BareArgs(msgspec.Struct):
    """The arguments synchunt keeps, decoded (the project's own baseline)."""

    correlation: int | None = None
    external_id: int | None = msgspec.field(default=None, name="External id")
    python_id: int | None = msgspec.field(default=None, name="Python id")
    python_parent_id: int | None = msgspec.field(default=None, name="Python parent id")
    input_type: msgspec.Raw = msgspec.field(default=None, name="Input type")
    concrete_inputs: msgspec.Raw = msgspec.field(default=None, name="Concrete Inputs")
    call_stack: str | None = msgspec.field(default=None, name="Call stack")
    stream: Any = None
    bytes: Any = None
    cuda_sync_kind: str | None = None
    name: Any = None


class BareEvent(msgspec.Struct):
    ph: str = ""
    name: str = ""
    cat: str = ""
    pid: Any = 0
    tid: Any = 0
    ts: float = 0.0
    dur: float = 0.0
    args: BareArgs | None = None


class StrictEvent(msgspec.Struct):
    """An event with its arguments kept raw: nothing but the event's own fields is parsed."""

    ph: str = ""
    name: str = ""
    cat: str = ""
    pid: int | str = 0
    tid: int | str = 0
    ts: float = 0.0
    dur: float = 0.0
    args: msgspec.Raw = msgspec.Raw(b"")


class BareFile(msgspec.Struct):
    traceEvents: list[BareEvent] = []


class StrictFile(msgspec.Struct):
    traceEvents: list[StrictEvent] = []


_STRICT_DECODER = msgspec.json.Decoder(StrictFile)
_BARE_DECODER = msgspec.json.Decoder(BareFile)


def strict_decode(path: Path | str) -> int:
    return len(_STRICT_DECODER.decode(Path(path).read_bytes()).traceEvents)


def bare_decode(path: Path | str) -> int:
    return len(_BARE_DECODER.decode(Path(path).read_bytes()).traceEvents)
