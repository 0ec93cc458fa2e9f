"""Recall and precision of the runtime guard on PyTorch's own statements about syncs (``tests/corpus``).

Every case of the corpus runs once per grad mode (eager, ``torch.no_grad()``, ``torch.inference_mode()``)
under ``synchunt.watch()``. On the CPU only the cases a CPU run can decide are scored; the cases whose answer
depends on a tensor's device are checked against the convention in docs/guard.md and listed apart.

    python benchmarks/guard_corpus.py            # --device cuda on a GPU machine scores every case
    python benchmarks/guard_corpus.py --verbose  # also lists each miss and false report
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from corpus.cases import CASES
from corpus.model import Observable
from corpus.scoring import MODES, Outcome, run_corpus, score, scored


def _describe(outcome: Outcome) -> str:
    reported = ", ".join(outcome.reported) or "nothing"
    expected = outcome.expected or "no sync"
    error = f" [error: {outcome.error}]" if outcome.error else ""
    return f"    {outcome.case.name}: expected {expected}, reported {reported}{error}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    device_type = torch.device(args.device).type
    outcomes = run_corpus(CASES, tuple(MODES), args.device)
    counted = scored(outcomes, device_type)
    print(f"guard corpus: {len(CASES)} cases, device {args.device}, torch {torch.__version__}")
    for mode in MODES:
        result = score(counted, mode)
        print(f"  {mode:<15} {result.syncing} syncing + {result.sync_free} sync-free: "
              f"recall {result.recall:.2f} ({result.found}/{result.syncing}), "
              f"precision {result.precision:.2f} ({result.correct_reports}/{result.reported})")
        if args.verbose:
            for outcome in counted:
                if outcome.mode == mode and (not outcome.correct or outcome.error):
                    print(_describe(outcome))
    if device_type == "cpu":
        conventions = [o for o in outcomes if o.case.observable is Observable.CONVENTION]
        off = [o for o in conventions if not o.correct or o.error]
        print(f"  convention cases (docs/guard.md): {len(conventions) - len(off)}/{len(conventions)} "
              f"as documented across modes")
        for outcome in off if args.verbose else ():
            print(f"  [{outcome.mode}]" + _describe(outcome))
    errors = [o for o in outcomes if o.error]
    if errors:
        print(f"  {len(errors)} runs raised an unexpected error")
    return 0


if __name__ == "__main__":
    sys.exit(main())
