"""Conditions on a traced op's recorded arguments, named by the catalogue's ``OpPattern.when``."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import msgspec

from synchunt.rules import RULES
from synchunt.trace.schema import FieldSet


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


def _no_num_classes(concrete_inputs: Any) -> bool:
    # aten::one_hot(self, num_classes=-1): -1 (or nothing recorded) sizes the output from the data's max.
    values = _concrete(concrete_inputs)
    if not values or len(values) < 2 or values[1] == "":
        return True
    return values[1] == "-1"


CONDITIONS: dict[str, Callable[[Any], bool]] = {
    "histc-min-eq-max": _histc_min_eq_max,
    "no-num-classes": _no_num_classes,
}


def holds(name: str | None, concrete_inputs: Any) -> bool:
    """Whether condition ``name`` holds for an op with these recorded concrete inputs (no name: always).

    A name no condition answers to is a catalogue error, not a condition that holds: it raises ``KeyError``."""
    if name is None:
        return True
    check = CONDITIONS.get(name)
    if check is None:
        raise KeyError(f"no trace condition named {name!r} (the catalogue's TraceOp.when; known: "
                       f"{', '.join(sorted(CONDITIONS))})")
    return check(concrete_inputs)


@cache
def analysis_fields() -> FieldSet:
    """What detection and attribution read of a trace: the ``analysis`` field set, keeping the recorded
    arguments (``Concrete Inputs``) of the ops some condition looks at."""
    return FieldSet("analysis", frozenset(p.op for rule in RULES for p in rule.trace_ops if p.when is not None))
