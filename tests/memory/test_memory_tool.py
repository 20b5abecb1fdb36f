"""The brain tool (seed 001) through `voyager-brain brain ...` and `brain_tool()`: the
seed's example lines verbatim in a real shell, where entries go, messages, dedup."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from conftest import git, run_cli

from voyager_brain.errors import EntryError
from voyager_brain.memory import log
from voyager_brain.memory.defaults import BEHAVIORS, default_entries
from voyager_brain.memory.tool import brain_tool

# The seed's "Examples" section, verbatim, with `voyager-brain brain` for `brain`.
# <learning>, <task> and <reminder> stand for ids the earlier lines created.
SEED_EXAMPLES = """\
brain action=add type=learning text="This repo uses pnpm not npm"
brain action=add type=preference text="User prefers early returns" category=Code
brain action=add type=behavior text="Be direct" category=do
brain action=add type=identity key=name value=rho
brain action=add type=user key=timezone value="US/Central"
brain action=add type=task description="Fix the flaky CI test" priority=high due=2026-02-15 tags=code,ci
brain action=add type=reminder text="Run backup script" cadence={"kind":"interval","every":"6h"} enabled=true
brain action=update id=<learning> text="This repo uses pnpm (not npm or yarn)"
brain action=list type=learning
brain action=list query=pnpm
brain action=list type=learning verbose=true
brain action=list type=task filter=pending
brain action=list type=reminder filter=active
brain action=decay
brain action=task_done id=<task>
brain action=task_clear
brain action=reminder_run id=<reminder> result=ok
brain action=reminder_run id=<reminder> result=error error="Script exited with code 1"
brain action=remove type=identity key=name
brain action=remove type=context path=/home/user/projects/rho
brain action=remove id=<learning> reason="No longer accurate"
"""  # noqa: E501


def added(path: Path) -> list[dict[str, Any]]:
    """The lines of a log apart from the defaults a new personal log starts with."""
    defaults = {e["id"] for e in default_entries("2026-01-01T00:00:00.000Z")}
    return [e for e in log.read(path)[0] if e["id"] not in defaults]


def shell(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a line in a real bash, as a person would type it (brace expansion and all)."""
    command = f"{shlex.quote(sys.executable)} -m voyager_brain {line.removeprefix('brain ')}"
    command = command.replace(" -m voyager_brain ", " -m voyager_brain brain ", 1)
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=60
    )


def last_id(out: str) -> str:
    # "Added learning a1b2c3d4: ..." -> a1b2c3d4
    return out.split()[2].rstrip(":")


def test_every_seed_example_line_works_verbatim(repo: Path, isolated_env: Path) -> None:
    run_cli("init", cwd=repo)
    # The context the remove-by-path example names must exist first.
    brain_tool(
        "add",
        cwd=str(repo),
        type="context",
        project="rho",
        path="/home/user/projects/rho",
        content="TypeScript monorepo. Use pnpm.",
    )
    ids: dict[str, str] = {}
    outputs = []
    for line in SEED_EXAMPLES.splitlines():
        for name, value in ids.items():
            line = line.replace(f"<{name}>", value)
        result = shell(line, repo)
        assert result.returncode == 0, f"{line}\n{result.stderr}"
        assert "Traceback" not in result.stderr
        outputs.append(result.stdout)
        if "action=add type=learning" in line:
            ids["learning"] = last_id(result.stdout)
        elif "action=add type=task" in line:
            ids["task"] = last_id(result.stdout)
        elif "action=add type=reminder" in line:
            ids["reminder"] = last_id(result.stdout)
    out = dict(zip(SEED_EXAMPLES.splitlines(), outputs, strict=True))
    assert out['brain action=add type=learning text="This repo uses pnpm not npm"'].startswith(
        "Added learning "
    )
    assert "[learning" in out["brain action=list type=learning"]
    assert "pnpm (not npm or yarn)" in out["brain action=list query=pnpm"]
    verbose = out["brain action=list type=learning verbose=true"].splitlines()
    assert json.loads(verbose[0])["text"] == "This repo uses pnpm (not npm or yarn)"
    assert "Fix the flaky CI test" in out["brain action=list type=task filter=pending"]
    assert "Run backup script" in out["brain action=list type=reminder filter=active"]
    removed = outputs[-1].strip()
    assert removed == f"Removed learning {ids['learning']}: This repo uses pnpm (not npm or yarn)"
    assert outputs[-3].strip().startswith("Removed identity ")
    assert outputs[-3].strip().endswith(": name = rho")


