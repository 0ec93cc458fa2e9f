"""The shape of a sync rule. Standard library only: every layer of synchunt imports this."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Kind(str, Enum):
    """Why the host waits for the device."""

    DATA_DEPENDENT_READ = "data-dependent read"
    BLOCKING_COPY = "blocking copy"
    EXPLICIT_SYNC = "explicit sync"


@dataclass(frozen=True)
class OpPattern:
    """An aten op as it appears in a Kineto trace (``cpu_op`` events), optionally only under another op.

    ``latent`` marks ops that are themselves the data-dependent read, so that a CPU-only trace can flag
    them as "would sync on a GPU". Copy ops are not latent: a CPU trace cannot tell their devices apart.
    ``when`` names a condition on the op's recorded arguments (see ``synchunt.detect.conditions``).
    """

    op: str
    under: str | None = None
    latent: bool = True
    when: str | None = None


@dataclass(frozen=True)
class GuardOp:
    """An aten overload packet the runtime guard intercepts (``torch.ops.aten.<packet>``).

    ``when`` names an argument predicate in ``synchunt.guard.classify``; ``None`` means always.
    """

    packet: str
    when: str | None = None


@dataclass(frozen=True)
class Rule:
    """One sync pattern: what syncs, why, how it looks in a trace, and what to write instead.

    The doc fields (``what_it_does``, ``why_bad``, ``example``, ``use_instead``) are the user documentation:
    ``docs/rules.md``, SARIF help text and the HTML report are generated from them.
    """

    code: str
    name: str
    kind: Kind
    title: str
    what_syncs: str
    mechanism: str
    fingerprint: str
    alternative: str
    what_it_does: str
    why_bad: str
    example: str
    use_instead: str
    references: tuple[str, ...] = ()
    trace_ops: tuple[OpPattern, ...] = ()
    runtime_calls: tuple[str, ...] = ()
    copy_direction: str | None = None
    guard_ops: tuple[GuardOp, ...] = ()
    lint_forms: tuple[str, ...] = field(default=())

    @property
    def has_static_form(self) -> bool:
        return bool(self.lint_forms)

    @property
    def series(self) -> str:
        return self.code[:3] + "xx"
