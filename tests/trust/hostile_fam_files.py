"""Families about files: non-regular inputs, outputs that could destroy an input, and gates without evidence.

``data-loss``: ``-o`` naming an input (however spelt) is refused and the input keeps its bytes; an existing output
is replaced only with ``--force``, and atomically (a write that fails midway leaves the old bytes). ``no-evidence``:
a gate that read no usable event, or whose thread/scope/profiling window holds none, or whose target did not
return normally, exits 2 ("nothing to judge").
"""

from __future__ import annotations

import os
import random
import socket
from pathlib import Path

import hostile_kineto as k
from hostile_case import ANY_EXIT, REFUSED, Builder, Case, Expect, chain, fifo, files, symlink

TRACE = k.dumps(k.cpu_doc())
OTHER = k.dumps(k.gpu_doc())
OLD = b"precious bytes the user wrote\n"
SOURCE = "import torch\n\ndef f(x):\n    for i in range(3):\n        v = x.sum().item()\n    return v\n"  # a finding


def cases(rng: random.Random) -> list[Case]:
    from hostile_fam_targets import target_cases

    return [*nonregular_cases(), *data_loss_cases(), *no_evidence_cases(), *target_cases()]




def _socket(name: str) -> Builder:
    def build(folder: Path) -> None:
        here = os.getcwd()
        os.chdir(folder)  # bind a relative name: a socket's path is limited to 108 bytes
        try:
            with socket.socket(socket.AF_UNIX) as sock:
                sock.bind(name)
        finally:
            os.chdir(here)
    return build


def _hardlink(name: str, target: str) -> Builder:
    def build(folder: Path) -> None:
        os.link(folder / target, folder / name)
    return build


def _mkdir(name: str) -> Builder:
    def build(folder: Path) -> None:
        (folder / name).mkdir(parents=True)
    return build


def _case(family: str, name: str, argv: tuple[str, ...], build: Builder, *, exits: frozenset[int] = REFUSED,
          timeout_s: float = 6.0, **expect: object) -> Case:
    return Case(id=f"{family}/{name}", family=family, argv=argv, build=build,
                expect=Expect(exits=exits, **expect), timeout_s=timeout_s)


def nonregular_cases() -> list[Case]:
    """FIFOs, devices, folders, sockets and link loops where a trace, a baseline or an output is expected."""
    family = "nonregular"
    inputs: dict[str, tuple[str, Builder]] = {
        "fifo": ("t.json", fifo("t.json")), "dev-zero": ("/dev/zero", files({})),
        "link-to-dev-zero": ("t.json", symlink("t.json", "/dev/zero")), "dev-null": ("/dev/null", files({})),
        "folder-named-json": ("t.json", _mkdir("t.json")), "link-loop": ("t.json", symlink("t.json", "t.json")),
        "dangling-link": ("t.json", symlink("t.json", "missing.json")), "socket": ("t.json", _socket("t.json")),
        "fifo-gz": ("t.json.gz", fifo("t.json.gz")), "proc-file": ("/proc/self/cmdline", files({})),
    }
    out: list[Case] = []
    for label, (path, build) in inputs.items():
        for command in (("analyze", path, "-f", "json"), ("gate", path), ("report", path, "-o", "r.html"),
                        ("compare", path, path)):
            out.append(_case(family, f"{label}/{command[0]}", command, build))
    ranks = chain(files({"ranks/r1.json": TRACE}), fifo("ranks/r0.json"))
    out.append(_case(family, "rank-folder-with-fifo/gate", ("gate", "ranks"), ranks, exits=ANY_EXIT))
    loop = chain(files({"ranks/r0.json": TRACE}), symlink("ranks/loop", "."), symlink("ranks/r1.json", "r1.json"))
    out.append(_case(family, "rank-folder-with-loops/gate", ("gate", "ranks"), loop, exits=ANY_EXIT))
    trace = files({"t.json": TRACE})
    for label, build in {"fifo": fifo("b.toml"), "dev-zero": symlink("b.toml", "/dev/zero"),
                         "folder": _mkdir("b.toml"), "link-loop": symlink("b.toml", "b.toml")}.items():
        out.append(_case(family, f"baseline-{label}/gate", ("gate", "t.json", "--baseline", "b.toml"),
                         chain(trace, build)))
    for label, target in (("dev-full", "/dev/full"), ("fifo", "out.json"), ("folder", "out.json")):
        build = chain(trace, fifo("out.json") if label == "fifo" else _mkdir("out.json") if label == "folder"
                      else files({}))
        out.append(_case(family, f"output-{label}/analyze", ("analyze", "t.json", "-f", "json", "-o", target),
                         build, exits=REFUSED if label != "fifo" else ANY_EXIT))
    return out


