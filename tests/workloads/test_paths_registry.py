"""Registration of the audit paths: names, option types, presets, and what the CLI relies on."""

from __future__ import annotations

import dataclasses
import re
import typing

import pytest

from synchunt.capture import get_workload, registered_workloads
from synchunt.capture.workload import Workload
from synchunt.rules import RULES_BY_CODE
from synchunt_workloads.paths import WORKLOADS

SIMPLE_TYPES = {int, str, bool, float}
KEBAB = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


def test_at_least_eight_paths_with_unique_kebab_names() -> None:
    names = [workload.name for workload in WORKLOADS]
    assert len(names) >= 8
    assert len(set(names)) == len(names)
    assert all(KEBAB.match(name) for name in names)


def test_paths_are_in_the_global_registry() -> None:
    registered = registered_workloads()
    for workload in WORKLOADS:
        assert registered[workload.name] is workload
        assert get_workload(workload.name) is workload


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.name)
def test_params_are_simple_typed_with_defaults(workload: Workload) -> None:
    assert dataclasses.is_dataclass(workload.params)
    hints = typing.get_type_hints(workload.params)
    fields = {f.name: f for f in dataclasses.fields(workload.params)}
    for name, field in fields.items():
        assert hints[name] in SIMPLE_TYPES, f"{workload.name}.{name} is {hints[name]}"
        assert field.default is not dataclasses.MISSING, f"{workload.name}.{name} has no default"
    assert {"variant", "device", "seed"} <= set(fields)
    defaults = workload.params()
    assert defaults.device == "cpu"
    assert defaults.variant in workload.variants.values()


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.name)
def test_registration_fields(workload: Workload) -> None:
    assert workload.variant_field == "variant"
    assert dict(workload.variants) == {"bad": "bad", "fixed": "fixed"}
    assert workload.thread_name == "scheduler"
    assert workload.summary and workload.mirrors.startswith("sglang ")
    assert ": " in workload.mirrors  # "<file>: <function>"
    assert workload.expected_rules
    assert all(code in RULES_BY_CODE for code in workload.expected_rules)


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.name)
def test_small_preset_is_valid_and_smaller(workload: Workload) -> None:
    known = {f.name for f in dataclasses.fields(workload.params)}
    assert workload.small
    assert set(workload.small) <= known
    assert "variant" not in workload.small and "device" not in workload.small
    small = workload.make_params({"variant": "fixed"}, small=True)
    defaults = workload.make_params({"variant": "fixed"})
    for name, value in workload.small.items():
        assert getattr(small, name) == value
        assert type(value) is type(getattr(defaults, name))
    workload.run_once(small)


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.name)
def test_docstring_names_the_real_function_and_the_rule(workload: Workload) -> None:
    module = __import__(workload.setup.__module__, fromlist=["__doc__"])
    doc = module.__doc__ or ""
    function = workload.mirrors.split(": ")[-1].split(".")[-1]
    assert function in doc
    for code in workload.expected_rules:
        assert code in doc


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.name)
def test_unknown_variant_is_rejected(workload: Workload) -> None:
    with pytest.raises(ValueError, match="variant"):
        workload.setup(workload.make_params({"variant": "neither"}, small=True))


@pytest.mark.parametrize(("name", "option", "value", "message"), [
    ("paged-allocator-free", "page_size", -4, "page_size must be positive"),
    ("dcp-kv-filter", "dcp_rank", 9, "dcp_rank 9 must be below dcp_size 8"),
    ("hicache-dcp", "dcp_size", 0, "dcp_size must be positive"),
    ("ngram-table-update", "variant", "worse", "variant must be one of"),
])
def test_bad_options_are_rejected_when_the_params_are_built(name, option, value, message):
    from synchunt.capture import get_workload

    with pytest.raises(ValueError, match=message):
        get_workload(name).make_params({option: value})
