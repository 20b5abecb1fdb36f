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
one of its commands runs (`common.COMMANDS`).
"""

from __future__ import annotations

from typing import NoReturn

from .common import cli

__all__ = ["cli", "main"]


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point of the `voyager-brain` console script."""
    cli.main(args=argv, prog_name="voyager-brain")
    raise SystemExit(0)  # pragma: no cover - cli.main always exits
