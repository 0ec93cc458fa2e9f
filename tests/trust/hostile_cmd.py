"""The commands a trace case can run, with what each output format must be (strict JSON, XML, clean text)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hostile_case import ANY_EXIT, Builder, Case, Expect, files

# name → (arguments with {t} for the trace, what its stdout must be, timeout in seconds). JSON output is checked by
# a strict parser (which refuses raw C0 controls) rather than for control characters: it is for machines.
_JSON = {"stdout_json": True, "check_stdout_text": False}
COMMANDS: dict[str, tuple[tuple[str, ...], dict[str, Any], float]] = {
    "analyze-json": (("analyze", "{t}", "-f", "json"), _JSON, 10.0),
    "analyze-text": (("analyze", "{t}"), {"no_nan_text": True}, 10.0),
    "analyze-csv": (("analyze", "{t}", "-f", "csv"), {"check_stdout_text": False}, 10.0),
    "gate-text": (("gate", "{t}"), {"no_nan_text": True}, 10.0),
    "gate-github": (("gate", "{t}", "-f", "github"), {"no_nan_text": True}, 10.0),
    "gate-sarif": (("gate", "{t}", "-f", "sarif"), _JSON, 10.0),
    "gate-junit": (("gate", "{t}", "-f", "junit"), {"stdout_xml": True}, 10.0),
    "report": (("report", "{t}", "-o", "r.html"), {}, 20.0),
    "compare-text": (("compare", "{t}", "{t}"), {"no_nan_text": True}, 10.0),
    "compare-json": (("compare", "{t}", "{t}", "-f", "json"), _JSON, 10.0),
}
# The order families cycle through commands: the cheap ones most, the HTML report every tenth case.
ROTATION = ("analyze-json", "gate-text", "analyze-text", "gate-sarif", "gate-github", "analyze-json", "gate-junit",
            "compare-json", "analyze-csv", "report")
GATES = frozenset(name for name in COMMANDS if name.startswith("gate"))


def rotate(index: int) -> str:
    return ROTATION[index % len(ROTATION)]


def trace_case(family: str, name: str, data: bytes | Builder, command: str = "analyze-json", *,
               filename: str = "t.json", extra: tuple[str, ...] = (), exits: frozenset[int] = ANY_EXIT,
               heavy: bool = False, timeout_s: float | None = None, **expect: Any) -> Case:
    """One command on one trace file ``filename`` holding ``data`` (or whatever the builder makes)."""
    argv, stream_rules, timeout = COMMANDS[command]
    build = files({filename: data}) if isinstance(data, bytes) else data
    return Case(id=f"{family}/{name}/{command}", family=family,
                argv=tuple(a.replace("{t}", filename) for a in argv) + extra, build=build,
                expect=Expect(exits=exits, **{**stream_rules, **expect}),
                timeout_s=timeout_s if timeout_s is not None else timeout, heavy=heavy)


def with_expect(case: Case, **changes: Any) -> Case:
    return replace(case, expect=replace(case.expect, **changes))
