"""The tailored rewrite of a call site's own line reaches the analysis: the seed's fix, with the user's names and
the condition under which it is equivalent, labelled a suggestion until checked."""

from __future__ import annotations

from pathlib import Path

import synchunt
from synchunt.render.analysis import ANALYSIS_FORMATS

REPO = Path(__file__).resolve().parents[2]
MASKED = REPO / "traces" / "samples" / "hicache-dcp-masked-cpu.pt.trace.json.gz"


def test_the_masked_translation_gets_the_seeds_strided_slice() -> None:
    analysis = synchunt.analyze(MASKED)
    [site] = analysis.sites
    rewrite = site.rewrite
    assert rewrite is not None and (rewrite.original, rewrite.replacement) == (
        "indices[indices % dcp_size == dcp_rank]", "indices[dcp_rank::dcp_size]")
    assert rewrite.condition and "dcp_size" in rewrite.condition and not rewrite.checked
    text = ANALYSIS_FORMATS.get("text")(analysis)
    assert "indices[dcp_rank::dcp_size]" in text and "a suggestion, not checked" in text
    document = analysis.to_json()
    assert document["call_sites"][0]["rewrite"]["replacement"] == "indices[dcp_rank::dcp_size]"
    assert synchunt.Analysis.from_json(document).sites[0].rewrite == rewrite  # kept with the trace it came from


def test_no_rewrite_without_readable_source(tmp_path: Path) -> None:
    data = synchunt.analyze(MASKED).to_json()
    data["traces"][0]["rewrites"] = []
    for sync in data["syncs"]:
        sync["call_site"]["file"] = "elsewhere/translate.py"
    assert synchunt.Analysis.from_json(data).sites[0].rewrite is None
