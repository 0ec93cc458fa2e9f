"""The analysis JSON contract, generated from the model's types: ``synchunt.analysis/3`` (``/2`` and ``/1`` are
read too: ``/3`` adds where a sync happens apart from the user's frame that led there (``via``), the phase, line
notes and notes, and lets ``ts_us`` be null for a sync only the runtime guard saw).

Decoding is typed (msgspec): a saved analysis with a missing or ill-typed field is refused with the field's path
(``$.syncs[3].rule``), never half-read.
"""

from __future__ import annotations

from typing import Any

import msgspec

from synchunt.attribute.model import Analysis, SiteSummary, Summary, Sync, TraceInfo
from synchunt.errors import TraceError
from synchunt.rules import RULES_BY_CODE
from synchunt.trace.model import text_fields_checked

SCHEMA = "synchunt.analysis/3"
SCHEMA_V2 = "synchunt.analysis/2"  # a /2 document is a /3 one without the fields /3 added (they have defaults)
SCHEMA_V1 = "synchunt.analysis/1"
SCHEMA_PREFIX = "synchunt.analysis/"


class AnalysisDocument(msgspec.Struct, frozen=True):
    schema: str
    traces: tuple[TraceInfo, ...]
    filters: dict[str, str]
    summary: Summary
    syncs: tuple[Sync, ...]
    call_sites: tuple[SiteSummary, ...]
    notes: tuple[str, ...] = ()  # what a reader must know to judge the counts (worked out again when read back)


class _Head(msgspec.Struct):
    schema: str = ""


_DECODER = msgspec.json.Decoder(AnalysisDocument)


def document(analysis: Analysis) -> AnalysisDocument:
    return AnalysisDocument(schema=SCHEMA, traces=analysis.traces, filters={k: str(v) for k, v in
                                                                            analysis.filters.items()},
                            summary=analysis.totals, syncs=analysis.records, call_sites=analysis.sites,
                            notes=analysis.notes)


def to_builtins(analysis: Analysis) -> dict[str, Any]:
    """The document as JSON-shaped Python objects (lists, dicts, str, numbers, None)."""
    return msgspec.json.decode(encode(analysis))


def encode(analysis: Analysis) -> bytes:
    """The document as strict JSON bytes (non-finite numbers are refused by the model's producers)."""
    return msgspec.json.encode(document(analysis))


def from_builtins(data: Any) -> Analysis:
    """An analysis from decoded JSON (``/2`` or ``/1``)."""
    if not isinstance(data, dict) or not str(data.get("schema", "")).startswith(SCHEMA_PREFIX):
        raise TraceError(f"not a synchunt analysis (expected schema {SCHEMA!r})")
    if data["schema"] == SCHEMA_V1:
        data = _upgrade_v2(_upgrade_v1(data))
    elif data["schema"] == SCHEMA_V2:
        data = _upgrade_v2(data)
    elif data["schema"] != SCHEMA:
        raise TraceError(f"unsupported analysis schema {data['schema']!r} (this synchunt reads {SCHEMA!r}, "
                         f"{SCHEMA_V2!r} and {SCHEMA_V1!r})")
    try:
        parsed = msgspec.convert(data, AnalysisDocument, strict=True)
    except msgspec.ValidationError as error:
        raise TraceError(f"saved analysis is malformed: {error}") from None
    return _checked(parsed)


def decode(raw: bytes) -> Analysis:
    """An analysis from JSON bytes written by :func:`encode` (or an older synchunt)."""
    try:
        head = msgspec.json.decode(raw, type=_Head)
    except (msgspec.DecodeError, msgspec.ValidationError) as error:
        raise TraceError(f"not a synchunt analysis ({error})") from None
    except RecursionError:
        raise TraceError(_TOO_DEEP) from None
    if head.schema == SCHEMA:
        try:
            parsed = _DECODER.decode(raw)
        except msgspec.ValidationError as error:
            raise TraceError(f"saved analysis is malformed: {error}") from None
        except msgspec.DecodeError as error:
            raise TraceError(f"saved analysis is not valid JSON ({error})") from None
        except RecursionError:
            raise TraceError(_TOO_DEEP) from None
        return _checked(parsed)
    try:
        data = msgspec.json.decode(raw)
    except msgspec.DecodeError as error:
        raise TraceError(f"saved analysis is not valid JSON ({error})") from None
    except RecursionError:
        raise TraceError(_TOO_DEEP) from None
    return from_builtins(data)


