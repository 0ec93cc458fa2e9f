"""The exit-status and stream contract checked on real processes (``python -m synchunt``), not forked children:
what a CI job or a shell actually sees, interpreter start and exit included."""

from __future__ import annotations

import gzip
import json
import random

import hostile_kineto as k
from hostile_case import REFUSED, Case, Expect, files
from hostile_fam_forged import analysis_doc


def cases(rng: random.Random) -> list[Case]:
    cpu = k.dumps(k.cpu_doc())
    packed = gzip.compress(cpu, mtime=0)
    corrupt = packed[:30] + bytes([packed[30] ^ 0x55]) + packed[31:]
    forged = analysis_doc()
    del forged["syncs"][0]["rule"]
    json_out = {"stdout_json": True, "check_stdout_text": False}
    plan: list[tuple[str, tuple[str, ...], dict[str, bytes | str], Expect]] = [
        ("analyze-json", ("analyze", "t.json", "-f", "json"), {"t.json": cpu},
         Expect(exits=frozenset({0}), verdict=k.CPU_VERDICT, **json_out)),
        ("gate-fails-on-a-sync", ("gate", "t.json"), {"t.json": cpu}, Expect(exits=frozenset({1}))),
        ("gate-without-evidence", ("gate", "t.json"), {"t.json": b'{"traceEvents": []}'}, Expect(exits=REFUSED)),
        ("corrupt-gzip", ("analyze", "t.json.gz"), {"t.json.gz": corrupt}, Expect(exits=REFUSED)),
        ("missing-trace", ("gate", "missing.json"), {}, Expect(exits=REFUSED, error_mentions="missing.json")),
        ("output-is-input", ("analyze", "t.json", "-f", "json", "-o", "t.json"), {"t.json": cpu},
         Expect(exits=REFUSED, unchanged=("t.json",))),
        ("forged-analysis", ("gate", "saved.json"), {"saved.json": json.dumps(forged)},
         Expect(exits=REFUSED, error_mentions="rule")),
        ("mixed-frames-report", ("report", "t.json", "-o", "r.html"), {"t.json": k.dumps(k.mixed_doc())},
         Expect(exits=frozenset({0}))),
        ("mixed-frames-json", ("analyze", "t.json", "-f", "json"), {"t.json": k.dumps(k.mixed_doc())},
         Expect(exits=frozenset({0}), verdict=k.MIXED_VERDICT, **json_out)),
        ("lint-nul-byte", ("lint", "src.py"), {"src.py": b"x = 1\n\x00\n"}, Expect(error_line=False)),
    ]
    return [Case(id=f"contract/{name}/process", family="contract", argv=argv, build=files(contents),
                 expect=expect, isolation="process", timeout_s=20.0)
            for name, argv, contents, expect in plan]
