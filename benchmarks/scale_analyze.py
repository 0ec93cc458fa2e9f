"""Scale: `synchunt analyze` against plain JSON decoders on ≥ 200 MB traces, each in a fresh process.

Builds (once, under --work) a with-stack CPU trace from a torch.profiler run replicated in Kineto's own layout
(timestamps shifted per copy) and a real GPU trace (../shared/traces/real, A100) replicated the same way, then
runs side by side: the bare msgspec typed decode of the same bytes (the fields synchunt keeps, default structs:
the practical limit), json.loads, orjson.loads and HTA's parser when installed, and the `synchunt analyze` CLI
(1 and 2 workers, then a cached re-analysis), and the same first and cached analyses through the library in one
process; then 8 rank traces with 1 and 2 workers and on dask, beside the bare decode of the same files, at each
--rank-mb size (25 MB: one copy of the A100 rank, where the CLI's start-up is a large share; 100 MB: still small
beside real ranks of 1-4 GB). Prints wall time and peak RSS of each process, and the ratios of the goals in
docs/benchmarks.md. The package's bytecode is compiled first, as `pip install` does, so that no child spends its
time compiling synchunt (this environment sets PYTHONDONTWRITEBYTECODE).

    python benchmarks/scale_analyze.py [--work /tmp/synchunt-scale] [--repeats 1] [--mb 220] [--rank-mb 25 100]
                                        [--parts single ranks]
"""

from __future__ import annotations

import argparse
import compileall
import gzip
import json
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from machine import Quietness, add_quiet_options

REPO = Path(__file__).resolve().parents[1]
GPU_SOURCE = REPO.parent / "shared/traces/real/negative_queue_length_values_check/rank0.json.gz"
# Peak RSS of the largest process: the child's VmHWM (unlike ru_maxrss it starts afresh at exec, so the
# benchmark's own size does not leak in), or a worker's peak (ru_maxrss of the waited-for children) if larger.
_CHILD = """
import json, re, resource, sys, time
start = time.perf_counter()
{body}
peak = int(re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read()).group(1))
peak = max(peak, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({{"work_s": time.perf_counter() - start, "rss_mb": peak / 1024}}))
"""
# The bare decodes (benchmarks/bare_decode.py), imported by the child; the import of msgspec is timed as before.
_BARE = f"""
sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})
from bare_decode import bare_decode as decode
"""
_BARE_ONE = _BARE + "decode(sys.argv[1])\n"
# The strict bare decode: the same bytes with every event's `args` kept raw (msgspec.Raw, not parsed): the floor
# under any decoder that must at least find each event's fields.
_STRICT = _BARE + "from bare_decode import strict_decode\nstrict_decode(sys.argv[1])\n"
# The machine's own ceiling for the rank runs: the bare decode of every rank file, in 1 and in 2 processes.
_BARE_RANKS_SERIAL = _BARE + "for path in sys.argv[1:]:\n    decode(path)\n"
_BARE_RANKS_PAIR = _BARE + ("import multiprocessing\n"
                            "with multiprocessing.get_context('fork').Pool(2) as pool:\n"
                            "    pool.map(decode, sys.argv[1:], chunksize=1)\n")
