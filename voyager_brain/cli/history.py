"""`history ...`: the SQLite history of agent sessions (seed 003): importing agents'
session transcripts, and reading sessions, their messages and tool calls, and the rules that
fired."""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .. import repo
from ..config import load_config
from ..errors import BrainError, HistoryError
from .common import cli, json_option, print_json, say_error, start_folder
from .plain import relative

if TYPE_CHECKING:
    from ..guard.transcript import ImportReport

#: Files at least this big show their progress on a terminal.
PROGRESS_BYTES = 8 * 1024 * 1024
#: How much of a message `history show` prints.
SHOWN_LINES = 3
SHOWN_WIDTH = 100
#: The input keys that say best what a call did, most telling first.
SUMMARY_KEYS = ("command", "file_path", "notebook_path", "pattern", "url", "query", "path")


@cli.group()
def history() -> None:
    """The history of agent sessions in ~/.voyager/history.db: sessions, their messages
    and tool calls, and the guard rules that fired."""


def _db() -> sqlite3.Connection:
    """history.db, with the hooks' queued writes written first (`guard.spool`): what a
    history command shows is all that happened."""
    from ..guard.db import connect
    from ..guard.spool import drain

    db = connect()
    for problem in drain()[1]:
        say_error(problem)
    return db


# -- import -----------------------------------------------------------------------------


def _files(paths: tuple[Path, ...]) -> list[Path | BrainError]:
    """The transcripts to import, in order: a folder gives its .jsonl files (and its
    subagents') and Gemini CLI's older session-*.json recordings, sorted; a folder
    without any is an error in its place."""
    found: list[Path | BrainError] = []
    for path in paths:
        if path.is_dir():
            inside = sorted({*path.rglob("*.jsonl"), *path.rglob("session-*.json")})
            found.extend(inside or [HistoryError(f"{path}: no .jsonl transcripts in this folder")])
        else:
            found.append(path)
    return found


def _progress(path: Path) -> Callable[[int, int], None] | None:
    """A progress line on stderr for a big file, when stderr is a terminal."""
    if not sys.stderr.isatty():
        return None
    try:
        if path.stat().st_size < PROGRESS_BYTES:
            return None
    except OSError:
        return None

    def show(done: int, total: int) -> None:
        end = "\n" if done >= total else ""
        click.echo(f"\r{relative(path)}: {done * 100 // max(total, 1)}%{end}", err=True, nl=False)

    return show


def _report_line(path: Path, report: ImportReport) -> str:
    if report.session is None:
        where = "no session (nothing to import)"
    else:
        where = f"session {report.session} ({report.session_external_id})"
    return (
        f"{relative(path)}: {where}: "
        f"+{report.messages_added} messages ({report.messages_adopted} from hooks), "
        f"+{report.tool_calls_added} tool calls ({report.tool_calls_adopted} from hooks), "
        f"{report.results_recorded} results; {report.entries_known} already imported, "
        f"{report.entries_skipped} skipped, {report.bad_lines} bad lines"
    )


@history.command(name="import")
@click.argument(
    "transcripts", nargs=-1, required=True, metavar="TRANSCRIPT...", type=click.Path(path_type=Path)
)
@json_option
@click.pass_context
def import_command(ctx: click.Context, transcripts: tuple[Path, ...], as_json: bool) -> None:
    """Import agents' session transcripts into the history.

    TRANSCRIPT is a session's file, or a folder of them: Claude Code's
    (~/.claude/projects/<folder>/<id>.jsonl), Codex's rollouts
    (~/.codex/sessions/.../rollout-*.jsonl), Gemini CLI's chat recordings
    (~/.gemini/tmp/<project>/chats/session-*.jsonl or .json), Copilot CLI's
    (~/.copilot/session-state/<id>/events.jsonl), Cursor's agent transcripts
    (.jsonl, or .txt named one by one). Each prompt and assistant turn becomes a message,
    each tool call a row with its result; the session is filed under the repository
    its entries ran in. Importing again adds only what is new, and rows the hooks
    already wrote are completed rather than written twice. Tool outputs are redacted
    and cut to tool_output_limit bytes (config.toml of the repository this runs in,
    else the personal one). Prints one line per file with what it added; a file that
    cannot be read is one line on stderr, the others are still imported, and the
    exit code is 2.
    """
    from ..guard.transcript import import_transcript

    top = repo.find_top(start_folder(ctx))
    limit = load_config(top / ".voyager" if top else None).tool_output_limit
    db = _db()
    reports = []
    failed = False
    for path in _files(transcripts):
        if isinstance(path, BrainError):
            say_error(str(path))
            failed = True
            continue
        try:
            report = import_transcript(db, str(path), output_limit=limit, progress=_progress(path))
        except BrainError as exc:
            say_error(str(exc))
            failed = True
            continue
        reports.append(report.to_dict())
        if not as_json:
            click.echo(_report_line(path, report))
    if as_json:
        print_json(reports)
    if failed:
        ctx.exit(2)


# -- reading the history ----------------------------------------------------------------


