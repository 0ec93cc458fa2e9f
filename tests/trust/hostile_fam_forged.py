"""Forged inputs synchunt writes itself: saved analyses (``synchunt.analysis/1``) and baseline TOML files.

A saved analysis is read back without its traces, so every field is untrusted: a missing or ill-typed field must
be refused with a message naming it (exit 2), never a ``KeyError``. A baseline is user-edited TOML.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import hostile_kineto as k
from hostile_case import ANY_EXIT, REFUSED, Case, Expect, files
from hostile_cmd import trace_case
from hostile_fam_fields import WRONG_VALUES

_MISSING = WRONG_VALUES["missing"]

# The analysis of the CPU base trace, as `analyze -f json` writes it (the contract in docs/concepts.md).
_SYNC = {"rule": "SH101", "kind": "data-dependent read", "confirmed": False, "op": "aten::nonzero",
         "op_chain": ["aten::index", "aten::nonzero"], "runtime": "",
         "thread": {"tid": 1, "pid": 1, "name": "scheduler"}, "ts_us": 20.0, "stall_us": 50.0,
         "stall_source": "op cpu time (latent)", "call_site": {"file": "model.py", "line": 12, "function": "forward"},
         "stack": [{"file": "model.py", "line": 12, "function": "forward"}], "scope": "step", "scope_chain": ["step"],
         "step": None, "waited_on": None, "direction": None, "rank": None, "trace": "t.json"}
_TRACE = {"path": "t.json", "rank": None, "device_activity": False, "mode": "latent", "start_us": 0.0,
          "end_us": 200.0, "synchunt": {}, "threads": ["1", "scheduler", "thread 1 (python)"], "scopes": ["step"]}
ANALYSIS = {"schema": "synchunt.analysis/1", "traces": [_TRACE], "filters": {"mode": "auto"},
            "summary": {"syncs": 1, "confirmed": 0, "latent": 1, "stall_us": 50.0, "max_stall_us": 50.0},
            "syncs": [_SYNC],
            "call_sites": [{"site": "model.py:12 forward", "file": "model.py", "line": 12, "function": "forward",
                            "count": 1, "confirmed": 0, "latent": 1, "stall_us": 50.0, "max_stall_us": 50.0,
                            "rules": ["SH101"], "ops": ["aten::nonzero"], "scopes": {"step": 1},
                            "threads": ["scheduler"]}]}
# Fields without which a saved sync cannot be counted, keyed or gated: missing or of the wrong JSON type, refuse.
REQUIRED = {"rule": str, "op": str, "confirmed": bool, "stall_us": (int, float)}
SYNC_VALUES = ("missing", "null", "true", "zero", "word", "list", "dict-int", "big", "int-400-digits", "deep-list")
FORMATS = ("analyze-json", "gate-text", "report", "analyze-text", "gate-sarif", "compare-json")


def cases(rng: random.Random) -> list[Case]:
    return [*analysis_cases(), *baseline_cases()]


def analysis_doc() -> dict[str, Any]:
    return copy.deepcopy(ANALYSIS)


def _saved(doc: Any, *, allow_nan: bool = False) -> bytes:
    return json.dumps(doc, allow_nan=allow_nan).encode()


def _expect_for(field: str, value: Any) -> dict[str, Any]:
    wanted = REQUIRED.get(field)
    ill_typed = wanted is not None and (value is _MISSING or not isinstance(value, wanted)
                                        or (wanted is not bool and isinstance(value, bool)))
    return {"exits": REFUSED if ill_typed else ANY_EXIT, "error_mentions": field}


def analysis_cases() -> list[Case]:
    family = "forged-analysis"
    out: list[Case] = []
    index = 0
    for field in _SYNC:
        for label in SYNC_VALUES:
            value = WRONG_VALUES[label]
            doc = analysis_doc()
            if value is _MISSING:
                del doc["syncs"][0][field]
            else:
                doc["syncs"][0][field] = value
            out.append(trace_case(family, f"sync-{field}@{label}", _saved(doc), FORMATS[index % len(FORMATS)],
                                  filename="saved.json", **_expect_for(field, value)))
            index += 1
    nested = {"thread": ("tid", "pid", "name"), "call_site": ("file", "line", "function")}
    for parent, keys in nested.items():
        for key in keys:
            for label in ("missing", "list", "dict", "big", "int-400-digits", "word"):
                doc = analysis_doc()
                value = WRONG_VALUES[label]
                if value is _MISSING:
                    del doc["syncs"][0][parent][key]
                else:
                    doc["syncs"][0][parent][key] = value
                out.append(trace_case(family, f"sync-{parent}.{key}@{label}", _saved(doc),
                                      FORMATS[index % len(FORMATS)], filename="saved.json", error_mentions=key))
                index += 1
    for field in _TRACE:
        for label in ("missing", "null", "list", "word", "big", "dict-int"):
            doc = analysis_doc()
            value = WRONG_VALUES[label]
            if value is _MISSING:
                del doc["traces"][0][field]
            else:
                doc["traces"][0][field] = value
            out.append(trace_case(family, f"trace-{field}@{label}", _saved(doc), FORMATS[index % len(FORMATS)],
                                  filename="saved.json", error_mentions=field))
            index += 1
    out += _document_forgeries(family)
    return out


def _document_forgeries(family: str) -> list[Case]:
    def with_top(**changes: Any) -> bytes:
        doc = analysis_doc()
        for key, value in changes.items():
            if value is _MISSING:
                doc.pop(key, None)
            else:
                doc[key] = value
        return _saved(doc)
    nan_doc = analysis_doc()
    nan_doc["syncs"][0]["stall_us"] = float("nan")
    nan_doc["summary"]["stall_us"] = float("inf")
    many = analysis_doc()
    many["syncs"] = [dict(_SYNC, ts_us=float(i), call_site={"file": f"f{i}.py", "line": i, "function": "g"})
                     for i in range(20_000)]
    forgeries: dict[str, bytes] = {
        "schema-2": with_top(schema="synchunt.analysis/2"), "schema-prefix": with_top(schema="synchunt.analysis/"),
        "traces-dict": with_top(traces={}), "traces-string": with_top(traces="t.json"),
        "traces-items-numbers": with_top(traces=[1, 2]), "syncs-dict": with_top(syncs={"rule": "SH101"}),
        "syncs-numbers": with_top(syncs=[5]), "syncs-null": with_top(syncs=None),
        "summary-missing": with_top(summary=_MISSING), "summary-list": with_top(summary=[]),
        "call-sites-missing": with_top(call_sites=_MISSING), "filters-list": with_top(filters=[1]),
        "filters-unknown-thread": with_top(filters={"thread": "\x1b[2J"}), "syncs-missing": with_top(syncs=_MISSING),
        "traces-missing": with_top(traces=_MISSING), "nan-literals": _saved(nan_doc, allow_nan=True),
        "rule-unknown": _saved({**analysis_doc(), "syncs": [dict(_SYNC, rule="SH999")]}),
        "escapes-in-names": _saved({**analysis_doc(), "syncs": [dict(_SYNC, op="aten::\x1b]0;x\x07nonzero",
                                                                       scope="\x1b[2Jstep")]}),
        "stack-deep": _saved({**analysis_doc(), "syncs": [dict(_SYNC, stack=[{"file": "a.py", "line": i,
                                                                              "function": "f"}
                                                                             for i in range(50_000)])]}),
        "many-syncs": _saved(many), "truncated": _saved(analysis_doc())[:300],
        "deep-filters": b'{"schema": "synchunt.analysis/1", "filters": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
    }
    big = ("stack-deep", "many-syncs", "deep-filters")  # a few MB each: 10 s of CPU is plenty for a fixed reader
    out = []
    for label, data in forgeries.items():
        for command in ("analyze-json", "gate-sarif", "report", "analyze-text"):
            exits = REFUSED if label.startswith(("schema", "traces-", "syncs-", "truncated")) else ANY_EXIT
            out.append(trace_case(family, label, data, command, filename="saved.json", exits=exits,
                                  timeout_s=10, heavy=label in big))
    out.append(trace_case(family, "round-trip", _saved(analysis_doc()), "analyze-json", filename="saved.json",
                          exits=frozenset({0}), verdict=k.CPU_VERDICT))
    out.append(trace_case(family, "round-trip", _saved(analysis_doc()), "gate-text", filename="saved.json",
                          exits=frozenset({1})))
    return out


BASELINE = """schema = "synchunt.baseline/1"

