"""The `voyager-brain` command: a thin layer over the library, one module per command
group over one click group (`common.cli`).

User errors (`BrainError`, unreadable files) are one line on stderr and exit code 2;
click's own usage errors exit 2 as well. Open `common.py` first, then the module named
for the command: `session` (init, status, add, compact), `state` (save, show, import),
`context`, `memory` (brain, memory ...), `git` (diff, log, blame, commit, install git,
merge-driver), `integrations` (hook, install claude), `rules` and `history` (guard rules
and the session history), `pipeline` (the multi-agent pipeline), `ui` (the dashboard),
`trust` (the
project config's command settings), `doctor`, `demo`. A module is imported only when
one of its commands runs (`common.COMMANDS`); `plain` answers the plainest forms of
`status`, `show`, `rules list` and `recall` without click.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

    from .common import cli

__all__ = ["cli", "main"]


def __getattr__(name: str) -> Any:
    # `cli` (and click with it) when asked for: `plain` answers some commands without.
    if name == "cli":
        from .common import cli

        return cli
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point of the `voyager-brain` console script."""
    from .common import cli

    cli.main(args=argv, prog_name="voyager-brain")
    raise SystemExit(0)  # pragma: no cover - cli.main always exits
