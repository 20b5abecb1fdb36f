"""Write docs/ui/*.png, a picture of each page of the dashboard: python docs/make_screenshots.py

A large project is populated in a temporary folder (`benchmarks.uidata.populate_small`),
`voyager-brain ui` is started on it as a real process, and Debian's chromium (driven by
the system chromedriver, nothing downloaded) saves each page 1280 pixels wide. The
generated text holds Japanese and emoji on purpose: without fonts-noto-cjk and
fonts-noto-color-emoji installed they come out as empty boxes.

The browser tests (tests/ui/test_browser.py) load this script for the same pieces:
`environment`, `start_dashboard`, `chromium`.
"""

from __future__ import annotations

import base64
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "ui"
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
#: Headless, and quiet: no sandbox (containers run as root), no GPU, no /dev/shm (small
#: in containers), and nothing Chromium would fetch or sync on its own.
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    # Straight to 127.0.0.1, whatever proxy the environment names.
    "--no-proxy-server",
)
WIDTH = 1280
#: The tallest picture: a page longer than this is cut (the first screens tell enough).
MAX_HEIGHT = 1400
#: The printed link: ``http://127.0.0.1:PORT/?token=...``.
LINK = re.compile(r"http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]+)")


def missing() -> list[str]:
    """What the browser needs and this machine lacks."""
    return [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.is_file()]


def environment(home: Path) -> dict[str, str]:
    """The variables that keep a run away from the person's files: the personal memory,
    history.db and caches in `home`, and a git that ignores the machine's config (a
    commit signed by a key that asks for a passphrase would hang populate)."""
    env = {
        "VOYAGER_HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        # Selenium Manager must never download a driver: the system one is given.
        "SE_OFFLINE": "true",
    }
    for role in ("AUTHOR", "COMMITTER"):
        env[f"GIT_{role}_NAME"] = "Dana Developer"
        env[f"GIT_{role}_EMAIL"] = "dana@example.invalid"
    return env


def _process_env(home: Path) -> dict[str, str]:
    env = {**os.environ, **environment(home)}
    # The personal log would leave `home`; a pipeline's role would change what runs.
    for name in list(env):
        if name == "VOYAGER_MEMORY_PATH" or name.startswith("VOYAGER_PIPELINE_"):
            del env[name]
    env.pop("VOYAGER_SUBAGENT", None)
    return env


class Served:
    """A running `voyager-brain ui`: its process, what it printed, and its link.

    (A plain class: the tests load this script by its path, not as an imported module,
    and a dataclass needs its module imported.)"""

    def __init__(
        self, process: subprocess.Popen[bytes], printed: list[str], found: re.Match[str]
    ) -> None:
        self.process = process
        self.printed = printed
        self.url = found[0]
        self.port = int(found[1])
        self.token = found[2]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def with_token(self, path: str = "/") -> str:
        """`path` on this server with the token, as the printed link carries it."""
        return f"{self.base}{path}{'&' if '?' in path else '?'}token={self.token}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()  # uvicorn stops on SIGTERM as on Ctrl-C
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)


def start_dashboard(top: Path, home: Path, logs: Path, *options: str) -> Served:
    """``voyager-brain ui --no-browser --port 0 OPTIONS`` in `top`, with history.db and
    the personal files in `home`; returns once it printed its link (the socket is bound
    before the link is printed, so the link answers from then on)."""
    logs.mkdir(parents=True, exist_ok=True)
    out, err = logs / "ui.stdout", logs / "ui.stderr"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "voyager_brain", "ui", "--no-browser", "--port", "0", *options],
            cwd=top,
            env=_process_env(home),
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        lines = out.read_text(encoding="utf-8").splitlines()
        found = LINK.fullmatch(lines[1].strip()) if len(lines) >= 3 else None
        if found:
            return Served(process, lines, found)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    if process.poll() is None:
        process.kill()
    process.wait(timeout=15)
    raise RuntimeError(
        f"voyager-brain ui printed no link (exit {process.returncode}):\n"
        f"{out.read_text(encoding='utf-8')}{err.read_text(encoding='utf-8')}"
    )


