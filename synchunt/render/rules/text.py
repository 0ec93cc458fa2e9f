"""The catalogue for a terminal: a table of rules, or one rule's page."""

from __future__ import annotations

from collections.abc import Sequence

from synchunt.render.registry import Renderer, RenderOptions
from synchunt.render.rules.markdown import rule_markdown
from synchunt.render.text import to_text
from synchunt.rules import RULES, Rule


def render_text(rules: Sequence[Rule], options: RenderOptions | None = None) -> str:
    options = options or RenderOptions()
    if len(rules) == 1 and len(RULES) > 1:
        return rule_markdown(rules[0]) + "\n"
    from rich.table import Table
    from rich.text import Text

    table = Table(title="synchunt rules")
    for column in ("code", "name", "kind", "caught by", "what it does"):
        table.add_column(column, overflow="fold")
    for rule in rules:
        table.add_row(Text(rule.code), Text(rule.name), Text(rule.kind.value), Text(", ".join(rule.stages)),
                      Text(rule.what_it_does))
    return to_text(table, options)


RENDERER = Renderer("text", ".txt", "a table of rules, or one rule's page", render_text, machine=False)
