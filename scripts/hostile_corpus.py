"""Run the hostile-input corpus of issue 12 against the installed synchunt.

Every case runs in its own child with a wall-clock timeout and a memory cap; the run prints, per family, how many
cases passed or failed by traceback, hang, wrong exit, wrong verdict, memory, data loss or bad output, then the
first failing case of each kind with the command that reproduces it. Exit status 1 when any case fails.

    .venv/bin/python scripts/hostile_corpus.py                      # the full corpus (≥ 2,000 cases)
    .venv/bin/python scripts/hostile_corpus.py --family gzip --family truncation
    .venv/bin/python scripts/hostile_corpus.py --case 'gzip/deflate-cpu@0.143/analyze-json' --keep
    .venv/bin/python scripts/hostile_corpus.py --sample             # what the default test suite runs
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "trust"))

import hostile
from hostile_runner import run_cases
from hostile_summary import failure_digest, summarize


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=hostile.DEFAULT_SEED)
    parser.add_argument("--workers", type=int, default=2, help="cases run side by side (default 2)")
    parser.add_argument("--family", action="append", help="only this family (repeatable)")
    parser.add_argument("--case", action="append", help="only this case id (repeatable)")
    parser.add_argument("--sample", action="store_true", help="only the default-suite sample")
    parser.add_argument("--light", action="store_true", help="leave out the heavy cases (big files, profiling)")
    parser.add_argument("--timeout-scale", type=float, default=1.0,
                        help="multiply every case's timeout (a loaded machine)")
    parser.add_argument("--list", action="store_true", help="list the case ids and exit")
    parser.add_argument("--keep", action="store_true", help="keep every case folder (inputs, outputs) for a look")
    parser.add_argument("--json", type=Path, help="also write every result as JSON lines to this file")
    parser.add_argument("--digest", action="store_true", help="also list a few failures per family and kind")
    args = parser.parse_args()

    cases = hostile.all_cases(args.seed)
    if args.sample:
        cases = hostile.sample(cases, seed=args.seed)
    if args.family:
        cases = [c for c in cases if c.family in args.family]
    if args.case:
        cases = [c for c in cases if c.id in args.case]
    if args.light:
        cases = [c for c in cases if not c.heavy]
    if args.list:
        print("\n".join(f"{c.id}\t{' '.join(c.argv)[:100]!r}" for c in cases))
        return 0
    if not cases:
        print("no case matches", file=sys.stderr)
        return 2
    root = Path(tempfile.mkdtemp(prefix="synchunt-hostile-"))
    started = time.monotonic()
    done = 0

    def progress(result: object) -> None:
        nonlocal done
        done += 1
        if done % 100 == 0 or done == len(cases):
            print(f"  {done}/{len(cases)} cases, {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)

    print(f"{len(cases)} cases, {args.workers} workers, seed {args.seed}, in {root}", file=sys.stderr)
    try:
        results = run_cases([c.id for c in cases], seed=args.seed, workers=args.workers, root=root, keep=args.keep,
                            timeout_scale=args.timeout_scale, on_result=progress)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    elapsed = time.monotonic() - started
    if args.json:
        args.json.write_text("".join(json.dumps(r.as_dict()) + "\n" for r in results))
    print(summarize(results, seed=args.seed, elapsed_s=elapsed))
    if args.digest:
        print("\n" + failure_digest(results))
    if args.keep:
        print(f"\ncase folders kept in {root}")
    return 0 if all(r.kind == "pass" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
