"""`voyager-brain ui` as a real process: the printed link, the token, the host warning."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest


def _start(repo: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    """The server started in `repo`, and the link it printed."""
    server = subprocess.Popen(
        [sys.executable, "-m", "voyager_brain", "ui", "--no-browser", "--port", "0", *args],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    assert server.stdout is not None
    lines = [server.stdout.readline() for _ in range(3)]
    found = re.search(r"http://\S+", "".join(lines))
    assert found is not None, "".join(lines)
    return server, found.group(0)


@pytest.fixture
def stop() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for server in started:
        if server.poll() is None:
            server.terminate()
        server.communicate(timeout=10)  # waits, and closes the pipes


def _status(url: str) -> int:
    """The status of a GET of `url` by a client that keeps cookies, as a browser does."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    try:
        with opener.open(url, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def test_ui_prints_a_link_with_a_token_that_opens_the_dashboard(
    repo: Path, stop: list[subprocess.Popen[str]]
) -> None:
    server, url = _start(repo)
    stop.append(server)
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[\w-]{20,}", url)
    assert _status(url) == 200  # the redirect to the page without the token, with a cookie
    bare = url.split("?")[0]
    assert _status(bare) == 403
    assert _status(bare + "brain?format=json&" + url.split("?")[1]) == 200


def test_each_start_has_a_new_token(repo: Path, stop: list[subprocess.Popen[str]]) -> None:
    first, one = _start(repo)
    second, two = _start(repo)
    stop += [first, second]
    assert one.split("token=")[1] != two.split("token=")[1]


def test_two_dashboards_on_one_host_keep_their_own_cookies(
    repo: Path, stop: list[subprocess.Popen[str]]
) -> None:
    """Browsers share cookies across the ports of a host: each port has its own name."""
    first, one = _start(repo)
    second, two = _start(repo)
    stop += [first, second]
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    for link in (one, two):
        with browser.open(link, timeout=10) as answer:
            assert answer.status == 200
    for link in (one, two):
        with browser.open(link.split("?")[0] + "brain", timeout=10) as answer:
            assert answer.status == 200


def test_another_host_prints_a_warning(repo: Path, stop: list[subprocess.Popen[str]]) -> None:
    server, url = _start(repo, "--host", "0.0.0.0")
    stop.append(server)
    server.terminate()
    _, err = server.communicate(timeout=10)
    assert "warning: listening on 0.0.0.0" in err
    assert url.startswith("http://0.0.0.0:")


def test_a_port_in_use_is_one_line_and_exit_2(
    repo: Path, stop: list[subprocess.Popen[str]]
) -> None:
    server, url = _start(repo)
    stop.append(server)
    port = re.search(r":(\d+)/", url).group(1)  # type: ignore[union-attr]
    done = subprocess.run(
        [sys.executable, "-m", "voyager_brain", "ui", "--no-browser", "--port", port],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(f"voyager-brain: cannot listen on 127.0.0.1:{port}")
    assert "Traceback" not in done.stderr


def test_the_browser_opens_the_printed_link_unless_no_browser(repo: Path, tmp_path: Path) -> None:
    """`webbrowser` runs $BROWSER: here a script that writes down the link it was given."""
    opened = tmp_path / "opened.txt"
    fake = tmp_path / "browser.py"
    fake.write_text(f"import sys, pathlib\npathlib.Path({str(opened)!r}).write_text(sys.argv[1])\n")
    server = subprocess.Popen(
        [sys.executable, "-m", "voyager_brain", "ui", "--port", "0"],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "BROWSER": f"{sys.executable} {fake} %s"},
    )
    try:
        assert server.stdout is not None
        url = re.search(r"http://\S+", server.stdout.readline() + server.stdout.readline())
        assert url is not None
        for _ in range(100):
            if opened.exists() and opened.read_text():
                break
            time.sleep(0.1)
        assert opened.read_text() == url.group(0)
    finally:
        server.terminate()
        server.communicate(timeout=10)