# The same two analyses through the library in one process (a notebook, a service): what is left of P6 without
# the CLI's start-up. The cache folder is emptied first; the second call re-analyses with another mode.
_LIBRARY_CACHE = """
import shutil
from pathlib import Path
from synchunt import analyze
from synchunt.trace import LoadOptions
cache = Path(sys.argv[2])
shutil.rmtree(cache, ignore_errors=True)
options = LoadOptions(cache=True, cache_dir=cache)
t0 = time.perf_counter()
analyze(sys.argv[1], load=options)
t1 = time.perf_counter()
analyze(sys.argv[1], mode="latent", load=options)
t2 = time.perf_counter()
print(json.dumps({"first_s": t1 - t0, "cached_s": t2 - t1}))
"""
# The cache key's candidate hashes over the whole file (read into one reused buffer of 1 MiB, as the cache does),
# each in a fresh process with the file in the page cache: what a cached re-analysis pays to know the bytes are
# the same.
_HASH = """
import hashlib
name = sys.argv[2]
if name == "xxhash xxh3_128":
    import xxhash
    digest = xxhash.xxh3_128()
elif name == "read only":
    digest = None
else:
    digest = hashlib.new(name.split()[1])
buffer = bytearray(1 << 20)
view = memoryview(buffer)
with open(sys.argv[1], "rb", buffering=0) as handle:
    while count := handle.readinto(buffer):
        if digest is not None:
            digest.update(view[:count])
"""
# The cache's storage, decided by measurement (issue: the hand-made format against Arrow IPC, which pyarrow, a
# dependency, memory-maps without a copy): the trace decoded once, its columns written in each format, then each
# entry read in a fresh process and every column touched, then a cached re-analysis from each (`analyze` on a
# trace read back). Arrow stores codes and vocabularies as dictionary arrays, the numbers as they are.
_STORAGE_WRITE = """
from pathlib import Path
import numpy as np
from synchunt.detect.conditions import analysis_fields
from synchunt.trace import LoadOptions, load_trace
from synchunt.trace.cache import write_entry
from synchunt.trace.table import CODED, IDS
trace = load_trace(sys.argv[1], LoadOptions(cache=False, fields=analysis_fields()))
table = trace.table
t0 = time.perf_counter()
write_entry(trace, Path(sys.argv[2]))
t1 = time.perf_counter()
import pyarrow as pa, pyarrow.ipc
t2 = time.perf_counter()
columns, names = [], []
for key in table.keys:
    if key in CODED or key in IDS:
        codes, vocabulary = (table.id_codes(key) if key in IDS else
                             (table.coded(key).codes, table.coded(key).vocabulary.tolist()))
        kind = pa.binary() if any(isinstance(v, bytes) for v in vocabulary) else pa.string()
        values = pa.array([v if isinstance(v, (str, bytes)) or v is None else str(v) for v in vocabulary], kind)
        codes = np.asarray(codes, dtype=np.int32)
        columns.append(pa.DictionaryArray.from_arrays(pa.array(codes, mask=codes < 0), values))
    else:
        columns.append(pa.array(table.array(key)))
    names.append(key)
batch = pa.record_batch(columns, names=names)
with pa.OSFile(sys.argv[3], "wb") as sink, pa.ipc.new_file(sink, batch.schema) as writer:
    writer.write_batch(batch)
t3 = time.perf_counter()
sizes = [Path(name).stat().st_size / 2**20 for name in sys.argv[2:4]]
print(json.dumps({"custom_write_s": t1 - t0, "arrow_import_s": t2 - t1, "arrow_write_s": t3 - t2,
                  "custom_mb": sizes[0], "arrow_mb": sizes[1]}))
"""
_STORAGE_READ_CUSTOM = """
from pathlib import Path
from synchunt.trace.cache import read_entry
from synchunt.trace.table import CODED
table = read_entry(Path(sys.argv[1]), Path(sys.argv[2])).table
for key in table.keys:
    table.coded(key) if key in CODED else table.array(key)
"""
_STORAGE_READ_ARROW = """
import numpy as np
import pyarrow as pa, pyarrow.ipc
with pa.memory_map(sys.argv[2], "r") as source:
    batch = pa.ipc.open_file(source).get_batch(0)
    for column in batch.columns:
        if pa.types.is_dictionary(column.type):
            codes = column.indices.to_numpy(zero_copy_only=False)
            vocabulary = np.array(column.dictionary.to_pylist(), dtype=object)
        else:
            values = column.to_numpy()
"""
HASHES = ("read only", "hashlib blake2b", "hashlib sha1", "hashlib md5", "xxhash xxh3_128")
CONTENDERS = {
    "msgspec typed decode": _BARE_ONE,
    "msgspec strict (args raw)": _STRICT,
    "json.loads": "import json\njson.loads(open(sys.argv[1], 'rb').read())",
    "orjson.loads": "import orjson\norjson.loads(open(sys.argv[1], 'rb').read())",
    # HTA's parser, as its TraceAnalysis calls it for each rank (the installed release has no parse_trace_file)
    "HTA parse_trace_dataframe": ("from hta.common.trace_parser import parse_trace_dataframe\n"
                                  "from hta.configs.parser_config import ParserConfig\n"
                                  "parse_trace_dataframe(sys.argv[1], ParserConfig.get_default_cfg())"),
}


