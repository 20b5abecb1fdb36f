"""The dashboard's routes through Starlette's test client, on a real project (the demo
grown by benchmarks/uidata.py: brain files, memory, a pipeline, a history of 2,000 tool
calls) and on broken ones: every page and its JSON twin, the filters, the token, the
one write and its CSRF check, escaping, bad state shown as a message."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from voyager_brain import BrainEntry, BrainManager
from voyager_brain.guard import db as gdb
from voyager_brain.guard.rules import add_rule
from voyager_brain.ui.app import COOKIE, NAV, create_app

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # benchmarks/ is a folder of the repository, not installed
    sys.path.insert(0, str(ROOT))

from benchmarks.uidata import NOW, populate_small  # noqa: E402

TOKEN = "test-token-0123456789"


@pytest.fixture(scope="module")
def populated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(the project's top, its VOYAGER_HOME), built once for the module."""
    parent = tmp_path_factory.mktemp("populated")
    home = parent / "home"
    before = os.environ.get("VOYAGER_HOME")
    os.environ["VOYAGER_HOME"] = str(home)
    try:
        top = populate_small(parent, home=home)
    finally:
        if before is None:
            del os.environ["VOYAGER_HOME"]
        else:
            os.environ["VOYAGER_HOME"] = before
    gdb.close_all()
    yield top, home


def client_for(
    top: Path, history: Path, *, allow_edits: bool = False, login: bool = True
) -> TestClient:
    app = create_app(
        top, token=TOKEN, allow_edits=allow_edits, clock=lambda: NOW, history_path=str(history)
    )
    client = TestClient(app, base_url="http://127.0.0.1")
    if login:
        client.cookies.set(COOKIE, TOKEN)
    return client


@pytest.fixture
def client(populated: tuple[Path, Path]) -> TestClient:
    top, home = populated
    return client_for(top, home / "history.db")


PAGES = [
    "/",
    "/brain",
    "/brain?type=decision",
    "/brain?q=redis&page=2",
    "/state",
    "/memory",
    "/memory?q=pnpm",
    "/memory?page=3",
    "/history",
    "/history?tool=Bash",
    "/history?decision=block",
    "/history?decision=allow&page=3",
    "/history?project=2",
    "/history/1",
    "/history/1?tool=Read",
    "/rules",
    "/pipeline",
    "/pipeline?project=2",
]


@pytest.mark.parametrize("path", PAGES)
def test_every_page_and_its_json_twin_answer(client: TestClient, path: str) -> None:
    page = client.get(path)
    assert page.status_code == 200, page.text
    assert page.headers["content-type"].startswith("text/html")
    assert "Something went wrong" not in page.text and "Traceback" not in page.text
    assert page.text.count('<nav class="top"') == 1
    twin = client.get(path + ("&" if "?" in path else "?") + "format=json")
    assert twin.status_code == 200
    assert twin.headers["content-type"] == "application/json"
    data = twin.json()
    assert "error" not in data, data


def test_the_json_twin_is_the_same_bytes_every_time(client: TestClient) -> None:
    for path in ("/?format=json", "/brain?format=json", "/history?format=json"):
        assert client.get(path).content == client.get(path).content


def test_every_nav_page_is_linked_from_every_page(client: TestClient) -> None:
    text = client.get("/state").text
    for href, title in NAV:
        assert f">{title}</a>" in text
        assert f'href="{href}' in text


# -- the token ---------------------------------------------------------------------------


def test_no_token_is_403_on_every_route(populated: tuple[Path, Path]) -> None:
    top, home = populated
    anonymous = client_for(top, home / "history.db", login=False)
    for path in [*PAGES, "/static/style.css", "/brain/entry?key=x"]:
        assert anonymous.get(path).status_code == 403, path
    assert anonymous.get("/favicon.ico").status_code == 200  # the logo alone: no data
    assert anonymous.get("/?format=json").json()["error"].startswith("this dashboard needs")
    anonymous.cookies.set(COOKIE, "wrong")
    assert anonymous.get("/").status_code == 403
    assert anonymous.get("/?token=wrong").status_code == 403


