"""Helpers of the shadow device's tests: the annotated patterns and what the guard records for them."""

from __future__ import annotations

import inspect
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures"
sys.path.insert(0, str(FIXTURES))

_ANNOTATION = re.compile(r"#\s*(device|host):\s*(SH\d{3})(?:\s*×(\d+))?\s*$")

Expected = Counter[tuple[str, int, str]]  # (rule, line, residency) → times


def annotated(function: Callable[..., Any]) -> Expected:
    """What the ``# device: RULE`` / ``# host: RULE ×N`` comments of ``function`` (and the methods it calls in the
    same file) say the guard records, by line of that file."""
    lines, _ = inspect.findsource(function)
    expected: Expected = Counter()
    for number, text in enumerate(lines, start=1):
        match = _ANNOTATION.search(text)
        if match is not None and _inside(function, number):
            expected[(match[2], number, match[1])] += int(match[3] or 1)
    return expected


def _inside(function: Callable[..., Any], line: int) -> bool:
    """``line`` is in ``function`` or in a class of the same module it uses (its annotations count too)."""
    module = sys.modules[function.__module__]
    owners = [function] + [value for value in vars(module).values()
                           if inspect.isclass(value) and value.__module__ == module.__name__
                           and value.__name__ in inspect.getsource(function)]
    for owner in owners:
        source, start = inspect.getsourcelines(owner)
        if start <= line < start + len(source):
            return True
    return False


def recorded(function: Callable[..., Any], *args: Any) -> tuple[Expected, Any, Any]:
    """Run ``function`` under the shadow device and the guard: its records as (rule, line, residency) counts, the
    watch, and the shadow device (its notes)."""
    from synchunt.guard import watch
    from synchunt.shadow import shadow_device

    with shadow_device() as shadow, watch() as guard:
        function(*args)
    file = inspect.getsourcefile(function)
    seen: Expected = Counter((r.rule, r.line, r.residency) for r in guard.syncs if r.file == file)
    return seen, guard, shadow


