"""Capture: run a target under torch.profiler and save a trace that says what it cannot say itself."""

from synchunt.capture.profiler import Capture, CaptureSettings, capture
from synchunt.capture.targets import Target, parse_extra_options, resolve_target

__all__ = ["Capture", "CaptureSettings", "Target", "capture", "parse_extra_options", "resolve_target"]
