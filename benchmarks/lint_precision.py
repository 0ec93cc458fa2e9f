"""Precision of `synchunt lint` on real serving code: sglang's `srt` package and vLLM.

Downloads the wheels with `pip download --no-deps` (or uses `--wheels DIR`), unpacks the Python sources into a
work folder, lints them, and prints findings by rule and confidence. With the hand labels of
benchmarks/data/lint_precision_labels.toml (file, line, code, verdict, reason) it prints precision per
confidence: true / (true + false), and true / all labelled (undecidable counted against).

    python benchmarks/lint_precision.py [--work /tmp/synchunt-precision] [--wheels DIR]
    python benchmarks/lint_precision.py --draw 40 --seed 7 --package vllm --confidence medium   # a sample
    python benchmarks/lint_precision.py --draw-fresh 40 --seed 3141 --out benchmarks/data/lint_fresh_sample.toml
    python benchmarks/lint_precision.py --fresh benchmarks/data/lint_fresh_sample.toml   # score a labelled one
    python benchmarks/lint_precision.py --fresh FILE --current   # only what the lint still reports today
    python benchmarks/lint_precision.py --dump before.json        # with the rules before a change, then after it:
    python benchmarks/lint_precision.py --draw-fresh 30 --seed 5 --exclude OLD_SAMPLE --dropped-from before.json \
        --dropped 10 --out NEW_SAMPLE   # also 10 per code base of what the change stopped reporting, unmarked

A fresh sample is drawn from the default output (high and medium confidence) of each code base, stratified by
confidence (allocated in proportion to each stratum, at least 10 each), excluding every finding already in the
labels file (and in the samples given with `--exclude`), and written unlabelled for a reviewer who did not tune the
rules; `--fresh` scores it: precision per code base and confidence, and weighted by the strata's sizes (the
estimate for the whole default output). With `--dropped-from`, findings the rules before a change reported and
these no longer do are drawn too, mixed in unmarked (their stratum lists them): the true ones among them are what
the change lost, and `--fresh` prints the share of true findings kept.

Nothing downloaded is kept in the repository; the labels name lines of the pinned versions below.
"""

from __future__ import annotations

import argparse
import json
import random
import re
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
SAMPLES = ("pilot", "validation")  # and "tuning-N": samples read while tuning the rules
_TUNING = re.compile(r"tuning-\d+")
CONTEXTS = ("step", "unknown", "cold")
FRESH_MIN_STRATUM = 10


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
        if label["sample"] not in SAMPLES and not _TUNING.fullmatch(label["sample"]):
            raise ValueError(f"{path.name}: label #{index}: sample must be one of {', '.join(SAMPLES)} or tuning-N")
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
        # As the command line does by default: test and benchmark files skipped.
        for finding in lint_paths([root / PACKAGES[name][1]], include_tests=None):
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
        default = [item for item in mine if item["confidence"] != "low"]
        by_context = Counter(item.get("context") for item in default)
        print("default findings by context: " + ", ".join(f"{by_context[name]} {name}" for name in CONTEXTS))
        errors = sum(item["severity"] == "error" for item in default)
        print(f"default findings on the step path, in loops or stream blocks (severity error): {errors}")


