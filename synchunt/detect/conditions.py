"""Conditions on a traced op's recorded arguments, named by the catalogue's ``OpPattern.when``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec


def _concrete(raw: Any) -> list[str] | None:
    if raw is None:
        return None
    try:
        value = msgspec.json.decode(raw)
    except (msgspec.DecodeError, TypeError):
        return None
    return [str(v) for v in value] if isinstance(value, list) else None


def _histc_min_eq_max(concrete_inputs: Any) -> bool:
    # aten::histc(self, bins, min, max): without recorded scalars assume the default range (0, 0).
    values = _concrete(concrete_inputs)
    if not values or len(values) < 4 or values[2] == "" or values[3] == "":
        return True
    try:
        return float(values[2]) == float(values[3])
    except ValueError:
        return True


CONDITIONS: dict[str, Callable[[Any], bool]] = {
    "histc-min-eq-max": _histc_min_eq_max,
}


def holds(name: str | None, concrete_inputs: Any) -> bool:
    """Whether condition ``name`` holds for an op with these recorded concrete inputs (no name: always)."""
    if name is None:
        return True
    check = CONDITIONS.get(name)
    return True if check is None else check(concrete_inputs)
