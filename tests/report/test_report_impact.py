"""What the report shows of each sync's cost: GPU stream lanes with the work it waited for and the idle it caused,
labelled markers, units that read ms above 1,000 µs, per-path op and rule, and the site's own source line."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_support import data_island, html_report
from report_traces import ITEM_IDLE_US, LONG_STALL_US, NONZERO_IDLE_US, SITE_LINE, write_gpu_trace

from synchunt.attribute import Analysis, analyze
from synchunt.render.html.timeline import timeline_figure
from synchunt.render.html.view import build_model
from synchunt.report import build_report
from synchunt.report.timeline import build_timeline
from synchunt.trace import load_trace

GPU_LANE = "GPU 0 · stream 7"


@pytest.fixture(scope="module")
def gpu(gpu_trace: Path) -> Analysis:
    return analyze(gpu_trace)


def test_timeline_has_a_lane_per_stream_with_the_waited_on_work_and_the_idle(gpu: Analysis, gpu_trace: Path) -> None:
    timeline = build_timeline(load_trace(gpu_trace), gpu)
    assert timeline.lanes[-1] == GPU_LANE and timeline.stream_lanes == timeline.streams == 1
    device = timeline.bars[timeline.bars["lane"] == GPU_LANE]
    waited = device[device["kind"] == "waited-on"]
    # The gemm and the first copy (the .item()), the attention kernel and the second copy.
    assert sorted(waited["name"]) == ["Memcpy DtoH (Device -> Pageable)"] * 2 + [
        "void attention_kernel<64>(half*)", "void gemm_kernel<128>(float*)"]
    assert set(device.loc[device["kind"] == "kernel", "name"]) == {"void relu_kernel(float*)",
                                                                    "void softmax_kernel(half*)"}
    assert timeline.gaps["idle_us"].tolist() == [ITEM_IDLE_US, NONZERO_IDLE_US]
    assert timeline.gaps["lane"].tolist() == [GPU_LANE] * 2
    assert timeline.gaps["dur_ms"].tolist() == pytest.approx([0.187, 0.217])
    syncs = timeline.syncs
    assert syncs["label"].tolist() == ["SH109 item", "SH110 is_nonzero"]
    assert syncs["idle_us"].tolist() == [ITEM_IDLE_US, NONZERO_IDLE_US]
    assert syncs["wait_lane"].tolist() == [GPU_LANE] * 2
    assert syncs["wait_end_ms"].tolist() == pytest.approx([0.123, 150.393])  # where each copy ended
    assert "all 6 device activities shown" in timeline.note()


def test_timeline_figure_labels_lanes_markers_and_reads_ms(gpu: Analysis, gpu_trace: Path) -> None:
    figure = data_island(html_report(gpu, [gpu_trace]))["sides"][0]["timelines"][0]["figure"]
    yaxis = figure["layout"]["yaxis"]
    assert yaxis["tickvals"] == yaxis["categoryarray"] and GPU_LANE in yaxis["ticktext"]
    assert "thread 100 (python) · syncs" in yaxis["tickvals"] and "100 (python) · syncs" in yaxis["ticktext"]
    markers = next(t for t in figure["data"] if t.get("name") == "sync")
    assert markers["mode"] == "markers+text" and markers["text"] == ["SH109 item", "SH110 is_nonzero"]
    assert markers["marker"]["colorbar"]["title"]["text"] == "stall ms"  # 150 ms, not "150k" µs
    assert markers["marker"]["cmax"] == pytest.approx(LONG_STALL_US / 1e3, rel=1e-3)
    names = {t.get("name") for t in figure["data"]}
    assert {"work a sync waited for", "device idle a sync caused", "sync → the work it waited for"} <= names
    idle = next(t for t in figure["data"] if t.get("name") == "device idle a sync caused")
    assert "device idle 187.0 µs" in idle["hovertext"][0] and "app.py:30 check" in idle["hovertext"][0]
    assert "device idle 187.0 µs caused" in markers["hovertext"][0]


def test_long_lane_names_are_shortened_on_the_axis_only(tmp_path: Path) -> None:
    long_name = "thread 100 (a-python-worker-with-a-very-long-name)"
    trace = load_trace(write_gpu_trace(tmp_path / "long.pt.trace.json.gz", thread=long_name))
    timeline = build_timeline(trace, analyze(trace))
    assert timeline.lanes[:2] == [f"{long_name} · ops", f"{long_name} · syncs"]
    assert timeline.labels[:2] == ["100 (a-python-worke… · ops", "100 (a-python-worke… · syncs"]
    figure = timeline_figure(timeline)
    bar = next(t for t in figure["data"] if t.get("name") == "op around a sync")
    assert long_name in bar["hovertext"][0]  # the full name on hover
    markers = next(t for t in figure["data"] if t.get("name") == "sync")
    assert long_name in markers["hovertext"][0]


def test_sites_chart_and_header_show_idle_in_the_axis_unit(gpu: Analysis, gpu_trace: Path) -> None:
    side = data_island(html_report(gpu, [gpu_trace]))["sides"][0]
    header = side["model"]["header"]
    assert header["device_idle_us"] == ITEM_IDLE_US + NONZERO_IDLE_US and header["device_idle"] == "404.0 µs"
    [site] = side["model"]["sites"]
    assert site["device_idle_us"] == ITEM_IDLE_US + NONZERO_IDLE_US and site["max_idle_us"] == NONZERO_IDLE_US
    sites = side["figures"]["sites"]
    titles = [a["text"] for a in sites["layout"]["annotations"]]
    assert titles == ["syncs", "stall (ms)", "device idle caused (µs)"]
    stall, idle = sites["data"][1], sites["data"][2]
    assert stall["text"] == ["150.10 ms"] and stall["x"] == pytest.approx([150.096])  # labels and axis agree
    assert idle["text"] == ["404.0 µs"] and idle["x"] == [404.0]


def test_one_scope_hides_the_scope_chart(gpu: Analysis, gpu_trace: Path, masked_small: Path) -> None:
    assert len(build_model(gpu).scopes) == 1
    assert set(data_island(html_report(gpu, [gpu_trace]))["sides"][0]["figures"]) == {"sites", "callpath"}
    masked = analyze(masked_small)
    assert "scopes" in data_island(html_report(masked))["sides"][0]["figures"]  # four layers: shown


def test_call_paths_carry_their_own_op_and_rule(gpu: Analysis) -> None:
    [site] = build_model(gpu).sites
    paths = {tuple(f.function for f in entry.frames): (entry.op_chain, entry.rule, entry.count)
             for entry in site.paths}
    assert paths == {("check", "main"): ("aten::item › aten::_local_scalar_dense", "SH109", 1),
                     ("check", "helper", "main"): ("aten::is_nonzero › aten::item › aten::_local_scalar_dense",
                                                   "SH110", 1)}
    figure = data_island(html_report(gpu))["sides"][0]["figures"]["callpath"]["data"][0]
    leaves = [label for label in figure["labels"] if "›" in label]
    assert sorted(leaves) == ["aten::is_nonzero › aten::item › aten::_local_scalar_dense (SH110)",
                              "aten::item › aten::_local_scalar_dense (SH109)"]


def _with_site(analysis: Analysis, file: str, line_source: str) -> Analysis:
    data = analysis.to_json()
    for sync in data["syncs"]:
        sync["call_site"].update(file=file, line_source=line_source)
    return Analysis.from_json(data)


def test_the_sites_own_line_is_shown_when_readable(gpu: Analysis, tmp_path: Path) -> None:
    source = tmp_path / "app.py"
    source.write_text("\n" * (SITE_LINE - 1) + "    if flags.item() > 0:  # the line that syncs\n")
    exact = _with_site(gpu, str(source), "exact")
    [side] = build_report(exact).sides
    line = "if flags.item() > 0:  # the line that syncs"
    assert side.sources == {exact.sites[0].site: line}
    [site] = data_island(html_report(exact))["sides"][0]["model"]["sites"]
    assert site["source"] == {"file": str(source), "line": SITE_LINE, "text": line, "user": True}


@pytest.mark.parametrize(("file", "line_source"), [
    ("missing/app.py", "exact"),  # moved or from another machine
    ("app.py", "def"),  # the line is the function's first: not the line that synced
    ("notes.txt", "exact"),  # not a Python file
])
def test_no_line_when_it_cannot_be_read(gpu: Analysis, tmp_path: Path, file: str, line_source: str) -> None:
    (tmp_path / "notes.txt").write_text("secret\n" * 40)
    (tmp_path / "app.py").write_text("x = 1\n" * 40)
    path = file if file.startswith("missing") else str(tmp_path / file)
    analysis = _with_site(gpu, path, line_source)
    assert build_report(analysis).sides[0].sources == {}
    assert data_island(html_report(analysis))["sides"][0]["model"]["sites"][0]["source"] is None


def test_set_aside_and_partial_notes_reach_the_page(gpu: Analysis, gpu_trace: Path, tmp_path: Path) -> None:
    import gzip

    text = gzip.decompress(gpu_trace.read_bytes())
    cut = tmp_path / "cut.pt.trace.json"
    cut.write_bytes(text[: int(len(text) * 0.8)])
    partial = analyze(cut)
    assert partial.traces[0].partial is not None
    header = data_island(html_report(partial))["sides"][0]["model"]["header"]
    assert header["traces"][0]["partial"].startswith("partial trace: ")
    data = gpu.to_json()
    thread = data["syncs"][0]["thread"]
    data["traces"][0]["set_aside"] = [{"event": 0, "runtime": "cudaDeviceSynchronize", "ts_us": 151_000.0,
                                       "stall_us": 5.0, "pid": thread["pid"], "tid": thread["tid"],
                                       "thread": thread["name"],
                                       "reason": "torch.profiler synchronizes the device when its recording window "
                                                 "closes"}]
    header = data_island(html_report(Analysis.from_json(data)))["sides"][0]["model"]["header"]
    assert header["set_aside"].startswith("set aside, not counted: torch.profiler synchronizes the device")


def test_bert_trace_shows_the_idle_its_mask_check_caused(shared_trace) -> None:
    """The hand-checked figure of docs/impact.md: the mask check's copy, then 153.855 µs of idle."""
    path = shared_trace("real/tracelens/gaunernst_bert-small-uncased__1016001.json.gz")
    analysis = analyze(path)
    timeline = build_timeline(load_trace(path), analysis)
    assert GPU_LANE in timeline.lanes
    assert timeline.gaps["idle_us"].tolist() == pytest.approx([153.855], abs=1e-3)
    assert timeline.bars.loc[timeline.bars["kind"] == "waited-on", "name"].tolist() == [
        "Memcpy DtoH (Device -> Pinned)"]
    assert sorted(timeline.syncs["label"]) == ["SH110 is_nonzero", "SH301 cudaDeviceSynchronize"]
    focus = timeline.sync_focus()
    assert focus is not None and focus[1] >= float((timeline.gaps["start_ms"] + timeline.gaps["dur_ms"]).max())


def test_collective_delays_of_a_folder_of_ranks_reach_the_page(tmp_path: Path) -> None:
    from test_analysis_collective_delays import _ranks

    folder = _ranks(tmp_path / "ranks")
    analysis = analyze([folder])
    traces = [load_trace(path) for path in sorted(folder.iterdir())]
    data = data_island(html_report(analysis, traces))
    [side] = data["sides"]
    assert side["model"]["header"]["collective_delay_us"] == 205.0
    assert [s["collective_delay_us"] for s in side["model"]["sites"]] == [205.0]
    assert len(side["timelines"]) == 2  # one per rank
    markers = [next(t for t in timeline["figure"]["data"] if t.get("name") == "sync") for timeline in
               side["timelines"]]
    hovers = [hover for trace in markers for hover in trace["hovertext"]]
    assert sum("next collective +200.0 µs after the first rank" in h for h in hovers) == 1
    assert sum("next collective +5.0 µs after the first rank" in h for h in hovers) == 1
    titles = [a["text"] for a in side["figures"]["sites"]["layout"]["annotations"]]
    assert titles[-1] == "collective delay (µs)"
    assert set(side["figures"]) == {"sites"}  # one scope, and no Python frames to draw call paths from
