"""The rule registry, as ruff tests its own: well-formed entries, every name a stage matches known to that stage,
every blocking call mapped, and the generated reference kept in step."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from synchunt.detect.conditions import CONDITIONS
from synchunt.render.rules.markdown import rules_markdown
from synchunt.rules import RULES, RULES_BY_CODE, Kind, OpRole, catch_all_rule, get_rule
from synchunt.rules.index import non_blocking_call_names, non_blocking_sync_kinds, runtime_call_names
from synchunt.rules.not_syncs import NOT_SYNC_OPS, PROFILER_OWN_SYNC
from synchunt.trace import vocab

REPO = Path(__file__).resolve().parents[2]
DOC_SECTIONS = ("title", "what_it_does", "why_bad", "example", "use_instead", "mechanism", "fingerprint", "fix")


def test_codes_are_unique_sorted_and_in_their_series():
    codes = [rule.code for rule in RULES]
    assert len(codes) == len(set(codes)) == len(RULES_BY_CODE)
    assert codes == sorted(codes)
    for rule in RULES:
        assert re.fullmatch(r"SH[1-3]\d\d", rule.code)
        assert rule.code.startswith(rule.kind.series)
    assert {kind.series for kind in Kind} == {"SH1", "SH2", "SH3"}


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_is_named_documented_and_caught_somewhere(rule):
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
    assert not rule.name.startswith(("use-", "prefer-"))
    for section in DOC_SECTIONS:
        assert getattr(rule, section).strip(), f"{rule.code} lacks {section}"
    assert not rule.fix.endswith("."), "the fix is shown inside sentences"
    assert rule.stages, f"{rule.code} is caught by no stage"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_trace_ops_are_aten_ops_with_known_conditions(rule):
    for op in rule.trace_ops:
        assert "::" in op.op and (op.under is None or "::" in op.under)  # aten::index, torchvision::nms
        assert op.when is None or op.when in CONDITIONS, f"{rule.code}: no trace condition {op.when!r}"
        if op.role is OpRole.COPY:
            assert rule.copy_direction in ("DtoH", "HtoD"), f"{rule.code} has copy ops but no direction"


def test_one_catch_all_rule_and_every_runtime_call_named_once():
    assert [rule.code for rule in RULES if rule.catch_all] == [catch_all_rule().code]
    names = [call.name for rule in RULES for call in rule.runtime_calls]
    assert len(names) == len(set(names))
    assert not set(names) & non_blocking_call_names()
    for name in names:
        assert re.fullmatch(r"(cuda|hip|cu)[A-Z]\w+", name), name


def test_every_kineto_sync_kind_is_mapped_or_reviewed():
    mapped = {kind for rule in RULES for kind in rule.sync_kinds}
    assert mapped | non_blocking_sync_kinds() == set(vocab.SYNC_KINDS)
    assert not mapped & non_blocking_sync_kinds()


def test_reviewed_non_syncs_say_why():
    for entry in NOT_SYNC_OPS:
        assert entry.op in {op.op for rule in RULES for op in rule.trace_ops} and entry.reason
    assert get_rule(PROFILER_OWN_SYNC.calls_kind).runtime_calls
    assert PROFILER_OWN_SYNC.frames and PROFILER_OWN_SYNC.reason


def test_guard_declarations_are_known_to_the_guard():
    import importlib.util

    import torch

    from synchunt.guard.classify import PREDICATES

    for rule in RULES:
        for guard_op in rule.guard_ops:
            assert guard_op.when is None or guard_op.when in PREDICATES, f"{rule.code}: {guard_op.when!r}"
            namespace, _, name = guard_op.packet.rpartition("::")
            if namespace:  # a library's op: it exists once the library is loaded
                if importlib.util.find_spec(namespace) is not None:
                    importlib.import_module(namespace)
                    assert hasattr(getattr(torch.ops, namespace), name), f"{rule.code}: no {guard_op.packet}"
                continue
            # a legacy op may be gone from a newer torch (torch.cholesky in 2.14), with its Python function
            assert hasattr(torch.ops.aten, name) or not hasattr(torch, name), f"{rule.code}: no aten.{name}"
        for patch in rule.guard_patches:
            owner = torch
            for part in patch.target.split(".")[1:]:
                owner = getattr(owner, part, None)
                assert owner is not None, f"{rule.code}: {patch.target} does not exist in this torch"


def test_lint_forms_are_known_to_the_lint():
    from synchunt.lint.forms import resolve

    for rule in RULES:
        for form in rule.lint_forms:
            resolve(form)  # raises for an unknown form


@pytest.mark.parametrize("rule", [r for r in RULES if "lint" in r.stages], ids=lambda r: r.code)
def test_lint_rules_have_fixtures(rule):
    assert (REPO / "tests" / "lint" / "fixtures" / f"{rule.code}.py").is_file()


def test_unknown_code_names_itself():
    with pytest.raises(KeyError, match="SH999"):
        get_rule("SH999")


def test_generated_reference_is_current_and_truthful():
    path = REPO / "docs" / "rules.md"
    text = path.read_text(encoding="utf-8")
    assert text == rules_markdown(), "docs/rules.md is stale: run `synchunt rules --format markdown -o docs/rules.md`"
    for rule in RULES:
        row = next(line for line in text.splitlines() if line.startswith(f"| [{rule.code}]"))
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert (cells[3] != "-") == ("trace" in rule.stages)
        assert (cells[4] == "yes") == ("guard" in rule.stages)
        assert (cells[5] == "yes") == ("lint" in rule.stages)


def test_calls_that_real_traces_record_as_host_waits_are_catalogued(shared_trace):
    """Every runtime call that a real trace pairs with a blocking ``cuda_sync`` record is named by a rule."""
    paths = sorted(shared_trace(".").glob("**/*.json.gz"))
    from synchunt.trace import load_trace

    waits: set[str] = set()
    for path in paths:
        events = load_trace(path).events
        kinds = events[(events["cat"] == vocab.CUDA_SYNC)]
        blocking = set(kinds.loc[~kinds["sync_kind"].isin(list(non_blocking_sync_kinds())), "correlation"])
        calls = events[events["cat"].isin(list(vocab.RUNTIME_CATEGORIES)) & events["correlation"].isin(blocking)]
        waits |= set(calls["name"].astype(str))
    assert waits, "no blocking cuda_sync record in the shared traces"
    assert waits <= runtime_call_names() | non_blocking_call_names(), waits - runtime_call_names()
