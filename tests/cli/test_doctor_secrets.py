"""`check` and `doctor` find secrets already stored in the brain files (written by hand,
or before redaction knew them) with file:line; `doctor --repair` redacts them in place."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import run_cli

from voyager_brain.secretkinds import PROVIDER_KINDS

# Kinds that were not recognised before the table: what an old brain may still hold.
SENDGRID = next(k.example for k in PROVIDER_KINDS if k.name == "sendgrid-key")
HUGGINGFACE = next(k.example for k in PROVIDER_KINDS if k.name == "huggingface-token")
TELEGRAM = next(k.example for k in PROVIDER_KINDS if k.name == "telegram-bot-token")


def _plant(repo: Path, isolated_env: Path) -> dict[str, Path]:
    """brain.json and both memory logs written through the CLI with a placeholder, which
    is then swapped for a secret by hand (the CLI would redact it)."""
    assert run_cli("init", cwd=repo).returncode == 0
    state = json.dumps({"facts": {"custom": ["mail key PLACEHOLDER_ONE"]}})
    assert run_cli("save", "-", cwd=repo, input=state).returncode == 0
    for kind, text in (("learning", "PLACEHOLDER_TWO in CI"), ("preference", "PLACEHOLDER_3")):
        args = ("brain", "action=add", f"type={kind}", f"text={text}", "category=X")
        done = run_cli(*args, cwd=repo)
        assert done.returncode == 0, done.stderr
    files = {
        "brain.json": repo / ".voyager" / "brain.json",
        "memory.jsonl": repo / ".voyager" / "memory.jsonl",
        "personal": isolated_env / "memory.jsonl",
    }
    for placeholder, secret, path in (
        ("PLACEHOLDER_ONE", SENDGRID, files["brain.json"]),
        ("PLACEHOLDER_TWO", HUGGINGFACE, files["memory.jsonl"]),
        ("PLACEHOLDER_3", TELEGRAM, files["personal"]),
    ):
        text = path.read_text()
        assert placeholder in text
        path.write_text(text.replace(placeholder, secret))
    return files


def _line(path: Path, secret: str) -> int:
    lines = path.read_text().splitlines()
    return next(n for n, line in enumerate(lines, start=1) if secret in line)


def test_doctor_reports_stored_secrets_by_file_and_line(repo: Path, isolated_env: Path) -> None:
    files = _plant(repo, isolated_env)
    result = run_cli("doctor", cwd=repo)
    assert result.returncode == 1
    out = result.stdout
    assert f".voyager/brain.json:{_line(files['brain.json'], SENDGRID)} (sendgrid-key)" in out
    line = _line(files["memory.jsonl"], HUGGINGFACE)
    assert f".voyager/memory.jsonl:{line} (huggingface-token)" in out
    line = _line(files["personal"], TELEGRAM)
    assert f"personal memory.jsonl:{line} (telegram-bot-token)" in out
    # Nothing was changed.
    assert SENDGRID in files["brain.json"].read_text()


def test_check_reports_stored_secrets_by_file_and_line(repo: Path, isolated_env: Path) -> None:
    files = _plant(repo, isolated_env)
    result = run_cli("check", cwd=repo)
    assert result.returncode != 0
    out = result.stdout + result.stderr
    line = _line(files["brain.json"], SENDGRID)
    assert f".voyager/brain.json:{line}: unredacted secret (sendgrid-key)" in out
    line = _line(files["memory.jsonl"], HUGGINGFACE)
    assert f".voyager/memory.jsonl:{line}: unredacted secret (huggingface-token)" in out


def test_doctor_repair_redacts_in_place(repo: Path, isolated_env: Path) -> None:
    files = _plant(repo, isolated_env)
    before = {name: path.read_text().splitlines() for name, path in files.items()}
    assert run_cli("doctor", "--repair", cwd=repo).returncode in (0, 1)
    for name, secret, marker in (
        ("brain.json", SENDGRID, "[REDACTED:sendgrid-key]"),
        ("memory.jsonl", HUGGINGFACE, "[REDACTED:huggingface-token]"),
        ("personal", TELEGRAM, "[REDACTED:telegram-bot-token]"),
    ):
        text = files[name].read_text()
        assert secret not in text and marker in text, name
        # Only the lines that held a secret changed, and the file still parses.
        after = text.splitlines()
        assert len(after) == len(before[name])
        changed = [a for a, b in zip(after, before[name], strict=True) if a != b]
        assert len(changed) == 1 and marker in changed[0]
        if name == "brain.json":
            json.loads(text)
        else:
            [json.loads(line) for line in after if line]
    again = run_cli("doctor", cwd=repo).stdout
    assert "look of them" not in again
    assert run_cli("check", cwd=repo).returncode == 0


def test_doctor_repair_sets_a_bad_line_aside_then_redacts_the_log(
    repo: Path, isolated_env: Path
) -> None:
    """The line that does not parse goes to memory.jsonl.rejected (git-ignored, beside
    the log), so the rest of the log parses and its secrets are redacted."""
    files = _plant(repo, isolated_env)
    log = files["memory.jsonl"]
    log.write_text(log.read_text() + "{not json\n")
    result = run_cli("doctor", "--repair", cwd=repo)
    assert "Traceback" not in result.stderr
    assert "moved to memory.jsonl.rejected" in result.stdout, result.stdout
    assert (log.parent / "memory.jsonl.rejected").read_text() == "{not json\n"
    assert HUGGINGFACE not in log.read_text()
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", ".voyager/memory.jsonl.rejected"], cwd=repo, check=False
    )
    assert ignored.returncode == 0


def test_doctor_leaves_the_personal_log_alone_when_told_to(repo: Path, isolated_env: Path) -> None:
    """`redact_secrets = false` keeps the personal log as written: not a problem."""
    files = _plant(repo, isolated_env)
    config = repo / ".voyager" / "config.toml"
    config.write_text(config.read_text() + "\nredact_secrets = false\n")
    result = run_cli("doctor", "--repair", cwd=repo)
    assert "personal memory.jsonl" not in result.stdout
    assert TELEGRAM in files["personal"].read_text()
    assert HUGGINGFACE not in files["memory.jsonl"].read_text()  # the project's log still is
