"""docs/guard.md's table of what the guard reports names exactly the rules the guard can report."""

from __future__ import annotations

import re
from pathlib import Path

from synchunt.rules import RULES
from synchunt.rules.model import PatchEffect

GUARD_DOC = Path(__file__).resolve().parents[2] / "docs" / "guard.md"


def _table_codes() -> set[str]:
    text = GUARD_DOC.read_text(encoding="utf-8")
    table = text.split("| rule | reported when | not reported |", 1)[1].split("\n\n", 1)[0]
    codes: set[str] = set()
    for row in table.splitlines()[2:]:
        cell = row.strip("|").split("|")[0].strip()
        span = re.fullmatch(r"SH(\d{3})[–-]SH(\d{3})", cell)
        if span:
            codes.update(f"SH{n}" for n in range(int(span[1]), int(span[2]) + 1))
        else:
            codes.add(cell)
    return codes


def test_the_table_names_every_rule_the_guard_reports() -> None:
    guarded = {rule.code for rule in RULES
               if rule.guard_ops or any(patch.effect is PatchEffect.REPORT for patch in rule.guard_patches)
               or rule.catch_all}
    assert _table_codes() == guarded


def test_the_record_table_names_the_fields_a_record_has() -> None:
    """Each field docs/guard.md lists for a `SyncRecord` (and the names it gives the stack's frames and the sites
    of `by_site`) is what the code has: a user copying `record.filename` from the docs must not get an error."""
    from dataclasses import fields

    from synchunt.guard.records import SyncRecord
    from synchunt.sites import Frame, SiteCount

    text = GUARD_DOC.read_text(encoding="utf-8")
    table = text.split("A `SyncRecord` is a frozen dataclass:", 1)[1].split("\n\n", 2)[1]
    documented = {name for row in table.splitlines()[2:]
                  for name in re.findall(r"`(\w+)`", row.strip("|").split("|")[0])}
    assert documented and documented <= {field.name for field in fields(SyncRecord)}
    frame = re.search(r"`Frame\(([\w, ]+)\)`", text)
    assert frame is not None and tuple(frame[1].split(", ")) == Frame.__struct_fields__
    site = re.search(r"\(`SiteCount`: `([\w ]+)`\)", text)
    assert site is not None and tuple(site[1].split()) == SiteCount.__struct_fields__


def test_every_call_of_the_api_table_is_synchunts() -> None:
    """`synchunt.is_guarded()` as the table names it, not only `synchunt.guard.is_guarded`."""
    import synchunt

    text = GUARD_DOC.read_text(encoding="utf-8")
    table = text.split("## API", 1)[1].split("\n\n", 2)[1]
    names = {match[1] for row in table.splitlines()[2:] if (match := re.match(r"\| `(\w+)[(`]", row))}
    assert {"watch", "forbid_syncs", "allow_syncs", "is_guarded", "SyncError"} <= names
    assert all(hasattr(synchunt, name) for name in names), [name for name in names if not hasattr(synchunt, name)]
