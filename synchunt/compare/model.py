"""The comparison model: two analyses side by side, per call site, op and scope, with what changed."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Side:
    threads: tuple[str, ...]  # the threads that synced
    syncs: int
    confirmed: int
    latent: int
    stall_us: float
    max_stall_us: float
    traces: tuple[str, ...]
    labels: tuple[str, ...]
    device_idle_us: float | None = None  # None: unknown (no device activity)


@dataclass(frozen=True)
class SiteDelta:
    """One call site on both sides. ``after_site`` differs from ``site`` when the site moved to another line of
    the same function (an edit above it), or is the only label when the site is new."""

    site: str
    after_site: str | None
    before: int
    after: int
    before_stall_us: float
    after_stall_us: float
    rules: tuple[str, ...]
    ops_before: tuple[str, ...]
    ops_after: tuple[str, ...]
    before_idle_us: float | None = None
    after_idle_us: float | None = None

    @property
    def delta(self) -> int:
        return self.after - self.before

    @property
    def stall_saved_us(self) -> float:
        return self.before_stall_us - self.after_stall_us

    @property
    def status(self) -> str:
        if self.before and not self.after:
            return "gone"
        if self.after and not self.before:
            return "new"
        return "fewer" if self.delta < 0 else "more" if self.delta > 0 else "same"


@dataclass(frozen=True)
class CountDelta:
    key: str
    before: int
    after: int


@dataclass(frozen=True)
class Noise:
    """When a stall difference is timing jitter, not a change.

    Within ``max(absolute_us, fraction × before, measured_us)``: the floor the user set, and ``measured_us``, the
    noise measured from the traces' repeats (profiler steps). ``stall_judged`` is false when the stall cannot
    decide anything: latent traces, whose "stall" is the ops' CPU time on this machine, compare by counts alone.
    ``basis`` says in words how it was decided."""

    absolute_us: float = 50.0
    fraction: float = 0.10
    measured_us: float | None = None
    stall_judged: bool = True
    basis: str = ""

    def threshold(self, before_us: float) -> float:
        return max(self.absolute_us, self.fraction * before_us, self.measured_us or 0.0)

    def allows(self, before_us: float, after_us: float) -> bool:
        return not self.stall_judged or abs(after_us - before_us) <= self.threshold(before_us)


@dataclass(frozen=True)
class Comparison:
    before: Side
    after: Side
    sites: tuple[SiteDelta, ...]
    ops: tuple[CountDelta, ...]
    scopes: tuple[CountDelta, ...]
    noise: Noise = Noise()

    @property
    def stall_saved_us(self) -> float:
        return self.before.stall_us - self.after.stall_us

    @property
    def ops_gone(self) -> tuple[str, ...]:
        return tuple(o.key for o in self.ops if o.before and not o.after)

    @property
    def ops_new(self) -> tuple[str, ...]:
        return tuple(o.key for o in self.ops if o.after and not o.before)

    @property
    def new_sites(self) -> tuple[SiteDelta, ...]:
        return tuple(s for s in self.sites if s.status == "new")

    @property
    def worse(self) -> bool:
        """New call sites or more syncs at a site: what ``--fail-on-new`` fails on."""
        return any(s.status in ("new", "more") for s in self.sites)

    @property
    def stall_within_noise(self) -> bool:
        return self.noise.allows(self.before.stall_us, self.after.stall_us)

    @property
    def changed(self) -> bool:
        """Any site's count changed, or (where the stall is judged) the total stall moved beyond the noise."""
        return any(s.status != "same" for s in self.sites) or not self.stall_within_noise
