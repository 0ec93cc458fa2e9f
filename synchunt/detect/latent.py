"""Latent syncs: catalogue ops in a CPU-only trace that would sync on a GPU."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from synchunt.detect.columns import Columns
from synchunt.detect.conditions import holds
from synchunt.detect.merge import Candidate, merge_by_anchor
from synchunt.detect.resolve import is_not_sync, resolve
from synchunt.rules import Rule
from synchunt.rules.index import latent_op_names, trace_ops_named
from synchunt.trace import Trace, vocab


def latent_syncs(trace: Trace, columns: Columns) -> list[Candidate]:
    concrete = trace.table.coded("concrete_inputs")
    latent = latent_op_names()
    ops = np.flatnonzero(columns.in_categories((vocab.CPU_OP,)) & columns.named(latent.__contains__))
    chains = columns.chains(ops)
    verdicts = cache(_verdict)  # per trace: each distinct chain of op names is judged once
    candidates: dict[int, Candidate] = {}
    for i, chain, along in zip(ops.tolist(), chains, columns.along(chains), strict=True):
        name = columns.names[i]
        enclosing = tuple(n for n, c in along if c == vocab.CPU_OP)
        verdict = verdicts(name, enclosing)
        if verdict is None:
            continue
        conditions, rule, under = verdict
        if None not in conditions:  # every matching pattern has a condition on the recorded arguments
            code = int(concrete.codes[i])
            recorded: Any = concrete.vocabulary[code] if code >= 0 else np.nan
            if not any(holds(when, recorded) for when in conditions):
                continue
        anchor = next((a for a, (n, _) in zip(chain, along, strict=True) if n == under), -1) if under else -1
        candidates[i] = Candidate(event=i, rule=rule.code, confirmed=False, op=name, runtime=[], runtime_events=[],
                                  ts_us=float(columns.ts[i]), stall_us=float(columns.dur[i]),
                                  stall_source="op cpu time (latent)", direction=None, anchor=anchor)
    # A catalogue op that encloses another candidate is explained by it (count the innermost only).
    enclosing_candidates = {a for i, chain in zip(ops.tolist(), chains, strict=True) if i in candidates
                            for a in chain}
    return merge_by_anchor([c for i, c in candidates.items() if i not in enclosing_candidates])


def _verdict(name: str, enclosing: tuple[str, ...]) -> tuple[tuple[str | None, ...], Rule, str | None] | None:
    """For an op under these enclosing ops (innermost first): the conditions of its matching latent patterns
    (``None``: unconditional), its rule and the op it is charged to; ``None`` when it is no latent sync there.
    Depends on names only."""
    if is_not_sync(name, enclosing):
        return None
    conditions = tuple(p.when for p, _ in trace_ops_named(name)
                       if p.latent and (p.under is None or p.under in enclosing))
    if not conditions:
        return None
    rule, under = resolve(name, enclosing, latent_only=True)
    if rule is None:
        return None
    return conditions, rule, under