def test_the_token_in_the_url_becomes_a_cookie_and_leaves_the_address(
    populated: tuple[Path, Path],
) -> None:
    top, home = populated
    browser = client_for(top, home / "history.db", login=False)
    first = browser.get(f"/brain?type=decision&token={TOKEN}", follow_redirects=False)
    assert first.status_code == 303
    assert first.headers["location"] == "/brain?type=decision"
    cookie = first.headers["set-cookie"]
    assert f"{COOKIE}={TOKEN}" in cookie and "HttpOnly" in cookie
    assert "samesite=strict" in cookie.lower()
    assert browser.get("/brain?type=decision").status_code == 200


def test_scripts_can_send_the_token_in_a_header(populated: tuple[Path, Path]) -> None:
    top, home = populated
    script = client_for(top, home / "history.db", login=False)
    answer = script.get("/rules?format=json", headers={"Authorization": f"token {TOKEN}"})
    assert answer.status_code == 200 and answer.json()["rules"]


def test_every_answer_forbids_inline_scripts_and_framing(client: TestClient) -> None:
    headers = client.get("/").headers
    assert "script-src 'self'" in headers["content-security-policy"]
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "same-origin"


def test_assets_come_from_a_fixed_list_never_a_path(client: TestClient) -> None:
    css = client.get("/static/style.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    assert client.get("/static/app.js").status_code == 200
    icon = client.get("/static/favicon.svg")
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/svg+xml"
    for path in ("/static/base.html.j2", "/static/..%2F..%2Fpyproject.toml", "/static/x.css"):
        assert client.get(path).status_code == 404, path


# -- the one write ---------------------------------------------------------------------------


def _csrf(client: TestClient) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', client.get("/rules").text)
    assert found is not None
    return found.group(1)


def _active(history: Path, rule_id: int) -> int:
    with sqlite3.connect(history) as db:
        return int(db.execute("SELECT active FROM rules WHERE id = ?", (rule_id,)).fetchone()[0])


def test_a_rule_is_disabled_and_enabled_with_allow_edits_and_the_csrf_token(
    populated: tuple[Path, Path],
) -> None:
    top, home = populated
    history = home / "history.db"
    editor = client_for(top, history, allow_edits=True)
    csrf = _csrf(editor)
    assert _active(history, 1) == 1
    done = editor.post(
        "/rules/1/active", data={"csrf": csrf, "active": "0"}, follow_redirects=False
    )
    assert done.status_code == 303 and done.headers["location"] == "/rules#rule-1"
    assert _active(history, 1) == 0
    rules = editor.get("/rules?format=json").json()["rules"]
    assert next(r for r in rules if r["id"] == 1)["active"] == 0
    editor.post("/rules/1/active", data={"csrf": csrf, "active": "1"})
    assert _active(history, 1) == 1


def test_a_post_without_allow_edits_is_403_and_changes_nothing(
    populated: tuple[Path, Path],
) -> None:
    top, home = populated
    history = home / "history.db"
    reader = client_for(top, history)
    assert 'name="csrf"' not in reader.get("/rules").text  # no form to send
    refused = reader.post("/rules/1/active", data={"csrf": "any", "active": "0"})
    assert refused.status_code == 403
    assert "--allow-edits" in refused.text
    assert _active(history, 1) == 1


@pytest.mark.parametrize("csrf", [None, "", "forged"])
def test_a_post_without_the_csrf_token_is_403(
    populated: tuple[Path, Path], csrf: str | None
) -> None:
    top, home = populated
    history = home / "history.db"
    editor = client_for(top, history, allow_edits=True)
    form = {"active": "0"} | ({"csrf": csrf} if csrf is not None else {})
    refused = editor.post("/rules/1/active", data=form)
    assert refused.status_code == 403
    assert "CSRF" in refused.text
    assert _active(history, 1) == 1


def test_a_post_without_the_token_is_403(populated: tuple[Path, Path]) -> None:
    top, home = populated
    history = home / "history.db"
    editor = client_for(top, history, allow_edits=True)
    csrf = _csrf(editor)
    editor.cookies.clear()
    assert editor.post("/rules/1/active", data={"csrf": csrf, "active": "0"}).status_code == 403
    assert _active(history, 1) == 1


def test_a_get_cannot_write(populated: tuple[Path, Path]) -> None:
    top, home = populated
    editor = client_for(top, home / "history.db", allow_edits=True)
    assert editor.get("/rules/1/active?active=0").status_code == 405
    assert _active(home / "history.db", 1) == 1


# -- what the pages show ---------------------------------------------------------------------


def test_the_overview_shows_every_project_the_history_knows(client: TestClient) -> None:
    data = client.get("/?format=json").json()
    names = [card["project"]["name"] for card in data["projects"]]
    assert len(names) == 3 and data["projects"][0]["project"]["here"]
    here = data["projects"][0]
    assert here["summary"]["goal"]
    assert here["last_session"] is not None
    budget = here["budget"]
    assert sum(s["tokens"] for s in budget["sections"]) <= budget["budget_tokens"]
    assert budget["sections"]
    gone = next(c for c in data["projects"] if not c["project"]["exists"])
    assert "folder is gone" in gone["summary"]["error"]
    page = client.get("/").text
    assert page.count('<svg xmlns="http://www.w3.org/2000/svg"') >= 1


def test_the_session_brain_filters_by_type_and_text_newest_first(client: TestClient) -> None:
    data = client.get("/brain?type=decision&format=json").json()
    items = data["entries"]["items"]
    assert items and {e["type"] for e in items} == {"decision"}
    stamps = [e["timestamp"] for e in items]
    assert stamps == sorted(stamps, reverse=True)
    word = items[0]["text"].split()[0]
    found = client.get(f"/brain?q={word}&format=json").json()["entries"]["items"]
    assert found and all(word.casefold() in e["text"].casefold() for e in found)


def test_a_compaction_summary_expands_to_what_it_folded(client: TestClient) -> None:
    data = client.get("/brain?type=reflection&format=json").json()
    summaries = [e for e in data["entries"]["items"] if e["summary"]]
    assert summaries and summaries[0]["folded"]
    assert summaries[0]["headline"].startswith("Summary of")
    page = client.get("/brain?type=reflection").text
    assert "<details><summary>Summary of" in page


def test_each_entry_links_to_its_history_in_git(client: TestClient) -> None:
    entry = client.get("/brain?format=json").json()["entries"]["items"][-1]
    page = client.get("/brain/entry", params={"key": entry["heading"], "format": "json"})
    assert page.status_code == 200
    blame = page.json()["blame"]
    assert blame["present"] and blame["introduced"]["sha"]
    log = page.json()["log"]
    assert [c["sha"] for c in log if "added" in c["ops"]] == [blame["introduced"]["sha"]]
    assert (
        "Commits that changed it"
        in client.get("/brain/entry", params={"key": entry["heading"]}).text
    )


def test_the_project_state_flags_stale_key_files(client: TestClient) -> None:
    data = client.get("/state?format=json").json()
    stale = [f for f in data["key_files"] if f["stale"]]
    assert stale and data["stale_key_files"] == len(stale)
    assert len(stale) < len(data["key_files"])
    severities = [i.get("severity") for i in data["known_issues"]]
    assert severities[0] == "critical"
    page = client.get("/state").text
    assert "stale: missing" in page
    assert 'class="sev sev-"' not in page  # an issue without a severity has no badge


def test_the_memory_ranks_learnings_and_recalls(client: TestClient) -> None:
    data = client.get("/memory?format=json").json()
    scores = [item["score"] for item in data["learnings"]["items"]]
    assert scores == sorted(scores, reverse=True)
    assert {item["decay"] for item in data["learnings"]["items"]} <= {"fresh", "stale"}
    assert data["tasks"] and any(t["overdue"] for t in data["tasks"])
    assert data["preferences"]
    word = max(data["learnings"]["items"][0]["text"].split(), key=len).strip(".,:;()`'\"")
    found = client.get("/memory", params={"q": word, "format": "json"}).json()["recall"]
    assert found["hits"] and word.casefold() in found["hits"][0]["excerpt"].casefold()


def test_the_history_filters_by_project_tool_and_decision(client: TestClient) -> None:
    everything = client.get("/history?format=json").json()
    assert everything["sessions"]["total"] > 0
    assert "Bash" in everything["tools"]
    assert len(everything["activity"]) == 30
    bash = client.get("/history?tool=Bash&format=json").json()["tool_calls"]
    assert bash["total"] > 0 and {c["tool"] for c in bash["items"]} == {"Bash"}
    blocked = client.get("/history?decision=block&format=json").json()["tool_calls"]
    assert blocked["total"] > 0
    for call in blocked["items"]:
        assert call["decision"] == "block"
        assert any(t["action_taken"] == "block" for t in call["triggers"])
    allowed = client.get("/history?decision=allow&format=json").json()["tool_calls"]
    assert all(not c["triggers"] for c in allowed["items"])
    one = everything["projects"][0]["id"]
    mine = client.get(f"/history?project={one}&format=json").json()["sessions"]
    assert mine["items"] and all(s["project_id"] == one for s in mine["items"])


def test_every_tool_call_has_exactly_one_decision(
    client: TestClient, populated: tuple[Path, Path]
) -> None:
    with sqlite3.connect(populated[1] / "history.db") as db:
        calls = db.execute("SELECT COUNT(*) FROM tool_calls").fetchone()[0]
    counted = [
        client.get(f"/history?decision={d}&format=json").json()["tool_calls"]["total"]
        for d in ("block", "warn", "log", "allow")
    ]
    assert sum(counted) == calls and all(counted[:1]) and counted[3]


def test_a_session_shows_messages_calls_rules_and_decisions_in_order(client: TestClient) -> None:
    blocked = client.get("/history?decision=block&format=json").json()["tool_calls"]["items"][0]
    session = client.get(f"/history/{blocked['session_id']}?format=json").json()
    items = session["messages"]["items"]
    stamps = [(m["timestamp"], m["id"]) for m in items]
    assert stamps == sorted(stamps)
    calls = [c for m in items for c in m["tool_calls"]]
    assert calls
    only_blocked = client.get(f"/history/{blocked['session_id']}?decision=block&format=json").json()
    kept = [c for m in only_blocked["messages"]["items"] for c in m["tool_calls"]]
    assert kept and {c["decision"] for c in kept} == {"block"}
    assert all(c["triggers"] for c in kept)


def test_the_rules_page_counts_triggers_per_day(client: TestClient) -> None:
    data = client.get("/rules?format=json").json()
    assert len(data["days"]) == 30 and data["days"][-1] == NOW.date().isoformat()
    fired = [r for r in data["rules"] if r["triggers"]]
    assert fired
    for rule in fired:
        assert sum(n for _, n in rule["per_day"]) == rule["recent"] <= rule["triggers"]
    assert any(not r["active"] for r in data["rules"])
    page = client.get("/rules").text
    assert "Rule triggers per day" in page
    # A colour per rule for the 7 that fired most; the rest are one series.
    recent = [r for r in data["rules"] if r["recent"]]
    assert len(recent) > 8
    assert f"{len(recent) - 7} other rules" in page


def test_a_running_pipeline_refreshes_and_shows_its_stages(client: TestClient) -> None:
    data = client.get("/pipeline?format=json").json()
    pipeline = data["pipeline"]
    assert pipeline["running"]
    assert [s["status"] for s in pipeline["state"]["stages"]] == [
        "completed",
        "completed",
        "running",
    ]
    assert pipeline["state"]["retries"] == 1
    assert pipeline["events"]
    assert '<meta http-equiv="refresh" content="5">' in client.get("/pipeline").text


# -- escaping and bad state ---------------------------------------------------------------------

SCRIPT = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">'


def test_text_from_the_stores_is_escaped(repo: Path, tmp_path: Path) -> None:
    bm = BrainManager(repo)
    bm.load()
    bm.update(BrainEntry("observation", f"Saw {SCRIPT} in a comment"))
    bm.persist()
    history = tmp_path / "history.db"
    db = gdb.open_database(str(history))
    add_rule(db, pattern=r"rm\s", description=f"No {SCRIPT}", tool="Bash", action="block")
    db.close()
    client = client_for(repo, history)
    for path in ("/brain", "/rules"):
        text = client.get(path).text
        assert "<script>window" not in text and "<img src=x" not in text, path
        assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in text, path


def test_a_corrupt_brain_json_is_a_message_naming_file_and_line(repo: Path, tmp_path: Path) -> None:
    bm = BrainManager(repo)
    bm.load()
    bm.update(BrainEntry("observation", "one"))
    bm.persist()
    state = repo / ".voyager" / "brain.json"
    state.write_text('{\n  "version": "1.0.2",\n  "facts": [1, 2,\n}\n', encoding="utf-8")
    before = state.read_bytes()
    client = client_for(repo, tmp_path / "history.db")
    page = client.get("/state")
    assert page.status_code == 200
    assert "brain.json:4: not valid JSON" in page.text and "Traceback" not in page.text
    error = client.get("/state?format=json").json()["error"]
    assert "brain.json:4:" in error
    card = client.get("/?format=json").json()["projects"][0]
    assert "brain.json" in card["summary"]["error"]
    assert state.read_bytes() == before


def test_a_missing_history_says_how_to_start_one_and_is_not_created(
    repo: Path, tmp_path: Path
) -> None:
    history = tmp_path / "none" / "history.db"
    client = client_for(repo, history)
    for path in ("/history", "/rules", "/history/1"):
        page = client.get(path)
        assert page.status_code == 200
        assert "voyager-brain install claude" in page.text
    assert client.get("/?format=json").json()["history"]["exists"] is False
    assert not history.exists()


def test_unknown_things_are_404_with_a_message(client: TestClient) -> None:
    beyond = "9" * 26  # past SQLite's 64-bit integers (an OverflowError once: a 500)
    for path in (
        "/history/999999",
        f"/history/{beyond}",
        f"/history/{'9' * 5000}",  # past the digits int() reads
        f"/brain?project={beyond}",
        "/brain?project=999",
        "/brain?project=../etc",
        "/nowhere",
    ):
        page = client.get(path)
        assert page.status_code == 404, path
        assert "Not found" in page.text
    assert "no session" in client.get("/history/999999?format=json").json()["error"]
    assert client.get("/history?decision=maybe").status_code == 404
    unknown = client.get("/brain/entry?key=Observation — 1999-01-01T00:00:00Z&format=json")
    assert unknown.status_code == 404 and "no entry" in unknown.json()["error"]


def test_another_project_is_named_by_its_history_row(client: TestClient) -> None:
    data = client.get("/?format=json").json()
    other = next(c for c in data["projects"] if c["ref"] and c["project"]["exists"])
    page = client.get(f"/state?project={other['ref']}&format=json").json()
    assert page["project"]["path"] == other["project"]["path"]


def test_json_twins_are_valid_json_with_non_ascii_text(client: TestClient) -> None:
    body = client.get("/brain?format=json").content.decode("utf-8")
    assert json.loads(body)["entries"]["total"] > 0


def test_a_history_that_is_not_a_database_is_named_and_the_brain_pages_still_work(
    repo: Path, tmp_path: Path
) -> None:
    history = tmp_path / "history.db"
    history.write_bytes(b"this is not SQLite\n" * 100)
    client = client_for(repo, history)
    overview = client.get("/?format=json").json()
    assert "not a SQLite database" in overview["history"]["error"]
    assert overview["projects"][0]["summary"]["goal"] is None  # here, still shown
    assert "not a SQLite database" in client.get("/").text
    for path in ("/history", "/rules", "/history/1"):
        page = client.get(path)
        assert page.status_code == 200 and "not a SQLite database" in page.text, path
    assert client.get("/brain").status_code == 200
    assert history.read_bytes() == b"this is not SQLite\n" * 100


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    path=st.sampled_from(["/", "/brain", "/state", "/memory", "/history", "/rules", "/pipeline"]),
    params=st.dictionaries(
        st.sampled_from(["project", "type", "q", "page", "tool", "decision", "key", "format"]),
        st.text(max_size=40),
        max_size=4,
    ),
)
@example(path="/brain", params={"project": "9" * 26})  # past SQLite's integers: a 500 once
@example(path="/memory", params={"page": "9" * 26})
@example(path="/history", params={"page": "9" * 5000})
def test_no_query_makes_a_page_fail(client: TestClient, path: str, params: dict[str, str]) -> None:
    """Whatever the query says, the answer is a page or a one-line error, never a 500."""
    answer = client.get(path, params=params)
    assert answer.status_code in (200, 404), (answer.status_code, answer.text[:500])
    assert "Traceback" not in answer.text and "internal error" not in answer.text


