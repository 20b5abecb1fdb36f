"""`rules suggest`: guard rules proposed from what the memory learned."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from .. import repo
from ..errors import RuleError
from .common import json_option, print_json, start_folder
from .rules import project_option, rules

if TYPE_CHECKING:
    from ..guard.suggest import Suggestion

__all__ = ["rules", "rules_suggest"]


@rules.command(name="suggest")
@click.argument("transcript", required=False, type=click.Path(path_type=Path))
@click.option(
    "--accept",
    "numbers",
    type=int,
    multiple=True,
    metavar="N",
    help="Add proposal N as a rule (repeatable; N as numbered without --accept).",
)
@project_option
@json_option
@click.pass_context
def rules_suggest(
    ctx: click.Context,
    transcript: Path | None,
    numbers: tuple[int, ...],
    project: Path | None,
    as_json: bool,
) -> None:
    """Propose guard rules from the user's corrections in TRANSCRIPT (a Claude Code
    transcript: "no, use uv add, never pip install") and from the memory logs (the
    project's and the personal one: learnings, preferences and behaviors that say never,
    don't, or use this instead of that).

    Proposals are numbered and shown, never enforced, until accepted with --accept N,
    which adds them as global rules (a rule from a transcript message records that
    message, importing the transcript into the history when needed). Shell commands
    become Bash regex rules, anything else semantic rules; every proposal warns rather
    than blocks, since it is a guess from English. Proposals like an existing rule are
    left out. With model_command in config.toml the
    model proposes, and the offline heuristic is used when it fails.
    """
    from ..config import load_config
    from ..guard.db import connect
    from ..guard.suggest import accept, suggest

    folder = project if project is not None else start_folder(ctx)
    if not folder.is_dir():
        raise RuleError(f"{folder}: no such folder")
    top = repo.find_top(folder)
    db = connect()
    proposals = suggest(
        db,
        transcript=transcript,
        project_root=folder,
        config=load_config(top / ".voyager" if top else None),
        warn=lambda message: click.echo(f"warning: {message}", err=True),
    )
    wanted = list(dict.fromkeys(numbers))
    for n in wanted:
        if not 1 <= n <= len(proposals):
            raise RuleError(f"--accept {n}: there is no proposal {n} ({len(proposals)} in all)")
    # Checked before any is added: one bad number adds nothing.
    accepted = [(n, accept(db, proposals[n - 1], transcript=transcript)) for n in wanted]
    if as_json:
        print_json(
            {
                "suggestions": [{"number": n, **s.to_dict()} for n, s in enumerate(proposals, 1)],
                "accepted": [{"number": n, **rule.to_dict()} for n, rule in accepted],
            }
        )
        return
    if accepted:
        for n, rule in accepted:
            origin = f" (from message {rule.source_message_id})" if rule.source_message_id else ""
            click.echo(f"proposal {n} added as rule {rule.id}{origin}: {rule.description}")
        return
    if not proposals:
        click.echo("no rules to suggest")
        return
    for n, proposal in enumerate(proposals, 1):
        click.echo(_describe(n, proposal))
    again = f"{transcript} " if transcript is not None else ""
    click.echo(f"Nothing is enforced until accepted: voyager-brain rules suggest {again}--accept N")


def _describe(number: int, proposal: Suggestion) -> str:
    what = f"/{proposal.pattern}/" if proposal.pattern else "semantic"
    lines = [
        f"{number}. {proposal.description}",
        f"   {proposal.action}  {proposal.tool or 'every tool'}  {what}",
    ]
    if proposal.problem:
        lines.append(f"   problem: {proposal.problem}")
    if proposal.solution:
        lines.append(f"   solution: {proposal.solution}")
    kind = "message" if proposal.source == "transcript" else "entry"
    lines.append(f"   from: {proposal.source} {kind} {proposal.source_id or '(no id)'}")
    return "\n".join(lines)
