"""`recall`: one search over every store, best matches first."""

from __future__ import annotations

import click

from ..context.recall import MAX_LIMIT
from ..session.manager import recall_anywhere
from .common import UserError, cli, json_option, print_json, start_folder
from .plain import recall_text


@cli.command()
@click.argument("query", nargs=-1)
@click.option(
    "--limit",
    type=click.IntRange(1, MAX_LIMIT),
    default=10,
    show_default=True,
    help="How many matches to show.",
)
@json_option
@click.pass_context
def recall(ctx: click.Context, query: tuple[str, ...], limit: int, as_json: bool) -> None:
    """Search brain.md, brain.json and both memory logs for QUERY at once.

    Finds brain.md entries and compaction summaries, brain.json's decisions, known
    issues, key files, facts, preferences, active state and next steps, and the
    project's and your personal memory entries. Best matches first (BM25; items with
    every word before items with some; the newer first on a tie), each with its store,
    kind, id or key, date and a one-line excerpt. The index is kept in
    .voyager/cache/recall.sqlite and brought up to date when a store changed. Outside a
    repository it searches your personal memory log alone.
    """
    text = " ".join(query)
    if not text.strip():
        raise UserError("query: empty; give the words to look for")
    # Outside a repository, the personal log alone: it needs none.
    hits = recall_anywhere(start_folder(ctx), text, limit)
    if as_json:
        print_json({"query": text, "results": [hit.to_dict() for hit in hits]})
        return
    click.echo(recall_text(text, hits), nl=False)
