"""How detection reads a trace: from runtime evidence, as what would sync on a GPU, or by the trace's content.

A leaf (it imports nothing of synchunt) so that the command line's options and detection share one definition
without the CLI loading the analysis."""

from __future__ import annotations

from enum import Enum


class Mode(str, Enum):
    AUTO = "auto"  # confirmed when the trace has device activity, else latent
    CONFIRMED = "confirmed"  # runtime evidence: blocking calls and device activity
    LATENT = "latent"  # ops that would sync on a GPU, from a CPU trace
