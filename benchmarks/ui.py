"""The dashboard (`voyager-brain ui`): each page and its JSON twin, served in process by
Starlette's test client, on a project populated by `benchmarks.uidata`; and the first
page a person sees after starting it, in a new process.

Not named after the package (``voyager_brain/ui``): ``python benchmarks/run.py`` puts
this folder first on the path, and the name says what it measures either way.
"""

from __future__ import annotations

import inspect
import json
import sqlite3
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.content import drop_caches
from benchmarks.continuity import personal_folder
from benchmarks.memory import run_child
from benchmarks.plan import UI_PAGE_TARGET_MS, Plan, Results, Row
from benchmarks.session import child_env
from benchmarks.timing import medians_interleaved
from benchmarks.uidata import NOW, populate

TOKEN = "benchmark-token"
#: What the floor fetches: the framework, the token check and the transport, no page.
ASSET = "/static/style.css"

#: A new process: import the app (the server's start, not timed), then time making the
#: app and its first page, the way a browser opens the printed link: the URL with the
#: token, answered by a redirect that sets the cookie, then the page itself.
FIRST_PAGE = """
import json, sys, time
from datetime import datetime
from pathlib import Path
from starlette.testclient import TestClient
from voyager_brain.ui.app import create_app
root, token, url, now, with_clock = sys.argv[1:6]
options = {"clock": lambda: datetime.fromisoformat(now)} if with_clock == "1" else {}
start = time.perf_counter()
client = TestClient(create_app(Path(root), token=token, **options), base_url="http://127.0.0.1")
response = client.get(url + ("&" if "?" in url else "?") + "token=" + token)
elapsed = (time.perf_counter() - start) * 1000
print(json.dumps({"ms": elapsed, "status": response.status_code, "body": response.text[:300]}))
"""


