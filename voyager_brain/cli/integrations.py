"""`hook claude EVENT` and `install claude`: the agents' side."""

from __future__ import annotations

from pathlib import Path

import click

from .. import repo
from ..errors import NotInRepositoryError
from .common import (
    cli,
    start_folder,
)

# -- agent integrations: hook, install ------------------------------------------------


@cli.group()
def hook() -> None:
    """Hook commands that agents call (they never fail the agent: exit 0, one line on
    stderr when something is wrong)."""


@hook.command(name="claude")
@click.argument(
    "event",
    type=click.Choice(
        [
            "session-start",
            "stop",
            "pre-compact",
            "session-end",
            "pre-tool-use",
            "post-tool-use",
            "post-tool-use-failure",
            "user-prompt-submit",
        ]
    ),
)
def hook_claude(event: str) -> None:
    """Claude Code hooks, reading the hook's JSON on stdin.

    \b
    session-start          load; print the context as additionalContext
    stop                   record a loop_status entry for the turn
    pre-compact            compact brain.md
    session-end            persist; count the session in brain.json; commit the
                           brain files when config.toml says auto_commit = true
    pre-tool-use           check the call against the guard rules: deny (block),
                           warn, or nothing; record it in history.db
    post-tool-use          record the tool's result
    post-tool-use-failure  record the tool's failure
    user-prompt-submit     record the user's message
    """
    from ..integrations.claude import run

    raise SystemExit(run(event))


@cli.group()
def install() -> None:
    """Install voyager-brain into an agent's settings, or into git."""


@install.command(name="claude")
@click.option("--user", is_flag=True, help="Into ~/.claude/settings.json instead of the project's.")
@click.option("--uninstall", is_flag=True, help="Remove voyager-brain's hooks (and only those).")
@click.pass_context
def install_claude(ctx: click.Context, user: bool, uninstall: bool) -> None:
    """Add the lifecycle hooks to .claude/settings.json (merged, idempotent)."""
    from ..integrations.claude_install import install_claude_hooks

    if user:
        path = Path.home() / ".claude" / "settings.json"
    else:
        start = start_folder(ctx)
        top = repo.find_top(start)
        if top is None:
            raise NotInRepositoryError(start.absolute())
        path = top / ".claude" / "settings.json"
    changed = install_claude_hooks(path, uninstall=uninstall)
    verb = "removed from" if uninstall else "installed in"
    if changed:
        click.echo(f"voyager-brain hooks {verb} {path}")
    else:
        click.echo(f"{path} already {'has no' if uninstall else 'has the'} voyager-brain hooks")
