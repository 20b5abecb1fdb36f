"""`context`: the budgeted document injected at session start."""

from __future__ import annotations

import click

from ..session.manager import BrainManager
from .common import (
    cli,
    json_option,
    print_json,
    start_folder,
)

# -- the session-start context -------------------------------------------------------


@cli.command()
@click.option(
    "--budget", type=click.IntRange(min=50), help="Token budget (default: prompt_budget)."
)
@click.option(
    "--explain", is_flag=True, help="List every candidate line, its cost, and why it is in or out."
)
@json_option
@click.pass_context
def context(ctx: click.Context, budget: int | None, explain: bool, as_json: bool) -> None:
    """Print the document injected at session start.

    One budgeted document from the memory logs, brain.json and brain.md: identity and
    user, behavior, preferences, the project state, project context, the session
    brain, what is due, and learnings ranked by score. Must-know lines (the goal,
    blockers, next steps, critical and high issues, the newest loop status, the user's
    rules, what is due, the newest decisions ...) come in before any other; --explain
    marks them. Outside a repository with .voyager/ it holds the personal log alone.
    """
    from ..session.cachedcontext import build_and_cache

    doc = build_and_cache(BrainManager(start_folder(ctx)), budget, explain=explain or as_json)
    if as_json:
        print_json(doc.to_dict())
        return
    if not explain:
        click.echo(doc.text, nl=False)
        return
    for choice in doc.choices:
        mark = "+" if choice.included else "-"
        tier = f"  [must-know: {choice.why}]" if choice.why else ""
        why = "" if choice.reason == "included" else f"  ({choice.reason})"
        click.echo(
            f"{mark} {choice.item.section:<12} ~{choice.tokens:>3} tokens"
            f"  {choice.item.ref}{tier}{why}"
        )
    for note in doc.notes:
        click.echo(f"note: {note}")
    left = ", ".join(f"{section} {n}" for section, n in (doc.left_out or {}).items())
    click.echo(
        f"total: ~{doc.tokens} of {doc.budget_tokens} tokens"
        + (f"; left out: {left}" if left else "")
    )