def data_loss_cases() -> list[Case]:
    family = "data-loss"
    inputs = files({"t.json": TRACE, "t.json.gz": _gz(TRACE), "a.json": OTHER, "src.py": SOURCE,
                    "pkg/mod.py": SOURCE, "saved.json": _saved(), "b.toml": _baseline(), "ranks/r0.json": TRACE,
                    "out.json": OLD, "r.html": OLD, "t.html": OLD, "sub/keep": b""})
    protected = ("t.json", "t.json.gz", "a.json", "src.py", "pkg/mod.py", "saved.json", "b.toml", "ranks/r0.json")
    same_input = {
        "analyze-json": ("analyze", "t.json", "-f", "json", "-o", "t.json"),
        "analyze-gz": ("analyze", "t.json.gz", "-f", "json", "-o", "t.json.gz"),
        "analyze-text": ("analyze", "t.json", "-o", "t.json"), "analyze-csv": ("analyze", "t.json", "-f", "csv",
                                                                             "-o", "t.json"),
        "analyze-second-input": ("analyze", "t.json", "a.json", "-o", "a.json"),
        "analyze-rank-file": ("analyze", "ranks", "-o", "ranks/r0.json"),
        "analyze-saved": ("analyze", "saved.json", "-f", "json", "-o", "saved.json"),
        "report": ("report", "t.json", "-o", "t.json"), "report-gz": ("report", "t.json.gz", "-o", "t.json.gz"),
        "report-compare": ("report", "t.json", "--compare", "a.json", "-o", "a.json"),
        "report-saved": ("report", "saved.json", "-o", "saved.json"),
        "compare-before": ("compare", "t.json", "a.json", "-o", "t.json"),
        "compare-after-json": ("compare", "t.json", "a.json", "-f", "json", "-o", "a.json"),
        "gate": ("gate", "t.json", "-o", "t.json"), "gate-sarif": ("gate", "t.json", "-f", "sarif", "-o", "t.json"),
        "gate-baseline-as-output": ("gate", "t.json", "--baseline", "b.toml", "-o", "b.toml"),
        "gate-write-baseline-over-trace": ("gate", "t.json", "--write-baseline", "t.json", "--force"),
        "lint": ("lint", "src.py", "-o", "src.py"), "lint-folder": ("lint", "pkg", "-o", "pkg/mod.py"),
        "lint-json": ("lint", "src.py", "-f", "json", "-o", "src.py"),
    }
    spellings = {"dot": "./t.json", "parent": "sub/../t.json", "absolute": "{dir}/t.json", "symlink": "link.json",
                 "hardlink": "hard.json"}
    out: list[Case] = []
    for label, argv in same_input.items():
        out.append(_case(family, f"output-is-input/{label}", argv, inputs, unchanged=protected))
    links = chain(inputs, symlink("link.json", "t.json"), _hardlink("hard.json", "t.json"))
    for label, path in spellings.items():
        for command in (("analyze", "t.json", "-f", "json", "-o", path), ("report", "t.json", "-o", path),
                        ("gate", "t.json", "-f", "junit", "-o", path)):
            out.append(_case(family, f"output-is-input-{label}/{command[0]}", command, links, unchanged=protected))
    existing = {
        "analyze": ("analyze", "t.json", "-f", "json", "-o", "out.json"),
        "compare": ("compare", "t.json", "a.json", "-o", "out.json"), "gate": ("gate", "t.json", "-o", "out.json"),
        "lint": ("lint", "src.py", "-o", "out.json"), "report": ("report", "t.json", "-o", "r.html"),
        "report-default-path": ("report", "t.json"),
    }
    for label, argv in existing.items():
        target = "t.html" if label == "report-default-path" else argv[-1]
        # Without -o, report picks a free name next to the trace (t-2.html): the existing page is kept either way.
        exits = frozenset({0, 2}) if label == "report-default-path" else REFUSED
        out.append(_case(family, f"existing-output/{label}", argv, inputs, exits=exits, unchanged=(*protected, target)))
        if label != "report-default-path":
            out.append(_case(family, f"existing-output-force/{label}", (*argv, "--force"), inputs,
                             exits=frozenset({0, 1}), unchanged=protected, replaced=(target,)))
            # The new bytes cannot all be written: the old output must survive whole (write, then rename).
            out.append(Case(id=f"{family}/atomic-write/{label}", family=family, argv=(*argv, "--force"),
                            build=inputs, expect=Expect(exits=REFUSED, unchanged=(*protected, target)),
                            file_size_limit=len(OLD) + 8))
    out.append(_case(family, "existing-baseline/gate", ("gate", "t.json", "--write-baseline", "b.toml"), inputs,
                     unchanged=protected))
    out.append(Case(id=f"{family}/atomic-write/baseline", family=family,
                    argv=("gate", "t.json", "--write-baseline", "b.toml", "--force"), build=inputs,
                    expect=Expect(exits=REFUSED, unchanged=protected), file_size_limit=64))
    out.append(_case(family, "refresh-baseline-in-place/gate", ("gate", "t.json", "--baseline", "b.toml",
                     "--write-baseline", "b.toml", "--force"), inputs, exits=frozenset({0}),
                     unchanged=tuple(p for p in protected if p != "b.toml")))
    return out


