"""The dashboard as a Starlette app: the pages, their JSON twins, the access token, the
one write (a rule enabled or disabled) and its CSRF check.

Security: every request needs the token, given once in the URL (``?token=``; the page
then sets a cookie and drops it from the address) or as ``Authorization: token ...``;
without it, 403. Every value is escaped by the templates, and the Content-Security-
Policy lets no inline script run besides. A POST needs the app to allow edits
(``--allow-edits``) and the form's CSRF token, else 403. No route reads a file path
from the request: projects are history rows, assets a fixed list.

Two checks come before everything else, against what a web page elsewhere can make a
browser send. A request whose ``Host`` is not an address this dashboard serves is
refused with 400 (`allowed_hosts`): a name that an attacker's DNS answers with
127.0.0.1 (DNS rebinding) reaches the port, but not the pages. A POST whose ``Origin``
(else ``Referer``) is another origin is refused with 403, the CSRF token notwithstanding;
a POST with neither header comes from a program, not a browser (every browser sends
``Origin`` with a POST, and ``Referrer-Policy: same-origin`` lets it name ours), and
still needs the token and the CSRF token.
"""

from __future__ import annotations

import hmac
import json
import secrets
import sys
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from .. import __version__
from ..errors import BrainError, RuleError
from ..guard.rules import set_active
from ..render import builtin_template_dir, render_html
from . import activity, charts, pages
from .projects import NO_HISTORY, Clock, Dashboard, PageError

#: The cookie that holds the token after the first visit; a dashboard on another port
#: has its own (browsers share cookies across the ports of a host), see `cookie_name`.
COOKIE = "voyager_ui_token"
#: The assets the pages load: a name in the URL, a file of ``templates/ui/static/``.
ASSETS = {
    "style.css": "text/css; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}
#: The pages in the navigation bar: path, title.
NAV = (
    ("/", "Overview"),
    ("/brain", "Session brain"),
    ("/state", "Project state"),
    ("/memory", "Memory"),
    ("/history", "History"),
    ("/rules", "Rules"),
    ("/pipeline", "Pipeline"),
)
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:;"
        " connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    # Not `no-referrer`: with it a browser sends `Origin: null` with the pages' own form
    # POST, which the origin check refuses. A referrer goes to our own pages only.
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
}

Page = Callable[[Request, Dashboard], dict[str, Any]]


def _int(request: Request, name: str, default: int = 1) -> int:
    from ..guard.queries import row_id

    number = row_id(request.query_params.get(name, ""))
    # A page past the last is empty; past 2**31 its offset would overflow SQLite's.
    return default if number is None else min(number, 2**31)


def _text(request: Request, name: str) -> str:
    return request.query_params.get(name, "")


