"""Latent syncs: catalogue ops in a CPU-only trace that would sync on a GPU."""

from __future__ import annotations

import numpy as np

from synchunt.detect.columns import Columns
from synchunt.detect.conditions import holds
from synchunt.detect.merge import Candidate, merge_by_anchor
from synchunt.detect.resolve import is_not_sync, resolve
from synchunt.rules.index import latent_op_names, trace_ops_named
from synchunt.trace import Trace, vocab


def latent_syncs(trace: Trace, columns: Columns) -> list[Candidate]:
    concrete = trace.values("concrete_inputs")
    latent = latent_op_names()
    ops = np.flatnonzero(columns.in_categories((vocab.CPU_OP,)) & columns.named(latent.__contains__))
    candidates: dict[int, Candidate] = {}
    for i in ops.tolist():
        name = columns.names[i]
        chain = columns.chain(i)
        enclosing = columns.op_names(chain)
        if is_not_sync(name, enclosing):
            continue
        matching = [p for p, _ in trace_ops_named(name) if p.latent and (p.under is None or p.under in enclosing)]
        if not any(holds(p.when, concrete[i]) for p in matching):
            continue
        rule, under = resolve(name, enclosing, latent_only=True)
        if rule is None:
            continue
        anchor = next((a for a in chain if columns.names[a] == under), -1) if under else -1
        candidates[i] = Candidate(event=i, rule=rule.code, confirmed=False, op=name, runtime=[], runtime_events=[],
                                  ts_us=float(columns.ts[i]), stall_us=float(columns.dur[i]),
                                  stall_source="op cpu time (latent)", direction=None, anchor=anchor)
    # A catalogue op that encloses another candidate is explained by it (count the innermost only).
    enclosing_candidates = {a for i in candidates for a in columns.chain(i)}
    return merge_by_anchor([c for i, c in candidates.items() if i not in enclosing_candidates])