def chromium(profile: Path, *, width: int = WIDTH, height: int = 1000) -> Any:
    """Headless Chromium with a fresh profile in `profile`, through the system
    chromedriver (given explicitly, so Selenium Manager never runs), its console kept."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f"--window-size={width},{height}", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)


def save_page(driver: Any, target: Path) -> tuple[int, int]:
    """The page now open as a PNG `WIDTH` pixels wide, as tall as the page up to
    `MAX_HEIGHT`; returns its size."""
    metrics = {"width": WIDTH, "deviceScaleFactor": 1, "mobile": False}
    # Laid out at the picture's width first: the page's height depends on it.
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {**metrics, "height": 800})
    height = driver.execute_script("return document.documentElement.scrollHeight")
    height = min(int(height), MAX_HEIGHT)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {**metrics, "height": height})
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    target.write_bytes(base64.b64decode(shot["data"]))
    return WIDTH, height


def _session_to_show(home: Path) -> int:
    """A session worth a picture: a rule blocked one of its calls, and it is short
    enough to see whole."""
    db = sqlite3.connect(home / "history.db")
    try:
        row = db.execute(
            "SELECT m.session_id, COUNT(DISTINCT tc.id) AS calls FROM messages m"
            " JOIN tool_calls tc ON tc.message_id = m.id GROUP BY m.session_id"
            " HAVING calls BETWEEN 4 AND 12 AND m.session_id IN (SELECT m2.session_id"
            " FROM rule_triggers rt JOIN tool_calls t2 ON t2.id = rt.tool_call_id"
            " JOIN messages m2 ON m2.id = t2.message_id WHERE rt.action_taken = 'block')"
            " ORDER BY m.session_id DESC LIMIT 1"
        ).fetchone()
        if row is None:  # any session with calls will do
            row = db.execute("SELECT session_id FROM messages ORDER BY id DESC").fetchone()
        return int(row[0])
    finally:
        db.close()


def pages(home: Path) -> list[tuple[str, str]]:
    """(picture name, page path) of every picture."""
    return [
        ("overview", "/"),
        ("brain", "/brain"),
        ("state", "/state"),
        ("memory", "/memory?q=rate+limit"),
        ("history", "/history"),
        ("session", f"/history/{_session_to_show(home)}"),
        ("rules", "/rules"),
        ("pipeline", "/pipeline"),
    ]


def main(argv: Sequence[str]) -> int:
    out = Path(argv[0]) if argv else OUT
    if missing():
        sys.stderr.write(
            f"needs Debian's chromium and chromium-driver ({', '.join(missing())} missing):"
            " sudo apt-get install chromium chromium-driver\n"
        )
        return 1
    if str(ROOT) not in sys.path:  # benchmarks/ is a folder of the repository, not installed
        sys.path.insert(0, str(ROOT))
    from benchmarks.uidata import populate_small

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="voyager-ui-") as tmp:
        parent = Path(tmp)
        home = parent / "home"
        # populate_small writes the personal files under VOYAGER_HOME: this process's.
        os.environ.update(environment(home))
        os.environ.pop("VOYAGER_MEMORY_PATH", None)
        top = populate_small(parent, home=home)
        served = start_dashboard(top, home, parent / "logs")
        driver = None
        try:
            driver = chromium(parent / "profile")
            driver.get(served.url)  # the token becomes a cookie
            for name, path in pages(home):
                driver.get(served.base + path)
                heading = driver.execute_script("return document.querySelector('h1').innerText")
                if heading in ("Forbidden", "Not found", "Something went wrong"):
                    raise RuntimeError(f"{path}: {heading}")
                target = out / f"{name}.png"
                width, height = save_page(driver, target)
                sys.stdout.write(f"wrote {target} ({width}x{height})\n")
        finally:
            if driver is not None:
                driver.quit()
            served.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
