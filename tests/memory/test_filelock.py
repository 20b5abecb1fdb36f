"""The lock on a memory log is Rho's (extensions/lib/file-lock.ts, github.com/mikeyobrien/rho
at d727213): `<log>.lock` created exclusively with its JSON payload, deleted on release,
stale after 30 s or when its pid is gone. Rho and voyager-brain append to one log at once
and lose nothing.

`rho_append` below is a stand-in for Rho's `appendBrainEntry`, written from file-lock.ts's
protocol (not from our module): exclusive create of the JSON payload (two-space indented),
stale by pid liveness, `refreshedAt` age or mtime, backoff from 10 ms doubling to 250 ms
with jitter, LOCK_TIMEOUT after 5 s, release only while the file holds its pid and nonce.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import random
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from voyager_brain import filelock
from voyager_brain.errors import LockTimeoutError
from voyager_brain.memory import log

RHO_FIELDS = {"pid", "nonce", "acquiredAt", "refreshedAt", "hostname", "purpose"}


# -- a stand-in for Rho, from its protocol ------------------------------------------------


def rho_append(path: Path, line: str, timeout_ms: int = 5000, stale_ms: int = 30_000) -> None:
    lock = Path(str(path) + ".lock")
    nonce = os.urandom(9).hex()[:12]
    pid = os.getpid()
    deadline = time.time() * 1000 + timeout_ms
    backoff = 10.0
    while True:
        now = time.time() * 1000
        payload = {
            "pid": pid,
            "nonce": nonce,
            "acquiredAt": now,
            "refreshedAt": now,
            "hostname": socket.gethostname(),
            "purpose": "append",
        }
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            os.write(fd, json.dumps(payload, indent=2).encode())
            os.close(fd)
            try:
                with open(path, "a") as out:
                    out.write(line + "\n")
            finally:
                try:
                    current = json.loads(lock.read_text())
                    if current["pid"] == pid and current["nonce"] == nonce:
                        lock.unlink()
                except (OSError, ValueError, KeyError, TypeError):
                    pass
            return
        try:
            existing = json.loads(lock.read_text())
            if not all(
                isinstance(existing.get(k), (int, float))
                for k in ("pid", "acquiredAt", "refreshedAt")
            ):
                existing = None
        except (OSError, ValueError, AttributeError):
            existing = None
        if existing is not None:
            try:
                os.kill(int(existing["pid"]), 0)
                alive = True
            except PermissionError:
                alive = True
            except OSError:
                alive = False
            stale = not alive or now - existing["refreshedAt"] > stale_ms
        else:
            try:
                stale = now - lock.stat().st_mtime * 1000 > stale_ms
            except FileNotFoundError:
                stale = True
        if stale:
            with contextlib.suppress(FileNotFoundError):
                lock.unlink()
            continue
        if time.time() * 1000 >= deadline:
            raise TimeoutError(f"LOCK_TIMEOUT: could not acquire {lock} within {timeout_ms}ms")
        delay = min(backoff + random.random() * backoff * 0.5, 250)
        time.sleep(delay / 1000)
        backoff = min(backoff * 2, 250)


def rho_writer(path: str, count: int, start: Any) -> None:
    start.wait()
    for n in range(count):
        entry = {
            "id": f"r{n:07d}",
            "type": "learning",
            "text": f"from rho {n}",
            "source": "rho",
            "created": "2026-11-27T09:00:00.000Z",
        }
        rho_append(Path(path), json.dumps(entry))
        time.sleep(0.001)  # spread over a while, so that the two surely overlap


def voyager_writer(path: str, count: int, start: Any) -> None:
    warm = {
        "id": "warm0000",
        "type": "learning",
        "text": "warm",
        "source": "manual",
        "created": "2026-11-27T09:00:00.000Z",
    }
    log.append(Path(path + ".warm"), [warm])  # its imports done before the race begins
    start.wait()
    for n in range(count):
        entry = {
            "id": f"v{n:07d}",
            "type": "learning",
            "text": f"from voyager {n}",
            "source": "manual",
            "created": "2026-11-27T09:00:00.000Z",
        }
        log.append(Path(path), [entry], lock_timeout=10.0)
        time.sleep(0.001)


# -- the protocol -------------------------------------------------------------------------


def test_the_lock_is_rhos_json_file_while_held_and_gone_after(tmp_path: Path) -> None:
    path = tmp_path / "brain.jsonl"
    with filelock.locked(path, 5.0):
        lock = tmp_path / "brain.jsonl.lock"
        payload = json.loads(lock.read_text())
        assert set(payload) == RHO_FIELDS
        assert payload["pid"] == os.getpid() and payload["purpose"] == "append"
        assert payload["acquiredAt"] == payload["refreshedAt"]
        assert abs(payload["acquiredAt"] - time.time() * 1000) < 5000
        assert isinstance(payload["nonce"], str) and payload["hostname"]
        assert lock.read_text().startswith('{\n  "pid": ')  # JSON.stringify(p, null, 2)
        assert lock.stat().st_mode & 0o777 == 0o600
    assert not lock.exists()


def test_a_lock_held_by_a_running_process_is_waited_for_then_named(tmp_path: Path) -> None:
    path = tmp_path / "brain.jsonl"
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        now = time.time() * 1000
        lock = tmp_path / "brain.jsonl.lock"
        lock.write_text(
            json.dumps(
                {
                    "pid": holder.pid,
                    "nonce": "abc",
                    "acquiredAt": now,
                    "refreshedAt": now,
                    "hostname": "h",
                    "purpose": "append",
                }
            )
        )
        start = time.monotonic()
        with (
            pytest.raises(LockTimeoutError, match=f"held by pid {holder.pid}"),
            filelock.locked(path, 0.5),
        ):
            pass
        assert time.monotonic() - start >= 0.5
        assert lock.exists()  # not ours to delete
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize(
    "kind", ["dead pid", "refreshed 31 s ago", "unreadable, 31 s old", "gone pid 0"]
)
def test_a_stale_lock_is_taken_at_once(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "brain.jsonl"
    lock = tmp_path / "brain.jsonl.lock"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    ).stdout.strip()
    now = time.time() * 1000
    payload = {
        "pid": int(dead),
        "nonce": "n",
        "acquiredAt": now,
        "refreshedAt": now,
        "hostname": "h",
        "purpose": "append",
    }
    if kind == "refreshed 31 s ago":
        payload.update(pid=os.getppid(), refreshedAt=now - 31_000)
    if kind == "gone pid 0":
        payload.update(pid=0)
    lock.write_text("{not json" if kind.startswith("unreadable") else json.dumps(payload))
    if kind.startswith("unreadable"):
        os.utime(lock, (time.time() - 31, time.time() - 31))
    start = time.monotonic()
    with filelock.locked(path, 5.0):
        assert json.loads(lock.read_text())["pid"] == os.getpid()
    assert time.monotonic() - start < 1.0 and not lock.exists()


def test_an_unreadable_fresh_lock_is_waited_for(tmp_path: Path) -> None:
    """An older voyager-brain's empty memory.jsonl.lock, just made: stale only at 30 s."""
    path = tmp_path / "memory.jsonl"
    (tmp_path / "memory.jsonl.lock").write_text("")
    with pytest.raises(LockTimeoutError), filelock.locked(path, 0.3):
        pass


