"""Sync detection over a parsed trace, driven by the rule catalogue."""

from synchunt.detect.detector import SYNC_COLUMNS, Detection, Mode, detect, effective_mode

__all__ = ["SYNC_COLUMNS", "Detection", "Mode", "detect", "effective_mode"]
