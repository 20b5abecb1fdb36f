"""brain.json (seed 000): the merge table row by row, validation, the file format, diff(),
merge properties, and BrainManager's merge_state()/persist() over real files and processes."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from conftest import TickingClock
from hypothesis import given, settings
from hypothesis import strategies as st

from voyager_brain import BrainEntry, BrainManager, CorruptFileError, StateError
from voyager_brain.state import brainjson as state
from voyager_brain.state.brainjson import MERGE_RULES, Change, Strategy
from voyager_brain.state.validate import SEVERITIES, validate

NOW = datetime(2026, 3, 21, 14, 30, tzinfo=UTC)
STAMP = "2026-03-21T14:30:00Z"

SEED_FIELDS = [
    "version",
    "project",
    "lastUpdated",
    "sessionCount",
    "facts",
    "decisions",
    "activeState",
    "keyFiles",
    "knownIssues",
    "preferences",
    "nextSteps",
]

#: Seed 000's example values, as a whole brain.json document.
SEED: dict[str, Any] = {
    "version": "1.0.2",
    "project": "nity",
    "lastUpdated": "2026-02-15T10:20:30Z",
    "sessionCount": 12,
    "facts": {
        "stack": ["TypeScript", "Express"],
        "architecture": "Monolith",
        "environment": {"os": "macOS"},
        "custom": ["API runs on port 3000"],
    },
    "decisions": [
        {
            "what": "Use PostgreSQL over MongoDB",
            "why": "Data is relational",
            "when": "2026-02-15",
            "reversible": True,
        }
    ],
    "activeState": {
        "currentGoal": "Add WebSocket support",
        "inProgress": ["WS handler debugging"],
        "blockers": ["WS drops after 30s idle"],
        "recentlyCompleted": ["Error handling", "Zod"],
    },
    "keyFiles": [{"path": "src/index.ts", "role": "Main server entry point"}],
    "knownIssues": [
        {
            "issue": "pg module import fails in ESM mode",
            "workaround": "Using createRequire",
            "severity": "low",
        }
    ],
    "preferences": {
        "style": "Learning by doing",
        "constraints": ["$0 cost only", "No paid services"],
        "communication": "Explain reasoning, not just code",
    },
    "nextSteps": [
        "Fix WebSocket idle timeout",
        "Add rate limiting middleware",
        "Write integration tests",
    ],
}

#: A brain.json as the original tool writes it (JSON.stringify(state, null, 2) + "\n"):
#: version 1.0.2, lastUpdated with milliseconds, every field present.
ORIGINAL_FILE = """\
{
  "version": "1.0.2",
  "project": "nity",
  "lastUpdated": "2026-02-15T10:20:30.123Z",
  "sessionCount": 12,
  "facts": {
    "stack": [
      "TypeScript",
      "Express"
    ],
    "architecture": "Monolith",
    "environment": {
      "os": "macOS"
    },
    "custom": [
      "API runs on port 3000"
    ]
  },
  "decisions": [
    {
      "what": "Use PostgreSQL over MongoDB",
      "why": "Data is relational",
      "when": "2026-02-15",
      "reversible": true
    }
  ],
  "activeState": {
    "currentGoal": "Add WebSocket support",
    "inProgress": [
      "WS handler debugging"
    ],
    "blockers": [
      "WS drops after 30s idle"
    ],
    "recentlyCompleted": [
      "Error handling",
      "Zod"
    ]
  },
  "keyFiles": [
    {
      "path": "src/index.ts",
      "role": "Main server entry point"
    }
  ],
  "knownIssues": [
    {
      "issue": "pg module import fails in ESM mode",
      "workaround": "Using createRequire",
      "severity": "low"
    }
  ],
  "preferences": {
    "style": "Learning by doing",
    "constraints": [
      "$0 cost only",
      "No paid services"
    ],
    "communication": "Explain reasoning, not just code"
  },
  "nextSteps": [
    "Fix WebSocket idle timeout",
    "Add rate limiting middleware",
    "Write integration tests"
  ]
}
"""

# A fake GitHub token, built by concatenation so no scanner mistakes this file for a leak.
GITHUB_TOKEN = "ghp_" + "aB3dE6fG9hJ2kL5mN8pQ1rS4tU7vW0xY3zA6"


def merged(
    update: dict[str, Any], base: dict[str, Any] | None = None, *, new_session: bool = False
) -> dict[str, Any]:
    return state.merge(SEED if base is None else base, update, now=NOW, new_session=new_session)


def without_managed(document: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in document.items() if k not in ("lastUpdated", "sessionCount")}


def letters(n: int) -> str:
    return "".join("abcdefghij"[int(d)] for d in str(n))


# -- the merge table, row by row ------------------------------------------------------------


def test_merge_rules_are_the_seeds_thirteen_rows_in_order() -> None:
    assert [(r.path, r.strategy, r.key, r.keep) for r in MERGE_RULES] == [
        ("facts.stack", Strategy.UNION, None, None),
        ("facts.architecture", Strategy.REPLACE, None, None),
        ("facts.environment", Strategy.DEEP_MERGE, None, None),
        ("facts.custom", Strategy.UNION_DEDUP, None, None),
        ("decisions", Strategy.UPSERT, "what", None),
        ("activeState.currentGoal", Strategy.REPLACE, None, None),
        ("activeState.inProgress", Strategy.REPLACE, None, None),
        ("activeState.blockers", Strategy.REPLACE, None, None),
        ("activeState.recentlyCompleted", Strategy.RECENT, None, 10),
        ("keyFiles", Strategy.UPSERT, "path", None),
        ("knownIssues", Strategy.UPSERT, "issue", None),
        ("preferences", Strategy.DEEP_MERGE, None, None),
        ("nextSteps", Strategy.REPLACE, None, None),
    ]


def test_facts_stack_is_a_union_that_keeps_order() -> None:
    result = merged({"facts": {"stack": ["Node.js", "TypeScript", "PostgreSQL", "Node.js"]}})
    assert result["facts"]["stack"] == ["TypeScript", "Express", "Node.js", "PostgreSQL"]


def test_facts_stack_only_grows() -> None:
    assert merged({"facts": {"stack": []}})["facts"]["stack"] == ["TypeScript", "Express"]
    assert merged({"facts": {"stack": ["Express"]}})["facts"]["stack"] == [
        "TypeScript",
        "Express",
    ]


def test_facts_architecture_is_replaced() -> None:
    result = merged({"facts": {"architecture": "Modular monolith"}})
    assert result["facts"]["architecture"] == "Modular monolith"
    assert result["facts"]["stack"] == ["TypeScript", "Express"]


def test_facts_environment_is_deep_merged() -> None:
    first = merged({"facts": {"environment": {"node": {"version": "20", "flags": ["--inspect"]}}}})
    assert first["facts"]["environment"] == {
        "os": "macOS",
        "node": {"version": "20", "flags": ["--inspect"]},
    }
    second = merged(
        {
            "facts": {
                "environment": {
                    "os": "Linux",
                    "node": {"flags": ["--trace-warnings", "--inspect"]},
                    "shells": ["zsh"],
                }
            }
        },
        first,
    )
    # Nested objects merge recursively, lists are unioned in order, scalars replaced.
    assert second["facts"]["environment"] == {
        "os": "Linux",
        "node": {"version": "20", "flags": ["--inspect", "--trace-warnings"]},
        "shells": ["zsh"],
    }


def test_facts_custom_dedups_ignoring_case_and_whitespace() -> None:
    result = merged({"facts": {"custom": ["  api runs  on PORT 3000 ", "DB on port 5432"]}})
    assert result["facts"]["custom"] == ["API runs on port 3000", "DB on port 5432"]


def test_facts_custom_dedups_within_the_update_too() -> None:
    result = merged({"facts": {"custom": ["Uses pnpm", "uses\tPNPM", "USES  pnpm "]}})
    assert result["facts"]["custom"] == ["API runs on port 3000", "Uses pnpm"]


def test_decision_upsert_by_what_updates_why_and_keeps_omitted_fields() -> None:
    result = merged(
        {"decisions": [{"what": "Use PostgreSQL over MongoDB", "why": "Need transactions"}]}
    )
    assert result["decisions"] == [
        {
            "what": "Use PostgreSQL over MongoDB",
            "why": "Need transactions",
            "when": "2026-02-15",
            "reversible": True,
        }
    ]


def test_decision_upsert_update_wins_for_when_and_reversible_and_new_ones_append() -> None:
    result = merged(
        {
            "decisions": [
                {"what": "Use Zod for validation", "why": "Typed schemas", "when": "2026-03-01"},
                {"what": "Use PostgreSQL over MongoDB", "when": "2026-03-02", "reversible": False},
            ]
        }
    )
    assert result["decisions"] == [
        {
            "what": "Use PostgreSQL over MongoDB",
            "why": "Data is relational",
            "when": "2026-03-02",
            "reversible": False,
        },
        # llm-brain requires `reversible`: the update left it out, so it is filled in.
        {
            "what": "Use Zod for validation",
            "why": "Typed schemas",
            "when": "2026-03-01",
            "reversible": True,
        },
    ]


def test_active_state_current_goal_is_replaced() -> None:
    result = merged({"activeState": {"currentGoal": "Add rate limiting"}})
    assert result["activeState"] == {**SEED["activeState"], "currentGoal": "Add rate limiting"}


def test_active_state_in_progress_is_replaced() -> None:
    result = merged({"activeState": {"inProgress": ["Rate limiter middleware"]}})
    assert result["activeState"]["inProgress"] == ["Rate limiter middleware"]
    assert result["activeState"]["blockers"] == ["WS drops after 30s idle"]


def test_active_state_blockers_are_replaced() -> None:
    result = merged({"activeState": {"blockers": ["Redis not installed"]}})
    assert result["activeState"]["blockers"] == ["Redis not installed"]
    assert result["activeState"]["inProgress"] == ["WS handler debugging"]


def test_recently_completed_keeps_last_ten_and_moves_a_repeat_to_the_end() -> None:
    first = merged({"activeState": {"recentlyCompleted": ["Error handling"]}})
    assert first["activeState"]["recentlyCompleted"] == ["Zod", "Error handling"]
    tasks = [f"Task {n}" for n in range(1, 10)]
    second = merged({"activeState": {"recentlyCompleted": tasks}}, first)
    # 11 items: the oldest ("Zod") goes, newest last.
    assert second["activeState"]["recentlyCompleted"] == ["Error handling", *tasks]
    third = merged({"activeState": {"recentlyCompleted": ["Error handling"]}}, second)
    assert third["activeState"]["recentlyCompleted"] == [*tasks, "Error handling"]


def test_recently_completed_keeps_the_last_ten_of_a_long_update() -> None:
    tasks = [f"Task {n}" for n in range(1, 16)]
    result = merged({"activeState": {"recentlyCompleted": tasks}})
    assert result["activeState"]["recentlyCompleted"] == tasks[-10:]


def test_key_files_upsert_by_path() -> None:
    result = merged(
        {
            "keyFiles": [
                {"path": "src/ws.ts", "role": "WebSocket handler"},
                {"path": "src/index.ts", "role": "Server entry point and routes"},
                {"path": "src/db.ts"},
            ]
        }
    )
    assert result["keyFiles"] == [
        {"path": "src/index.ts", "role": "Server entry point and routes"},
        {"path": "src/ws.ts", "role": "WebSocket handler"},
        {"path": "src/db.ts", "role": ""},  # llm-brain requires a role
    ]


def test_known_issues_upsert_by_issue() -> None:
    result = merged(
        {
            "knownIssues": [
                {"issue": "pg module import fails in ESM mode", "severity": "medium"},
                {"issue": "WS drops after 30s idle", "severity": "high"},
            ]
        }
    )
    assert result["knownIssues"] == [
        {
            "issue": "pg module import fails in ESM mode",
            "workaround": "Using createRequire",
            "severity": "medium",
        },
        {"issue": "WS drops after 30s idle", "severity": "high", "workaround": ""},
    ]


def test_preferences_are_deep_merged() -> None:
    first = merged(
        {
            "preferences": {
                "style": "Terse",
                "constraints": ["No paid services", "Offline first"],
                "editor": {"name": "vim"},
            }
        }
    )
    assert first["preferences"] == {
        "style": "Terse",
        "constraints": ["$0 cost only", "No paid services", "Offline first"],
        "communication": "Explain reasoning, not just code",
        "editor": {"name": "vim"},
    }
    second = merged({"preferences": {"editor": {"plugins": ["ale"]}}}, first)
    assert second["preferences"]["editor"] == {"name": "vim", "plugins": ["ale"]}


def test_next_steps_are_replaced() -> None:
    result = merged({"nextSteps": ["Write integration tests", "Deploy to staging"]})
    assert result["nextSteps"] == ["Write integration tests", "Deploy to staging"]


@pytest.mark.parametrize(
    ("update", "path", "empty"),
    [
        ({"facts": {"architecture": ""}}, ("facts", "architecture"), ""),
        ({"activeState": {"currentGoal": ""}}, ("activeState", "currentGoal"), ""),
        ({"activeState": {"inProgress": []}}, ("activeState", "inProgress"), []),
        ({"activeState": {"blockers": []}}, ("activeState", "blockers"), []),
        ({"nextSteps": []}, ("nextSteps",), []),
    ],
    ids=["architecture", "currentGoal", "inProgress", "blockers", "nextSteps"],
)
def test_replace_field_present_but_empty_replaces(
    update: dict[str, Any], path: tuple[str, ...], empty: Any
) -> None:
    node: Any = merged(update)
    for part in path:
        node = node[part]
    assert node == empty


def test_absent_field_is_untouched() -> None:
    result = merged({"nextSteps": ["Ship it"]})
    assert without_managed({**result, "nextSteps": SEED["nextSteps"]}) == without_managed(SEED)
    # An object given with some of its fields leaves the others alone.
    result = merged({"facts": {"architecture": "Serverless"}, "activeState": {}})
    assert result["facts"] == {**SEED["facts"], "architecture": "Serverless"}
    assert result["activeState"] == SEED["activeState"]


def test_unknown_fields_are_kept_and_reported_by_validate() -> None:
    update = {
        "team": "core",
        "facts": {"stack": ["Node.js"], "license": "MIT"},
        "decisions": [{"what": "Use Zod for validation", "owner": "sam"}],
        "activeState": {"sprint": 7},
    }
    assert validate(update) == [
        "team",
        "facts.license",
        "decisions[0].owner",
        "activeState.sprint",
    ]
    result = merged(update)
    assert result["team"] == "core"
    assert list(result)[-1] == "team"  # extra fields come after the seed's
    assert list(result["facts"]) == ["stack", "architecture", "environment", "custom", "license"]
    assert result["facts"]["license"] == "MIT"
    assert result["decisions"][-1] == {
        "what": "Use Zod for validation",
        "owner": "sam",
        **{"why": "", "when": "2026-03-21", "reversible": True},  # what llm-brain requires
    }
    assert result["activeState"]["sprint"] == 7
    assert validate(result, "brain.json") == [
        "facts.license",
        "decisions[1].owner",
        "activeState.sprint",
        "team",
    ]
    # An unknown field is replaced by a later update's value.
    assert merged({"team": {"name": "platform"}}, result)["team"] == {"name": "platform"}


def test_project_in_an_update_replaces_the_stored_name() -> None:
    assert merged({"project": "nity-server"})["project"] == "nity-server"


def test_version_last_updated_and_session_count_in_an_update_are_ignored() -> None:
    result = merged({"version": "9.9.9", "lastUpdated": "2030-01-01T00:00:00Z", "sessionCount": 99})
    assert result["version"] == "1.0.2"
    assert result["lastUpdated"] == STAMP
    assert result["sessionCount"] == 12


def test_last_updated_is_now_in_utc_to_the_second_with_z() -> None:
    paris = timezone(timedelta(hours=1))
    now = datetime(2026, 3, 21, 15, 30, 45, 987654, tzinfo=paris)
    result = state.merge(SEED, {}, now=now, new_session=False)
    assert result["lastUpdated"] == "2026-03-21T14:30:45Z"
    assert re.fullmatch(r"2026-\d\d-\d\dT\d\d:\d\d:\d\dZ", result["lastUpdated"])


def test_session_count_goes_up_by_one_only_for_a_new_session() -> None:
    assert merged({}, new_session=False)["sessionCount"] == 12
    assert merged({}, new_session=True)["sessionCount"] == 13
    assert merged({"nextSteps": []}, new_session=True)["sessionCount"] == 13


def test_merge_changes_neither_argument() -> None:
    base = copy.deepcopy(SEED)
    update = {
        "facts": {"environment": {"node": {"flags": ["--inspect"]}}, "stack": ["Go"]},
        "decisions": [{"what": "Use PostgreSQL over MongoDB", "why": "x"}],
        "preferences": {"constraints": ["Offline"]},
    }
    frozen = copy.deepcopy(update)
    result = state.merge(base, update, now=NOW, new_session=True)
    assert base == SEED and update == frozen
    # Nor does the result share mutable parts with them.
    result["facts"]["environment"]["node"]["flags"].append("--mutated")
    result["decisions"][0]["why"] = "mutated"
    assert base == SEED and update == frozen


def test_merge_into_an_empty_state() -> None:
    empty = state.empty_state("nity", NOW)
    update = {k: v for k, v in SEED.items() if k not in state.MANAGED}
    result = state.merge(empty, update, now=NOW, new_session=True)
    assert result == {**SEED, "lastUpdated": STAMP, "sessionCount": 1}


def test_deep_merge_keeps_true_and_1_as_different_list_items() -> None:
    # JSON's true and 1 (false and 0) are different values; Python's == says they are equal.
    first = merged({"facts": {"environment": {"flags": [1, 0]}}})
    second = merged({"facts": {"environment": {"flags": [True, False]}}}, first)
    assert json.dumps(second["facts"]["environment"]["flags"]) == "[1, 0, true, false]"


def test_deep_merge_dedups_a_new_keys_list_so_merging_twice_is_merging_once() -> None:
    update = {"preferences": {"tags": ["a", "a"]}}
    once = merged(update)
    twice = merged(update, once)
    assert once["preferences"]["tags"] == twice["preferences"]["tags"] == ["a"]


# -- validation ---------------------------------------------------------------------------

SEVERITY = "one of low, medium, high, critical"


@pytest.mark.parametrize(
    ("update", "message"),
    [
        (
            {"knownIssues": [{"issue": "x", "severity": "urgent"}]},
            f'update: knownIssues[0].severity: expected {SEVERITY}, got "urgent"',
        ),
        (
            {"decisions": [{"what": "x", "when": 20260215}]},
            "update: decisions[0].when: expected a string, got 20260215",
        ),
        (
            {"decisions": [{"what": "x", "reversible": "yes"}]},
            'update: decisions[0].reversible: expected a boolean (true or false), got "yes"',
        ),
        (
            {"decisions": [{"what": "ok"}, {"why": "Data is relational"}]},
            "update: decisions[1].what: expected a string, got null",
        ),
        (
            {"decisions": ["Use PostgreSQL"]},
            'update: decisions[0]: expected an object, got "Use PostgreSQL"',
        ),
        (
            {"decisions": {"what": "x"}},
            'update: decisions: expected a list of objects with \'what\', got {"what": "x"}',
        ),
        (
            {"keyFiles": [{"role": "entry"}]},
            "update: keyFiles[0].path: expected a string, got null",
        ),
        (
            {"knownIssues": [{"workaround": "w"}]},
            "update: knownIssues[0].issue: expected a string, got null",
        ),
        (
            {"facts": {"stack": "TypeScript"}},
            'update: facts.stack: expected a list of strings, got "TypeScript"',
        ),
        (
            {"facts": {"stack": ["TypeScript", 3]}},
            "update: facts.stack[1]: expected a string, got 3",
        ),
        (
            {"facts": ["TypeScript"]},
            'update: facts: expected an object, got ["TypeScript"]',
        ),
        (
            {"facts": {"environment": "macOS"}},
            'update: facts.environment: expected an object, got "macOS"',
        ),
        (
            {"facts": {"architecture": ["Monolith"]}},
            'update: facts.architecture: expected a string, got ["Monolith"]',
        ),
        (
            {"activeState": {"currentGoal": 5}},
            "update: activeState.currentGoal: expected a string, got 5",
        ),
        (
            {"activeState": {"recentlyCompleted": [None]}},
            "update: activeState.recentlyCompleted[0]: expected a string, got null",
        ),
        (
            {"preferences": "terse"},
            'update: preferences: expected an object, got "terse"',
        ),
        (
            {"nextSteps": "Write tests"},
            'update: nextSteps: expected a list of strings, got "Write tests"',
        ),
        ({"project": None}, "update: project: expected a string, got null"),
        ({"lastUpdated": 5}, "update: lastUpdated: expected a string, got 5"),
        ({"sessionCount": "x"}, 'update: sessionCount: expected a number, got "x"'),
        ({"sessionCount": True}, "update: sessionCount: expected a number, got true"),
        (
            {"preferences": {"constraints": "no ORMs"}},
            'update: preferences.constraints: expected a list of strings, got "no ORMs"',
        ),
        (
            {"preferences": {"communication": ["terse"]}},
            'update: preferences.communication: expected a string, got ["terse"]',
        ),
        ([], "update: expected a JSON object, got a list"),
        ("nextSteps", "update: expected a JSON object, got a string"),
        (None, "update: expected a JSON object, got null"),
        (3, "update: expected a JSON object, got a number"),
    ],
    ids=lambda v: None if isinstance(v, str) and v.startswith("update:") else repr(v)[:60],
)
def test_bad_update_raises_state_error_with_one_line(update: Any, message: str) -> None:
    with pytest.raises(StateError) as info:
        validate(update, "update")
    assert str(info.value) == message
    assert "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)


def test_validate_names_where_the_data_came_from() -> None:
    with pytest.raises(StateError, match=r"^brain\.json: sessionCount: "):
        validate({"sessionCount": "many"}, "brain.json")


@pytest.mark.parametrize(
    "update",
    [
        {},
        {"decisions": [{"what": "Use Zod"}]},
        {"decisions": [{"what": "x", "when": "2026-02-15", "reversible": False}]},
        {"decisions": [{"what": "x", "when": "2026-02-15T10:20:30Z"}]},
        {"decisions": [{"what": "x", "when": None, "reversible": None, "why": None}]},
        {"knownIssues": [{"issue": "x", "severity": s} for s in SEVERITIES]},
        {"keyFiles": [{"path": "src/index.ts"}]},
        {"lastUpdated": "2026-02-15T10:20:30.123Z"},
        {"sessionCount": 0},
        {"facts": {}, "activeState": {}, "preferences": {}},
        SEED,
    ],
)
def test_valid_updates_pass_with_no_unknown_fields(update: dict[str, Any]) -> None:
    assert validate(update) == []


# -- reading the file ---------------------------------------------------------------------


def test_loads_the_original_tools_file() -> None:
    path = Path("/repo/.voyager/brain.json")
    document = state.loads(ORIGINAL_FILE.encode(), path)
    assert document == {**SEED, "lastUpdated": "2026-02-15T10:20:30.123Z"}
    assert list(document) == SEED_FIELDS


def test_dumps_of_loads_keeps_the_original_files_field_order_and_bytes() -> None:
    document = state.loads(ORIGINAL_FILE.encode(), Path("brain.json"))
    assert state.dumps(document) == ORIGINAL_FILE


def test_loads_accepts_a_byte_order_mark() -> None:
    data = b"\xef\xbb\xbf" + ORIGINAL_FILE.encode()
    assert state.loads(data, Path("brain.json"))["project"] == "nity"


def test_loads_fills_missing_fields_in_seed_order() -> None:
    document = state.loads(b'{"nextSteps": ["Ship"], "project": "nity"}', Path("brain.json"))
    assert list(document) == SEED_FIELDS
    assert document["nextSteps"] == ["Ship"]
    assert document["facts"] == {"stack": [], "architecture": "", "environment": {}, "custom": []}


def test_loads_of_not_json_names_file_and_line() -> None:
    path = Path("/repo/.voyager/brain.json")
    data = b'{\n  "project": "nity",\n  oops\n}\n'
    with pytest.raises(CorruptFileError) as info:
        state.loads(data, path)
    assert (info.value.path, info.value.line) == (path, 3)
    assert str(info.value) == (
        f"{path}:3: not valid JSON: Expecting property name enclosed in double quotes (column 3)"
    )


def test_loads_of_truncated_json_names_file_and_line() -> None:
    path = Path("brain.json")
    with pytest.raises(CorruptFileError, match=r"^brain\.json:\d+: not valid JSON: "):
        state.loads(ORIGINAL_FILE.encode()[:200], path)


def test_loads_of_not_utf8_names_file_and_line() -> None:
    path = Path("/repo/.voyager/brain.json")
    with pytest.raises(CorruptFileError) as info:
        state.loads(b'{\n  "project": "caf\xe9"\n}\n', path)
    assert (info.value.path, info.value.line) == (path, 2)
    assert str(info.value) == f"{path}:2: not valid UTF-8 (byte 0xe9); expected a JSON text file"


def test_loads_counts_lines_after_a_byte_order_mark() -> None:
    # The bad byte is on line 2 whether or not the file starts with a BOM. (Python reports
    # the error offset in the bytes after the BOM, 3 bytes short of the file's.)
    for data in (b'{\n"\xe9"}\n', b'\xef\xbb\xbf{\n"\xe9"}\n'):
        with pytest.raises(CorruptFileError) as info:
            state.loads(data, Path("brain.json"))
        assert (info.value.line, str(info.value)) == (
            2,
            "brain.json:2: not valid UTF-8 (byte 0xe9); expected a JSON text file",
        ), data


@pytest.mark.parametrize(
    ("data", "line", "detail"),
    [
        (
            b'{"knownIssues": [{"issue": "x", "severity": "urgent"}]}',
            1,
            f'knownIssues[0].severity: expected {SEVERITY}, got "urgent"',
        ),
        (b'{\n"sessionCount": "many"}', 2, 'sessionCount: expected a number, got "many"'),
        (
            b'{"decisions": [{"what": "x", "when": 5}]}',
            1,
            "decisions[0].when: expected a string, got 5",
        ),
        (b"[]", None, "expected a JSON object, got a list"),
        (b'"brain"', None, "expected a JSON object, got a string"),
    ],
)
def test_loads_of_a_schema_violation_names_file_line_and_field(
    data: bytes, line: int | None, detail: str
) -> None:
    path = Path("/repo/.voyager/brain.json")
    with pytest.raises(CorruptFileError) as info:
        state.loads(data, path)
    assert str(info.value) == (f"{path}:{line}: {detail}" if line else f"{path}: {detail}")
    assert (info.value.path, info.value.line) == (path, line)


# -- the file format ----------------------------------------------------------------------


def test_dumps_is_two_space_indented_with_a_final_newline() -> None:
    text = state.dumps(SEED)
    assert text.startswith('{\n  "version": "1.0.2",\n  "project": "nity",\n')
    assert '\n    "stack": [\n      "TypeScript",\n' in text
    assert text.endswith("  ]\n}\n") and not text.endswith("\n\n")
    assert json.loads(text) == SEED


def test_dumps_keeps_non_ascii_as_is() -> None:
    document = merged({"facts": {"custom": ["Café ☕ serves 日本語 — naïve"]}})
    text = state.dumps(document)
    assert "Café ☕ serves 日本語 — naïve" in text
    assert "\\u" not in text
    assert "日本語".encode() in text.encode()


def test_the_same_state_gives_the_same_bytes() -> None:
    update = {"decisions": [{"what": "Use Zod", "why": "Types"}], "team": "core"}
    one = merged(update, new_session=True)
    two = merged(update, new_session=True)
    assert state.dumps(one).encode() == state.dumps(two).encode()
    shuffled = dict(reversed(list(one.items())))
    assert state.dumps(state.ordered(shuffled)) == state.dumps(one)


def test_ordered_puts_seed_fields_in_seed_order_and_extra_fields_after() -> None:
    messy = {
        "zeta": 1,
        "nextSteps": ["Ship"],
        "facts": {"custom": ["c"], "license": "MIT", "stack": ["Go"]},
        "project": "nity",
        "alpha": {"b": 1},
    }
    result = state.ordered(messy)
    assert list(result) == [*SEED_FIELDS, "zeta", "alpha"]
    assert list(result["facts"]) == ["stack", "architecture", "environment", "custom", "license"]
    assert result["facts"] == {
        "stack": ["Go"],
        "architecture": "",
        "environment": {},
        "custom": ["c"],
        "license": "MIT",
    }
    assert list(result["activeState"]) == [
        "currentGoal",
        "inProgress",
        "blockers",
        "recentlyCompleted",
    ]
    assert state.ordered(result) == result and list(state.ordered(result)) == list(result)


def test_empty_state_has_every_seed_field() -> None:
    empty = state.empty_state("nity", NOW)
    assert list(empty) == SEED_FIELDS
    assert (empty["version"], empty["project"], empty["lastUpdated"], empty["sessionCount"]) == (
        "1.0.2",
        "nity",
        STAMP,
        0,
    )
    assert validate(empty, "brain.json") == []


def test_project_state_gives_typed_shortcuts() -> None:
    ps = state.ProjectState(SEED)
    assert (ps.project, ps.session_count, ps.last_updated) == ("nity", 12, SEED["lastUpdated"])
    assert ps.decisions == SEED["decisions"] and ps.next_steps == SEED["nextSteps"]
    assert ps.facts == SEED["facts"] and ps.active_state == SEED["activeState"]
    assert ps.key_files == SEED["keyFiles"] and ps.known_issues == SEED["knownIssues"]
    assert ps.preferences == SEED["preferences"]
    assert ps.to_json() == state.dumps(SEED)


# -- diff -------------------------------------------------------------------------------

ZOD = {
    "what": "Use Zod for validation",
    "why": "Typed schemas",
    "when": "2026-03-21",
    "reversible": True,
}
PG = SEED["decisions"][0]


def test_diff_of_a_state_with_itself_is_empty_even_after_a_save() -> None:
    assert state.diff(SEED, SEED) == []
    assert state.diff(SEED, merged({}, new_session=True)) == []


def test_diff_adds_a_decision_by_what() -> None:
    after = merged({"decisions": [ZOD]})
    changes = state.diff(SEED, after)
    assert changes == [Change("add", "decisions", None, ZOD)]
    # An item is named by its merge key.
    assert changes[0].describe() == "+ decisions: Use Zod for validation"


def test_diff_removes_a_decision_by_what() -> None:
    after = {**SEED, "decisions": []}
    changes = state.diff(SEED, after)
    assert changes == [Change("remove", "decisions", PG, None)]
    assert changes[0].describe() == "- decisions: Use PostgreSQL over MongoDB"


def test_diff_changes_a_decision_by_what_not_by_position() -> None:
    before = merged({"decisions": [ZOD]})
    after = {**before, "decisions": [{**ZOD, "why": "Runtime checks", "reversible": False}, PG]}
    changes = state.diff(before, after)
    assert changes == [
        Change(
            "change", "decisions[Use Zod for validation].why", "Typed schemas", "Runtime checks"
        ),
        Change("change", "decisions[Use Zod for validation].reversible", True, False),
    ]
    assert [c.describe() for c in changes] == [
        "~ decisions[Use Zod for validation].why: Typed schemas -> Runtime checks",
        "~ decisions[Use Zod for validation].reversible: true -> false",
    ]


def test_diff_of_keyed_items_without_the_key_field_changes_is_empty() -> None:
    reordered = {**SEED, "decisions": [dict(reversed(list(PG.items())))]}
    assert state.diff(SEED, reordered) == []


def test_diff_of_list_elements_and_scalars() -> None:
    after = merged(
        {
            "facts": {"stack": ["Node.js"], "architecture": "Microservices"},
            "nextSteps": ["Fix WebSocket idle timeout", "Deploy"],
        }
    )
    changes = state.diff(SEED, after)
    assert changes == [
        Change("add", "facts.stack", None, "Node.js"),
        Change("change", "facts.architecture", "Monolith", "Microservices"),
        Change("add", "nextSteps", None, "Deploy"),
        Change("remove", "nextSteps", "Add rate limiting middleware", None),
        Change("remove", "nextSteps", "Write integration tests", None),
    ]
    assert [c.describe() for c in changes] == [
        "+ facts.stack: Node.js",
        "~ facts.architecture: Monolith -> Microservices",
        "+ nextSteps: Deploy",
        "- nextSteps: Add rate limiting middleware",
        "- nextSteps: Write integration tests",
    ]


def test_diff_of_a_reordered_list_and_of_new_fields() -> None:
    after = {**SEED, "nextSteps": list(reversed(SEED["nextSteps"])), "team": "core"}
    changes = state.diff(SEED, after)
    assert changes == [
        Change("change", "nextSteps", SEED["nextSteps"], after["nextSteps"]),
        Change("add", "team", None, "core"),
    ]
    env = merged({"facts": {"environment": {"node": "20"}}})
    assert state.diff(SEED, env) == [Change("add", "facts.environment.node", None, "20")]


def test_change_describe_shortens_long_values_and_to_dict() -> None:
    change = Change("add", "nextSteps", None, "x" * 150)
    assert change.describe() == "+ nextSteps: " + "x" * 99 + "…"
    assert Change("change", "facts.architecture", "", "Monolith").describe() == (
        "~ facts.architecture: (empty) -> Monolith"
    )
    assert change.to_dict() == {"op": "add", "path": "nextSteps", "old": None, "new": "x" * 150}


# -- properties ---------------------------------------------------------------------------

# Small alphabets so keys and list items collide often.
words = st.sampled_from(["a", "A", " a ", "b", "Zod", "zod", "", "日本"])
word_lists = st.lists(words, max_size=5)
keys = st.sampled_from(["a", "b", "c", "A"])
scalars = st.none() | st.booleans() | st.integers(-2, 2) | words


def json_values(unique_lists: bool) -> st.SearchStrategy[Any]:
    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        lists = (
            st.lists(children, max_size=4, unique_by=lambda v: json.dumps(v, sort_keys=True))
            if unique_lists
            else st.lists(children, max_size=4)
        )
        return lists | st.dictionaries(keys, children, max_size=3)

    return st.recursive(scalars, extend, max_leaves=8)


json_objects = st.dictionaries(keys, json_values(unique_lists=False), max_size=3)
extra = st.sampled_from(["extra", "notes", "a"])
decision_items = st.fixed_dictionaries(
    {"what": keys},
    optional={
        "why": words,
        "when": st.sampled_from(["2026-02-15", "2026-03-01", "2026-03-01T10:00:00Z"]) | st.none(),
        "reversible": st.booleans() | st.none(),
        "extra": json_values(unique_lists=False),
    },
)
key_file_items = st.fixed_dictionaries(
    {"path": keys}, optional={"role": words, "extra": json_values(unique_lists=False)}
)
known_issue_items = st.fixed_dictionaries(
    {"issue": keys},
    optional={"workaround": words, "severity": st.sampled_from(SEVERITIES)},
)
updates = st.fixed_dictionaries(
    {},
    optional={
        "version": st.just("9.9.9"),
        "project": words,
        "lastUpdated": st.just("2030-01-01T00:00:00.123Z"),
        "sessionCount": st.integers(0, 5),
        "facts": st.fixed_dictionaries(
            {},
            optional={
                "stack": word_lists,
                "architecture": words,
                "environment": json_objects,
                "custom": word_lists,
                "license": json_values(unique_lists=False),
            },
        ),
        "decisions": st.lists(decision_items, max_size=4),
        "activeState": st.fixed_dictionaries(
            {},
            optional={
                "currentGoal": words,
                "inProgress": word_lists,
                "blockers": word_lists,
                "recentlyCompleted": st.lists(words, max_size=12),
                "sprint": st.integers(0, 3),
            },
        ),
        "keyFiles": st.lists(key_file_items, max_size=4),
        "knownIssues": st.lists(known_issue_items, max_size=4),
        "preferences": json_objects,
        "nextSteps": word_lists,
        "extra": json_values(unique_lists=False),
        "notes": json_values(unique_lists=False),
    },
)
# A starting state: the seed, or the empty state, with any update merged in.
states = st.tuples(st.sampled_from([SEED, state.empty_state("p", NOW)]), updates).map(
    lambda pair: state.merge(pair[0], pair[1], now=NOW, new_session=False)
)

LATER = NOW + timedelta(hours=1)


@settings(max_examples=200)
@given(updates)
def test_generated_updates_are_valid(update: dict[str, Any]) -> None:
    unknown = validate(update)
    assert all(
        path.split(".")[-1].split("[")[0] in ("extra", "notes", "license", "sprint")
        for path in unknown
    )


@settings(max_examples=200)
@given(states)
def test_merging_nothing_changes_nothing_but_the_managed_fields(base: dict[str, Any]) -> None:
    result = state.merge(base, {}, now=LATER, new_session=True)
    assert without_managed(result) == without_managed(base)
    assert list(result) == list(base)
    assert result["lastUpdated"] == "2026-03-21T15:30:00Z"
    assert result["sessionCount"] == base["sessionCount"] + 1


@settings(max_examples=200)
@given(states, updates)
def test_merging_the_same_update_twice_is_merging_it_once(
    base: dict[str, Any], update: dict[str, Any]
) -> None:
    once = state.merge(base, update, now=NOW, new_session=False)
    twice = state.merge(once, update, now=LATER, new_session=False)
    assert without_managed(twice) == without_managed(once)
    assert json.dumps(without_managed(twice)) == json.dumps(without_managed(once))


@settings(max_examples=200)
@given(states, st.lists(updates, min_size=1, max_size=3))
def test_upsert_keys_stay_unique(base: dict[str, Any], batch: list[dict[str, Any]]) -> None:
    result = base
    for update in batch:
        result = state.merge(result, update, now=NOW, new_session=False)
    for field, key in (("decisions", "what"), ("keyFiles", "path"), ("knownIssues", "issue")):
        values = [item[key] for item in result[field]]
        assert len(values) == len(set(values)), field
        # Every key any update gave is there.
        given_keys = {item[key] for update in batch for item in update.get(field, [])}
        assert given_keys <= set(values)


@settings(max_examples=200)
@given(states, updates)
def test_the_result_always_validates_and_is_ordered(
    base: dict[str, Any], update: dict[str, Any]
) -> None:
    result = state.merge(base, update, now=NOW, new_session=True)
    validate(result, "x")
    again = state.ordered(result)
    assert again == result
    assert list(again) == list(result)[: len(again)] == list(result)
    assert list(result)[: len(SEED_FIELDS)] == SEED_FIELDS
    for field in ("facts", "activeState"):
        assert list(again[field]) == list(result[field])
    assert len(result["activeState"]["recentlyCompleted"]) <= 10
    # And it survives the file: dumps then loads gives it back.
    assert state.loads(state.dumps(result).encode(), Path("brain.json")) == result


@settings(max_examples=200)
@given(st.dictionaries(keys, json_values(unique_lists=True), max_size=4))
def test_deep_merge_of_an_object_with_itself_is_the_object(value: dict[str, Any]) -> None:
    assert state._deep_merge(value, value) == value
    assert json.dumps(state._deep_merge(value, value)) == json.dumps(value)


# -- BrainManager: merge_state() and persist() over real files ------------------------------


def brain_json(top: Path) -> dict[str, Any]:
    path = top / ".voyager" / "brain.json"
    return state.loads(path.read_bytes(), path)


def test_repo_without_brain_json_has_an_empty_state_named_after_the_project(
    repo: Path, clock: TickingClock
) -> None:
    (repo / "package.json").write_text('{"name": "nity"}\n')
    bm = BrainManager(repo, clock=clock)
    ps = bm.state
    assert ps.data == state.empty_state("nity", NOW)
    assert ps.project == "nity" and ps.session_count == 0
    assert not (repo / ".voyager" / "brain.json").exists()


def test_merge_state_and_persist_write_brain_json(repo: Path, clock: TickingClock) -> None:
    bm = BrainManager(repo, clock=clock)
    bm.load()
    update = {k: v for k, v in SEED.items() if k not in ("version", "project")}
    ps = bm.merge_state(update)
    assert ps.session_count == 1
    assert not (repo / ".voyager" / "brain.json").exists()  # nothing written before persist
    bm.persist()
    path = repo / ".voyager" / "brain.json"
    text = path.read_text(encoding="utf-8")
    assert text == state.dumps(bm.state.data)
    document = json.loads(text)
    assert list(document) == SEED_FIELDS
    assert document["project"] == "project"  # the repository folder's name
    assert document["sessionCount"] == 1
    assert re.fullmatch(r"2026-03-21T14:\d\d:00Z", document["lastUpdated"])
    assert without_managed(document) == without_managed({**SEED, "project": "project"})


def test_session_count_goes_up_once_per_session_however_often_it_persists(
    repo: Path, clock: TickingClock
) -> None:
    first = BrainManager(repo, clock=clock)
    first.merge_state({"nextSteps": ["Fix WebSocket idle timeout"]})
    first.persist()
    first.merge_state({"facts": {"stack": ["TypeScript"]}})
    first.persist()
    assert brain_json(repo)["sessionCount"] == 1
    assert first.state.session_count == 1
    assert brain_json(repo)["facts"]["stack"] == ["TypeScript"]

    second = BrainManager(repo, clock=clock)
    second.load()
    second.merge_state({"facts": {"stack": ["Express"]}})
    assert second.state.session_count == 2
    second.persist()
    second.persist()
    assert brain_json(repo)["sessionCount"] == 2
    assert brain_json(repo)["facts"]["stack"] == ["TypeScript", "Express"]

    # A session that only reads, then persists, counts for nothing and writes nothing.
    path = repo / ".voyager" / "brain.json"
    before = path.read_bytes()
    third = BrainManager(repo, clock=clock)
    assert third.state.session_count == 2
    third.persist()
    assert path.read_bytes() == before


def test_two_sessions_loaded_together_keep_both_decisions(repo: Path, clock: TickingClock) -> None:
    a, b = BrainManager(repo, clock=clock), BrainManager(repo, clock=clock)
    a.load()
    b.load()
    a.merge_state({"decisions": [PG], "facts": {"stack": ["TypeScript"]}})
    b.merge_state({"decisions": [ZOD], "facts": {"stack": ["Express"]}})
    a.persist()
    b.persist()
    document = brain_json(repo)
    assert document["decisions"] == [PG, ZOD]
    assert document["facts"]["stack"] == ["TypeScript", "Express"]
    assert document["sessionCount"] == 2
    # b now sees what a wrote.
    assert b.state.decisions == [PG, ZOD]


def test_persist_replays_updates_on_a_file_edited_by_hand(repo: Path, clock: TickingClock) -> None:
    seed = BrainManager(repo, clock=clock)
    seed.merge_state({"facts": {"architecture": "Monolith"}})
    seed.persist()
    session = BrainManager(repo, clock=clock)
    session.load()
    path = repo / ".voyager" / "brain.json"
    edited = json.loads(path.read_text())
    edited["facts"]["architecture"] = "Microservices"
    edited["nextSteps"] = ["Split the billing service"]
    path.write_text(json.dumps(edited, indent=2) + "\n")
    session.merge_state({"facts": {"stack": ["Go"]}})
    session.persist()
    document = brain_json(repo)
    assert document["facts"]["architecture"] == "Microservices"
    assert document["facts"]["stack"] == ["Go"]
    assert document["nextSteps"] == ["Split the billing service"]


def test_bad_update_raises_and_leaves_state_and_file_unchanged(
    repo: Path, clock: TickingClock
) -> None:
    bm = BrainManager(repo, clock=clock)
    bm.merge_state({"knownIssues": SEED["knownIssues"]})
    bm.persist()
    path = repo / ".voyager" / "brain.json"
    before_bytes, before_state = path.read_bytes(), copy.deepcopy(dict(bm.state.data))
    bad = {
        "nextSteps": ["This must not be merged"],
        "knownIssues": [{"issue": "x", "severity": "urgent"}],
    }
    with pytest.raises(StateError, match=r'^update: knownIssues\[0\]\.severity: .*"urgent"$'):
        bm.merge_state(bad)
    assert dict(bm.state.data) == before_state
    bm.persist()
    assert path.read_bytes() == before_bytes


def test_corrupt_brain_json_fails_load_and_is_never_overwritten(repo: Path) -> None:
    path = repo / ".voyager" / "brain.json"
    path.parent.mkdir()
    garbage = b'{"project": "nity",\n  "facts": {oops\n'
    path.write_bytes(garbage)
    with pytest.raises(CorruptFileError, match=r"brain\.json:2: not valid JSON"):
        BrainManager(repo).load()
    bm = BrainManager(repo)
    with pytest.raises(CorruptFileError):
        bm.merge_state({"nextSteps": ["x"]})
    with pytest.raises(CorruptFileError):
        bm.persist()
    assert path.read_bytes() == garbage


def test_brain_json_corrupted_during_a_session_is_not_overwritten(
    repo: Path, clock: TickingClock
) -> None:
    bm = BrainManager(repo, clock=clock)
    bm.merge_state({"nextSteps": ["one"]})
    bm.persist()
    path = repo / ".voyager" / "brain.json"
    path.write_bytes(b'{"sessionCount": "many"}\n')
    bm.merge_state({"nextSteps": ["two"]})
    with pytest.raises(CorruptFileError, match=r"brain\.json:1: sessionCount: expected a number"):
        bm.persist()
    assert path.read_bytes() == b'{"sessionCount": "many"}\n'


def test_secrets_in_an_update_are_redacted_before_they_reach_the_file(
    repo: Path, clock: TickingClock
) -> None:
    bm = BrainManager(repo, clock=clock)
    ps = bm.merge_state(
        {
            "decisions": [{"what": "Use a deploy token", "why": f"GITHUB_TOKEN={GITHUB_TOKEN}"}],
            "preferences": {"secrets": {"ci": GITHUB_TOKEN}},
            "facts": {
                "custom": [f"CI token is {GITHUB_TOKEN}"],
                "environment": {GITHUB_TOKEN: "a secret used as a key"},
            },
        }
    )
    assert GITHUB_TOKEN not in json.dumps(ps.data)
    bm.persist()
    text = (repo / ".voyager" / "brain.json").read_text()
    assert GITHUB_TOKEN not in text
    assert "[REDACTED:github-token]" in text
    assert brain_json(repo)["decisions"][0]["what"] == "Use a deploy token"


def test_redaction_of_updates_can_be_turned_off(repo: Path, clock: TickingClock) -> None:
    bm = BrainManager(repo, clock=clock, config={"redact_secrets": False})
    bm.merge_state({"facts": {"custom": [f"token {GITHUB_TOKEN}"]}})
    bm.persist()
    assert GITHUB_TOKEN in (repo / ".voyager" / "brain.json").read_text()


def test_brain_md_decision_entries_do_not_go_to_brain_json(repo: Path, clock: TickingClock) -> None:
    bm = BrainManager(repo, clock=clock)
    bm.update(BrainEntry("decision", "Use PostgreSQL over MongoDB"))
    bm.persist()
    assert "Use PostgreSQL over MongoDB" in (repo / ".voyager" / "brain.md").read_text()
    document = brain_json(repo)
    assert document["decisions"] == []
    assert "Use PostgreSQL over MongoDB" not in json.dumps(document)
    assert bm.state.decisions == []


# -- real processes -------------------------------------------------------------------------

# Every cycle is a whole BrainManager session: load, merge one decision, persist.
STATE_WRITER = textwrap.dedent(
    """
    import sys
    from voyager_brain import BrainManager
    root, worker, cycles = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for n in range(cycles):
        letters = "".join("abcdefghij"[int(d)] for d in str(n))
        bm = BrainManager(root, config={"auto_compact": False})
        bm.load()
        bm.merge_state({"decisions": [{"what": f"decision {worker}-{letters}", "why": "load"}]})
        bm.persist()
    """
)


def test_four_processes_times_10_sessions_keep_all_40_decisions(repo: Path) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", STATE_WRITER, str(repo), str(w), "10"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(4)
    ]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    document = brain_json(repo)
    whats = [d["what"] for d in document["decisions"]]
    assert sorted(whats) == sorted(
        f"decision {w}-{letters(n)}" for w in range(4) for n in range(10)
    )
    assert len(whats) == 40
    assert document["sessionCount"] == 40


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2) | st.text("ab", max_size=2),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("ab", max_size=2), inner),
    max_leaves=8,
)


@given(_json_values, _json_values)
def test_diff_sees_a_change_exactly_when_the_json_differs(a: Any, b: Any) -> None:
    from voyager_brain.state.brainjson import _canon, diff

    same_json = _canon(a) == _canon(b)
    assert (diff({"x": a}, {"x": b}) == []) == same_json
    assert diff({"x": a}, {"x": a}) == []
