"""Precision of `synchunt lint` on real serving code: sglang's `srt` package and vLLM.

Downloads the wheels with `pip download --no-deps` (or uses `--wheels DIR`), unpacks the Python sources into a
work folder, lints them, and prints findings by rule and confidence. With the hand labels of
benchmarks/data/lint_precision_labels.toml (file, line, code, verdict, reason) it prints precision per
confidence: true / (true + false), and true / all labelled (undecidable counted against).

    python benchmarks/lint_precision.py [--work /tmp/synchunt-precision] [--wheels DIR]
    python benchmarks/lint_precision.py --draw 40 --seed 7 --package vllm --confidence medium   # a sample

Nothing downloaded is kept in the repository; the labels name lines of the pinned versions below.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import zipfile
from collections import Counter, defaultdict
from pathlib import Path

import tomllib

REPO_ROOT = Path(__file__).resolve().parents[1]
LABELS = REPO_ROOT / "benchmarks" / "data" / "lint_precision_labels.toml"
PACKAGES = {"sglang": ("sglang==0.5.23", "sglang/srt/"), "vllm": ("vllm==0.33.0", "vllm/")}
VERDICTS = ("true", "false", "undecidable")
CONFIDENCES = ("high", "medium", "low")
SAMPLES = ("pilot", "validation")


def load_labels(path: Path = LABELS) -> list[dict]:
    """Labels as dicts; a missing or mistyped field raises ``ValueError`` naming the entry."""
    with path.open("rb") as handle:
        labels = tomllib.load(handle).get("label", [])
    for index, label in enumerate(labels):
        for name, kind in (("file", str), ("line", int), ("code", str), ("verdict", str), ("reason", str),
                           ("sampled_as", str), ("sample", str)):
            if not isinstance(label.get(name), kind):
                raise ValueError(f"{path.name}: label #{index}: {name!r} must be a {kind.__name__}")
        if label["verdict"] not in VERDICTS:
            raise ValueError(f"{path.name}: label #{index}: verdict must be one of {', '.join(VERDICTS)}")
        if label["sample"] not in SAMPLES:
            raise ValueError(f"{path.name}: label #{index}: sample must be one of {', '.join(SAMPLES)}")
        if label["sampled_as"] not in CONFIDENCES:
            raise ValueError(f"{path.name}: label #{index}: sampled_as must be one of {', '.join(CONFIDENCES)}")
    return labels


def unpack(work: Path, wheels: Path | None) -> dict[str, Path]:
    """The source root of each package (downloaded and unpacked once into ``work``)."""
    roots = {}
    for name, (requirement, prefix) in PACKAGES.items():
        target = work / name
        if not (target / prefix).is_dir():
            folder = wheels or work / "wheels"
            found = sorted(folder.glob(f"{name}-*.whl"))
            if not found:
                subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", requirement, "-d",
                                str(folder)], check=True)
                found = sorted(folder.glob(f"{name}-*.whl"))
            with zipfile.ZipFile(found[-1]) as wheel:
                members = [item for item in wheel.namelist() if item.startswith(prefix) and item.endswith(".py")]
                wheel.extractall(target, members)
        roots[name] = target
    return roots


def lint(roots: dict[str, Path]) -> list[dict]:
    sys.path.insert(0, str(REPO_ROOT))
    from synchunt.lint import lint_paths

    findings = []
    for name, root in roots.items():
        for finding in lint_paths([root / PACKAGES[name][1]]):
            if not finding.is_problem:
                record = finding.to_dict()
                record["file"] = str(Path(finding.path).relative_to(root))
                record["package"] = name
                findings.append(record)
    return findings


def print_counts(findings: list[dict]) -> None:
    for package in PACKAGES:
        mine = [item for item in findings if item["package"] == package]
        counts = Counter((item["code"], item["confidence"]) for item in mine)
        print(f"\n{package} ({PACKAGES[package][0]}): {len(mine)} findings, "
              f"{sum(item['confidence'] != 'low' for item in mine)} at the default confidence (medium)")
        print(f"{'rule':8} {'high':>6} {'medium':>7} {'low':>6}")
        for code in sorted({item["code"] for item in mine}):
            print(f"{code:8} {counts[code, 'high']:>6} {counts[code, 'medium']:>7} {counts[code, 'low']:>6}")
        errors = sum(item["severity"] == "error" and item["confidence"] != "low" for item in mine)
        print(f"default findings in loops or stream blocks (severity error): {errors}")


def print_precision(findings: list[dict], labels: list[dict]) -> None:
    now = {(item["file"], item["line"], item["code"]): item["confidence"] for item in findings}
    gone = sum((label["file"], label["line"], label["code"]) not in now for label in labels)
    print(f"\nhand-labelled findings: {len(labels)} ({gone} no longer reported); precision = true / (true + false)"
          " (decided) and true / labelled (all, undecidable counted against)")
    for sample in (*SAMPLES, "all"):
        table: dict[str, Counter] = defaultdict(Counter)
        for label in labels:
            confidence = now.get((label["file"], label["line"], label["code"]))
            if confidence is not None and sample in ("all", label["sample"]):
                table[confidence][label["verdict"]] += 1
        print(f"\n[{sample}] {'confidence':11} {'labelled':>8} {'true':>5} {'false':>6} {'undecidable':>12} "
              f"{'decided':>8} {'all':>6}")
        for confidence in (*CONFIDENCES, "default"):
            counts = table[confidence] if confidence != "default" else table["high"] + table["medium"]
            total, true, false = sum(counts.values()), counts["true"], counts["false"]
            decided = f"{100 * true / (true + false):.0f} %" if true + false else "-"
            overall = f"{100 * true / total:.0f} %" if total else "-"
            print(f"{'':{len(sample) + 3}}{confidence:11} {total:>8} {true:>5} {false:>6} {counts['undecidable']:>12} "
                  f"{decided:>8} {overall:>6}")


def draw(findings: list[dict], count: int, seed: int, package: str, confidence: str, labels: list[dict]) -> None:
    """Print a random sample to label (findings already labelled are skipped)."""
    done = {(label["file"], label["line"], label["code"]) for label in labels}
    pool = [item for item in findings if item["package"] == package and item["confidence"] == confidence
            and (item["file"], item["line"], item["code"]) not in done]
    for item in random.Random(seed).sample(pool, min(count, len(pool))):
        print(json.dumps({key: item[key] for key in ("file", "line", "code", "confidence", "scope", "snippet")}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/synchunt-precision"))
    parser.add_argument("--wheels", type=Path, default=None, help="folder with the wheels (else pip download)")
    parser.add_argument("--draw", type=int, default=0, help="print this many unlabelled findings to label")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--package", choices=sorted(PACKAGES), default="sglang")
    parser.add_argument("--confidence", choices=CONFIDENCES, default="medium")
    args = parser.parse_args(argv)
    findings = lint(unpack(args.work, args.wheels))
    labels = load_labels() if LABELS.exists() else []
    if args.draw:
        draw(findings, args.draw, args.seed, args.package, args.confidence, labels)
        return 0
    print_counts(findings)
    if labels:
        print_precision(findings, labels)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
