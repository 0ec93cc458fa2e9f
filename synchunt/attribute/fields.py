"""How each field of a sync reaches people: the one table every output reads.

A field of :class:`~synchunt.attribute.model.Sync` is declared here once, with its columns (the DataFrame view and
CSV) and how a call site summarizes it (a line of the site's ``details``, which the terminal table and the HTML
page print as they are). JSON follows from the model's types. ``tests/attribute/test_fields.py`` fails when a
field of the model has no entry here, and renders a sync whose every field holds a marked value in every format,
so a format that leaves a field out fails too.

``place`` says where a site shows the field: ``detail`` (a line of its details, left out when every sync holds
the field's quiet value), ``heading`` (the site's label: where it happens, via what), ``column`` (a figure of its
own: count, stall, idle, delay, rule) or ``header`` (once per trace).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any, Literal

import msgspec

from synchunt.attribute.model import CallSite, Sync
from synchunt.sites import compress_scopes, scope_label

Place = Literal["detail", "heading", "column", "header"]


class Column(msgspec.Struct, frozen=True):
    """One DataFrame/CSV column of a field: its name, its value for one sync, its pandas dtype (``None``: object)."""

    name: str
    value: Callable[[Sync], Any]
    dtype: str | None = None


class SyncField(msgspec.Struct, frozen=True):
    """One field of a sync: where a call site shows it, its label there, and its columns. ``text`` gives one
    sync's value as a site detail shows it (``None``: nothing to say); ``quiet`` values are not worth a line."""

    name: str
    place: Place
    label: str
    columns: tuple[Column, ...] = ()
    text: Callable[[Sync], str | None] | None = None
    quiet: tuple[Any, ...] = (None, "")
    shown_by: str | None = None  # another field whose display says this one too (``kind`` by ``rule``)
    # the attributes ``text`` reads (dotted paths: ``thread.name``): a site's syncs are counted by them (in C),
    # and ``text`` runs once per distinct value instead of once per sync
    reads: tuple[str, ...] = ()


class Detail(msgspec.Struct, frozen=True):
    """One line of a call site's summary: a label and what its syncs held, most frequent first (``values``: the
    text and how many syncs held it; ``text``: the same as one line)."""

    field: str
    label: str
    values: tuple[tuple[str, int], ...]
    text: str


def _site_text(site: CallSite | None) -> str | None:
    return None if site is None else f"{site.file}:{site.line} {site.function}"


def _chain(sync: Sync) -> str:
    return " › ".join(sync.op_chain[-3:]) or sync.runtime or sync.op


def _frames(sync: Sync) -> str | None:
    """The call path as one line, outermost first: where the user's code starts to where the sync happens (nothing
    to say when the site's label already names every frame: where, and via)."""
    if len(sync.stack) <= (1 if sync.via is None else 2):
        return None
    labels = [f"{frame.file.rsplit('/', 1)[-1]}:{frame.line} {frame.function}" for frame in reversed(sync.stack)]
    return " › ".join(labels if len(labels) <= 5 else [*labels[:2], f"… {len(labels) - 4} frames", *labels[-2:]])


def _signals(sync: Sync) -> str:
    return {("trace",): "trace only", ("guard",): "guard only", ("trace", "guard"): "trace and guard"}.get(
        sync.signals, " and ".join(sync.signals))


def _evidence(sync: Sync) -> str:
    return "confirmed (runtime evidence)" if sync.confirmed else "latent (would sync on a GPU)"


def _ms(value: float | None) -> str | None:
    return None if value is None else f"{value / 1000:.3f} ms"


