"""Terminal escapes, newlines and other control characters in every name that reaches an output.

The trace stays a valid trace with its sync; only a name changes. Whatever the command prints (text, GitHub
annotations, JUnit, SARIF, JSON) must not carry a raw control character, and no injected line may start a forged
GitHub annotation.
"""

from __future__ import annotations

import random

import hostile_kineto as k
from hostile_case import REFUSED, Case, Expect, files
from hostile_cmd import trace_case

ESCAPES: dict[str, str] = {
    "csi-clear": "\x1b[2J\x1b[H", "osc-title": "\x1b]0;pwned\x07", "osc8-link": "\x1b]8;;http://x/\x1b\\a\x1b]8;;\x1b\\",
    "bel": "ding\x07", "backspace": "ok\x08\x08XY", "carriage-return": "ok\rEVIL", "c1-csi": "\u009b2J",
    "delete": "a\x7fb", "nul": "a\x00b", "vertical-tab-form-feed": "a\x0b\x0cb",
    "annotation-injection": "x\n::error file=evil.py,line=1::forged", "newline": "first\nsecond",
}
INJECTED = "::error file=evil.py"
# Formats that print names, in the order the positions cycle through them.
NAME_FORMATS = ("analyze-text", "gate-github", "gate-junit", "compare-text", "gate-text", "gate-sarif",
                "analyze-json", "report")


def _named(position: str, text: str) -> k.Doc:
    """The CPU trace with ``text`` placed in one name that reaches the output; the sync stays."""
    doc = k.cpu_doc()
    events = doc["traceEvents"]
    if position == "op":  # an op around the sync: it appears in the op chain
        events.append(k.op(f"aten::wrap{text}", 8, 110))
    elif position == "frame-file":
        events[3]["name"] = f"mod{text}.py(12): forward"
    elif position == "frame-function":
        events[3]["name"] = f"model.py(12): forw{text}ard"
    elif position == "scope":
        events[2]["name"] = f"step{text}"
    elif position == "kineto-thread":
        events[1]["args"]["name"] = f"thread{text}"
        doc["synchunt"]["threads"] = {}
    elif position == "python-thread":
        doc["synchunt"]["threads"] = {"1": f"sched{text}"}
    elif position == "process":
        events[0]["args"]["name"] = f"python{text}"
    return doc


POSITIONS = ("op", "frame-file", "frame-function", "scope", "kineto-thread", "python-thread", "process")


def cases(rng: random.Random) -> list[Case]:
    family = "escapes"
    out: list[Case] = []
    index = 0
    for position in POSITIONS:
        for label, text in ESCAPES.items():
            data = k.dumps(_named(position, text))
            for _ in range(3):
                command = NAME_FORMATS[index % len(NAME_FORMATS)]
                index += 1
                out.append(trace_case(family, f"{position}@{label}", data, command, forbid_line=INJECTED))
    for label, text in ESCAPES.items():
        if "\x00" in text:
            continue  # a file name cannot hold NUL
        filename = f"t{text.replace('/', '_')}.json"
        for command in ("analyze-text", "gate-github", "report"):
            out.append(trace_case(family, f"file-name@{label}", k.dumps(k.cpu_doc()), command, filename=filename,
                                  forbid_line=INJECTED))
        for option in ("--thread", "--scope"):  # filter values are echoed in the error for an unknown one
            out.append(trace_case(family, f"option{option}@{label}", k.dumps(k.cpu_doc()), "gate-text",
                                  extra=(option, text), forbid_line=INJECTED))
    out += _profile_target_cases()
    return out


def _profile_target_cases() -> list[Case]:
    """A target name with escapes: resolving it fails before any profiling, and the error must stay clean."""
    out = []
    for label in ("csi-clear", "osc-title", "annotation-injection"):
        text = ESCAPES[label]
        expect = Expect(exits=REFUSED, forbid_line=INJECTED)
        out.append(Case(id=f"escapes/target-name@{label}/profile", family="escapes",
                        argv=("profile", f"no_such_module{text}:fn", "--no-report"), build=files({}),
                        expect=expect, timeout_s=30))
        out.append(Case(id=f"escapes/target-file@{label}/gate", family="escapes",
                        argv=("gate", "--target", f"missing{text}.py:fn"), build=files({}), expect=expect,
                        timeout_s=30))
    return out
