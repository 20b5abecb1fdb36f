"""`mcp`: the memory served to an agent over MCP (stdio)."""

from __future__ import annotations

import contextlib

import click

from .. import __version__
from .common import cli, start_folder


@cli.command(name="mcp")
@click.pass_context
def mcp_server(ctx: click.Context) -> None:
    """Serve this project's memory to an agent over MCP, on stdin and stdout.

    An agent starts it as an MCP server; it answers until the agent closes the
    connection. Tools: brain (the memory logs), status, add, compact, context, save,
    rules_add, rules_test; resource: voyager://context. The project is the repository
    of the folder it starts in (or --root). For Claude Code, in .mcp.json (which
    `voyager-brain install mcp claude` writes):

    \b
    {"mcpServers": {"voyager-brain": {"command": "voyager-brain", "args": ["mcp"]}}}

    Needs the MCP SDK: pip install "voyager-brain[mcp]".
    """
    from ..integrations.mcp_server import serve

    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C in a terminal: nothing to report
        serve(start_folder(ctx), version=__version__)
