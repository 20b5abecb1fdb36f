"""`python -m voyager_brain` and the `voyager-brain` console script.

Hook calls run on every agent turn, and git runs the merge driver once per brain file per
merge, so both are routed here before the CLI (and click) is imported; everything else
(``--help`` included) goes to the click CLI.
"""

from __future__ import annotations

import sys


def main() -> None:
    argv = sys.argv[1:]
    if len(argv) == 3 and argv[:2] == ["hook", "claude"] and not argv[2].startswith("-"):
        from .hooks.claude import run

        raise SystemExit(run(argv[2]))
    if len(argv) == 5 and argv[0] == "merge-driver" and not argv[1].startswith("-"):
        from .merge import run_driver

        raise SystemExit(run_driver(argv[1:]))
    from .cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
