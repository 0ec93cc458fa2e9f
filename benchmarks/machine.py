"""Is this machine quiet enough for a timing to mean anything? Every benchmark asks before it reports.

A figure measured while other processes load the cores is noise: on these 2-core machines a load average of 5
made a 6 ms step take 164 ms, and per-repeat ratios spread from 0.76 to 2.72. So a benchmark checks the load
average before and after it runs, and, where it has one, its baseline against the quiet value it expects; a
loaded run is reported as ``NOISE`` and exits 3 instead of printing a result (``--allow-loaded`` prints the
figures anyway, still marked).

    from machine import Quietness, add_quiet_options
    quiet = Quietness.before(args)      # reads the load average
    ...
    verdict = quiet.after(baseline_ms=median_unguarded, quiet_baseline_ms=8.0)
    print(verdict.line)                 # "machine: quiet (load 0.21 → 0.35)" or "NOISE: ..."
    sys.exit(verdict.exit_code)
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass

# Above this 1-minute load average, two cores are shared with something else for a good part of the run.
MAX_LOAD = 1.0
# A baseline this many times its quiet value means the run was disturbed, whatever the load average said.
MAX_BASELINE_INFLATION = 2.0
NOISE_EXIT = 3


def load_average() -> float:
    """The 1-minute load average (0.0 where the platform has none)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def add_quiet_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-load", type=float, default=MAX_LOAD,
                        help=f"refuse to report when the load average exceeds this (default {MAX_LOAD})")
    parser.add_argument("--allow-loaded", action="store_true",
                        help="print the figures of a loaded run anyway, marked NOISE (exit 0)")


@dataclass(frozen=True)
class Verdict:
    quiet: bool
    line: str
    allow_loaded: bool = False

    @property
    def exit_code(self) -> int:
        return 0 if self.quiet or self.allow_loaded else NOISE_EXIT


@dataclass(frozen=True)
class Quietness:
    load_before: float
    max_load: float = MAX_LOAD
    allow_loaded: bool = False

    @classmethod
    def before(cls, args: argparse.Namespace | None = None) -> Quietness:
        return cls(load_before=load_average(), max_load=getattr(args, "max_load", MAX_LOAD),
                   allow_loaded=getattr(args, "allow_loaded", False))

    def after(self, *, baseline_ms: float | None = None, quiet_baseline_ms: float | None = None,
              own: float = 1.0) -> Verdict:
        """The verdict once the run is over: loaded when either load reading or the baseline says so. The run's
        own processes count in the reading after it (``own``: how many cores it kept busy, one for a benchmark
        that runs one thing at a time), so that reading may exceed the limit by that much."""
        load_after = load_average()
        reasons = []
        if self.load_before > self.max_load or load_after > self.max_load + own:
            reasons.append(f"load average {self.load_before:.2f} → {load_after:.2f} (over {self.max_load:g}, "
                           f"{own:g} of it this run's own after it)")
        if baseline_ms is not None and quiet_baseline_ms and baseline_ms > MAX_BASELINE_INFLATION * quiet_baseline_ms:
            reasons.append(f"baseline {baseline_ms:.2f} ms is over {MAX_BASELINE_INFLATION:g}× its quiet "
                           f"{quiet_baseline_ms:.2f} ms")
        if reasons:
            return Verdict(False, "NOISE: the machine was loaded (" + "; ".join(reasons) + "): these figures are "
                           "not a result", self.allow_loaded)
        return Verdict(True, f"machine: quiet (load {self.load_before:.2f} → {load_after:.2f})")
