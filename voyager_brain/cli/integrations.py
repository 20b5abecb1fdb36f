"""`hook AGENT EVENT` and `install AGENT`: the agents' side."""

from __future__ import annotations

import click

from ..integrations.hooks import ADAPTERS
from .common import cli, repository_top, say_error

# -- agent integrations: hook, install ------------------------------------------------


@cli.group()
def hook() -> None:
    """Hook commands that agents call: voyager-brain hook AGENT EVENT, the hook's JSON on
    stdin. They never fail the agent: exit 0, one line on stderr when something is
    wrong."""


def _hook_command(agent: str) -> None:
    from ..integrations.hooks import ACTIONS, adapter

    module = adapter(agent)
    ours = max(len(e) for e in module.EVENTS) + 2
    theirs = max(len(h.event) for h in module.EVENTS.values()) + 2
    table = "\n".join(
        f"{event:<{ours}}{hook.event:<{theirs}}{ACTIONS[hook.action]}"
        for event, hook in module.EVENTS.items()
    )

    def command(event: str) -> None:
        import os

        from ..integrations.hooks import run

        # -C DIR: the folder of a payload that names none (hookio.cwd_of) is DIR.
        root = click.get_current_context().find_root().obj
        if root is not None and os.path.isdir(root):
            os.chdir(root)
        raise SystemExit(run(agent, event))

    command.__doc__ = f"{module.AGENT} hooks, reading the hook's JSON on stdin.\n\n\b\n{table}"
    choice = click.Choice(list(module.EVENTS))
    hook.command(name=agent)(click.argument("event", type=choice, metavar="EVENT")(command))


for _agent in ADAPTERS:
    _hook_command(_agent)


@cli.group()
def install() -> None:
    """Install voyager-brain into an agent's settings, or into git."""


def _install_command(agent: str) -> None:
    from ..integrations.hooks import adapter

    module = adapter(agent)
    settings = module.SETTINGS

    @click.option("--user", is_flag=True, help=f"Into {settings.user} instead of the project's.")
    @click.option(
        "--uninstall", is_flag=True, help="Remove voyager-brain's hooks (and only those)."
    )
    @click.pass_context
    def command(ctx: click.Context, user: bool, uninstall: bool) -> None:
        from ..integrations.install import install_hooks, settings_path

        path = settings_path(agent, None if user else repository_top(ctx))
        changed = install_hooks(agent, path, uninstall=uninstall)
        verb = "removed from" if uninstall else "installed in"
        if changed:
            click.echo(f"voyager-brain hooks {verb} {path}")
        else:
            click.echo(f"{path} already {'has no' if uninstall else 'has the'} voyager-brain hooks")
        note = getattr(module, "INSTALL_NOTE", "")
        if note and not uninstall and not user:  # the notes are about a project's hooks
            click.echo(note)

    command.__doc__ = (
        f"Add the {module.AGENT} hooks to {settings.project} (merged, idempotent; see "
        f"voyager-brain hook {agent} --help for what each does)."
    )
    install.command(name=agent)(command)


for _agent in ADAPTERS:
    _install_command(_agent)


@install.command(name="mcp")
@click.argument("agent", type=click.Choice(["claude", "codex", "gemini", "cursor", "copilot"]))
@click.option("--uninstall", is_flag=True, help="Remove the voyager-brain server (and only it).")
@click.pass_context
def install_mcp_command(ctx: click.Context, agent: str, uninstall: bool) -> None:
    """Add the voyager-brain MCP server to an agent's project configuration.

    \b
    claude   .mcp.json
    codex    .codex/config.toml  [mcp_servers.voyager-brain]
    gemini   .gemini/settings.json  mcpServers
    cursor   .cursor/mcp.json
    copilot  .github/mcp.json

    The server is `voyager-brain mcp` (pip install "voyager-brain[mcp]").
    """
    from ..integrations.install import install_mcp, mcp_path

    top = repository_top(ctx)
    changed = install_mcp(agent, top, uninstall=uninstall)
    path = mcp_path(agent, top)
    verb = "removed from" if uninstall else "added to"
    if changed:
        click.echo(f"voyager-brain MCP server {verb} {path}")
    else:
        state = "has no" if uninstall else "already has the"
        click.echo(f"{path} {state} voyager-brain MCP server")
    if not uninstall and _mcp_sdk_missing():
        # The entry stays: the agent starts the server once the SDK is there.
        sdk = 'pip install "voyager-brain[mcp]"'
        say_error(f"the server needs the MCP SDK, which this Python lacks: {sdk}")


def _mcp_sdk_missing() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("mcp") is None
    except (ImportError, ValueError):  # a broken or blocked install
        return True
