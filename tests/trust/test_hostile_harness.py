"""The hostile harness itself: the corpus is big, deterministic and complete, the judge catches each failure kind,
and the capped child really times out, caps memory and drains large output. These pass today and always must."""

from __future__ import annotations

import json
import random
import sys

import hostile
import hostile_kineto as k
import pytest
from hostile_case import ANY_EXIT, REFUSED, Case, Expect, files
from hostile_judge import Run, judge, verdict_of
from hostile_runner import run_cases, run_one
from trust_support import CORPUS, SEED

REQUIRED_FAMILIES = {"gzip", "truncation", "byteflip", "types", "numeric", "nesting", "sizes", "encodings", "arrays",
                     "nonregular", "forged-analysis", "baseline", "escapes", "lint", "verdict", "data-loss",
                     "no-evidence", "targets", "contract"}


def test_the_corpus_is_big_and_covers_every_family():
    assert len(CORPUS) >= 2000
    assert {case.family for case in CORPUS.values()} >= REQUIRED_FAMILIES


def test_the_corpus_is_the_same_for_the_same_seed(tmp_path):
    again = hostile.all_cases(SEED)
    assert [case.id for case in again] == list(CORPUS)
    rng = random.Random(0)
    for case in rng.sample([c for c in again if not c.heavy and c.family in ("byteflip", "truncation", "gzip",
                                                                             "types", "verdict")], 12):
        first, second = tmp_path / "a" / case.id, tmp_path / "b" / case.id
        for folder in (first, second):
            folder.mkdir(parents=True)
        case.build(first)
        CORPUS[case.id].build(second)
        assert {p.name: p.read_bytes() for p in first.iterdir()} == {p.name: p.read_bytes() for p in second.iterdir()}


def test_another_seed_gives_other_mutations():
    other = {case.id for case in hostile.all_cases(SEED + 1) if case.family == "byteflip"}
    assert other != {case_id for case_id, case in CORPUS.items() if case.family == "byteflip"}


def test_the_sample_is_fast_light_and_touches_every_family():
    sample = hostile.sample(list(CORPUS.values()))
    assert 100 <= len(sample) <= 200
    assert not any(case.heavy for case in sample)
    assert {case.family for case in sample} == {case.family for case in CORPUS.values()}


def test_the_salvage_oracle_counts_whole_events_only():
    text = k.dumps(k.chain_doc(5))
    spans = k.event_spans(text)
    assert [json.loads(text[a:b])["ph"] for a, b in spans] == ["M", "M", "X", "X", "X", "X", "X"]
    assert k.syncs_before(text, len(text)) == 5
    assert k.syncs_before(text, spans[3][1]) == 2
    assert k.syncs_before(text, spans[3][1] - 1) == 1  # the closing brace of the second sync is cut off


def _run(exit_code=0, stdout=b"", stderr=b"", **changes) -> Run:
    values = {"exit_code": exit_code, "signal": None, "timed_out": False, "why": "", "wall_s": 0.1, "cpu_s": 0.1,
              "peak_rss_mb": 200.0, "memory_cap_mb": 1224.0, "stdout": stdout, "stderr": stderr}
    return Run(**{**values, **changes})


def _case(**expect) -> Case:
    return Case(id="x/y/z", family="x", argv=(), build=files({}), expect=Expect(**expect))


ANALYSIS = json.dumps({"summary": {"syncs": 1, "confirmed": 0, "latent": 1},
                       "syncs": [{"rule": "SH101", "op": "aten::nonzero",
                                  "call_site": {"file": "model.py", "line": 12, "function": "forward"}}],
                       "traces": [{"partial": True}]}).encode()


