"""The baseline (allow-list): syncs a team has reviewed and accepts, kept in a TOML file in version control.

Each ``[[allow]]`` entry names a rule, a call site (``file:function``) and an op, says why the sync is
acceptable, and may limit how many such syncs it allows (``max``) and until when (``expires``, the last valid
day)::

    schema = "synchunt.baseline/1"

    [[allow]]
    rule = "SH101"
    site = "workloads/hicache_dcp/translate.py:dcp_kernel_indices_masked"
    op = "aten::nonzero"
    reason = "the masked path is kept as the reference; production runs the sliced one"
    max = 54
    expires = 2027-01-31
"""

from __future__ import annotations

import datetime as dt
import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synchunt.attribute import Sync
from synchunt.errors import UsageError
from synchunt.rules import RULES_BY_CODE

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

BASELINE_SCHEMA = "synchunt.baseline/1"
MAX_BASELINE_BYTES = 64 * 1024 * 1024  # 50,000 reviewed entries take about 10 MB

_ENTRY_KEYS = {"rule", "site", "op", "reason", "expires", "max"}
_ENTRY_HEADER = re.compile(r"^\s*\[\[\s*allow\s*\]\]")


@dataclass(frozen=True, order=True)
class SyncKey:
    """What a baseline entry is keyed by: rule code, call site (``file:function``) and op."""

    rule: str
    site: str
    op: str

    def __str__(self) -> str:
        return f"{self.rule} {self.op} at {self.site}"


def sync_key(sync: Sync) -> SyncKey:
    """The key of one sync: its rule, its site's ``file:function`` (as :func:`synchunt.sites.site_key`), its op."""
    return SyncKey(sync.rule, sync.site_key, sync.op)


@dataclass(frozen=True)
class BaselineEntry:
    """One allowed sync pattern. ``max_count`` of ``None`` allows any number; ``line`` is where the entry's
    ``[[allow]]`` header sits in its file (for annotations), when read from one."""

    key: SyncKey
    reason: str
    expires: dt.date | None = None
    max_count: int | None = None
    line: int | None = None

    def is_expired(self, today: dt.date) -> bool:
        return self.expires is not None and today > self.expires


@dataclass(frozen=True)
class Baseline:
    """The entries of one baseline file, at most one per key."""

    entries: tuple[BaselineEntry, ...] = ()
    path: Path | None = None

    def __post_init__(self) -> None:
        seen: set[SyncKey] = set()
        for entry in self.entries:
            if entry.key in seen:
                raise UsageError(f"{self._where()}: two entries for {entry.key}")
            seen.add(entry.key)

    def entry_for(self, key: SyncKey) -> BaselineEntry | None:
        return next((entry for entry in self.entries if entry.key == key), None)

    def _where(self) -> str:
        return f"baseline {self.path}" if self.path else "baseline"


def load_baseline(path: str | Path) -> Baseline:
    """Read and check a baseline file; any problem is a ``UsageError`` naming the file and entry."""
    path = Path(path)
    try:
        status = path.stat()
        if not stat.S_ISREG(status.st_mode):  # a FIFO would block, /dev/zero never end
            raise UsageError(f"cannot read baseline {path}: not a regular file")
        if status.st_size > MAX_BASELINE_BYTES:
            raise UsageError(f"cannot read baseline {path}: {status.st_size:,} bytes, more than the "
                             f"{MAX_BASELINE_BYTES:,} a baseline may have")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"no such baseline: {path}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read baseline {path}: {error}") from None
    return parse_baseline(text, path)


def parse_baseline(text: str, path: Path | None = None) -> Baseline:
    where = f"baseline {path}" if path else "baseline"
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise UsageError(f"{where} is not valid TOML: {error}") from None
    except RecursionError:  # tomllib recurses per nesting level; no real baseline nests at all
        raise UsageError(f"{where} is nested too deeply to read (arrays or tables inside each other)") from None
    unknown = sorted(set(document) - {"schema", "allow"})
    if unknown:
        raise UsageError(f"{where}: unknown top-level key(s) {', '.join(unknown)}; expected schema and [[allow]]")
    schema = document.get("schema", BASELINE_SCHEMA)
    if schema != BASELINE_SCHEMA:
        raise UsageError(f"{where}: schema {schema!r} is not {BASELINE_SCHEMA!r}")
    raw_entries = document.get("allow", [])
    if not isinstance(raw_entries, list):
        raise UsageError(f"{where}: 'allow' must be an array of tables ([[allow]])")
    header_lines = [number for number, line in enumerate(text.splitlines(), start=1) if _ENTRY_HEADER.match(line)]
    entries = []
    for position, raw in enumerate(raw_entries):
        line = header_lines[position] if len(header_lines) == len(raw_entries) else None
        label = f"{where}, entry {position + 1}" + (f" (line {line})" if line else "")
        entries.append(_parse_entry(raw, label, line))
    return Baseline(tuple(entries), path)


def _parse_entry(raw: Any, label: str, line: int | None) -> BaselineEntry:
    if not isinstance(raw, dict):
        raise UsageError(f"{label}: must be a table")
    unknown = sorted(set(raw) - _ENTRY_KEYS)
    if unknown:
        raise UsageError(f"{label}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(_ENTRY_KEYS))}")
    for name in ("rule", "site", "op", "reason"):
        value = raw.get(name)
        if not isinstance(value, str) or not value.strip():
            raise UsageError(f"{label}: '{name}' must be a non-empty string")
    if raw["rule"] not in RULES_BY_CODE:
        raise UsageError(f"{label}: unknown rule {raw['rule']!r}")
    max_count = raw.get("max")
    if max_count is not None and (isinstance(max_count, bool) or not isinstance(max_count, int) or max_count < 0):
        raise UsageError(f"{label}: 'max' must be a non-negative integer")
    return BaselineEntry(SyncKey(raw["rule"], raw["site"], raw["op"]), raw["reason"].strip(),
                         _parse_date(raw.get("expires"), label), max_count, line)


def _parse_date(value: Any, label: str) -> dt.date | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        raise UsageError(f"{label}: 'expires' must be a date (YYYY-MM-DD), not a date and time")
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            pass
    raise UsageError(f"{label}: 'expires' must be a date (YYYY-MM-DD), got {value!r}")
