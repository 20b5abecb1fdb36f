"""Running one stage's agent: the runner protocol.

A runner is either a shell command (`ShellRunner`) or, for agent loops using the Python
API, any callable taking a `StageRun` and returning a `RunnerResult` (or the dict an agent
printed). The shell protocol, as the pipeline guide documents it:

- run in the project root through ``/bin/sh -c``, in a process group of its own (so that
  stopping it stops what it started);
- the stage's task text on stdin, and in the environment ``VOYAGER_PIPELINE_ROLE``,
  ``VOYAGER_PIPELINE_STAGE`` (index), ``VOYAGER_PIPELINE_TASK``,
  ``VOYAGER_PIPELINE_SYSTEM_PROMPT`` (a file holding the assembled system prompt),
  ``VOYAGER_PIPELINE_SCHEMA`` (the reviewer's ReviewOutput schema file),
  ``VOYAGER_PIPELINE_PROJECT`` (the project root) and ``VOYAGER_SUBAGENT=1``;
- it prints what Claude Code's ``--output-format json`` prints (``type``, ``subtype``,
  ``session_id``, ``result``, ``structured_output``): the last line of its output that is
  a JSON object counts, so ``stream-json`` works too. Output that is not JSON means no
  session id and no structured output;
- a non-zero exit, the stage time limit, or no output and no file changed under the
  project for the idle limit (``STAGE_IDLE``) fails the stage.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .. import storage

#: Claude Code in print mode: the task on stdin, the system prompt appended to its own,
#: edits accepted without asking (a pipeline has no one to ask). Other tools still follow
#: the project's Claude Code permissions; widen them there, or set `runner`.
DEFAULT_RUNNER = (
    "claude -p --output-format json --permission-mode acceptEdits"
    ' --append-system-prompt "$(cat "$VOYAGER_PIPELINE_SYSTEM_PROMPT")"'
)
#: The reviewer is also asked for its verdict as structured output (ReviewOutput).
DEFAULT_REVIEWER_RUNNER = DEFAULT_RUNNER + ' --json-schema "$(cat "$VOYAGER_PIPELINE_SCHEMA")"'

#: How much of a runner's output is kept in memory.
OUTPUT_TAIL = 1 << 20
#: How much of it the stage's log file keeps: its first `LOG_HEAD` bytes as they come,
#: then, when the stage ends, a line saying how much was left out and its last
#: `LOG_TAIL` bytes (a runner printing hundreds of megabytes does not fill the disk).
LOG_HEAD = 4 << 20
LOG_TAIL = 4 << 20
#: How long a runner asked to stop gets before it is killed.
STOP_GRACE_SECONDS = 5.0


@dataclasses.dataclass(frozen=True, slots=True)
class StageRun:
    """What a runner gets for one stage."""

    root: Path
    role: str
    stage: int
    task: str  # the pipeline's task, as given
    stage_task: str  # what this stage's agent is asked to do (its stdin)
    system_prompt: str
    system_prompt_path: Path
    schema_path: Path | None  # the reviewer's only
    env: Mapping[str, str]  # the VOYAGER_* variables above
    log_path: Path | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class RunnerResult:
    """How a stage's agent ended. `error` is None when it exited normally (status 0);
    otherwise it says why the stage fails."""

    session_id: str | None = None
    structured: Any = None
    result: str | None = None
    exit_code: int | None = None
    error: str | None = None
    output_tail: str = ""


class Control:
    """What the engine lets a running stage know and do: `started(pid)` once the agent
    runs, `alive()` every few seconds (the engine keeps ``updatedAt`` fresh and says
    whether the pipeline was cancelled meanwhile: a reason to stop, or None)."""

    def started(self, pid: int) -> None:
        """The agent's process id (its process group's too)."""

    def alive(self) -> str | None:
        return None


def result_from_output(text: str) -> tuple[str | None, Any, str | None]:
    """``(session_id, structured_output, result)`` from an agent's output: the last line
    that is a JSON object counts (a whole output that is one pretty-printed object does
    too); anything else gives ``(None, None, None)``."""
    found = _last_json_object(text)
    if found is None:
        return None, None, None
    return _fields(found)


def result_from_json(document: Mapping[str, Any]) -> RunnerResult:
    """A Python runner's return value in Claude Code's JSON shape, as a result."""
    session_id, structured, result = _fields(document)
    error = None
    if document.get("is_error") is True or str(document.get("subtype", "")).startswith("error"):
        error = f"agent reported an error ({document.get('subtype') or 'is_error'})"
    return RunnerResult(session_id, structured, result, error=error)


def _fields(document: Mapping[str, Any]) -> tuple[str | None, Any, str | None]:
    session = document.get("session_id")
    result = document.get("result")
    return (
        session if isinstance(session, str) and session else None,
        document.get("structured_output"),
        result if isinstance(result, str) else None,
    )


def _last_json_object(text: str) -> dict[str, Any] | None:
    for line in reversed(text.splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def newest_change_ns(root: Path, since_ns: int) -> int | None:
    """The modification time of some file or folder under `root` newer than `since_ns`
    (the first one found), or None. ``.git`` is skipped: an agent's work shows in the
    tree, and git's own churn (an index refresh) is not work."""
    stack = [os.fspath(root)]
    while stack:
        folder = stack.pop()
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for entry in entries:
                if entry.name == ".git":
                    continue
                try:
                    stat = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.st_mtime_ns > since_ns:
                    return stat.st_mtime_ns
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
    return None


