"""What the guard records: one immutable record per sync, the error that lists them, and their text form."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from synchunt.errors import SynchuntError
from synchunt.sites import Frame, SiteCount


@dataclass(frozen=True)
class SyncRecord:
    """One device-to-host sync (or latent sync) seen by the guard.

    ``file``/``line``/``function`` name the innermost user frame (the line that synced); ``stack`` holds the
    user frames, innermost first (so ``stack[0]`` is that same frame). ``latent`` is true when the tensors were not on a
    device (e.g. a CPU run): the op would sync on a GPU. ``source`` says which signal saw it: ``"dispatch"``
    (the aten op and its arguments), ``"method"`` (a Tensor method that reads to the host without dispatching,
    e.g. ``tolist``), ``"explicit"`` (``torch.cuda.synchronize()`` and friends) or ``"sync-debug"`` (torch's
    CUDA sync debug mode alone). ``confirmed`` is true when torch's CUDA sync debug mode also reported it.
    ``residency`` says where the op's data was: ``"device"`` (a real device, or the shadow device) or ``"host"``;
    ``shadow`` is true when the record was made under the shadow device (``synchunt.shadow_device()``): every
    record is then latent (nothing synced), and a host-resident one is kept but never counted.
    """

    rule: str
    op: str
    file: str
    line: int
    function: str
    stack: tuple[Frame, ...]
    thread: str
    latent: bool
    detail: str
    source: str = "dispatch"
    confirmed: bool = False
    allowed: bool = False
    allow_reason: str | None = None
    residency: str = ""  # "" when made without it: filled in from ``latent``
    shadow: bool = False

    def __post_init__(self) -> None:
        if not self.residency:
            object.__setattr__(self, "residency", "host" if self.latent else "device")

    @property
    def counts(self) -> bool:
        """False for a host-resident record of a shadow-device run: the same code never syncs there on a GPU."""
        return not (self.shadow and self.residency == "host")

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"

    def describe(self) -> str:
        """One line: rule, op, location, function, and what kind of sync it is."""
        kind = "latent" if self.latent else "sync"
        if self.shadow:
            kind = "shadow device" if self.residency == "device" else "host-resident, not counted"
        allowed = f", allowed: {self.allow_reason}" if self.allowed else ""
        detail = f" [{self.detail}]" if self.detail else ""
        return (f"{self.rule} {self.op} at {self.location} in {self.function} "
                f"({kind}, thread {self.thread}{allowed}){detail}")


def group_by_site(records: Iterable[SyncRecord]) -> list[SiteCount]:
    """Sites (rule, op, user line), most frequent first (ties in first-seen order)."""
    counts = Counter((r.rule, r.op, r.file, r.line, r.function) for r in records)
    return [SiteCount(*key, count=count) for key, count in counts.most_common()]


def summarize_rules(records: Iterable[SyncRecord]) -> str:
    """``"SH101 ×54, SH109 ×1"``, by rule code."""
    counts = Counter(r.rule for r in records)
    return ", ".join(f"{code} ×{n}" for code, n in sorted(counts.items()))


def format_syncs(records: Sequence[SyncRecord], *, with_stack: bool = True) -> str:
    """A numbered list of records, optionally each followed by its user stack."""
    lines: list[str] = []
    for number, record in enumerate(records, start=1):
        lines.append(f"{number:>3}. {record.describe()}")
        if with_stack:
            lines.extend(f"       {frame.file}:{frame.line} in {frame.function}" for frame in record.stack[1:])
    return "\n".join(lines)


class SyncError(SynchuntError):
    """Device-to-host syncs in a region guarded by ``forbid_syncs()`` (exit code 1)."""

    exit_code = 1

    def __init__(self, syncs: Sequence[SyncRecord]) -> None:
        self.syncs: tuple[SyncRecord, ...] = tuple(syncs)
        noun = "sync" if len(self.syncs) == 1 else "syncs"
        header = f"{len(self.syncs)} device-to-host {noun} in a forbid_syncs() region " \
                 f"({summarize_rules(self.syncs)}):"
        super().__init__(header + "\n" + format_syncs(self.syncs, with_stack=True))

    def __reduce__(self) -> tuple[type[SyncError], tuple[tuple[SyncRecord, ...]]]:
        # Rebuilt from its records (pytest-xdist, multiprocessing), not from the formatted message.
        return type(self), (self.syncs,)
