"""One sync model through every output: a field of ``Sync`` reaches JSON, CSV, the terminal table and the HTML page.

``synchunt.attribute.fields`` declares every field once; a field without an entry fails here. Then one sync whose
every field holds a marked value is rendered in every format, and each field's marked value must be found in
each: a format that leaves a field out fails (the HTML page is checked in its data here and in the rendered DOM
by ``tests/report/test_report_browser.py``).
"""

from __future__ import annotations

import json
from collections import Counter
from operator import attrgetter

import msgspec
import pytest
from attribute.field_probe import OTHER, PROBE, SHOWN, probe_analysis

from synchunt.attribute import CallSite, Sync, Thread
from synchunt.attribute.fields import FIELDS_BY_NAME, SYNC_FIELDS, site_details
from synchunt.render.analysis import ANALYSIS_FORMATS
from synchunt.render.registry import RenderOptions
from synchunt.sites import Frame


def test_every_field_of_the_model_is_declared_once() -> None:
    assert [field.name for field in SYNC_FIELDS] == list(Sync.__struct_fields__)
    for field in SYNC_FIELDS:
        assert field.shown_by is None or field.shown_by in FIELDS_BY_NAME
        assert field.columns, f"{field.name} has no column in the DataFrame view and CSV"


def test_every_shown_field_has_a_marked_value_here() -> None:
    assert set(SHOWN) == {field.name for field in SYNC_FIELDS if field.shown_by is None}


def _rendered(name: str) -> str:
    renderer = ANALYSIS_FORMATS.get(name)
    out = renderer(probe_analysis(), RenderOptions(color=False, width=200))
    return out.decode() if isinstance(out, bytes) else out


@pytest.mark.parametrize("name", ["text", "html"])
def test_each_field_reaches_the_human_formats(name: str) -> None:
    text = _rendered(name)
    if name == "html":  # the page's data island as the page script reads it
        text = json.dumps(json.loads(text.split('id="synchunt-data"', 1)[1].split(">", 1)[1].split("</script>")[0]),
                          ensure_ascii=False)
    missing = {field: shown for field, shown in SHOWN.items() if shown not in text}
    assert not missing, f"the {name} output leaves out: {missing}"


def test_each_field_reaches_json_and_csv() -> None:
    document = json.loads(_rendered("json"))
    probe = document["syncs"][0]
    assert set(probe) == set(Sync.__struct_fields__)
    assert probe == json.loads(msgspec.json.encode(PROBE))
    header, row = _rendered("csv").splitlines()[:2]
    columns = header.split(",")
    for field in SYNC_FIELDS:
        for column in field.columns:
            assert column.name in columns, f"{field.name}: no CSV column {column.name}"
    for field, shown in SHOWN.items():
        if field in ("stall_us", "collective_delay_us", "confirmed", "ts_us", "signals", "rank"):
            continue  # numbers and flags: the CSV holds the value, not its wording (checked below)
        assert shown.split(":")[0] in row, f"the CSV row leaves out {field}"
    assert "4321.0" in row and "666.0" in row and "True" in row and "guard" in row and ",3," in row


# A value unlike the probe's for every field of a sync (the probe's second site differs in only some).
_UNLIKE = {
    "rule": "SH101", "kind": "other kind", "confirmed": False, "op": "aten::nonzero", "op_chain": ("aten::nonzero",),
    "runtime": None, "thread": Thread(tid=1, pid=2, name="other-thread"), "ts_us": 5.0, "stall_us": 1.0,
    "stall_source": "other source", "call_site": CallSite("other.py", 3, "other"),
    "stack": (Frame("other.py", 3, "other"),), "scope": "other_scope", "scope_chain": ("other_scope",),
    "step": "ProfilerStep#1", "impact": None, "direction": "HtoD", "rank": None, "trace": "other.json",
    "signals": ("trace", "guard"), "collective_delay_us": None, "via": None, "phase": "steady",
    "device_branch": None}


def test_a_detail_text_depends_only_on_what_its_field_reads() -> None:
    """Site details count syncs by the attributes a field reads and render one text per distinct value: a text
    that changes with anything else would be miscounted. Every detail field declares what it reads."""
    assert set(_UNLIKE) == set(Sync.__struct_fields__)
    for field in SYNC_FIELDS:
        if field.text is None:
            continue
        assert field.reads, f"{field.name}: a detail text must say what it reads"
        key = attrgetter(*field.reads)
        # the probe without an op chain (the runtime call names it) and with two frames (whether the call path
        # is said depends on the via frame)
        bare = msgspec.structs.replace(PROBE, op_chain=(), stack=PROBE.stack[:2])
        for base in (PROBE, OTHER, bare):
            for name, value in _UNLIKE.items():
                changed = msgspec.structs.replace(base, **{name: value})
                if field.text(changed) != field.text(base):
                    assert key(changed) != key(base), f"{field.name}'s text reads {name}, not in {field.reads}"


def test_site_details_count_as_one_text_per_sync_would() -> None:
    members = [PROBE, OTHER, PROBE, msgspec.structs.replace(OTHER, ts_us=9.0, stall_us=2.0), PROBE,
               msgspec.structs.replace(PROBE, thread=Thread(tid=5, pid=77, name="probe-thread"))]
    for detail in site_details(members):
        field = FIELDS_BY_NAME[detail.field]
        expected = Counter(field.text(sync) for sync in members)
        assert detail.values == tuple((text, count) for text, count in expected.most_common() if text is not None)