@history.command(name="sessions")
@click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    help="Only the sessions of this project (any folder inside it).",
)
@click.option("--limit", type=click.IntRange(min=1), metavar="N", help="At most N sessions.")
@json_option
def sessions_command(project: Path | None, limit: int | None, as_json: bool) -> None:
    """The sessions in the history, newest first.

    Per session: its row id (what `history show` takes, as does the agent's session
    id), when it started, its status, its project, how many messages and tool calls it
    has and how many times a guard rule fired, and its task (the first prompt).
    """
    from ..guard.queries import sessions
    from ..guard.record import project_root

    path = project_root(str(project)) if project is not None else None
    rows = sessions(_db(), project_path=path, limit=limit)
    if as_json:
        print_json(rows)
        return
    if not rows:
        click.echo(f"no sessions for {path}" if path else "no sessions in the history")
        return
    header = ("ID", "STARTED", "STATUS", "PROJECT", "MSGS", "CALLS", "RULES", "TASK")
    table = [header] + [
        (
            str(r["id"]),
            str(r["started_at"] or "")[:16],
            str(r["status"] or ""),
            str(r["project_name"] or r["project_path"]),
            str(r["message_count"]),
            str(r["tool_call_count"]),
            str(r["trigger_count"]),
            _one_line(r["task"] or "", 60),
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    numeric = {0, 4, 5, 6}
    for row in table:
        cells = [
            cell.rjust(width) if i in numeric else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=False))
        ]
        click.echo("  ".join([*cells, row[-1]]).rstrip())


def _one_line(text: str, width: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _summary(tool_input: str | None, width: int = 80) -> str:
    """One line saying what a call was asked to do: its most telling argument (the
    command, the file, the pattern), else its arguments as JSON."""
    try:
        value = json.loads(tool_input) if tool_input else None
    except (ValueError, RecursionError):  # RecursionError: nested too deeply to read
        return _one_line(tool_input or "", width)
    if isinstance(value, dict):
        for key in SUMMARY_KEYS:
            given = value.get(key)
            if isinstance(given, str) and given:
                if key.endswith("path") and len(given) > width:
                    return "…" + given[-(width - 1) :]  # a path's end names the file
                return _one_line(given, width)
    if value is None or value == {}:
        return ""
    return _one_line(json.dumps(value, ensure_ascii=False), width)


def _outcome(call: dict[str, Any]) -> str:
    if call["output"] is None:
        return "no result"
    return "ok" if call["success"] else "failed"


def _session_line(session: dict[str, Any]) -> str:
    ended = f" -> {session['ended_at']}" if session["ended_at"] else ""
    return (
        f"session {session['id']} ({session['external_id']}), "
        f"{session['project_name']} ({session['project_path']}), "
        f"{session['started_at']}{ended}, {session['status']}"
    )


@history.command(name="show")
@click.argument("session")
@json_option
def show_command(session: str, as_json: bool) -> None:
    """A session's messages with their tool calls and the rules that fired.

    SESSION is a row id from `history sessions` or the agent's session id (or its
    start). Per message: its time, who wrote it and its first lines; under it each
    tool call, with the tool, what it was asked (the command, the file, the pattern),
    whether it succeeded, and each guard rule that fired on it with the action taken.
    --json gives every column, whole.
    """
    from ..guard.queries import find_session, session_history

    db = _db()
    found = find_session(db, session)
    messages = session_history(db, found["id"])
    if as_json:
        print_json({"session": found, "messages": messages})
        return
    click.echo(_session_line(found))
    if found["task"]:
        click.echo(f"task: {found['task']}")
    day = ""
    for message in messages:
        stamp = str(message["timestamp"] or "")
        if stamp[:10] != day:
            day = stamp[:10]
            click.echo(f"\n{day}")
        lines = (message["content"] or "").strip().splitlines() or [""]
        shown = [_one_line(line, SHOWN_WIDTH) for line in lines[:SHOWN_LINES]]
        if len(lines) > SHOWN_LINES:
            shown.append(f"… ({len(lines) - SHOWN_LINES} more lines)")
        click.echo(f"{stamp[11:19]}  {message['role']:<9}  {shown[0]}".rstrip())
        for line in shown[1:]:
            click.echo(f"{'':21}{line}".rstrip())
        for call in message["tool_calls"]:
            summary = _summary(call["input"])
            click.echo(f"{'':21}-> {call['tool']}  {summary}  [{_outcome(call)}]")
            for trigger in call["triggers"]:
                click.echo(
                    f"{'':24}rule {trigger['rule_id']} {trigger['action_taken']}: "
                    f"{_one_line(trigger['description'] or '', SHOWN_WIDTH)}"
                )


@history.command(name="triggers")
@click.argument("session")
@json_option
def triggers_command(session: str, as_json: bool) -> None:
    """The guard rules that fired in a session, in order.

    SESSION is a row id from `history sessions` or the agent's session id (or its
    start). Per trigger: its time, the action taken (block, warn, log), the rule and
    its description, and the tool call it fired on; for a semantic rule, why it
    matched. --json gives every column.
    """
    from ..guard.queries import find_session, session_triggers

    db = _db()
    found = find_session(db, session)
    triggers = session_triggers(db, found["id"])
    if as_json:
        print_json({"session": found, "triggers": triggers})
        return
    click.echo(_session_line(found))
    if not triggers:
        click.echo("no guard rule fired in this session")
    for trigger in triggers:
        click.echo(
            f"{str(trigger['timestamp'] or '')[:19]}  {trigger['action_taken']:<5}  "
            f"rule {trigger['rule_id']}: {_one_line(trigger['description'] or '', 70)}"
        )
        click.echo(f"{'':21}on {trigger['tool']}  {_summary(trigger['input'])}".rstrip())
        if trigger["llm_reasoning"]:
            click.echo(f"{'':21}why: {_one_line(trigger['llm_reasoning'], SHOWN_WIDTH)}")