def _sessions(home: Path) -> tuple[int, int, int, int]:
    """The session with the most tool calls and a session of median size: (id, calls)
    each, for the session page's rows."""
    db = sqlite3.connect(home / "history.db")
    try:
        rows = db.execute(
            "SELECT m.session_id, COUNT(*) AS n FROM tool_calls tc"
            " JOIN messages m ON m.id = tc.message_id GROUP BY m.session_id ORDER BY n, 1"
        ).fetchall()
    finally:
        db.close()
    (big, big_n), (mid, mid_n) = rows[-1], rows[len(rows) // 2]
    return int(big), int(big_n), int(mid), int(mid_n)


def _gateway(home: Path) -> int:
    db = sqlite3.connect(home / "history.db")
    try:
        return int(db.execute("SELECT id FROM projects WHERE name = 'api-gateway'").fetchone()[0])
    finally:
        db.close()


def _json_twin(url: str) -> str:
    return url + ("&" if "?" in url else "?") + "format=json"


def _getter(client: Any, url: str) -> Callable[[], None]:
    """A GET of `url` that fails loudly, naming the URL and what the page said."""

    def get() -> None:
        response = client.get(url)
        if response.status_code != 200:
            raise RuntimeError(f"GET {url}: {response.status_code}: {response.text[:500]}")

    return get


def _check_json(client: Any, url: str) -> None:
    """The JSON twin answers with data, not with a page-wide error."""
    response = client.get(url)
    data = response.json() if response.status_code == 200 else {"error": response.text[:500]}
    if isinstance(data, dict) and "error" in data:
        raise RuntimeError(f"GET {url}: {response.status_code}: {data['error']}")


def bench_ui(results: Results, plan: Plan, parent: Path, pycache: Path) -> None:
    """Each page and its JSON twin beside the same client's GET of a static asset, and
    the first page of a new process, on the populated project."""
    try:
        from starlette.testclient import TestClient

        from voyager_brain.ui.app import create_app
    except ImportError as exc:
        print(f"skipping the dashboard ({exc}): pip install 'voyager-brain[ui]' httpx2")
        return
    folder = parent / "ui"
    folder.mkdir()
    home = folder / "home"
    with personal_folder(home):
        print(
            f"populating the dashboard's project: {plan.ui_entries:,} entries, "
            f"{plan.ui_learnings:,} learnings, {plan.ui_tool_calls:,} tool calls ...",
            flush=True,
        )
        top = populate(
            folder,
            home=home,
            entries=plan.ui_entries,
            learnings=plan.ui_learnings,
            tool_calls=plan.ui_tool_calls,
        )
        _bench_pages(results, plan, top, home, create_app, TestClient)
        _bench_first_page(results, plan, top, pycache, create_app)


def _clock_option(create_app: Callable[..., Any]) -> dict[str, Any]:
    """The populated project's present as the app's clock, when it takes one: its
    charts and due dates then cover the generated 30 days, as a live history would."""
    if "clock" in inspect.signature(create_app).parameters:
        return {"clock": lambda: NOW}
    return {}


def _bench_pages(
    results: Results,
    plan: Plan,
    top: Path,
    home: Path,
    create_app: Callable[..., Any],
    test_client: Callable[..., Any],
) -> None:
    size = f"{plan.ui_entries:,} entries, {plan.ui_tool_calls:,} calls"
    big, big_n, mid, mid_n = _sessions(home)
    gateway = _gateway(home)
    pages = [
        ("/", "overview"),
        ("/brain", "brain.md"),
        ("/state", "brain.json"),
        ("/memory", "memory"),
        ("/memory?q=retry+loop", "memory search"),
        ("/history", "sessions"),
        (f"/history?project={gateway}", "another project's sessions"),
        ("/history?decision=block", "blocked calls"),
        (f"/history/{mid}", f"a median session ({mid_n:,} calls)"),
        (f"/history/{big}", f"the largest session ({big_n:,} calls)"),
        ("/rules", "rules"),
        ("/pipeline", "pipeline"),
    ]
    app = create_app(top / "src", token=TOKEN, **_clock_option(create_app))
    # One client for every request, its event loop kept between them (as a server's).
    with test_client(app, base_url="http://127.0.0.1") as client:
        # The link `voyager-brain ui` prints: its token becomes the cookie of later requests.
        _getter(client, f"/?token={TOKEN}")()
        if "voyager_ui_token" not in client.cookies:
            raise RuntimeError("GET /?token=...: no voyager_ui_token cookie was set")
        print(f"the dashboard: {len(pages)} pages and their JSON twins ...", flush=True)
        _time_pages(results, plan, client, pages, size)


def _time_pages(
    results: Results, plan: Plan, client: Any, pages: list[tuple[str, str]], size: str
) -> None:
    floor = _getter(client, ASSET)
    runs = plan.ui_runs
    for url, what in pages:
        for shown, twin in ((url, False), (_json_twin(url), True)):
            if twin:
                _check_json(client, shown)
            fetch = _getter(client, shown)
            fetch()  # warm-up: the app's caches of this project filled, as after a first visit
            ours, bare = medians_interleaved(runs, [(fetch, None), (floor, None)])
            results.add(
                "ui",
                Row(
                    f"GET {shown} ({what}{', JSON' if twin else ''})",
                    size,
                    runs,
                    ours,
                    bare,
                    f"<= {UI_PAGE_TARGET_MS:.0f} ms",
                    ours <= UI_PAGE_TARGET_MS,
                ),
            )


def _first_page(top: Path, url: str, env: dict[str, str], with_clock: bool, drop: bool) -> float:
    """Milliseconds a new process takes to make the app and answer its first `url`."""
    if drop:
        drop_caches(top)  # nothing on disk from an earlier run either
    args = [str(top / "src"), TOKEN, url, NOW.isoformat(), "1" if with_clock else "0"]
    out = run_child([sys.executable, "-c", FIRST_PAGE, *args], env, top)
    answer = json.loads(out.strip().splitlines()[-1])
    if answer["status"] != 200:
        raise RuntimeError(f"first GET {url}: {answer['status']}: {answer['body']}")
    return float(answer["ms"])


def _bench_first_page(
    results: Results, plan: Plan, top: Path, pycache: Path, create_app: Callable[..., Any]
) -> None:
    env = child_env(pycache)
    with_clock = bool(_clock_option(create_app))
    _first_page(top, ASSET, env, with_clock, drop=False)  # warm-up: bytecode cached
    _first_page(top, "/", env, with_clock, drop=False)
    print("the dashboard: its first page in a new process ...", flush=True)
    floors, ours = [], []
    for _ in range(plan.ui_cold_runs):
        floors.append(_first_page(top, ASSET, env, with_clock, drop=True))
        ours.append(_first_page(top, "/", env, with_clock, drop=True))
    first = statistics.median(ours)
    results.add(
        "ui",
        Row(
            "first GET / of a new app in a new process, no caches",
            f"{plan.ui_entries:,} entries, {plan.ui_tool_calls:,} calls",
            plan.ui_cold_runs,
            first,
            statistics.median(floors),
        ),
    )
