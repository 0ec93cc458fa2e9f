"""What a pattern proposes before it is checked: the rewrite's fields and the recipe for checking it.

A :class:`Proposal` becomes the public :class:`~synchunt.findings.Rewrite` once the checker has run (or said why
it could not). A :class:`CheckSpec` is two small programs — the user's code and its rewrite, with the user's
names — and how to feed their free names: generated inputs that satisfy the rewrite's condition.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from synchunt.findings import Edit, Rewrite

Compare = Literal["exact", "close", "number", "raises"]


@dataclass(frozen=True)
class Feed:
    """How to generate one input: ``kind`` names a generator in ``synchunt.fixes.check.feeds``; ``like`` is the
    input it is shaped by or depends on (a mask shaped like ``x``, runs of ``n`` values); ``dtype`` narrows the
    generated dtypes (``"int"``, ``"float"``, ``"bool"``); ``min_size`` keeps generated sizes at or above it;
    ``ndim`` fixes a tensor's number of dimensions (``None``: 1-D and 2-D in turn)."""

    kind: str
    like: str | None = None
    dtype: str | None = None
    min_size: int = 0
    ndim: int | None = None


@dataclass(frozen=True)
class CheckSpec:
    """Two programs to run on the same generated inputs and compare.

    ``original`` and ``rewritten`` are statements; after each runs, the names in ``results`` are compared
    (``compare``: ``exact`` values, dtypes and shapes; ``close`` within float rounding; ``number`` as Python
    numbers, for a rewrite that keeps a value on the device; ``raises``: both raise or neither does, and equal
    results when neither does). ``feeds`` generate the free names (a dotted path such as ``self.n`` builds
    the object); names without one are fed by how the code uses them. ``allowed_syncs`` is how many syncs the
    rewrite may make (one for a read batched after a loop); ``inputs`` describes the generated inputs in a few
    words for the rewrite's ``check`` note. ``setup`` runs before either program, outside the guard (it builds
    inputs the way the user's code does, such as ``counts = torch.bincount(ids)``; its own syncs are not the
    rewrite's).
    """

    original: str
    rewritten: str
    setup: str = ""
    feeds: tuple[tuple[str, Feed], ...] = ()
    results: tuple[str, ...] = ("result",)
    compare: Compare = "exact"
    allowed_syncs: int = 0
    inputs: str = "generated inputs"
    torch_name: str = "torch"


@dataclass(frozen=True)
class Proposal:
    """A tailored rewrite before its check. ``check`` is ``None`` when it cannot be checked
    (``unchecked`` says why: a call the checker cannot feed, a module without torch)."""

    rule: str
    pattern: str
    title: str
    span: tuple[int, int, int, int]
    original: str
    replacement: str
    edits: tuple[Edit, ...]
    condition: str | None
    check: CheckSpec | None
    unchecked: str = ""

    def rewrite(self, *, checked: bool = False, note: str | None = None) -> Rewrite:
        line, column, end_line, end_column = self.span
        return Rewrite(rule=self.rule, pattern=self.pattern, title=self.title, line=line, column=column,
                       end_line=end_line, end_column=end_column, original=self.original,
                       replacement=self.replacement, edits=self.edits, condition=self.condition,
                       safety="safe" if self.condition is None else "conditional", checked=checked,
                       check=note or self.unchecked or "not checked")
