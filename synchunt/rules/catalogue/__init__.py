"""The rule catalogue: one entry per sync pattern, by series.

The trace detector, the runtime guard, the static lint, the generated docs, SARIF and the reports all read
these entries; adding a rule means adding one entry here (plus its fixtures), nothing else.
"""

from __future__ import annotations

from synchunt.rules.catalogue.checks import CHECK_RULES
from synchunt.rules.catalogue.copies import COPY_RULES
from synchunt.rules.catalogue.libraries import LIBRARY_RULES
from synchunt.rules.catalogue.reads import READ_RULES
from synchunt.rules.catalogue.syncs import SYNC_RULES
from synchunt.rules.model import Rule

RULES: tuple[Rule, ...] = tuple(sorted((*READ_RULES, *CHECK_RULES, *LIBRARY_RULES, *COPY_RULES, *SYNC_RULES),
                                       key=lambda rule: rule.code))

__all__ = ["RULES"]
