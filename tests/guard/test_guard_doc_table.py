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
