"""Trace parsing speed: synchunt's decode and load_trace vs plain JSON decoding of the same file, side by side.

Builds a large trace by repeating the events of a real one (shifted in time), or takes ``--trace`` (say the
with-stack CPU trace that benchmarks/scale_analyze.py writes), then times, in interleaved repeats in this
process: json.loads, orjson.loads (when installed), two bare msgspec decodes of the same bytes — the project's
own baseline (the fields synchunt keeps, ``args`` decoded into a struct) and the strict one (``args`` kept raw,
``msgspec.Raw``: the floor under any decoder that must find each event's fields) — and synchunt's analysis
decode (what ``analyze`` decodes: the ``analysis`` field set, columns and containment tree) in one process and
with 2 workers, and the full load_trace (every field). Two cores bound the 2-worker figure, so the strict decode
is also run on the file's two halves in 2 processes (forked for each run, as synchunt's workers are): its own
scaling on this machine, in the same run. Prints
medians with their spread (min-max), the ratios of the goals (docs/benchmarks.md) and the load average.

    python benchmarks/parse_speed.py [--events 1000000] [--repeats 3] [--source TRACE] [--trace FILE]
"""

from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bare_decode import bare_decode, strict_decode
from machine import Quietness, add_quiet_options

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


def halves(path: Path, scratch: Path) -> list[Path]:
    """The file's events in two files of about half its bytes each, cut at an event start (for the strict
    decode's 2-process scaling)."""
    data = path.read_bytes()
    start = re.search(rb'"traceEvents"\s*:\s*\[', data).end()
    end = data.rindex(b"]")
    middle = data.find(b"},", start + (end - start) // 2) + 1
    parts = [data[start:middle], data[middle + 1:end]]
    out = []
    for number, body in enumerate(parts):
        half = scratch / f"half{number}.json"
        half.write_bytes(b'{"traceEvents": [' + body + b"]}")
        out.append(half)
    return out


def strict_in_two_processes(split: list[Path]) -> list[int]:
    """The strict decode of the two halves in two forked processes, started for this call and gone after it, as
    synchunt's workers are: a pool kept alive between calls would hold three threads in this process, and
    synchunt starts no forked worker beside a thread (synchunt.executor: it spawns a fresh interpreter instead)."""
    with multiprocessing.get_context("fork").Pool(2) as pool:
        return pool.map(strict_decode, split, chunksize=1)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--trace", type=Path, help="time this trace file instead of building one")
    add_quiet_options(parser)
    args = parser.parse_args()
    quiet = Quietness.before(args)

    from synchunt.detect.conditions import analysis_fields
    from synchunt.executor import ExecutorSpec
    from synchunt.trace import LoadOptions, load_trace

    try:
        import orjson
    except ImportError:
        orjson = None

    analysis = LoadOptions(cache=False, fields=analysis_fields())
    pair = LoadOptions(cache=False, fields=analysis_fields(), executor=ExecutorSpec("local", 2))
    with tempfile.TemporaryDirectory() as scratch:
        path = args.trace or Path(scratch) / "big.json"
        count = None if args.trace else build_big_trace(args.source, args.events, path)
        size_mb = path.stat().st_size / 1e6
        split = halves(path, Path(scratch))
        contenders = {"json.loads": lambda: json.loads(path.read_bytes())}
        if orjson is not None:
            contenders["orjson.loads"] = lambda: orjson.loads(path.read_bytes())
        contenders |= {
            "bare msgspec (args decoded)": lambda: bare_decode(path),
            "strict msgspec (args raw)": lambda: strict_decode(path),
            "strict, 2 halves, 1 process": lambda: [strict_decode(p) for p in split],
            "strict, 2 halves, 2 processes": lambda: strict_in_two_processes(split),
            "analysis decode": lambda: load_trace(path, analysis),
            "analysis decode, 2 workers": lambda: load_trace(path, pair),
            "load_trace (every field)": lambda: load_trace(path),
        }
        times: dict[str, list[float]] = {name: [] for name in contenders}
        for _ in range(args.repeats):
            for name, fn in contenders.items():  # interleaved so machine noise hits every contender alike
                times[name].append(timed(fn))
    events = f"{count:,} events, " if count is not None else f"{path.name}, "
    print(f"{events}{size_mb:.0f} MB of JSON, {args.repeats} repeats (median, min-max)")
    median = {name: statistics.median(samples) for name, samples in times.items()}
    for name, samples in times.items():
        print(f"  {name:32s} {median[name]:7.2f} s  ({min(samples):.2f}-{max(samples):.2f})  "
              f"{median[name] / median['json.loads']:5.2f}x json.loads")
    strict, bare = median["strict msgspec (args raw)"], median["bare msgspec (args decoded)"]
    one, two = median["analysis decode"], median["analysis decode, 2 workers"]
    scaling = median["strict, 2 halves, 1 process"] / median["strict, 2 halves, 2 processes"]
    print(f"analysis decode / strict = {one / strict:.2f} (goal ≤ 1.5); / bare = {one / bare:.2f}")
    print(f"2 workers / strict = {two / strict:.2f} (goal ≤ 1.0); / bare = {two / bare:.2f}; the analysis decode's "
          f"1/2-worker speed-up {one / two:.2f} beside the strict decode's own on 2 processes {scaling:.2f}")
    verdict = quiet.after(own=2)  # the 2-process runs keep both cores busy
    print(verdict.line)
    sys.exit(verdict.exit_code)


if __name__ == "__main__":
    main()