SYNC_FIELDS: tuple[SyncField, ...] = (
    SyncField("rule", "column", "rule", (Column("rule", lambda s: s.rule),)),
    SyncField("kind", "detail", "kind", (Column("kind", lambda s: s.kind),), text=lambda s: s.kind,
              shown_by="rule", reads=("kind",)),
    SyncField("confirmed", "detail", "evidence", (Column("confirmed", lambda s: s.confirmed, "bool"),),
              text=_evidence, reads=("confirmed",)),
    SyncField("op", "detail", "op", (Column("op", lambda s: s.op),), text=lambda s: s.op, shown_by="op_chain",
              reads=("op",)),
    SyncField("op_chain", "detail", "op chain", (Column("op_chain", lambda s: list(s.op_chain)),), text=_chain,
              reads=("op_chain", "runtime", "op")),
    SyncField("runtime", "detail", "runtime calls", (Column("runtime", lambda s: s.runtime),),
              text=lambda s: s.runtime, reads=("runtime",)),
    SyncField("thread", "detail", "threads", (Column("pid", lambda s: s.thread.pid),
                                              Column("tid", lambda s: s.thread.tid),
                                              Column("thread", lambda s: s.thread.name)),
              text=lambda s: s.thread.name, reads=("thread.name",)),
    SyncField("ts_us", "detail", "trace time", (Column("ts_us", lambda s: s.ts_us, "Float64"),),
              text=lambda s: "none (seen by the guard only)" if s.ts_us is None else None, reads=("ts_us",)),
    SyncField("stall_us", "column", "stall", (Column("stall_us", lambda s: s.stall_us, "float"),)),
    SyncField("stall_source", "detail", "stall measured as",
              (Column("stall_source", lambda s: s.stall_source),), text=lambda s: s.stall_source,
              reads=("stall_source",)),
    SyncField("call_site", "heading", "call site", (
        Column("site", lambda s: s.site),
        Column("file", lambda s: s.call_site.file if s.call_site else None),
        Column("line", lambda s: s.call_site.line if s.call_site else None, "Int64"),
        Column("function", lambda s: s.call_site.function if s.call_site else None),
        Column("line_source", lambda s: s.call_site.line_source if s.call_site else None),
        Column("user_code", lambda s: s.call_site.user if s.call_site else None, "boolean"),
        Column("line_note", lambda s: s.call_site.line_note if s.call_site else None))),
    SyncField("stack", "detail", "call path", (
        Column("stack", lambda s: [msgspec.structs.asdict(frame) for frame in s.stack]),), text=_frames,
        reads=("stack", "via")),
    SyncField("scope", "detail", "scopes", (Column("scope", lambda s: s.scope),),
              text=lambda s: scope_label(s.scope), quiet=(), reads=("scope",)),
    SyncField("scope_chain", "detail", "scope chain", (Column("scope_chain", lambda s: list(s.scope_chain)),),
              shown_by="scope"),
    SyncField("step", "detail", "steps", (Column("step", lambda s: s.step),), text=lambda s: s.step,
              reads=("step",)),
    SyncField("impact", "column", "waited on", (
        Column("waited_on", lambda s: s.waited_on),
        Column("device_idle_us", lambda s: s.device_idle_us, "Float64")), text=lambda s: s.waited_on,
        reads=("waited_on",)),
    SyncField("direction", "detail", "copy direction", (Column("direction", lambda s: s.direction),),
              text=lambda s: s.direction, reads=("direction",)),
    SyncField("rank", "detail", "ranks", (Column("rank", lambda s: s.rank, "Int64"),),
              text=lambda s: None if s.rank is None else f"rank {s.rank}", reads=("rank",)),
    SyncField("trace", "header", "trace", (Column("trace", lambda s: s.trace),)),
    SyncField("signals", "detail", "seen by", (Column("signals", lambda s: list(s.signals)),), text=_signals,
              quiet=("trace only",), reads=("signals",)),
    SyncField("collective_delay_us", "column", "collective delay",
              (Column("collective_delay_us", lambda s: s.collective_delay_us, "Float64"),)),
    SyncField("via", "heading", "via", (Column("via", lambda s: _site_text(s.via)),)),
    SyncField("phase", "detail", "phase", (Column("phase", lambda s: s.phase),), text=lambda s: s.phase,
              quiet=("steady",), reads=("phase",)),
    SyncField("device_branch", "detail", "device branch", (Column("device_branch", lambda s: s.device_branch),),
              text=lambda s: s.device_branch, reads=("device_branch",)),
)
FIELDS_BY_NAME = {field.name: field for field in SYNC_FIELDS}
# Columns of the per-sync DataFrame view and CSV, in order.
COLUMNS: tuple[Column, ...] = tuple(column for field in SYNC_FIELDS for column in field.columns)

# What a site's first detail lines are (the rest follow in the table's order): what syncs, then where it runs.
_LEADING = ("op_chain", "scope", "thread")
_SKIPPED = {"op", "kind", "scope_chain"}  # op chain, rule and scopes already say it, unless they differ


def site_details(members: Sequence[Sync], *, limit: int = 3) -> tuple[Detail, ...]:
    """The detail lines of one call site: for each ``detail`` field, the values its syncs held, most frequent
    first (at most ``limit`` named), unless every sync holds a quiet value."""
    details = []
    order = [*_LEADING, *(f.name for f in SYNC_FIELDS if f.name not in _LEADING)]
    for name in order:
        field = FIELDS_BY_NAME[name]
        if field.text is None:
            continue
        texts = _texts(field, members)
        if all(text is None or text in field.quiet for text in texts):
            continue
        if name in _SKIPPED and len(texts) == 1:
            continue
        values = tuple((text, count) for text, count in texts.most_common() if text is not None)
        details.append(Detail(field=name, label=field.label, values=values,
                              text=_scopes_line(members) if name == "scope" else _line(values, limit)))
    return tuple(details)


def _texts(field: SyncField, members: Sequence[Sync]) -> Counter[str | None]:
    """How many of ``members`` show each text of ``field``, in first-seen order."""
    assert field.text is not None
    if not field.reads:
        return Counter(map(field.text, members))
    keys = list(map(attrgetter(*field.reads), members))
    one_of = dict(zip(keys, members, strict=True))  # a sync per distinct value read: its text is theirs
    texts: Counter[str | None] = Counter()
    for key, count in Counter(keys).items():
        texts[field.text(one_of[key])] += count
    return texts


def _line(values: tuple[tuple[str, int], ...], limit: int) -> str:
    shown = [text if len(values) == 1 else f"{text} ×{count}" for text, count in values[:limit]]
    if len(values) > limit:
        shown.append(f"… {len(values) - limit} more")
    return "; ".join(shown)


def _scopes_line(members: Sequence[Sync]) -> str:
    return "; ".join(compress_scopes(dict(Counter(sync.scope for sync in members)))) or scope_label("")