def print_precision(findings: list[dict], labels: list[dict]) -> None:
    now = {(item["file"], item["line"], item["code"]): item["confidence"] for item in findings}
    gone = sum((label["file"], label["line"], label["code"]) not in now for label in labels)
    print(f"\nhand-labelled findings: {len(labels)} ({gone} no longer reported); precision = true / (true + false)"
          " (decided) and true / labelled (all, undecidable counted against)")
    true = [label for label in labels if label["verdict"] == "true"]
    kept = sum(now.get((label["file"], label["line"], label["code"])) in ("high", "medium") for label in true)
    print(f"true labels still reported at the default confidence: {kept} of {len(true)}")
    tunings = sorted({label["sample"] for label in labels if _TUNING.fullmatch(label["sample"])})
    for package in PACKAGES:
        counts = Counter(label["verdict"] for label in labels if _TUNING.fullmatch(label["sample"])
                         and label["file"].startswith(PACKAGES[package][1].split("/")[0] + "/")
                         and now.get((label["file"], label["line"], label["code"])) in ("high", "medium"))
        if counts["true"] + counts["false"]:
            print(f"[all tuning samples] {package}: default precision "
                  f"{counts['true'] / (counts['true'] + counts['false']):.2f} ({counts['true']} true, "
                  f"{counts['false']} false, {counts['undecidable']} undecidable)")
    for sample in (*SAMPLES, *tunings, "all"):
        table: dict[str, Counter] = defaultdict(Counter)
        for label in labels:
            confidence = now.get((label["file"], label["line"], label["code"]))
            if confidence is not None and sample in ("all", label["sample"]):
                table[confidence][label["verdict"]] += 1
        if sample in tunings:
            for package in PACKAGES:
                counts = Counter(label["verdict"] for label in labels if label["sample"] == sample
                                 and label["file"].startswith(PACKAGES[package][1].split("/")[0] + "/")
                                 and now.get((label["file"], label["line"], label["code"])) in ("high", "medium"))
                true, false = counts["true"], counts["false"]
                if true + false:
                    print(f"[{sample}] {package}: default precision {true / (true + false):.2f} "
                          f"({true} true, {false} false, {counts['undecidable']} undecidable)")
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


def _key(item: dict) -> tuple[str, int, str]:
    return item["file"], item["line"], item["code"]


def _allocate(sizes: dict[str, int], total: int) -> dict[str, int]:
    """Per-stratum sample sizes: in proportion to the strata, at least FRESH_MIN_STRATUM each (when they hold
    that many), summing to ``total``."""
    share = {name: min(size, max(FRESH_MIN_STRATUM, round(total * size / max(sum(sizes.values()), 1))))
             for name, size in sizes.items()}
    while sum(share.values()) > total:  # trim the largest stratum's share
        largest = max(share, key=lambda name: share[name])
        share[largest] -= 1
    return share


def sampled_keys(paths: list[Path]) -> set[tuple[str, int, str]]:
    """The findings of earlier samples (their ``[[finding]]`` tables), left out of a new draw."""
    keys = set()
    for path in paths:
        with path.open("rb") as handle:
            keys |= {_key(entry) for entry in tomllib.load(handle).get("finding", [])}
    return keys


def draw_fresh(findings: list[dict], per_package: int, seed: int, labels: list[dict], out: Path, *,
               exclude: set[tuple[str, int, str]] = frozenset(), before: list[dict] | None = None,
               dropped: int = 0, command: str | None = None) -> None:
    """Write an unlabelled, stratified sample of default findings (see the module's doc) to ``out``. With
    ``before`` (the findings of the rules before a change), ``dropped`` more per code base are drawn from the
    default findings those rules reported and these no longer do, mixed in unmarked: what the reviewer calls true
    among them is what the change lost."""
    done = {_key(label) for label in labels} | set(exclude)
    rng = random.Random(seed)
    entries, strata = [], []
    now = {_key(item) for item in findings if item["confidence"] != "low"}
    for package in PACKAGES:
        pools = {confidence: [item for item in findings if item["package"] == package
                              and item["confidence"] == confidence and _key(item) not in done]
                 for confidence in ("high", "medium")}
        population = {confidence: sum(1 for item in findings if item["package"] == package
                                      and item["confidence"] == confidence) for confidence in pools}
        share = _allocate({name: len(pool) for name, pool in pools.items()}, per_package)
        for confidence, pool in pools.items():
            strata.append((package, confidence, population[confidence], len(pool), share[confidence], None))
            entries.extend(sorted(rng.sample(sorted(pool, key=_key), share[confidence]), key=_key))
        if before is not None and dropped:
            gone = [item for item in before if item["package"] == package and item["confidence"] != "low"
                    and _key(item) not in now]
            pool = [item for item in gone if _key(item) not in done]
            picked = sorted(rng.sample(sorted(pool, key=_key), min(dropped, len(pool))), key=_key)
            strata.append((package, "dropped", len(gone), len(pool), len(picked), [_member(i) for i in picked]))
            entries.extend(picked)
    entries.sort(key=lambda item: (item["package"], _key(item)))  # the dropped ones mixed in, unmarked
    command = command or f"--draw-fresh {per_package} --seed {seed} --out {out.name}"
    lines = [f"# A fresh sample of `synchunt lint`'s default findings, drawn with: python benchmarks/lint_precision.py "
             f"{command}",
             "# after the rules were frozen; excluded: every finding in lint_precision_labels.toml and in earlier",
             "# samples. To the reviewer: read only the [[finding]] tables (the [[stratum]] ones are for scoring).",
             "# Judge each finding by reading the function, its callers and where its tensors come",
             "# from; verdict = \"true\" (a device-to-host wait on device data when the package runs as shipped: the",
             "# host waits for the device, or a blocking copy), \"false\" (no such wait: a host tensor, not a tensor),",
             "# \"undecidable\" (the device depends on callers the source does not show). Also: step = \"yes\" if it",
             "# runs per step or request, \"no\" if cold (optional).",
             "# Then: python benchmarks/lint_precision.py --fresh FILE",
             ""]
    for package, confidence, population, pool, share, members in strata:
        lines += ["[[stratum]]", f'package = "{package}"', f'confidence = "{confidence}"',
                  f"population = {population}", f"unlabelled = {pool}", f"sampled = {share}"]
        lines += [f"members = {json.dumps(members)}", ""] if members is not None else [""]
    for item in entries:
        lines += ["[[finding]]", f'package = "{item["package"]}"', f"file = {json.dumps(item['file'])}",
                  f"line = {item['line']}", f'code = "{item["code"]}"', f'confidence = "{item["confidence"]}"',
                  f'context = "{item.get("context")}"', f"function = {json.dumps(item.get('scope') or '<module>')}",
                  f"source = {json.dumps(item.get('snippet') or '')}", 'verdict = ""', 'step = ""', 'reason = ""', ""]
    out.write_text("\n".join(lines), encoding="utf-8")
    print(f"{len(entries)} findings written to {out} (seed {seed})")


