"""Small Kineto traces with known verdicts, the repository's sample traces, and the encodings the corpus mutates.

Every base trace comes with the verdict synchunt must give on it (``analyze -f json``), so a mutation that keeps
the events (re-encoding, reordered keys, duplicate metadata, gzip) has a verdict to keep. Nothing here imports
synchunt: the harness must keep judging the product while its decoder and model are rewritten.
"""

from __future__ import annotations

import copy
import gzip
import json
from functools import cache
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLES = REPO_ROOT / "traces" / "samples"

Doc = dict[str, Any]


def op(name: str, ts: float, dur: float, *, cat: str = "cpu_op", pid: Any = 1, tid: Any = 1, **args: Any) -> Doc:
    """One complete (``ph: X``) event, keys in Kineto's order."""
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def thread_name(tid: Any, name: str, pid: Any = 1) -> Doc:
    return {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "ts": 0, "args": {"name": name}}


def process_name(name: str, pid: Any = 1) -> Doc:
    return {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "ts": 0, "args": {"name": name}}


def kineto(events: list[Doc], **top: Any) -> Doc:
    """A trace document: metadata first, ``traceEvents``, then ``traceName`` last, as Kineto writes them."""
    return {"schemaVersion": 1, "displayTimeUnit": "ms", **top, "traceEvents": events,
            "traceName": "/tmp/hostile/trace.json"}


def cpu_doc() -> Doc:
    """A CPU-only step: ``x[mask]`` in ``model.py:12 forward`` → one latent SH101 on ``aten::nonzero``."""
    return kineto([
        process_name("python"),
        thread_name(1, "thread 1 (python)"),
        op("step", 0, 200, cat="user_annotation"),
        op("model.py(12): forward", 5, 150, cat="python_function", **{"Python id": 1, "Python parent id": 0}),
        op("aten::index", 10, 100, **{"External id": 1, "Input type": ["float", "bool"]}),
        op("aten::nonzero", 20, 50, **{"External id": 2, "Input type": ["bool"]}),
        op("aten::add", 120, 10, **{"External id": 3}),
    ], synchunt={"target": "hostile-cpu", "device": "cpu", "threads": {"1": "scheduler"}})


CPU_VERDICT: Doc = {"syncs": 1, "confirmed": 0, "latent": 1,
                    "sites": [["SH101", "aten::nonzero", "model.py", 12, "forward", 1]]}


def gpu_doc() -> Doc:
    """A CUDA step: ``.item()`` → ``cudaMemcpyAsync`` into pageable memory + ``cudaStreamSynchronize``."""
    return kineto([
        process_name("python"),
        thread_name(1, "thread 1 (python)"),
        op("aten::item", 10, 100),
        op("aten::_local_scalar_dense", 11, 98),
        op("cudaMemcpyAsync", 12, 10, cat="cuda_runtime", correlation=7),
        op("cudaStreamSynchronize", 25, 80, cat="cuda_runtime", correlation=8),
        op("Memcpy DtoH (Device -> Pageable)", 30, 2, cat="gpu_memcpy", pid=0, tid=7, correlation=7, stream=7),
        op("void kernel<float>()", 14, 10, cat="kernel", pid=0, tid=7, correlation=6, stream=7),
    ], deviceProperties=[{"id": 0, "name": "NVIDIA H100", "totalGlobalMem": 85000000000}])


GPU_VERDICT: Doc = {"syncs": 1, "confirmed": 1, "latent": 0,
                    "sites": [["SH109", "aten::_local_scalar_dense", None, None, None, 1]]}


def mixed_doc() -> Doc:
    """Two confirmed syncs, one under a Python frame and one with none (the report must render both)."""
    doc = gpu_doc()
    doc["traceEvents"] += [
        thread_name(2, "thread 2 (python)"),
        op("model.py(20): step", 195, 120, cat="python_function", tid=2, **{"Python id": 5, "Python parent id": 0}),
        op("aten::item", 200, 100, tid=2),
        op("aten::_local_scalar_dense", 201, 98, tid=2),
        op("cudaMemcpyAsync", 202, 10, cat="cuda_runtime", tid=2, correlation=17),
        op("cudaStreamSynchronize", 215, 80, cat="cuda_runtime", tid=2, correlation=18),
        op("Memcpy DtoH (Device -> Pageable)", 220, 2, cat="gpu_memcpy", pid=0, tid=7, correlation=17, stream=7),
    ]
    return doc


