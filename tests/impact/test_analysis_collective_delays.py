"""analyze() on a folder of ranks: each confirmed sync's collective delay, computed after the per-rank analyses
(possibly in worker processes) from what each kept of its collectives, agrees with collective_delays()."""

from __future__ import annotations

from pathlib import Path

import pytest
from impact_fixtures import ALL_GATHER, ALL_REDUCE, write_two_ranks

from synchunt.attribute import Analysis, analyze
from synchunt.detect import detect
from synchunt.executor import ExecutorSpec
from synchunt.impact import collective_delays
from synchunt.render.analysis.text import render_text
from synchunt.render.registry import RenderOptions
from synchunt.trace import LoadOptions, load_traces


def _ranks(folder: Path) -> Path:
    """The two ranks of the collective tests, rank 1 with a sync of its own before the all-gather."""
    return write_two_ranks(folder, rank1_syncs=True)


@pytest.fixture()
def ranks(tmp_path: Path) -> Path:
    return _ranks(tmp_path / "ranks")


def _by_rank(analysis: Analysis) -> dict[int | None, list[float | None]]:
    out: dict[int | None, list[float | None]] = {}
    for record in sorted(analysis.records, key=lambda r: (r.rank, r.ts_us)):
        out.setdefault(record.rank, []).append(record.collective_delay_us)
    return out


def test_delays_of_a_folder_of_ranks(ranks: Path) -> None:
    analysis = analyze([ranks])
    assert _by_rank(analysis) == {0: [200.0, 5.0], 1: [0.0]}
    # The same figures as the impact API computes on the loaded traces.
    traces = load_traces([ranks])
    expected = collective_delays(traces, [detect(t) for t in traces])
    assert {t.rank: [d.delay_us if d else None for d in ds] for t, ds in zip(traces, expected, strict=True)} == \
        _by_rank(analysis)
    infos = {info.rank: info.collectives for info in analysis.traces}
    assert infos[0] is not None and [infos[0].names[k] for k in infos[0].kernels] == [ALL_REDUCE, ALL_GATHER]
    assert infos[0].start_us == (310.0, 430.0)
    [site] = analysis.sites  # no Python frames: one site, the op, for all three syncs
    assert site.count == 3 and site.collective_delay_us == 205.0
    assert analysis.syncs["collective_delay_us"].dropna().sort_values().tolist() == [0.0, 5.0, 200.0]
    assert analysis.call_sites["collective_delay_us"].dtype == "Float64"


def test_delays_survive_worker_processes_and_json(ranks: Path) -> None:
    workers = analyze([ranks], load=LoadOptions(cache=False, executor=ExecutorSpec(kind="local", workers=2)))
    assert _by_rank(workers) == {0: [200.0, 5.0], 1: [0.0]}
    again = Analysis.from_json(workers.to_json())
    assert _by_rank(again) == _by_rank(workers)
    assert [info.collectives for info in again.traces] == [info.collectives for info in workers.traces]


def test_saved_rank_analyses_combine_like_the_traces(ranks: Path) -> None:
    """Each rank analysed on its own knows no delay; their saved analyses read back together do."""
    alone = [analyze(path) for path in sorted(ranks.iterdir())]
    assert all(r.collective_delay_us is None for a in alone for r in a.records)
    combined = analyze([Analysis.from_json(a.to_json()) for a in alone])
    assert _by_rank(combined) == {0: [200.0, 5.0], 1: [0.0]}


def test_no_delay_between_traces_that_are_not_ranks_of_one_job(ranks: Path, tmp_path: Path) -> None:
    """A second copy of rank 0 (another run) is not a peer: two traces of rank 0 match nothing."""
    other = tmp_path / "other"
    _ranks(other)
    mixed = analyze([ranks / "rank0.pt.trace.json.gz", other / "rank0.pt.trace.json.gz"])
    assert len(mixed.records) == 4 and all(r.collective_delay_us is None for r in mixed.records)


def test_terminal_table_shows_the_delay_only_when_known(ranks: Path) -> None:
    wide = RenderOptions(width=160)
    text = render_text(analyze([ranks]), wide)
    assert "collective" in text and "+205.0 µs" in text
    alone = render_text(analyze(ranks / "rank0.pt.trace.json.gz"), wide)
    assert "collective" not in alone