def _member(item: dict) -> str:
    return f"{item['file']}:{item['line']}:{item['code']}"


def score_fresh(path: Path, current: set[tuple[str, int, str]] | None = None) -> int:
    """Print the precision of a labelled fresh sample; 2 when a verdict is missing or unknown. With ``current``
    (the default findings of the lint as it is now), only the sampled findings it still reports are scored: the
    rules may have changed since the sample was drawn."""
    with path.open("rb") as handle:
        document = tomllib.load(handle)
    entries, strata = document.get("finding", []), document.get("stratum", [])
    gone = {member for item in strata if item["confidence"] == "dropped" for member in item.get("members", [])}
    lost = [entry for entry in entries if _member(entry) in gone]
    entries = [entry for entry in entries if _member(entry) not in gone]
    if current is not None:
        kept = [entry for entry in entries if (entry["file"], entry["line"], entry["code"]) in current]
        print(f"{len(kept)} of {len(entries)} sampled findings are still reported at the default confidence; "
              "scoring those")
        entries = kept
    missing = [entry for entry in entries if entry.get("verdict") not in VERDICTS]
    if missing:
        print(f"{len(missing)} of {len(entries)} findings have no verdict (one of {', '.join(VERDICTS)}); "
              f"first: {missing[0]['file']}:{missing[0]['line']}")
        return 2
    population = {(item["package"], item["confidence"]): item["population"] for item in strata}
    print(f"{'package':8} {'confidence':10} {'n':>3} {'true':>5} {'false':>6} {'undec.':>7} {'precision':>10}")
    for package in (*PACKAGES, "both"):
        weighted_true = weighted_decided = 0.0
        for confidence in ("high", "medium", "default"):
            mine = [entry for entry in entries if package in ("both", entry["package"])
                    and confidence in ("default", entry["confidence"])]
            counts = Counter(entry["verdict"] for entry in mine)
            true, false = counts["true"], counts["false"]
            precision = f"{true / (true + false):.2f}" if true + false else "-"
            print(f"{package:8} {confidence:10} {len(mine):>3} {true:>5} {false:>6} {counts['undecidable']:>7} "
                  f"{precision:>10}")
            if confidence != "default" and mine and package != "both":
                weight = population.get((package, confidence), len(mine)) / len(mine)
                weighted_true += weight * true
                weighted_decided += weight * (true + false)
        if package != "both" and weighted_decided:
            print(f"{package:8} {'weighted':10} {'':>3} {'':>5} {'':>6} {'':>7} "
                  f"{weighted_true / weighted_decided:>10.2f}   (by the strata's sizes: the whole default output)")
        if package != "both":
            _print_dropped(package, [e for e in entries if e["package"] == package],
                           [e for e in lost if e["package"] == package], population)
        steps = Counter(entry.get("step", "") for entry in entries if package in ("both", entry["package"])
                        and entry["verdict"] == "true")
        if steps["yes"] or steps["no"]:
            print(f"{package:8} true findings on the step path: {steps['yes']} of {steps['yes'] + steps['no']}")
    return 0


