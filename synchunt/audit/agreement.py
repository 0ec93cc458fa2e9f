"""Do the trace and the guard agree? A precise definition, and a sentence for every difference.

Agreement is decided per rule code, over the rules the trace can see in its detection mode:

* **agree** — both signals saw the same rules, the same number of syncs of each rule, and each rule at the
  same functions (the trace attributes a sync to a function, the guard to a line inside it).
* **blind-spot** — the only differences are rules the trace cannot see in its mode. In latent mode (a CPU
  trace) a rule is visible only when the catalogue gives it a latent trace op (``Rule.latent_in_traces``): a
  blocking copy (SH2xx) is not, because ``.cpu()`` of a host tensor returns it and the trace has no copy to
  show; an explicit sync (SH3xx) has no device to wait for. In confirmed mode (a CUDA trace) every rule is
  visible.
* **disagree** — anything else: a visible rule only one signal saw, a different count, different functions.
"""

from __future__ import annotations

from synchunt.audit.model import Agreement, Signal
from synchunt.rules import RULES_BY_CODE, Kind

_WHY_INVISIBLE = {
    Kind.BLOCKING_COPY: "on a CPU the copy returns its input, so the trace has no copy to show",
    Kind.EXPLICIT_SYNC: "an explicit sync has no device to wait for on a CPU",
}


def trace_can_see(code: str, mode: str) -> bool:
    """Whether a trace detected in ``mode`` ("latent" or "confirmed") can report rule ``code`` at all."""
    if mode != "latent":
        return True
    rule = RULES_BY_CODE.get(code)
    if rule is None:  # a code the catalogue does not know: assume visible rather than excuse a difference
        return True
    return rule.latent_in_traces


def compare_signals(trace: Signal, guard: Signal, trace_mode: str) -> tuple[Agreement, tuple[str, ...]]:
    """The agreement between one run's trace and guard, and one note per difference (empty when they agree)."""
    differences: list[str] = []
    blind: list[str] = []
    for code in sorted(set(trace.rules) | set(guard.rules)):
        in_trace, in_guard = trace.rules.get(code, 0), guard.rules.get(code, 0)
        if in_guard and not in_trace and not trace_can_see(code, trace_mode):
            blind.append(_blind_note(code, in_guard, trace_mode))
            continue
        if in_trace and not in_guard:
            differences.append(f"only the trace saw {code} ×{in_trace} (at {_names(trace.functions(code))})")
        elif in_guard and not in_trace:
            differences.append(f"only the guard saw {code} ×{in_guard} (at {_names(guard.functions(code))})")
        else:
            if in_trace != in_guard:
                differences.append(f"{code} counts differ: trace ×{in_trace}, guard ×{in_guard}")
            trace_functions, guard_functions = trace.functions(code), guard.functions(code)
            if trace_functions != guard_functions:
                differences.append(f"{code} call sites differ: trace in {_names(trace_functions)}, "
                                   f"guard in {_names(guard_functions)}")
    if differences:
        return Agreement.DISAGREE, tuple(differences + blind)
    if blind:
        return Agreement.BLIND_SPOT, tuple(blind)
    return Agreement.AGREE, ()


def _blind_note(code: str, count: int, trace_mode: str) -> str:
    rule = RULES_BY_CODE.get(code)
    why = _WHY_INVISIBLE.get(rule.kind, "the catalogue gives it no latent trace op") if rule else ""
    kind = f" ({rule.kind.value})" if rule else ""
    return f"the {trace_mode} trace cannot see {code}{kind} ×{count} that the guard saw: {why}"


def _names(functions: set[str]) -> str:
    return ", ".join(sorted(functions)) or "?"
