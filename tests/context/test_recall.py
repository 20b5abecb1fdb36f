"""Recall: one search over brain.md, brain.json and both memory logs, on real files in a
real git repository; its index in .voyager/cache/ kept current, and rebuilt when lost."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import TickingClock, git, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from voyager_brain import BrainEntry, BrainManager, InvalidEntryError
from voyager_brain.context import recall as recall_module
from voyager_brain.context.recall import RecallHit, index_path, query_terms
from voyager_brain.memory.tool import brain_tool

T0 = datetime(2026, 3, 21, 14, 30, tzinfo=UTC)


def make_old(*paths: Path) -> None:
    """Files written over two seconds ago: their fingerprint is trusted from then on."""
    past = time.time() - 60
    for path in paths:
        if path.exists():
            os.utime(path, (past, past))


@pytest.fixture
def project(repo: Path) -> Path:
    """A project with an item of every kind, each with a word no other item has."""
    assert run_cli("init", cwd=repo).returncode == 0
    bm = BrainManager(repo, clock=TickingClock(T0))
    bm.load()
    bm.update(BrainEntry("observation", "The zebra migration script needs a dry-run flag."))
    bm.update(
        BrainEntry(
            "reflection",
            "Summary of 12 older entries: the quokka deployment was rolled back twice.",
            source="compact",
        )
    )
    bm.merge_state(
        {
            "decisions": [
                {
                    "what": "Use Postgres for storage",
                    "why": "pelican JSONB queries",
                    "when": "2026-03-01",
                }
            ],
            "knownIssues": [
                {
                    "issue": "Flaky walrus websocket test on CI",
                    "workaround": "rerun",
                    "severity": "low",
                }
            ],
            "nextSteps": ["Write the capybara importer"],
        }
    )
    bm.persist()
    brain_tool("add", cwd=str(repo), type="learning", text="The lemur API listens on port 8080")
    brain_tool(
        "add", cwd=str(repo), type="learning", text="Prefer ocelot over sed", store="personal"
    )
    return repo


def hits(top: Path, query: str, limit: int = 10) -> list[RecallHit]:
    return BrainManager(top).recall(query, limit)


def best(top: Path, query: str) -> RecallHit:
    found = hits(top, query)
    assert found, query
    return found[0]


# -- every store --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "source", "kind", "key", "date"),
    [
        (
            "zebra migration",
            "brain.md",
            "observation",
            "Observation — 2026-03-21T14:30:00Z",
            "2026-03-21T14:30:00Z",
        ),
        (
            "quokka deployment",
            "brain.md",
            "summary",
            "Reflection — 2026-03-21T14:31:00Z",
            "2026-03-21T14:31:00Z",
        ),
        ("pelican", "brain.json", "decision", "Use Postgres for storage", "2026-03-01"),
        ("walrus websocket", "brain.json", "knownIssue", "Flaky walrus websocket test on CI", None),
        ("capybara", "brain.json", "nextStep", "nextSteps", None),
        ("lemur port", "memory (project)", "learning", None, None),
        ("ocelot", "memory (personal)", "learning", None, None),
    ],
)
def test_an_item_of_every_store_is_found_by_its_words(
    project: Path, query: str, source: str, kind: str, key: str | None, date: str | None
) -> None:
    hit = best(project, query)
    assert (hit.source, hit.kind) == (source, kind)
    if key is not None:
        assert hit.key == key
    if source.startswith("memory"):
        assert len(hit.key) == 8  # the entry's id
        assert hit.date is not None and hit.date.endswith("Z")
    else:
        assert hit.date == date
    assert query.split()[0] in hit.excerpt.casefold()
    assert "\n" not in hit.excerpt


def test_words_are_matched_by_their_stem_and_case(project: Path) -> None:
    assert best(project, "MIGRATIONS zebras").kind == "observation"
    assert best(project, "rolled back").kind == "summary"


def test_a_long_text_gives_a_short_excerpt_around_the_match(project: Path) -> None:
    filler = "Lorem ipsum dolor sit amet. " * 40
    brain_tool(
        "add", cwd=str(project), type="learning", text=f"{filler}The axolotl cache. {filler}"
    )
    hit = best(project, "axolotl")
    assert "axolotl" in hit.excerpt
    assert len(hit.excerpt) <= 210
    assert hit.excerpt.startswith("…") and hit.excerpt.endswith("…")


def test_the_limit_and_no_match(project: Path) -> None:
    assert hits(project, "nothing matches this") == []
    assert len(hits(project, "the", limit=2)) == 2
    with pytest.raises(InvalidEntryError, match="query: empty"):
        hits(project, "  ")
    with pytest.raises(InvalidEntryError, match="limit"):
        hits(project, "zebra", limit=0)


# -- ranking ------------------------------------------------------------------------------


def test_every_word_beats_one_word_repeated_and_a_better_match_comes_first(repo: Path) -> None:
    run_cli("init", cwd=repo)
    for text in (
        "redis redis redis redis is everywhere in this stack",
        "Set the redis cache eviction policy to allkeys-lru",
        "The redis cache is warmed at boot",
    ):
        brain_tool("add", cwd=str(repo), type="learning", text=text)
    found = [h.excerpt for h in hits(repo, "redis cache eviction")]
    assert found == [
        "Set the redis cache eviction policy to allkeys-lru",
        "The redis cache is warmed at boot",
        "redis redis redis redis is everywhere in this stack",
    ]


def test_a_tie_goes_to_the_newer_item(repo: Path) -> None:
    run_cli("init", cwd=repo)
    bm = BrainManager(repo, clock=TickingClock(T0, step=timedelta(hours=1)))
    bm.load()
    for _ in range(3):
        bm.update(BrainEntry("observation", "The build cache of the platypus service is stale"))
    bm.persist()
    found = hits(repo, "platypus cache")
    assert [h.date for h in found] == [
        "2026-03-21T16:30:00Z",
        "2026-03-21T15:30:00Z",
        "2026-03-21T14:30:00Z",
    ]
    assert len({h.score for h in found}) == 1


def test_a_project_entry_hides_the_personal_entry_with_its_id(project: Path) -> None:
    [personal] = hits(project, "ocelot")
    entry = {"id": personal.key, "type": "learning", "text": "Prefer ocelot over awk"}
    entry["created"] = "2026-03-22T10:00:00.000Z"
    with (project / ".voyager" / "memory.jsonl").open("a") as f:
        f.write(json.dumps(entry) + "\n")
    [hit] = hits(project, "ocelot")
    assert (hit.source, hit.excerpt) == ("memory (project)", "Prefer ocelot over awk")


# -- the index ----------------------------------------------------------------------------


def answers(top: Path) -> list[list[dict[str, Any]]]:
    queries = ("zebra", "quokka", "pelican", "walrus", "lemur", "ocelot", "the")
    return [[h.to_dict() for h in hits(top, q)] for q in queries]


def test_the_index_lives_in_the_ignored_cache(project: Path) -> None:
    hits(project, "zebra")
    path = project / ".voyager" / "cache" / "recall.sqlite"
    assert index_path(project) == path and path.is_file()
    assert git(project, "status", "--porcelain", "--", ".voyager/cache") == ""


@pytest.mark.parametrize("damage", ["deleted", "garbage", "truncated", "empty"])
def test_a_lost_or_corrupt_index_is_rebuilt_and_answers_the_same(
    project: Path, damage: str
) -> None:
    before = answers(project)
    path = index_path(project)
    if damage == "deleted":
        path.unlink()
    elif damage == "garbage":
        path.write_bytes(os.urandom(3000))
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:5000])
    else:
        path.write_bytes(b"")
    assert answers(project) == before
    assert path.read_bytes()[:16] == b"SQLite format 3\x00"


def test_a_corrupt_page_found_only_by_the_query_is_rebuilt(project: Path) -> None:
    before = answers(project)
    path = index_path(project)
    data = bytearray(path.read_bytes())
    page = 4096
    for at in range(page, len(data)):  # keep the header and the schema page, ruin the rest
        data[at] = 0xAB
    path.write_bytes(bytes(data))
    assert answers(project) == before


def test_an_entry_appended_by_hand_is_found_at_the_next_query(project: Path) -> None:
    voyager = project / ".voyager"
    make_old(*voyager.glob("*"))
    assert hits(project, "narwhal") == []
    with (voyager / "brain.md").open("a", encoding="utf-8") as f:
        f.write("\n## Decision — 2026-04-02T09:00:00Z\nThe narwhal queue replaces cron.\n")
    hit = best(project, "narwhal")
    assert (hit.source, hit.kind, hit.date) == ("brain.md", "decision", "2026-04-02T09:00:00Z")


def test_only_a_changed_store_is_read_again(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    voyager = project / ".voyager"
    make_old(*voyager.glob("*"), Path(os.environ["VOYAGER_HOME"]) / "memory.jsonl")
    hits(project, "zebra")
    read: list[str] = []
    for name in ("_brain_md", "_brain_json", "_memory"):
        original = getattr(recall_module, name)

        def spy(*args: Any, _original: Any = original, _name: str = name) -> Any:
            read.append(_name)
            return _original(*args)

        monkeypatch.setattr(recall_module, name, spy)
    hits(project, "zebra")
    assert read == []  # warm: nothing read
    bm = BrainManager(project)
    bm.merge_state({"nextSteps": ["Feed the tapir"]})
    bm.persist()
    assert best(project, "tapir").source == "brain.json"
    assert read == ["_brain_json"]


def test_an_updated_or_removed_item_leaves_the_index(project: Path) -> None:
    [lemur] = hits(project, "lemur")
    brain_tool("update", cwd=str(project), id=lemur.key, text="The gecko API listens on 9090")
    assert hits(project, "lemur") == []
    [gecko] = hits(project, "gecko")
    assert (gecko.key, gecko.excerpt) == (lemur.key, "The gecko API listens on 9090")
    brain_tool("remove", cwd=str(project), id=lemur.key, reason="moved")
    assert hits(project, "gecko") == []
    brain_tool("add", cwd=str(project), type="learning", text="The iguana API is new")
    assert best(project, "iguana").source == "memory (project)"
    assert {h.kind for h in hits(project, "zebra quokka pelican walrus")} == {
        "observation",
        "summary",
        "decision",
        "knownIssue",
    }


def test_an_unwritable_cache_still_answers(project: Path) -> None:
    cache = project / ".voyager" / "cache"
    for child in cache.iterdir():
        child.unlink()
    cache.rmdir()
    cache.write_text("not a folder\n")  # nothing can be created under it
    assert best(project, "zebra").kind == "observation"


def test_a_corrupt_brain_md_leaves_the_other_stores_searchable(project: Path) -> None:
    (project / ".voyager" / "brain.md").write_bytes(b"\xff\xfe not utf-8")
    assert hits(project, "zebra") == []
    assert best(project, "pelican").source == "brain.json"


QUERY_PIECES = ['"', "'", "*", "-", "+", "(", ")", ":", "^", "NEAR", "AND", "OR", "NOT"]
QUERY_PIECES += [" ", "NEAR(", "é", "日本語", "🦆", "\x00", "\\", "{", "}", "zebra"]


def test_any_query_never_raises_property(project: Path) -> None:
    bm = BrainManager(project)

    @settings(max_examples=150)
    @given(st.lists(st.one_of(st.sampled_from(QUERY_PIECES), st.text(max_size=6)), max_size=8))
    def check(pieces: list[str]) -> None:
        query = "".join(pieces)
        try:
            found = bm.recall(query, 5)
        except InvalidEntryError:
            assert not query.strip()
            return
        assert len(found) <= 5
        assert all("\n" not in h.excerpt for h in found)
        if not query_terms(query):
            assert found == []

    check()


# -- the command line and the MCP tool ------------------------------------------------------


def test_cli_json_shape_and_text(project: Path) -> None:
    result = run_cli("recall", "pelican", "--limit", "3", "--json", cwd=project)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["query"] == "pelican"
    [first, *_] = data["results"]
    assert set(first) == {"source", "kind", "key", "date", "excerpt", "score"}
    assert (first["source"], first["kind"], first["key"]) == (
        "brain.json",
        "decision",
        "Use Postgres for storage",
    )
    text = run_cli("recall", "zebra", "migration", cwd=project)
    assert text.returncode == 0
    assert text.stdout.startswith("[brain.md observation] Observation — 2026-03-21T14:30:00Z\n")
    assert "zebra migration" in text.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "query: empty"),
        (["   "], "query: empty"),
        (["zebra", "--limit", "0"], "--limit"),
    ],
)
def test_cli_errors_are_one_line_exit_2(project: Path, args: list[str], message: str) -> None:
    result = run_cli("recall", *args, cwd=project)
    assert result.returncode == 2
    assert message in result.stderr
    if message.startswith("query"):
        assert result.stderr.count("\n") == 1 and result.stdout == ""


def test_cli_outside_a_repository_searches_the_personal_log(tmp_path: Path) -> None:
    result = run_cli("recall", "zebra", cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, "no match for 'zebra'\n", "")


def test_mcp_tool_recall(project: Path) -> None:
    pytest.importorskip("mcp", reason="the MCP SDK is the voyager-brain[mcp] extra")
    import anyio
    from mcp import Client
    from mcp.types import TextContent

    from voyager_brain.integrations.mcp_server import build_server

    async def main() -> tuple[Any, Any, Any]:
        async with Client(build_server(project)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            found = await client.call_tool("recall", {"query": "walrus", "limit": 2})
            empty = await client.call_tool("recall", {"query": " "})
            return tools["recall"], found, empty

    tool, found, empty = anyio.run(main)
    assert set(tool.input_schema["required"]) == {"query"}
    assert tool.annotations is not None and tool.annotations.read_only_hint
    assert not found.is_error
    [block] = found.content
    assert isinstance(block, TextContent)
    data = json.loads(block.text)
    assert data == found.structured_content
    assert data["results"][0]["kind"] == "knownIssue"
    cli = json.loads(run_cli("recall", "walrus", "--limit", "2", "--json", cwd=project).stdout)
    assert data == cli
    assert empty.is_error
    [line] = empty.content
    assert isinstance(line, TextContent) and line.text.startswith("voyager-brain: query: empty")
