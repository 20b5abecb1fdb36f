"""The shell runner as a stage runs it: a background child ends with the stage, and the
stage's log keeps a head and a tail of a runner that prints hundreds of megabytes."""

from __future__ import annotations

import time
from pathlib import Path

from voyager_brain.pipeline.runner import LOG_HEAD, LOG_TAIL, ShellRunner, StageRun

RESULT = '{"type": "result", "subtype": "success", "session_id": "s1", "result": "done"}'


def stage(root: Path, log: Path | None = None) -> StageRun:
    return StageRun(
        root=root,
        role="builder",
        stage=0,
        task="task",
        stage_task="do it",
        system_prompt="",
        system_prompt_path=root / "prompt.md",
        schema_path=None,
        env={},
        log_path=log,
    )


def alive(pid: int) -> bool:
    """Running, not a zombie waiting for a parent that is gone to reap it."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


def test_a_background_child_of_the_runner_ends_with_the_stage(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    runner = ShellRunner(f"sleep 60 & echo $! > {pid_file}; echo '{RESULT}'")
    started = time.monotonic()
    result = runner(stage(tmp_path))
    assert result.error is None and result.session_id == "s1"
    assert time.monotonic() - started < 10  # not the child's 60 s
    pid = int(pid_file.read_text())
    for _ in range(50):
        if not alive(pid):
            break
        time.sleep(0.1)
    assert not alive(pid)


def test_the_stage_log_keeps_a_head_and_a_tail(tmp_path: Path) -> None:
    log = tmp_path / "stage.log"
    total = LOG_HEAD + LOG_TAIL + (3 << 20)
    # `head -c` of an endless stream of one repeated line, then the result line last.
    runner = ShellRunner(f"yes 0123456789 | head -c {total}; echo; echo '{RESULT}'")
    result = runner(stage(tmp_path, log))
    assert result.error is None and result.session_id == "s1"
    data = log.read_bytes()
    head, _, rest = data.partition(b"\n[voyager-brain: ")
    dropped, _, tail = rest.partition(b" bytes of output not kept]\n")
    printed = total + len(RESULT) + 2
    assert (len(head), len(tail)) == (LOG_HEAD, LOG_TAIL)
    assert int(dropped.replace(b",", b"")) == printed - LOG_HEAD - LOG_TAIL
    assert head.startswith(b"0123456789\n") and tail.endswith(RESULT.encode() + b"\n")


def test_a_short_output_is_logged_whole(tmp_path: Path) -> None:
    log = tmp_path / "stage.log"
    ShellRunner(f"echo hello; echo '{RESULT}'")(stage(tmp_path, log))
    assert log.read_bytes() == f"hello\n{RESULT}\n".encode()
