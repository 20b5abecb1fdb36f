"""The click group every command hangs on, and what the commands share: one-line errors
with exit code 2, the --json option, the repository a command runs in."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .. import __version__, repo
from ..errors import BrainError, NotInRepositoryError, one_line
from .plain import json_text

if TYPE_CHECKING:
    from ..session.manager import BrainManager

F = TypeVar("F", bound=Callable[..., Any])


class UserError(click.ClickException):
    exit_code = 2

    def show(self, file: Any = None) -> None:
        say_error(self.format_message())


def read_named_file(path: str | Path, expected: str = "") -> bytes:
    """The bytes of a file the user named; one line (`expected` added to it) when it is
    missing, or is not a regular file (a device or a FIFO would never end)."""
    from ..confine import open_regular

    try:
        with open_regular(path) as file:
            return file.read()
    except FileNotFoundError:
        raise UserError(f"{path}: no such file{expected}") from None
    except OSError as exc:
        raise UserError(f"{path}: {exc.strerror or exc}{expected}") from None


def say_error(message: str) -> None:
    """One line on stderr: ``voyager-brain: MESSAGE``."""
    click.echo(f"voyager-brain: {one_line(message)}", err=True)


class BrainGroup(click.Group):
    """Turns library errors into one line and exit code 2, and imports a command's
    module only when that command is run: `voyager-brain add` does not load the pipeline
    engine, the history importer or the merge code (`lazy`: each command's name and the
    modules of this package that define it and its subcommands)."""

    def __init__(self, *args: Any, lazy: dict[str, tuple[str, ...]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.lazy) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        import importlib

        for module in self.lazy.get(cmd_name, ()):
            importlib.import_module(f"{__package__}.{module}")
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrainError as exc:
            raise UserError(str(exc)) from None
        except BrokenPipeError:
            raise  # the reader went away (`| head`): click ends quietly
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            raise UserError(f"{where}{exc.strerror or exc}") from None


def json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")(f)


def print_json(data: Any) -> None:
    click.echo(json_text(data), nl=False)


#: Each command and the modules that define it: `install git` lives with the git
#: commands and `rules suggest` in its own module.
COMMANDS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("init", "status", "add", "compact"), ("session",)),
    **dict.fromkeys(("save", "show", "import"), ("state",)),
    "context": ("context",),
    **dict.fromkeys(("brain", "memory"), ("memory",)),
    "recall": ("recall",),
    **dict.fromkeys(("diff", "log", "blame", "commit", "merge-driver"), ("git",)),
    "hook": ("integrations",),
    "install": ("integrations", "git"),
    "mcp": ("mcp",),
    "rules": ("rules", "suggest"),
    "history": ("history",),
    "pipeline": ("pipeline",),
    **dict.fromkeys(("doctor", "check"), ("doctor",)),
    "export": ("export",),
    "demo": ("demo",),
    "trust": ("trust",),
    "ui": ("ui",),
}


@click.group(
    cls=BrainGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(__version__, "--version", prog_name="voyager-brain")
@click.option(
    "-C",
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Run as if started in this folder (any folder inside the repository).",
)
@click.pass_context
def cli(ctx: click.Context, root: Path | None) -> None:
    """Memory for coding agents, kept in the project's git repository.

    The session brain lives in .voyager/brain.md: timestamped sections (observations,
    decisions, loop status, reflections) that agents add every turn, compacted when the
    file grows, and reviewed in pull requests like any document. The project state
    lives in .voyager/brain.json: facts, decisions, active state, key files, known
    issues, preferences and next steps, merged by fixed per-field rules at every save.
    """
    ctx.obj = root if root is not None else Path.cwd()
    if ctx.invoked_subcommand not in _SAY_IGNORED_THEMSELVES and not ctx.resilient_parsing:
        say_ignored_keys(ctx.obj)


#: Commands that report the ignored command keys their own way (or refuse over them).
_SAY_IGNORED_THEMSELVES = frozenset({"trust", "status", "doctor", "pipeline", "merge-driver"})


def say_ignored_keys(start: Path) -> None:
    """`config.ignored_keys_notice` on stderr, when there is one."""
    from ..config import ignored_keys_notice

    notice = ignored_keys_notice(str(start))
    if notice:
        click.echo(notice, err=True)


def start_folder(ctx: click.Context) -> Path:
    start: Path = ctx.obj
    if not start.is_dir():
        raise UserError(f"{start}: no such folder")
    return start


def repository_top(ctx: click.Context) -> Path:
    """The top of the repository we are in; exit 2 outside one."""
    start = start_folder(ctx)
    top = repo.find_top(start)
    if top is None:
        raise NotInRepositoryError(start.absolute())
    return top


def manager_for(ctx: click.Context) -> BrainManager:
    """The BrainManager of the repository we are in; exit 2 outside one."""
    from ..session.manager import BrainManager

    repository_top(ctx)
    return BrainManager(start_folder(ctx))
