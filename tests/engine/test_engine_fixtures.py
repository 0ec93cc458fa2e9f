"""Small hand-written Kineto traces, one or a few per rule code, each beside the syncs it should show.

Every ``tests/fixtures/traces/<name>.json`` has a ``<name>.expected.json``: the detection mode, every sync (rule,
op, confirmed or latent, runtime calls, call site, scope, direction, and optionally op chain, scope chain, step,
thread, tid, stack, via: the user's frame that led to a sync in library code) and the blocking calls set aside
as the profiler's own. The comparison is strict: a missing or extra sync, or any differing field, fails with a
message that says which. ``tests/fixtures/traces/README.md``
says what each fixture shows and which real trace or source its shape follows. These run in a plain clone.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import synchunt
from synchunt.detect import detect
from synchunt.rules import RULES

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "traces"
EXPECTED_SUFFIX = ".expected.json"

# Compared for every sync; a fixture without Python frames expects file/line/function to be null.
REQUIRED = ("rule", "op", "confirmed", "runtime", "direction", "file", "line", "function", "scope")
# Compared when the expectation names them.
OPTIONAL = ("op_chain", "scope_chain", "step", "thread", "tid", "stack", "via")
TOP_LEVEL = ("shows", "mode", "syncs", "set_aside")

# Fixtures whose expectation the current code does not meet; each reason says where the code disagrees.
# Fixtures whose expectation the product does not meet yet (each with the reason); empty when all pass.
XFAIL: dict[str, str] = {}


def fixture_names() -> list[str]:
    return sorted(p.name[: -len(".json")] for p in FIXTURES.glob("*.json") if not p.name.endswith(EXPECTED_SUFFIX))


def trace_path(name: str) -> Path:
    return FIXTURES / f"{name}.json"


def load_expected(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}{EXPECTED_SUFFIX}").read_text(encoding="utf-8"))


def _plain(value: Any) -> Any:
    """numpy/pandas scalars as Python values; NaN (a missing line) as None."""
    if hasattr(value, "item") and not isinstance(value, list | tuple | dict | str):
        value = value.item()
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if value.is_integer():
            return int(value)
    return value


def found_syncs(analysis: synchunt.Analysis) -> list[dict[str, Any]]:
    """Every attributed sync with the compared fields, in time order."""
    rows = []
    for row in analysis.syncs.sort_values("ts_us", kind="stable").to_dict("records"):
        found = {key: _plain(row[key]) for key in REQUIRED}
        found["confirmed"] = bool(row["confirmed"])
        found.update(op_chain=list(row["op_chain"]), scope_chain=list(row["scope_chain"]), step=row["step"],
                     thread=str(row["thread"]), tid=_plain(row["tid"]),
                     stack=[f"{f['file']}:{f['line']} {f['function']}" for f in row["stack"]], via=row["via"])
        rows.append(found)
    return rows


def _project(found: dict[str, Any], expected: dict[str, Any]) -> dict[str, Any]:
    return {key: found.get(key) for key in (*REQUIRED, *(k for k in OPTIONAL if k in expected))}


def _label(sync: dict[str, Any]) -> str:
    where = f"{sync.get('file')}:{sync.get('line')} {sync.get('function')}" if sync.get("file") else "no call site"
    return f"{sync.get('rule')} {sync.get('op')} ({where})"


def sync_differences(expected: list[dict[str, Any]], found: list[dict[str, Any]]) -> list[str]:
    """What differs between expected and found syncs (empty when they match one to one, in any order).

    Exact matches pair first; each remaining expectation pairs with the found sync sharing most fields, and the
    fields that differ are listed; what stays unpaired is reported missing or unexpected.
    """
    unmatched = list(range(len(found)))
    leftover = []
    for want in expected:
        hit = next((i for i in unmatched if _project(found[i], want) == _project(want, want)), None)
        if hit is None:
            leftover.append(want)
        else:
            unmatched.remove(hit)
    problems = []
    if len(expected) != len(found):
        problems.append(f"expected {len(expected)} syncs, found {len(found)}")
    for want in leftover:
        wanted = _project(want, want)
        best = max(unmatched, default=None,
                   key=lambda i: sum(_project(found[i], want)[k] == wanted[k] for k in wanted))
        if best is None:
            problems.append(f"missing: {_label(want)} {json.dumps(wanted, ensure_ascii=False)}")
            continue
        unmatched.remove(best)
        got = _project(found[best], want)
        fields = "; ".join(f"{k}: expected {wanted[k]!r}, found {got[k]!r}" for k in wanted if wanted[k] != got[k])
        problems.append(f"sync {_label(want)} differs: {fields}")
    for i in unmatched:
        problems.append(f"unexpected: {_label(found[i])} "
                        f"{json.dumps({k: found[i][k] for k in REQUIRED}, ensure_ascii=False)}")
    return problems


def fixture_differences(name: str) -> list[str]:
    """Everything in which the analysis of fixture ``name`` differs from its expectation."""
    expected = load_expected(name)
    path = trace_path(name)
    analysis = synchunt.analyze(path)
    problems = []
    mode = analysis.traces[0].mode
    if mode != expected["mode"]:
        problems.append(f"mode: expected {expected['mode']!r}, found {mode!r}")
    problems += sync_differences(expected["syncs"], found_syncs(analysis))
    set_aside = [entry.runtime for entry in detect(synchunt.load_trace(path)).set_aside]
    if sorted(set_aside) != sorted(expected["set_aside"]):
        problems.append(f"set aside: expected {expected['set_aside']}, found {set_aside}")
    return problems


def _cases() -> list[Any]:
    return [pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=XFAIL[name])) if name in XFAIL else name
            for name in fixture_names()]


@pytest.mark.parametrize("name", _cases())
def test_fixture_findings(name: str) -> None:
    problems = fixture_differences(name)
    assert not problems, f"{name}.json:\n  " + "\n  ".join(problems)


# ---- the fixture set itself


def test_fixtures_exist_in_pairs_with_well_formed_expectations() -> None:
    traces = set(fixture_names())
    expectations = {p.name[: -len(EXPECTED_SUFFIX)] for p in FIXTURES.glob(f"*{EXPECTED_SUFFIX}")}
    assert traces, f"no fixtures under {FIXTURES}"
    assert traces == expectations, f"unpaired: {sorted(traces ^ expectations)}"
    assert set(XFAIL) <= traces, f"XFAIL names no fixture: {sorted(set(XFAIL) - traces)}"
    for name in sorted(traces):
        expected = load_expected(name)
        assert set(expected) == set(TOP_LEVEL), f"{name}: top-level keys {sorted(expected)}"
        assert expected["mode"] in ("confirmed", "latent"), name
        for sync in expected["syncs"]:
            assert set(REQUIRED) <= set(sync) <= set(REQUIRED) | set(OPTIONAL), f"{name}: keys {sorted(sync)}"
            assert sync["confirmed"] == (expected["mode"] == "confirmed"), f"{name}: {_label(sync)}"


def test_readme_describes_every_fixture() -> None:
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    missing = [name for name in fixture_names() if f"`{name}`" not in readme]
    assert not missing, f"README.md does not describe: {missing}"


def _expected_rules(confirmed: bool) -> set[str]:
    return {sync["rule"] for name in fixture_names() for sync in load_expected(name)["syncs"]
            if sync["confirmed"] is confirmed}


def test_every_trace_rule_has_a_confirmed_fixture() -> None:
    trace_rules = {rule.code for rule in RULES if "trace" in rule.stages}
    missing = sorted(trace_rules - _expected_rules(confirmed=True))
    assert not missing, f"rules the trace detector catches with no confirmed fixture: {missing}"


def test_every_latent_rule_has_a_latent_fixture() -> None:
    latent_rules = {rule.code for rule in RULES if rule.latent_in_traces}
    missing = sorted(latent_rules - _expected_rules(confirmed=False))
    assert not missing, f"rules a CPU-only trace can show with no latent fixture: {missing}"


# ---- the comparison itself must fail loudly and say what differed


def _mutated(expected: list[dict[str, Any]], change: Callable[[list[dict[str, Any]]], None]) -> list[dict[str, Any]]:
    copy = json.loads(json.dumps(expected))
    change(copy)
    return copy


def test_comparison_names_what_differs() -> None:
    name = "SH103-nonzero-confirmed"
    found = found_syncs(synchunt.analyze(trace_path(name)))
    expected = load_expected(name)["syncs"]
    assert sync_differences(expected, found) == []
    assert sync_differences(list(reversed(expected)), found) == []  # order is not part of the contract

    wrong_line = sync_differences(_mutated(expected, lambda e: e[1].update(line=37)), found)
    assert wrong_line == ["sync SH103 aten::nonzero (app/alloc.py:37 free_cells) differs: "
                          "line: expected 37, found 36"]
    wrong_chain = sync_differences(_mutated(expected, lambda e: e[0].update(op_chain=["aten::index", "aten::nonzero"])),
                                   found)
    assert len(wrong_chain) == 1 and "op_chain: expected ['aten::index', 'aten::nonzero'], found ['aten::nonzero']" \
        in wrong_chain[0]

    missing_one = sync_differences(expected, found[:1])
    assert missing_one[0] == "expected 2 syncs, found 1"
    assert missing_one[1].startswith("missing: SH103 aten::nonzero (app/alloc.py:36 free_cells)")

    extra_one = sync_differences(expected[:1], found)
    assert extra_one[0] == "expected 1 syncs, found 2"
    assert extra_one[1].startswith("unexpected: SH103 aten::nonzero (app/alloc.py:36 free_cells)")
