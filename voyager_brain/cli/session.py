"""`init`, `status`, `add`, `compact`: the session brain (brain.md)."""

from __future__ import annotations

import sys

import click

from ..session.model import ENTRY_TYPES
from ..session.reports import add_entry, status_report
from .common import UserError, cli, json_option, manager_for, print_json
from .plain import relative, status_text

# -- init ---------------------------------------------------------------------------------


@cli.command()
@click.pass_context
def init(ctx: click.Context) -> None:
    """Create .voyager/ at the top of this git repository.

    Writes brain.md (the session brain), brain.json (the project state, every field
    empty), config.toml (every setting, commented, with its default) and a .gitignore for
    local files (locks, cache). Existing files are kept.
    """
    from ..session.manager import ensure_layout

    bm = manager_for(ctx)
    missing = [p for p in (bm.path, bm.state_path) if not p.exists()]
    created = ensure_layout(bm.voyager_dir)
    bm.load()
    if missing:
        bm.persist()
        created[:0] = missing
    for path in created:
        click.echo(f"created {relative(path)}")
    if not created:
        click.echo(f"{relative(bm.voyager_dir)} is already set up; nothing to do")
    else:
        click.echo(f"project: {bm.project}")
        click.echo(
            "next: voyager-brain add observation 'what you noticed', then voyager-brain status"
        )
    from ..git import setup as gitsetup

    if not gitsetup.status(bm.top).registered:
        click.echo(
            "hint: run voyager-brain install git, so that git merges the brain files "
            "instead of conflicting"
        )


# -- status -------------------------------------------------------------------------------


@cli.command()
@json_option
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Show the session brain: size against the budget, entries, git state."""
    bm = manager_for(ctx)
    data = status_report(bm)
    if as_json:
        print_json(data)
        return
    click.echo(status_text(bm, data), nl=False)


# -- add ----------------------------------------------------------------------------------


@cli.command()
@click.argument("entry_type", metavar="TYPE", type=click.Choice(ENTRY_TYPES))
@click.argument("text")
@click.option("--source", help="Who wrote the entry (an agent, a hook, a person).")
@json_option
@click.pass_context
def add(ctx: click.Context, entry_type: str, text: str, source: str | None, as_json: bool) -> None:
    """Add an entry to brain.md and save it.

    TYPE is observation, decision, loop_status or reflection. TEXT is the entry's
    markdown; `-` reads it from standard input. Secrets in it are redacted.
    """
    if text == "-":
        text = sys.stdin.read()
    if not text.strip():
        raise UserError("TEXT is empty; give the entry's text, or - to read it from stdin")
    bm = manager_for(ctx)
    done = add_entry(bm, entry_type, text, source)
    if as_json:
        print_json(done.to_dict())
        return
    entry = done.entry
    if not done.added:
        click.echo(f"already in {relative(bm.path)}: the same {entry_type} at the same second")
        return
    redacted = entry.content.count("[REDACTED:") - text.count("[REDACTED:")
    note = f" ({redacted} secret{'s' * (redacted != 1)} redacted)" if redacted > 0 else ""
    click.echo(f"added {entry.type} {entry.key[1]} to {relative(bm.path)}{note}")


# -- compact ------------------------------------------------------------------------------


@cli.command()
@json_option
@click.pass_context
def compact(ctx: click.Context, as_json: bool) -> None:
    """Summarize and prune brain.md until it fits the token budget.

    Keeps every decision and the newest loop status, drops duplicate observations, and
    folds the oldest observations and reflections into one summary reflection.
    """
    bm = manager_for(ctx)
    bm.load()
    report = bm.compact()
    if as_json:
        print_json(report.to_dict())
        return
    where = relative(bm.path)
    if not report.changed:
        click.echo(
            f"nothing to compact: {report.entries_after} entries, ~{report.tokens_after:,} "
            f"tokens, budget {report.budget_tokens:,}"
        )
        return
    click.echo(
        f"compacted {where}: {report.entries_before} -> {report.entries_after} entries, "
        f"~{report.tokens_before:,} -> ~{report.tokens_after:,} tokens "
        f"(budget {report.budget_tokens:,})"
    )
    click.echo(f"  kept        {report.kept}")
    click.echo(f"  merged      {report.merged} duplicate observations")
    click.echo(f"  superseded  {report.superseded} older loop statuses")
    if report.summary is not None:
        click.echo(f"  summarized  {report.summarized} entries into 1 reflection")
    if not report.fits:
        click.echo(
            "  still over budget: decisions, the summary and the newest loop status are "
            "never dropped; raise compact_budget_tokens in .voyager/config.toml"
        )
