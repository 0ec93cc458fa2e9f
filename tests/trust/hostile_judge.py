"""Judging one run of a hostile case: the first broken rule wins, with a one-line reason."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from hostile_case import (
    BAD_OUTPUT,
    DATA_LOSS,
    HANG,
    MEMORY,
    PASS,
    TRACEBACK,
    WRONG_EXIT,
    WRONG_VERDICT,
    Case,
)

MAX_STDERR_BYTES = 64 << 10
MAX_STDOUT_BYTES = 32 << 20
# C0 controls but tab and newline, DEL, and the C1 range: none may reach a terminal or a CI log raw.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\udc80-\udc9f]")  # the last: raw C1 bytes
_MEMORY_WORDS = re.compile(r"MemoryError|Unable to allocate|Cannot allocate memory|out of memory|bad_alloc")
_WARNING_LINE = re.compile(r"^\S*:\d+: \w*Warning: ", re.MULTILINE)
_NAN_TEXT = re.compile(r"\b(?:nan|NaN|inf|Infinity)\b|\.py:\d+\.0\b")
_UNKNOWN_OPTION = re.compile(r"(?i)no such option:? ?\S*")
_PARTIAL_KEYS = ("partial", "truncated")


@dataclass
class Run:
    """What the harness saw of one command."""

    exit_code: int | None  # None when killed by a signal
    signal: int | None
    timed_out: bool
    why: str
    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    memory_cap_mb: float
    stdout: bytes
    stderr: bytes
    changed: list[str] = field(default_factory=list)  # protected files whose bytes did not survive
    kept: list[str] = field(default_factory=list)  # files a --force run should have replaced but did not
    oversized: list[str] = field(default_factory=list)  # created files over the size bound


def judge(case: Case, run: Run) -> tuple[str, str]:
    """(kind, reason) for one run; ``("pass", "")`` when every rule holds."""
    out = run.stdout.decode("utf-8", "surrogateescape")  # keeps a raw C1 byte visible to the control check
    err = run.stderr.decode("utf-8", "surrogateescape")
    if run.timed_out:
        return HANG, f"no exit after {run.wall_s:.0f} s ({run.why or f'{run.cpu_s:.1f} s of CPU'})"
    if _out_of_memory(run, err):
        return MEMORY, f"peak RSS {run.peak_rss_mb:.0f} MB (cap {run.memory_cap_mb:.0f} MB): {_last_line(err)}"
    if "Traceback (most recent call last)" in err or "Traceback (most recent call last)" in out:
        return TRACEBACK, _exception_line(err + out)
    if run.exit_code is None:
        return TRACEBACK, f"killed by signal {run.signal}"
    if run.exit_code == 3 or "internal error" in err.lower():
        return TRACEBACK, f"internal error (exit {run.exit_code}): {_last_line(err)}"
    if run.changed:
        return DATA_LOSS, f"exit {run.exit_code}, bytes of {', '.join(run.changed)} not kept"
    if match := _UNKNOWN_OPTION.search(err):  # every option the corpus passes is part of the contract
        return WRONG_EXIT, f"exit {run.exit_code}: option not supported: {match.group()}"
    if run.exit_code not in case.expect.exits:
        allowed = "/".join(str(c) for c in sorted(case.expect.exits))
        return WRONG_EXIT, f"exit {run.exit_code}, expected {allowed}: {_last_line(err) or _last_line(out)}"
    problem = _stream_problem(case, run, out, err)
    if problem:
        return BAD_OUTPUT, problem
    return _verdict_problem(case, run.exit_code, out, err, run.kept) or (PASS, "")


def _stream_problem(case: Case, run: Run, out: str, err: str) -> str:
    expect, code = case.expect, run.exit_code
    if len(run.stderr) > MAX_STDERR_BYTES:
        return f"stderr is {len(run.stderr)} bytes"
    if expect.check_stdout_text and len(run.stdout) > MAX_STDOUT_BYTES:  # text for a person; JSON may be big
        return f"stdout is {len(run.stdout)} bytes"
    if match := _CONTROL.search(err):
        return f"raw control character {match.group()!r} on stderr"
    if expect.check_stdout_text and (match := _CONTROL.search(out)):
        return f"raw control character {match.group()!r} on stdout"
    if _WARNING_LINE.search(err):
        return f"a Python warning on stderr: {_WARNING_LINE.search(err).group()}"
    if code == 2 and expect.error_line:
        errors = [line for line in err.splitlines() if line.startswith("error:")]
        if len(errors) != 1:
            return f"exit 2 with {len(errors)} 'error:' lines on stderr: {_last_line(err)!r}"
        if expect.error_mentions and expect.error_mentions.lower() not in errors[0].lower():
            return f"the error does not name {expect.error_mentions!r}: {errors[0][:200]}"
    if code in (0, 1):
        if expect.stdout_json and (problem := json_problem(out)):
            return f"stdout is not strict JSON: {problem}"
        if expect.stdout_xml and not _parses_as_xml(out):
            return f"stdout is not well-formed XML: {out[:120]!r}"
        if expect.no_nan_text and (match := _NAN_TEXT.search(out)):
            return f"non-finite number or float line in text output: {match.group()!r}"
    if expect.forbid_line:
        for line in (out + "\n" + err).splitlines():
            if line.startswith(expect.forbid_line):
                return f"an injected line reached the output: {line[:120]!r}"
    if run.oversized:
        return f"output file over {expect.max_file_bytes >> 20} MiB: {', '.join(run.oversized)}"
    return ""


def _verdict_problem(case: Case, code: int, out: str, err: str, kept: list[str]) -> tuple[str, str] | None:
    expect = case.expect
    if expect.salvage is not None:
        return _salvage_problem(expect.salvage, code, out, err)
    if expect.findings is not None and code in (0, 1):
        doc = _strict_json(out)
        found = len(doc["findings"]) if isinstance(doc, dict) and isinstance(doc.get("findings"), list) else None
        if found != expect.findings:
            return WRONG_VERDICT, f"{found} lint findings instead of {expect.findings}"
    if kept and code in (0, 1):
        return WRONG_VERDICT, f"exit {code} but {', '.join(kept)} was not replaced"
    if expect.partial and code in (0, 1) and expect.stdout_json and not marked_partial(_strict_json(out)):
        return WRONG_VERDICT, "the analysis of a cut trace is not marked partial (traces[].partial)"
    if expect.verdict is None or code not in (0, 1):
        return None
    doc = _strict_json(out)
    if doc is None:
        return WRONG_VERDICT, "no JSON analysis on stdout to read the verdict from"
    got = verdict_of(doc)
    wrong = {key: got.get(key) for key, value in expect.verdict.items() if got.get(key) != value}
    if wrong:
        return WRONG_VERDICT, f"verdict {wrong} instead of { {k: expect.verdict[k] for k in wrong} }"
    return None


def _salvage_problem(expected: int, code: int, out: str, err: str) -> tuple[str, str] | None:
    if code == 2:
        return None if expected == 0 else (WRONG_VERDICT, f"nothing salvaged ({expected} syncs before the cut): "
                                                          f"{_last_line(err)}")
    doc = _strict_json(out)
    if doc is None:
        return WRONG_VERDICT, "no JSON analysis on stdout"
    got = verdict_of(doc).get("syncs")
    if got != expected:
        return WRONG_VERDICT, f"salvaged {got} syncs, {expected} lie wholly before the cut"
    if not marked_partial(doc):
        return WRONG_VERDICT, "the analysis of a cut trace is not marked partial (traces[].partial)"
    return None


def verdict_of(doc: Any) -> dict[str, Any]:
    """Counts, rules and call sites of an analysis JSON (``synchunt.analysis/1``), independent of paths."""
    if not isinstance(doc, dict):
        return {}
    summary = doc.get("summary") if isinstance(doc.get("summary"), dict) else {}
    syncs = [s for s in doc.get("syncs") or [] if isinstance(s, dict)]
    sites: Counter[tuple] = Counter()
    for sync in syncs:
        site = sync.get("call_site") if isinstance(sync.get("call_site"), dict) else {}
        file = site.get("file") or None
        sites[(sync.get("rule"), sync.get("op"), file, site.get("line") if file else None,
               site.get("function") if file else None)] += 1
    return {"syncs": summary.get("syncs"), "confirmed": summary.get("confirmed"), "latent": summary.get("latent"),
            "rules": sorted({str(s.get("rule")) for s in syncs}),
            "sites": sorted(([*key, count] for key, count in sites.items()), key=json.dumps)}


def marked_partial(doc: Any) -> bool:
    traces = doc.get("traces") if isinstance(doc, dict) else None
    return any(isinstance(t, dict) and (any(t.get(k) for k in _PARTIAL_KEYS) or t.get("complete") is False)
               for t in traces or [])


def _strict_json(text: str) -> Any:
    def refuse(token: str) -> Any:
        raise ValueError(token)
    try:
        return json.loads(text, parse_constant=refuse)
    except ValueError:
        return None


def json_problem(text: str) -> str:
    """Why ``text`` is not one strict JSON document ("" when it is): the NaN/Infinity token, or the parse error."""
    found: list[str] = []

    def refuse(token: str) -> Any:
        found.append(token)
        raise ValueError(token)
    try:
        json.loads(text, parse_constant=refuse)
    except json.JSONDecodeError as error:
        near = text[max(0, error.pos - 40):error.pos + 20]
        return f"{error.msg} at line {error.lineno} column {error.colno}: {near!r}"
    except ValueError:
        at = text.find(found[0])
        return f"{found[0]} (not JSON) near {text[max(0, at - 60):at + len(found[0])]!r}"
    return ""


def _parses_as_xml(text: str) -> bool:
    try:
        ET.fromstring(text)
    except ET.ParseError:
        return False
    return True


def _exception_line(text: str) -> str:
    """The ``SomeError: message`` line that ends the last traceback."""
    lines = [line for line in text.splitlines() if line.strip()]
    after = text.rsplit("Traceback (most recent call last)", 1)[-1].splitlines()
    candidates = [line for line in after if re.match(r"^[\w.]+(Error|Exception|Exit|Interrupt|Warning)\b", line)]
    return (candidates[-1] if candidates else (lines[-1] if lines else ""))[:200]


def _out_of_memory(run: Run, err: str) -> bool:
    """Over the cap, or failing for memory after using most of it (a parser's MemoryError for deep nesting at
    a small size is a traceback, not a memory blow-up)."""
    if run.peak_rss_mb > run.memory_cap_mb:
        return True
    near_cap = run.peak_rss_mb > run.memory_cap_mb - 512
    return near_cap and (bool(_MEMORY_WORDS.search(err)) or run.exit_code is None)


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""
