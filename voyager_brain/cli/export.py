"""`voyager-brain export TARGET`: the context, for agents that read a file instead of
running hooks."""

from __future__ import annotations

import click

from ..context.exports import TARGETS, export
from .common import cli, json_option, manager_for, print_json
from .plain import relative


@cli.command("export")
@click.argument("targets", nargs=-1, required=True, type=click.Choice(sorted(TARGETS)))
@click.option(
    "--budget",
    type=click.IntRange(min=1),
    default=None,
    help="Tokens for the context (default: prompt_budget in config.toml).",
)
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when a file is out of date.")
@json_option
def export_command(
    targets: tuple[str, ...], budget: int | None, check: bool, as_json: bool
) -> None:
    """Write the project's memory into the file an agent reads at start.

    \b
    agents-md     AGENTS.md (Codex, Cursor, Copilot and other agents)
    claude-md     CLAUDE.md (Claude Code)
    gemini-md     GEMINI.md (Gemini CLI)
    cursor-rules  .cursor/rules/voyager-brain.mdc (a Cursor rule always applied)

    The context goes between two marker comments; a second export replaces only that
    block, and the rest of the file is never touched. A block whose only change would be
    the date is left as it is. With --check nothing is written, and the exit code is 1
    when some file would change (for CI).
    """
    ctx = click.get_current_context()
    manager = manager_for(ctx)
    context = manager.context(budget)
    done = [export(manager.top, target, context, check=check) for target in targets]
    stale = [d for d in done if d.action != "unchanged"]
    if as_json:
        print_json({"check": check, "exports": [d.to_json() for d in done]})
    else:
        for d in done:
            action = f"would be {d.action}" if check and d.action != "unchanged" else d.action
            click.echo(f"{relative(d.path)}: {action}")
    if check and stale:
        ctx.exit(1)
