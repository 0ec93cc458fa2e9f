"""What a registered workload is: a code path that synchunt profiles, gates and audits by name.

A workload separates set-up (allocation, queued work: never profiled) from one ``step`` (what gets
profiled), so a caller can run ``step`` on a thread it controls, e.g. one that has the profiler started.
Packages register workloads through the ``synchunt.workloads`` entry-point group (see
:mod:`synchunt.capture.registry`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Workload:
    """One registered path.

    ``params`` is a dataclass whose fields (with defaults) are the workload's options; the CLI exposes them
    as ``--field-name VALUE``. ``variant_field`` names the field that switches between the syncing code and
    its sync-free rewrite; ``variants`` maps the roles ``"bad"``/``"fixed"`` to that field's values.
    ``expected_rules`` lists the rule codes the bad variant is known to trigger.
    """

    name: str
    summary: str
    mirrors: str
    params: type
    setup: Callable[[Any], Any]
    step: Callable[[Any], Any]
    thread_name: str = "scheduler"
    variant_field: str = "variant"
    variants: Mapping[str, str] = field(default_factory=lambda: {"bad": "bad", "fixed": "fixed"})
    expected_rules: tuple[str, ...] = ()
    small: Mapping[str, Any] = field(default_factory=dict)

    def make_params(self, overrides: Mapping[str, Any] | None = None, *, small: bool = False) -> Any:
        """Build the params dataclass from defaults, the small preset (if asked) and ``overrides``."""
        values: dict[str, Any] = dict(self.small) if small else {}
        values.update(overrides or {})
        known = {f.name for f in dataclasses.fields(self.params)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"workload {self.name!r} has no option(s) {', '.join(unknown)}; "
                             f"known: {', '.join(sorted(known))}")
        return self.params(**values)

    def run_once(self, params: Any) -> Any:
        """Set up and run one step on the calling thread; returns the step's result."""
        return self.step(self.setup(params))
