"""What the end-to-end tests of every agent share: finding the agent's CLI, a project with
voyager-brain's hooks, a learning and a block rule, and the history the hooks wrote."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

import pytest
from conftest import run_cli


def agent_cli(variable: str, command: str, package: str) -> str:
    """The agent's CLI: `variable` names it, else `command` on PATH. Without it the test
    skips, or fails under ``VOYAGER_E2E=required`` (.ci/run), saying how to install it."""
    found = os.environ.get(variable) or shutil.which(command)
    if found is None:
        reason = (
            f"{command} is not installed: `npm install {package}` and set {variable} to its"
            f" node_modules/.bin/{command} (.ci/run does)"
        )
        if os.environ.get("VOYAGER_E2E") == "required":
            pytest.fail(reason)
        pytest.skip(reason)
    return found


def prepared(repo: Path, agent: str) -> Path:
    """`repo` with voyager-brain's hooks for `agent`, a learning in the memory and a block
    rule (rule 1) on `rm -rf`."""
    for args in (
        ["init"],
        ["install", agent],
        ["brain", "action=add", "type=learning", "text=CI must use Node 22"],
        ["rules", "add", "--pattern", r"rm\s+-rf", "--tool", "Bash", "--description",
         "no rm -rf", "--solution", "use git clean -fdx"],
    ):  # fmt: skip
        done = run_cli(*args, cwd=repo)
        assert done.returncode == 0, (args, done.stderr)
    return repo


def history(home: Path) -> sqlite3.Connection:
    db = sqlite3.connect(home / "history.db")
    db.row_factory = sqlite3.Row
    return db


class ScriptedModel:
    """A model's API on 127.0.0.1, as a context manager: every POST's JSON body goes to
    `answer` (the subclass's, in the shapes of its API); a GET (a models list, a
    websocket upgrade) is a 404. `url` is where the agent is pointed, `base` appended."""

    def __init__(self, base: str = "") -> None:
        self._lock = threading.Lock()
        mock = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self.send_response(404)
                self.end_headers()

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                mock.answer(self, self.path, json.loads(body or b"{}"))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{base}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, handler: BaseHTTPRequestHandler, path: str, request: dict[str, Any]) -> None:
        raise NotImplementedError
