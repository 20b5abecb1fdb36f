"""`rules ...`: guard rules checked before every tool call (seed 003)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ..errors import RuleError
from .common import cli, json_option, print_json, say_error, start_folder
from .plain import rule_line


@cli.group()
def rules() -> None:
    """Guard rules: regex or semantic rules that block, warn or log an agent's tool
    calls, grouped in rule sets assigned to projects (kept in ~/.voyager/history.db)."""


def _db() -> Any:
    from ..guard.db import connect

    return connect()


def _project(ctx: click.Context, given: Path | None) -> str:
    """The project a command is about: --project, else the repository (or folder) the
    command runs in."""
    from ..guard.rules import project_folder

    return project_folder(given if given is not None else start_folder(ctx))


project_option = click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The project's folder (default: the repository this runs in).",
)


@rules.command(name="add")
@click.option("--pattern", default=None, help="A Python regex (makes a regex rule).")
@click.option(
    "--type",
    "rule_type",
    type=click.Choice(["regex", "semantic"]),
    default=None,
    help="regex (with --pattern) or semantic (matches the description by meaning).",
)
@click.option(
    "--description", required=True, help="What the rule is for (semantic: the text matched)."
)
@click.option(
    "--action", type=click.Choice(["block", "warn", "log"]), default="block", show_default=True
)
@click.option(
    "--tool", default=None, help="Only this tool (Bash, Write, Edit, ...); default every tool."
)
@click.option(
    "--priority", type=int, default=0, show_default=True, help="Higher comes first in reasons."
)
@click.option("--problem", default=None, help="The problem the rule prevents (told to the agent).")
@click.option("--solution", default=None, help="What to do instead (told to the agent).")
@click.option("--set", "rule_set", default=None, help="Add to this rule set (default: global).")
@json_option
def rules_add(
    pattern: str | None,
    rule_type: str | None,
    description: str,
    action: str,
    tool: str | None,
    priority: int,
    problem: str | None,
    solution: str | None,
    rule_set: str | None,
    as_json: bool,
) -> None:
    """Add a rule and print its id."""
    from ..guard.rules import PatternOnSemanticRule, add_given_rule

    try:
        rule = add_given_rule(
            description=description,
            pattern=pattern,
            type=rule_type,
            action=action,
            tool=tool,
            priority=priority,
            problem=problem,
            solution=solution,
            rule_set=rule_set,
        )
    except PatternOnSemanticRule:
        raise RuleError(
            "--pattern: a semantic rule matches its description; drop --pattern"
        ) from None
    from ..guard.patterns import timed_notes

    for line in timed_notes([rule]):
        say_error(line)
    if as_json:
        print_json(rule.to_dict())
    else:
        click.echo(rule.id)


@rules.command(name="list")
@project_option
@click.option("--all", "show_all", is_flag=True, help="Include disabled rules.")
@json_option
@click.pass_context
def rules_list(ctx: click.Context, project: Path | None, show_all: bool, as_json: bool) -> None:
    """List rules: every rule, or with --project the ones that apply there (its rule
    set's and the global ones)."""
    from ..guard.rules import list_rules

    db = _db()
    path = _project(ctx, project) if project is not None else None
    found = list_rules(db, project=path, include_inactive=show_all)
    if as_json:
        print_json([r.to_dict() for r in found])
        return
    if not found:
        click.echo("no rules" + (" apply to " + path if path else ""))
        return
    for rule in found:
        click.echo(rule_line(rule))


@rules.command(name="show")
@click.argument("rule_id", type=int)
@json_option
def rules_show(rule_id: int, as_json: bool) -> None:
    """Show one rule, its rule set and how often it fired."""
    from ..guard.rules import get_rule, trigger_count

    db = _db()
    rule = get_rule(db, rule_id)
    data = rule.to_dict()
    data["rule_set"] = None
    if rule.rule_set_id is not None:
        row = db.execute("SELECT name FROM rule_sets WHERE id = ?", (rule.rule_set_id,)).fetchone()
        data["rule_set"] = row[0] if row else None
    data["triggers"] = trigger_count(db, rule_id)
    if as_json:
        print_json(data)
        return
    for key, value in data.items():
        if value is not None:
            click.echo(f"{key + ':':<18} {value}")


@rules.command(name="edit")
@click.argument("rule_id", type=int)
@click.option("--description", default=None, help="What the rule is for (semantic: the text).")
@click.option(
    "--pattern",
    "patterns",
    multiple=True,
    help="Replace the rule's regexes. Once: one regex, case-sensitive. Again for more: any"
    " one matching, ignoring case (stored as Causeway stores them, in `patterns`).",
)
@click.option("--action", type=click.Choice(["block", "warn", "log"]), default=None)
@click.option("--tool", default=None, help="Only this tool (Bash, Write, Edit, ...).")
@click.option("--every-tool", is_flag=True, help="Every tool (drops --tool's limit).")
@click.option("--priority", type=int, default=None, help="Higher comes first in reasons.")
@click.option("--problem", default=None, help="The problem the rule prevents ('' drops it).")
@click.option("--solution", default=None, help="What to do instead ('' drops it).")
@json_option
def rules_edit(
    rule_id: int, patterns: tuple[str, ...], every_tool: bool, as_json: bool, **given: Any
) -> None:
    """Change a rule in place: its id, rule set and history stay. A rule from a
    project's .voyager/rules.toml is changed in that file."""
    from ..guard.patterns import timed_notes
    from ..guard.rules import edit_rule

    if every_tool and given["tool"] is not None:
        raise RuleError("--tool and --every-tool: give one of them")
    changes = {k: (v or None if k in ("problem", "solution") else v) for k, v in given.items()}
    changes = {k: v for k, v in changes.items() if given[k] is not None}
    if every_tool:
        changes["tool"] = None
    if not changes and not patterns:
        raise RuleError(
            "nothing to change: give --description, --pattern, --action, --tool,"
            " --every-tool, --priority, --problem or --solution"
        )
    rule = edit_rule(_db(), rule_id, patterns=patterns or None, **changes)
    for line in timed_notes([rule]):
        say_error(line)
    if as_json:
        print_json(rule.to_dict())
    else:
        click.echo(rule_line(rule))


def _set_active(rule_id: int, active: bool) -> None:
    from ..guard.rules import set_active

    rule = set_active(_db(), rule_id, active)
    click.echo(f"rule {rule.id} {'enabled' if active else 'disabled'}: {rule.description}")


@rules.command(name="enable")
@click.argument("rule_id", type=int)
def rules_enable(rule_id: int) -> None:
    """Enable a rule: it is checked again before every tool call."""
    _set_active(rule_id, True)


@rules.command(name="disable")
@click.argument("rule_id", type=int)
def rules_disable(rule_id: int) -> None:
    """Disable a rule (it stays, with its history)."""
    _set_active(rule_id, False)


@rules.command(name="remove")
@click.argument("rule_id", type=int)
def rules_remove(rule_id: int) -> None:
    """Remove a rule; one that has fired is disabled instead, so the history stays whole."""
    from ..guard.rules import remove_rule

    if remove_rule(_db(), rule_id) == "removed":
        click.echo(f"rule {rule_id} removed")
    else:
        click.echo(f"rule {rule_id} has fired before: disabled instead of removed")


@rules.command(name="test")
@click.option("--tool", required=True, help="The tool name (Bash, Write, Edit, mcp__x__y ...).")
@click.option("--input", "tool_input", required=True, help="The tool's input as a JSON object.")
@project_option
@click.option(
    "--embedder",
    type=click.Choice(["lexical", "minilm"]),
    default=None,
    help="Match semantic rules with this embedder (default: the config's `embedder`;"
    " hooks always match lexically). minilm needs the voyager-brain[semantic] extra.",
)
@json_option
@click.pass_context
def rules_test(
    ctx: click.Context,
    tool: str,
    tool_input: str,
    project: Path | None,
    embedder: str | None,
    as_json: bool,
) -> None:
    """Run the pre-tool-use check on a call without recording anything: the decision
    and every matching rule."""
    from ..guard.dryrun import dry_run

    try:
        value = json.loads(tool_input)
    except json.JSONDecodeError as exc:
        raise RuleError(f"--input: not valid JSON ({exc.msg} at position {exc.pos})") from None
    except RecursionError:  # the decoder recurses once per level of nesting
        raise RuleError("--input: nested too deeply to read; expected a flatter object") from None
    if not isinstance(value, dict):
        raise RuleError("--input: expected a JSON object (the tool's input)")
    run = dry_run(_project(ctx, project), tool, value, embedder=embedder)
    for problem in run.problems:
        say_error(problem)
    if as_json:
        print_json(run.to_dict())
        return
    click.echo(f"decision: {run.decision.action}")
    for m in run.decision.matches:
        click.echo(rule_line(m.rule) + (f"  ({m.reasoning})" if m.reasoning else ""))
    if run.reason is not None:
        click.echo("")
        click.echo(run.reason)


@rules.command(name="sync")
@project_option
@click.pass_context
def rules_sync(ctx: click.Context, project: Path | None) -> None:
    """Load the project's .voyager/rules.toml now (hooks do it when the file changes)."""
    from ..guard.teamrules import FILE, sync_team_rules

    path = _project(ctx, project)
    if not (Path(path) / FILE).is_file():
        raise RuleError(f"{Path(path) / FILE}: no such file")
    from ..guard.patterns import timed_notes
    from ..guard.rules import list_rules

    db = _db()
    problems = sync_team_rules(db, path, force=True)
    for problem in problems:
        say_error(problem)
    for line in timed_notes(list_rules(db, project=path)):
        say_error(line)
    click.echo(f"synced {Path(path) / FILE}")
    if problems:
        raise SystemExit(2)


@rules.command(name="origin")
@click.argument("rule_id", type=int)
@json_option
def rules_origin(rule_id: int, as_json: bool) -> None:
    """Which message created a rule, and in which session's task."""
    from ..guard.queries import rule_origin

    found = rule_origin(_db(), rule_id)
    if as_json:
        print_json(found)
        return
    if found is None:
        click.echo(f"rule {rule_id} was not created from a message")
        return
    click.echo(f"rule {rule_id}: {found['description']}")
    click.echo(f"session task: {found.get('task') or '(none)'}")
    click.echo(f"message: {found.get('content') or ''}")


# -- rule sets ----------------------------------------------------------------------------


@rules.group(name="set")
def rule_set() -> None:
    """Rule sets: groups of rules assigned to projects."""


@rule_set.command(name="create")
@click.argument("name")
@click.option("--description", default=None, help="What the set is for.")
def rule_set_create(name: str, description: str | None) -> None:
    """Create a rule set (give it to a project with `rules set assign`)."""
    from ..guard.rules import create_rule_set

    set_id = create_rule_set(_db(), name, description)
    click.echo(f"rule set {name} created (id {set_id})")


@rule_set.command(name="assign")
@click.argument("name")
@project_option
@click.pass_context
def rule_set_assign(ctx: click.Context, name: str, project: Path | None) -> None:
    """Assign a rule set to a project (its rules then apply there, with the global ones)."""
    from ..guard.rules import assign_rule_set

    path = _project(ctx, project)
    assign_rule_set(_db(), name, path)
    click.echo(f"rule set {name} assigned to {path}")


@rule_set.command(name="list")
@json_option
def rule_set_list(as_json: bool) -> None:
    """List rule sets, their rule counts and projects."""
    from ..guard.rules import list_rule_sets

    sets = list_rule_sets(_db())
    if as_json:
        print_json(sets)
        return
    for item in sets:
        projects = ", ".join(item["projects"]) or "no project"
        click.echo(f"{item['name']}: {item['rules']} rules; {projects}")
