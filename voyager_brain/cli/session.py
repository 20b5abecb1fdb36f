"""`init`, `status`, `add`, `compact`: the session brain (brain.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..session.model import ENTRY_TYPES
from ..session.reports import add_entry, status_report
from .common import (
    UserError,
    cli,
    json_option,
    manager_for,
    print_json,
    relative,
)

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
    entries = data["entries"]
    kinds = ", ".join(f"{entries[t]} {t}" for t in ENTRY_TYPES if entries[t])
    rows = [
        ("brain", relative(bm.path) + ("" if data["exists"] else " (not created yet)")),
        ("project", data["project"]),
        ("branch", data["branch"] or "(detached or unknown)"),
        (
            "size",
            f"{data['size_bytes']:,} bytes, ~{data['tokens']:,} tokens of the "
            f"{data['budget_tokens']:,}-token compaction budget ({data['budget_used']:.0%})",
        ),
        ("entries", f"{entries['total']}" + (f" ({kinds})" if kinds else "")),
        ("updated", data["last_updated"] or "never"),
        ("compacted", data["last_compaction"] or "never"),
        (
            "git",
            "uncommitted: " + ", ".join(data["uncommitted"])
            if data["uncommitted"]
            else "brain files committed",
        ),
    ]
    st = data["state"]
    counts = st["counts"]
    rows += [
        (
            "state",
            relative(Path(st["path"]))
            + (f", {st['session_count']} sessions" if st["exists"] else " (not created yet)"),
        ),
        (
            "sections",
            f"{counts['decisions']} decisions, {counts['known_issues']} known issues, "
            f"{counts['key_files']} key files, {counts['stack'] + counts['custom_facts']} "
            f"facts, {counts['next_steps']} next steps",
        ),
        ("goal", st["current_goal"] or "(none)"),
        ("blockers", "; ".join(st["blockers"]) or "none"),
    ]
    if st["missing_key_files"]:
        rows.append(
            ("missing", "key files not in the working tree: " + ", ".join(st["missing_key_files"]))
        )
    if data["ignored_keys"]:
        path = relative(Path(data["ignored_keys"][0].rsplit(": ", 1)[0]))
        keys = ", ".join(entry.rsplit(": ", 1)[1] for entry in data["ignored_keys"])
        rows.append(("ignored", f"{keys} in {path} (not trusted; `voyager-brain trust`)"))
    for name, value in rows:
        click.echo(f"{name:<10} {value}")


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
