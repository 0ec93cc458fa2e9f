"""Writing a baseline: one entry per (rule, call site, op) of the current syncs, ready for review."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from synchunt.attribute import Sync
from synchunt.files import write_output
from synchunt.gate.baseline import BASELINE_SCHEMA, Baseline, BaselineEntry, sync_key

_HEADER = """\
# synchunt gate baseline: device-to-host syncs this project accepts for now.
# Review every entry like code: `reason` says why the sync is acceptable, `max` caps how many such syncs
# one gate run allows, `expires` (optional, YYYY-MM-DD) is the last day the entry is valid.
"""


def baseline_from_syncs(syncs: Sequence[Sync], *, today: dt.date, previous: Baseline | None = None) -> Baseline:
    """An entry per key of ``syncs`` with ``max`` = its current count. Entries of ``previous`` with the same key
    keep their reason and expiry, so regenerating a baseline does not lose what reviewers wrote."""
    counts = Counter(sync_key(sync) for sync in syncs)
    entries = []
    for key in sorted(counts):
        kept = previous.entry_for(key) if previous else None
        reason = kept.reason if kept else (f"recorded by `synchunt gate --write-baseline` on {today.isoformat()}; "
                                           "replace with why this sync is acceptable")
        entries.append(BaselineEntry(key, reason, kept.expires if kept else None, counts[key]))
    return Baseline(tuple(entries))


def render_baseline(baseline: Baseline) -> str:
    """The TOML text of ``baseline`` (entries in key order)."""
    parts = [_HEADER, f"schema = {_string(BASELINE_SCHEMA)}\n"]
    for entry in sorted(baseline.entries, key=lambda item: item.key):
        lines = ["", "[[allow]]", f"rule = {_string(entry.key.rule)}", f"site = {_string(entry.key.site)}",
                 f"op = {_string(entry.key.op)}", f"reason = {_string(entry.reason)}"]
        if entry.max_count is not None:
            lines.append(f"max = {entry.max_count}")
        if entry.expires is not None:
            lines.append(f"expires = {entry.expires.isoformat()}")
        parts.append("\n".join(lines) + "\n")
    return "".join(parts)


def write_baseline(baseline: Baseline, path: Path, *, force: bool = False) -> Path:
    """Write ``baseline`` to ``path``; an existing file is only replaced with ``force``."""
    return write_output(path, render_baseline(baseline), force=force, what="baseline")


def _string(value: str) -> str:
    """A TOML basic string. JSON's escapes (``\\" \\\\ \\n \\t \\uXXXX``) are all valid TOML escapes; TOML
    also forbids a raw DEL, which JSON leaves as is."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")