_TOO_DEEP = "saved analysis is malformed: nested too deeply (no field of an analysis nests more than a few levels)"


def _checked(parsed: AnalysisDocument) -> Analysis:
    """The analysis, once every sync names a rule this synchunt knows (every output looks its rule up)."""
    for number, sync in enumerate(parsed.syncs):
        if sync.rule not in RULES_BY_CODE:
            raise TraceError(f"saved analysis is malformed: unknown rule code {sync.rule[:40]!r} - at "
                             f"`$.syncs[{number}].rule` (written by a newer synchunt?)")
    # A saved analysis is untrusted like a trace: its capture metadata is checked the same way.
    traces = tuple(msgspec.structs.replace(info, synchunt=text_fields_checked(info.synchunt)) for info in parsed.traces)
    return Analysis(traces, parsed.syncs, dict(parsed.filters))


def _upgrade_v2(data: dict[str, Any]) -> dict[str, Any]:
    """``/2`` → ``/3``: a set-aside call named its thread as an object; /3 keeps the ids and the name."""
    traces = data.get("traces")
    if not isinstance(traces, list):
        return {**data, "schema": SCHEMA}  # validation will name the field
    upgraded = []
    for info in traces:
        items = info.get("set_aside") if isinstance(info, dict) else None
        if isinstance(items, list):
            info = {**info, "set_aside": [_set_aside_v2(item) for item in items]}
        upgraded.append(info)
    return {**data, "schema": SCHEMA, "traces": upgraded}


def _set_aside_v2(item: Any) -> Any:
    if not isinstance(item, dict) or not isinstance(item.get("thread"), dict):
        return item
    thread = item["thread"]
    rest = {key: value for key, value in item.items() if key != "thread"}
    return {"event": -1, "pid": thread.get("pid"), "tid": thread.get("tid"), **rest, "thread": thread.get("name", "")}


def _upgrade_v1(data: dict[str, Any]) -> dict[str, Any]:
    """``/1`` → ``/2``: a call site with no file becomes ``null``; v1 had no line source (its lines were the
    functions' first lines) and no measured impact."""
    if not isinstance(data.get("syncs"), list):
        return data  # validation will name the field
    syncs = []
    for sync in data["syncs"]:
        if not isinstance(sync, dict):
            syncs.append(sync)
            continue
        site = sync.get("call_site")
        if isinstance(site, dict):
            site = None if not site.get("file") else {**site, "line": site.get("line") or 0, "def_line":
                                                      site.get("line"), "line_source": "def"}
        # v1 named the waited-on work in one string; /2 measures it (impact), which a v1 file cannot supply.
        upgraded = {key: value for key, value in sync.items() if key != "waited_on"}
        syncs.append({"impact": None, **upgraded, "call_site": site})
    sites = []
    raw_sites = data.get("call_sites")
    for site in raw_sites if isinstance(raw_sites, list) else []:
        if isinstance(site, dict):
            site = {"key": f"{site.get('file')}:{site.get('function')}" if site.get("file") else "<no Python frame>",
                    "line_source": "def" if site.get("file") else None, **site}
        sites.append(site)
    filters = data.get("filters") or {}
    if isinstance(filters, dict):  # else validation names the field
        filters = {k: str(v) for k, v in filters.items()}
    return {**data, "schema": SCHEMA, "syncs": syncs, "filters": filters,
            "call_sites": sites if isinstance(raw_sites, list) or raw_sites is None else raw_sites}
