"""`save`, `show`, `import rho|llm-brain`: the project state (brain.json) and bringing
other tools' files in."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..session.manager import BrainManager
from ..session.reports import save_state
from .common import (
    UserError,
    cli,
    json_option,
    manager_for,
    print_json,
    read_named_file,
    start_folder,
)

# -- project state: save, show, import ----------------------------------------------


def _read_json(source: str, label: str) -> Any:
    """JSON from a file path or `-` (stdin), as one clear error when it is not JSON."""
    from ..jsonfile import JSONTextError
    from ..jsonfile import loads as read_json

    if source == "-":
        data, where = sys.stdin.buffer.read(), "stdin"
    else:
        data, where = read_named_file(source), source
    try:
        return read_json(data)
    except JSONTextError as exc:
        at = f"{where}:{exc.line}" if exc.line is not None else where
        # Bytes that are not UTF-8 say already what was expected: a JSON text file.
        detail = exc.detail if "; expected " in exc.detail else f"{exc.detail}; expected {label}"
        raise UserError(f"{at}: {detail}") from None


def _save_update(
    bm: BrainManager, update: Any, unknown: list[str], as_json: bool, extra: dict[str, Any]
) -> None:
    """Merge `update` into brain.json, write it, and print what changed."""
    saved = save_state(bm, update, unknown)
    if as_json:
        print_json({**saved.to_dict(), **extra})
        return
    for path in unknown:
        click.echo(f"note: {path} is not a field of brain.json; kept as given", err=True)
    for change in saved.changes:
        click.echo(change.describe())
    if not saved.changes:
        click.echo("no changes")


@cli.command()
@click.argument("source", metavar="[FILE|-]", default="-")
@json_option
@click.pass_context
def save(ctx: click.Context, source: str, as_json: bool) -> None:
    """Merge a partial brain.json into the project state and save it.

    FILE (or stdin, `-`, the default) holds a JSON object with any subset of brain.json's
    fields. They are merged by the per-field rules (facts.stack grows, decisions are
    upserted by `what`, nextSteps is replaced, ...), validated, and written to
    .voyager/brain.json; then the changes are printed. This is what an agent or a
    script calls at the end of a session.
    """
    from ..state.validate import validate as validate_state

    update = _read_json(source, "a JSON object with brain.json fields")
    where = "stdin" if source == "-" else source
    unknown = validate_state(update, where)
    _save_update(manager_for(ctx), update, unknown, as_json, {})


SECTIONS = {
    "facts": "facts",
    "decisions": "decisions",
    "active": "activeState",
    "activeState": "activeState",
    "keyFiles": "keyFiles",
    "files": "keyFiles",
    "knownIssues": "knownIssues",
    "issues": "knownIssues",
    "preferences": "preferences",
    "nextSteps": "nextSteps",
    "next": "nextSteps",
}


@cli.command()
@click.argument("section", required=False, type=click.Choice(sorted(SECTIONS)))
@json_option
@click.pass_context
def show(ctx: click.Context, section: str | None, as_json: bool) -> None:
    """Print the project state (brain.json) readably.

    SECTION limits it to one part: facts, decisions, active, files, issues, preferences
    or next (or the field's own name, e.g. knownIssues).
    """
    from ..state.show import render_state

    bm = manager_for(ctx)
    data = bm.state.data
    field = SECTIONS[section] if section else None
    if as_json:
        print_json(data[field] if field else data)
        return
    click.echo(render_state(data, field), nl=False)


@cli.group(name="import")
def import_() -> None:
    """Bring memory from another tool into this repository's brain."""


@import_.command(name="rho")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@json_option
@click.pass_context
def import_rho(ctx: click.Context, path: Path, as_json: bool) -> None:
    """Bring an existing rho brain.jsonl into the personal memory log.

    Every valid line is appended (the fold applies its updates and tombstones as the
    original tool did); lines already in the personal log are skipped, bad lines are
    counted and left out.
    """
    from ..memory import log
    from ..memory.store import PERSONAL, MemoryStore

    entries, health = log.read(path)
    store = MemoryStore(start_folder(ctx))
    with store.exclusive():  # what is already there is read and added to under the lock
        have = {log.encode(e) for e in log.read(store.personal)[0]}
        fresh = [e for e in entries if log.encode(e) not in have]
        for n, entry in enumerate(fresh):
            log.validate(entry, f"{path}: entry {n + 1}")
        if fresh:
            store.write(fresh, PERSONAL)
    report = {
        "imported": len(fresh),
        "already_present": len(entries) - len(fresh),
        "bad_lines": health.bad_lines,
        "into": str(store.personal),
    }
    if as_json:
        print_json(report)
    else:
        click.echo(
            f"imported {report['imported']} lines into {report['into']} "
            f"({report['already_present']} already there, {report['bad_lines']} bad lines "
            "left out)"
        )


@import_.command(name="llm-brain")
@click.argument("path", required=False, type=click.Path(dir_okay=True, path_type=Path))
@json_option
@click.pass_context
def import_llm_brain(ctx: click.Context, path: Path | None, as_json: bool) -> None:
    """Merge an llm-brain state file (same schema) into .voyager/brain.json.

    PATH is the file, or a folder holding .llm-brain/brain.json; default: the repository's
    own .llm-brain/brain.json. Its fields are merged by the same rules as `save` (and
    count as one save); its version, project name, lastUpdated and sessionCount are not
    copied.
    """
    from ..state import brainjson as project_state

    bm = manager_for(ctx)
    if path is None:
        path = bm.top / ".llm-brain" / "brain.json"
    elif path.is_dir():
        path = (
            path / ".llm-brain" / "brain.json"
            if (path / ".llm-brain").is_dir()
            else path / "brain.json"
        )
    data = read_named_file(path, " (expected an llm-brain brain.json)")
    imported = project_state.loads(data, path)
    update = {
        k: v for k, v in imported.items() if k not in project_state.MANAGED and k != "project"
    }
    _save_update(bm, update, [], as_json, {"imported": str(path)})
