"""Rho's brain.jsonl as Rho writes it, read and written by voyager-brain, and read back the
way Rho's `foldBrain` reads it (extensions/lib/brain-store.ts, github.com/mikeyobrien/rho
at d727213): identity, user and meta are maps by `key` (the last line of a key wins, a
tombstone removes the key whose entry has its id); contexts are matched by path.

The log below is written by hand in Rho's format: its default `meta0001` and a second
schema_version line under another id (as Rho's brain tool adds one), identity lines from
Rho's migration (random ids) and then under the deterministic id.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

CREATED = "2026-02-10T00:00:00.000Z"
RHO_LOG = [
    {"id": "meta0001", "type": "meta", "key": "schema_version", "value": "1", "created": CREATED},
    {"id": "3c9d0e7a", "type": "identity", "key": "name", "value": "rho", "created": CREATED},
    {"id": "5b1f2a90", "type": "user", "key": "editor", "value": "Vim", "created": CREATED},
    {
        "id": "a1c2e3f4",
        "type": "learning",
        "text": "Deploys go out on Fridays",
        "source": "auto",
        "created": CREATED,
    },
    {"id": "77e1b4d2", "type": "meta", "key": "schema_version", "value": "2", "created": CREATED},
    {
        "id": "0f8e9d6c",
        "type": "identity",
        "key": "name",
        "value": "Rho the second",
        "created": CREATED,
    },
    {"id": "5b1f2a90", "type": "user", "key": "editor", "value": "Neovim", "created": CREATED},
]


def rho_fold(path: Path) -> dict[str, Any]:
    """What Rho's foldBrain makes of the keyed types: {type: {key: value}}, and contexts
    by id (a reference written from brain-store.ts, in Python)."""
    maps: dict[str, dict[str, dict[str, Any]]] = {"identity": {}, "user": {}, "meta": {}}
    contexts: dict[str, dict[str, Any]] = {}
    for raw in path.read_text().splitlines():
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        if entry.get("type") == "tombstone":
            kind = entry.get("target_type")
            if kind in maps:
                for key, held in list(maps[kind].items()):
                    if held["id"] == entry["target_id"]:
                        del maps[kind][key]
                        break
            elif kind == "context":
                contexts.pop(entry["target_id"], None)
            continue
        if entry.get("type") in maps:
            maps[entry["type"]][entry["key"]] = entry
        elif entry.get("type") == "context":
            contexts[entry["id"]] = entry
    values = {kind: {k: e["value"] for k, e in found.items()} for kind, found in maps.items()}
    return {**values, "contexts": contexts}


@pytest.fixture
def rho_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "rho" / "brain.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(e) + "\n" for e in RHO_LOG))
    monkeypatch.setenv("VOYAGER_MEMORY_PATH", str(path))
    return path


def brain(repo: Path, *args: str) -> str:
    done = run_cli("brain", *args, cwd=repo)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_two_ids_of_one_key_show_one_value_the_last(repo: Path, rho_log: Path) -> None:
    assert rho_fold(rho_log)["meta"] == {"schema_version": "2"}  # Rho's reading
    listed = brain(repo, "action=list", "type=meta")
    assert listed.count("schema_version") == 1 and "77e1b4d2" in listed
    identities = brain(repo, "action=list", "type=identity")
    assert identities.count("[identity ") == 1 and "Rho the second" in identities
    done = run_cli("context", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "Rho the second" in done.stdout and "name: rho\n" not in done.stdout


def test_gc_keeps_one_line_per_key_and_rhos_reading_of_it(repo: Path, rho_log: Path) -> None:
    before = rho_fold(rho_log)
    done = run_cli("memory", "gc", "--store", "personal", cwd=repo)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(raw) for raw in rho_log.read_text().splitlines()]
    keys = [(e["type"], e["key"]) for e in lines if e["type"] in ("identity", "user", "meta")]
    assert len(keys) == len(set(keys)) == 3
    assert rho_fold(rho_log) == before  # the last writer of each key is the same


def test_remove_by_key_removes_the_key_for_both(repo: Path, rho_log: Path) -> None:
    out = brain(repo, "action=remove", "type=identity", "key=name")
    assert "0f8e9d6c" in out  # the entry Rho's map holds for that key
    assert "No entries found" in brain(repo, "action=list", "type=identity")
    assert rho_fold(rho_log)["identity"] == {}


def test_adding_a_key_again_replaces_it_for_both(repo: Path, rho_log: Path) -> None:
    brain(repo, "action=add", "type=user", "key=editor", "value=Helix")
    assert rho_fold(rho_log)["user"] == {"editor": "Helix"}
    listed = brain(repo, "action=list", "type=user")
    assert listed.count("[user ") == 1 and "Helix" in listed


def test_a_project_context_and_rhos_absolute_one_are_one_context(repo: Path, rho_log: Path) -> None:
    # Rho keeps contexts by the absolute path of the project; the project log, shared by
    # every clone, keeps "." (the repository's top).
    rho_context = {
        "id": "c7d8e9f0",
        "type": "context",
        "project": "shop",
        "path": str(repo),
        "content": "From Rho: pnpm workspace",
        "created": CREATED,
    }
    with rho_log.open("a") as log:
        log.write(json.dumps(rho_context) + "\n")
    assert run_cli("init", cwd=repo).returncode == 0
    brain(
        repo,
        "action=add",
        "type=context",
        "project=shop",
        "path=.",
        "content=From voyager: uv workspace",
        "store=project",
    )
    listed = brain(repo, "action=list", "type=context")
    assert listed.count("[context ") == 1 and "From voyager" in listed
    done = run_cli("context", cwd=repo)
    assert "From voyager: uv workspace" in done.stdout
    assert "From Rho" not in done.stdout


def test_a_context_for_the_personal_log_is_kept_by_its_absolute_path(
    repo: Path, rho_log: Path
) -> None:
    """Rho reads its brain.jsonl from every folder and matches a context by its absolute
    path: "." would match nothing."""
    brain(
        repo, "action=add", "type=context", "project=shop", "path=.", "content=x", "store=personal"
    )
    [context] = rho_fold(rho_log)["contexts"].values()
    assert context["path"] == str(repo)