class ShellRunner:
    """Runs a stage's agent as a shell command (see the module's docstring)."""

    def __init__(
        self,
        command: str,
        *,
        time_limit: float = 3600.0,
        idle_limit: float = 300.0,
        poll: float = 0.1,
    ) -> None:
        self.command = command
        self.time_limit = time_limit
        self.idle_limit = idle_limit
        self.poll = poll

    def __call__(self, run: StageRun, control: Control | None = None) -> RunnerResult:
        control = control or Control()
        env = {**os.environ, **run.env}
        log = storage.open_append(run.log_path) if run.log_path is not None else None
        try:
            return self._run(run, env, control, log)
        finally:
            if log is not None:
                log.close()

    def _run(self, run: StageRun, env: dict[str, str], control: Control, log: Any) -> RunnerResult:
        try:
            proc = subprocess.Popen(
                self.command,
                shell=True,
                cwd=run.root,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            return RunnerResult(error=f"runner could not start: {exc}")
        control.started(proc.pid)
        stream = _Streams(proc, log)
        stream.feed(run.stage_task.encode("utf-8"))
        started = time.monotonic()
        error = self._wait(proc, stream, control, run.root, started)
        if error is None:
            # The stage is over: what the agent left running in its group (a server, a
            # watcher started in the background) ends with it.
            stop_process_group(proc.pid)
        stream.join()
        stdout = stream.stdout_text()
        session_id, structured, result = result_from_output(stdout)
        code = proc.returncode
        if error is None and code != 0:
            error = f"runner exited with status {code}{_last_words(stream.stderr_text(), stdout)}"
        return RunnerResult(session_id, structured, result, code, error, _tail(stdout, 4000))

    def _wait(
        self,
        proc: subprocess.Popen[bytes],
        stream: _Streams,
        control: Control,
        root: Path,
        started: float,
    ) -> str | None:
        """Wait for the agent; a reason when it had to be stopped, else None."""
        next_alive = started + 2.0
        while proc.poll() is None:
            now = time.monotonic()
            if now - started > self.time_limit:
                _stop(proc)
                return f"STAGE_TIMEOUT: the stage ran past its limit of {self.time_limit:g}s"
            if now - stream.last_activity > self.idle_limit:
                # Quiet output is not idleness while files keep changing (a long build, a
                # test run writing its cache): look once per idle period.
                since = time.time_ns() - int((now - stream.last_activity) * 1e9)
                if newest_change_ns(root, since) is None:
                    _stop(proc)
                    return (
                        f"STAGE_IDLE: no output and no file changed under the project for"
                        f" {self.idle_limit:g}s"
                    )
                stream.last_activity = now
            if now >= next_alive:
                next_alive = now + 2.0
                reason = control.alive()
                if reason is not None:
                    _stop(proc)
                    return reason
            # Returns as soon as the agent exits: a stage costs its agent's time, not a poll.
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=self.poll)
        return None


