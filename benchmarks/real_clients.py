"""How right is `synchunt profile` on real third-party code? Precision and recall at the exact line, per target.

For each target of ``benchmarks/real_clients/targets/`` (transformers, torchvision, diffusers, sentence-transformers
code, random weights), runs ``synchunt profile FILE:step --setup setup --format json`` in a subprocess as a user
would, and scores what it reports against the target's truth (``benchmarks/real_clients/truth/``, written by the
independent instrument in ``benchmarks/real_clients/make_truth.py``):

    .venv/bin/python benchmarks/real_clients.py                       # every target whose library is installed
    .venv/bin/python benchmarks/real_clients.py tv_ssdlite --show     # one, with the lines missed and extra
    .venv/bin/python benchmarks/real_clients.py --truth cuda --device shadow-cuda   # against the GPU path
    .venv/bin/python benchmarks/real_clients.py --side-by-side        # latent (cpu) beside shadow-cuda, GPU path
    .venv/bin/python benchmarks/real_clients.py --rescore DIR         # score the JSON documents kept in DIR

Columns: ``truth`` syncs over the recorded steps; ``headline`` the analysis' own count (twice the truth is double
counting); site/via precision and recall (see ``benchmarks/real_clients/line_scores.py``); ``exact lines`` the share of
reported syncs whose call site is an exact line, not a function's def line. Goal: ≥ 0.95 precision and recall.

Counts, not timings: the load on the machine does not change them (the subprocesses only take longer).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent / "real_clients"
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

from line_scores import TargetScore, score, side_by_side, table  # noqa: E402

sys.path.insert(0, str(HERE.parent))
from machine import load_average  # noqa: E402

# --side-by-side: the plain latent analysis of a CPU run, and the shadow device, each against what a GPU run hits.
MODES = {"latent": "cpu", "shadow-cuda": "shadow-cuda"}

# The import each target needs: a target whose library is not installed is skipped, with the reason.
LIBRARY_MODULE = {"transformers": "transformers", "torchvision": "torchvision", "diffusers": "diffusers",
                  "sentence-transformers": "sentence_transformers"}


def truths() -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((HERE / "truth").glob("*.json"))}


def missing_library(truth: dict) -> str | None:
    module = LIBRARY_MODULE.get(truth["library"], truth["library"])
    return None if importlib.util.find_spec(module) is not None else f"{truth['library']} is not installed"


def profile_command(truth: dict, *, device: str | None, iterations: int, warmup: int, out: Path) -> list[str]:
    command = [sys.executable, "-m", "synchunt", "profile", f"{truth['file']}:step", "--setup", "setup",
               "--format", "json", "--no-report", "--out", str(out), "--iterations", str(iterations),
               "--warmup", str(warmup)]
    if device is not None:
        command += ["--device", device]
    return command


def run_profile(truth: dict, *, device: str | None, iterations: int, warmup: int, keep: Path | None) -> dict:
    with tempfile.TemporaryDirectory(prefix="real-clients-") as scratch:
        out = keep if keep is not None else Path(scratch)
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error"}
        done = subprocess.run(profile_command(truth, device=device, iterations=iterations, warmup=warmup, out=out),
                              cwd=REPO, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"synchunt profile {truth['file']} exited {done.returncode}: "
                           f"{done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ''}")
    if keep is not None:
        (keep / f"{truth['target']}.analysis.json").write_text(done.stdout)
    return json.loads(done.stdout)


def details(result: TargetScore) -> str:
    lines = [f"{result.target} ({result.path}): headline {result.headline} for {result.truth_total} syncs"]
    lines += [f"  missed  {n:3d} x {site} ({kind})" for site, kind, n in result.missed]
    lines += [f"  extra   {n:3d} x {line}" for line, n in result.extra]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help="target names (default: all with their library installed)")
    parser.add_argument("--truth", choices=("cpu", "cuda"), default="cpu",
                        help="score against the CPU run's truth (latent analysis) or the GPU path's")
    parser.add_argument("--device", help="passed to synchunt profile --device (e.g. shadow-cuda)")
    parser.add_argument("--iterations", type=int, default=1, help="recorded steps (synchunt profile --iterations)")
    parser.add_argument("--warmup", type=int, default=1, help="synchunt profile --warmup")
    parser.add_argument("--keep", type=Path, help="keep the traces and the JSON analyses in this folder")
    parser.add_argument("--rescore", type=Path, help="score the <target>.analysis.json files kept in this folder")
    parser.add_argument("--show", action="store_true", help="list the lines missed and reported beyond the truth")
    parser.add_argument("--json", type=Path, help="also write the scores here")
    parser.add_argument("--side-by-side", action="store_true",
                        help="score the latent mode (--device cpu) and the shadow device (--device shadow-cuda) "
                        "against the GPU path's truth, side by side (--keep/--rescore use a folder per mode)")
    args = parser.parse_args()
    if args.side_by_side:
        return compare_modes(args)

    known = truths()
    unknown = [name for name in args.targets if name not in known]
    if unknown:
        parser.error(f"unknown target(s) {', '.join(unknown)}; known: {', '.join(known)}")
    path = f"{args.truth}_path"
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    results = []
    for name in args.targets or list(known):
        truth = known[name]
        reason = missing_library(truth)
        if reason and args.rescore is None:
            print(f"skip {name}: {reason}", file=sys.stderr)
            continue
        if args.rescore is not None:
            analysis = json.loads((args.rescore / f"{name}.analysis.json").read_text())
        else:
            print(f"profiling {name} …", file=sys.stderr, flush=True)
            try:
                analysis = run_profile(truth, device=args.device, iterations=args.iterations, warmup=args.warmup,
                                       keep=args.keep)
            except RuntimeError as error:
                print(f"error: {error}", file=sys.stderr)
                return 1
        results.append(score(analysis, truth, path=path, steps=args.iterations))
    print(f"truth: {path} · device: {args.device or 'synchunt default'} · recorded steps: {args.iterations}")
    print(table(results))
    if args.show:
        for result in results:
            print()
            print(details(result))
    if args.json is not None:
        args.json.write_text(json.dumps([{
            "target": r.target, "path": r.path, "truth": r.truth_total, "headline": r.headline,
            "site": {"precision": r.site.precision, "recall": r.site.recall},
            "via": {"precision": r.via.precision, "recall": r.via.recall}, "exact_share": r.exact_share,
            "missed": r.missed, "extra": r.extra} for r in results], indent=1) + "\n")
    return 0


def compare_modes(args: argparse.Namespace) -> int:
    """Each target under each of MODES, scored against its cuda_path truth; one table."""
    known = truths()
    names = args.targets or list(known)
    unknown = [name for name in names if name not in known]
    if unknown:
        print(f"unknown target(s) {', '.join(unknown)}; known: {', '.join(known)}", file=sys.stderr)
        return 2
    load_before = load_average()
    results: dict[str, list[TargetScore]] = {mode: [] for mode in MODES}
    for name in names:
        truth = known[name]
        reason = missing_library(truth)
        if reason and args.rescore is None:
            print(f"skip {name}: {reason}", file=sys.stderr)
            continue
        for mode, device in MODES.items():
            if args.rescore is not None:
                analysis = json.loads((args.rescore / mode / f"{name}.analysis.json").read_text())
            else:
                print(f"profiling {name} ({mode}) …", file=sys.stderr, flush=True)
                keep = args.keep / mode if args.keep is not None else None
                if keep is not None:
                    keep.mkdir(parents=True, exist_ok=True)
                try:
                    analysis = run_profile(truth, device=device, iterations=args.iterations, warmup=args.warmup,
                                           keep=keep)
                except RuntimeError as error:
                    print(f"error: {error}", file=sys.stderr)
                    return 1
            results[mode].append(score(analysis, truth, path="cuda_path", steps=args.iterations))
    print(f"truth: cuda_path · precision and recall at the exact line · recorded steps: {args.iterations} · "
          f"load average {load_before:.2f} → {load_average():.2f} (counts: the load does not change them)")
    print(side_by_side(results))
    if args.show:
        for mode, scores in results.items():
            for result in scores:
                print()
                print(f"[{mode}] " + details(result))
    if args.json is not None:
        args.json.write_text(json.dumps({mode: [{
            "target": r.target, "truth": r.truth_total, "headline": r.headline,
            "site": {"precision": r.site.precision, "recall": r.site.recall}, "missed": r.missed, "extra": r.extra}
            for r in scores] for mode, scores in results.items()}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
