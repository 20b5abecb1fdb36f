"""`python -m voyager_brain` and the `voyager-brain` console script.

Hook calls run on every agent turn, git runs the merge driver once per brain file per
merge, and an agent waits for its MCP server to start, so these are routed here before
the CLI (and click) is imported; a session start (or a plain ``context``) first tries the
context cache, which needs almost nothing imported. So are the plainest forms of the
read commands a person runs most (`cli.plain`). Everything else (``--help`` included)
goes to the click CLI.
"""

from __future__ import annotations

import gc
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn


def main() -> None:
    try:
        _main(sys.argv[1:])
    except BrokenPipeError:
        # The reader of our output went away (`voyager-brain ... | head`): end quietly,
        # as a Unix tool does, with what is left unwritten going nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(1) from None


def _main(argv: list[str]) -> None:
    # Text that is not a character (a lone surrogate, read from a JSON escape such as
    # "\ud800" in a brain file) is shown as that escape rather than failing the write:
    # inside JSON (--json, a hook's answer) it is the string's own escape.
    sys.stdout.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    for n, arg in enumerate(argv, 1):
        _check_argument(n, arg)
    if argv[:1] in (["hook"], ["context"], ["merge-driver"]):
        # Short-lived, and building tens of thousands of small objects (folds, rank
        # keys): the cycle collector would walk them all again and again for nothing
        # to collect; reference counting still frees what is dropped.
        gc.disable()
    if len(argv) == 3 and argv[0] == "hook" and not any(a.startswith("-") for a in argv):
        _hook(argv[1], argv[2])
    if argv == ["context"]:
        from .memory import cache

        cache.defer_saves()
        text = _plain_context()
        if text is not None:
            sys.stdout.write(text)
            _done_then_save(cache, 0)
        cache.flush_saves()
    if argv == ["mcp"]:
        _mcp()
    if argv and argv[0] in ("status", "show", "rules", "recall"):
        from .cli.plain import quick

        answer = quick(argv)
        if answer is not None:
            output, notice = answer
            if notice:
                print(notice, file=sys.stderr)
            sys.stdout.write(output)
            raise SystemExit(0)
    if len(argv) == 5 and argv[0] == "merge-driver" and not argv[1].startswith("-"):
        from .git.merge import run_driver

        raise SystemExit(run_driver(argv[1:]))
    from .cli import main as cli_main

    cli_main()


def _check_argument(n: int, arg: str) -> None:
    """Exit 2 with one line when argument `n` holds bytes that are not UTF-8 (Python
    hands them over as lone surrogates): nothing could store or show them as given."""
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(arg[exc.start])
        what = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"
        print(
            f"voyager-brain: argument {n}: not valid UTF-8 ({what}); expected UTF-8 text",
            file=sys.stderr,
        )
        raise SystemExit(2) from None


def _hook(agent: str, event: str) -> NoReturn:
    """Every agent's hook, without click. Exits at once when done: closing the last
    connection to history.db would checkpoint its write-ahead log into the file and
    fsync it, at every tool call (the log stays, and any reader sees it; the hook
    truncates it once it passes a megabyte: `guard.db.bound_wal`), and a session start
    leaves the fold caches it built to a child (`_done_then_save`)."""
    from .integrations.hooks import run

    code = run(agent, event)
    sys.stdout.flush()
    history = sys.modules.get("voyager_brain.guard.db")
    if history is not None:
        history.bound_wal()
    cache = sys.modules.get("voyager_brain.memory.cache")
    if cache is not None:
        _done_then_save(cache, code)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _done_then_save(cache: Any, code: int) -> NoReturn:
    """The output is complete: the fold caches are written after it, by a child, and
    the process ends at once. Tearing down the interpreter would free every folded
    entry one by one (and, after the fork, copy the pages it touches): nothing is left
    to flush or close by then."""
    sys.stdout.flush()
    sys.stderr.flush()
    cache.flush_saves(detach=True)
    os._exit(code)


def _mcp() -> None:
    """`voyager-brain mcp` as an agent starts it, without click (a twentieth of the time
    the agent waits for the server). Returns only when the server cannot be made (the
    SDK missing): the CLI then runs the command again and reports it."""
    from pathlib import Path

    from . import __version__
    from .config import ignored_keys_notice
    from .errors import BrainError
    from .integrations import mcpwire
    from .integrations.mcp_server import build_server

    start = Path.cwd()
    try:
        server = build_server(start, version=__version__)
    except BrainError:
        return
    notice = ignored_keys_notice(str(start))
    if notice:
        print(notice, file=sys.stderr)
    import contextlib  # the SDK has imported it already

    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C in a terminal: nothing to report
        mcpwire.serve(server)
    raise SystemExit(0)


def _plain_context() -> str | None:
    """`voyager-brain context` without options: the cached document, else a build that is
    cached for next time, without click. None when anything goes wrong: the CLI then runs
    the command again and reports it."""
    from .errors import BrainError
    from .session.cachedcontext import context_text

    try:
        return context_text(os.getcwd(), None)
    except BrainError:
        return None


if __name__ == "__main__":
    main()
