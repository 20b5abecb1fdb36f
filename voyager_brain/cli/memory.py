"""`brain action=...` and `memory stats|search|due|extract|migrate|gc`: the typed memory log."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import click

from .. import repo
from .common import (
    UserError,
    cli,
    json_option,
    print_json,
    read_named_file,
    start_folder,
)

# -- the memory log: brain, memory ---------------------------------------------------

_BOOLEAN_PARAMS = ("enabled", "verbose")


def parse_tool_args(args: tuple[str, ...]) -> dict[str, Any]:
    """`key=value` words as the brain tool's parameters: JSON objects and lists parsed
    (the relaxed `{kind:interval,every:6h}` a shell leaves is parsed later, by field),
    true/false for the boolean parameters, everything else as text."""
    words: dict[str, list[str]] = {}
    for arg in args:
        key, sep, value = arg.partition("=")
        if not sep or not key:
            raise UserError(f"{arg!r}: expected key=value, like action=list or type=learning")
        words.setdefault(key, []).append(value)
    params: dict[str, Any] = {}
    for key, values in words.items():
        value = values[-1]
        if len(values) > 1 and all(re.fullmatch(r"\w+:\S+", v) for v in values):
            # bash brace-expands an unquoted cadence={kind:interval,every:6h} into
            # cadence=kind:interval cadence=every:6h; put the object back together.
            value = "{" + ",".join(values) + "}"
        parsed: Any = value
        if value[:1] in ("{", "["):
            try:
                parsed = json.loads(value)
            except (json.JSONDecodeError, RecursionError):  # not JSON (or too deep): text
                parsed = value
        elif key in _BOOLEAN_PARAMS and value.lower() in ("true", "false"):
            parsed = value.lower() == "true"
        params[key] = parsed
    return params


@cli.command(context_settings={"ignore_unknown_options": True})
@click.argument("args", nargs=-1, required=True, metavar="action=ACTION [KEY=VALUE]...")
@json_option
@click.pass_context
def brain(ctx: click.Context, args: tuple[str, ...], as_json: bool) -> None:
    """The memory log's brain tool: add, update, remove, list, decay, task_done,
    task_clear, reminder_run.

    \b
    voyager-brain brain action=add type=learning text="This repo uses pnpm not npm"
    voyager-brain brain action=add type=task description="Fix CI" priority=high tags=code,ci
    voyager-brain brain action=list type=learning verbose=true
    voyager-brain brain action=remove id=a1b2c3d4 reason="No longer accurate"
    """
    from ..memory.tool import brain_tool

    params = parse_tool_args(args)
    action = params.pop("action", None)
    if not isinstance(action, str):
        raise UserError("action=... is required (add, update, remove, list, decay, ...)")
    result = brain_tool(action, cwd=str(start_folder(ctx)), **params)
    if as_json:
        print_json(result)
    else:
        click.echo(result["message"])


@cli.group()
def memory() -> None:
    """The memory logs: stats, search, gc."""


@memory.command()
@json_option
@click.pass_context
def stats(ctx: click.Context, as_json: bool) -> None:
    """Counts by type (🧠 5L 3P 2T 1R | 11beh 2id 1usr) and each log's health."""
    from ..memory.store import MemoryStore

    store = MemoryStore(start_folder(ctx))
    snapshot = store.snapshot()
    counts = {
        t: len(snapshot.state.live(t))
        for t in (
            "learning",
            "preference",
            "task",
            "reminder",
            "behavior",
            "identity",
            "user",
            "context",
            "meta",
        )
    }
    line = (
        f"🧠 {counts['learning']}L {counts['preference']}P {counts['task']}T "
        f"{counts['reminder']}R | {counts['behavior']}beh {counts['identity']}id "
        f"{counts['user']}usr"
    )
    logs = {
        name: {"path": str(store.path_of(name)), **health.to_dict()}
        for name, health in snapshot.health.items()
    }
    if as_json:
        print_json({"summary": line, "counts": counts, "logs": logs})
        return
    click.echo(line)
    for name, info in logs.items():
        tail = ", torn last line" if info["truncated_tail"] else ""
        lines = f"{info['total']} line" + ("" if info["total"] == 1 else "s")
        click.echo(f"{name}: {info['path']}: {lines} read, {info['bad_lines']} bad{tail}")


@memory.command()
@click.argument("query")
@json_option
@click.pass_context
def search(ctx: click.Context, query: str, as_json: bool) -> None:
    """Entries of both logs whose text contains QUERY (case-insensitive)."""
    from ..memory.tool import brain_tool

    result = brain_tool("list", cwd=str(start_folder(ctx)), query=query)
    if as_json:
        print_json(result)
    else:
        click.echo(result["message"])