def test_the_reminder_cadence_survives_the_shell(repo: Path) -> None:
    result = shell(
        'brain action=add type=reminder text="Run backup script" '
        'cadence={"kind":"interval","every":"6h"} enabled=true --json',
        repo,
    )
    entry = json.loads(result.stdout)["entries"][0]
    assert entry["cadence"] == {"kind": "interval", "every": "6h"}
    assert entry["enabled"] is True


def test_tags_are_normalized_from_a_comma_list(repo: Path) -> None:
    result = brain_tool("add", cwd=str(repo), type="task", description="x", tags="Code, CI,,code")
    assert result["entries"][0]["tags"] == ["code", "ci"]


def test_identity_and_user_always_go_to_the_personal_log(repo: Path, isolated_env: Path) -> None:
    run_cli("init", cwd=repo)
    brain_tool("add", cwd=str(repo), type="identity", key="name", value="rho", store="project")
    brain_tool("add", cwd=str(repo), type="user", key="editor", value="Neovim")
    personal = added(isolated_env / "memory.jsonl")
    assert {e["type"] for e in personal} == {"identity", "user"}
    assert not (repo / ".voyager" / "memory.jsonl").exists()


def test_behavior_and_preference_are_personal_unless_store_project(
    repo: Path, isolated_env: Path
) -> None:
    run_cli("init", cwd=repo)
    brain_tool("add", cwd=str(repo), type="preference", text="Tabs", category="Code")
    brain_tool(
        "add",
        cwd=str(repo),
        type="preference",
        text="Spaces in this repo",
        category="Code",
        store="project",
    )
    assert [e["text"] for e in added(isolated_env / "memory.jsonl")] == ["Tabs"]
    project = log.read(repo / ".voyager" / "memory.jsonl")[0]
    assert [e["text"] for e in project] == ["Spaces in this repo"]


def test_learnings_go_to_the_project_log_inside_a_voyager_repository(
    repo: Path, isolated_env: Path
) -> None:
    # Without .voyager/ the personal log takes it.
    brain_tool("add", cwd=str(repo), type="learning", text="Before init")
    run_cli("init", cwd=repo)
    sub = repo / "src"
    sub.mkdir()
    brain_tool("add", cwd=str(sub), type="learning", text="After init, from a subfolder")
    assert [e["text"] for e in added(isolated_env / "memory.jsonl")] == ["Before init"]
    [stored] = log.read(repo / ".voyager" / "memory.jsonl")[0]
    # Paths in the project log are relative to the top, resolved when read.
    assert (stored["scope"], stored["projectPath"]) == ("project", ".")
    listed = brain_tool("list", cwd=str(sub), type="learning", verbose=True)["entries"]
    assert {e["text"] for e in listed} == {"Before init", "After init, from a subfolder"}
    assert [e["projectPath"] for e in listed if "projectPath" in e] == [str(repo.resolve())]


def test_context_paths_are_stored_relative_in_the_project_log(repo: Path) -> None:
    run_cli("init", cwd=repo)
    brain_tool(
        "add",
        cwd=str(repo),
        type="context",
        project="p",
        path=str(repo / "api"),
        content="FastAPI service",
        store="project",
    )
    [stored] = log.read(repo / ".voyager" / "memory.jsonl")[0]
    assert stored["path"] == "api"
    # The id of the path as stored, so that every clone computes the same one.
    assert stored["id"] == log.deterministic_id("context", "api")
    removed = brain_tool("remove", cwd=str(repo), type="context", path=str(repo.resolve() / "api"))
    assert removed["message"].startswith("Removed context ")