def cpu_base(out: Path, iterations: int) -> Path:
    """A real with-stack CPU trace: small ops in a loop, a boolean-mask read (a latent sync) every 50 steps."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    x, w = torch.randn(16, 16), torch.randn(16, 16)
    with profile(activities=[ProfilerActivity.CPU], with_stack=True, record_shapes=True) as prof:
        for step in range(iterations):
            x = torch.relu(x @ w + 1.0)
            x = x / (x.norm() + 1.0)
            if step % 50 == 0:
                x = x + x[x > 0.5].sum()
    prof.export_chrome_trace(str(out))
    return out


def replicate(source: Path, out: Path, target_bytes: int, rank: int | None = None, at_least: bool = True) -> Path:
    """Copies of the source's events, in its own layout, each shifted past the previous one (ts, ids): enough
    to reach ``target_bytes`` (``at_least``), else the number of copies nearest to it."""
    data = gzip.decompress(source.read_bytes()) if source.suffix == ".gz" else source.read_bytes()
    start = re.search(rb'"traceEvents"\s*:\s*\[', data).end()
    end = data.rindex(b"]")
    head, body, tail = data[:start], data[start:end].rstrip().rstrip(b","), data[end:]
    if rank is not None:
        head = re.sub(rb'"rank": \d+', b'"rank": %d' % rank, head)
    stamps = [float(v) for v in re.findall(rb'"ts": (-?[0-9.]+)', body)]
    span = max(stamps) - min(stamps) + 1000.0
    ids = [int(v) for v in re.findall(rb'"(?:correlation|External id)": (\d+)', body)] or [0]
    id_span = max(ids) + 1
    copies = max(1, -(-target_bytes // len(body)) if at_least else round(target_bytes / len(body)))
    with out.open("wb") as handle:
        handle.write(head)
        for copy in range(copies):
            text = body
            if copy:
                shift = copy * span
                text = re.sub(rb'"ts": (-?[0-9.]+)', lambda m, s=shift: b'"ts": ' + _shifted(m.group(1), s), text)
                text = re.sub(rb'"(correlation|External id)": (\d+)',
                              lambda m, c=copy: b'"%s": %d' % (m.group(1), int(m.group(2)) + c * id_span), text)
                handle.write(b",")
            handle.write(text)
        handle.write(b"\n  " + tail.lstrip())
    return out


def _shifted(number: bytes, shift: float) -> bytes:
    value = float(number) + shift
    return b"%d" % value if b"." not in number else b"%.3f" % value


def run(body: str, *args: str) -> dict:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _CHILD.format(body=body), *args], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]  # the body's figures, then ours
    return {key: value for line in lines for key, value in json.loads(line).items()} | {"wall_s": wall}


def synchunt_cli() -> str:
    """A child body running the CLI's analyze with the child's arguments, as the console script does."""
    return ("from synchunt.cli import entry\nsys.argv = ['synchunt', 'analyze', *sys.argv[1:]]\n"
            "try:\n    entry()\nexcept SystemExit as e:\n    assert not e.code, e.code\n")


def measure(runs: list[tuple[str, str, list[str], Callable[[], None] | None]], repeats: int, table: dict) -> None:
    """Each run ``repeats`` times, in rounds (every run once per round, in order), so that a machine that speeds
    up or slows down over minutes weighs on every contender alike; the medians go into ``table``. A run's
    ``before`` (or None) is called ahead of it in each round."""
    samples: dict[str, list[dict]] = {label: [] for label, *_ in runs}
    for _ in range(repeats):
        for label, body, args, before in runs:
            if before is not None:
                before()
            samples[label].append(run(body, *args))
    for label, rows in samples.items():
        failed = [row for row in rows if "error" in row]
        table[label] = failed[0] if failed else {
            key: statistics.median(row[key] for row in rows) for key in ("wall_s", "work_s", "rss_mb")}


def report(title: str, size_mb: float, table: dict, baseline: str) -> None:
    print(f"\n{title}: {size_mb:.0f} MB of JSON")
    base = table.get(baseline, {}).get("wall_s")
    for label, row in table.items():
        if "error" in row:
            print(f"  {label:34s} skipped ({row['error'][:80]})")
            continue
        ratio = f"{row['wall_s'] / base:5.2f}x" if base else "  -  "
        print(f"  {label:34s} {row['wall_s']:7.2f} s  {ratio} msgspec   peak RSS {row['rss_mb']:6.0f} MB "
              f"({row['rss_mb'] / size_mb:4.2f}x file)")


def single_trace(name: str, path: Path, work: Path, repeats: int) -> dict:
    size_mb = path.stat().st_size / 2**20
    table: dict = {}
    cli = synchunt_cli()
    common = [str(path), "--format", "json", "--output", str(work / "out.json"), "--force", "--no-progress"]
    cache = work / f"cache-{name}"
    runs = [(label, body, [str(path)], None) for label, body in CONTENDERS.items()]
    runs += [("synchunt analyze (1 process)", cli, [*common, "--no-cache"], None),
             ("synchunt analyze --workers 2", cli, [*common, "--no-cache", "--workers", "2"], None),
             ("synchunt analyze (fills cache)", cli, [*common, "--cache-dir", str(cache)],
              lambda: shutil.rmtree(cache, ignore_errors=True)),
             ("synchunt analyze (cached)", cli, [*common, "--cache-dir", str(cache), "--mode", "latent"], None)]
    measure(runs, repeats, table)
    library = [run(_LIBRARY_CACHE, str(path), str(work / f"library-cache-{name}")) for _ in range(repeats)]
    if not any("error" in row for row in library):
        first, cached = (statistics.median(row[key] for row in library) for key in ("first_s", "cached_s"))
        table["library"] = {"first_s": first, "cached_s": cached}
    report(name, size_mb, {k: v for k, v in table.items() if k != "library"}, "msgspec typed decode")
    if "library" in table:
        row = table["library"]
        print(f"  library analyze() in one process: first {row['first_s']:.2f} s, cached re-analysis "
              f"{row['cached_s']:.2f} s ({row['cached_s'] / row['first_s']:.2f}x)")
    return table


def hashes(path: Path, repeats: int) -> dict:
    """Each candidate cache-key hash over the whole file, in a fresh process: wall time and GB/s."""
    size = path.stat().st_size
    table: dict = {}
    measure([(name, _HASH, [str(path), name], None) for name in HASHES], repeats, table)
    print(f"\ncache key hashes over {size / 2**20:.0f} MB (fresh process, file in the page cache)")
    for name, row in table.items():
        if "error" in row:
            print(f"  {name:20s} skipped ({row['error'][:80]})")
            continue
        print(f"  {name:20s} {row['wall_s']:6.3f} s wall, {row['work_s']:6.3f} s work "
              f"({size / row['work_s'] / 1e9:5.1f} GB/s)")
    return table


def storage(path: Path, work: Path, repeats: int) -> dict:
    """The cache's storage in both formats, side by side: write time and size, then each entry read in a fresh
    process with every column touched (wall time and peak RSS; the Arrow read includes its import)."""
    custom, arrow = work / "storage.columns", work / "storage.arrow"
    written = [run(_STORAGE_WRITE, str(path), str(custom), str(arrow)) for _ in range(repeats)]
    table: dict = {}
    measure([("custom format: read", _STORAGE_READ_CUSTOM, [str(path), str(custom)], None),
             ("Arrow IPC (memory-mapped): read", _STORAGE_READ_ARROW, [str(path), str(arrow)], None)], repeats, table)
    print(f"\ncache storage of {path.name} (analysis fields; median of {repeats})")
    if any("error" in row for row in written):
        print(f"  write skipped ({next(r for r in written if 'error' in r)['error'][:80]})")
    else:
        figures = {key: statistics.median(row[key] for row in written) for key in written[0] if key != "wall_s"}
        print(f"  write: custom {figures['custom_write_s']:.3f} s ({figures['custom_mb']:.1f} MB); Arrow IPC "
              f"{figures['arrow_write_s']:.3f} s ({figures['arrow_mb']:.1f} MB) + import pyarrow "
              f"{figures['arrow_import_s']:.3f} s")
        table["write"] = figures
    for label, row in table.items():
        if label == "write":
            continue
        if "error" in row:
            print(f"  {label:34s} skipped ({row['error'][:80]})")
            continue
        print(f"  {label:34s} {row['wall_s']:6.3f} s wall, {row['work_s']:6.3f} s work, "
              f"peak RSS {row['rss_mb']:5.0f} MB")
    return table


def ranks(work: Path, source: Path, repeats: int, rank_mb: int) -> dict:
    """8 rank traces of about ``rank_mb`` MB each (the source replicated), analysed on 1 and 2 workers and dask,
    beside the bare decode of the same files in 1 and 2 processes (what this machine's two cores give)."""
    folder = work / f"ranks-{rank_mb}mb"
    if not folder.exists():
        folder.mkdir()
        for rank in range(8):
            replicate(source, folder / f"rank{rank}.json", rank_mb << 20, rank=rank, at_least=False)
    files = sorted(str(p) for p in folder.iterdir())
    size_mb = sum(Path(p).stat().st_size for p in files) / 2**20
    table: dict = {}
    outputs: dict[str, Path] = {}
    runs = [("bare decode, 1 process", _BARE_RANKS_SERIAL, files, None),
            ("bare decode, 2 processes", _BARE_RANKS_PAIR, files, None)]
    for label, extra in (("8 ranks, 1 worker", ["--workers", "1"]), ("8 ranks, 2 workers", ["--workers", "2"]),
                         ("8 ranks, dask LocalCluster x2", ["--executor", "dask", "--workers", "2"])):
        out = outputs[label] = work / f"ranks-{rank_mb}mb-{len(outputs)}.json"
        out.unlink(missing_ok=True)  # a run that fails must not compare a previous run's output
        runs.append((label, synchunt_cli(), [str(folder), "--format", "json", "--output", str(out), "--force",
                                             "--no-cache", "--no-progress", *extra], None))
    measure(runs, repeats, table)
    report(f"8 rank traces of {size_mb / 8:.0f} MB (GPU, A100 rank copies)", size_mb, table, "")
    texts = [out.read_text() if out.exists() and "error" not in table[label] else None
             for label, out in outputs.items()]
    same = None not in texts and len({json.dumps(json.loads(t), sort_keys=True) for t in texts}) == 1
    print(f"  identical results across executors: {same}")
    table["identical"] = same
    table["largest_mb"] = max(Path(p).stat().st_size for p in files) / 2**20
    return table


def rss_projection(results: dict, sizes: dict[str, float]) -> str:
    """P2's projection: peak RSS as a line through the smallest and the largest one-process runs on GPU traces
    (one rank at a time on 1 worker, and the replicated trace when it ran), read at 2 GB."""
    points = [(r["largest_mb"], r["8 ranks, 1 worker"]["rss_mb"]) for r in results["ranks"].values()
              if "rss_mb" in r["8 ranks, 1 worker"]]
    one = results["gpu"]["synchunt analyze (1 process)"] if "gpu" in results else {}
    if "rss_mb" in one:
        points.append((sizes["gpu"], one["rss_mb"]))
    if len({size for size, _ in points}) < 2:
        return "P2 projection: not enough sizes measured"
    (small, small_rss), (large, large_rss) = min(points), max(points)
    slope = (large_rss - small_rss) / (large - small)
    at = small_rss + slope * (2048 - small)
    return (f"P2 projection (GPU traces, peak RSS = {small_rss - slope * small:.0f} MB + {slope:.2f} x size, from "
            f"{small:.0f} and {large:.0f} MB): a 2 GB trace needs about {at / 1024:.1f} GB (24 GB here)")


def library_ratio(table: dict) -> str:
    row = table.get("library")
    return f"{row['cached_s'] / row['first_s']:.2f}" if row else "not measured"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/synchunt-scale"))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--mb", type=int, default=220, help="size of each replicated trace")
    parser.add_argument("--rank-mb", type=int, nargs="+", default=[25, 100],
                        help="size of each of the 8 rank traces (one set per size)")
    parser.add_argument("--parts", nargs="+", choices=("single", "ranks", "hash", "storage"),
                        default=["single", "ranks"],
                        help="what to run: the two large single traces, the 8-rank folders, the cache key's "
                             "candidate hashes, the cache's storage formats (on the CPU trace)")
    add_quiet_options(parser)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    compileall.compile_dir(REPO / "synchunt", quiet=1)
    results: dict = {"ranks": {}}
    sizes: dict[str, float] = {}  # MB of each single trace run
    cpu = args.work / "cpu-with-stack.json"
    if {"single", "hash", "storage"} & set(args.parts) and not cpu.exists():
        replicate(cpu_base(args.work / "cpu-base.json", 3000), cpu, args.mb << 20)
    quiet = Quietness.before(args)  # after the traces are built: their writing is not timed
    if "hash" in args.parts:
        hashes(cpu, max(args.repeats, 3))
    if "storage" in args.parts:
        storage(cpu, args.work, max(args.repeats, 3))
    if "single" in args.parts:
        gpu = args.work / "gpu-a100.json"
        if not gpu.exists():
            replicate(GPU_SOURCE, gpu, args.mb << 20)
        sizes = {"cpu": cpu.stat().st_size / 2**20, "gpu": gpu.stat().st_size / 2**20}
        results["cpu"] = single_trace("with-stack CPU trace", cpu, args.work, args.repeats)
        results["gpu"] = single_trace("GPU trace (A100, replicated)", gpu, args.work, args.repeats)
    if "ranks" in args.parts:
        results["ranks"] = {mb: ranks(args.work, GPU_SOURCE, args.repeats, mb) for mb in args.rank_mb}
    for name, size in sizes.items():
        table = results[name]
        bare = table["msgspec typed decode"]["wall_s"]
        one, two = table["synchunt analyze (1 process)"], table["synchunt analyze --workers 2"]
        cached = table["synchunt analyze (cached)"]
        if not all("wall_s" in row for row in (one, two, cached)):
            print(f"{name}: no ratios (a synchunt run was skipped: see above)")
            continue
        strict = table["msgspec strict (args raw)"].get("wall_s")
        against_strict = (f"; against the strict decode (args raw): analyze/strict={one['wall_s'] / strict:.2f} "
                          f"(goal ≤ 1.5), workers2/strict={two['wall_s'] / strict:.2f} (goal ≤ 1.0)") if strict else ""
        print(f"{name}: P1 analyze/msgspec={one['wall_s'] / bare:.2f}, workers2/msgspec="
              f"{two['wall_s'] / bare:.2f}{against_strict}; P2 RSS/file={one['rss_mb'] / size:.2f} (goal ≤ 1.0); "
              f"P6 cached/first={cached['wall_s'] / one['wall_s']:.2f} (goal ≤ 0.15; in one process: "
              f"{library_ratio(table)})")
    print(rss_projection(results, sizes))
    for mb, r in results["ranks"].items():
        serial, pooled = r["8 ranks, 1 worker"], r["8 ranks, 2 workers"]
        bare_serial, bare_pair = r["bare decode, 1 process"], r["bare decode, 2 processes"]
        if all("wall_s" in row for row in (serial, pooled, bare_serial, bare_pair)):
            ceiling = bare_serial["wall_s"] / bare_pair["wall_s"]
            print(f"ranks of {mb} MB: P3 1 worker/2 workers={serial['wall_s'] / pooled['wall_s']:.2f} (goal ≥ 1.8; "
                  f"the bare decode of the same files, 1/2 processes: {ceiling:.2f}); dask identical={r['identical']}")
    verdict = quiet.after(own=2.0)  # its runs with --workers 2 keep both cores busy
    print(verdict.line)
    return verdict.exit_code


if __name__ == "__main__":
    sys.exit(main())
