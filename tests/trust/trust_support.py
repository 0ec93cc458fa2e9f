"""What the trust tests share: the corpus by id, and the message of a failed case."""

from __future__ import annotations

import hostile
from hostile_runner import Result

SEED = hostile.DEFAULT_SEED
# The corpus is cheap to list (inputs are written when a case runs); the tests parametrize over its ids.
CORPUS = {case.id: case for case in hostile.all_cases(SEED)}


def explain(result: Result) -> str:
    """The assertion message of a failed case: what broke and how to rerun it alone."""
    return (f"{result.kind}: {result.detail}\n  exit {result.exit_code}, {result.wall_s:.1f} s "
            f"({result.cpu_s:.1f} s CPU), "
            f"{result.peak_rss_mb:.0f} MB peak RSS\n  stderr: {result.stderr_tail[-200:]!r}\n  reproduce: "
            f"python scripts/hostile_corpus.py --seed {SEED} --case '{result.id}' --keep")
