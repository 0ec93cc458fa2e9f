"""synchunt's device idle per sync against HTA's idle time breakdown, on the shared real GPU traces.

For each trace: the syncs, the gaps synchunt charges to them and their total, HTA's host-wait total (all
streams), the share of HTA's host wait that synchunt attributes to syncs, how each charged gap compares with
HTA's gap before the same activity (same / longer in HTA / disagreeing), and whether the replica of HTA's rule
matches HTA's own totals on every stream. Then the time each tool takes for it (synchunt: load, detect,
measure; HTA: parse, idle breakdown), medians of interleaved repeats. Needs HTA (``pip install -e '.[hta]'``).

    python benchmarks/impact_vs_hta.py [--repeats 1] [TRACE ...]
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from machine import Quietness, add_quiet_options

os.environ.setdefault("HTA_DISABLE_NS_ROUNDING", "1")

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "traces"


def default_traces() -> list[Path]:
    return sorted(p for p in SHARED.glob("**/*.json.gz") if "rank_non_gpu" not in str(p))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="*", type=Path)
    parser.add_argument("--repeats", type=int, default=1)
    add_quiet_options(parser)
    args = parser.parse_args()
    quiet = Quietness.before(args)  # the times only: the idle figures are counts, whatever the load
    logging.disable(logging.WARNING)  # HTA logs every parse at INFO and warns about single iterations

    from synchunt.detect import detect
    from synchunt.impact import measure
    from synchunt.impact.hta_check import LONGER_IN_HTA, SAME_GAP, cross_check
    from synchunt.trace import load_trace
    from synchunt.trace.from_hta import load_hta

    traces = args.traces or default_traces()
    print(f"{'trace':58} {'syncs':>5} {'gaps':>4} {'synchunt idle µs':>16} {'HTA host wait µs':>16} {'share':>6} "
          f"{'same':>4} {'longer':>6} {'differ':>6} {'replica':>7} {'synchunt s':>10} {'HTA s':>7}")
    for path in traces:
        ours, theirs = [], []
        for _ in range(args.repeats):
            start = time.perf_counter()
            trace = load_trace(path)
            detection = detect(trace)
            impacts = measure(trace, detection)
            ours.append(time.perf_counter() - start)
            start = time.perf_counter()
            analysis = load_hta(path)
            check = cross_check(analysis, impacts)
            theirs.append(time.perf_counter() - start)
        verdicts = Counter(g.verdict for g in check.gaps)
        differ = len(check.gaps) - verdicts[SAME_GAP] - verdicts[LONGER_IN_HTA]
        share = check.synchunt_idle_us / check.hta_host_wait_us if check.hta_host_wait_us else 0.0
        name = str(path.relative_to(SHARED)) if path.is_relative_to(SHARED) else path.name
        print(f"{name[-58:]:58} {len(detection.records):>5} {len(check.gaps):>4} {check.synchunt_idle_us:>16,.1f} "
              f"{check.hta_host_wait_us:>16,.1f} {share:>6.1%} {verdicts[SAME_GAP]:>4} {verdicts[LONGER_IN_HTA]:>6} "
              f"{differ:>6} {'yes' if all(s.replica_agrees for s in check.streams) else 'NO':>7} "
              f"{statistics.median(ours):>10.2f} {statistics.median(theirs):>7.2f}")
    verdict = quiet.after()
    print(verdict.line + ("" if verdict.quiet else " (the times; the idle columns do not depend on the load)"))
    return verdict.exit_code


if __name__ == "__main__":
    sys.exit(main())
