"""`synchunt rules` and `synchunt workloads`: what synchunt knows and what it can run."""

from __future__ import annotations

import dataclasses
import json
from enum import Enum
from typing import Annotated

import typer

from synchunt.cli.app import OutputOpt, app
from synchunt.cli.output import console, write_text
from synchunt.errors import UsageError


class RulesFormat(str, Enum):
    text = "text"
    markdown = "markdown"
    json = "json"


@app.command("rules")
def rules_command(
    code: Annotated[str | None, typer.Argument(help="Show one rule (e.g. SH101).")] = None,
    output_format: Annotated[RulesFormat, typer.Option("--format", "-f", help="text, markdown or json.")]
    = RulesFormat.text,
    output: OutputOpt = None,
) -> None:
    """List the sync rules (the catalogue every detector reads), or show one."""
    from rich.table import Table
    from rich.text import Text

    from synchunt.rules import RULES, get_rule
    from synchunt.rules.docs import rule_markdown, rules_markdown

    try:
        chosen = [get_rule(code.upper())] if code else list(RULES)
    except KeyError as error:
        raise UsageError(str(error.args[0])) from None
    if output_format is RulesFormat.markdown:
        write_text(rule_markdown(chosen[0]) + "\n" if code else rules_markdown(), output)
    elif output_format is RulesFormat.json:
        data = [{**dataclasses.asdict(r), "kind": r.kind.value} for r in chosen]
        write_text(json.dumps(data, indent=2), output)
    elif code:
        write_text(rule_markdown(chosen[0]), output)
    else:
        table = Table(title="synchunt rules")
        for column in ("code", "name", "kind", "syncs"):
            table.add_column(column, overflow="fold")
        for r in chosen:
            table.add_row(Text(r.code), Text(r.name), Text(r.kind.value), Text(r.what_it_does))
        console().print(table)


@app.command("workloads")
def workloads_command(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable listing.")] = False,
) -> None:
    """List the registered workloads (paths synchunt can profile, gate and audit) and their options."""
    from rich.table import Table
    from rich.text import Text

    from workloads import all_workloads

    table_data = []
    for workload in all_workloads().values():
        options = {f.name.replace("_", "-"): f.default for f in dataclasses.fields(workload.params)}
        table_data.append({"name": workload.name, "summary": workload.summary, "mirrors": workload.mirrors,
                           "variant_option": workload.variant_field.replace("_", "-"),
                           "variants": dict(workload.variants), "expected_rules": list(workload.expected_rules),
                           "options": options})
    if as_json:
        typer.echo(json.dumps(table_data, indent=2, default=str))
        return
    table = Table(title="synchunt workloads", show_lines=True)
    for column in ("name", "mirrors", "variants", "rules", "options"):
        table.add_column(column, overflow="fold")
    for item in table_data:
        variants = f"--{item['variant_option']} " + " | ".join(f"{v} ({k})" for k, v in item["variants"].items())
        options = " ".join(f"--{k} {v}" for k, v in item["options"].items())
        table.add_row(Text(item["name"]), Text(item["mirrors"]), Text(variants),
                      Text(", ".join(item["expected_rules"])), Text(options))
    console().print(table)
