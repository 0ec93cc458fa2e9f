"""The shape of a sync rule. Standard library only: every layer of synchunt imports this.

A rule names everything any stage matches — trace ops and their roles, runtime and driver calls, ``cuda_sync``
kinds, guard ops and patches, lint forms — and carries its documentation in ruff's sections (what it does,
why it is bad, example, use instead) plus the sync-specific mechanism and trace fingerprint.
"""

from __future__ import annotations

from enum import Enum

import msgspec


class Kind(str, Enum):
    """Why the host waits for the device. Each kind owns one series of rule codes (``SH1xx`` …)."""

    DATA_DEPENDENT_READ = "data-dependent read"
    BLOCKING_COPY = "blocking copy"
    EXPLICIT_SYNC = "explicit sync"

    @property
    def series(self) -> str:
        """The code prefix of this kind's rules: ``"SH1"``, ``"SH2"``, ``"SH3"``."""
        return _SERIES[self]

    @property
    def heading(self) -> str:
        return f"{self.series}xx — {self.value}s"

    @classmethod
    def of_code(cls, code: str) -> Kind:
        """The kind a rule code belongs to by its series (``"SH101"`` → data-dependent read)."""
        for kind, series in _SERIES.items():
            if code.startswith(series):
                return kind
        raise KeyError(f"rule code {code!r} is in no series")


_SERIES = {Kind.DATA_DEPENDENT_READ: "SH1", Kind.BLOCKING_COPY: "SH2", Kind.EXPLICIT_SYNC: "SH3"}


class OpRole(str, Enum):
    """What an aten op in a trace means for the rule that names it."""

    CAUSE = "cause"  # the op's own work reads device data on the host; host reads beneath it are its sync
    READ = "read"  # a host read of device data (a scalar read): charged to an enclosing cause or anchor
    COPY = "copy"  # a copy op: the copy's direction picks the rule; charged like a read
    ANCHOR = "anchor"  # not a sync by itself: a host read or copy beneath it is this rule's sync


class TraceOp(msgspec.Struct, frozen=True):
    """An aten op as it appears in a Kineto trace (``cpu_op`` events).

    ``under`` restricts the op to calls nested in another op (``aten::nonzero`` under ``aten::index`` is mask
    indexing). ``latent`` marks ops that flag a CPU-only trace as "would sync on a GPU"; copies never do (a CPU
    trace cannot tell their devices apart). ``when`` names a condition on the op's recorded arguments
    (``synchunt.detect.conditions``). One call is one sync however many times it makes the host wait (the trace
    charges every wait under a call to that call; the shadow device reports a library op once per call).
    """

    op: str
    role: OpRole = OpRole.CAUSE
    under: str | None = None
    latent: bool = True
    when: str | None = None


class Blocking(str, Enum):
    """When a runtime or driver call stalls the calling host thread."""

    ALWAYS = "always"
    # An asynchronous copy the driver makes synchronous: device to pageable (unpinned) host memory.
    PAGEABLE_DEVICE_TO_HOST = "pageable device-to-host"


class WaitScope(str, Enum):
    """What a blocking call waits for on the device."""

    STREAM = "stream"  # one stream (its queued work, or the copy it issued)
    DEVICE = "device"  # every stream of the device
    EVENT = "event"  # the stream an event was recorded on


class RuntimeCall(msgspec.Struct, frozen=True):
    """A CUDA/HIP runtime or CUDA driver API call (``cuda_runtime`` / ``cuda_driver`` events).

    Stream syncs and copies are how ops read device data, so under a catalogue op the op's rule explains them;
    ``standalone`` calls (device and event syncs, frees) are never an op's read and keep their own rule.
    """

    name: str
    blocks: Blocking = Blocking.ALWAYS
    standalone: bool = False
    waits_on: WaitScope = WaitScope.STREAM


class GuardOp(msgspec.Struct, frozen=True):
    """An overload packet the runtime guard intercepts: ``torch.ops.aten.<packet>``, or a library's op named with
    its namespace (``"torchvision::nms"``), intercepted once the library has registered it.

    ``when`` names an argument predicate in ``synchunt.guard.classify``; ``None`` means always.
    """

    packet: str
    when: str | None = None


