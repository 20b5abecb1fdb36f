"""The dashboard refuses what a web page elsewhere can make a browser send (issue 26): a
request whose ``Host`` is another name (DNS rebinding: evil.example resolved to 127.0.0.1
reaches the port, the page then reads the answers as its own) and a POST from another
origin, even one that carries the CSRF token. Starlette's test client on a real project,
and the real `voyager-brain ui` process for the Host check."""

from __future__ import annotations

import http.client
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_cli
from starlette.testclient import TestClient

from voyager_brain.guard import db as gdb
from voyager_brain.guard.rules import add_rule
from voyager_brain.ui.app import COOKIE, allowed_hosts, create_app

TOKEN = "test-token-0123456789"
PORT = 8765


@pytest.fixture
def project(repo: Path, isolated_env: Path) -> Iterator[tuple[Path, Path]]:
    assert run_cli("init", cwd=repo).returncode == 0
    history = isolated_env / "history.db"
    db = gdb.connect(str(history))
    add_rule(db, description="No sudo", pattern=r"\bsudo\b")
    gdb.close_all()
    yield repo, history


def client(
    project: tuple[Path, Path], *, host: str = "127.0.0.1", port: int | None = PORT,
    base: str | None = None, allow_edits: bool = True,
) -> TestClient:  # fmt: skip
    top, history = project
    app = create_app(
        top, token=TOKEN, allow_edits=allow_edits, history_path=str(history), host=host, port=port
    )
    made = TestClient(app, base_url=base or f"http://127.0.0.1:{PORT}")
    made.headers["Authorization"] = f"token {TOKEN}"
    return made


def _active(history: Path) -> int:
    with sqlite3.connect(history) as db:
        return int(db.execute("SELECT active FROM rules WHERE id = 1").fetchone()[0])


# -- Host ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    ["evil.example", f"evil.example:{PORT}", "127.0.0.1.evil.example", f"localhost:{PORT + 1}",
     f"127.0.0.1:{PORT}@evil.example", "", "10.0.0.5:8765", f"[::2]:{PORT}"],
)  # fmt: skip
def test_a_request_for_another_host_is_refused(project: tuple[Path, Path], host: str) -> None:
    browser = client(project)
    for path in ("/", "/rules?format=json", "/static/app.js", "/favicon.ico", "/nowhere"):
        answer = browser.get(path, headers={"Host": host})
        assert answer.status_code == 400, (host, path)
        assert answer.headers["content-type"].startswith("text/plain")
        assert "not this dashboard's address" in answer.text
        assert "No sudo" not in answer.text


@pytest.mark.parametrize(
    "host", [f"127.0.0.1:{PORT}", f"localhost:{PORT}", f"LOCALHOST:{PORT}", f"[::1]:{PORT}"]
)
def test_the_addresses_it_serves_are_answered(project: tuple[Path, Path], host: str) -> None:
    answer = client(project).get("/rules?format=json", headers={"Host": host})
    assert answer.status_code == 200 and answer.json()["rules"]


def test_a_host_chosen_with_host_is_answered_too(project: tuple[Path, Path]) -> None:
    lan = client(project, host="192.168.1.20")
    assert lan.get("/", headers={"Host": f"192.168.1.20:{PORT}"}).status_code == 200
    assert lan.get("/", headers={"Host": f"localhost:{PORT}"}).status_code == 200
    assert lan.get("/", headers={"Host": f"evil.example:{PORT}"}).status_code == 400
    assert "192.168.1.20" in allowed_hosts("192.168.1.20")
    assert allowed_hosts("::1") == allowed_hosts("127.0.0.1")


# -- Origin and Referer of a POST --------------------------------------------------------------


def _csrf(browser: TestClient) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', browser.get("/rules").text)
    assert found is not None
    return found.group(1)


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": f"http://evil.example:{PORT}"},
        {"Origin": "null"},
        {"Origin": f"https://127.0.0.1:{PORT}"},
        {"Origin": f"http://127.0.0.1:{PORT + 1}"},
        {"Referer": "http://evil.example/attack.html"},
        {"Referer": f"http://127.0.0.1:{PORT}.evil.example/rules"},
        {"Origin": f"http://127.0.0.1:{PORT}", "Referer": "http://evil.example/"},
    ],
    ids=lambda h: " ".join(f"{k}={v}" for k, v in h.items()),
)
def test_a_post_from_another_origin_is_refused_even_with_the_csrf_token(
    project: tuple[Path, Path], headers: dict[str, str]
) -> None:
    browser = client(project)
    csrf = _csrf(browser)
    refused = browser.post("/rules/1/active", data={"csrf": csrf, "active": "0"}, headers=headers)
    assert refused.status_code == 403
    assert "another origin" in refused.text
    assert _active(project[1]) == 1


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": f"http://127.0.0.1:{PORT}"},
        {"Referer": f"http://127.0.0.1:{PORT}/rules"},
        {},  # a program, not a browser: every browser sends Origin with a POST
    ],
    ids=["origin", "referer", "neither"],
)
def test_a_post_from_its_own_page_is_taken(
    project: tuple[Path, Path], headers: dict[str, str]
) -> None:
    browser = client(project)
    csrf = _csrf(browser)
    done = browser.post(
        "/rules/1/active?format=json", data={"csrf": csrf, "active": "0"}, headers=headers
    )
    assert done.status_code == 200, done.text
    assert _active(project[1]) == 0


def test_pages_send_their_origin_with_a_post(project: tuple[Path, Path]) -> None:
    # `no-referrer` makes a browser send `Origin: null` with a same-origin form POST,
    # which the origin check must refuse: the pages ask for `same-origin` instead.
    assert client(project).get("/rules").headers["referrer-policy"] == "same-origin"


# -- the real process -------------------------------------------------------------------------


def test_the_served_dashboard_refuses_a_rebound_host(repo: Path) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "voyager_brain", "ui", "--no-browser", "--port", "0"],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    try:
        assert server.stdout is not None
        lines = [server.stdout.readline() for _ in range(3)]
        found = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=(\S+)", "".join(lines))
        assert found is not None, lines
        port, token = int(found.group(1)), found.group(2)

        def status(host: str) -> tuple[int, str]:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            connection.request(
                "GET",
                "/rules?format=json",
                headers={"Host": host, "Cookie": f"{COOKIE}_{port}={token}"},
            )
            answer = connection.getresponse()
            body = answer.read().decode()
            connection.close()
            return answer.status, body

        assert status(f"127.0.0.1:{port}")[0] == 200
        assert status(f"localhost:{port}")[0] == 200
        code, body = status(f"evil.example:{port}")
        assert code == 400 and "not this dashboard's address" in body
    finally:
        server.terminate()
        server.communicate(timeout=10)