def _gz(data: bytes) -> bytes:
    import gzip

    return gzip.compress(data, mtime=0)


def _saved() -> bytes:
    import json

    from hostile_fam_forged import analysis_doc

    return json.dumps(analysis_doc()).encode()


def _baseline() -> bytes:
    from hostile_fam_forged import BASELINE

    return BASELINE.encode()


def no_evidence_cases() -> list[Case]:
    """Gates with nothing to judge: each must exit 2, in every format."""
    family = "no-evidence"
    metadata_only = [k.process_name("python"), k.thread_name(1, "main")]
    events = k.cpu_doc()["traceEvents"]
    traces: dict[str, bytes] = {
        "empty-events": b'{"traceEvents": []}',
        "metadata-only": k.dumps(k.kineto(metadata_only)),
        "instants-only": k.dumps(k.kineto([{"ph": "i", "name": "aten::nonzero", "ts": 1, "pid": 1, "tid": 1}])),
        "counters-only": k.dumps(k.kineto([{"ph": "C", "name": "mem", "ts": 1, "pid": 1, "args": {"v": 1}}])),
    }
    for label, value in (("ts-word", "abc"), ("ts-null", None), ("ts-nan-word", "nan"), ("ts-inf-word", "inf"),
                         ("ts-list", []), ("ts-missing", ...)):
        broken = [dict(e) for e in events]
        for event in broken:
            if event["ph"] == "X":
                if value is ...:
                    event.pop("ts")
                else:
                    event["ts"] = value
        traces[label] = k.dumps(k.kineto(broken))
    out: list[Case] = []
    for label, data in traces.items():
        for fmt in ("text", "github", "sarif", "junit"):
            out.append(_case(family, f"{label}/gate-{fmt}", ("gate", "t.json", "-f", fmt), files({"t.json": data})))
    with_idle = k.cpu_doc()
    with_idle["traceEvents"] += [k.thread_name(2, "idle-thread"), k.op("idle", 500, 10, cat="user_annotation")]
    filtered = files({"t.json": k.dumps(with_idle)})
    out.append(_case(family, "thread-without-events/gate", ("gate", "t.json", "--thread", "idle-thread"), filtered))
    out.append(_case(family, "thread-tid-without-events/gate", ("gate", "t.json", "--thread", "2"), filtered))
    out.append(_case(family, "scope-without-events/gate", ("gate", "t.json", "--scope", "idle"), filtered))
    empty_saved = {"schema": "synchunt.analysis/1", "traces": [], "filters": {}, "summary": {"syncs": 0},
                   "syncs": [], "call_sites": []}
    import json

    out.append(_case(family, "saved-analysis-without-traces/gate", ("gate", "saved.json"),
                     files({"saved.json": json.dumps(empty_saved)})))
    out.append(_case(family, "folder-without-traces/gate", ("gate", "ranks"), files({"ranks/notes.txt": "x"})))
    out.append(_case(family, "every-rank-empty/gate", ("gate", "ranks"),
                     files({"ranks/r0.json": traces["empty-events"], "ranks/r1.json": traces["metadata-only"]})))
    cut = TRACE[: TRACE.index(b"aten::index")]
    out.append(_case(family, "partial-trace/gate", ("gate", "t.json"), files({"t.json": cut})))
    out.append(_case(family, "partial-trace-allowed-but-empty/gate", ("gate", "t.json", "--allow-partial"),
                     files({"t.json": TRACE[:40]})))
    return out
