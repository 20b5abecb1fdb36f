"""`voyager-brain ui`: the dashboard served on a local port until Ctrl-C.

The socket is bound here, before uvicorn starts, so that the URL printed (with its
random access token, as Jupyter prints one) names the port really bound, even with
``--port 0``; the browser is opened only once the server answers.
"""

from __future__ import annotations

import contextlib
import secrets
import socket
import threading
import webbrowser
from collections.abc import Callable
from pathlib import Path

from ..errors import BrainError

#: Hosts that only this machine reaches.
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


class ExtraMissingError(BrainError):
    """The dashboard's libraries (the ``ui`` extra) are not installed."""


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise BrainError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(128)
    return sock


def url_of(host: str, port: int, token: str, path: str = "/") -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{path}?token={token}"


def serve(
    root: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    open_browser: bool = True,
    allow_edits: bool = False,
    echo: Callable[[str], None] = print,
    warn: Callable[[str], None] = print,
) -> None:
    """Serve the dashboard of the project at `root` until interrupted."""
    try:
        import uvicorn

        from .app import create_app
    except ImportError as exc:
        raise ExtraMissingError(
            f'the dashboard needs Starlette and uvicorn ({exc}); pip install "voyager-brain[ui]"'
        ) from None
    token = secrets.token_urlsafe(24)
    sock = _bind(host, port)
    bound = sock.getsockname()[1]
    # Requests must name this address and port in their Host (DNS rebinding).
    app = create_app(root, token=token, allow_edits=allow_edits, host=host, port=bound)
    url = url_of(host, bound, token)
    if host not in LOCAL_HOSTS:
        warn(
            f"warning: listening on {host}, not only this machine: anyone who can reach it "
            "and learns the token sees every project's memory and history"
        )
    echo(f"voyager-brain ui: {root}")
    echo(f"    {url}")
    echo("Open the link above (it carries the access token). Ctrl-C stops the server.")
    if allow_edits:
        echo("Edits allowed: rules can be enabled and disabled from the Rules page.")
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    if open_browser:
        threading.Thread(target=_open_when_ready, args=(server, url), daemon=True).start()
    with contextlib.closing(sock):
        server.run(sockets=[sock])


def _open_when_ready(server: object, url: str) -> None:
    import time

    for _ in range(100):  # 10 s at most: the server starts in well under one
        if getattr(server, "started", False):
            webbrowser.open(url)
            return
        time.sleep(0.1)