class PatchEffect(str, Enum):
    """What a guard patch does when the patched callable runs on a guarded thread."""

    REPORT = "report"  # the call is this rule's sync: record it (and not the copy it dispatches)
    MARK = "mark"  # the call is not itself recorded: the host read it makes is this rule's, not a generic one


class GuardPatch(msgspec.Struct, frozen=True):
    """A Python-level callable the guard wraps: explicit syncs and host reads the dispatcher cannot see
    (``torch.cuda.synchronize`` never dispatches an aten op; ``Tensor.tolist`` on a CPU tensor neither).

    ``target`` is a dotted path from ``torch`` (``"torch.Tensor.tolist"``); ``needs_cuda`` patches exist only
    where CUDA is available; ``op`` is the name records carry (default: the last two path parts); ``when`` names
    a condition on the call's arguments in ``synchunt.guard.patches`` (``None``: every call).
    """

    target: str
    effect: PatchEffect = PatchEffect.REPORT
    needs_cuda: bool = False
    op: str | None = None
    when: str | None = None

    @property
    def op_name(self) -> str:
        if self.op:
            return self.op
        parts = self.target.split(".")
        return ".".join(parts[-2:]) if len(parts) > 2 else parts[-1]


class Rule(msgspec.Struct, frozen=True):
    """One sync pattern: what syncs, why, how each stage recognises it, and what to write instead.

    Documentation (ruff's sections): ``title`` (the heading), ``what_it_does``, ``why_bad``, ``example``,
    ``use_instead`` (the example rewritten), plus ``mechanism`` (what the runtime does), ``fingerprint`` (what a
    trace shows) and ``fix`` (the advice in one line, as the terminal and the report show it). ``docs/rules.md``,
    SARIF help and the HTML report are generated from these.

    Recognition: ``trace_ops``; ``runtime_calls`` (host-blocking calls that no catalogue op encloses are this
    rule's); ``sync_kinds`` (blocking ``cuda_sync`` kinds, for calls the catalogue does not name);
    ``copy_direction`` (for ``COPY`` ops); ``guard_ops`` and ``guard_patches``; ``lint_forms``.
    ``catch_all`` marks the one rule for blocking calls no other rule explains.

    ``fix_patterns`` name the rewrites ``synchunt.fixes`` may tailor to a finding's own line, in the order they
    are tried (``synchunt.fixes.PATTERNS``).
    """

    code: str
    name: str
    title: str
    what_it_does: str
    why_bad: str
    example: str
    use_instead: str
    mechanism: str
    fingerprint: str
    fix: str
    references: tuple[str, ...] = ()
    fix_patterns: tuple[str, ...] = ()
    trace_ops: tuple[TraceOp, ...] = ()
    runtime_calls: tuple[RuntimeCall, ...] = ()
    sync_kinds: tuple[str, ...] = ()
    copy_direction: str | None = None
    guard_ops: tuple[GuardOp, ...] = ()
    guard_patches: tuple[GuardPatch, ...] = ()
    lint_forms: tuple[str, ...] = ()
    catch_all: bool = False

    @property
    def kind(self) -> Kind:
        return Kind.of_code(self.code)

    @property
    def series(self) -> str:
        return self.kind.series + "xx"

    @property
    def has_static_form(self) -> bool:
        return bool(self.lint_forms)

    @property
    def stages(self) -> tuple[str, ...]:
        """The stages that can catch this rule: ``trace``, ``guard``, ``lint`` (what the docs say)."""
        found = []
        if self.trace_ops or self.runtime_calls or self.sync_kinds or self.catch_all:
            found.append("trace")
        if self.guard_ops or any(p.effect is PatchEffect.REPORT for p in self.guard_patches) or self.catch_all:
            found.append("guard")
        if self.lint_forms:
            found.append("lint")
        return tuple(found)

    @property
    def latent_in_traces(self) -> bool:
        """Whether a CPU-only trace can show this rule (as a latent sync)."""
        return any(op.latent and op.role is not OpRole.COPY for op in self.trace_ops)
