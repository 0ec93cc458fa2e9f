"""The project's ``[tool.synchunt]`` settings applied to what a gate counts, as the lint applies them to findings.

``select``/``ignore`` choose rule codes; ``exclude`` and ``per-file-ignores`` match a sync's call-site file
(relative to the ``pyproject.toml``'s folder). A sync they set aside is not counted, and the gate says how many.
Syncs without a Python frame have no file and are only chosen by code.
"""

from __future__ import annotations

from pathlib import Path

from synchunt.attribute import Analysis, Sync
from synchunt.config import SynchuntConfig


def configured(analysis: Analysis, config: SynchuntConfig) -> tuple[Analysis, int]:
    """The analysis with only the syncs the configuration lets the gate count, and how many it set aside."""
    if config.path is None:
        return analysis, 0
    kept = tuple(sync for sync in analysis.records if _counts(sync, config))
    return analysis.with_records(kept), len(analysis.records) - len(kept)


def _counts(sync: Sync, config: SynchuntConfig) -> bool:
    code = sync.rule
    if config.select and not any(code.startswith(prefix) for prefix in config.select):
        return False
    if any(code.startswith(prefix) for prefix in config.ignore):
        return False
    if sync.call_site is None:
        return True
    path = Path(sync.call_site.file)
    if config.is_excluded(path):
        return False
    return not any(code.startswith(prefix) for prefix in config.ignored_codes(path))
