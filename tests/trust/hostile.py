"""The hostile-input corpus of issue 12: every family of malformed or hostile input, generated from a seed.

``all_cases(seed)`` returns the full corpus (≥ 2,000 cases); ``sample(cases)`` the fast, deterministic subset the
default test suite runs. A case's inputs are written when it runs (``Case.build``), so generating the list is
cheap and nothing big is committed. Run the corpus with ``scripts/hostile_corpus.py``.
"""

from __future__ import annotations

import random
from collections import defaultdict

import hostile_fam_bytes
import hostile_fam_contract
import hostile_fam_fields
import hostile_fam_files
import hostile_fam_forged
import hostile_fam_lint
import hostile_fam_names
import hostile_fam_shapes
import hostile_fam_text
import hostile_fam_verdict
from hostile_case import Case

DEFAULT_SEED = 12
FAMILY_MODULES = (hostile_fam_bytes, hostile_fam_fields, hostile_fam_shapes, hostile_fam_text, hostile_fam_names,
                  hostile_fam_forged, hostile_fam_files, hostile_fam_lint, hostile_fam_verdict, hostile_fam_contract)


def all_cases(seed: int = DEFAULT_SEED) -> list[Case]:
    """Every case, in a stable order; the same seed gives the same cases and the same bytes."""
    cases: list[Case] = []
    for module in FAMILY_MODULES:
        cases.extend(module.cases(random.Random(f"{seed}:{module.__name__}")))
    ids = [case.id for case in cases]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"duplicate case ids: {duplicates[:5]}")
    return cases


def families(cases: list[Case]) -> list[str]:
    return list(dict.fromkeys(case.family for case in cases))


def kind_of(case: Case) -> str:
    """``family/name`` without the variant after ``@`` (``truncation/chain-cut@1234/analyze-json`` → ``chain-cut``)."""
    return case.id.split("/")[1].split("@")[0]


def sample(cases: list[Case], *, per_family: int = 10, seed: int = DEFAULT_SEED) -> list[Case]:
    """A deterministic subset across every family: the first light case of each kind (see :func:`kind_of`),
    then seeded picks, at most ``per_family`` per family."""
    by_family: dict[str, list[Case]] = defaultdict(list)
    for case in cases:
        if not case.heavy:
            by_family[case.family].append(case)
    chosen: list[Case] = []
    rng = random.Random(seed)
    for members in by_family.values():
        kinds: dict[str, Case] = {}
        for case in members:
            kinds.setdefault(kind_of(case), case)
        firsts = list(kinds.values())
        picks = firsts if len(firsts) <= per_family else rng.sample(firsts, per_family)
        rest = [case for case in members if case not in picks]
        picks = picks + rng.sample(rest, min(len(rest), max(0, per_family - len(picks))))
        chosen += sorted(picks, key=members.index)
    return chosen
