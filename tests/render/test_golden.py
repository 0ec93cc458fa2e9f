"""Every output format of every model, snapshotted from one hand-built set of models (``golden_models``).

A changed output fails until its golden file is updated on purpose: ``SYNCHUNT_UPDATE_GOLDEN=1 pytest
tests/render``. A new format without a golden file fails too. HTML pages are snapshotted by their data island
(the page's JSON); their script, styles and plotly.js are tested in ``tests/report``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import golden_models as models
import pytest

from synchunt.render.analysis import ANALYSIS_FORMATS
from synchunt.render.audit import AUDIT_FORMATS
from synchunt.render.comparison import COMPARISON_FORMATS
from synchunt.render.findings import FINDING_FORMATS
from synchunt.render.gate import GATE_FORMATS
from synchunt.render.registry import RenderOptions
from synchunt.render.rules import RULE_FORMATS
from synchunt.rules import get_rule

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("SYNCHUNT_UPDATE_GOLDEN") == "1"
REGISTRIES = {"analysis": (ANALYSIS_FORMATS, models.analysis), "comparison": (COMPARISON_FORMATS, models.comparison),
              "findings": (FINDING_FORMATS, models.findings), "gate": (GATE_FORMATS, models.gate),
              "audit": (AUDIT_FORMATS, models.audit), "rules": (RULE_FORMATS, lambda: [get_rule("SH101")])}
CASES = [(model, name) for model, (registry, _) in REGISTRIES.items() for name in registry.names()]
_DATA_ISLAND = re.compile(r'<script type="application/json" id="synchunt-data">(.*?)</script>', re.S)


def _text(rendered: str | bytes) -> str:
    """A renderer's text, or its bytes, which must be UTF-8."""
    assert isinstance(rendered, str | bytes)
    return rendered.decode("utf-8") if isinstance(rendered, bytes) else rendered


def _normalized(text: str, extension: str) -> str:
    if extension == ".html":
        match = _DATA_ISLAND.search(text)
        assert match, "an HTML page without its data island"
        data = json.loads(match[1])
        data.pop("version", None)
        return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    return text


@pytest.mark.parametrize(("model", "name"), CASES, ids=[f"{m}-{n}" for m, n in CASES])
def test_every_format_matches_its_golden_file(model: str, name: str) -> None:
    registry, build = REGISTRIES[model]
    renderer = registry.get(name)
    text = _normalized(_text(renderer(build(), RenderOptions(color=False, width=120))), renderer.extension)
    path = GOLDEN / model / f"{name}{'.json' if renderer.extension == '.html' else renderer.extension}"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no golden file for the {model} format {name!r}: run with SYNCHUNT_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), f"{path.relative_to(GOLDEN)} changed"


def test_machine_formats_are_strict_documents() -> None:
    for model, (registry, build) in REGISTRIES.items():
        for renderer in registry:
            text = _text(renderer(build()))
            if renderer.extension == ".json":
                json.loads(text, parse_constant=_refuse_non_finite)
            assert "\x1b" not in text, f"{model} {renderer.name} writes terminal escapes without a terminal"


def _refuse_non_finite(token: str) -> None:
    raise AssertionError(f"non-finite number {token} in a JSON document")


def test_no_golden_file_is_left_over() -> None:
    expected = {f"{m}/{n}" for m, n in CASES}
    found = {f"{p.parent.name}/{p.stem}" for p in GOLDEN.glob("*/*")}
    assert found <= expected, f"golden files for no format: {sorted(found - expected)}"