@pytest.mark.parametrize("run, expect, kind", [
    (_run(timed_out=True, exit_code=None, signal=9), {}, "hang"),
    (_run(1, stderr=b"Traceback (most recent call last):\n  File x\nKeyError: 'rule'\n"), {}, "traceback"),
    (_run(3, stderr=b"error: internal error: please report it\n"), {}, "traceback"),
    (_run(None, signal=11), {}, "traceback"),
    (_run(1, stderr=b"MemoryError\n", peak_rss_mb=1100.0), {}, "memory"),
    (_run(0, peak_rss_mb=1300.0), {}, "memory"),
    (_run(0, changed=["t.json"]), {}, "data loss"),
    (_run(0), {"exits": REFUSED}, "wrong exit"),
    (_run(2, stderr=b"error: no such option: --force\n"), {"exits": REFUSED}, "wrong exit"),
    (_run(2, stderr=b"Usage: synchunt gate\n"), {"exits": REFUSED}, "bad output"),
    (_run(2, stderr=b"error: one\nerror: two\n"), {}, "bad output"),
    (_run(2, stderr=b"error: bad stall\n"), {"error_mentions": "rule"}, "bad output"),
    (_run(0, stdout=b'{"a": NaN}'), {"stdout_json": True}, "bad output"),
    (_run(0, stdout=b"<testsuite><"), {"stdout_xml": True}, "bad output"),
    (_run(0, stdout=b"thread \x1b[2J"), {}, "bad output"),
    (_run(1, stderr=b"gate failed on \x9b2J\n"), {}, "bad output"),
    (_run(0, stdout=b"model.py:nan nan"), {"no_nan_text": True}, "bad output"),
    (_run(0, stdout=b"ok\n::error file=evil.py::x"), {"forbid_line": "::error file=evil.py"}, "bad output"),
    (_run(0, stderr=b"/x/y.py:49: RuntimeWarning: overflow\n"), {}, "bad output"),
    (_run(0, oversized=["r.html"]), {}, "bad output"),
    (_run(0, stdout=ANALYSIS), {"stdout_json": True, "verdict": k.GPU_VERDICT}, "wrong verdict"),
    (_run(0, stdout=ANALYSIS), {"stdout_json": True, "salvage": 2}, "wrong verdict"),
    (_run(2, stderr=b"error: truncated\n"), {"salvage": 1}, "wrong verdict"),
    (_run(0, kept=["out.json"]), {}, "wrong verdict"),
    (_run(0, stdout=ANALYSIS), {"stdout_json": True, "verdict": k.CPU_VERDICT, "salvage": None}, "pass"),
    (_run(0, stdout=ANALYSIS), {"stdout_json": True, "salvage": 1}, "pass"),
    (_run(2, stderr=b"error: t.json: not a trace\n"), {"exits": REFUSED, "error_mentions": "t.json"}, "pass"),
    (_run(1, stdout=b"thread\ttab\n"), {"exits": ANY_EXIT}, "pass"),
])
def test_the_judge_names_the_first_broken_rule(run, expect, kind):
    assert judge(_case(**expect), run)[0] == kind


def test_the_verdict_ignores_paths_and_order():
    doc = {"summary": {"syncs": 2, "confirmed": 2, "latent": 0},
           "syncs": [{"rule": "SH109", "op": "aten::_local_scalar_dense", "trace": "/a/t.json",
                      "call_site": {"file": "model.py", "line": 20, "function": "step"}},
                     {"rule": "SH109", "op": "aten::_local_scalar_dense", "call_site": {"file": "", "line": 0}}]}
    assert verdict_of(doc) == k.MIXED_VERDICT | {"rules": ["SH109"]}


def _python(code: str, **case) -> Case:
    return Case(id="self/test/python", family="self", argv=("-c", code), build=files({}), isolation="process",
                program=(), **case)


def test_a_blocked_child_is_killed_on_its_deadline(tmp_path):
    result = run_one(_python("import time; time.sleep(30)", timeout_s=1.0), tmp_path / "c")
    assert result.kind == "hang" and "blocked" in result.detail and result.wall_s < 10


def test_a_busy_child_is_killed_when_its_cpu_is_spent(tmp_path):
    result = run_one(_python("while True: pass", timeout_s=1.0), tmp_path / "c")
    assert result.kind == "hang" and ("CPU" in result.detail) and result.wall_s < 10


def test_the_child_memory_is_capped(tmp_path):
    result = run_one(_python("x = bytearray(3 << 30)"), tmp_path / "c")
    assert result.kind in ("memory", "traceback") and "MemoryError" in result.stderr_tail


def test_large_output_is_drained_not_blocking(tmp_path):
    result = run_one(_python("import sys; sys.stdout.write('x' * (40 << 20))", timeout_s=30.0), tmp_path / "c")
    assert result.kind == "bad output" and "stdout is" in result.detail


def test_a_write_past_the_file_size_limit_fails_but_the_message_gets_out(tmp_path):
    code = ("import sys\ntry:\n    with open('out', 'w') as f:\n        f.write('y' * 5000)\nexcept OSError as e:\n"
            "    print('error: cannot write out:', e.strerror, file=sys.stderr); sys.exit(2)\n")
    result = run_one(_python(code, file_size_limit=100, expect=Expect(exits=REFUSED)), tmp_path / "c")
    assert result.kind == "pass", result.detail


def test_the_warm_workers_run_real_cases(tmp_path):
    ids = ["verdict/cpu-original/analyze-json", "verdict/gpu-gzip/gate-text", "arrays/empty-array/gate-text"]
    results = run_cases(ids, seed=SEED, workers=2, root=tmp_path)
    assert [r.id for r in results] == ids
    assert [r.kind for r in results] == ["pass", "pass", "pass"], [r.detail for r in results]
    assert sys.executable  # the workers run this same interpreter, where synchunt is installed
