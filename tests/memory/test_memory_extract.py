"""Auto-memory: offline extraction, the command provider (a real subprocess), its
fallback, the switches that turn it off, and the detached run at session end."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from conftest import run_cli, trusted

from voyager_brain import Config
from voyager_brain.memory.extract import (
    MAX_CHARS,
    extract,
    offline_candidates,
    read_conversation,
)
from voyager_brain.memory.tool import brain_tool
from voyager_brain.providers import CommandProvider, ProviderError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CONVERSATION = (
    "We use pnpm workspaces in this repo.\n"
    "Can you fix the CI?\n"
    "Always run the linter before committing.\n"
    "Never push straight to main.\n"
    "I prefer small pull requests.\n"
)


def learnings_and_preferences(repo: Path) -> list[str]:
    entries = brain_tool("list", cwd=str(repo))["entries"]
    return [e["text"] for e in entries if e["type"] in ("learning", "preference")]


def test_offline_extraction_takes_explicit_statements_at_most_three() -> None:
    items = offline_candidates([("user", CONVERSATION)])
    assert len(items) == 3
    assert {
        "type": "preference",
        "category": "General",
        "text": "I prefer small pull requests.",
    } in items
    assert all(len(i["text"]) < MAX_CHARS for i in items)
    assert not any("?" in i["text"] for i in items)


def test_assistant_messages_are_not_taken_as_the_users_word() -> None:
    assert offline_candidates([("assistant", "We use Rust. Always be careful.")]) == []


def test_a_claude_code_transcript_is_read_as_messages() -> None:
    text = (FIXTURES / "claude" / "transcript.jsonl").read_text()
    messages = read_conversation(text)
    assert messages[0] == ("user", "Why is CI red?")
    assert messages[-1][0] == "assistant" and "Node 22" in messages[-1][1]
    assert read_conversation("plain words") == [("user", "plain words")]


def test_extract_stores_with_source_auto_and_dedups(repo: Path) -> None:
    results = extract(CONVERSATION, cwd=str(repo), config=Config(), provider=None)
    assert [r["ok"] for r in results] == [True, True, True]
    # The next pass reaches past what is stored to the fourth statement; then nothing is left.
    again = extract(CONVERSATION, cwd=str(repo), config=Config(), provider=None)
    assert [r["message"] for r in again] == [
        "Added learning " + again[0]["entries"][0]["id"] + ": We use pnpm workspaces in this repo."
    ]
    assert extract(CONVERSATION, cwd=str(repo), config=Config(), provider=None) == []
    entries = brain_tool("list", cwd=str(repo))["entries"]
    stored = [e for e in entries if e["type"] in ("preference", "learning")]
    assert len(stored) == 4 and {e["source"] for e in stored} == {"auto"}


ANSWERING = "import sys; sys.stdin.read(); print('learning: Deploys go through the release branch')"
SLOW = "import time; time.sleep(5)"
FAILING = "import sys; sys.stderr.write('model not found\\n'); sys.exit(3)"


def command(code: str) -> str:
    return f'{sys.executable} -c "{code}"'


def test_the_command_provider_pipes_the_prompt_to_a_real_process(repo: Path) -> None:
    provider = CommandProvider(command(ANSWERING), timeout=30)
    results = extract("whatever was said", cwd=str(repo), config=Config(), provider=provider)
    assert [r["message"].split(":", 1)[1].strip() for r in results] == [
        "Deploys go through the release branch"
    ]


@pytest.mark.parametrize(
    ("code", "timeout", "expected"),
    [
        (FAILING, 30, "exit code 3: model not found"),
        (SLOW, 0.5, "no answer within 0.5s"),
    ],
)
def test_a_failing_or_slow_command_falls_back_offline(
    repo: Path, code: str, timeout: float, expected: str
) -> None:
    provider = CommandProvider(command(code), timeout=timeout)
    with pytest.raises(ProviderError, match=expected):
        provider.complete("prompt")
    warnings: list[str] = []
    results = extract(
        CONVERSATION, cwd=str(repo), config=Config(), provider=provider, warn=warnings.append
    )
    assert len(results) == 3 and "using the offline extractor" in warnings[0]


@pytest.mark.parametrize("env", [{"VOYAGER_AUTO_MEMORY": "0"}, {"VOYAGER_SUBAGENT": "1"}])
def test_switched_off_by_the_environment(repo: Path, env: dict[str, str]) -> None:
    result = run_cli("memory", "extract", "-", cwd=repo, input=CONVERSATION, env=env)
    assert result.returncode == 0 and "auto-memory is off" in result.stdout
    assert learnings_and_preferences(repo) == []


def test_switched_off_by_config(repo: Path) -> None:
    run_cli("init", cwd=repo)
    (repo / ".voyager" / "config.toml").write_text("auto_memory = false\n")
    assert (
        extract(CONVERSATION, cwd=str(repo), config=Config(auto_memory=False), provider=None) == []
    )
    assert "auto-memory is off" in run_cli("memory", "extract", cwd=repo, input=CONVERSATION).stdout


def test_cli_extract_with_a_configured_model_command(repo: Path) -> None:
    run_cli("init", cwd=repo)
    (repo / ".voyager" / "config.toml").write_text(
        f"model_command = {json.dumps(command(ANSWERING))}\n"
    )
    trusted(repo)
    result = run_cli("memory", "extract", cwd=repo, input="a conversation")
    assert result.returncode == 0, result.stderr
    assert "Deploys go through the release branch" in result.stdout


def test_session_end_extracts_in_a_detached_process(repo: Path, tmp_path: Path) -> None:
    run_cli("init", cwd=repo)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(
        json.dumps(
            {"type": "user", "message": {"role": "user", "content": "We use tabs in this repo."}}
        )
        + "\n"
    )
    payload = json.dumps(
        {
            "session_id": "s",
            "transcript_path": str(transcript),
            "cwd": str(repo),
            "hook_event_name": "SessionEnd",
        }
    )
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "voyager_brain", "hook", "claude", "session-end"],
        input=payload,
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == ""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not learnings_and_preferences(repo):
        time.sleep(0.2)
    assert learnings_and_preferences(repo) == ["We use tabs in this repo."]


def test_statements_already_stored_do_not_use_up_the_three() -> None:
    stored = ["Never push straight to main.", "I prefer small pull requests."]
    items = offline_candidates([("user", CONVERSATION)], stored)
    assert [i["text"] for i in items] == [
        "Always run the linter before committing.",
        "We use pnpm workspaces in this repo.",
    ]


def test_concurrent_passes_store_each_memory_once(repo: Path, tmp_path: Path) -> None:
    import subprocess

    run_cli("init", cwd=repo)
    transcript = tmp_path / "t.txt"
    transcript.write_text(CONVERSATION)
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "voyager_brain", "memory", "extract", str(transcript)],
            cwd=repo,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for _ in range(3)
    ]
    errors = [run.communicate(timeout=60)[1] for run in runs]
    assert [run.returncode for run in runs] == [0, 0, 0], errors
    texts = learnings_and_preferences(repo)
    assert len(texts) == len(set(texts)) == 4  # all four statements, each once


def hook_event(event: str, repo: Path, transcript: Path) -> None:
    import subprocess

    payload = {
        "session_id": "s",
        "transcript_path": str(transcript),
        "cwd": str(repo),
        "hook_event_name": event,
    }
    done = subprocess.run(
        [sys.executable, "-m", "voyager_brain", "hook", "claude", event],
        input=json.dumps(payload),
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == ""


def wait_for(repo: Path, count: int) -> list[str]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(learnings_and_preferences(repo)) < count:
        time.sleep(0.2)
    return learnings_and_preferences(repo)


def user_says(path: Path, *texts: str) -> None:
    path.write_text(
        "".join(
            json.dumps({"type": "user", "message": {"role": "user", "content": t}}) + "\n"
            for t in texts
        )
    )


def test_after_a_turn_extraction_runs_detached_at_most_once_a_minute(
    repo: Path, tmp_path: Path
) -> None:
    run_cli("init", cwd=repo)
    transcript = tmp_path / "t.jsonl"
    user_says(transcript, "We use tabs in this repo.")
    hook_event("stop", repo, transcript)
    assert wait_for(repo, 1) == ["We use tabs in this repo."]
    sessions = repo / ".voyager" / "cache" / "sessions.json"
    first = json.loads(sessions.read_text())["s"]["extracted_at"]

    user_says(transcript, "We use tabs in this repo.", "Always squash merges.")
    hook_event("stop", repo, transcript)  # a second turn, seconds later: no new pass
    record = json.loads(sessions.read_text())["s"]
    assert record["turns"] == 2 and record["extracted_at"] == first


def test_before_compaction_extraction_runs_detached(repo: Path, tmp_path: Path) -> None:
    run_cli("init", cwd=repo)
    transcript = tmp_path / "t.jsonl"
    user_says(transcript, "We deploy with Fly in this repo.", "Never force-push.")
    hook_event("pre-compact", repo, transcript)
    assert sorted(wait_for(repo, 2)) == ["Never force-push.", "We deploy with Fly in this repo."]


def test_the_model_sees_what_is_stored_and_its_answer_is_capped(repo: Path, tmp_path: Path) -> None:
    """The seed sends the existing memories along so the model proposes only new ones;
    whatever it answers, at most three are kept, each under 200 characters."""
    brain_tool("add", cwd=str(repo), type="learning", text="Deploys run on Fridays only")
    seen = tmp_path / "prompt.txt"
    facts = [
        "Builds use ccache",
        "Tests run with xdist",
        "Docs build with mkdocs",
        "CI tags releases",
    ]
    answer = "\n".join([f"learning: {fact}" for fact in facts] + ["preference: Short names"])
    code = f"import sys; open({str(seen)!r}, 'w').write(sys.stdin.read()); print({answer!r})"
    script = tmp_path / "model.py"
    script.write_text(code)
    provider = CommandProvider(f"{sys.executable} {script}", timeout=30)
    results = extract("We talked.", cwd=str(repo), config=Config(), provider=provider)
    assert "- Deploys run on Fridays only" in seen.read_text()
    assert len(results) == 3 and all(r["ok"] for r in results)
    assert learnings_and_preferences(repo)[1:] == facts[:3]


def test_a_long_answer_is_clipped_under_200_characters(repo: Path, tmp_path: Path) -> None:
    script = tmp_path / "model.py"
    script.write_text("import sys; sys.stdin.read(); print('preference [Style]: ' + 'long ' * 60)")
    provider = CommandProvider(f"{sys.executable} {script}", timeout=30)
    [result] = extract("We talked.", cwd=str(repo), config=Config(), provider=provider)
    [text] = [t for t in learnings_and_preferences(repo) if t.startswith("long")]
    assert result["ok"] and len(text) < MAX_CHARS and text.endswith("…")


def test_the_model_timeout_comes_from_config_toml(repo: Path) -> None:
    run_cli("init", cwd=repo)
    (repo / ".voyager" / "config.toml").write_text(
        f"model_command = {json.dumps(command(SLOW))}\nmodel_timeout_seconds = 0.5\n"
    )
    trusted(repo)
    started = time.monotonic()
    result = run_cli("memory", "extract", "-", cwd=repo, input=CONVERSATION)
    assert time.monotonic() - started < 4.5  # the command sleeps 5 s
    assert result.returncode == 0, result.stderr
    assert "no answer within 0.5s" in result.stderr and "offline" in result.stderr
    assert len(learnings_and_preferences(repo)) == 3


@pytest.mark.parametrize("event", ["stop", "pre-compact", "session-end"])
def test_hooks_return_before_a_slow_extraction_ends(repo: Path, tmp_path: Path, event: str) -> None:
    """The pass runs in a detached process: the hook returns while the model is still
    thinking (here 4 s), and the memory arrives afterwards."""
    run_cli("init", cwd=repo)
    model = tmp_path / "model.py"
    model.write_text(
        "import sys, time; sys.stdin.read(); time.sleep(4); print('learning: Slow but sure')"
    )
    (repo / ".voyager" / "config.toml").write_text(
        f"model_command = {json.dumps(f'{sys.executable} {model}')}\nmodel_timeout_seconds = 30\n"
    )
    trusted(repo)
    transcript = tmp_path / "t.jsonl"
    user_says(transcript, "Anything at all.")
    started = time.monotonic()
    hook_event(event, repo, transcript)
    assert time.monotonic() - started < 3.5
    assert learnings_and_preferences(repo) == []
    assert wait_for(repo, 1) == ["Slow but sure"]
