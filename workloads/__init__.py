"""Real code paths that synchunt runs, profiles and audits.

Installed as ``synchunt_workloads`` (the repository keeps them in ``workloads/``) and registered in the
``synchunt.workloads`` entry-point group, so synchunt finds them without importing this package by name.
"""

from synchunt.capture.workload import Workload

__all__ = ["Workload"]
