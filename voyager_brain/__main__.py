"""`python -m voyager_brain` and the `voyager-brain` console script.

Hook calls run on every agent turn, so they are routed here to the hook code before the
CLI (and click) is imported; everything else goes to the click CLI.
"""

from __future__ import annotations

import sys


def main() -> None:
    argv = sys.argv[1:]
    if len(argv) == 3 and argv[:2] == ["hook", "claude"] and not argv[2].startswith("-"):
        from .hooks.claude import run

        raise SystemExit(run(argv[2]))
    from .cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