def test_a_context_added_in_two_clones_is_one_entry(repo: Path, tmp_path: Path) -> None:
    """Re-adding the same path overwrites (seed 001), also from another clone, where the
    absolute path differs: both compute the id of the path relative to their top."""
    run_cli("init", cwd=repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    other = tmp_path / "other-clone"
    git(tmp_path, "clone", "-q", str(repo), str(other))
    for top, content in ((repo, "FastAPI service"), (other, "FastAPI service on port 8080")):
        brain_tool(
            "add", cwd=str(top), type="context", project="p", path=str(top / "api"), content=content
        )
    (other / ".voyager" / "memory.jsonl").write_bytes(
        (repo / ".voyager" / "memory.jsonl").read_bytes()
        + (other / ".voyager" / "memory.jsonl").read_bytes()
    )  # the two clones' lines together, as a merge of both branches holds them
    [live] = brain_tool("list", cwd=str(other), type="context", verbose=True)["entries"]
    assert live["content"] == "FastAPI service on port 8080"
    assert live["path"] == str((other / "api").resolve())


def test_adding_a_keyed_entry_again_overwrites_whatever_its_id(repo: Path) -> None:
    """An entry imported with an id of its own (the seed's examples use `ctx00001`) is
    found by its key, not by recomputing an id."""
    run_cli("init", cwd=repo)
    line = {
        "id": "ctx00001",
        "type": "context",
        "project": "p",
        "path": "api",
        "content": "old",
        "created": "2026-01-01T00:00:00.000Z",
    }
    log.append(repo / ".voyager" / "memory.jsonl", [line])
    result = brain_tool(
        "add", cwd=str(repo), type="context", project="p", path=str(repo / "api"), content="new"
    )
    assert result["message"].startswith("Updated context ctx00001")
    [live] = brain_tool("list", cwd=str(repo), type="context", verbose=True)["entries"]
    assert (live["id"], live["content"]) == ("ctx00001", "new")


def test_exact_duplicate_learning_writes_nothing(repo: Path, isolated_env: Path) -> None:
    brain_tool("add", cwd=str(repo), type="learning", text="This repo uses pnpm not npm")
    before = (isolated_env / "memory.jsonl").read_bytes()
    result = brain_tool("add", cwd=str(repo), type="learning", text="this repo uses PNPM, not npm!")
    assert result == {
        "ok": False,
        "message": "Duplicate learning: already stored",
        "entries": added(isolated_env / "memory.jsonl"),
    }
    assert (isolated_env / "memory.jsonl").read_bytes() == before


def test_near_duplicate_updates_the_existing_entry(repo: Path, isolated_env: Path) -> None:
    first = brain_tool("add", cwd=str(repo), type="learning", text="API runs on port 3000")
    second = brain_tool("add", cwd=str(repo), type="learning", text="API runs on port 8080")
    entry_id = first["entries"][0]["id"]
    assert second["message"] == (
        f"Updated learning {entry_id}: API runs on port 8080 (supersedes: API runs on port 3000)"
    )
    listed = brain_tool("list", cwd=str(repo), type="learning")["entries"]
    assert [(e["id"], e["text"]) for e in listed] == [(entry_id, "API runs on port 8080")]
    assert "updated" in listed[0]


def test_update_merges_fields_and_records_when(repo: Path) -> None:
    added = brain_tool("add", cwd=str(repo), type="task", description="Fix CI", priority="low")
    task_id = added["entries"][0]["id"]
    clock = lambda: datetime(2026, 2, 11, 9, 30, tzinfo=UTC)  # noqa: E731
    brain_tool("update", cwd=str(repo), clock=clock, id=task_id, priority="urgent")
    [task] = brain_tool("list", cwd=str(repo), type="task")["entries"]
    assert (task["description"], task["priority"]) == ("Fix CI", "urgent")
    assert task["updated"] == "2026-02-11T09:30:00.000Z"


def test_decay_tombstones_only_stale_low_scoring_learnings(repo: Path) -> None:
    old = lambda: datetime(2026, 1, 1, tzinfo=UTC)  # noqa: E731
    now = lambda: datetime(2026, 6, 1, tzinfo=UTC)  # noqa: E731
    brain_tool(
        "add", cwd=str(repo), clock=old, type="learning", text="Old auto fact", source="auto"
    )
    brain_tool("add", cwd=str(repo), clock=old, type="preference", text="Old pref", category="X")
    brain_tool("add", cwd=str(repo), clock=now, type="learning", text="Fresh fact", source="auto")
    result = brain_tool("decay", cwd=str(repo), clock=now)
    assert result["message"] == "Decayed 1 learning"
    kept = brain_tool("list", cwd=str(repo))["entries"]
    texts = {e["text"] for e in kept if e["type"] in ("learning", "preference")}
    assert texts == {"Old pref", "Fresh fact"}


@pytest.mark.parametrize(
    ("action", "params", "message"),
    [
        ("fly", {}, "action: expected one of add, update, remove"),
        ("add", {"type": "learning"}, "text: required for a learning entry"),
        ("add", {"type": "behavior", "text": "x", "category": "maybe"}, "category: expected"),
        ("add", {"type": "task", "description": "x", "priority": "asap"}, "priority: expected"),
        ("add", {"type": "reminder", "text": "x", "cadence": "sometimes"}, "cadence: expected"),
        ("remove", {"id": "nope0000"}, "no entry 'nope0000'"),
        ("remove", {"type": "learning"}, "remove needs id="),
        ("reminder_run", {"id": "x"}, "reminder_run needs id=... and result="),
    ],
)
def test_bad_parameters_are_one_clear_error(
    repo: Path, action: str, params: dict[str, Any], message: str
) -> None:
    with pytest.raises(EntryError, match=message):
        brain_tool(action, cwd=str(repo), **params)


def test_cli_errors_exit_2_without_traceback(repo: Path) -> None:
    for args in (
        ["brain", "action=add", "type=learning"],
        ["brain", "type=learning"],
        ["brain", "action=list", "oops"],
    ):
        result = run_cli(*args, cwd=repo)
        assert result.returncode == 2, args
        assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1


def test_secrets_are_redacted_before_they_reach_either_log(repo: Path, isolated_env: Path) -> None:
    run_cli("init", cwd=repo)
    token = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"
    brain_tool("add", cwd=str(repo), type="learning", text=f"CI uses GITHUB_TOKEN={token}")
    brain_tool("add", cwd=str(repo), type="preference", text=f"token {token}", category="X")
    for path in (repo / ".voyager" / "memory.jsonl", isolated_env / "memory.jsonl"):
        text = path.read_text()
        assert token not in text and "[REDACTED:github-token]" in text


def test_turning_redaction_off_spares_the_personal_log_only(repo: Path, isolated_env: Path) -> None:
    """The project log is tracked by git: it is redacted whatever the setting."""
    run_cli("init", cwd=repo)
    config = repo / ".voyager" / "config.toml"
    config.write_text(config.read_text() + "\nredact_secrets = false\n")
    token = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"
    brain_tool("add", cwd=str(repo), type="learning", text=f"CI uses GITHUB_TOKEN={token}")
    brain_tool("add", cwd=str(repo), type="preference", text=f"token {token}", category="X")
    assert token not in (repo / ".voyager" / "memory.jsonl").read_text()
    assert token in (isolated_env / "memory.jsonl").read_text()


def test_memory_stats_and_search(repo: Path) -> None:
    run_cli("init", cwd=repo)
    for text in ("Uses pnpm", "Deploys on Fridays are banned"):
        brain_tool("add", cwd=str(repo), type="learning", text=text)
    brain_tool("add", cwd=str(repo), type="identity", key="name", value="rho")
    out = run_cli("memory", "stats", cwd=repo).stdout
    assert out.splitlines()[0] == f"🧠 2L 0P 0T 1R | {len(BEHAVIORS)}beh 1id 0usr"
    data = json.loads(run_cli("memory", "stats", "--json", cwd=repo).stdout)
    assert data["logs"]["project"]["total"] == 2 and data["logs"]["personal"]["bad_lines"] == 0
    assert "Deploys on Fridays" in run_cli("memory", "search", "FRIDAY", cwd=repo).stdout


def test_memory_gc_reports_bytes_saved(repo: Path) -> None:
    run_cli("init", cwd=repo)
    added = brain_tool("add", cwd=str(repo), type="learning", text="v1 of a fact about the api")
    for n in range(5):
        brain_tool("update", cwd=str(repo), id=added["entries"][0]["id"], text=f"v{n} fact")
    result = run_cli("memory", "gc", "--store", "project", cwd=repo)
    assert result.returncode == 0 and "saved)" in result.stdout
    assert len((repo / ".voyager" / "memory.jsonl").read_text().splitlines()) == 1


def test_four_cli_processes_times_100_adds_keep_all_400(repo: Path) -> None:
    run_cli("init", cwd=repo)
    script = (
        "for n in $(seq 1 100); do "
        # Numbers as letters: texts differing only in digits would be near-duplicates.
        "word=$(echo $n | tr 0-9 a-j); "
        f"{shlex.quote(sys.executable)} -m voyager_brain brain action=add type=learning "
        'text="writer $W wrote fact $word of the stress test" store=project || exit 1; '
        "done"
    )
    procs = [
        subprocess.Popen(
            ["bash", "-c", script],
            cwd=repo,
            env={**os.environ, "W": letter},
            stdout=subprocess.DEVNULL,
        )
        for letter in ("alpha", "bravo", "charlie", "delta")
    ]
    for p in procs:
        assert p.wait(timeout=600) == 0
    raw = (repo / ".voyager" / "memory.jsonl").read_bytes().split(b"\n")
    assert raw[-1] == b"" and len(raw) - 1 == 400
    assert all(isinstance(json.loads(line), dict) for line in raw[:-1])
    learnings = brain_tool("list", cwd=str(repo), type="learning")["entries"]
    assert len({e["text"] for e in learnings}) == 400


def _processes(repo: Path, count: int, *args: str) -> list[subprocess.CompletedProcess[str]]:
    """`count` `voyager-brain ARGS...` processes started together."""
    command = [sys.executable, "-m", "voyager_brain", *args]
    procs = [
        subprocess.Popen(
            command, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(count)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    return [
        subprocess.CompletedProcess(command, p.returncode, out, err)
        for p, (out, err) in zip(procs, outputs, strict=True)
    ]


def test_processes_adding_the_same_text_at_once_store_it_once(repo: Path) -> None:
    """The duplicate check and the write happen under the lock, as the seed says."""
    run_cli("init", cwd=repo)
    text = "Staging deploys need a manual approval step"
    for _ in range(3):  # each round a race of its own; unlocked, one round in two lost
        results = _processes(repo, 8, "brain", "action=add", "type=learning", f"text={text}")
        assert all(r.returncode == 0 for r in results), [r.stderr for r in results]
    outputs = sorted(r.stdout.split(" ", 1)[0] for r in results)
    assert outputs == ["Duplicate"] * 8
    lines = (repo / ".voyager" / "memory.jsonl").read_text().splitlines()
    assert sum(text in line for line in lines) == 1


def test_processes_updating_one_task_at_once_lose_no_field(repo: Path) -> None:
    """An update reads the entry and writes it whole: under the lock, each sees the
    previous one's line, so the last line holds every field."""
    run_cli("init", cwd=repo)
    task = brain_tool("add", cwd=str(repo), type="task", description="Ship it")["entries"][0]
    command = [sys.executable, "-m", "voyager_brain", "brain", "action=update", f"id={task['id']}"]
    procs = [
        subprocess.Popen([*command, f"field{n}=x"], cwd=repo, stdout=subprocess.DEVNULL)
        for n in range(6)
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    live = brain_tool("list", cwd=str(repo), type="task", verbose=True)["entries"][0]
    assert {f"field{n}" for n in range(6)} <= live.keys()


def test_a_new_personal_log_is_seeded_once(repo: Path, isolated_env: Path) -> None:
    brain_tool("list", cwd=str(repo))
    entries, health = log.read(isolated_env / "memory.jsonl")
    assert health.bad_lines == 0
    kinds = [e["type"] for e in entries]
    assert kinds.count("behavior") == len(BEHAVIORS) >= 16
    assert {e["category"] for e in entries if e["type"] == "behavior"} == {"do", "dont", "value"}
    [reminder] = [e for e in entries if e["type"] == "reminder"]
    assert reminder["cadence"] == {"kind": "daily", "at": "01:00"}
    [meta] = [e for e in entries if e["type"] == "meta"]
    assert (meta["key"], meta["value"]) == ("schema_version", "1")
    # Removing every default does not bring them back: the file exists.
    brain_tool("remove", cwd=str(repo), id="b0000001")
    brain_tool("list", cwd=str(repo))
    assert "b0000001" not in {e["id"] for e in brain_tool("list", cwd=str(repo))["entries"]}


def test_two_first_runs_seed_the_personal_log_once(repo: Path, isolated_env: Path) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "voyager_brain", "brain", "action=list"],
            cwd=repo,
            stdout=subprocess.DEVNULL,
        )
        for _ in range(2)
    ]
    for p in procs:
        assert p.wait(timeout=60) == 0
    entries = log.read(isolated_env / "memory.jsonl")[0]
    assert len(entries) == len(default_entries("x"))


def test_decay_thresholds_come_from_config(repo: Path) -> None:
    run_cli("init", cwd=repo)
    # The seed's camelCase spellings are accepted. A 20-day-old learning scores 8
    # (recency 10 - 20 // 7), so it decays only when the threshold is above that.
    (repo / ".voyager" / "config.toml").write_text("decayAfterDays = 10\ndecayMinScore = 9\n")
    old = lambda: datetime(2026, 1, 1, tzinfo=UTC)  # noqa: E731
    brain_tool(
        "add",
        cwd=str(repo),
        clock=old,
        type="learning",
        text="Twenty days old fact",
        source="auto",
        store="personal",
    )
    later = lambda: datetime(2026, 1, 21, tzinfo=UTC)  # noqa: E731
    assert brain_tool("decay", cwd=str(repo), clock=later)["message"] == "Decayed 1 learning"


def test_import_rho_brings_a_brain_jsonl_in_once(repo: Path, isolated_env: Path) -> None:
    source = Path(__file__).resolve().parents[1] / "fixtures" / "rho" / "brain.jsonl"
    first = json.loads(run_cli("import", "rho", str(source), "--json", cwd=repo).stdout)
    assert (first["imported"], first["bad_lines"]) == (14, 1)
    again = json.loads(run_cli("import", "rho", str(source), "--json", cwd=repo).stdout)
    assert (again["imported"], again["already_present"]) == (0, 14)
    listed = brain_tool("list", cwd=str(repo))["entries"]
    ids = {e["id"] for e in listed}
    assert {"t-abc123", "rem00001", "ctx00001", "a1b2c3d4"} <= ids
    assert "a1b2c3d5" not in ids  # the seed's tombstone still removes its learning


def test_memory_due_lists_due_reminders_and_overdue_or_urgent_tasks(repo: Path) -> None:
    brain_tool("add", cwd=str(repo), type="task", description="Overdue thing", due="2020-01-01")
    brain_tool("add", cwd=str(repo), type="task", description="Urgent thing", priority="urgent")
    brain_tool("add", cwd=str(repo), type="task", description="Later thing", due="2999-01-01")
    out = run_cli("memory", "due", cwd=repo).stdout
    assert "Overdue thing (overdue since 2020-01-01)" in out
    assert "Urgent thing (urgent)" in out
    assert "Later thing" not in out
    # The default consolidation reminder has never run, so it is due.
    assert "reminder rem00001" in out
    data = json.loads(run_cli("memory", "due", "--json", cwd=repo).stdout)
    assert len(data["tasks"]) == 2 and len(data["reminders"]) == 1


def test_memory_migrate_brings_a_legacy_folder_in_once(
    repo: Path, isolated_env: Path, tmp_path: Path
) -> None:
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    (legacy / "core.jsonl").write_text(
        '{"category":"do","text":"Be brief"}\n{"key":"name","value":"rho"}\n'
    )
    (legacy / "memory.jsonl").write_text(
        '{"text":"Uses pnpm","created":"2025-01-01T00:00:00Z"}\n'
        '{"category":"Code","text":"Early returns"}\nnot json\n'
    )
    (legacy / "tasks.jsonl").write_text('{"description":"Old task","status":"pending"}\n')
    before = {p.name: p.read_bytes() for p in legacy.iterdir()}
    result = run_cli("memory", "migrate", str(legacy), cwd=repo)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("migrated 5 entries from core.jsonl, memory.jsonl, tasks.jsonl")
    assert "(1 lines left out)" in result.stdout
    listed = brain_tool("list", cwd=str(repo))["entries"]
    kinds = {(e["type"], e.get("text") or e.get("description") or e.get("value")) for e in listed}
    assert {
        ("behavior", "Be brief"),
        ("identity", "rho"),
        ("learning", "Uses pnpm"),
        ("preference", "Early returns"),
        ("task", "Old task"),
    } <= kinds
    again = run_cli("memory", "migrate", str(legacy), cwd=repo)
    assert again.returncode == 2 and "already migrated" in again.stderr
    assert {p.name: p.read_bytes() for p in legacy.iterdir()} == before


# -- rules checked one by one -----------------------------------------------------------

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
T1 = datetime(2026, 3, 1, 13, 0, tzinfo=UTC)


def test_task_done_reminder_run_and_task_clear_write_what_the_seed_says(repo: Path) -> None:
    run_cli("init", cwd=repo)
    at = {"cwd": str(repo), "clock": lambda: T1}
    task = brain_tool("add", cwd=str(repo), clock=lambda: T0, type="task", description="Fix CI")
    [done] = brain_tool("task_done", id=task["entries"][0]["id"], **at)["entries"]
    assert (done["status"], done["completedAt"]) == ("done", "2026-03-01T13:00:00.000Z")
    assert (done["created"], done["updated"]) == (
        "2026-03-01T12:00:00.000Z",
        "2026-03-01T13:00:00.000Z",
    )
    reminder = brain_tool(
        "add",
        cwd=str(repo),
        clock=lambda: T0,
        type="reminder",
        text="Backup",
        cadence='{"kind":"interval","every":"6h"}',
    )
    rid = reminder["entries"][0]["id"]
    [ran] = brain_tool("reminder_run", id=rid, result="error", error="exit 1", **at)["entries"]
    assert {
        k: ran[k] for k in ("last_run", "next_due", "last_result", "last_error", "updated")
    } == {
        "last_run": "2026-03-01T13:00:00.000Z",
        "next_due": "2026-03-01T19:00:00.000Z",
        "last_result": "error",
        "last_error": "exit 1",
        "updated": "2026-03-01T13:00:00.000Z",
    }
    cleared = brain_tool("task_clear", **at)
    assert cleared["message"] == "Cleared 1 completed task"
    assert brain_tool("list", cwd=str(repo), type="task")["entries"] == []
    last = log.read(repo / ".voyager" / "memory.jsonl")[0][-1]
    assert (last["type"], last["target_id"], last["reason"]) == (
        "tombstone",
        done["id"],
        "task_clear",
    )


def test_voyager_memory_path_points_at_one_file(
    repo: Path, isolated_env: Path, tmp_path: Path
) -> None:
    custom = tmp_path / "elsewhere" / "my-memory.jsonl"
    env = {"VOYAGER_MEMORY_PATH": str(custom)}
    done = run_cli(
        "brain", "action=add", "type=identity", "key=name", "value=rho", cwd=repo, env=env
    )
    assert done.returncode == 0, done.stderr
    assert any(e.get("value") == "rho" for e in log.read(custom)[0])
    assert not (isolated_env / "memory.jsonl").exists()
    listed = run_cli("brain", "action=list", "type=identity", cwd=repo, env=env).stdout
    assert "rho" in listed and "rho" not in run_cli("brain", "action=list", cwd=repo).stdout


def test_a_project_entry_wins_over_a_personal_one_with_the_same_id(
    repo: Path, isolated_env: Path
) -> None:
    run_cli("init", cwd=repo)
    brain_tool("list", cwd=str(repo))  # seeds the personal log
    line = {"id": "same0001", "type": "learning", "created": "2026-01-01T00:00:00.000Z"}
    log.append(isolated_env / "memory.jsonl", [{**line, "text": "personal version"}])
    log.append(repo / ".voyager" / "memory.jsonl", [{**line, "text": "project version"}])
    [entry] = [e for e in brain_tool("list", cwd=str(repo))["entries"] if e["id"] == "same0001"]
    assert entry["text"] == "project version"
    removed = brain_tool("remove", cwd=str(repo), id="same0001")
    assert removed["ok"]
    tomb = log.read(repo / ".voyager" / "memory.jsonl")[0][-1]
    assert (tomb["type"], tomb["target_id"]) == ("tombstone", "same0001")


def test_changes_go_to_the_log_that_holds_the_entry(repo: Path, isolated_env: Path) -> None:
    run_cli("init", cwd=repo)
    added = brain_tool(
        "add", cwd=str(repo), type="learning", text="Personal note on tabs", store="personal"
    )
    entry_id = added["entries"][0]["id"]
    project_log = repo / ".voyager" / "memory.jsonl"
    before = project_log.read_bytes() if project_log.exists() else b""
    brain_tool("update", cwd=str(repo), id=entry_id, text="Personal note on tabs and spaces")
    brain_tool("remove", cwd=str(repo), id=entry_id)
    personal = log.read(isolated_env / "memory.jsonl")[0]
    assert [e["type"] for e in personal if entry_id in (e["id"], e.get("target_id"))] == [
        "learning",
        "learning",
        "tombstone",
    ]
    assert (project_log.read_bytes() if project_log.exists() else b"") == before


def test_migrate_is_never_automatic(repo: Path, isolated_env: Path) -> None:
    """A legacy folder beside the log (the original tool's layout) is left alone until
    `voyager-brain memory migrate` is run."""
    legacy = isolated_env / "brain"
    legacy.mkdir()
    (legacy / "core.jsonl").write_text('{"key":"name","value":"old-rho"}\n')
    run_cli("init", cwd=repo)
    run_cli("brain", "action=list", cwd=repo)
    run_cli("context", cwd=repo)
    texts = (isolated_env / "memory.jsonl").read_text()
    assert "old-rho" not in texts and '"key":"migrated' not in texts


def test_one_file_for_both_logs_is_locked_once(repo: Path) -> None:
    """VOYAGER_MEMORY_PATH may name the project log itself: the tool must not wait on
    its own lock (flock locks conflict between two opens in one process)."""
    run_cli("init", cwd=repo)
    (repo / ".voyager" / "config.toml").write_text("lock_timeout_seconds = 1\n")
    env = {"VOYAGER_MEMORY_PATH": str(repo / ".voyager" / "memory.jsonl")}
    done = run_cli("brain", "action=add", "type=learning", "text=One file", cwd=repo, env=env)
    assert done.returncode == 0, done.stderr
    assert "One file" in (repo / ".voyager" / "memory.jsonl").read_text()


def test_migrations_run_at_once_bring_the_folder_in_once(
    repo: Path, isolated_env: Path, tmp_path: Path
) -> None:
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    (legacy / "memory.jsonl").write_text(
        "".join(f'{{"text":"Legacy fact {chr(97 + n)}"}}\n' for n in range(20))
    )
    brain_tool("list", cwd=str(repo))  # the personal log exists: the race is on the marker
    results = _processes(repo, 4, "memory", "migrate", str(legacy))
    assert sorted(r.returncode for r in results) == [0, 2, 2, 2]
    text = (isolated_env / "memory.jsonl").read_text()
    assert all(text.count(f'"Legacy fact {chr(97 + n)}"') == 1 for n in range(20))


def test_imports_run_at_once_bring_each_line_in_once(
    repo: Path, isolated_env: Path, tmp_path: Path
) -> None:
    source = tmp_path / "brain.jsonl"
    lines = [
        {
            "id": f"{n:08x}",
            "type": "learning",
            "text": f"Imported {chr(97 + n)}",
            "created": "2026-01-01T00:00:00.000Z",
        }
        for n in range(20)
    ]
    source.write_bytes(b"".join(log.encode(line) for line in lines))
    brain_tool("list", cwd=str(repo))
    results = _processes(repo, 4, "import", "rho", str(source), "--json")
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results]
    assert sum(json.loads(r.stdout)["imported"] for r in results) == 20
    assert len(log.read(isolated_env / "memory.jsonl")[0]) == 20 + len(default_entries(T0))