def _print_dropped(package: str, kept: list[dict], lost: list[dict], population: dict) -> None:
    """What a rule change dropped that the reviewer calls true, and the share of the true findings it keeps:
    each stratum's true findings weighted by its size (kept: high and medium now; lost: the dropped ones)."""
    if not lost:
        return
    true_lost = sum(entry["verdict"] == "true" for entry in lost)
    weighted_lost = population.get((package, "dropped"), len(lost)) * true_lost / len(lost)
    weighted_kept = 0.0
    for confidence in ("high", "medium"):
        mine = [entry for entry in kept if entry["confidence"] == confidence]
        if mine:
            weighted_kept += population.get((package, confidence), len(mine)) * sum(
                entry["verdict"] == "true" for entry in mine) / len(mine)
    share = weighted_kept / (weighted_kept + weighted_lost) if weighted_kept + weighted_lost else 1.0
    print(f"{package:8} dropped by the change: {true_lost} true of {len(lost)} sampled "
          f"(of {population.get((package, 'dropped'), len(lost))}); true findings kept: {share:.2f} (by the strata)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/synchunt-precision"))
    parser.add_argument("--wheels", type=Path, default=None, help="folder with the wheels (else pip download)")
    parser.add_argument("--draw", type=int, default=0, help="print this many unlabelled findings to label")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--package", choices=sorted(PACKAGES), default="sglang")
    parser.add_argument("--confidence", choices=CONFIDENCES, default="medium")
    parser.add_argument("--draw-fresh", type=int, default=0, metavar="N",
                        help="write an unlabelled stratified sample of N default findings per code base to --out")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "benchmarks" / "data" / "lint_fresh_sample.toml")
    parser.add_argument("--fresh", type=Path, default=None, metavar="FILE",
                        help="score a labelled fresh sample (no linting, unless --current)")
    parser.add_argument("--current", action="store_true",
                        help="with --fresh: lint again and score only the sampled findings still reported")
    parser.add_argument("--exclude", type=Path, action="append", default=[], metavar="FILE",
                        help="with --draw-fresh: leave out the findings of this earlier sample (repeatable)")
    parser.add_argument("--dump", type=Path, default=None, metavar="FILE",
                        help="write every finding as JSON (the rules before a change, for --dropped-from)")
    parser.add_argument("--dropped-from", type=Path, default=None, metavar="FILE",
                        help="with --draw-fresh: findings --dump wrote with the rules before a change")
    parser.add_argument("--dropped", type=int, default=0, metavar="N",
                        help="with --dropped-from: also draw N per code base of what the change stopped reporting")
    args = parser.parse_args(argv)
    if args.fresh is not None:
        current = None
        if args.current:
            current = {_key(item) for item in lint(unpack(args.work, args.wheels)) if item["confidence"] != "low"}
        return score_fresh(args.fresh, current)
    findings = lint(unpack(args.work, args.wheels))
    if args.dump is not None:
        args.dump.write_text(json.dumps(findings), encoding="utf-8")
        print(f"{len(findings)} findings written to {args.dump}")
        return 0
    labels = load_labels() if LABELS.exists() else []
    if args.draw_fresh:
        before = json.loads(args.dropped_from.read_text(encoding="utf-8")) if args.dropped_from else None
        draw_fresh(findings, args.draw_fresh, args.seed, labels, args.out, exclude=sampled_keys(args.exclude),
                   before=before, dropped=args.dropped, command=" ".join(sys.argv[1:] if argv is None else argv))
        return 0
    if args.draw:
        draw(findings, args.draw, args.seed, args.package, args.confidence, labels)
        return 0
    print_counts(findings)
    if labels:
        print_precision(findings, labels)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
