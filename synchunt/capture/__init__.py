"""Capture: run a target under torch.profiler and save a trace that says what it cannot say itself."""

from synchunt.capture.options import parse_extra_options
from synchunt.capture.profiler import Capture, CaptureSettings, capture
from synchunt.capture.registry import ENTRY_POINT_GROUP, get_workload, registered_workloads
from synchunt.capture.targets import Target, resolve_target
from synchunt.capture.workload import Workload

__all__ = ["ENTRY_POINT_GROUP", "Capture", "CaptureSettings", "Target", "Workload", "capture", "get_workload",
           "parse_extra_options", "registered_workloads", "resolve_target"]