def test_every_page_works_on_the_large_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's size: 10,000 brain entries, 10,000 memory lines, 100,000 tool calls
    (how fast is benchmarks/ui.py's business; here, that every page answers whole)."""
    from benchmarks.uidata import populate

    home = tmp_path / "home"
    monkeypatch.setenv("VOYAGER_HOME", str(home))
    top = populate(tmp_path, home=home)
    gdb.close_all()
    client = client_for(top, home / "history.db")
    sessions = client.get("/history?format=json").json()["sessions"]
    assert sessions["total"] == 200
    for path in [*PAGES, f"/history/{sessions['items'][-1]['id']}"]:
        for twin in ("", "format=json"):
            url = path + (("&" if "?" in path else "?") + twin if twin else "")
            answer = client.get(url)
            assert answer.status_code == 200, url
            assert "Something went wrong" not in answer.text, url
    assert client.get("/brain?format=json").json()["entries"]["total"] > 10_000
    assert client.get("/history?tool=Bash&format=json").json()["tool_calls"]["total"] > 10_000


def test_a_post_for_an_unknown_rule_or_a_bad_value_says_so(populated: tuple[Path, Path]) -> None:
    top, home = populated
    editor = client_for(top, home / "history.db", allow_edits=True)
    csrf = _csrf(editor)
    unknown = editor.post("/rules/9999/active?format=json", data={"csrf": csrf, "active": "0"})
    assert unknown.status_code == 404 and "no rule with id 9999" in unknown.json()["error"]
    bad = editor.post("/rules/1/active", data={"csrf": csrf, "active": "maybe"})
    assert bad.status_code == 400 and "expected 0 or 1" in bad.text
    assert _active(home / "history.db", 1) == 1


def test_a_secret_the_personal_log_keeps_is_not_shown(repo: Path, tmp_path: Path) -> None:
    """redact_secrets = false keeps secrets in the personal log; the page masks them."""
    from voyager_brain.memory.tool import brain_tool

    BrainManager(repo).load()
    (repo / ".voyager").mkdir(exist_ok=True)
    (repo / ".voyager" / "config.toml").write_text("redact_secrets = false\n")
    token = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"
    brain_tool("add", cwd=str(repo), type="preference", text=f"token {token}", category="X")
    home = Path(os.environ["VOYAGER_HOME"])
    assert token in (home / "memory.jsonl").read_text()  # kept, as configured
    client = client_for(repo, tmp_path / "history.db")
    for path in ("/memory", "/memory?format=json"):
        text = client.get(path).text
        assert token not in text and "[REDACTED:github-token]" in text, path