[[allow]]
rule = "SH101"
site = "model.py:forward"
op = "aten::nonzero"
reason = "reviewed: the mask is tiny"
max = 1
"""
_ENTRY_FIELDS = {"rule": '"SH101"', "site": '"model.py:forward"', "op": '"aten::nonzero"',
                 "reason": '"reviewed"', "max": "1", "expires": "2099-01-01"}
_TOML_WRONG = {"int": "5", "negative": "-1", "float": "1e308", "inf": "inf", "nan": "nan", "bool": "true",
               "array": "[]", "table": "{}", "empty-string": '""', "blank-string": '"   "',
               "datetime": "1979-05-27T07:32:00Z", "local-time": "07:32:00", "big-int": "9" * 30,
               "escapes": '"\\u001b[2J\\u001b]0;x\\u0007"', "newline": '"a\\n::error file=evil.py::x"'}


def _baseline_entry(**overrides: str | None) -> str:
    lines = ['schema = "synchunt.baseline/1"', "", "[[allow]]"]
    for key, value in {**_ENTRY_FIELDS, **overrides}.items():
        if value is not None:
            lines.append(f"{key} = {value}")
    return "\n".join(lines) + "\n"


def _gate_with(family: str, label: str, toml: bytes | str, *, exits: frozenset[int] = ANY_EXIT,
               extra: tuple[str, ...] = (), heavy: bool = False, **expect: Any) -> Case:
    data = toml.encode() if isinstance(toml, str) else toml
    return Case(id=f"{family}/{label}/gate", family=family,
                argv=("gate", "t.json", "--baseline", "b.toml", *extra),
                build=files({"t.json": k.dumps(k.cpu_doc()), "b.toml": data}), timeout_s=20 if heavy else 10,
                heavy=heavy, expect=_expect(exits, **expect))


def _expect(exits: frozenset[int], **rules: Any) -> Expect:
    return Expect(exits=exits, forbid_line="::error file=evil.py", **rules)


def baseline_cases() -> list[Case]:
    family = "baseline"
    out = [_gate_with(family, "valid", BASELINE, exits=frozenset({0})),
           _gate_with(family, "valid-strict", BASELINE, exits=frozenset({0}), extra=("--strict",))]
    for key in _ENTRY_FIELDS:
        required = key in ("rule", "site", "op", "reason")
        out.append(_gate_with(family, f"{key}@missing", _baseline_entry(**{key: None}),
                              exits=REFUSED if required else frozenset({0}), error_mentions=key if required else None))
        for label, value in _TOML_WRONG.items():
            for extra in ((), ("-f", "github")):
                suffix = "-github" if extra else ""
                out.append(_gate_with(family, f"{key}@{label}{suffix}", _baseline_entry(**{key: value}),
                                      extra=extra))
    for label, value in {"schema-number": "5", "schema-other": '"synchunt.baseline/9"', "schema-table": "{}"}.items():
        out.append(_gate_with(family, label, BASELINE.replace('"synchunt.baseline/1"', value), exits=REFUSED,
                              error_mentions="schema"))
    for depth, heavy in ((100, False), (1_000, False), (5_000, False), (50_000, True)):
        out.append(_gate_with(family, f"deep-array@{depth}", BASELINE + "x = " + "[" * depth + "]" * depth + "\n",
                              exits=REFUSED, heavy=heavy))
        out.append(_gate_with(family, f"deep-inline-table@{depth}", BASELINE + "x = " + "{a = " * depth + "1"
                              + "}" * depth + "\n", exits=REFUSED, heavy=heavy))
        out.append(_gate_with(family, f"deep-reason@{depth}", BASELINE.replace('"reviewed: the mask is tiny"',
                              "[" * depth + "]" * depth), exits=REFUSED, heavy=heavy))
    for count, heavy in ((5_000, False), (50_000, True)):
        entries = "".join(f'[[allow]]\nrule = "SH101"\nsite = "m{i}.py:f"\nop = "aten::nonzero"\nreason = "r"\n\n'
                          for i in range(count))
        out.append(_gate_with(family, f"entries@{count}", BASELINE + "\n" + entries, exits=frozenset({0}),
                              heavy=heavy))
        out.append(_gate_with(family, f"entries-strict@{count}", BASELINE + "\n" + entries, exits=frozenset({1}),
                              extra=("--strict",), heavy=heavy))
    raw = {"utf8-bom": b"\xef\xbb\xbf" + BASELINE.encode(), "utf16": BASELINE.encode("utf-16"),
           "invalid-utf8": BASELINE.encode().replace(b"tiny", b"t\xffiny"), "nul": BASELINE.encode() + b"\x00",
           "raw-escape-in-string": BASELINE.encode().replace(b"tiny", b"\x1b[2J"),
           "allow-table": b'schema = "synchunt.baseline/1"\n[allow]\nrule = "SH101"\n', "allow-number": b"allow = 5\n",
           "duplicate-entry": (BASELINE + BASELINE.split("\n", 2)[2]).encode(), "empty": b"",
           "unknown-key": (BASELINE + "colour = 1\n").encode(), "not-toml": b"[[[",
           "stale-with-escapes": _baseline_entry(site='"\\u001b]0;pwned\\u0007x.py:f"').encode()}
    for label, data in raw.items():
        for extra in ((), ("--strict", "-f", "github"), ("-f", "junit")):
            suffix = "".join(extra).replace("-", "")
            out.append(_gate_with(family, f"{label}@{suffix or 'text'}", data, extra=extra,
                                  stdout_xml="junit" in extra))
    return out
