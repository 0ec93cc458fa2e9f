"""Families of text encoding (UTF-16, BOMs, invalid UTF-8, NUL, lone surrogates) and of bare JSON arrays.

A re-encoding keeps the events, so synchunt may refuse it (exit 2) but must not analyse it differently.
"""

from __future__ import annotations

import json
import random

import hostile_kineto as k
from hostile_case import ANY_EXIT, REFUSED, Case
from hostile_cmd import trace_case

MAYBE = frozenset({0, 2})


def cases(rng: random.Random) -> list[Case]:
    return [*encoding_cases(), *array_cases()]


def _raw_name(doc: k.Doc, replacement: bytes, where: int = 2) -> bytes:
    """The trace's bytes with the name of event ``where`` replaced by raw bytes (possibly not UTF-8)."""
    marker = "@@NAME@@"
    doc["traceEvents"][where]["name"] = marker
    return k.dumps(doc).replace(marker.encode(), replacement)


def encoding_cases() -> list[Case]:
    family = "encodings"
    out: list[Case] = []
    for base in ("cpu", "gpu"):
        text = json.dumps(k.base_doc(base))
        keep = {"exits": MAYBE, "verdict": k.base_verdict(base)}
        encoded = {
            "utf8-bom": b"\xef\xbb\xbf" + text.encode(), "utf16-le-bom": text.encode("utf-16"),
            "utf16-be-bom": b"\xfe\xff" + text.encode("utf-16-be"), "utf16-le": text.encode("utf-16-le"),
            "utf32": text.encode("utf-32"), "latin1-escaped": text.encode("latin-1"),
            # whitespace between tokens only: a name keeps its spaces (a tab in "Memcpy DtoH" is another name)
            "crlf": json.dumps(k.base_doc(base), separators=(",\r\n", ": ")).encode(),
            "tabs": json.dumps(k.base_doc(base), separators=(",\t", ":\t")).encode(),
            "leading-newlines": b"\n\n\r\n" + text.encode(), "trailing-nul": text.encode() + b"\x00",
            "leading-nul": b"\x00" + text.encode(), "trailing-garbage": text.encode() + b" garbage",
            "form-feed": text.replace(", ", ",\x0c").encode(), "ascii-escaped": json.dumps(
                k.base_doc(base), ensure_ascii=True).replace("aten", "\\u0061ten").encode(),
        }
        for label, data in encoded.items():
            out.append(trace_case(family, f"{base}-{label}", data, **keep))
            out.append(trace_case(family, f"{base}-{label}", data, "gate-text",
                                  exits=frozenset({1 if base != "empty" else 2, 2})))
    raw_names = {"invalid-ff": b'"step\xff"', "overlong-nul": b'"step\xc0\x80"', "lone-continuation": b'"\x80x"',
                 "cut-multibyte": b'"step\xe2\x82"', "latin1-e-acute": b'"caf\xe9"', "raw-nul": b'"a\x00b"',
                 "raw-newline": b'"a\nb"', "raw-esc": b'"a\x1b[2Jb"', "lone-surrogate": b'"step\\ud800"',
                 "surrogate-pair": b'"step\\ud83d\\ude00"', "escaped-nul": b'"a\\u0000b"',
                 "reversed-surrogates": b'"\\udc00\\ud800"', "noncharacter": b'"\\uffff\\ufffe"'}
    commands = ("analyze-text", "analyze-json", "gate-github", "gate-junit", "report", "analyze-csv")
    for label, raw in raw_names.items():
        for where, position in ((2, "scope"), (1, "thread")):
            doc = k.cpu_doc()
            if position == "thread":
                doc["traceEvents"][1]["args"]["name"] = "@@NAME@@"
                data = k.dumps(doc).replace(b'"@@NAME@@"', raw)
            else:
                data = _raw_name(doc, raw, where)
            for command in commands:
                out.append(trace_case(family, f"{position}-{label}", data, command, exits=ANY_EXIT))
    return out


def array_cases() -> list[Case]:
    """Bare arrays (the Chrome trace format allows them), and documents that are not objects at all."""
    family = "arrays"
    out: list[Case] = []
    events = k.cpu_doc()["traceEvents"]
    keep = {"exits": MAYBE, "verdict": k.CPU_VERDICT}
    bare = k.dumps(events)
    out.append(trace_case(family, "bare-events", bare, **keep))
    out.append(trace_case(family, "bare-events", bare, "gate-text", exits=frozenset({1, 2})))
    out.append(trace_case(family, "bare-events-unclosed", bare[:-1], exits=MAYBE))
    out.append(trace_case(family, "bare-events-trailing-comma", bare[:-1] + b",", exits=MAYBE))
    for label, data in {"empty-array": b"[]", "numbers": b"[1, 2, 3]", "nested-empty": b"[[]]",
                        "string": b'"traceEvents"', "number": b"5", "null": b"null", "true": b"true",
                        "empty-object": b"{}", "array-of-empty-objects": b"[{}, {}]",
                        "events-null": b'{"traceEvents": null}', "empty-file": b"", "whitespace": b" \n\t ",
                        "two-documents": k.dumps(k.cpu_doc()) + k.dumps(k.cpu_doc())}.items():
        for command in ("gate-text", "analyze-json", "report"):
            exits = REFUSED if command == "gate-text" and label != "two-documents" else ANY_EXIT
            out.append(trace_case(family, label, data, command, exits=exits))
    return out
