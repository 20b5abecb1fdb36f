"""`watch_backlog`: a real watcher on real files, in a thread, with a short quiet period.

Waits poll for what is expected with a generous deadline (a busy 2-core CI machine);
"does not fire" waits three quiet periods."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import watchfiles
from conftest import INTERRUPTIBLE

from voyager_brain.errors import BrainError
from voyager_brain.pipeline.watch import NoBlackboardError, watch_backlog

DEBOUNCE = 0.3
DEADLINE = 10.0


def project(tmp_path: Path, name: str = "p", backlog: str | None = None) -> Path:
    root = tmp_path / name
    (root / ".brain").mkdir(parents=True)
    if backlog is not None:
        (root / ".brain" / "BACKLOG.md").write_text(backlog)
    return root


def backlog(root: Path) -> Path:
    return root / ".brain" / "BACKLOG.md"


def wait_for(condition: Callable[[], bool], timeout: float = DEADLINE) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.02)


def quiet() -> None:
    """Long enough for a change that would fire to have fired."""
    time.sleep(DEBOUNCE * 3)


class Watching:
    """`watch_backlog` running in a thread; what it was called with, in `calls`."""

    def __init__(self, ready: threading.Event) -> None:
        self.ready = ready
        self.calls: list[tuple[Path, str]] = []
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.thread: threading.Thread | None = None

    def start(self, *roots: Path, on_change: Callable[[Path, str], None] | None = None) -> Watching:
        def run() -> None:
            try:
                watch_backlog(
                    roots,
                    on_change or (lambda root, text: self.calls.append((root, text))),
                    debounce=DEBOUNCE,
                    stop=self.stop,
                )
            except BaseException as exc:
                self.error = exc

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        assert self.ready.wait(DEADLINE), "the watcher did not start"
        return self

    def wait_calls(self, count: int) -> None:
        wait_for(lambda: len(self.calls) >= count)

    def close(self) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(DEADLINE)
            assert not self.thread.is_alive()
        assert self.error is None


@pytest.fixture
def watching(monkeypatch: pytest.MonkeyPatch) -> Iterator[Watching]:
    """Knows when the OS watcher is up: watchfiles' generator has yielded once (after its
    first wait of a tenth of a second, or on the first event)."""
    ready = threading.Event()
    real = watchfiles.watch

    def spied(*args: Any, **kwargs: Any) -> Iterator[set[tuple[watchfiles.Change, str]]]:
        for changes in real(*args, **kwargs):
            ready.set()
            yield changes

    monkeypatch.setattr(watchfiles, "watch", spied)
    w = Watching(ready)
    yield w
    w.close()


def test_quick_edits_fire_once_with_the_final_content(tmp_path: Path, watching: Watching) -> None:
    root = project(tmp_path, backlog="# Backlog\n")
    watching.start(root)
    for n in range(1, 4):
        backlog(root).write_text(f"# Backlog\n\n- task {n}\n")
        time.sleep(0.05)
    watching.wait_calls(1)
    quiet()
    assert watching.calls == [(root, "# Backlog\n\n- task 3\n")]


def test_every_edit_restarts_the_quiet_period(tmp_path: Path, watching: Watching) -> None:
    root = project(tmp_path, backlog="v0")
    watching.start(root)
    end = time.monotonic() + DEBOUNCE * 3
    n = 0
    while time.monotonic() < end:  # never quiet for a whole period
        n += 1
        backlog(root).write_text(f"v{n}")
        time.sleep(DEBOUNCE / 4)
    assert watching.calls == []
    watching.wait_calls(1)
    quiet()
    assert watching.calls == [(root, f"v{n}")]


def test_a_backlog_there_at_the_start_does_not_fire(tmp_path: Path, watching: Watching) -> None:
    root = project(tmp_path, backlog="# Backlog\n\n- old task\n")
    watching.start(root)
    quiet()
    assert watching.calls == []


def test_creating_the_backlog_fires(tmp_path: Path, watching: Watching) -> None:
    root = project(tmp_path)
    watching.start(root)
    backlog(root).write_text("- first task\n")
    watching.wait_calls(1)
    assert watching.calls == [(root, "- first task\n")]


def test_saving_the_same_content_again_does_not_fire(tmp_path: Path, watching: Watching) -> None:
    root = project(tmp_path, backlog="v0\n")
    watching.start(root)
    backlog(root).write_text("v0\n")  # same as at the start
    quiet()
    assert watching.calls == []
    backlog(root).write_text("v1\n")
    watching.wait_calls(1)
    backlog(root).write_text("v1\n")  # same as last fired
    quiet()
    assert watching.calls == [(root, "v1\n")]


def test_deleting_the_backlog_does_not_fire(tmp_path: Path, watching: Watching) -> None:
    root = project(tmp_path, backlog="v0\n")
    watching.start(root)
    backlog(root).unlink()
    quiet()
    backlog(root).write_text("v0\n")  # written back as it was: nothing new
    quiet()
    assert watching.calls == []
    backlog(root).write_text("v1\n")
    watching.wait_calls(1)
    assert watching.calls == [(root, "v1\n")]


def test_each_project_has_its_own_quiet_period(tmp_path: Path, watching: Watching) -> None:
    a, b = project(tmp_path, "a", backlog="a0"), project(tmp_path, "b", backlog="b0")
    watching.start(a, b)
    backlog(a).write_text("a1")
    end = time.monotonic() + DEADLINE
    n = 0
    while not watching.calls:  # b is never quiet, a fires all the same
        assert time.monotonic() < end, "timed out"
        n += 1
        backlog(b).write_text(f"b{n}")
        time.sleep(DEBOUNCE / 4)
    watching.wait_calls(2)
    quiet()
    assert watching.calls == [(a, "a1"), (b, f"b{n}")]


def test_a_write_through_a_renamed_temporary_file_fires(tmp_path: Path, watching: Watching) -> None:
    root = project(tmp_path, backlog="v0\n")
    watching.start(root)
    temporary = root / ".brain" / ".BACKLOG.md.tmp"
    temporary.write_text("v1\n")
    os.replace(temporary, backlog(root))
    watching.wait_calls(1)
    quiet()
    assert watching.calls == [(root, "v1\n")]


def test_other_files_do_not_fire(tmp_path: Path, watching: Watching) -> None:
    root = project(tmp_path, backlog="v0\n")
    watching.start(root)
    (root / ".brain" / "PLAN.md").write_text("a plan\n")
    (root / ".brain" / "RESEARCH").mkdir()
    (root / ".brain" / "RESEARCH" / "BACKLOG.md").write_text("not the backlog\n")
    quiet()
    assert watching.calls == []


def test_setting_stop_returns_promptly(tmp_path: Path, watching: Watching) -> None:
    root = project(tmp_path, backlog="v0\n")
    watching.start(root)
    backlog(root).write_text("v1\n")  # still waiting for quiet when stopped: dropped
    started = time.monotonic()
    watching.stop.set()
    assert watching.thread is not None
    watching.thread.join(DEADLINE)
    assert not watching.thread.is_alive()
    assert time.monotonic() - started < 1.0
    assert watching.calls == []


def test_a_failing_handler_is_reported_and_watching_goes_on(
    tmp_path: Path, watching: Watching, capfd: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path, backlog="v0\n")

    def on_change(root: Path, text: str) -> None:
        watching.calls.append((root, text))
        if text == "v1\n":
            raise RuntimeError("the engine is broken")
        if text == "v2\n":
            raise BrainError("a one-line problem")

    watching.start(root, on_change=on_change)
    for n in (1, 2, 3):
        backlog(root).write_text(f"v{n}\n")
        watching.wait_calls(n)
    assert [text for _, text in watching.calls] == ["v1\n", "v2\n", "v3\n"]
    err = capfd.readouterr().err
    assert f"voyager-brain pipeline watch: {root}: the backlog handler failed\n" in err
    assert "Traceback" in err and "RuntimeError: the engine is broken" in err
    assert f"voyager-brain pipeline watch: {root}: a one-line problem\n" in err
    assert err.count("Traceback") == 1  # a BrainError is one line


def test_a_project_without_brain_folder_is_a_clear_error(tmp_path: Path) -> None:
    ready = project(tmp_path, "ready")
    bare = tmp_path / "bare"
    bare.mkdir()
    with pytest.raises(NoBlackboardError) as raised:
        watch_backlog([ready, bare], lambda root, text: None)
    assert isinstance(raised.value, BrainError)
    assert str(raised.value) == (
        f"{bare}: no .brain/ folder to watch (run `voyager-brain pipeline init` first)"
    )
    with pytest.raises(ValueError, match="no project"):
        watch_backlog([], lambda root, text: None)
    with pytest.raises(ValueError, match="debounce"):
        watch_backlog([ready], lambda root, text: None, debounce=-1)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT is a POSIX signal")
def test_ctrl_c_raises_keyboard_interrupt(tmp_path: Path) -> None:
    """In the main thread of a real process, as the command line runs it."""
    root = project(tmp_path)
    script = (
        "import watchfiles\nfrom pathlib import Path\n"
        "from voyager_brain.pipeline.watch import watch_backlog\n"
        "real = watchfiles.watch\n"
        "def spied(*args, **kwargs):\n"
        "    for n, changes in enumerate(real(*args, **kwargs)):\n"
        "        if n == 0:\n"
        "            print('ready', flush=True)\n"
        "        yield changes\n"
        "watchfiles.watch = spied\n"
        "try:\n"
        f"    watch_backlog([Path({str(root)!r})], print)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
    )
    process = subprocess.Popen(
        [*INTERRUPTIBLE, sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == "ready\n"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=DEADLINE)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert out == "interrupted\n", err
    assert process.returncode == 0
