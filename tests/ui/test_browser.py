"""The dashboard in a real browser: `voyager-brain ui` started as a real process on a
populated project (benchmarks/uidata.py), driven by Debian's headless Chromium through the
system chromedriver (nothing is downloaded). Each test is one thing a person does: open
the printed link, follow the navigation, filter, search, expand, enable and disable a rule;
and what an attacker tries: a page without the token, a POST without the right to edit,
a script hidden in the data.

One browser and one dashboard of each kind serve the whole module (a start costs about a
second). Without /usr/bin/chromium or /usr/bin/chromedriver the module is skipped, unless
VOYAGER_BROWSER_TESTS=required (as .ci/run sets it): then it fails.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlparse

import pytest
from conftest import ROOT, docs_generator, run_cli
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.wait import WebDriverWait

from voyager_brain.guard import db as gdb
from voyager_brain.ui.app import COOKIE

if str(ROOT) not in sys.path:  # benchmarks/ is a folder of the repository, not installed
    sys.path.insert(0, str(ROOT))

from benchmarks.uidata import populate_small

# The pieces docs/make_screenshots.py uses too: the isolated environment, the server as a
# process, the browser with the system driver.
screens = docs_generator("make_screenshots")

MISSING = screens.missing()
REQUIRED = os.environ.get("VOYAGER_BROWSER_TESTS") == "required"
pytestmark = pytest.mark.skipif(
    bool(MISSING) and not REQUIRED,
    reason=f"needs Debian's chromium and chromium-driver ({', '.join(MISSING)} missing): "
    "sudo apt-get install chromium chromium-driver",
)

#: The navigation bar: the link's text, its page's path.
NAV = (
    ("Overview", "/"),
    ("Session brain", "/brain"),
    ("Project state", "/state"),
    ("Memory", "/memory"),
    ("History", "/history"),
    ("Rules", "/rules"),
    ("Pipeline", "/pipeline"),
)
#: What an error page says in its h1 (templates/ui/error.html.j2).
ERRORS = ("Forbidden", "Not found", "Something went wrong")
PAYLOAD = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">'
#: The parts of PAYLOAD that survive JSON (a tool call's input is stored as JSON: the
#: quotes of onerror="..." come back as \").
SCRIPT, IMAGE = "<script>window.__pwned = 1</script>", "<img src=x onerror="
WAIT = 15  # seconds: a 2-core CI machine under load


def _require_browser() -> None:
    if MISSING:  # reached only when VOYAGER_BROWSER_TESTS=required: no silent skip in CI
        pytest.fail(
            f"VOYAGER_BROWSER_TESTS=required, but {', '.join(MISSING)} is missing: "
            "apt-get install chromium chromium-driver"
        )


@dataclass(frozen=True)
class World:
    """A project and the VOYAGER_HOME (history.db, personal memory) that goes with it."""

    top: Path
    home: Path

    def row(self, sql: str, *params: object) -> tuple[Any, ...]:
        """One row of a query of history.db."""
        db = sqlite3.connect(self.home / "history.db")
        try:
            return tuple(db.execute(sql, params).fetchone())
        finally:
            db.close()


# -- the project, the dashboards, the browser ---------------------------------------------


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    """benchmarks/uidata.py's small project, built once for the module, with its own
    VOYAGER_HOME (the autouse `isolated_env` is per test; this outlives it)."""
    parent = tmp_path_factory.mktemp("dashboard")
    home = parent / "home"
    with pytest.MonkeyPatch.context() as mp:
        for name, value in screens.environment(home).items():
            mp.setenv(name, value)
        mp.delenv("VOYAGER_MEMORY_PATH", raising=False)
        top = populate_small(parent, home=home)
    gdb.close_all()  # populate's connections: the server has its own
    return World(top, home)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> World:
    """A fresh project whose brain entry, rule, prompt, tool call input and output all
    hold PAYLOAD, written the ways an agent writes them: the CLI and Claude Code's hooks."""
    parent = tmp_path_factory.mktemp("hostile")
    home, top = parent / "home", parent / "project"
    env = screens.environment(home)
    top.mkdir()
    for args in (("init", "-q", "-b", "main"), ("commit", "-q", "--allow-empty", "-m", "initial")):
        subprocess.run(["git", *args], cwd=top, env={**os.environ, **env}, check=True)

    def cli(*args: str, stdin: str | None = None) -> str:
        done = run_cli(*args, cwd=top, input=stdin, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    cli("add", "observation", PAYLOAD)
    # warn, not block: the call then runs, and its output is recorded too.
    rule = ("--pattern", "pwned", "--description", PAYLOAD, "--tool", "Bash", "--action", "warn")
    cli("rules", "add", *rule)
    session = {"session_id": "5e55-hostile", "cwd": str(top), "transcript_path": os.devnull}
    call = {"tool_name": "Bash", "tool_input": {"command": f"echo '{PAYLOAD}'  # pwned"}}
    events = (
        ("user-prompt-submit", {"hook_event_name": "UserPromptSubmit", "prompt": PAYLOAD}),
        ("pre-tool-use", {"hook_event_name": "PreToolUse", **call, "tool_use_id": "toolu_1"}),
        (
            "post-tool-use",
            {
                "hook_event_name": "PostToolUse",
                **call,
                "tool_use_id": "toolu_1",
                "tool_response": {"stdout": PAYLOAD, "stderr": "", "interrupted": False},
            },
        ),
    )
    for event, payload in events:
        cli("hook", "claude", event, stdin=json.dumps({**session, **payload}))
    made = World(top.resolve(), home)
    stored = made.row("SELECT COUNT(*), MAX(input), MAX(output) FROM tool_calls")
    assert stored[0] == 1 and SCRIPT in stored[1] and stored[2] == PAYLOAD, stored
    assert made.row("SELECT COUNT(*) FROM rule_triggers") == (1,)
    return made


def _serve(world: World, tmp_path_factory: pytest.TempPathFactory, *options: str) -> Iterator[Any]:
    served = screens.start_dashboard(world.top, world.home, tmp_path_factory.mktemp("ui"), *options)
    try:
        yield served
    finally:
        served.stop()


@pytest.fixture(scope="module")
def served(world: World, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """`voyager-brain ui --no-browser --port 0` on the populated project: read-only."""
    yield from _serve(world, tmp_path_factory)


@pytest.fixture(scope="module")
def editable(world: World, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The same project's dashboard started with --allow-edits."""
    yield from _serve(world, tmp_path_factory, "--allow-edits")


@pytest.fixture(scope="module")
def hostile_served(hostile: World, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from _serve(hostile, tmp_path_factory)


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    _require_browser()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SE_OFFLINE", "true")  # Selenium Manager, were it asked, downloads nothing
        chrome = screens.chromium(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield chrome
    finally:
        chrome.quit()


def _page(url: str) -> tuple[str, list[tuple[str, str]]]:
    """Which page an address shows: its path and query, the token aside (a JSON twin
    keeps it in its address; a page is redirected to drop it)."""
    parts = urlparse(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    return parts.path, [(k, v) for k, v in query if k != "token"]


class Browser:
    """The module's Chromium, and which dashboard its cookie belongs to.

    Every dashboard here listens on 127.0.0.1, and cookies do not tell ports apart: the
    cookie one dashboard sets replaces another's. Opening a page of another dashboard
    than the last one goes through the link with the token again."""

    def __init__(self, driver: WebDriver) -> None:
        self.driver = driver
        self.on: Any = None

    def open(self, served: Any, path: str = "/") -> None:
        """Load `path`, and wait until the browser shows it. Through the link with the
        token, the server answers with a redirect to the same page without it; under
        load, chromedriver's `get` could return while that second load was still under
        way, and a test then read an empty document (found by the suite on two workers)."""
        url = served.base + path if self.on is served else served.with_token(path)
        self.driver.get(url)
        self.on = served
        wanted = _page(served.base + path)
        WebDriverWait(self.driver, WAIT).until(
            lambda d: (
                _page(d.current_url) == wanted
                and d.execute_script("return document.readyState") == "complete"
            )
        )

    def find(self, css: str) -> WebElement:
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def all(self, css: str) -> list[WebElement]:
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def h1(self) -> str:
        return self.find("h1").text

    def body(self) -> str:
        return self.find("body").text

    def path(self) -> str:
        return urlparse(self.driver.current_url).path

    def params(self) -> dict[str, str]:
        """The address's query, without the empty fields a form sends."""
        return dict(parse_qsl(urlparse(self.driver.current_url).query))

    def new_page_after(self, action: Callable[[], object]) -> None:
        """`action()` (a click, a choice that submits a form), then wait for the page it
        loads: the old document gone, the new one complete."""
        old = self.find("html")
        action()
        wait = WebDriverWait(self.driver, WAIT)
        wait.until(expected_conditions.staleness_of(old))
        wait.until(lambda d: d.execute_script("return document.readyState") == "complete")

    def choose(self, select: str, *, text: str | None = None, value: str | None = None) -> None:
        """Pick an option of the filter `select` (its name): app.js submits the form."""
        menu = Select(self.find(f"select[name={select}]"))
        if text is not None:
            self.new_page_after(lambda: menu.select_by_visible_text(text))
        else:
            assert value is not None
            self.new_page_after(lambda: menu.select_by_value(value))

    def json_twin(self, served: Any, path: str) -> Any:
        """The page's ``?format=json`` twin as the browser shows it (with its cookie)."""
        self.open(served, path + ("&" if "?" in path else "?") + "format=json")
        return json.loads(self.find("pre").text)

    def console_errors(self) -> list[str]:
        """Errors logged since the last call (CSP refusals, assets that failed)."""
        return [
            entry["message"]
            for entry in self.driver.get_log("browser")
            if entry["level"] == "SEVERE"
        ]


@pytest.fixture
def browser(driver: WebDriver) -> Browser:
    """The module's Chromium on a blank page: nothing a test before left loading (a form
    sent, a page that refreshes itself) reaches this one."""
    driver.get("about:blank")
    return Browser(driver)


def _count(browser: Browser) -> int:
    """The "N in all" of a paged list."""
    found = re.match(r"(\d+) in all", browser.find("p.count").text)
    assert found is not None, browser.find("p.count").text
    return int(found[1])


def _cookie(url: str) -> str:
    """The name of the token's cookie of the dashboard at `url` (one per port)."""
    return f"{COOKIE}_{urlparse(url).port}"


def _post(url: str, form: dict[str, str], cookie: str | None) -> tuple[int, str]:
    """A form POST as another program on this machine sends it (no proxy: loopback)."""
    request = urllib.request.Request(
        url,
        data=urlencode(form).encode(),
        method="POST",
        headers={"Cookie": f"{_cookie(url)}={cookie}"} if cookie else {},
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=WAIT) as answer:
            return int(answer.status), answer.read().decode()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.read().decode()


# -- the link, the token, the navigation ------------------------------------------------------


def test_printed_link_opens_the_overview_and_the_nav_reaches_every_page(
    served: Any, world: World, browser: Browser
) -> None:
    assert len(served.printed) == 3 and served.printed[1].strip() == served.url
    assert served.printed[0] == f"voyager-brain ui: {world.top}"
    assert served.printed[2].startswith("Open the link above")
    driver = browser.driver
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})  # as a first visit
    driver.get(served.url)
    browser.on = served
    # The token moved from the address bar to a cookie scripts cannot read.
    assert driver.current_url == served.base + "/"
    assert browser.h1() == "Overview"
    cookie = driver.get_cookie(_cookie(served.base))
    assert cookie is not None and cookie["value"] == served.token
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert served.token not in driver.execute_script("return document.cookie")
    links = browser.all("nav.top a")
    assert [a.text for a in links] == [title for title, _ in NAV]
    assert browser.console_errors() == []
    for title, path in NAV:
        link = browser.find("nav.top").find_element(By.LINK_TEXT, title)
        browser.new_page_after(link.click)
        assert browser.path() == path
        assert browser.h1().startswith(title), browser.body()
        assert driver.title == f"{title} · voyager-brain"
        current = browser.find("nav.top a[aria-current=page]")
        assert current.text == title
        assert not any(error in browser.body() for error in ERRORS), browser.body()
        assert browser.console_errors() == [], path


def test_bare_link_in_a_fresh_browser_is_forbidden(served: Any, tmp_path: Path) -> None:
    _require_browser()
    fresh = screens.chromium(tmp_path / "profile")
    try:
        for url in (served.base + "/", served.base + "/?token=wrong" + served.token[5:]):
            fresh.get(url)
            assert fresh.find_element(By.TAG_NAME, "h1").text == "Forbidden"
            assert "needs its access token" in fresh.find_element(By.TAG_NAME, "body").text
            assert fresh.get_cookie(_cookie(served.base)) is None
        fresh.get(served.base + "/history?format=json")
        assert "access token" in json.loads(fresh.find_element(By.TAG_NAME, "pre").text)["error"]
    finally:
        fresh.quit()


# -- memory, history, session brain --------------------------------------------------------


def test_memory_recall_search_shows_the_hits(served: Any, browser: Browser) -> None:
    browser.open(served, "/memory")
    assert browser.all("section.recall") == []
    box = browser.find("form.filters input[name=q]")
    box.send_keys("nginx")
    browser.new_page_after(browser.find("form.filters button[type=submit]").click)
    assert browser.params() == {"q": "nginx"}
    assert browser.find("section.recall h2").text == "Recall: “nginx”"
    hits = [row.text for row in browser.all("section.recall tbody tr")]
    assert any("behind nginx read X-Real-IP" in hit for hit in hits), hits
    assert all("nginx" in hit.casefold() for hit in hits), hits


def test_history_tool_filter_lists_only_that_tools_calls(
    served: Any, world: World, browser: Browser
) -> None:
    browser.open(served, "/history")
    assert browser.find("h2").text == "Sessions"
    browser.choose("tool", text="Read")  # app.js submits the form
    assert browser.path() == "/history" and browser.params() == {"tool": "Read"}
    assert browser.find("main h2").text == "Tool calls"
    rows = browser.all("table.calls tbody tr")
    assert rows and {row.find_elements(By.TAG_NAME, "td")[1].text for row in rows} == {"Read"}
    reads, every = world.row("SELECT SUM(tool = 'Read'), COUNT(*) FROM tool_calls")
    assert _count(browser) == reads < every


def test_history_decision_filter_lists_only_blocked_calls(
    served: Any, world: World, browser: Browser
) -> None:
    browser.open(served, "/history")
    browser.choose("decision", text="block")
    assert browser.params() == {"decision": "block"}
    rows = browser.all("table.calls tbody tr")
    assert rows and {row.get_attribute("class") for row in rows} == {"decision-block"}
    assert {row.find_element(By.CSS_SELECTOR, ".decision").text.lower() for row in rows} == {
        "block"
    }
    (blocked,) = world.row(
        "SELECT COUNT(DISTINCT tool_call_id) FROM rule_triggers WHERE action_taken = 'block'"
    )
    assert _count(browser) == blocked


def _messages(row: WebElement) -> int:
    """A sessions table row's messages (columns: Started, Project, Task, Status,
    Messages, Tool calls, Rules fired)."""
    return int(row.find_elements(By.TAG_NAME, "td")[4].text)


def _calls(row: WebElement) -> int:
    return int(row.find_elements(By.TAG_NAME, "td")[5].text)


def test_history_session_shows_its_messages_and_tool_calls(
    served: Any, world: World, browser: Browser
) -> None:
    browser.open(served, "/history")
    # The newest session with tool calls whose messages fit on one page (50).
    row = next(
        r for r in browser.all("table.sessions tbody tr") if _calls(r) > 0 and _messages(r) <= 50
    )
    link = row.find_element(By.TAG_NAME, "a")
    session = int(link.get_attribute("href").rsplit("/", 1)[1])
    browser.new_page_after(link.click)
    assert browser.path() == f"/history/{session}"
    assert browser.h1().startswith(f"Session {session}")
    said = re.search(r"(\d+) messages, (\d+) tool calls", browser.body())
    assert said is not None
    messages, calls = world.row(
        "SELECT COUNT(DISTINCT m.id), COUNT(tc.id) FROM messages m"
        " LEFT JOIN tool_calls tc ON tc.message_id = m.id WHERE m.session_id = ?",
        session,
    )
    assert (int(said[1]), int(said[2])) == (messages, calls)
    assert _count(browser) == len(browser.all("li.message")) == messages
    assert len(browser.all("div.call")) == calls > 0
    assert all(c.find_element(By.CSS_SELECTOR, "pre.input").text for c in browser.all("div.call"))


def test_session_brain_type_and_text_filters_and_a_compaction_summary(
    served: Any, browser: Browser
) -> None:
    browser.open(served, "/brain")
    option = browser.find("select[name=type] option[value=reflection]").text
    reflections = int(re.fullmatch(r"Reflection \((\d+)\)", option)[1])  # type: ignore[index]
    browser.choose("type", value="reflection")
    assert browser.params() == {"type": "reflection"}
    entries = browser.all("ol.timeline li.entry")
    assert _count(browser) == reflections == len(entries)
    assert all("entry-reflection" in e.get_attribute("class").split() for e in entries)

    box = browser.find("form.filters input[name=q]")
    box.send_keys("Summary of")
    browser.new_page_after(browser.find("form.filters button[type=submit]").click)
    assert browser.params() == {"type": "reflection", "q": "Summary of"}
    (entry,) = browser.all("ol.timeline li.entry")
    assert "summary" in entry.get_attribute("class").split()
    # What the summary folded is hidden until its <details> is opened.
    details = entry.find_element(By.TAG_NAME, "details")
    folded = details.find_elements(By.CSS_SELECTOR, "ul.folded li")
    assert details.get_attribute("open") is None
    assert folded and not any(line.is_displayed() for line in folded)
    details.find_element(By.TAG_NAME, "summary").click()
    assert details.get_attribute("open") is not None
    assert all(line.is_displayed() for line in folded)
    shown = [line.text for line in folded]
    headline = details.find_element(By.TAG_NAME, "summary").text
    twin = browser.json_twin(served, "/brain?type=reflection&q=Summary+of")
    (data,) = twin["entries"]["items"]
    assert data["summary"] and headline == data["headline"]
    assert shown == [line.strip() for line in data["folded"]]


# -- rules ------------------------------------------------------------------------------------


def _rule_row(browser: Browser, description: str) -> WebElement:
    return next(
        row
        for row in browser.all("table.rules tbody tr")
        if row.find_elements(By.TAG_NAME, "td")[1].text.startswith(description)
    )


def _active(browser: Browser, served: Any, rule_id: int) -> int:
    (rule,) = [r for r in browser.json_twin(served, "/rules")["rules"] if r["id"] == rule_id]
    return int(rule["active"])


def test_rules_disable_and_enable_with_allow_edits(editable: Any, browser: Browser) -> None:
    assert editable.printed[3].startswith("Edits allowed")
    browser.open(editable, "/rules")
    assert "read-only" not in browser.find("p.meta").text
    row = _rule_row(browser, "No force pushes")
    rule_id = int(row.get_attribute("id").removeprefix("rule-"))
    button = row.find_element(By.CSS_SELECTOR, "button.toggle")
    assert (button.text, button.get_attribute("aria-pressed")) == ("Disable", "true")

    browser.new_page_after(button.click)
    assert browser.path() == "/rules"
    assert urlparse(browser.driver.current_url).fragment == f"rule-{rule_id}"
    row = browser.find(f"tr#rule-{rule_id}")
    button = row.find_element(By.CSS_SELECTOR, "button.toggle")
    assert (button.text, button.get_attribute("aria-pressed")) == ("Enable", "false")
    assert row.get_attribute("class") == "inactive"
    assert _active(browser, editable, rule_id) == 0

    browser.open(editable, "/rules")
    button = browser.find(f"tr#rule-{rule_id} button.toggle")
    browser.new_page_after(button.click)
    assert browser.find(f"tr#rule-{rule_id} button.toggle").text == "Disable"
    assert browser.find(f"tr#rule-{rule_id}").get_attribute("class") == "active"
    assert _active(browser, editable, rule_id) == 1


def test_rules_post_needs_the_token_and_the_forms_csrf(editable: Any, browser: Browser) -> None:
    browser.open(editable, "/rules")
    row = _rule_row(browser, "No sudo")
    rule_id = int(row.get_attribute("id").removeprefix("rule-"))
    csrf = row.find_element(By.CSS_SELECTOR, "input[name=csrf]").get_attribute("value")
    url = f"{editable.base}/rules/{rule_id}/active"
    status, body = _post(url, {"csrf": "forged", "active": "0"}, editable.token)
    assert status == 403 and "CSRF" in body
    status, body = _post(url, {"csrf": csrf, "active": "0"}, None)
    assert status == 403 and "access token" in body
    assert _active(browser, editable, rule_id) == 1


def test_rules_read_only_has_no_buttons_and_refuses_a_post(served: Any, browser: Browser) -> None:
    browser.open(served, "/rules")
    assert "read-only" in browser.find("p.meta").text
    assert browser.all("button.toggle") == [] and browser.all("form[method=post]") == []
    row = _rule_row(browser, "No sudo")
    assert row.find_elements(By.TAG_NAME, "td")[-1].text == "yes"
    rule_id = int(row.get_attribute("id").removeprefix("rule-"))
    status, body = _post(
        f"{served.base}/rules/{rule_id}/active", {"csrf": "x", "active": "0"}, served.token
    )
    assert status == 403 and "read-only" in body
    assert _active(browser, served, rule_id) == 1


# -- scripts in the data ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param("/brain", PAYLOAD, id="brain-entry"),
        pytest.param("/memory?q=pwned", SCRIPT, id="recall-hit"),
        pytest.param("/rules", PAYLOAD, id="rule-description"),
        pytest.param("/", PAYLOAD, id="overview-last-session-task"),
        pytest.param("/history", PAYLOAD, id="session-task"),
        pytest.param("/history?tool=Bash", SCRIPT, id="tool-call-input"),
        pytest.param("/history/1", PAYLOAD, id="session-prompt-input-output-trigger"),
    ],
)
def test_a_script_in_the_data_is_shown_as_text_and_never_runs(
    hostile_served: Any, browser: Browser, path: str, expected: str
) -> None:
    browser.open(hostile_served, path)
    for details in browser.all("details"):  # a tool call's output is folded away
        details.find_element(By.TAG_NAME, "summary").click()
    main = browser.find("main").text
    assert not any(error in browser.h1() for error in ERRORS), main
    assert expected in main and IMAGE in main
    assert browser.driver.execute_script("return window.__pwned") is None
    scripts = [s.get_attribute("src") for s in browser.all("script")]
    assert scripts == [hostile_served.base + "/static/app.js"]
    assert browser.all("main img") == []
    if path.startswith("/history/"):
        # The prompt, the call's input, its output and the rule that fired: all text.
        assert PAYLOAD in browser.find("li.message pre.text").text
        assert SCRIPT in browser.find("div.call pre.input").text
        assert browser.find("div.call pre.output").text == PAYLOAD
        assert PAYLOAD in browser.find("div.call p.trigger").text
    assert browser.console_errors() == [], path


# -- the pipeline ---------------------------------------------------------------------------


def test_pipeline_page_shows_the_stages_and_refreshes_while_running(
    served: Any, browser: Browser
) -> None:
    browser.open(served, "/pipeline")
    stages = browser.all("ol.stages li.stage")
    roles = [s.find_element(By.CSS_SELECTOR, ".role").get_attribute("textContent") for s in stages]
    states = [s.find_element(By.CSS_SELECTOR, ".status").text for s in stages]
    assert roles == ["architect", "builder", "reviewer"]
    assert states == ["completed", "completed", "running"]
    assert "current" in stages[2].get_attribute("class").split()
    assert browser.find("p.meta").text.startswith("running · this page refreshes")
    (refresh,) = browser.all('head meta[http-equiv="refresh"]')
    assert refresh.get_attribute("content") == "5"
    # The browser really reloads it: a mark left on this document disappears.
    browser.driver.execute_script("window.__beforeRefresh = 1")
    WebDriverWait(browser.driver, WAIT).until(
        lambda d: d.execute_script("return window.__beforeRefresh") is None
    )
    assert browser.path() == "/pipeline" and browser.all("ol.stages li.stage")


def test_pipeline_page_without_a_running_pipeline_does_not_refresh(
    hostile_served: Any, served: Any, browser: Browser
) -> None:
    browser.open(hostile_served, "/pipeline")
    assert "No pipeline in this project yet" in browser.body()
    assert browser.all('meta[http-equiv="refresh"]') == []
    browser.open(served, "/brain")  # a page of a project whose pipeline runs
    assert browser.all('meta[http-equiv="refresh"]') == []
