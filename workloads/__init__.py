"""Real code paths that synchunt runs, profiles and audits."""

from workloads.registry import Workload, all_workloads, get_workload

__all__ = ["Workload", "all_workloads", "get_workload"]