@memory.command()
@json_option
@click.pass_context
def due(ctx: click.Context, as_json: bool) -> None:
    """Reminders that are due, and pending tasks that are overdue or urgent."""
    from datetime import UTC, datetime

    from ..memory import schedule
    from ..memory.store import MemoryStore

    store = MemoryStore(start_folder(ctx))
    snapshot = store.snapshot()
    now = datetime.now(UTC)
    reminders = [r for r in snapshot.state.live("reminder") if schedule.is_due(r, now)]
    tasks = [
        t
        for t in snapshot.state.live("task")
        if schedule.matches_filter(t, "pending")
        and (t.get("priority") == "urgent" or schedule.is_overdue(t, now))
    ]
    if as_json:
        print_json({"reminders": reminders, "tasks": tasks})
        return
    for r in reminders:
        click.echo(f"reminder {r['id']}: {r['text']} (due {r.get('next_due') or 'now'})")
    for t in tasks:
        why = "urgent" if t.get("priority") == "urgent" else f"overdue since {t.get('due')}"
        click.echo(f"task {t['id']}: {t['description']} ({why})")
    if not reminders and not tasks:
        click.echo("nothing due")


@memory.command()
@click.argument("transcript", required=False)
@json_option
@click.pass_context
def extract(ctx: click.Context, transcript: str | None, as_json: bool) -> None:
    """Store up to 3 learnings or preferences found in a conversation.

    TRANSCRIPT is a Claude Code transcript (JSON lines) or plain text; without it, or
    with `-`, stdin is read. Offline it takes explicit statements ("we use ...",
    "always ...", "never ...", "prefer ..."); with model_command in config.toml the
    model proposes them. Off when auto_memory is false, VOYAGER_AUTO_MEMORY=0 or
    VOYAGER_SUBAGENT=1.
    """
    from ..config import load_config
    from ..memory.extract import enabled
    from ..memory.extract import extract as run_extract
    from ..providers import get_provider

    start = start_folder(ctx)
    top = repo.find_top(start)
    config = load_config(top / ".voyager" if top else None)
    named = None if transcript in (None, "-") else read_named_file(str(transcript))
    if not enabled(config):
        click.echo("auto-memory is off (auto_memory, VOYAGER_AUTO_MEMORY or VOYAGER_SUBAGENT)")
        return
    text = sys.stdin.read() if named is None else named.decode("utf-8", errors="replace")
    results = run_extract(
        text,
        cwd=str(start),
        config=config,
        provider=get_provider(config),
        warn=lambda message: click.echo(f"warning: {message}", err=True),
    )
    if as_json:
        print_json(results)
        return
    for result in results:
        click.echo(result["message"])
    if not results:
        click.echo("nothing to remember")


@memory.command()
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.pass_context
def migrate(ctx: click.Context, folder: Path) -> None:
    """Bring a legacy folder (core.jsonl, memory.jsonl, context.jsonl, tasks.jsonl) into
    the personal log, once; the legacy files are not changed."""
    from ..memory.migrate import migrate as run_migration
    from ..memory.store import MemoryStore

    store = MemoryStore(start_folder(ctx))
    report = run_migration(store, folder)
    click.echo(
        f"migrated {report.imported} entries from {', '.join(report.files)} into "
        f"{store.personal} ({report.bad_lines} lines left out)"
    )


@memory.command()
@click.option(
    "--store",
    type=click.Choice(["personal", "project", "all"]),
    default="all",
    show_default=True,
    help="Which log to rewrite.",
)
@click.pass_context
def gc(ctx: click.Context, store: str) -> None:
    """Rewrite a log as its folded state (atomically, under the lock).

    Superseded lines go; tombstones stay, since other clones may still hold their
    targets. Lines that are not entries (a hand edit gone wrong, a torn line) are moved
    to LOG.rejected beside the log, never dropped. Reports the bytes saved.
    """
    from ..memory import log
    from ..memory.store import MemoryStore

    memory_store = MemoryStore(start_folder(ctx))
    names = ["personal", "project"] if store == "all" else [store]
    for name in names:
        if name == "project" and memory_store.project is None:
            if store == "project":
                raise UserError("no project log here (.voyager/ not found)")
            continue
        path = memory_store.path_of(name)
        before, after, rejected = log.gc(path)
        lines = "1 bad line" if rejected == 1 else f"{rejected:,} bad lines"
        kept = f"; {lines} moved to {path.name}{log.REJECTED}" if rejected else ""
        click.echo(
            f"{name}: {path}: {before:,} -> {after:,} bytes ({before - after:,} saved){kept}"
        )