class _App:
    """The routes of one dashboard, with its token, its CSRF token and its state."""

    def __init__(self, dash: Dashboard, token: str, allow_edits: bool) -> None:
        self.dash = dash
        self.token = token
        self.csrf = secrets.token_urlsafe(32)
        self.allow_edits = allow_edits

    # -- the token -------------------------------------------------------------------

    def _given(self, request: Request) -> tuple[str | None, bool]:
        """The token the request carries, and whether it came in the URL."""
        in_url = request.query_params.get("token")
        if in_url is not None:
            return in_url, True
        header = request.headers.get("authorization", "")
        scheme, _, value = header.partition(" ")
        if scheme.lower() in ("token", "bearer") and value:
            return value.strip(), False
        return request.cookies.get(cookie_name(request)), False

    def _valid(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def guarded(self, handler: Callable[[Request], Awaitable[Response]]) -> Any:
        """`handler` behind the token: 403 without it; a token in a page's URL becomes a
        cookie, and the page is asked for again without it (as Jupyter does)."""

        async def endpoint(request: Request) -> Response:
            given, in_url = self._given(request)
            if not self._valid(given):
                return self.refuse(
                    request,
                    "this dashboard needs its access token: open the link "
                    "`voyager-brain ui` printed (it ends in ?token=...)",
                )
            if in_url and request.method == "GET" and not _wants_json(request):
                params = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
                target = request.url.path + (f"?{urlencode(params)}" if params else "")
                response: Response = RedirectResponse(target, status_code=303)
                self._set_cookie(request, response)
            else:
                response = await handler(request)
            response.headers.update(HEADERS)
            return response

        return endpoint

    def _set_cookie(self, request: Request, response: Response) -> None:
        response.set_cookie(
            cookie_name(request), self.token, httponly=True, samesite="strict", path="/"
        )

    def refuse(self, request: Request, reason: str, status: int = 403) -> Response:
        """`reason` as the answer: a page, or ``{"error": ...}`` for a script."""
        if _wants_json(request):
            return _json({"error": reason}, status)
        return self._html("error.html.j2", request, {"error": reason, "status": status}, status)

    # -- rendering ---------------------------------------------------------------------

    def _html(self, template: str, request: Request, data: Any, status: int = 200) -> Response:
        try:
            return HTMLResponse(self._render(template, request, data), status_code=status)
        except Exception as exc:  # a template that fails on odd data: say so, plainly
            traceback.print_exc(file=sys.stderr)
            text = f"voyager-brain ui: internal error: {exc.__class__.__name__}: {exc}\n"
            return Response(text, status_code=500, media_type="text/plain; charset=utf-8")

    def _render(self, template: str, request: Request, data: Any) -> str:
        return render_html(
            template,
            data=data,
            nav=NAV,
            path=request.url.path,
            query=dict(request.query_params),
            link=_link(request),
            pictures=PICTURES,
            csrf=self.csrf,
            allow_edits=self.allow_edits,
            version=__version__,
            here=self.dash.top,
            title=_title(request.url.path),
        )

    def page(self, template: str, build: Page) -> Any:
        """A page and its JSON twin, from one function of the request."""

        async def handler(request: Request) -> Response:
            try:
                data = build(request, self.dash)
                status = 200
            except PageError as exc:
                data, status = {"error": str(exc)}, 404
            except BrainError as exc:  # a store that cannot be read: say which, and why
                data, status = {"error": str(exc)}, 200
            except Exception as exc:
                traceback.print_exc(file=sys.stderr)
                data = {"error": f"internal error: {exc.__class__.__name__}: {exc}"}
                status = 500
            if _wants_json(request):
                return _json(data, status)
            # A page that could not be made at all (an unknown session, no history) says
            # why in its place; a section that could not be read says so in the page.
            name = "error.html.j2" if "error" in data else template
            return self._html(name, request, {"status": status, **data}, status)

        return self.guarded(handler)

    # -- the one write ---------------------------------------------------------------------

    async def set_rule_active(self, request: Request) -> Response:
        if not self.allow_edits:
            return self.refuse(
                request,
                "this dashboard is read-only: start it with `voyager-brain ui --allow-edits`",
            )
        if not _same_origin(request):
            return self.refuse(
                request,
                "this POST comes from another origin (its Origin or Referer header is not "
                "this dashboard's address): make the change from the dashboard's own page",
            )
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        given = (form.get("csrf") or [""])[0]
        if not hmac.compare_digest(given.encode(), self.csrf.encode()):
            return self.refuse(
                request, "the form's CSRF token is missing or wrong: reload the page"
            )

        active = (form.get("active") or [""])[0]
        if active not in ("0", "1"):
            return self.refuse(request, f"active: expected 0 or 1, got {active!r}", 400)
        try:
            db = self.dash.history()
            if db is None:
                return self.refuse(request, NO_HISTORY, 404)
            rule = set_active(db, int(request.path_params["rule_id"]), active == "1")
        except BrainError as exc:  # no such rule, or history.db cannot be written
            return self.refuse(request, str(exc), 404 if isinstance(exc, RuleError) else 409)
        rule_id = rule.id
        if _wants_json(request):
            return _json(rule.to_dict(), 200)
        return RedirectResponse(f"/rules#rule-{rule_id}", status_code=303)

    async def asset(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in ASSETS:  # a fixed list: never a path from the request
            return Response("not found", status_code=404, media_type="text/plain")
        body = (builtin_template_dir() / "ui" / "static" / name).read_bytes()
        return Response(body, media_type=ASSETS[name])

    async def favicon(self, request: Request) -> Response:
        body = (builtin_template_dir() / "ui" / "static" / "favicon.svg").read_bytes()
        return Response(body, media_type=ASSETS["favicon.svg"], headers=HEADERS)

    async def not_found(self, request: Request) -> Response:
        return self._html(
            "error.html.j2",
            request,
            {"error": f"no page at {request.url.path}", "status": 404},
            404,
        )


#: The series of the rules' chart: one per palette colour.
TRIGGER_SERIES = len(charts.PALETTE)


class PICTURES:
    """The pictures the templates draw, from the pages' data (see `charts`)."""

    @staticmethod
    def budget(b: dict[str, Any]) -> str:
        parts = [(s["name"], s["tokens"]) for s in b["sections"]]
        title = f"Session-start context: {b['tokens']} of {b['budget_tokens']} tokens"
        return charts.stacked_bar(parts, b["budget_tokens"], title=title)

    @staticmethod
    def activity(points: list[Any]) -> str:
        pairs = [(day, count) for day, count in points]
        return charts.activity(pairs, title="Tool calls per day", unit="tool calls")

    @staticmethod
    def triggers(data: dict[str, Any]) -> str:
        """The rules that fired most, a colour each; the rest summed as one series (more
        colours than the palette's could not be told apart)."""
        fired = sorted((r for r in data["rules"] if r["recent"]), key=lambda r: -r["recent"])
        shown, rest = fired[: TRIGGER_SERIES - 1], fired[TRIGGER_SERIES - 1 :]
        if len(rest) == 1:
            shown, rest = fired, []
        series = {f"#{r['id']} {r['description']}": r["per_day"] for r in shown}
        if rest:
            others = [0] * len(data["days"])
            for rule in rest:
                for n, (_, count) in enumerate(rule["per_day"]):
                    others[n] += count
            series[f"{len(rest)} other rules"] = list(zip(data["days"], others, strict=True))
        return charts.daily_bars(series, days=data["days"], title="Rule triggers per day")


#: The names by which this machine reaches a dashboard bound to a loopback address.
LOCAL_NAMES = ("127.0.0.1", "localhost", "[::1]")
#: Addresses that mean every interface: no one name is the dashboard's.
_WILDCARDS = ("0.0.0.0", "::", "")


def allowed_hosts(host: str) -> tuple[str, ...]:
    """The names (lower case, IPv6 in brackets, no port) a request's ``Host`` may give
    for a dashboard listening on `host`: this machine's loopback names, and `host`
    itself when the user chose another address. On every interface (``0.0.0.0``), the
    machine's own names as well: an address of another interface must be given with
    ``--host`` to be answered by it."""
    names = list(LOCAL_NAMES)
    if host in _WILDCARDS:
        import socket

        names += [socket.gethostname(), socket.getfqdn()]
    else:
        names.append(f"[{host}]" if ":" in host else host)
    return tuple(dict.fromkeys(name.lower() for name in names if name))


def _split_host(value: str) -> tuple[str, int | None] | None:
    """(name, port) of a ``Host`` header or an origin's netloc; None when it is not one
    (a user part, a bad port, nothing at all)."""
    try:
        parts = urlsplit("//" + value)
        name, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not name or parts.username is not None or parts.password is not None:
        return None
    if parts.path or parts.query or parts.fragment:
        return None
    return (f"[{name}]" if ":" in name else name.lower()), port


class HostCheck:
    """ASGI middleware: a request whose ``Host`` is not one of `hosts` (with `port`, when
    given) gets 400 and a plain message, before any route or the token is looked at."""

    def __init__(self, app: Any, hosts: tuple[str, ...], port: int | None) -> None:
        self.app, self.hosts, self.port = app, hosts, port

    def allows(self, value: str) -> bool:
        split = _split_host(value)
        if split is None:
            return False
        name, port = split
        return name in self.hosts and (self.port is None or port == self.port)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = ""
        for key, value in scope.get("headers", ()):
            if key == b"host":
                given = value.decode("latin-1")
                break
        if self.allows(given):
            await self.app(scope, receive, send)
            return
        served = ", ".join(h if self.port is None else f"{h}:{self.port}" for h in self.hosts)
        message = (
            f"refused: Host {given!r} is not this dashboard's address ({served}); "
            "open the link `voyager-brain ui` printed\n"
        )
        await Response(message, status_code=400, media_type="text/plain")(scope, receive, send)


def _same_origin(request: Request) -> bool:
    """Whether a POST's ``Origin`` (else its ``Referer``) is the dashboard's own: the
    scheme http and the ``Host`` the request came to (checked by `HostCheck`). True
    when it has neither (a program's request, see the module's docstring)."""
    own = request.headers.get("host", "").lower()
    origin = request.headers.get("origin")
    referer = request.headers.get("referer")
    for value in (origin, referer):
        if value is None:
            continue
        try:
            parts = urlsplit(value)
        except ValueError:
            return False
        if parts.scheme != "http" or parts.netloc.lower() != own:
            return False
    return True


def cookie_name(request: Request) -> str:
    """The token's cookie for the port the request came to: two dashboards on one host
    (each with its token) would otherwise sign each other out."""
    port = request.url.port
    return COOKIE if port is None else f"{COOKIE}_{port}"


def _title(path: str) -> str:
    """The navigation bar's name for the page at `path`."""
    found = [title for href, title in NAV if path == href or path.startswith(href + "/")]
    return found[-1] if found else "voyager-brain"


def _wants_json(request: Request) -> bool:
    return request.query_params.get("format") == "json"


def _json(data: Any, status: int) -> Response:
    body = json.dumps(data, ensure_ascii=False, default=str, indent=1)
    return Response(body, status_code=status, media_type="application/json")


def _link(request: Request) -> Callable[..., str]:
    """``link(path, key=value...)``: a URL with the request's filters, some changed (an
    empty value drops a key; ``page`` restarts unless given)."""

    def link(path: str | None = None, /, **changes: Any) -> str:
        params = {k: v for k, v in request.query_params.items() if k not in ("token", "format")}
        if "page" not in changes:
            params.pop("page", None)
        for key, value in changes.items():
            if value in (None, ""):
                params.pop(key, None)
            else:
                params[key] = str(value)
        query = urlencode(sorted(params.items()))
        return (path or request.url.path) + (f"?{query}" if query else "")

    return link


# -- the pages -------------------------------------------------------------------------


def _overview(request: Request, dash: Dashboard) -> dict[str, Any]:
    return pages.overview(dash)


def _brain(request: Request, dash: Dashboard) -> dict[str, Any]:
    project = dash.project(_text(request, "project"))
    return pages.brain_page(
        dash,
        project,
        kind=_text(request, "type"),
        q=_text(request, "q"),
        page=_int(request, "page"),
    )


def _entry(request: Request, dash: Dashboard) -> dict[str, Any]:
    key = _text(request, "key")
    if not key:
        raise PageError("key: give the entry's heading, like 'Observation — 2026-03-21T14:30:00Z'")
    return pages.entry_history(dash, dash.project(_text(request, "project")), key)


def _state(request: Request, dash: Dashboard) -> dict[str, Any]:
    return pages.state_page(dash, dash.project(_text(request, "project")))


def _memory(request: Request, dash: Dashboard) -> dict[str, Any]:
    project = dash.project(_text(request, "project"))
    return pages.memory_page(dash, project, q=_text(request, "q"), page=_int(request, "page"))


def _history(request: Request, dash: Dashboard) -> dict[str, Any]:
    return activity.history_page(
        dash,
        project=_text(request, "project"),
        tool=_text(request, "tool"),
        decision=_text(request, "decision"),
        page=_int(request, "page"),
    )


def _session(request: Request, dash: Dashboard) -> dict[str, Any]:
    return activity.session_page(
        dash,
        request.path_params["session"],
        tool=_text(request, "tool"),
        decision=_text(request, "decision"),
        page=_int(request, "page"),
    )


def _rules(request: Request, dash: Dashboard) -> dict[str, Any]:
    return activity.rules_page(dash)


def _pipeline(request: Request, dash: Dashboard) -> dict[str, Any]:
    return activity.pipeline_page(dash, dash.project(_text(request, "project")))


def create_app(
    root: Path,
    *,
    token: str,
    allow_edits: bool = False,
    clock: Clock | None = None,
    history_path: str | None = None,
    host: str = "127.0.0.1",
    port: int | None = None,
) -> HostCheck:
    """The dashboard of the project at `root` (and every project the history knows),
    answering only requests that carry `token` and name `host` (or a loopback name) with
    `port` (any port when None) in their ``Host``."""
    dash = Dashboard(root, history_path=history_path, **({"clock": clock} if clock else {}))
    app = _App(dash, token, allow_edits)
    routes = [
        Route("/", app.page("overview.html.j2", _overview)),
        Route("/brain", app.page("brain.html.j2", _brain)),
        Route("/brain/entry", app.page("entry.html.j2", _entry)),
        Route("/state", app.page("state.html.j2", _state)),
        Route("/memory", app.page("memory.html.j2", _memory)),
        Route("/history", app.page("history.html.j2", _history)),
        Route("/history/{session}", app.page("session.html.j2", _session)),
        Route("/rules", app.page("rules.html.j2", _rules)),
        Route(
            "/rules/{rule_id:int}/active",
            app.guarded(app.set_rule_active),
            methods=["POST"],
        ),
        Route("/pipeline", app.page("pipeline.html.j2", _pipeline)),
        Route("/static/{name}", app.guarded(app.asset)),
        # Browsers ask for it on every page that names no icon (a JSON twin, a 403), with
        # or without the cookie: the logo only, so it needs no token.
        Route("/favicon.ico", app.favicon),
    ]
    starlette = Starlette(routes=routes)

    async def not_found(request: Request, exc: Exception) -> Response:
        return await app.guarded(app.not_found)(request)  # type: ignore[no-any-return]

    starlette.add_exception_handler(404, not_found)
    return HostCheck(starlette, allowed_hosts(host), port)
