"""The lint's fresh samples: earlier samples left out of a new draw, and what a rule change dropped drawn
unmarked, then scored as the true findings the change lost."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

SPEC = importlib.util.spec_from_file_location("lint_precision",
                                              Path(__file__).parents[2] / "benchmarks" / "lint_precision.py")
lint_precision = importlib.util.module_from_spec(SPEC)
sys.modules.setdefault("lint_precision", lint_precision)
SPEC.loader.exec_module(lint_precision)


def _finding(package: str, line: int, confidence: str = "medium") -> dict:
    prefix = "sglang/srt" if package == "sglang" else "vllm"
    return {"package": package, "file": f"{prefix}/m.py", "line": line, "code": "SH301", "confidence": confidence,
            "context": "step", "scope": "f", "snippet": "x.item()"}


def _label(path: Path, verdicts: dict[int, str]) -> None:
    text = path.read_text(encoding="utf-8").split("\n")
    line_of = None
    for index, row in enumerate(text):
        if row.startswith("line = "):
            line_of = int(row.removeprefix("line = "))
        if row == 'verdict = ""':
            text[index] = f'verdict = "{verdicts[line_of]}"'
    path.write_text("\n".join(text), encoding="utf-8")


def test_a_draw_leaves_out_earlier_samples_and_mixes_in_what_was_dropped(tmp_path: Path, capsys) -> None:
    now = [_finding(p, n, c) for p in ("sglang", "vllm") for n, c in
           [(1, "high"), (2, "high"), (3, "medium"), (4, "medium"), (5, "medium")]]
    before = now + [_finding(p, n) for p in ("sglang", "vllm") for n in (100, 101)]
    earlier = tmp_path / "earlier.toml"
    earlier.write_text('[[finding]]\nfile = "sglang/srt/m.py"\nline = 5\ncode = "SH301"\n', encoding="utf-8")
    out = tmp_path / "sample.toml"
    lint_precision.draw_fresh(now, 4, 7, [], out, exclude=lint_precision.sampled_keys([earlier]), before=before,
                              dropped=2)
    document = lint_precision.tomllib.loads(out.read_text(encoding="utf-8"))
    drawn = {(f["package"], f["line"]) for f in document["finding"]}
    assert ("sglang", 5) not in drawn  # in the earlier sample
    assert {("sglang", 100), ("sglang", 101), ("vllm", 100), ("vllm", 101)} <= drawn
    assert all("dropped" not in str(f) for f in document["finding"])  # nothing in a finding says which
    [dropped] = [s for s in document["stratum"] if s["package"] == "vllm" and s["confidence"] == "dropped"]
    assert dropped["population"] == 2 and sorted(dropped["members"]) == ["vllm/m.py:100:SH301", "vllm/m.py:101:SH301"]

    # every kept finding true; one of the two dropped ones true: the change lost a share of the true findings
    _label(out, {1: "true", 2: "true", 3: "true", 4: "true", 5: "true", 100: "true", 101: "false"})
    assert lint_precision.score_fresh(out) == 0
    printed = capsys.readouterr().out
    assert "vllm     dropped by the change: 1 true of 2 sampled (of 2); true findings kept: 0.83" in printed
    vllm_default = next(row for row in printed.splitlines() if row.startswith("vllm     default"))
    assert vllm_default.split()[-1] == "1.00"  # the dropped ones are not scored as default findings
