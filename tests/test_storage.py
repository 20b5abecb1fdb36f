"""storage: atomic replace, exclusive create, single-write append, side-file locks."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from voyager_brain import LockTimeoutError
from voyager_brain.storage import append, atomic_write, create, lock_path, locked, move_aside


def test_atomic_write_replaces_and_leaves_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "brain.md"
    atomic_write(path, b"one")
    atomic_write(path, b"two")
    assert path.read_bytes() == b"two"
    assert sorted(p.name for p in path.parent.iterdir()) == ["brain.md"]


def test_atomic_write_keeps_the_file_mode(tmp_path: Path) -> None:
    path = tmp_path / "brain.md"
    path.write_bytes(b"x")
    path.chmod(0o600)
    atomic_write(path, b"y")
    assert path.stat().st_mode & 0o777 == 0o600


def test_create_never_replaces_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    assert create(path, b"first")
    assert not create(path, b"second")
    assert path.read_bytes() == b"first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]


def test_append_adds_to_the_end(tmp_path: Path) -> None:
    path = tmp_path / "log"
    append(path, b"a\n")
    append(path, b"b\n")
    assert path.read_bytes() == b"a\nb\n"


def test_move_aside_keeps_the_bytes_under_a_new_name(tmp_path: Path) -> None:
    path = tmp_path / "brain.md"
    path.write_bytes(b"\xff")
    first = move_aside(path, "20260321T143000Z")
    path.write_bytes(b"\xfe")
    second = move_aside(path, "20260321T143000Z")
    assert first.name == "brain.md.20260321T143000Z.corrupt"
    assert second.name == "brain.md.20260321T143000Z-2.corrupt"
    assert (first.read_bytes(), second.read_bytes()) == (b"\xff", b"\xfe")
    assert not path.exists()


HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from voyager_brain.storage import locked
    with locked(Path(sys.argv[1])):
        print("held", flush=True)
        time.sleep(float(sys.argv[2]))
    """
)


def test_lock_waits_for_another_process_then_times_out(tmp_path: Path) -> None:
    path = tmp_path / "brain.md"
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path), "3"], stdout=subprocess.PIPE, text=True
    ) as holder:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with (
            pytest.raises(LockTimeoutError, match=r"brain\.md\.lock for over 0\.3s"),
            locked(path, timeout=0.3),
        ):
            pass
        assert 0.3 <= time.monotonic() - started < 2
    with locked(path, timeout=1):
        pass
    assert lock_path(path).exists()


def test_lock_of_a_killed_process_is_released(tmp_path: Path) -> None:
    path = tmp_path / "brain.md"
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path), "60"], stdout=subprocess.PIPE, text=True
    ) as holder:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        holder.kill()
    with locked(path, timeout=2):
        assert os.path.exists(lock_path(path))
