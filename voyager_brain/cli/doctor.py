"""`doctor [--repair]`: checks the project's brain files and git setup."""

from __future__ import annotations

import click

from .. import repo
from ..errors import NotInRepositoryError
from .common import (
    cli,
    json_option,
    print_json,
    start_folder,
)

# -- doctor -------------------------------------------------------------------------------


@cli.command()
@click.option("--repair", is_flag=True, help="Fix what can be fixed (see above).")
@json_option
@click.pass_context
def doctor(ctx: click.Context, repair: bool, as_json: bool) -> None:
    """Check the brain files and explain any problem.

    With --repair: a brain.md that cannot be read is moved aside to a timestamped
    .corrupt copy and a fresh one is started; missing .voyager files are created;
    leftover temporary files are removed; secrets found in brain.md, brain.json and
    both memory logs (reported with file:line) are redacted in place; the merge driver
    that .gitattributes names is registered in this clone's git config. Exits 1 when
    problems remain.
    """
    from ..doctor import run_checks

    start = start_folder(ctx)
    top = repo.find_top(start)
    if top is None:
        raise NotInRepositoryError(start.absolute())
    findings = run_checks(top, repair=repair)
    problems = [f for f in findings if f.level == "error" and not f.repaired]
    if as_json:
        print_json({"ok": not problems, "findings": [f.to_dict() for f in findings]})
    else:
        for f in findings:
            mark = {"ok": "ok  ", "warning": "warn", "error": "FAIL"}[f.level]
            if f.repaired:
                mark = "done"
            click.echo(f"{mark}  {f.message}")
            if f.hint and not f.repaired:
                click.echo(f"      {f.hint}")
    if problems:
        ctx.exit(1)


# -- check (pre-commit) -------------------------------------------------------------------


@cli.command("check")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
@json_option
@click.pass_context
def check_command(ctx: click.Context, files: tuple[str, ...], as_json: bool) -> None:
    """Check that the brain files are fit to commit (the pre-commit hook).

    Each of .voyager/brain.md, brain.json and memory.jsonl must parse, and hold no git
    conflict markers and no unredacted secret; the markdown the pipeline's agents write
    (.brain/**/*.md) must hold no unredacted secret. FILES are the files to commit, as
    pre-commit passes them: only brain files among them are checked; without FILES,
    every brain file is. Prints file:line for each problem and exits 1; exits 0 when
    all is well. Nothing is written: `doctor --repair` redacts the secrets.
    """
    from ..check import check

    start = start_folder(ctx)
    top = repo.find_top(start)
    if top is None:
        raise NotInRepositoryError(start.absolute())
    checked, problems = check(top, files)
    if as_json:
        print_json({"checked": checked, "problems": [p.to_json() for p in problems]})
    else:
        for problem in problems:
            click.echo(str(problem))
        if not problems:
            click.echo(f"{len(checked)} brain file{'' if len(checked) == 1 else 's'} checked: ok")
    if problems:
        ctx.exit(1)
