"""Per rule, one shared case that the trace, the runtime guard and the lint all report at the same line, or the
reason one signal cannot (``CANNOT``).

Two snippets carry the cases, each rule's line marked with its code in a comment: ``tests/attribute/
sync_per_rule.py`` (host tensors: a CPU trace shows these ops as latent syncs) and ``sync_per_rule_device.py``
(copies and explicit syncs on the device, run under the shadow device). Each signal is run on its own: the
trace from a real ``torch.profiler`` capture without the guard pass, the guard by ``watch()``, the lint on the
file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

import synchunt
from synchunt.capture import CaptureSettings, capture, resolve_target
from synchunt.guard import watch
from synchunt.lint import lint_paths
from synchunt.rules import RULES

TESTS = Path(__file__).resolve().parents[1]
HOST_CASE = TESTS / "attribute" / "sync_per_rule.py"
DEVICE_CASE = TESTS / "corpus" / "sync_per_rule_device.py"
SIGNALS = ("trace", "guard", "lint")

_DEVICE_ONLY_TRACE = ("a CPU trace cannot tell a copy's devices apart and has no runtime calls: copies and "
                      "explicit syncs are confirmed only on GPU traces (tests/fixtures/traces/{code}-*.json)")
_RUNTIME_ONLY = ("a runtime call with no Python-level op of its own: seen only in a GPU trace's runtime events "
                 "(tests/fixtures/traces/{code}-*.json)")
CANNOT: dict[str, dict[str, str]] = {
    "SH111": {
        "trace": "since torch 2.5 multinomial checks its input with _assert_async: the CPU kernel reads nothing a "
                 "CPU trace shows (the CUDA trace does: tests/fixtures/traces/SH111-*.json)",
        "guard": "the same: the check is a device assert, no host read the guard can see on the CPU",
    },
    "SH115": {
        "trace": "a torchvision op: this suite's torch build does not install torchvision (its trace fixtures "
                 "tests/fixtures/traces/SH115-*.json stand for it)",
        "guard": "the same: tests/guard/test_guard_client_patterns.py covers it where torchvision is installed",
        "lint": "the lint matches torch's own API; a library op has no lint form",
    },
    "SH201": {"trace": _DEVICE_ONLY_TRACE},
    "SH202": {"trace": _DEVICE_ONLY_TRACE},
    "SH203": {
        "trace": _DEVICE_ONLY_TRACE,
        "lint": "whether a host tensor is pinned is decided where it is allocated, often far from the copy: "
                "no lint form",
    },
    "SH205": {"trace": _DEVICE_ONLY_TRACE},
    "SH301": {"trace": _DEVICE_ONLY_TRACE},
    "SH302": {"trace": _DEVICE_ONLY_TRACE},
    "SH303": {"trace": _DEVICE_ONLY_TRACE},
    "SH204": {"trace": _RUNTIME_ONLY, "guard": "a runtime call below any op the guard intercepts",
              "lint": "no Python-level form: it comes from inside native code"},
    "SH300": {"trace": "a blocking runtime call no other rule explains: there is no case to write for it",
              "guard": "on CUDA from the sync-debug signal only (a sync no catalogue op explains): a CPU run has "
                       "no such signal",
              "lint": "nothing in the source to match: an unexplained call has no form"},
    "SH304": {"trace": _RUNTIME_ONLY, "guard": "cudaFree happens inside the caching allocator, below every op",
              "lint": "no Python-level form: the allocator decides when to free"},
}


def marked_lines(path: Path) -> dict[str, set[int]]:
    """Each rule code named in a line's comment → the lines naming it."""
    lines: dict[str, set[int]] = {}
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        _, hash_, comment = text.partition("#")
        for code in re.findall(r"SH\d{3}", comment) if hash_ else ():
            lines.setdefault(code, set()).add(number)
    return lines


def _load(path: Path) -> tuple[Callable, Callable]:
    target = resolve_target(f"{path}:step", setup="setup")
    return target.setup, target.step


def _guard_lines(path: Path, shadow: bool) -> dict[str, set[int]]:
    setup, step = _load(path)
    if shadow:
        with synchunt.shadow_device():
            state = setup()
            with watch() as guard:
                step(state)
    else:
        state = setup()
        with watch() as guard:
            step(state)
    found: dict[str, set[int]] = {}
    for record in guard.violations:
        if record.file and Path(record.file).resolve() == path.resolve():
            found.setdefault(record.rule, set()).add(record.line)
    return found


def _lint_lines(path: Path) -> dict[str, set[int]]:
    found: dict[str, set[int]] = {}
    for finding in lint_paths([path]):
        found.setdefault(finding.code, set()).add(finding.line)
    return found


def _trace_lines(path: Path, out: Path) -> dict[str, set[int]]:
    captured = capture(resolve_target(f"{path}:step", setup="setup"), out, CaptureSettings(guard=False))
    found: dict[str, set[int]] = {}
    for record in synchunt.analyze(captured.path).records:
        found.setdefault(record.rule, set()).add(record.call_site.line)
    return found


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, set[int]]]:
    """signal → rule → the lines it reported, over both cases."""
    result: dict[str, dict[str, set[int]]] = {signal: {} for signal in SIGNALS}
    out = tmp_path_factory.mktemp("signals")
    for signal, lines in (("trace", _trace_lines(HOST_CASE, out)), ("guard", _guard_lines(HOST_CASE, False)),
                          ("guard", _guard_lines(DEVICE_CASE, True)), ("lint", _lint_lines(HOST_CASE)),
                          ("lint", _lint_lines(DEVICE_CASE))):
        for code, found in lines.items():
            result[signal].setdefault(code, set()).update(found)
    return result


def expected_lines() -> dict[str, set[int]]:
    host, device = marked_lines(HOST_CASE), marked_lines(DEVICE_CASE)
    assert not set(host) & set(device), "a rule's case lives in one snippet"
    return host | device


@pytest.mark.parametrize("rule", [rule.code for rule in RULES])
def test_every_signal_reports_the_rule_at_its_line_or_says_why_not(seen: dict, rule: str) -> None:
    expected = expected_lines().get(rule)
    reasons = CANNOT.get(rule, {})
    if expected is None:
        assert set(reasons) == set(SIGNALS), f"{rule}: no case line, so every signal needs a reason"
        return
    for signal in SIGNALS:
        reported = seen[signal].get(rule, set())
        if signal in reasons:
            assert not reported & expected, f"{rule}: {signal} now reports it; drop the stale reason"
        else:
            assert reported == expected, f"{rule}: {signal} reported lines {sorted(reported)}, the case marks " \
                                         f"{sorted(expected)}"


def test_no_signal_reports_a_rule_at_an_unmarked_line(seen: dict) -> None:
    expected = expected_lines()
    for signal in SIGNALS:
        for code, lines in seen[signal].items():
            assert lines <= expected.get(code, set()), f"{signal} reported {code} at unmarked lines"


def test_reasons_name_known_rules_and_signals() -> None:
    codes = {rule.code for rule in RULES}
    assert set(CANNOT) <= codes
    assert all(set(reasons) <= set(SIGNALS) and all(reasons.values()) for reasons in CANNOT.values())
