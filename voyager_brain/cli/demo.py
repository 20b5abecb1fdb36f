"""`demo`: a guided run in a temporary repository."""

from __future__ import annotations

from pathlib import Path

import click

from .common import (
    cli,
)

# -- demo ---------------------------------------------------------------------------------


@cli.command()
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    help="Run in this folder (created, and made a git repository if it is not one).",
)
def demo(directory: Path | None) -> None:
    """Run a scripted agent session on a scratch repository and show what it left.

    Two sessions go through the whole lifecycle (load, updates, compact, persist); then
    the status and the `git diff` of brain.md are printed.
    """
    from ..demo import run_demo

    run_demo(directory, click.echo)
