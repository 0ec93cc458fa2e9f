"""Score a synchunt analysis (its JSON document, read as plain JSON) against a target's truth, at the exact line.

Lines are compared as multisets: a truth line with 3 syncs per step over 2 recorded steps expects 6 reports there,
so a sync reported twice (or at a def line) costs precision, one never reported costs recall. Two lines are
scored for each sync:

- ``site``: where the sync happens, the innermost frame outside torch (a library's line, or the user's);
- ``via``: the innermost frame in the user's target file, the line of theirs that led there.

The analysis is read defensively, so fields added later keep it working: each sync's ``call_site`` is its site;
its ``via`` (``{"file", "line"}``) when the analysis has one, else the call site itself when that is in the user's
file (what synchunt reports today); ``count`` when a sync record stands for several.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DEF_SOURCES = {"def", None}


def file_name(path: str) -> str:
    """A file as the truth names it: after ``site-packages/`` for a library, relative to the repository else."""
    for marker in (f"{os.sep}site-packages{os.sep}", "site-packages/"):
        if marker in path:
            return path.rsplit(marker, 1)[1]
    if os.path.isabs(path):
        try:
            return str(Path(path).resolve().relative_to(REPO))
        except ValueError:
            return path
    return path


def _line(frame: Mapping[str, Any] | None) -> str | None:
    if not isinstance(frame, Mapping) or not frame.get("file") or frame.get("line") is None:
        return None
    return f"{file_name(str(frame['file']))}:{int(frame['line'])}"


@dataclass(frozen=True)
class Reported:
    site: str | None
    via: str | None
    exact: bool
    count: int


def reported_syncs(analysis: Mapping[str, Any], user_file: str) -> list[Reported]:
    syncs = []
    for sync in analysis.get("syncs", []):
        site = sync.get("call_site")
        via = sync.get("via")
        site_line = _line(site)
        if isinstance(via, Mapping):
            via_line = _line(via)
        elif isinstance(via, str) and ":" in via:  # "file:line"
            file, _, line = via.rpartition(":")
            via_line = f"{file_name(file)}:{line}" if line.isdigit() else None
        else:  # no via in this analysis: the call site is the user's line when it is in the user's file
            via_line = site_line if site_line and site_line.rsplit(":", 1)[0] == user_file else None
        exact = isinstance(site, Mapping) and site.get("line_source") not in DEF_SOURCES
        syncs.append(Reported(site_line, via_line, exact, int(sync.get("count", 1) or 1)))
    return syncs


@dataclass(frozen=True)
class Score:
    truth: int
    reported: int
    matched: int

    @property
    def precision(self) -> float:
        return self.matched / self.reported if self.reported else (1.0 if not self.truth else 0.0)

    @property
    def recall(self) -> float:
        return self.matched / self.truth if self.truth else 1.0


def multiset_score(truth: Counter[str], reported: Counter[str]) -> Score:
    matched = sum(min(n, reported.get(line, 0)) for line, n in truth.items())
    return Score(sum(truth.values()), sum(reported.values()), matched)


@dataclass(frozen=True)
class TargetScore:
    target: str
    path: str  # "cpu_path" or "cuda_path"
    site: Score
    via: Score
    exact_share: float
    headline: int | None  # the analysis' summary count
    truth_total: int
    missed: tuple[tuple[str, str, int], ...]  # (site, kind, how many) the analysis did not report there
    extra: tuple[tuple[str, int], ...]  # (line, how many) reported beyond the truth


def truth_lines(truth: Mapping[str, Any], path: str, steps: int, field: str) -> Counter[str]:
    lines: Counter[str] = Counter()
    for sync in truth["syncs"]:
        if sync[path] and sync.get(field):
            lines[sync[field]] += sync[path] * steps
    return lines


def score(analysis: Mapping[str, Any], truth: Mapping[str, Any], *, path: str = "cpu_path",
          steps: int = 1) -> TargetScore:
    reported = reported_syncs(analysis, truth["file"])
    site_reported: Counter[str] = Counter()
    via_reported: Counter[str] = Counter()
    for sync in reported:
        site_reported[sync.site or "<no line>"] += sync.count
        via_reported[sync.via or "<no line>"] += sync.count
    site_truth = truth_lines(truth, path, steps, "site")
    via_truth = truth_lines(truth, path, steps, "via")
    kinds = _kinds(truth, path)
    missed = tuple((line, kinds.get(line, "?"), n - site_reported.get(line, 0)) for line, n in site_truth.items()
                   if n > site_reported.get(line, 0))
    extra = tuple((line, n - site_truth.get(line, 0)) for line, n in site_reported.items()
                  if n > site_truth.get(line, 0))
    total = sum(s.count for s in reported)
    exact = sum(s.count for s in reported if s.exact)
    summary = analysis.get("summary") or {}
    return TargetScore(truth["target"], path, multiset_score(site_truth, site_reported),
                       multiset_score(via_truth, via_reported), exact / total if total else 1.0,
                       summary.get("syncs"), sum(site_truth.values()), missed, extra)


def _kinds(truth: Mapping[str, Any], path: str) -> dict[str, str]:
    kinds: dict[str, set[str]] = {}
    for sync in truth["syncs"]:
        if sync[path]:
            kinds.setdefault(sync["site"], set()).add(sync["kind"])
    return {line: "/".join(sorted(k)) for line, k in kinds.items()}


def table(scores: Iterable[TargetScore]) -> str:
    """The per-target table (markdown), with a total row."""
    scores = list(scores)
    head = ("| target | truth | headline | site P | site R | via P | via R | exact lines |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|")
    rows = [head]
    for s in scores:
        rows.append(f"| {s.target} | {s.truth_total} | {s.headline if s.headline is not None else '-'} | "
                    f"{s.site.precision:.2f} | {s.site.recall:.2f} | {s.via.precision:.2f} | {s.via.recall:.2f} | "
                    f"{s.exact_share:.2f} |")
    if len(scores) > 1:
        site = Score(*(sum(getattr(s.site, f) for s in scores) for f in ("truth", "reported", "matched")))
        via = Score(*(sum(getattr(s.via, f) for s in scores) for f in ("truth", "reported", "matched")))
        headline = sum(s.headline or 0 for s in scores)
        rows.append(f"| **all** | {sum(s.truth_total for s in scores)} | {headline} | {site.precision:.2f} | "
                    f"{site.recall:.2f} | {via.precision:.2f} | {via.recall:.2f} | "
                    f"{_mean(s.exact_share for s in scores):.2f} |")
    return "\n".join(rows)


def side_by_side(modes: Mapping[str, Iterable[TargetScore]]) -> str:
    """One row per target, one column group per mode (``{"latent": [...], "shadow-cuda": [...]}``): the headline
    and the precision and recall at the exact line (``site``) of each against the same truth, with a total row."""
    by_mode = {mode: {s.target: s for s in scores} for mode, scores in modes.items()}
    targets = list(dict.fromkeys(t for scores in by_mode.values() for t in scores))
    head = "| target | truth | " + " | ".join(f"{m} headline | {m} P | {m} R" for m in by_mode) + " |"
    rows = [head, "|---|---:|" + "---:|" * (3 * len(by_mode))]

    def cells(scores: list[TargetScore]) -> str:
        if not scores:
            return "- | - | -"
        site = Score(*(sum(getattr(s.site, f) for s in scores) for f in ("truth", "reported", "matched")))
        headline = sum(s.headline or 0 for s in scores)
        return f"{headline} | {site.precision:.2f} | {site.recall:.2f}"

    for target in targets:
        first = next(scores[target] for scores in by_mode.values() if target in scores)
        row = [cells([scores[target]] if target in scores else []) for scores in by_mode.values()]
        rows.append(f"| {target} | {first.truth_total} | " + " | ".join(row) + " |")
    if len(targets) > 1:
        truth = sum(next(scores[t] for scores in by_mode.values() if t in scores).truth_total for t in targets)
        rows.append(f"| **all** | {truth} | " + " | ".join(cells(list(scores.values()))
                                                           for scores in by_mode.values()) + " |")
    return "\n".join(rows)


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0
