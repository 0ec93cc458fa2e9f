"""The tailored-fix patterns: one builder per pattern name, as the rule catalogue names them (``Rule.fix_patterns``).

A builder looks at the node a finding points to (``Site``) and answers with a :class:`Proposal` built from the
user's own expression, or ``None`` when the code is not of its shape. Each proposal states the one condition
under which it is equivalent and carries the recipe (:class:`CheckSpec`) the checker runs.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from synchunt.findings import Edit
from synchunt.fixes.model import CheckSpec, Proposal
from synchunt.fixes.source import Module


@dataclass(frozen=True)
class Site:
    """Where a finding points: the module, the node, the rule it was found for."""

    module: Module
    node: ast.AST
    rule: str

    @property
    def torch(self) -> str | None:
        return self.module.torch

    def proposal(self, pattern: str, span_node: ast.AST, replacement: str, *, condition: str | None,
                 check: CheckSpec | None, extra: tuple[Edit, ...] = (), unchecked: str = "") -> Proposal:
        """A proposal that replaces ``span_node``'s text with ``replacement`` (plus ``extra`` edits)."""
        registered = PATTERNS[pattern]
        return Proposal(rule=self.rule, pattern=pattern, title=registered.title,
                        span=self.module.span(span_node), original=self.module.segment(span_node),
                        replacement=replacement,
                        edits=tuple(sorted((self.module.replace(span_node, replacement), *extra),
                                           key=lambda edit: (edit.line, edit.column))),
                        condition=condition, check=check,
                        unchecked=unchecked or ("" if check is not None else "cannot check this form"))


Builder = Callable[[Site], "Proposal | None"]


@dataclass(frozen=True)
class Pattern:
    """A rewrite pattern: its name (as rules name it), what it writes (``title``), the node types a finding's
    node may have for it to apply, and when it applies (``doc``, the builder's docstring)."""

    name: str
    title: str
    triggers: tuple[type[ast.AST], ...]
    build: Builder

    @property
    def doc(self) -> str:
        return " ".join((self.build.__doc__ or "").split())


PATTERNS: dict[str, Pattern] = {}


def pattern(name: str, title: str, *triggers: type[ast.AST]) -> Callable[[Builder], Builder]:
    def register(build: Builder) -> Builder:
        if name in PATTERNS:
            raise ValueError(f"fix pattern {name!r} registered twice")
        PATTERNS[name] = Pattern(name, title, triggers, build)
        return build

    return register


from synchunt.fixes.patterns import checks, copies, counts, masks, reads  # noqa: E402  (registers)

__all__ = ["PATTERNS", "Pattern", "Site", "checks", "copies", "counts", "masks", "pattern", "reads"]
