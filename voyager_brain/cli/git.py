"""`diff`, `log`, `blame`, `commit`, `install git` and the hidden `merge-driver`: the brain in
git history."""

from __future__ import annotations

import os
from pathlib import Path

import click

from .common import UserError, cli, json_option, print_json, repository_top, start_folder
from .integrations import install
from .plain import relative

# -- the brain in git: diff, log, blame -------------------------------------------------


@cli.command(name="diff")
@click.argument("rev_range", required=False, metavar="[REV_RANGE]")
@click.argument("rev_to", required=False, metavar="[REV]")
@click.option("--staged", "--cached", is_flag=True, help="Compare the index with HEAD.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
    help="markdown is ready to post as a pull-request comment.",
)
@json_option
@click.option("--exit-code", is_flag=True, help="Exit 1 when something changed, else 0.")
@click.pass_context
def diff_command(
    ctx: click.Context,
    rev_range: str | None,
    rev_to: str | None,
    staged: bool,
    fmt: str,
    as_json: bool,
    exit_code: bool,
) -> None:
    """What changed in the brain files between two versions, by meaning.

    brain.json items added, removed and changed (decisions, key files and known issues
    matched by their merge keys), brain.md entries added, removed, edited and compacted,
    memories added, updated and tombstoned.

    REV_RANGE is A...B (from the merge base of A and B to B), A..B or A B (from A to B),
    or one revision A (against the working tree). Without it: from the merge base with the
    default branch (origin/HEAD, else main, else master) to HEAD; on the default branch
    itself, or with no commits to compare, the working tree against HEAD. --json is
    --format json.
    """
    from ..git.audit import compare_versions
    from ..git.changes import render_markdown, render_text

    if staged and rev_range:
        raise UserError("give REV_RANGE or --staged, not both")
    if rev_to is not None:
        assert rev_range is not None  # click fills the arguments in order
        if ".." in rev_range or ".." in rev_to:
            raise UserError(f"give A..B or A B, not {rev_range} {rev_to}")
        rev_range = f"{rev_range}..{rev_to}"
    result = compare_versions(repository_top(ctx), rev_range, staged=staged)
    if as_json or fmt == "json":
        print_json(result.to_dict())
    elif fmt == "markdown":
        click.echo(render_markdown(result.changes, result.title), nl=False)
    else:
        sides = f"{result.old.describe()} -> {result.new.describe()}"
        # Before the first commit the sides say no more than the title.
        click.echo(result.title if sides == result.title else f"{result.title}: {sides}")
        click.echo(render_text(result.changes), nl=False)
    if exit_code and result.changes:
        ctx.exit(1)


def _repo_path(top: Path, start: Path, path: str) -> str:
    """PATH (relative to where we run) as git names it: relative to the top, with /."""
    full = Path(os.path.abspath(start / path))
    try:
        relative = full.relative_to(top)
    except ValueError:
        raise UserError(f"{path}: outside the repository {top}") from None
    return relative.as_posix() or "."


@cli.command(name="log")
@click.argument("path", required=False)
@click.option("--since", metavar="DATE", help="Only commits after DATE (any date git reads).")
@click.option("--limit", type=click.IntRange(min=1), metavar="N", help="At most N commits.")
@click.option("--grep", metavar="TEXT", help="Only commits whose message contains TEXT.")
@json_option
@click.pass_context
def log_command(
    ctx: click.Context,
    path: str | None,
    since: str | None,
    limit: int | None,
    grep: str | None,
    as_json: bool,
) -> None:
    """The commits that changed the brain, newest first, with what each changed.

    Every commit that touched .voyager/ (or PATH, a file followed through renames, or a
    folder), with its sha, author, date and subject, and a summary of its changes to
    the brain files: +2 decisions, ~1 fact, +5 observations, compacted 40 -> 1 summary,
    +3 learnings, 1 tombstone. A merge shows what it brought to its first parent.
    """
    from ..git.audit import history
    from ..git.changes import kind_of

    top = repository_top(ctx)
    target = _repo_path(top, start_folder(ctx), path) if path else ".voyager"
    follow = path is not None and not (top / target).is_dir()
    with history(top, [target], since=since, limit=limit, grep=grep, follow=follow) as records:
        if as_json:
            print_json([record.to_dict() for record in records])
            return
        for record in records:
            click.echo(record.commit.describe())
            summary = record.changes.summary() or "no change to the brain's content"
            others = [f for f in record.files if kind_of(f) is None]
            if others and not record.changes:
                summary += f" ({', '.join(others)})"
            click.echo(f"    {'merge: ' if record.merge else ''}{summary}")


