"""Families that damage the bytes: gzip variants, truncation at many offsets (salvage), byte flips."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import random
import struct
import zlib
from functools import cache
from pathlib import Path

import hostile_kineto as k
from hostile_case import ANY_EXIT, REFUSED, Builder, Case
from hostile_cmd import rotate, trace_case

MASKED = "hicache-dcp-masked-cpu"
SLICED = "hicache-dcp-sliced-cpu"


def cases(rng: random.Random) -> list[Case]:
    return [*gzip_cases(rng), *truncation_cases(rng), *byteflip_cases(rng)]


def _gz(data: bytes, level: int = 6, **header: object) -> bytes:
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=level, mtime=0, **header) as f:
        f.write(data)
    return out.getvalue()


def _gz_with_extra(data: bytes) -> bytes:
    """A gzip member with FEXTRA and FCOMMENT set (valid, rarely written by Python's own gzip)."""
    body = zlib.compressobj(6, zlib.DEFLATED, -15)
    deflated = body.compress(data) + body.flush()
    extra = b"SH" + struct.pack("<H", 4) + b"\x00\x01\x02\x03"
    header = b"\x1f\x8b\x08" + bytes([0x04 | 0x10]) + b"\x00\x00\x00\x00\x00\xff"
    header += struct.pack("<H", len(extra)) + extra + b"a comment\x00"
    return header + deflated + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


@cache
def bomb(size: int, members: bool) -> bytes:
    """A small gzip file decompressing to ``size`` bytes of valid JSON (the CPU trace plus whitespace)."""
    head = k.dumps(k.cpu_doc())[:-1] + b","
    tail = b'"pad": 0}'
    pad = size - len(head) - len(tail)
    chunk = b" " * (1 << 20)
    if members:  # many members: cheap to build, same bytes once decompressed
        piece = gzip.compress(chunk, compresslevel=9, mtime=0)
        return gzip.compress(head, mtime=0) + piece * (pad >> 20) + gzip.compress(
            b" " * (pad & ((1 << 20) - 1)) + tail, mtime=0)
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [packer.compress(head)] + [packer.compress(chunk) for _ in range(pad >> 20)]
    parts += [packer.compress(b" " * (pad & ((1 << 20) - 1)) + tail), packer.flush()]
    return b"".join(parts)


def gzip_cases(rng: random.Random) -> list[Case]:
    family = "gzip"
    cpu = k.dumps(k.cpu_doc())
    out: list[Case] = []
    keep = {"exits": frozenset({0}), "verdict": k.CPU_VERDICT}
    for level in (1, 6, 9):
        out.append(trace_case(family, f"level@{level}", _gz(cpu, level), filename="t.json.gz", **keep))
    out.append(trace_case(family, "header-fname", _gz(cpu, filename="trace.json"), filename="t.json.gz", **keep))
    out.append(trace_case(family, "header-extra-comment", _gz_with_extra(cpu), filename="t.json.gz", **keep))
    out.append(trace_case(family, "gzip-named-json", _gz(cpu), filename="t.json", **keep))
    out.append(trace_case(family, "plain-named-gz", cpu, filename="t.json.gz", **keep))
    for parts in (2, 3, 7, 40):  # concatenated members: one stream once decompressed
        cuts = sorted(rng.sample(range(1, len(cpu)), parts - 1))
        pieces = [cpu[a:b] for a, b in zip([0, *cuts], [*cuts, len(cpu)], strict=True)]
        out.append(trace_case(family, f"members@{parts}", b"".join(_gz(p) for p in pieces),
                              filename="t.json.gz", **keep))
    masked = k.sample_bytes(MASKED)
    half = len(masked) // 2
    out.append(trace_case(family, "members-sample", _gz(masked[:half]) + _gz(masked[half:]), filename="t.json.gz",
                          exits=frozenset({0}), verdict=k.SAMPLE_VERDICTS[MASKED]))
    out += _gzip_damage(family, rng, cpu)
    out += _bomb_cases(family)
    return out


def _gzip_damage(family: str, rng: random.Random, cpu: bytes) -> list[Case]:
    out: list[Case] = []
    packed = _gz(cpu)
    others = {
        "trailing-zeros": packed + b"\x00" * 64, "trailing-garbage": packed + b"garbage",
        "trailing-half-header": packed + b"\x1f\x8b", "wrong-magic": b"\x1f\x8c" + packed[2:],
        "magic-only": b"\x1f\x8b", "header-only": packed[:10], "method-not-deflate": packed[:2] + b"\x07" + packed[3:],
        "reserved-flags": packed[:3] + b"\xe0" + packed[4:], "bad-crc": packed[:-8] + b"\0\0\0\0" + packed[-4:],
        "bad-isize": packed[:-4] + b"\xff\xff\xff\x7f", "double-gzip": _gz(packed), "empty-member": _gz(b""),
        "whitespace-member": _gz(b"   \n"), "zlib-stream": zlib.compress(cpu), "bzip2": bz2.compress(cpu),
        "xz": lzma.compress(cpu), "zstd-magic": b"\x28\xb5\x2f\xfd" + cpu[:64],
    }
    for index, (name, data) in enumerate(others.items()):
        out.append(trace_case(family, name, data, rotate(index), filename="t.json.gz"))
    sample = k.sample_gz(MASKED)
    for index, (label, data) in enumerate([("cpu", packed)] * 12 + [("sample", sample)] * 24):
        at = rng.randrange(12, len(data) - 8)  # past the header, before the trailer: the deflate stream itself
        damaged = data[:at] + bytes([data[at] ^ rng.randrange(1, 256)]) + data[at + 1:]
        out.append(trace_case(family, f"deflate-{label}@{index}.{at}", damaged, rotate(index),
                              filename="t.json.gz"))
    chain = k.dumps(k.chain_doc(60), indent=1)
    chain_gz = _gz(chain)
    for at in sorted(rng.sample(range(11, len(chain_gz) - 1), 24)):
        prefix = zlib.decompressobj(31).decompress(chain_gz[:at])
        out.append(trace_case(family, f"cut-member@{at}", chain_gz[:at], filename="t.json.gz",
                              exits=frozenset({0, 2}), salvage=k.syncs_before(prefix, len(prefix))))
    return out


def _bomb_file(size: int, members: bool) -> Builder:
    def build(folder: Path) -> None:
        (folder / "t.json.gz").write_bytes(bomb(size, members))
    return build


def _bomb_cases(family: str) -> list[Case]:
    small = _bomb_file(48 << 20, False)
    out = [
        trace_case(family, "bomb-48MiB", small, filename="t.json.gz", exits=frozenset({0}),
                   verdict=k.CPU_VERDICT, timeout_s=20),
        trace_case(family, "bomb-48MiB-capped", small, "gate-text", filename="t.json.gz", exits=REFUSED,
                   extra=("--max-trace-bytes", "8000000"), error_mentions="max-trace-bytes"),
    ]
    for label, size, members in (("bomb-256MiB", 256 << 20, False), ("bomb-1GiB", 1 << 30, True),
                                 ("bomb-4GiB", 4 << 30, True)):
        for command in ("analyze-json", "gate-text", "report"):
            out.append(trace_case(family, label, _bomb_file(size, members), command, filename="t.json.gz",
                                  heavy=True, timeout_s=60))
    return out


def truncation_cases(rng: random.Random) -> list[Case]:
    """A trace cut mid-write: the events wholly before the cut must be analysed, marked partial; gate fails."""
    family = "truncation"
    out: list[Case] = []
    for layout, text in (("compact", k.dumps(k.chain_doc(40))), ("indented", k.dumps(k.chain_doc(40), indent=2))):
        end = text.rindex(b"}")
        for cut in sorted(rng.sample(range(1, end), 75)):
            out.append(trace_case(family, f"chain-{layout}@{cut}", text[:cut], exits=frozenset({0, 2}),
                                  salvage=k.syncs_before(text, cut)))
        for cut in sorted(rng.sample(range(1, end), 25)):
            out.append(trace_case(family, f"gate-{layout}@{cut}", text[:cut], "gate-text", exits=REFUSED))
        for cut in sorted(rng.sample(range(1, end), 10)):
            gets = 1 if k.syncs_before(text, cut) else 2
            out.append(trace_case(family, f"gate-allow-partial-{layout}@{cut}", text[:cut], "gate-text",
                                  extra=("--allow-partial",), exits=frozenset({gets})))
    cpu = k.dumps(k.cpu_doc(), indent=1)
    for cut in range(1, cpu.rindex(b"}"), 9):
        out.append(trace_case(family, f"cpu@{cut}", cpu[:cut], exits=frozenset({0, 2}),
                              salvage=k.syncs_before(cpu, cut)))
    for name in (MASKED, SLICED):
        text = k.sample_bytes(name)
        for index, cut in enumerate(sorted(rng.sample(range(1, len(text) - 2), 20))):
            command = "gate-text" if index % 4 == 3 else "analyze-json"
            if command == "gate-text":
                out.append(trace_case(family, f"sample-{name[12:18]}@{cut}", text[:cut], command, exits=REFUSED))
            else:
                out.append(trace_case(family, f"sample-{name[12:18]}@{cut}", text[:cut], command,
                                      exits=frozenset({0, 2}), salvage=k.syncs_before(text, cut)))
    return out


def byteflip_cases(rng: random.Random) -> list[Case]:
    """One byte changed, inserted or removed anywhere: any verdict, but never a traceback or a hang."""
    family = "byteflip"
    bases = {"cpu": k.dumps(k.cpu_doc(), indent=1), "gpu": k.dumps(k.gpu_doc()), "mixed": k.dumps(k.mixed_doc()),
             "chain": k.dumps(k.chain_doc(30)), "sample": k.sample_bytes(MASKED)}
    out: list[Case] = []
    index = 0
    for name, text in bases.items():
        count = 30 if name == "sample" else 45
        for _ in range(count):
            at = rng.randrange(len(text))
            how = rng.choice(("flip", "flip", "flip", "insert", "delete"))
            if how == "flip":
                data = text[:at] + bytes([text[at] ^ (1 << rng.randrange(8))]) + text[at + 1:]
            elif how == "insert":
                data = text[:at] + bytes([rng.choice(b'{}[],:"\\0e-.\x00\xff')]) + text[at:]
            else:
                data = text[:at] + text[at + 1:]
            out.append(trace_case(family, f"{name}-{how}@{index}.{at}", data, rotate(index), exits=ANY_EXIT))
            index += 1
    packed = _gz(bases["cpu"])
    for _ in range(30):
        at = rng.randrange(len(packed))
        data = packed[:at] + bytes([packed[at] ^ (1 << rng.randrange(8))]) + packed[at + 1:]
        out.append(trace_case(family, f"gz-flip@{index}.{at}", data, rotate(index), filename="t.json.gz"))
        index += 1
    return out
