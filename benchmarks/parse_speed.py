"""Trace parsing speed: synchunt.load_trace vs plain JSON decoding of the same file, side by side.

Builds a large trace by repeating the events of a real one (shifted in time, one pid/tid lane per copy), then
times, in interleaved repeats: json.loads, orjson.loads (when installed), synchunt's decode only, and the full
load_trace (decode + DataFrames + containment tree). Prints medians and the ratios to json.loads.

    python benchmarks/parse_speed.py [--events 1000000] [--repeats 3] [--source TRACE]
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import tempfile
import time
from pathlib import Path

DEFAULT_SOURCE = Path(__file__).resolve().parents[1].parent / "shared/traces/hta/rank_non_gpu/rank_non_gpu.json.gz"


def build_big_trace(source: Path, target_events: int, out: Path) -> int:
    data = json.loads(gzip.decompress(source.read_bytes()) if source.suffix == ".gz" else source.read_bytes())
    base = [e for e in data["traceEvents"] if e.get("ph") == "X"]
    span = max(e["ts"] + e.get("dur", 0) for e in base) - min(e["ts"] for e in base) + 1
    events = []
    copy = 0
    while len(events) < target_events:
        for e in base:
            clone = dict(e)
            clone["ts"] = e["ts"] + copy * span
            events.append(clone)
        copy += 1
    data["traceEvents"] = events[:target_events]
    out.write_text(json.dumps(data))
    return len(data["traceEvents"])


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    args = parser.parse_args()

    from synchunt.trace import load_trace
    from synchunt.trace.decode import decode

    try:
        import orjson
    except ImportError:
        orjson = None

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "big.json"
        count = build_big_trace(args.source, args.events, path)
        size_mb = path.stat().st_size / 1e6
        contenders = {"json.loads": lambda: json.loads(path.read_bytes())}
        if orjson is not None:
            contenders["orjson.loads"] = lambda: orjson.loads(path.read_bytes())
        contenders["synchunt decode"] = lambda: decode(path)
        contenders["synchunt load_trace"] = lambda: load_trace(path)
        times: dict[str, list[float]] = {name: [] for name in contenders}
        for _ in range(args.repeats):
            for name, fn in contenders.items():  # interleaved so machine noise hits every contender alike
                times[name].append(timed(fn))
    print(f"{count:,} events, {size_mb:.0f} MB of JSON, {args.repeats} repeats (medians)")
    baseline = statistics.median(times["json.loads"])
    for name, samples in times.items():
        median = statistics.median(samples)
        print(f"  {name:22s} {median:7.2f} s  {median / baseline:5.2f}x json.loads")
    print(" ".join(f"{name.replace(' ', '_')}/json={statistics.median(s) / baseline:.2f}"
                   for name, s in times.items() if name != "json.loads"))


if __name__ == "__main__":
    main()
