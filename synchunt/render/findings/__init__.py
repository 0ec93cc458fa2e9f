"""Renderers of a set of findings (the lint's): text, JSON, SARIF, GitHub annotations, JUnit."""

from synchunt.render.registry import Registry

FINDING_FORMATS: Registry = Registry("findings", __name__)

__all__ = ["FINDING_FORMATS"]
