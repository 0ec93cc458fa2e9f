"""Tailored fixes: the user's own syncing expression rewritten with the user's own names, the one condition under
which the rewrite is equivalent, and whether a check confirmed it.

- ``tailor(rule, source, line, column=None, check=False)`` → the :class:`Rewrite` for one sync, or ``None``
- ``tailor_findings(findings, read, check=False)`` → the findings with ``fix`` set where a pattern fits
- ``plan_fixes(...)`` / ``apply_edits(...)`` → what ``synchunt lint --fix`` writes (``synchunt.fixes.apply``)
- ``PATTERNS`` → the rewrite patterns by name, as the rule catalogue names them (``Rule.fix_patterns``)

When checking happens: tailoring reads syntax only (no torch) and runs with every lint; a rewrite is *checked*
(torch imported, the original and the rewrite run on generated inputs that satisfy the condition, the rewrite's
syncs counted under the runtime guard) only when asked: ``check=True``, which ``synchunt lint --fix``,
``--fix-diff`` and ``--check-fixes`` pass. Checks are cached per recipe (pattern, expression, inputs).
"""

from __future__ import annotations

from synchunt.findings import Edit, Rewrite, Safety
from synchunt.fixes.patterns import PATTERNS, Pattern
from synchunt.fixes.tailor import finish, propose, tailor, tailor_findings

__all__ = ["PATTERNS", "Edit", "Pattern", "Rewrite", "Safety", "finish", "propose", "tailor", "tailor_findings"]
