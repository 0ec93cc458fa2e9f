"""`synchunt rules` and `synchunt workloads`: what synchunt knows and what it can run."""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated

import typer

from synchunt.cli.app import ForceOpt, OutputOpt, app
from synchunt.cli.output import console, emit, format_choices
from synchunt.errors import UsageError
from synchunt.render.rules import RULE_FORMATS

RulesFormat = format_choices(RULE_FORMATS)


@app.command("rules")
def rules_command(
    code: Annotated[str | None, typer.Argument(help="Show one rule (e.g. SH101).")] = None,
    output_format: Annotated[RulesFormat, typer.Option(  # type: ignore[valid-type]
        "--format", "-f", help="text, markdown or json.")] = RulesFormat(RULE_FORMATS.default),  # noqa: B008
    output: OutputOpt = None,
    force: ForceOpt = False,
) -> None:
    """List the sync rules (the catalogue every detector reads), or show one."""
    from synchunt.rules import RULES, get_rule

    try:
        chosen = [get_rule(code.upper())] if code else list(RULES)
    except KeyError as error:
        raise UsageError(str(error.args[0])) from None
    emit(RULE_FORMATS, output_format.value, chosen, output, force=force)


@app.command("workloads")
def workloads_command(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable listing.")] = False,
) -> None:
    """List the registered workloads (paths synchunt can profile, gate and audit) and their options."""
    from rich.table import Table
    from rich.text import Text

    from synchunt.capture import ENTRY_POINT_GROUP, registered_workloads

    table_data = []
    registered = registered_workloads()
    if not registered and not as_json:
        console(stderr=True).print(f"no workloads are registered: packages register them in the "
                                   f"{ENTRY_POINT_GROUP!r} entry-point group (the repository's workloads/ folder "
                                   "installs as synchunt_workloads)", highlight=False)
        return
    for workload in registered.values():
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
