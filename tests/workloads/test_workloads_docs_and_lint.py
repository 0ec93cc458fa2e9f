"""What the workloads' docs and the lint say about them: docs/paths.md's table matches the registered paths, a
workload registered by another package is found like the repository's own, and the static lint sees each bad
variant's syncs (and nothing in the fixed HiCache translation)."""

from __future__ import annotations

import re
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from synchunt.capture.registry import collect
from synchunt.capture.workload import Workload
from synchunt.lint import lint_paths
from synchunt_workloads.paths import WORKLOADS

REPO = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| `(?P<name>[a-z0-9-]+)` \|.*\| (?P<rules>SH[0-9]{3}(?:, SH[0-9]{3})*)[^|]*\|$")


def _table_rows() -> dict[str, tuple[str, ...]]:
    rows = {}
    for line in (REPO / "docs" / "paths.md").read_text(encoding="utf-8").splitlines():
        match = ROW.match(line)
        if match:
            rows[match["name"]] = tuple(code.strip() for code in match["rules"].split(","))
    return rows


def test_the_paths_table_lists_every_registered_path_with_its_rules() -> None:
    rows = _table_rows()
    assert set(rows) == {workload.name for workload in WORKLOADS}
    for workload in WORKLOADS:
        assert set(rows[workload.name]) == set(workload.expected_rules), workload.name


def test_a_workload_another_package_registers_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "otherpkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from dataclasses import dataclass\n"
        "from synchunt.capture.workload import Workload\n\n"
        "@dataclass(frozen=True)\n"
        "class Params:\n    variant: str = 'bad'\n    device: str = 'cpu'\n\n"
        "WORKLOADS = (Workload(name='other-path', summary='s', mirrors='otherpkg: f', params=Params,\n"
        "                      setup=lambda params: None, step=lambda state: None),)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    table = collect([EntryPoint("otherpkg", "otherpkg:WORKLOADS", "synchunt.workloads"),
                     EntryPoint("paths", "synchunt_workloads.paths:WORKLOADS", "synchunt.workloads")])
    assert isinstance(table["other-path"], Workload) and table["other-path"].mirrors == "otherpkg: f"
    assert {workload.name for workload in WORKLOADS} < set(table)


def test_the_lint_sees_the_hicache_translation_syncs() -> None:
    translate = REPO / "workloads" / "hicache_dcp" / "translate.py"
    findings = [f for f in lint_paths([translate]) if not f.is_problem]
    assert ("SH101", "dcp_kernel_indices_masked") in {(f.code, f.scope) for f in findings}
    assert not [f for f in findings if f.scope == "dcp_kernel_indices_sliced"]


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda w: w.name)
def test_the_lint_sees_each_paths_rules_in_its_module(workload: Workload) -> None:
    """Each path's expected rules that have a static form are found in its module (its bad variant)."""
    from synchunt.rules import get_rule

    module = REPO / "workloads" / "paths" / (workload.step.__module__.rsplit(".", 1)[-1] + ".py")
    found = {f.code for f in lint_paths([module]) if not f.is_problem}
    static = {code for code in workload.expected_rules if get_rule(code).has_static_form}
    assert static <= found, f"{module.name}: the lint misses {sorted(static - found)}"
