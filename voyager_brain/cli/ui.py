"""`ui`: the local dashboard."""

from __future__ import annotations

import contextlib

import click

from .common import cli, start_folder


@cli.command(name="ui")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port to listen on (0: any free port).",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; anything but this machine's prints a warning.",
)
@click.option("--no-browser", is_flag=True, help="Print the link; do not open a browser.")
@click.option(
    "--allow-edits",
    is_flag=True,
    help="Let the Rules page enable and disable rules (the only edit it has).",
)
@click.pass_context
def ui(ctx: click.Context, port: int, host: str, no_browser: bool, allow_edits: bool) -> None:
    """Serve a local dashboard of the brain, the history and the guard rules.

    Pages: the overview of every project the history knows, the session brain, the
    project state, the memory (with recall), the history of sessions and tool calls,
    the rules with their triggers per day, the pipeline. Each page has a JSON twin:
    add ?format=json. Every request needs the token in the printed link (a cookie
    keeps it after the first visit). Read-only unless --allow-edits.

    Needs Starlette and uvicorn: pip install "voyager-brain[ui]".
    """
    from ..ui.server import serve

    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: the server stopped, nothing to say
        serve(
            start_folder(ctx),
            host=host,
            port=port,
            open_browser=not no_browser,
            allow_edits=allow_edits,
            echo=lambda line: click.echo(line),
            warn=lambda line: click.echo(line, err=True),
        )