def test_a_lock_taken_over_meanwhile_is_not_deleted_on_release(tmp_path: Path) -> None:
    path = tmp_path / "brain.jsonl"
    lock = tmp_path / "brain.jsonl.lock"
    with filelock.locked(path, 5.0):
        # Another process judged ours stale and took it (Rho would after 30 s).
        lock.unlink()
        lock.write_text(
            json.dumps(
                {
                    "pid": 1,
                    "nonce": "theirs",
                    "acquiredAt": 1,
                    "refreshedAt": 1,
                    "hostname": "h",
                    "purpose": "append",
                }
            )
        )
    assert json.loads(lock.read_text())["nonce"] == "theirs"


def test_our_lock_is_honoured_by_rho(tmp_path: Path) -> None:
    """While voyager-brain holds the lock, Rho's append waits and then lands after it."""
    path = tmp_path / "brain.jsonl"
    with filelock.locked(path, 5.0), pytest.raises(TimeoutError, match="LOCK_TIMEOUT"):
        rho_append(path, '{"x": 1}', timeout_ms=300)
    rho_append(path, '{"x": 2}', timeout_ms=300)
    assert path.read_text() == '{"x": 2}\n'


def test_rho_and_voyager_append_200_lines_each_to_one_log(tmp_path: Path) -> None:
    path = tmp_path / "brain.jsonl"
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(2)  # both begin once both have started
    writers = [
        context.Process(target=rho_writer, args=(str(path), 200, start)),
        context.Process(target=voyager_writer, args=(str(path), 200, start)),
    ]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(timeout=120)
    assert [w.exitcode for w in writers] == [0, 0]  # no LOCK_TIMEOUT on either side
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    entries = [json.loads(line) for line in lines[:-1]]  # none torn
    ids = [e["id"] for e in entries]
    assert len(ids) == 400 and len(set(ids)) == 400
    # Each writer's lines in its own order.
    assert [i for i in ids if i[0] == "r"] == [f"r{n:07d}" for n in range(200)]
    assert [i for i in ids if i[0] == "v"] == [f"v{n:07d}" for n in range(200)]
    last_rho = max(n for n, i in enumerate(ids) if i[0] == "r")
    assert any(i[0] == "v" for i in ids[:last_rho])  # the two did interleave
    assert not (tmp_path / "brain.jsonl.lock").exists()


# -- Rho's own code, when a checkout of it and tsx are at hand -----------------------------

RHO = os.environ.get("VOYAGER_RHO_CHECKOUT")
TSX = shutil.which("tsx")


@pytest.mark.skipif(
    not (RHO and TSX),
    reason="set VOYAGER_RHO_CHECKOUT to a checkout of github.com/mikeyobrien/rho and put "
    "tsx on PATH (npm install -g tsx) to race Rho's own appendBrainEntry",
)
def test_rhos_own_append_races_ours(tmp_path: Path) -> None:
    assert RHO and TSX
    path = tmp_path / "brain.jsonl"
    script = tmp_path / "append.ts"
    store = Path(RHO) / "extensions" / "lib" / "brain-store.ts"
    script.write_text(
        f"import {{ appendBrainEntry }} from {json.dumps(str(store))};\n"
        "(async () => {\n"
        "  for (let n = 0; n < 200; n++) {\n"
        "    await appendBrainEntry(process.argv[2], { id: `r${String(n).padStart(7, '0')}`,"
        " type: 'learning', text: `from rho ${n}`, source: 'rho',"
        " created: new Date().toISOString() } as any);\n"
        "  }\n"
        "})();\n"
    )
    rho = subprocess.Popen([TSX, str(script), str(path)])
    deadline = time.monotonic() + 60
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.001)  # Rho has started appending: race it
    voyager_writer(str(path), 200, threading.Barrier(1))
    assert rho.wait(timeout=120) == 0
    ids = [json.loads(line)["id"] for line in path.read_text().splitlines()]
    assert len(set(ids)) == 400
    last_rho = max(n for n, i in enumerate(ids) if i[0] == "r")
    assert any(i[0] == "v" for i in ids[:last_rho])  # the two did interleave