class _Streams:
    """Feeds stdin and drains stdout and stderr in threads (a pipe left full blocks the
    agent), keeping a tail of each and when anything last came out."""

    def __init__(self, proc: subprocess.Popen[bytes], log: Any) -> None:
        self.last_activity = time.monotonic()
        self._log = log
        self._logged = 0  # bytes written to the log as they came
        self._held = bytearray()  # past LOG_HEAD: the last LOG_TAIL bytes, written at the end
        self._dropped = 0
        self._lock = threading.Lock()
        self._out: dict[str, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}
        self._threads = [
            threading.Thread(target=self._drain, args=(getattr(proc, name), name), daemon=True)
            for name in ("stdout", "stderr")
        ]
        self._stdin = proc.stdin
        for thread in self._threads:
            thread.start()

    def feed(self, data: bytes) -> None:
        def write() -> None:
            assert self._stdin is not None
            try:
                self._stdin.write(data)
                self._stdin.close()
            except OSError:
                pass  # the agent did not read its task: its exit status will say more

        thread = threading.Thread(target=write, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _drain(self, pipe: Any, name: str) -> None:
        for chunk in iter(lambda: pipe.read1(65536), b""):
            self.last_activity = time.monotonic()
            with self._lock:
                buffer = self._out[name]
                buffer += chunk
                if len(buffer) > 2 * OUTPUT_TAIL:
                    del buffer[: len(buffer) - OUTPUT_TAIL]
                if self._log is not None:
                    self._to_log(chunk)
        pipe.close()

    def _to_log(self, chunk: bytes) -> None:
        room = LOG_HEAD - self._logged
        if room > 0:
            self._log.write(chunk[:room])
            self._log.flush()
            self._logged += min(room, len(chunk))
            chunk = chunk[room:]
        if chunk:
            self._held += chunk
            if len(self._held) > 2 * LOG_TAIL:
                self._dropped += len(self._held) - LOG_TAIL
                del self._held[: len(self._held) - LOG_TAIL]

    def join(self) -> None:
        for thread in self._threads:
            thread.join(timeout=10)
        with self._lock:
            if self._log is not None and self._held:
                if len(self._held) > LOG_TAIL:
                    self._dropped += len(self._held) - LOG_TAIL
                    del self._held[: len(self._held) - LOG_TAIL]
                if self._dropped:
                    note = f"\n[voyager-brain: {self._dropped:,} bytes of output not kept]\n"
                    self._log.write(note.encode())
                self._log.write(bytes(self._held))
                self._log.flush()
                self._held.clear()

    def stdout_text(self) -> str:
        with self._lock:
            return bytes(self._out["stdout"]).decode("utf-8", errors="replace")

    def stderr_text(self) -> str:
        with self._lock:
            return bytes(self._out["stderr"]).decode("utf-8", errors="replace")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the agent's process group, SIGKILL after a grace period."""
    for sig, wait in ((signal.SIGTERM, STOP_GRACE_SECONDS), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    # Whatever of the group outlived the agent (it ignored SIGTERM) goes too.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def stop_process_group(pid: int) -> bool:
    """Stop a runner started by another process (`pipeline cancel`): SIGTERM to its
    group, SIGKILL after the grace period. False when there was none."""
    try:
        os.killpg(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return False
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    while time.monotonic() < deadline:
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    return True


def _tail(text: str, size: int) -> str:
    return text if len(text) <= size else text[-size:]


def _last_words(stderr: str, stdout: str) -> str:
    """The agent's last line of stderr (else stdout), to say why it failed."""
    for text in (stderr, stdout):
        lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
        if lines:
            last = lines[-1]
            return f": {last[:300]}"
    return ""


def call_runner(runner: Callable[..., Any], run: StageRun, control: Control) -> RunnerResult:
    """Run a stage with any runner: a `ShellRunner`, or a Python callable taking the
    `StageRun` (and returning a `RunnerResult`, a dict in Claude Code's JSON shape, or
    None). An exception from a Python runner fails the stage with its message."""
    if isinstance(runner, ShellRunner):
        return runner(run, control)
    try:
        value = runner(run)
    except Exception as exc:
        return RunnerResult(error=f"runner raised {type(exc).__name__}: {exc}")
    if isinstance(value, RunnerResult):
        return value
    if isinstance(value, Mapping):
        return result_from_json(value)
    if value is None:
        return RunnerResult()
    return RunnerResult(error=f"runner returned {type(value).__name__}, expected a RunnerResult")
