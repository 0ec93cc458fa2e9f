"""From a finding's location to its tailored rewrite: find the node, try the rule's patterns, check the result;
and the same for a whole set of findings (each file parsed once).

The rule catalogue says which patterns may serve a rule (``Rule.fix_patterns``, tried in order). A pattern
whose check fails is never offered: a rewrite that differs from the user's code on inputs that satisfy its own
condition is wrong, not conditional.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable, Iterable

from synchunt.findings import Finding, Rewrite
from synchunt.fixes.model import Proposal
from synchunt.fixes.patterns import PATTERNS, Site
from synchunt.fixes.source import Module
from synchunt.rules import RULES_BY_CODE


def propose(rule: str, module: Module, line: int, column: int | None = None) -> Proposal | None:
    """The first proposal of ``rule``'s patterns for the node at ``line`` (and ``column``, 1-based characters,
    when known: the node that starts there; else every node on the line, outermost first)."""
    known = RULES_BY_CODE.get(rule)
    if known is None or not known.fix_patterns:
        return None
    starting = _nodes_at(module, line, column)
    # A line inside a statement that starts above it (the runtime line of a call split over lines): then the
    # nodes that span it.
    for candidates in (starting, None):
        if candidates is None:
            if column is not None and starting:
                return None
            candidates = module.spanning(line)
        for name in known.fix_patterns:
            registered = PATTERNS[name]
            for node in candidates:
                if isinstance(node, registered.triggers):
                    proposal = registered.build(Site(module, node, rule))
                    if proposal is not None:
                        return proposal  # type: ignore[return-value]
    return None


def tailor(rule: str, source: str, line: int, *, column: int | None = None, check: bool = False) -> Rewrite | None:
    """The rewrite tailored to the sync of ``rule`` at ``line`` of ``source``, or ``None`` when no pattern fits.

    With ``check=True`` the rewrite is checked (importing torch; see ``synchunt.fixes.check``): a rewrite that
    fails is dropped, one that cannot be checked comes back with ``checked=False`` and the reason in ``check``.
    """
    module = Module.parse(source)
    if module is None:
        return None
    proposal = propose(rule, module, line, column)
    return None if proposal is None else finish(proposal, check=check)


def finish(proposal: Proposal, *, check: bool) -> Rewrite | None:
    """The proposal as a rewrite: checked when asked (``None`` when the check fails)."""
    if not check:
        return proposal.rewrite()
    if proposal.check is None:
        return proposal.rewrite(note=f"not checked: {proposal.unchecked}")
    from synchunt.fixes.check import run_check

    result = run_check(proposal.check)
    if result.status == "failed":
        return None
    return proposal.rewrite(checked=result.status == "passed", note=result.note)


def _nodes_at(module: Module, line: int, column: int | None) -> list[ast.AST]:
    """The nodes that start at ``column`` of ``line`` when some do, else every node starting on the line,
    outermost first."""
    on_line = sorted(module.nodes_on(line), key=lambda node: (node.col_offset, -_size(node)))  # type: ignore[attr-defined]
    if column is not None:
        exact = [node for node in on_line if module.column(line, node.col_offset) == column]  # type: ignore[attr-defined]
        if exact:
            return exact
    return on_line


def _size(node: ast.AST) -> int:
    end_line = getattr(node, "end_lineno", None) or 0
    return (end_line - node.lineno) * 10_000 + (getattr(node, "end_col_offset", 0) or 0)  # type: ignore[attr-defined]


def tailor_findings(findings: Iterable[Finding], read: Callable[[str], str | None], *,
                    check: bool = False, parsed: dict[str, Module] | None = None) -> list[Finding]:
    """``findings`` with ``fix`` set where a pattern fits. ``read(path)`` returns a file's text (``None``:
    unreadable, its findings stay as they are); ``parsed`` holds modules already parsed, by path
    (``Module.of(text, tree)`` with the lint's own tree saves the second parse). A rewrite whose check fails is
    not attached."""
    modules: dict[str, Module | None] = dict(parsed or {})
    result = []
    for finding in findings:
        if finding.is_problem or finding.fix is not None:
            result.append(finding)
            continue
        if finding.path not in modules:
            text = read(finding.path)
            modules[finding.path] = Module.parse(text) if text is not None else None
        module = modules[finding.path]
        proposal = propose(finding.code, module, finding.line, finding.column) if module is not None else None
        rewrite = finish(proposal, check=check) if proposal is not None else None
        result.append(dataclasses.replace(finding, fix=rewrite) if rewrite is not None else finding)
    return result
