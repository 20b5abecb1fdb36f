"""`voyager-brain` as real processes, hundreds a second: forked children of one clean
interpreter that has imported the entry point and nothing else.

A property test that runs the command line a thousand times cannot pay an interpreter's
start for each. Here a driver process (started once, single-threaded, so forking it is
safe) forks a child per run; the child takes its folder, environment, argv (as bytes, as
the kernel gives them) and standard streams, calls `voyager_brain.__main__.main` as the
interpreter would, and exits with the code the interpreter would give: a SystemExit's
code, or 1 after printing the traceback of anything else. The driver imports only
`voyager_brain.__main__`, which imports almost nothing, so what a command imports it
imports in its own child, as in a fresh process.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

DRIVER = r"""
import atexit, io, json, os, sys, traceback
import voyager_brain.__main__ as entry

encoding, errors = sys.__stdout__.encoding, sys.__stdout__.errors
in_encoding, in_errors = sys.__stdin__.encoding, sys.__stdin__.errors
requests = os.fdopen(0, "r", closefd=False)
replies = os.fdopen(os.dup(1), "w", buffering=1)

def child(request):
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for fd, (path, flags) in enumerate(
        [(request["stdin"], os.O_RDONLY),
         (request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
         (request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)]
    ):
        opened = os.open(path, flags, 0o644)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdin = io.TextIOWrapper(io.open(0, "rb", closefd=False), in_encoding, in_errors)
    sys.stdout = io.TextIOWrapper(io.open(1, "wb", closefd=False), encoding, errors)
    sys.stderr = io.TextIOWrapper(
        io.open(2, "wb", closefd=False), encoding, "backslashreplace", line_buffering=True
    )
    sys.argv = ["voyager-brain", *(os.fsdecode(bytes.fromhex(a)) for a in request["argv"])]
    try:
        entry.main()
        code = 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        traceback.print_exc()
        code = code or 1
    os._exit(code)

for line in requests:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        try:
            child(request)
        finally:
            os._exit(70)
    print(pid, file=replies)
    _, status = os.waitpid(pid, 0)
    print(os.waitstatus_to_exitcode(status), file=replies)
"""


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str


class ForkedCLI:
    """The driver; `run` one command line at a time."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.process = subprocess.Popen(
            [sys.executable, "-c", DRIVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.pending = b""

    def _line(self, timeout: float | None = None) -> bytes | None:
        """The driver's next reply line, or None after `timeout` seconds without one."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while b"\n" not in self.pending:
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                return None
            chunk = os.read(fd, 4096)
            assert chunk, "the driver ended"
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line

    def run(
        self,
        argv: list[bytes],
        *,
        cwd: Path,
        env: dict[str, str],
        stdin: bytes = b"",
        timeout: float = 30.0,
    ) -> Run:
        """`voyager-brain ARGV` in `cwd` with `env` and `stdin`. A run past `timeout`
        is killed and reported as exit code -9."""
        assert self.process.stdin is not None
        paths = {name: self.scratch / name for name in ("stdin", "stdout", "stderr")}
        paths["stdin"].write_bytes(stdin)
        request = {
            "argv": [arg.hex() for arg in argv],
            "cwd": str(cwd),
            "env": env,
            **{name: str(path) for name, path in paths.items()},
        }
        self.process.stdin.write(json.dumps(request).encode() + b"\n")
        self.process.stdin.flush()
        pid = int(self._line() or b"")
        line = self._line(timeout)
        if line is None:
            os.kill(pid, signal.SIGKILL)
            line = self._line()
        code = int(line or b"")
        read = lambda name: paths[name].read_bytes().decode("utf-8", "backslashreplace")  # noqa: E731
        return Run(code, read("stdout"), read("stderr"))

    def close(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self.process.stdout.close()
