"""Recall of `synchunt lint` on real sync fixes, and whether their replacements come out clean.

The manifest (benchmarks/data/real_fixes.toml) lists syncing lines that upstream commits removed, with the
lines that replaced them. For each entry this script reads both versions of the file from a git mirror of the
repository (`git show PARENT:FILE`, `git show COMMIT:FILE`), lints them at the chosen confidence, and counts:

- recall: the syncing line is covered by a finding in the parent version;
- fix-cleared: no finding covers any replacement line in the fixed version (entries with replacements only).

No third-party source is stored in this repository; without the mirrors the script says which are missing and
exits 0 without figures.

    python benchmarks/lint_real_fixes.py [--mirrors DIR] [--min-confidence medium] [--verbose]

Mirrors: DIR/<owner>+<name>/repo is a bare clone of github.com/<owner>/<name> (`git clone --mirror URL
DIR/owner+name/repo`); DIR defaults to $SYNCHUNT_MIRRORS, else a `.mirror` folder beside the checkout or its
parent.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import tomllib

REPO_ROOT = Path(__file__).resolve().parents[1]
MANIFEST = REPO_ROOT / "benchmarks" / "data" / "real_fixes.toml"
FIELDS = {"repo": str, "commit": str, "parent": str, "file": str, "sync_line": int, "fixed_lines": list,
          "pattern": str, "rule": str, "split": str, "note": str}
SPLITS = ("dev", "held-out")


@dataclass(frozen=True)
class RealFix:
    repo: str
    commit: str
    parent: str
    file: str
    sync_line: int
    fixed_lines: tuple[int, ...]
    pattern: str
    rule: str
    split: str
    note: str


def load_manifest(path: Path = MANIFEST) -> list[RealFix]:
    """The manifest's entries; a missing or mistyped field raises ``ValueError`` naming the entry."""
    with path.open("rb") as handle:
        entries = tomllib.load(handle).get("fix", [])
    fixes = []
    for index, entry in enumerate(entries):
        for name, kind in FIELDS.items():
            if not isinstance(entry.get(name), kind) or isinstance(entry.get(name), bool):
                raise ValueError(f"{path.name}: fix #{index}: {name!r} must be a {kind.__name__}")
        if entry["split"] not in SPLITS:
            raise ValueError(f"{path.name}: fix #{index}: split must be one of {', '.join(SPLITS)}")
        fixes.append(RealFix(**{**entry, "fixed_lines": tuple(entry["fixed_lines"])}))
    return fixes


def default_mirrors() -> Path | None:
    if os.environ.get("SYNCHUNT_MIRRORS"):
        return Path(os.environ["SYNCHUNT_MIRRORS"])
    for candidate in (REPO_ROOT.parent / ".mirror", REPO_ROOT.parent.parent / ".mirror"):
        if candidate.is_dir():
            return candidate
    return None


def git_dir(mirrors: Path, repo: str) -> Path:
    return mirrors / repo.replace("/", "+") / "repo"


def show(git: Path, commit: str, path: str) -> str | None:
    done = subprocess.run(["git", f"--git-dir={git}", "show", f"{commit}:{path}"], capture_output=True)
    return done.stdout.decode("utf-8", errors="replace") if done.returncode == 0 else None


def covered(findings, line: int) -> list:
    return [finding for finding in findings if finding.line <= line <= (finding.end_line or finding.line)]


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(REPO_ROOT))
    from synchunt.findings import Confidence
    from synchunt.lint import lint_source

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=default_mirrors())
    parser.add_argument("--min-confidence", choices=["high", "medium", "low"], default="medium")
    parser.add_argument("--verbose", action="store_true", help="print every miss and every uncleared fix")
    args = parser.parse_args(argv)
    fixes = load_manifest()
    repos = sorted({fix.repo for fix in fixes})
    missing = [repo for repo in repos if args.mirrors is None or not git_dir(args.mirrors, repo).is_dir()]
    if missing:
        print(f"mirrors absent for {len(missing)} of {len(repos)} repositories ({', '.join(missing)}): "
              "no figures. Pass --mirrors DIR or set SYNCHUNT_MIRRORS.")
        return 0
    confidence = Confidence(args.min_confidence)
    cache: dict[tuple[str, str, str], list] = {}

    def findings_of(fix: RealFix, commit: str) -> list:
        key = (fix.repo, commit, fix.file)
        if key not in cache:
            text = show(git_dir(args.mirrors, fix.repo), commit, fix.file)
            if text is None:
                raise SystemExit(f"error: {fix.repo}: cannot read {fix.file} at {commit[:10]}")
            cache[key] = lint_source(text, fix.file, min_confidence=confidence)
        return cache[key]

    per_repo: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # found, total, cleared, with fix
    per_split: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    per_pattern: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for fix in fixes:
        hits = covered(findings_of(fix, fix.parent), fix.sync_line)
        cleared = None
        if fix.fixed_lines:
            fixed = findings_of(fix, fix.commit)
            left = [finding for line in fix.fixed_lines for finding in covered(fixed, line)]
            cleared = not left
            if left and args.verbose:
                print(f"  flags  {fix.repo} {fix.commit[:10]} {fix.file}:{fix.fixed_lines} "
                      f"{', '.join(sorted({f'{f.code} {f.confidence.value}' for f in left}))}")
        for counts in (per_repo[fix.repo], per_split[fix.split]):
            counts[0] += bool(hits)
            counts[1] += 1
            counts[2] += bool(cleared)
            counts[3] += cleared is not None
        per_pattern[fix.pattern][0] += bool(hits)
        per_pattern[fix.pattern][1] += 1
        if not hits and args.verbose:
            print(f"  miss   {fix.repo} {fix.commit[:10]} {fix.file}:{fix.sync_line} [{fix.pattern}] {fix.note}")
    print(f"synchunt lint on {len(fixes)} real sync fixes from {len(repos)} repositories, "
          f"--min-confidence {args.min_confidence}")
    print(f"{'':34} {'recall':>14} {'fix-cleared':>14}")
    for name in [*repos, *SPLITS, "overall"]:
        if name == "overall":
            row = [sum(column) for column in zip(*per_split.values(), strict=True)]
        else:
            row = (per_repo if name in per_repo else per_split)[name]
        found, total, cleared, with_fix = row
        label = name if name in per_repo else f"[{name}]"
        print(f"{label:34} {found:>4}/{total:<4}{100 * found / max(total, 1):5.1f} % "
              f"{cleared:>4}/{with_fix:<4}{100 * cleared / max(with_fix, 1):5.1f} %")
    print("recall by pattern: " + ", ".join(f"{name} {hit}/{all_}" for name, (hit, all_) in
                                             sorted(per_pattern.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
