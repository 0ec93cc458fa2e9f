"""Registry meta-tests for the guard (as ruff does for its rules): every op the installed torch tags as
data-dependent has a rule or a reviewed "not a host sync" entry, the reviewed entries hold up, and the guard's
code names no op and no rule code of its own (it reads them from ``synchunt.rules``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import msgspec
import pytest
import torch

from synchunt.rules import RULES
from synchunt.rules.reviewed import NOT_HOST_SYNC_CALLS, NOT_HOST_SYNCS

GUARD_DIR = Path(__file__).resolve().parents[2] / "synchunt" / "guard"
DATA_DEPENDENT_TAGS = (torch.Tag.dynamic_output_shape, torch.Tag.data_dependent_output)


def _tagged_overloads() -> list[str]:
    found = []
    for qualified in torch._C._dispatch_get_all_op_names():
        namespace, _, name = qualified.partition("::")
        packet = getattr(torch.ops.aten, name, None) if namespace == "aten" else None
        if packet is None:
            continue
        for overload in packet.overloads():
            if any(tag in getattr(packet, overload).tags for tag in DATA_DEPENDENT_TAGS):
                found.append(f"{name}.{overload}")
    return sorted(found)


def _guard_packets() -> set[str]:
    return {guard_op.packet for rule in RULES for guard_op in rule.guard_ops}


def test_the_installed_torch_tags_data_dependent_ops() -> None:
    assert len(_tagged_overloads()) >= 15  # nonzero, unique*, masked_select, item, equal, …


@pytest.mark.parametrize("overload", _tagged_overloads())
def test_every_data_dependent_op_maps_to_a_rule_or_a_reviewed_entry(overload: str) -> None:
    packet = overload.split(".", 1)[0]
    reviewed = {entry.packet for entry in NOT_HOST_SYNCS}
    assert packet in _guard_packets() | reviewed, (
        f"aten.{overload} is tagged data-dependent: give it a rule's guard op or a reviewed entry "
        "in synchunt/rules/reviewed.py")


def test_reviewed_entries_name_real_ops_and_say_why_and_where() -> None:
    packets = [entry.packet for entry in NOT_HOST_SYNCS]
    assert len(packets) == len(set(packets))
    for entry in NOT_HOST_SYNCS:
        assert hasattr(torch.ops.aten, entry.packet), entry.packet
        assert entry.reason and entry.source.startswith(("pytorch ", "https://pytorch.org/")), entry
    assert not set(packets) & _guard_packets(), "an op is either a rule's guard op or reviewed, not both"


def test_reviewed_calls_exist_in_this_torch() -> None:
    from synchunt.guard.patches import _resolve_owner

    for call in NOT_HOST_SYNC_CALLS:
        owner = _resolve_owner(call.target)
        assert owner is not None and callable(getattr(owner, call.target.rsplit(".", 1)[1], None)), call.target
        assert call.reason and call.source, call


def _code_strings(tree: ast.Module) -> list[str]:
    """String constants that are neither docstrings nor argument names (``call.arg("std")``)."""
    skipped = {id(node.body[0].value) for node in ast.walk(tree)
               if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
               and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    skipped |= {id(argument) for node in ast.walk(tree)
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "arg"
                for argument in node.args}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped]


def _aten_attributes(tree: ast.Module) -> list[str]:
    """``torch.ops.aten.<name>`` written out in code."""
    return [ast.unparse(node) for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
            and node.value.attr == "aten" and ast.unparse(node.value) == "torch.ops.aten"]


@pytest.mark.parametrize("path", sorted(GUARD_DIR.glob("*.py")), ids=lambda p: p.name)
def test_guard_code_names_no_rule_code_and_no_op(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    packets = _guard_packets() | {entry.packet for entry in NOT_HOST_SYNCS}
    strings = _code_strings(tree)
    assert not [s for s in strings if re.search(r"\bSH\d{3}\b", s)], "rule codes belong in synchunt/rules"
    assert not [s for s in strings if re.search(r"aten::\w", s) or s in packets], "op names belong in synchunt/rules"
    assert not _aten_attributes(tree), "op names belong in synchunt/rules"


def test_every_name_the_catalogue_uses_is_registered_and_every_registered_name_is_used() -> None:
    """The catalogue names its conditions as strings; each registry answers exactly to those names."""
    from synchunt.detect.conditions import CONDITIONS
    from synchunt.guard.patches import PATCH_CONDITIONS
    from synchunt.guard.predicates import PREDICATES

    declared = {
        "trace conditions": ({op.when for rule in RULES for op in rule.trace_ops if op.when}, set(CONDITIONS)),
        "guard predicates": ({op.when for rule in RULES for op in rule.guard_ops if op.when}, set(PREDICATES)),
        "guard patch conditions": ({patch.when for rule in RULES for patch in rule.guard_patches if patch.when},
                                   set(PATCH_CONDITIONS)),
    }
    for registry, (used, known) in declared.items():
        assert used <= known, f"{registry}: the catalogue names unknown {sorted(used - known)}"
        assert known <= used, f"{registry}: nothing in the catalogue uses {sorted(known - used)}"


def test_an_unknown_trace_condition_fails_loudly() -> None:
    from synchunt.detect.conditions import holds

    assert holds(None, None)
    with pytest.raises(KeyError, match="no trace condition named 'no-such-condition'"):
        holds("no-such-condition", None)


def test_an_unknown_guard_name_fails_when_the_guard_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    from synchunt.guard import classify, patches
    from synchunt.rules.model import GuardOp, GuardPatch

    rule = next(rule for rule in RULES if rule.guard_ops)
    broken_op = msgspec.structs.replace(rule, guard_ops=(GuardOp("index", when="no-such-predicate"),))
    monkeypatch.setattr(classify, "RULES", (broken_op,))
    with pytest.raises(KeyError, match="no-such-predicate"):
        classify.build_table()
    broken_patch = msgspec.structs.replace(rule, guard_patches=(GuardPatch("torch.Tensor.tolist", when="nope"),))
    monkeypatch.setattr(patches, "RULES", (broken_patch,))
    monkeypatch.setattr(patches, "_PLAN", None)
    with pytest.raises(KeyError, match="nope"):
        patches._plan()
