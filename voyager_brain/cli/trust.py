"""`voyager-brain trust`: allow (or `--revoke`) the command settings of this project's
config.toml (see `voyager_brain.trust`)."""

from __future__ import annotations

import click

from .. import trust as trusts
from .common import cli, json_option, print_json, repository_top


@cli.command("trust")
@click.option("--revoke", is_flag=True, help="Ignore the file's command settings again.")
@click.option(
    "--show", is_flag=True, help="Show the command settings and the trust; change nothing."
)
@json_option
@click.pass_context
def trust_command(ctx: click.Context, revoke: bool, show: bool, as_json: bool) -> None:
    """Let this project's .voyager/config.toml make voyager-brain run programs.

    A config.toml comes with the repository: its settings that run a program
    (model_command, summarizer = "model", semantic_review = true, [pipeline] runner,
    [pipeline.runners]) are ignored until you trust the file. Review them (they are
    listed), then trust: the file's path and the sha256 of its content are kept in
    $VOYAGER_HOME/trust.json, so any change to the file is ignored again until you
    trust it again. The same settings in $VOYAGER_HOME/config.toml are yours and
    always apply; so does a command given on the command line (--runner).
    """
    if revoke and show:
        raise click.UsageError("--revoke and --show do not go together")
    top = repository_top(ctx)
    if revoke:
        report = trusts.revoke(top)
    elif show:
        report = trusts.inspect(top)
    else:
        report = trusts.trust(top)
    if as_json:
        print_json(report.as_json())
        return
    if revoke:
        if report.changed:
            click.echo(f"revoked: the command settings of {report.path} are ignored again")
        else:
            click.echo(f"{report.path} was not trusted; nothing to revoke")
        return
    if not report.exists:
        click.echo(f"no config.toml in {top / '.voyager'}: nothing to trust")
        return
    if not report.commands:
        click.echo(
            f"{report.path} holds no setting that runs a program: nothing to trust"
            " (every key in it applies already)"
        )
        return
    click.echo(f"{report.path} lets voyager-brain run:")
    for key, value in report.commands:
        click.echo(f"  {key} = {trusts.shown(value)}")
    digest = f"sha256 {report.sha256}"
    if show:
        state = "trusted" if report.trusted else "not trusted: `voyager-brain trust` allows them"
        click.echo(f"{state} ({digest})")
    elif report.changed:
        click.echo(f"trusted ({digest}); a change to the file needs `voyager-brain trust` again")
    else:
        click.echo(f"already trusted as it is ({digest})")
