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
    leftover temporary files are removed; secrets found in brain.md are redacted; the
    merge driver that .gitattributes names is registered in this clone's git config.
    Exits 1 when problems remain.
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