MIXED_VERDICT: Doc = {"syncs": 2, "confirmed": 2, "latent": 0,
                      "sites": [["SH109", "aten::_local_scalar_dense", "model.py", 20, "step", 1],
                                ["SH109", "aten::_local_scalar_dense", None, None, None, 1]]}


def chain_doc(count: int) -> Doc:
    """``count`` separate latent syncs (one ``aten::nonzero`` each), for counting what a salvage recovers."""
    events = [process_name("python"), thread_name(1, "thread 1 (python)")]
    events += [op("aten::nonzero", 100 * i, 10, **{"External id": i + 1}) for i in range(count)]
    return kineto(events)


def empty_doc() -> Doc:
    return {"traceEvents": []}


BASES: dict[str, tuple[Any, Doc]] = {"cpu": (cpu_doc, CPU_VERDICT), "gpu": (gpu_doc, GPU_VERDICT),
                                      "mixed": (mixed_doc, MIXED_VERDICT)}
# The samples' verdicts, as traces/README.md states them (counts and rules; their call sites are long paths).
SAMPLE_VERDICTS: dict[str, Doc] = {
    "hicache-dcp-masked-cpu": {"syncs": 54, "confirmed": 0, "latent": 54, "rules": ["SH101"]},
    "hicache-dcp-sliced-cpu": {"syncs": 0, "confirmed": 0, "latent": 0, "rules": []},
}


@cache
def _sample_text(name: str) -> bytes:
    return gzip.decompress((SAMPLES / f"{name}.pt.trace.json.gz").read_bytes())


def sample_doc(name: str) -> Doc:
    """A sample trace as a document (a fresh copy each call: mutations must not leak between cases)."""
    return copy.deepcopy(_sample_parsed(name))


@cache
def _sample_parsed(name: str) -> Doc:
    return json.loads(_sample_text(name))


def sample_bytes(name: str) -> bytes:
    """The sample's plain JSON bytes exactly as captured."""
    return _sample_text(name)


def sample_gz(name: str) -> bytes:
    return (SAMPLES / f"{name}.pt.trace.json.gz").read_bytes()


def base_doc(name: str) -> Doc:
    """A synthetic base (``cpu``, ``gpu``, ``mixed``) or a sample (by its stem)."""
    return BASES[name][0]() if name in BASES else sample_doc(name)


def base_verdict(name: str) -> Doc:
    return BASES[name][1] if name in BASES else SAMPLE_VERDICTS[name]


def dumps(doc: Any, **options: Any) -> bytes:
    """Compact JSON bytes (Kineto's own files are pretty-printed; the corpus uses both)."""
    options.setdefault("separators", (",", ":"))
    return json.dumps(doc, **options).encode("utf-8")


def event_spans(text: bytes) -> list[tuple[int, int]]:
    """(start, end) byte offsets of every element of ``traceEvents`` in ``text`` (end exclusive).

    A small scanner over JSON structure (strings, nesting), so the corpus knows exactly which events lie wholly
    before a cut without trusting any decoder.
    """
    key = text.find(b'"traceEvents"')
    start = text.find(b"[", key)
    spans: list[tuple[int, int]] = []
    depth, in_string, escaped, element_start = 0, False, False, -1
    for index in range(start + 1, len(text)):
        byte = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:
                in_string = False
            continue
        if byte == 0x22:
            in_string = True
        elif byte in (0x7B, 0x5B):  # { [
            if depth == 0:
                element_start = index
            depth += 1
        elif byte in (0x7D, 0x5D):  # } ]
            if depth == 0:  # the closing bracket of traceEvents
                break
            depth -= 1
            if depth == 0:
                spans.append((element_start, index + 1))
    return spans


def syncs_before(text: bytes, cut: int, op_name: bytes = b'"aten::nonzero"') -> int:
    """How many ``op_name`` events of ``text`` end at or before byte ``cut``."""
    return sum(1 for start, end in event_spans(text) if end <= cut and op_name in text[start:end])