@cli.command(name="blame")
@click.argument("kind")
@click.argument("key")
@json_option
@click.pass_context
def blame_command(ctx: click.Context, kind: str, key: str, as_json: bool) -> None:
    """Which commit introduced one item of the brain, and which last changed it.

    \b
    KIND and KEY:
      decision    a decision's `what`        blame decision "Use PostgreSQL over MongoDB"
      keyFile     a key file's `path`        blame keyFile src/index.ts
      knownIssue  a known issue's `issue`    blame knownIssue "pg import fails in ESM"
      entry       a brain.md entry's heading or some of its text
                                             blame entry "Observation — 2026-03-21T14:30:00Z"
      memory      a memory entry's id        blame memory 9ee01cf1
    """
    from ..git.blame import blame

    result = blame(repository_top(ctx), kind, key)
    if as_json:
        print_json(result.to_dict())
        return
    click.echo(result.render_text(), nl=False)


@cli.command(name="commit")
@json_option
@click.pass_context
def commit_command(ctx: click.Context, as_json: bool) -> None:
    """Commit the brain files, and only them, with a message that says what changed.

    brain.md, brain.json and memory.jsonl are committed with `git commit --only`: other
    staged work stays staged. Nothing is committed during a merge, rebase, cherry-pick
    or revert, or when the brain files have no changes. The message reads like
    `brain: session 12 (+3 observations, +1 decision)`. The session-end hook does the
    same when config.toml says auto_commit = true.
    """
    from ..git.autocommit import commit_brain_files

    result = commit_brain_files(repository_top(ctx))
    if as_json:
        print_json(result.to_dict())
    elif result.sha is None:
        click.echo(f"nothing committed: {result.skipped}")
    else:
        click.echo(f"[{result.sha[:8]}] {result.message}")
        click.echo(f"committed {', '.join(result.files)}")


# -- git ----------------------------------------------------------------------------------


@cli.command(name="merge-driver", hidden=True)
@click.argument("base")
@click.argument("ours")
@click.argument("theirs")
@click.argument("path")
def merge_driver(base: str, ours: str, theirs: str, path: str) -> None:
    """git's merge driver for the brain files (git runs it; `install git` registers it).

    BASE, OURS and THEIRS are the three versions git hands over (%O %A %B); the merged
    file is written over OURS. PATH (%P) is the file's path in the repository; its name
    picks the merge: brain.md, brain.json or memory.jsonl. Never writes conflict markers.
    Exits 1, leaving OURS untouched and git's conflict for a person, when a version
    cannot be read.
    """
    from ..git.merge import run_driver

    raise SystemExit(run_driver([base, ours, theirs, path]))


@install.command(name="git")
@click.option(
    "--uninstall", is_flag=True, help="Remove the driver's lines and git config (and only those)."
)
@click.pass_context
def install_git(ctx: click.Context, uninstall: bool) -> None:
    """Register the merge driver for the brain files with git (merged, idempotent).

    Adds `merge=voyager-brain` lines for .voyager/brain.md, brain.json and memory.jsonl
    to .gitattributes (commit it: every clone needs it), and sets
    merge.voyager-brain.name and merge.voyager-brain.driver in this clone's own git
    config (run this once in every clone). git then runs `voyager-brain merge-driver`
    from the PATH whenever both sides of a merge changed a brain file.
    """
    from ..git import setup as gitsetup

    top = repository_top(ctx)
    lines, keys = gitsetup.install(top, uninstall=uninstall)
    attributes = relative(top / ".gitattributes")
    verb = "removed" if uninstall else "added"
    if lines:
        paths = ", ".join(line.split()[0] for line in lines)
        click.echo(f"{attributes}: {verb} merge={gitsetup.DRIVER} for {paths}")
    if keys:
        where = "" if uninstall else " (this clone only)"
        click.echo(f"git config: {verb.replace('added', 'set')} {', '.join(keys)}{where}")
    if not lines and not keys:
        already = "not registered" if uninstall else "already registered"
        click.echo(f"the {gitsetup.DRIVER} merge driver is {already}; nothing to do")
    elif lines and not uninstall:
        click.echo(
            f"next: commit {attributes}; in every other clone, run voyager-brain install git"
        )
    if not uninstall and not gitsetup.executable_found():
        click.echo(
            f"warning: `{gitsetup.EXECUTABLE}` is not on this PATH, and git runs the driver "
            "from the PATH: activate the environment it is installed in, or use pipx",
            err=True,
        )
