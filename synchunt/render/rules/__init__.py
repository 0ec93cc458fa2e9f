"""Renderers of the rule catalogue: a terminal table (or one rule's page), Markdown, JSON."""

from synchunt.render.registry import Registry

RULE_FORMATS: Registry = Registry("rules", __name__)

__all__ = ["RULE_FORMATS"]
